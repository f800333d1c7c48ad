#include "sim/toml_util.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_join.h"
#include "sim/quote.h"

namespace hearth::internal {
namespace {

absl::Status Missing(const toml::table& table, const std::string& file,
                     const std::string& key) {
  return TomlError(file, table.source(), key, "required key is missing");
}

}  // namespace

std::string JoinKey(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : absl::StrCat(path, ".", std::string(key));
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot open ", Quote(path)));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::StatusOr<double> GetNumber(const toml::table& table, std::string_view key,
                                 const std::string& file,
                                 const std::string& path,
                                 std::optional<double> fallback) {
  const toml::node* n = table.get(key);
  const std::string full = JoinKey(path, key);
  if (n == nullptr) {
    if (fallback.has_value()) return *fallback;
    return Missing(table, file, full);
  }
  if (auto v = n->value<double>(); v.has_value() && (n->is_floating_point() ||
                                                     n->is_integer())) {
    return *v;
  }
  return TomlError(file, n->source(), full, "must be a number");
}

absl::StatusOr<int64_t> GetInt(const toml::table& table, std::string_view key,
                               const std::string& file, const std::string& path,
                               std::optional<int64_t> fallback) {
  const toml::node* n = table.get(key);
  const std::string full = JoinKey(path, key);
  if (n == nullptr) {
    if (fallback.has_value()) return *fallback;
    return Missing(table, file, full);
  }
  if (n->is_integer()) return *n->value<int64_t>();
  return TomlError(file, n->source(), full, "must be an integer");
}

absl::StatusOr<std::string> GetString(const toml::table& table,
                                      std::string_view key,
                                      const std::string& file,
                                      const std::string& path,
                                      std::optional<std::string> fallback) {
  const toml::node* n = table.get(key);
  const std::string full = JoinKey(path, key);
  if (n == nullptr) {
    if (fallback.has_value()) return *fallback;
    return Missing(table, file, full);
  }
  if (n->is_string()) return std::string(*n->value<std::string_view>());
  return TomlError(file, n->source(), full, "must be a string");
}

absl::StatusOr<bool> GetBool(const toml::table& table, std::string_view key,
                             const std::string& file, const std::string& path,
                             std::optional<bool> fallback) {
  const toml::node* n = table.get(key);
  const std::string full = JoinKey(path, key);
  if (n == nullptr) {
    if (fallback.has_value()) return *fallback;
    return Missing(table, file, full);
  }
  if (n->is_boolean()) return *n->value<bool>();
  return TomlError(file, n->source(), full, "must be true or false");
}

absl::Status CheckKeys(const toml::table& table,
                       std::initializer_list<std::string_view> allowed,
                       const std::string& file, const std::string& path) {
  return CheckKeys(table, absl::Span<const std::string_view>(allowed.begin(), allowed.size()),
                   file, path);
}

absl::Status CheckKeys(const toml::table& table, absl::Span<const std::string_view> allowed,
                       const std::string& file, const std::string& path) {
  for (const auto& [k, v] : table) {
    bool ok = false;
    for (std::string_view a : allowed) ok = ok || k.str() == a;
    if (!ok) {
      std::vector<std::string> names(allowed.begin(), allowed.end());
      return TomlError(file, v.source(), JoinKey(path, Clip(k.str())),
                       absl::StrCat("unknown key; allowed: ",
                                    absl::StrJoin(names, ", ")));
    }
  }
  return absl::OkStatus();
}

}  // namespace hearth::internal
