#include "serve_job_queues.h"

#include <algorithm>

namespace hearth::serve {

JobPoolOptions ServeJobQueues(int cores, int backlog_for_full_pressure) {
  JobPoolOptions o = HouseholdJobQueues(cores);
  o.give_back.backlog_for_full_pressure = std::max(1, backlog_for_full_pressure);
  return o;
}

}  // namespace hearth::serve
