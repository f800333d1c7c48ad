#include "jobs_status_json.h"

#include <string>

namespace hearth::serve {
namespace {

using Json = nlohmann::json;

Json QueueJson(const JobQueueStats& q) {
  Json ended = Json::object();
  for (int e = 0; e < kNumJobEnds; ++e) {
    ended[std::string(JobEndName(static_cast<JobEnd>(e)))] = q.ended[e];
  }
  return {{"name", q.name},
          {"kind", q.kind == JobQueueKind::kInteractive ? "interactive" : "background"},
          {"paused", q.paused},
          {"queued", q.queued},
          {"backing_off", q.backing_off},
          {"oldest_wait_s", absl::ToDoubleSeconds(q.oldest_wait)},
          {"running", q.running},
          {"io_in_flight", q.io_in_flight},
          {"concurrency_limit", q.effective_concurrency},
          {"max_concurrency", q.max_concurrency},
          {"submitted", q.submitted},
          {"retries", q.retries},
          {"ended", ended}};
}

}  // namespace

Json JobsStatusJson(const JobPoolStats& stats) {
  Json queues = Json::array();
  for (const JobQueueStats& q : stats.queues) queues.push_back(QueueJson(q));
  return {{"worker_slots", stats.worker_slots},
          {"running", stats.running},
          {"io_in_flight", stats.io_in_flight},
          {"interactive_pressure", stats.interactive_pressure},
          {"demand",
           {{"interactive_backlog", stats.demand.interactive_backlog},
            {"slo_slack", stats.demand.slo_slack}}},
          {"queues", queues}};
}

}  // namespace hearth::serve
