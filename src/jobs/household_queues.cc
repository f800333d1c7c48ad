#include <algorithm>
#include <string>

#include "hearth/jobs/job_options.h"

namespace hearth {
namespace {

JobQueueOptions Queue(std::string name, JobQueueKind kind, int priority, int max_concurrency,
                      int under_demand, int max_retries) {
  JobQueueOptions q;
  q.name = std::move(name);
  q.kind = kind;
  q.default_priority = priority;
  q.max_concurrency = max_concurrency;
  q.concurrency_under_demand = under_demand;
  q.retry.max_retries = max_retries;
  return q;
}

}  // namespace

JobPoolOptions HouseholdJobQueues(int cores) {
  const int n = std::clamp(cores, 1, kMaxJobSlots);
  JobPoolOptions o;
  o.worker_slots = n;
  o.max_io_depth = 4;

  // Someone is typing: all cores, first in line, never given back.
  JobQueueOptions interactive = Queue("interactive", JobQueueKind::kInteractive, 90, n, n, 0);
  interactive.default_run_timeout = absl::Seconds(30);

  // A document's summary waits on its parse, but no one is watching it.
  JobQueueOptions documents =
      Queue("documents", JobQueueKind::kBackground, 40, std::max(1, n - 1), 1, 2);

  // Scans and backups can always wait for the evening to quieten.
  JobQueueOptions library =
      Queue("library", JobQueueKind::kBackground, 10, std::max(1, n / 2), 0, 3);
  library.max_io_depth = 2;
  library.jobs_use_io = true;

  // A model load is what unblocks the accelerator: one at a time for the
  // disk's sake, but never paused.
  JobQueueOptions model_load = Queue("model_load", JobQueueKind::kBackground, 60, 1, 1, 2);
  model_load.max_io_depth = 1;
  model_load.jobs_use_io = true;

  o.queues = {interactive, documents, library, model_load};
  return o;
}

}  // namespace hearth
