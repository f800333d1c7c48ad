// What a cap on generated requests means in memory, for the messages that
// report it.

#ifndef HEARTH_SRC_SIM_REQUEST_CAP_H_
#define HEARTH_SRC_SIM_REQUEST_CAP_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace hearth::internal {

// Resident bytes per generated request over a whole run (workload,
// simulator records, metrics): hearth_sim_cli peaked at 182 MB for 989,493
// ServeGen requests under FIFO at light load (50 MB for 150,275), about 160
// bytes a request on top of a fixed base. A run whose queue backs up holds
// more per request in the scheduler, so this is a floor for messages.
inline constexpr int64_t kBytesPerRequest = 200;

inline std::string RequestCapMemoryText(int64_t cap) {
  return absl::StrCat("about ", cap * kBytesPerRequest / 1000000, " MB at ~",
                      kBytesPerRequest, " bytes a request");
}

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_REQUEST_CAP_H_
