// File: tests/testing/option_fields.h
//
// Helpers for tests that walk the options table (src/scheduler/
// options_schema.h): every field's value as text, a value different from a
// given one, and the aggregate arity of an options struct, with which a test
// notices a field the table forgot.

#ifndef HEARTH_TESTS_TESTING_OPTION_FIELDS_H_
#define HEARTH_TESTS_TESTING_OPTION_FIELDS_H_

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "hearth/scheduler/option_fields.h"
#include "hearth/scheduler/scheduler_options.h"
#include "scheduler/options_schema.h"

namespace hearth::testing {

// Converts to anything: T{AnyField{}, ...} compiles with as many of them
// as T (an aggregate) has fields, and no more.
struct AnyField {
  template <typename T>
  operator T() const;  // Declared only: used in unevaluated contexts.
};

template <typename T, typename... Fields>
constexpr size_t AggregateArity() {
  if constexpr (requires { T{Fields{}..., AnyField{}}; }) {
    return AggregateArity<T, Fields..., AnyField>();
  } else {
    return sizeof...(Fields);
  }
}

inline std::string Repr(int32_t v) { return absl::StrCat(v); }
inline std::string Repr(int64_t v) { return absl::StrCat(v); }
inline std::string Repr(uint64_t v) { return absl::StrCat(v); }
inline std::string Repr(double v) { return internal::ExactDouble(v); }
inline std::string Repr(bool v) { return v ? "true" : "false"; }
inline std::string Repr(absl::Duration v) { return absl::FormatDuration(v); }
inline std::string Repr(const std::string& v) { return v; }
inline std::string Repr(PreemptionMode v) { return absl::StrCat(static_cast<int>(v)); }

// A valid-looking value other than `v`.
inline int32_t Different(int32_t v) { return v == 7 ? 8 : 7; }
inline int64_t Different(int64_t v) { return v == 7 ? 8 : 7; }
inline uint64_t Different(uint64_t v) { return v == 7 ? 8 : 7; }
inline double Different(double v) { return v == 0.25 ? 0.5 : 0.25; }
inline bool Different(bool v) { return !v; }
inline absl::Duration Different(absl::Duration v) {
  return v == absl::Seconds(3) ? absl::Seconds(4) : absl::Seconds(3);
}
inline std::string Different(const std::string& v) { return v + "x"; }
inline PreemptionMode Different(PreemptionMode v) {
  return v == PreemptionMode::kSwap ? PreemptionMode::kRecompute : PreemptionMode::kSwap;
}

// The same for a front end's OptionValue (hearth/scheduler/option_fields.h):
// the walks of the text front ends set every field to this.
inline OptionValue Different(const OptionFieldInfo& f, const OptionValue& v) {
  if (f.type == OptionType::kPreemptionMode) {
    return std::string(std::get<std::string>(v) == "swap" ? "recompute" : "swap");
  }
  return std::visit([](const auto& x) { return OptionValue(Different(x)); }, v);
}

// One field of the table: where it is (a registry's entry 0, or the options
// themselves) and its path.
struct FieldRef {
  enum class Where { kOptions, kModel, kUser, kWorkClass } where;
  std::string path;
};

// Calls v(where, field, value) for every field of the table over `o`'s
// own fields and its registries' first entries.
template <typename Options, typename Visitor>
void VisitAllFields(Options& o, Visitor&& v) {
  using W = FieldRef::Where;
  auto with = [&v](W where) {
    return [&v, where](const internal::OptionField& f, auto& value) { v(where, f, value); };
  };
  internal::VisitOptionFields(o, with(W::kOptions));
  internal::VisitModelFields(o.models[0], with(W::kModel));
  internal::VisitUserFields(o.users[0], with(W::kUser));
  internal::VisitWorkClassFields(o.work_classes[0], with(W::kWorkClass));
}

// Every field's value as text, in VisitAllFields order.
inline std::vector<std::string> Snapshot(const SchedulerOptions& o) {
  std::vector<std::string> out;
  VisitAllFields(o, [&out](FieldRef::Where, const internal::OptionField&, const auto& value) {
    out.push_back(Repr(value));
  });
  return out;
}

// Sets field number `index` (VisitAllFields order) of `o` to a different
// value; returns the field and the new value as text.
inline std::pair<FieldRef, std::string> Perturb(SchedulerOptions& o, size_t index) {
  std::pair<FieldRef, std::string> out;
  size_t i = 0;
  VisitAllFields(o, [&](FieldRef::Where where, const internal::OptionField& f, auto& value) {
    if (i++ != index) return;
    value = Different(value);
    out = {FieldRef{where, std::string(f.path)}, Repr(value)};
  });
  return out;
}

}  // namespace hearth::testing

#endif  // HEARTH_TESTS_TESTING_OPTION_FIELDS_H_
