// File: examples/serve/src/interactive_backlog.h
//
// `InteractiveBacklog` turns the engine's requests into the job queues'
// InteractiveDemand (hearth/jobs/interactive_demand.h): the requests of
// interactive work classes (voice and chat by default) that have not yet
// had their first token -- queued, waiting, preparing or in prefill -- and
// how much of its TTFT target the oldest of them has used.
//
//   interactive_backlog = interactive requests still waiting for a token
//   slo_slack           = min over interactive classes with one waiting of
//                         1 - (now - oldest submission) / class TTFT target
//
// The live wait is the leading signal: a TTFT percentile only moves once
// the slow requests have been answered, and by then the cores the document
// parser held are no longer the problem. Classes without a finite TTFT
// target add to the backlog but not to the slack.
//
// Costs O(log n) per request start and end, O(classes) per Demand(), so
// the engine reports every iteration.
//
// Thread-safety: none; the engine thread only.
//
// Example:
//   InteractiveBacklog backlog({absl::Seconds(0.5), absl::Seconds(2)}, {true, true});
//   backlog.Waiting(id, WorkClassId(0), submitted);
//   ... first token: backlog.Answered(id);
//   InteractiveDemand d = backlog.Demand(absl::Now());

#ifndef HEARTH_SERVE_INTERACTIVE_BACKLOG_H_
#define HEARTH_SERVE_INTERACTIVE_BACKLOG_H_

#include <set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "hearth/common/ids.h"
#include "hearth/jobs/interactive_demand.h"

namespace hearth::serve {

class InteractiveBacklog {
 public:
  // Index for index over the work classes: each class's TTFT target
  // (InfiniteDuration or zero: none) and whether it is interactive.
  InteractiveBacklog(std::vector<absl::Duration> ttft_targets, std::vector<bool> interactive);

  // A request of class `work_class` waits for its first token since
  // `submitted`. Ignored for non-interactive or unknown classes and for an
  // id already held.
  void Waiting(RequestId id, WorkClassId work_class, absl::Time submitted);
  // Its first token came, or it ended; no-op for ids not held.
  void Answered(RequestId id);

  InteractiveDemand Demand(absl::Time now) const;
  int64_t size() const { return static_cast<int64_t>(held_.size()); }

 private:
  using Entry = std::pair<absl::Time, RequestId>;
  struct Class {
    absl::Duration ttft_target;
    bool interactive = false;
    // Waiting requests, oldest first.
    std::set<Entry> waiting;
  };
  std::vector<Class> classes_;
  absl::flat_hash_map<RequestId, std::pair<size_t, absl::Time>> held_;
};

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_INTERACTIVE_BACKLOG_H_
