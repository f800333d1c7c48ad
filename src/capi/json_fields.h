// Typed reads of one JSON object's fields, each error naming the field's
// path ("users[1].weight") and what is allowed. Used by options_json.cc.

#ifndef HEARTH_SRC_CAPI_JSON_FIELDS_H_
#define HEARTH_SRC_CAPI_JSON_FIELDS_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace hearth::capi {

// One JSON object and where it sits in the document.
class JsonFields {
 public:
  // `path` is "" for the top level.
  JsonFields(const nlohmann::json& object, std::string path)
      : object_(object), path_(std::move(path)) {}

  // InvalidArgument unless the value is an object whose keys are all in
  // `known` (the message lists them).
  absl::Status CheckKeys(std::initializer_list<std::string_view> known) const;
  absl::Status CheckKeys(const std::vector<std::string>& known) const;

  // Each leaves *out alone when `key` is absent. Integers must be integral
  // JSON numbers within the type's range.
  absl::Status Read(std::string_view key, int32_t* out) const;
  absl::Status Read(std::string_view key, int64_t* out) const;
  absl::Status Read(std::string_view key, double* out) const;
  absl::Status Read(std::string_view key, bool* out) const;
  absl::Status Read(std::string_view key, std::string* out) const;
  // A string that must be a valid name (hearth/common/names.h).
  absl::Status ReadName(std::string_view key, std::string* out) const;
  // Seconds; null is InfiniteDuration.
  absl::Status ReadSeconds(std::string_view key, absl::Duration* out) const;

  // The field's path, for nested objects and messages.
  std::string PathOf(std::string_view key) const;
  const nlohmann::json* Find(std::string_view key) const;

 private:
  absl::Status ReadInteger(std::string_view key, int64_t min, int64_t max,
                           int64_t* out) const;

  const nlohmann::json& object_;
  std::string path_;
};

// "options JSON: \"<path>\" <what>".
absl::Status JsonFieldError(absl::string_view path, absl::string_view what);

// "a, b, c" (absl::StrJoin takes no std::string_view with the pinned Abseil).
template <typename Names>
std::string JoinNames(const Names& names) {
  std::string joined;
  for (std::string_view name : names) {
    if (!joined.empty()) joined += ", ";
    joined += name;
  }
  return joined;
}

}  // namespace hearth::capi

#endif  // HEARTH_SRC_CAPI_JSON_FIELDS_H_
