#include "scheduler/options_schema.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace hearth::internal {
namespace {

absl::Status Refused(const OptionField& f, std::string_view prefix, std::string_view value) {
  return absl::InvalidArgumentError(absl::StrCat(
      absl::string_view(prefix.data(), prefix.size()),
      absl::string_view(f.path.data(), f.path.size()), " is ",
      absl::string_view(value.data(), value.size()), "; ",
      absl::string_view(f.allowed.data(), f.allowed.size())));
}

bool InRange(const OptionField& f, double v) {
  // Negated comparisons, so that NaN is outside every range.
  const bool above_lo = f.lo_open ? v > f.lo : v >= f.lo;
  const bool below_hi = f.hi_open ? v < f.hi : v <= f.hi;
  return above_lo && below_hi;
}

bool Allowed(DurationRule rule, absl::Duration d) {
  const bool infinite = d == absl::InfiniteDuration();
  switch (rule) {
    case DurationRule::kAny: return true;
    case DurationRule::kPositive: return d > absl::ZeroDuration();
    case DurationRule::kPositiveFinite: return d > absl::ZeroDuration() && !infinite;
    case DurationRule::kNonNegativeFinite: return d >= absl::ZeroDuration() && !infinite;
    case DurationRule::kNonNegative: return d >= absl::ZeroDuration();
    case DurationRule::kSloTarget:
      return infinite || (d > absl::ZeroDuration() && d <= kMaxSloTarget);
  }
  return false;
}

}  // namespace

std::string ExactDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, ec == std::errc() ? end : buf);
}

absl::Status CheckField(const OptionField& f, std::string_view prefix, int64_t value) {
  if (f.check != OptionField::Check::kTable || InRange(f, static_cast<double>(value))) {
    return absl::OkStatus();
  }
  return Refused(f, prefix, absl::StrCat(value));
}

absl::Status CheckField(const OptionField& f, std::string_view prefix, double value) {
  if (f.check != OptionField::Check::kTable || InRange(f, value)) return absl::OkStatus();
  return Refused(f, prefix, ExactDouble(value));
}

absl::Status CheckField(const OptionField& f, std::string_view prefix, absl::Duration value) {
  if (f.check != OptionField::Check::kTable || Allowed(f.duration, value)) {
    return absl::OkStatus();
  }
  return Refused(f, prefix, absl::FormatDuration(value));
}

}  // namespace hearth::internal
