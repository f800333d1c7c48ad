// Seconds on the host's clock (the C API's doubles) to and from absl::Time.

#ifndef HEARTH_SRC_CAPI_C_TIME_H_
#define HEARTH_SRC_CAPI_C_TIME_H_

#include <cmath>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace hearth::capi {

// Beyond about 31,700 years from the clock's zero a time is a unit mistake,
// not a time; rejecting it keeps every later subtraction finite.
inline constexpr double kMaxAbsSeconds = 1e12;

// Which infinities a field accepts, each meaning "unset" there.
enum class Infinity { kNone, kPast, kFuture };

inline absl::StatusOr<absl::Time> TimeFromSeconds(double seconds,
                                                  absl::string_view field,
                                                  Infinity allowed) {
  if (allowed == Infinity::kPast && seconds == -INFINITY) {
    return absl::InfinitePast();
  }
  if (allowed == Infinity::kFuture && seconds == INFINITY) {
    return absl::InfiniteFuture();
  }
  if (!std::isfinite(seconds) || std::fabs(seconds) > kMaxAbsSeconds) {
    const char* allowed_text = allowed == Infinity::kPast ? " or -INFINITY"
                               : allowed == Infinity::kFuture ? " or INFINITY"
                                                              : "";
    return absl::InvalidArgumentError(
        absl::StrCat(field, " is ", seconds, "; must be finite seconds in [-1e12, 1e12]",
                     allowed_text));
  }
  return absl::UnixEpoch() + absl::Seconds(seconds);
}

// InfinitePast -> -INFINITY, InfiniteFuture -> INFINITY.
inline double SecondsFromTime(absl::Time time) {
  return absl::ToDoubleSeconds(time - absl::UnixEpoch());
}

}  // namespace hearth::capi

#endif  // HEARTH_SRC_CAPI_C_TIME_H_
