// What every row-per-request trace reader shares: token-count limits, the
// label's file name, and appending a mapped row to a workload.

#ifndef HEARTH_SRC_SIM_TRACE_ROWS_H_
#define HEARTH_SRC_SIM_TRACE_ROWS_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "hearth/sim/trace_mapping.h"
#include "hearth/sim/workload.h"

namespace hearth::internal {

// Most tokens a prompt or an output may have in any trace (as the Azure
// reader): a longer one is surely corrupt, and sums of two stay in int32.
inline constexpr int64_t kMaxTraceTokens = int64_t{1} << 30;

// A file's base name for labels ("conv.csv:17" rather than a long path).
inline std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Maps a row at `offset` from the trace start through `mapper` and appends
// it, unless it falls outside the mapping's window. Returns false once
// max_requests rows are in (the reader stops).
inline bool AddMappedRow(const TraceMapping& mapping, TraceRowMapper& mapper,
                         absl::Duration offset, SimRequest r, Workload& w) {
  if (mapper.InWindow(offset)) {
    r.arrival = mapper.ArrivalFor(offset);
    r.user = mapper.NextUser();
    r.work_class = mapper.ClassFor(r.prompt_tokens, r.output_tokens);
    w.requests.push_back(std::move(r));
  }
  return mapping.max_requests == 0 ||
         static_cast<int64_t>(w.requests.size()) < mapping.max_requests;
}

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_TRACE_ROWS_H_
