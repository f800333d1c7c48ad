// JSON values of trace rows, read with nlohmann_json, and typed access to
// their fields with range checks. Messages name the field and quote the
// value (clipped), so a reader only prefixes "file:line: ".

#ifndef HEARTH_SRC_SIM_JSON_FIELDS_H_
#define HEARTH_SRC_SIM_JSON_FIELDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hearth::internal {

using Json = nlohmann::json;

// The JSON object on one line, and nothing after it but blanks.
absl::StatusOr<Json> ParseJsonObjectLine(absl::string_view line);

// A whole document. A syntax error's message starts with the line it is on
// ("<line>: JSON: ..."), as RowError would write it after the file name.
absl::StatusOr<Json> ParseJsonDocument(std::string_view text, const std::string& name);

// Where each top-level member of a document starts: the elements of a
// top-level array (`key` empty), or the keys of a top-level object (`key` as
// written, escapes kept), in document order. nlohmann_json keeps no
// positions, so errors found after parsing take their line from here. Call
// on a document ParseJsonDocument accepted.
struct JsonMemberPosition {
  int64_t line = 0;
  std::string key;
};
std::vector<JsonMemberPosition> TopLevelMembers(std::string_view text);

// `object[key]` as a whole number in [lo, hi] (a JSON integer, or a number
// with no fraction); nullopt when the key is absent or null.
absl::StatusOr<std::optional<int64_t>> OptionalInt(const Json& object, absl::string_view key,
                                                   int64_t lo, int64_t hi);
// `object[key]` as a finite number in [lo, hi]; nullopt when absent or null.
absl::StatusOr<std::optional<double>> OptionalNumber(const Json& object, absl::string_view key,
                                                     double lo, double hi);
// `object[key]` as a string; nullopt when absent or null.
absl::StatusOr<std::optional<std::string>> OptionalString(const Json& object,
                                                          absl::string_view key);

// The same, but an absent key is an error.
absl::StatusOr<int64_t> RequiredInt(const Json& object, absl::string_view key, int64_t lo,
                                    int64_t hi);
absl::StatusOr<double> RequiredNumber(const Json& object, absl::string_view key, double lo,
                                      double hi);

// A prefix-hash list: an array of integers in [0, 2^64), at most `max_size`.
absl::StatusOr<std::vector<uint64_t>> HashList(const Json& object, absl::string_view key,
                                               size_t max_size);

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_JSON_FIELDS_H_
