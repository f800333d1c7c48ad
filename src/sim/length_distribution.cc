#include "hearth/sim/length_distribution.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace hearth {

double LengthDistribution::ApproximateMean() const {
  switch (kind) {
    case Kind::kFixed: return a;
    case Kind::kUniform: return (a + b) / 2;
    case Kind::kLogNormal: return a * std::exp(b * b / 2);
  }
  return a;
}

absl::Status ValidateLengthDistribution(const LengthDistribution& d,
                                        const char* what) {
  if (d.min < 1 || d.max < d.min) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": need 1 <= min <= max; got min ", d.min, ", max ", d.max));
  }
  if (!(d.a > 0) || !(d.b >= 0) || !std::isfinite(d.a) || !std::isfinite(d.b)) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": parameters must be finite with a > 0 and b >= 0"));
  }
  if (d.kind == LengthDistribution::Kind::kUniform && d.b < d.a) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": uniform needs a <= b"));
  }
  return absl::OkStatus();
}

}  // namespace hearth
