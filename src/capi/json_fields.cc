#include "capi/json_fields.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "capi/c_time.h"
#include "hearth/common/names.h"
#include "internal/status_macros.h"

namespace hearth::capi {
namespace {

// Keys come from the caller's text; a message quotes at most this much of
// one, so a megabyte key cannot make a megabyte message.
constexpr size_t kMaxQuotedKey = 64;

std::string Shortened(std::string_view key) {
  if (key.size() <= kMaxQuotedKey) return std::string(key);
  return std::string(key.substr(0, kMaxQuotedKey)) + "...";
}

}  // namespace

absl::Status JsonFieldError(absl::string_view path, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("options JSON: \"", path.empty() ? "(top level)" : path,
                   "\" ", what));
}

std::string JsonFields::PathOf(std::string_view key) const {
  return path_.empty() ? Shortened(key)
                       : absl::StrCat(path_, ".", Shortened(key));
}

const nlohmann::json* JsonFields::Find(std::string_view key) const {
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

namespace {

template <typename Keys>
absl::Status CheckKeysOf(const nlohmann::json& object, const JsonFields& f,
                         const std::string& path, const Keys& known) {
  if (!object.is_object()) {
    return JsonFieldError(path, absl::StrCat("is ", object.type_name(), "; must be an object"));
  }
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool found = false;
    for (std::string_view k : known) found = found || k == it.key();
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "options JSON: unknown key \"", f.PathOf(it.key()), "\"; known keys",
          path.empty() ? "" : absl::StrCat(" of \"", path, "\""), ": ", JoinNames(known)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status JsonFields::CheckKeys(std::initializer_list<std::string_view> known) const {
  return CheckKeysOf(object_, *this, path_, known);
}

absl::Status JsonFields::CheckKeys(const std::vector<std::string>& known) const {
  return CheckKeysOf(object_, *this, path_, known);
}

absl::Status JsonFields::ReadInteger(std::string_view key, int64_t min,
                                     int64_t max, int64_t* out) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return absl::OkStatus();
  const std::string range = absl::StrCat("; must be an integer in [", min,
                                         ", ", max, "]");
  if (value->is_number_unsigned()) {
    const uint64_t v = value->get<uint64_t>();
    if (v > static_cast<uint64_t>(max)) {
      return JsonFieldError(PathOf(key), absl::StrCat("is ", v, range));
    }
    *out = static_cast<int64_t>(v);
    return absl::OkStatus();
  }
  if (!value->is_number_integer()) {
    return JsonFieldError(PathOf(key),
                          absl::StrCat("is ", Shortened(value->dump()), range));
  }
  const int64_t v = value->get<int64_t>();
  if (v < min || v > max) {
    return JsonFieldError(PathOf(key), absl::StrCat("is ", v, range));
  }
  *out = v;
  return absl::OkStatus();
}

absl::Status JsonFields::Read(std::string_view key, int32_t* out) const {
  int64_t v = *out;
  absl::Status s = ReadInteger(key, std::numeric_limits<int32_t>::min(),
                               std::numeric_limits<int32_t>::max(), &v);
  if (s.ok()) *out = static_cast<int32_t>(v);
  return s;
}

absl::Status JsonFields::Read(std::string_view key, int64_t* out) const {
  return ReadInteger(key, std::numeric_limits<int64_t>::min(),
                     std::numeric_limits<int64_t>::max(), out);
}

absl::Status JsonFields::Read(std::string_view key, double* out) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_number()) {
    return JsonFieldError(PathOf(key), absl::StrCat("is ", value->type_name(),
                                                    "; must be a number"));
  }
  *out = value->get<double>();
  return absl::OkStatus();
}

absl::Status JsonFields::Read(std::string_view key, bool* out) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_boolean()) {
    return JsonFieldError(PathOf(key), absl::StrCat("is ", value->type_name(),
                                                    "; must be true or false"));
  }
  *out = value->get<bool>();
  return absl::OkStatus();
}

absl::Status JsonFields::Read(std::string_view key, std::string* out) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_string()) {
    return JsonFieldError(PathOf(key), absl::StrCat("is ", value->type_name(),
                                                    "; must be a string"));
  }
  *out = value->get<std::string>();
  return absl::OkStatus();
}

absl::Status JsonFields::ReadName(std::string_view key, std::string* out) const {
  std::string name = *out;
  HEARTH_RETURN_IF_ERROR(Read(key, &name));
  if (Find(key) == nullptr) return absl::OkStatus();
  HEARTH_RETURN_IF_ERROR(ValidateName(name, absl::StrCat("options JSON: \"", PathOf(key), "\"")));
  *out = std::move(name);
  return absl::OkStatus();
}

absl::Status JsonFields::ReadSeconds(std::string_view key,
                                     absl::Duration* out) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return absl::OkStatus();
  if (value->is_null()) {
    *out = absl::InfiniteDuration();
    return absl::OkStatus();
  }
  const double seconds = value->is_number() ? value->get<double>() : NAN;
  if (!std::isfinite(seconds) || std::fabs(seconds) > kMaxAbsSeconds) {
    return JsonFieldError(
        PathOf(key), absl::StrCat("is ", Shortened(value->dump()),
                                  "; must be seconds in [-1e12, 1e12], or "
                                  "null for infinite"));
  }
  *out = absl::Seconds(seconds);
  return absl::OkStatus();
}

}  // namespace hearth::capi
