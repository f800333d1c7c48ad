// What a cap on generated requests means in memory, for the messages that
// report it.

#ifndef HEARTH_SRC_SIM_REQUEST_CAP_H_
#define HEARTH_SRC_SIM_REQUEST_CAP_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace hearth::internal {

// Peak resident bytes per generated request over a whole run (workload,
// simulator records, metrics), measured with hearth_sim_cli on a ServeGen
// scenario of 1M requests.
inline constexpr int64_t kBytesPerRequest = 600;

inline std::string RequestCapMemoryText(int64_t cap) {
  return absl::StrCat("about ", cap * kBytesPerRequest / 1000000, " MB at ~",
                      kBytesPerRequest, " bytes a request");
}

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_REQUEST_CAP_H_
