#include "hearth/scheduler/option_fields.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "scheduler/options_schema.h"

namespace hearth {
namespace {

using internal::OptionField;

template <typename T>
constexpr OptionType TypeOf() {
  if constexpr (std::is_same_v<T, int32_t>) return OptionType::kInt32;
  if constexpr (std::is_same_v<T, int64_t>) return OptionType::kInt64;
  if constexpr (std::is_same_v<T, uint64_t>) return OptionType::kUint64;
  if constexpr (std::is_same_v<T, double>) return OptionType::kDouble;
  if constexpr (std::is_same_v<T, bool>) return OptionType::kBool;
  if constexpr (std::is_same_v<T, absl::Duration>) return OptionType::kDuration;
  if constexpr (std::is_same_v<T, std::string>) return OptionType::kString;
  if constexpr (std::is_same_v<T, PreemptionMode>) return OptionType::kPreemptionMode;
}

// Calls visit(field, value) over `target`'s fields with the visitor of
// options_schema.h that `scope` names; `Target` is that scope's struct.
template <typename Target, typename Visit>
void VisitScope(Target& target, Visit&& visit) {
  using T = std::remove_const_t<Target>;
  if constexpr (std::is_same_v<T, SchedulerOptions>) internal::VisitOptionFields(target, visit);
  if constexpr (std::is_same_v<T, ModelConfig>) internal::VisitModelFields(target, visit);
  if constexpr (std::is_same_v<T, UserConfig>) internal::VisitUserFields(target, visit);
  if constexpr (std::is_same_v<T, WorkClassConfig>) internal::VisitWorkClassFields(target, visit);
}

template <typename Target>
std::vector<OptionFieldInfo> ListFields(OptionScope scope) {
  std::vector<OptionFieldInfo> out;
  Target defaults;
  VisitScope(defaults, [&](const OptionField& f, const auto& value) {
    using T = std::decay_t<decltype(value)>;
    out.push_back({.scope = scope,
                   .path = f.path,
                   .type = TypeOf<T>(),
                   .allowed = f.allowed,
                   .doc = f.doc,
                   .checked_by_create = f.check != OptionField::Check::kTable});
  });
  return out;
}

absl::Status Refused(std::string_view text, std::string_view allowed) {
  return absl::InvalidArgumentError(
      absl::StrCat("is ", absl::string_view(text.data(), text.size()), "; ",
                   absl::string_view(allowed.data(), allowed.size())));
}

absl::Status WrongType(const OptionValue& value, OptionType type) {
  const std::string_view words = OptionTypeInWords(type);
  return absl::InvalidArgumentError(absl::StrCat("is ", OptionValueText(value), "; must be ",
                                                 absl::string_view(words.data(), words.size())));
}

// Seconds as a Duration: nanoseconds rounded to the nearest, as the
// simulator has always read them (so its scenarios keep their values).
absl::Duration FromSeconds(double s) {
  if (std::isinf(s)) return s > 0 ? absl::InfiniteDuration() : -absl::InfiniteDuration();
  if (std::abs(s) < 9e9) return absl::Nanoseconds(std::llround(s * 1e9));
  return absl::Seconds(s);  // Saturates; beyond every finite rule anyway.
}

// The allowed text of a field without a table rule still says what the
// value may be when the type alone refuses it.
std::string_view AllowedOf(const OptionField& f, std::string_view fallback) {
  return f.allowed.empty() ? fallback : f.allowed;
}

// CheckField's refusal without its leading path: "is 0; must be ...", for
// the front end to prefix with its own key.
absl::Status Checked(const OptionField& f, absl::Status s) {
  if (s.ok()) return s;
  absl::string_view m = s.message();
  const absl::string_view path(f.path.data(), f.path.size());
  if (m.substr(0, path.size()) == path && m.substr(path.size(), 1) == " ") {
    m.remove_prefix(path.size() + 1);
  }
  return absl::InvalidArgumentError(m);
}

template <typename Int>
absl::Status ConvertInt(const OptionField& f, const OptionValue& v, Int* out) {
  const int64_t* i = std::get_if<int64_t>(&v);
  if (i == nullptr) return WrongType(v, OptionType::kInt64);
  if constexpr (std::is_same_v<Int, uint64_t>) {
    *out = static_cast<uint64_t>(*i);
    return absl::OkStatus();
  } else {
    constexpr std::string_view kInt32 = "must be a 32-bit integer";
    if (*i < std::numeric_limits<Int>::min() || *i > std::numeric_limits<Int>::max()) {
      return Refused(absl::StrCat(*i), AllowedOf(f, kInt32));
    }
    *out = static_cast<Int>(*i);
    return Checked(f, internal::CheckField(f, "", int64_t{*out}));
  }
}

absl::Status Convert(const OptionField& f, const OptionValue& v, int32_t* out) {
  return ConvertInt(f, v, out);
}
absl::Status Convert(const OptionField& f, const OptionValue& v, int64_t* out) {
  return ConvertInt(f, v, out);
}
absl::Status Convert(const OptionField& f, const OptionValue& v, uint64_t* out) {
  return ConvertInt(f, v, out);
}
absl::Status Convert(const OptionField& f, const OptionValue& v, double* out) {
  if (const int64_t* i = std::get_if<int64_t>(&v)) {
    *out = static_cast<double>(*i);
  } else if (const double* d = std::get_if<double>(&v)) {
    *out = *d;
  } else {
    return WrongType(v, OptionType::kDouble);
  }
  return Checked(f, internal::CheckField(f, "", *out));
}
absl::Status Convert(const OptionField&, const OptionValue& v, bool* out) {
  const bool* b = std::get_if<bool>(&v);
  if (b == nullptr) return WrongType(v, OptionType::kBool);
  *out = *b;
  return absl::OkStatus();
}
absl::Status Convert(const OptionField& f, const OptionValue& v, absl::Duration* out) {
  if (const absl::Duration* d = std::get_if<absl::Duration>(&v)) {
    *out = *d;
  } else if (const int64_t* i = std::get_if<int64_t>(&v)) {
    *out = FromSeconds(static_cast<double>(*i));
  } else if (const double* s = std::get_if<double>(&v)) {
    if (std::isnan(*s)) return Refused("nan", AllowedOf(f, "must be a number of seconds"));
    *out = FromSeconds(*s);
  } else if (const std::string* text = std::get_if<std::string>(&v); text && *text == "off") {
    // How OptionValueText writes InfiniteDuration, so a value quoted in a
    // message can be written back; a refusal quotes it as written.
    *out = absl::InfiniteDuration();
    absl::Status s = Checked(f, internal::CheckField(f, "", *out));
    if (s.ok()) return s;
    const size_t rule = s.message().find("; ");
    return Refused("\"off\"", rule == absl::string_view::npos
                                   ? std::string_view("is not allowed")
                                   : std::string_view(s.message().substr(rule + 2).data(),
                                                      s.message().size() - rule - 2));
  } else {
    return WrongType(v, OptionType::kDuration);
  }
  return Checked(f, internal::CheckField(f, "", *out));
}
absl::Status Convert(const OptionField&, const OptionValue& v, std::string* out) {
  const std::string* s = std::get_if<std::string>(&v);
  if (s == nullptr) return WrongType(v, OptionType::kString);
  *out = *s;
  return absl::OkStatus();
}
absl::Status Convert(const OptionField&, const OptionValue& v, PreemptionMode* out) {
  const std::string* s = std::get_if<std::string>(&v);
  if (s != nullptr && *s == "recompute") {
    *out = PreemptionMode::kRecompute;
  } else if (s != nullptr && *s == "swap") {
    *out = PreemptionMode::kSwap;
  } else {
    return WrongType(v, OptionType::kPreemptionMode);
  }
  return absl::OkStatus();
}

template <typename Target>
absl::Status Set(Target& target, const OptionFieldInfo& info, const OptionValue& value) {
  absl::Status status = absl::NotFoundError(
      absl::StrCat(absl::string_view(info.path.data(), info.path.size()), " is not a field"));
  VisitScope(target, [&](const OptionField& f, auto& field) {
    if (f.path != info.path) return;
    std::decay_t<decltype(field)> converted = field;
    status = Convert(f, value, &converted);
    if (status.ok()) field = std::move(converted);
  });
  return status;
}

OptionValue ToValue(int32_t v) { return int64_t{v}; }
OptionValue ToValue(int64_t v) { return v; }
OptionValue ToValue(uint64_t v) { return static_cast<int64_t>(v); }
OptionValue ToValue(double v) { return v; }
OptionValue ToValue(bool v) { return v; }
OptionValue ToValue(absl::Duration v) { return v; }
OptionValue ToValue(const std::string& v) { return v; }
OptionValue ToValue(PreemptionMode v) {
  return std::string(v == PreemptionMode::kSwap ? "swap" : "recompute");
}

template <typename Target>
OptionValue Get(const Target& source, const OptionFieldInfo& info) {
  OptionValue out;
  VisitScope(source, [&](const OptionField& f, const auto& field) {
    if (f.path == info.path) out = ToValue(field);
  });
  return out;
}

}  // namespace

const std::vector<OptionFieldInfo>& OptionFields(OptionScope scope) {
  static const auto* const kFields = new std::vector<OptionFieldInfo>[4]{
      ListFields<SchedulerOptions>(OptionScope::kOptions),
      ListFields<ModelConfig>(OptionScope::kModel),
      ListFields<UserConfig>(OptionScope::kUser),
      ListFields<WorkClassConfig>(OptionScope::kWorkClass)};
  return kFields[static_cast<int>(scope)];
}

std::string_view OptionTypeInWords(OptionType type) {
  switch (type) {
    case OptionType::kInt32:
    case OptionType::kInt64:
    case OptionType::kUint64: return "an integer";
    case OptionType::kDouble: return "a number";
    case OptionType::kBool: return "true or false";
    case OptionType::kDuration: return "a number of seconds or \"off\"";
    case OptionType::kString: return "a string";
    case OptionType::kPreemptionMode: return "\"recompute\" or \"swap\"";
  }
  return "a value";
}

std::string OptionKey(const OptionFieldInfo& field) {
  std::string key(field.path);
  if (field.type == OptionType::kDuration) key += "_s";
  return key;
}

absl::Status SetOptionField(SchedulerOptions& t, const OptionFieldInfo& f, const OptionValue& v) {
  return Set(t, f, v);
}
absl::Status SetOptionField(ModelConfig& t, const OptionFieldInfo& f, const OptionValue& v) {
  return Set(t, f, v);
}
absl::Status SetOptionField(UserConfig& t, const OptionFieldInfo& f, const OptionValue& v) {
  return Set(t, f, v);
}
absl::Status SetOptionField(WorkClassConfig& t, const OptionFieldInfo& f, const OptionValue& v) {
  return Set(t, f, v);
}

OptionValue GetOptionField(const SchedulerOptions& s, const OptionFieldInfo& f) {
  return Get(s, f);
}
OptionValue GetOptionField(const ModelConfig& s, const OptionFieldInfo& f) { return Get(s, f); }
OptionValue GetOptionField(const UserConfig& s, const OptionFieldInfo& f) { return Get(s, f); }
OptionValue GetOptionField(const WorkClassConfig& s, const OptionFieldInfo& f) {
  return Get(s, f);
}

std::string OptionValueText(const OptionValue& value) {
  if (const int64_t* i = std::get_if<int64_t>(&value)) return absl::StrCat(*i);
  if (const double* d = std::get_if<double>(&value)) return internal::ExactDouble(*d);
  if (const bool* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const absl::Duration* d = std::get_if<absl::Duration>(&value)) {
    if (*d == absl::InfiniteDuration()) return "\"off\"";
    return internal::ExactDouble(absl::ToDoubleSeconds(*d));
  }
  // Quoted, and bounded: a hostile string is not echoed whole.
  const std::string& s = std::get<std::string>(value);
  return absl::StrCat("\"", s.substr(0, 64), s.size() > 64 ? "...\"" : "\"");
}

}  // namespace hearth
