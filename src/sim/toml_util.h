// Helpers shared by the simulator's TOML readers: errors that name the file,
// line and key, and typed getters that produce them.

#ifndef HEARTH_SRC_SIM_TOML_UTIL_H_
#define HEARTH_SRC_SIM_TOML_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "absl/strings/str_cat.h"

namespace hearth::internal {

// "file:line: key" (line omitted when unknown).
inline std::string TomlWhere(const std::string& file, const toml::source_region& where,
                             std::string_view key) {
  std::string loc = file;
  if (where.begin.line > 0) absl::StrAppend(&loc, ":", where.begin.line);
  return absl::StrCat(loc, ": ", std::string(key));
}

// "file:line: key: message" (line omitted when unknown).
inline absl::Status TomlError(const std::string& file,
                              const toml::source_region& where,
                              std::string_view key, std::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(TomlWhere(file, where, key), ": ", std::string(message)));
}

// Parses TOML text; syntax errors become "file:line:col: what".
inline absl::StatusOr<toml::table> ParseToml(std::string_view text,
                                             const std::string& file) {
  // Debian's toml++ is built with exceptions: parse errors are thrown.
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        file, ":", e.source().begin.line, ":", e.source().begin.column, ": ",
        std::string(e.description())));
  }
}

// The dotted key path of `key` under `path` ("" for the top level).
std::string JoinKey(const std::string& path, std::string_view key);

// Reads a whole file; NotFound naming it when it cannot be read.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// A number (integer or float) at `key` of `table`, or `fallback` when absent.
// `path` is the dotted key for messages.
absl::StatusOr<double> GetNumber(const toml::table& table, std::string_view key,
                                 const std::string& file,
                                 const std::string& path,
                                 std::optional<double> fallback);
absl::StatusOr<int64_t> GetInt(const toml::table& table, std::string_view key,
                               const std::string& file, const std::string& path,
                               std::optional<int64_t> fallback);
absl::StatusOr<std::string> GetString(const toml::table& table,
                                      std::string_view key,
                                      const std::string& file,
                                      const std::string& path,
                                      std::optional<std::string> fallback);
absl::StatusOr<bool> GetBool(const toml::table& table, std::string_view key,
                             const std::string& file, const std::string& path,
                             std::optional<bool> fallback);

// Keys of `table` not in `allowed` are errors (catches typos).
absl::Status CheckKeys(const toml::table& table,
                       std::initializer_list<std::string_view> allowed,
                       const std::string& file, const std::string& path);
absl::Status CheckKeys(const toml::table& table, absl::Span<const std::string_view> allowed,
                       const std::string& file, const std::string& path);

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_TOML_UTIL_H_
