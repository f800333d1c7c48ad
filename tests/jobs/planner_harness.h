// File: tests/jobs/planner_harness.h
//
// Drives a JobPlanner on a ManualClock the way JobPool does, standing in for
// the worker threads: it keeps the attempts that hold slots, and after every
// call checks the limits (pool slots, each queue's max_concurrency and I/O
// depth, the pool's I/O depth) and that no job gets a second result.

#ifndef HEARTH_TESTS_JOBS_PLANNER_HARNESS_H_
#define HEARTH_TESTS_JOBS_PLANNER_HARNESS_H_

#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/common/clock.h"
#include "hearth/jobs/job_planner.h"

namespace hearth::jobs_testing {

struct HeldAttempt {
  int attempt = 0;
  bool uses_io = false;
  std::string queue;
};

class PlannerHarness {
 public:
  explicit PlannerHarness(JobPoolOptions options)
      : options_(options), planner_(std::move(*JobPlanner::Create(std::move(options)))) {}

  JobPlanner& planner() { return planner_; }
  ManualClock& clock() { return clock_; }
  absl::Time now() const { return clock_.Now(); }
  const std::map<JobId, HeldAttempt>& held() const { return held_; }
  const std::map<JobId, JobResult>& results() const { return results_; }
  const std::vector<JobStart>& started() const { return started_; }
  const std::vector<JobId>& stops() const { return stops_; }

  absl::StatusOr<JobId> TrySubmit(const JobSpec& spec) {
    absl::StatusOr<JobId> id = planner_.Submit(spec, now());
    if (id.ok()) queue_of_[*id] = spec.queue;
    return id;
  }
  JobId Submit(const JobSpec& spec) {
    absl::StatusOr<JobId> id = TrySubmit(spec);
    REQUIRE(id.ok());
    return *id;
  }
  JobId Submit(const std::string& queue, int priority = 0) {
    JobSpec spec;
    spec.queue = queue;
    spec.priority = priority;
    return Submit(spec);
  }

  void Plan() {
    JobDecisions d;
    planner_.Plan(now(), &d);
    Apply(d);
  }
  void Advance(absl::Duration d) {
    clock_.Advance(d);
    Plan();
  }
  // The worker running `id` returns `status`, then the planner plans.
  void Return(JobId id, absl::Status status = absl::OkStatus()) {
    auto it = held_.find(id);
    REQUIRE(it != held_.end());
    JobDecisions d;
    REQUIRE(planner_.AttemptEnded(id, it->second.attempt, status, now(), &d).ok());
    held_.erase(it);
    Apply(d);
    Plan();
  }
  absl::Status Cancel(JobId id) {
    JobDecisions d;
    absl::Status s = planner_.Cancel(id, now(), &d);
    Apply(d);
    return s;
  }
  void Shutdown() {
    JobDecisions d;
    planner_.Shutdown(now(), &d);
    Apply(d);
  }

  bool Running(JobId id) const { return held_.count(id) > 0; }
  bool Ended(JobId id) const { return results_.count(id) > 0; }
  const JobResult& Result(JobId id) const { return results_.at(id); }
  int64_t HeldIn(const std::string& queue) const {
    int64_t n = 0;
    for (const auto& [id, a] : held_) n += a.queue == queue;
    return n;
  }

  void Apply(JobDecisions& d) {
    for (const JobStart& s : d.starts) {
      REQUIRE_FALSE(Ended(s.id));
      REQUIRE(held_.emplace(s.id, HeldAttempt{s.attempt, s.uses_io, queue_of_.at(s.id)}).second);
      started_.push_back(s);
    }
    for (const JobId id : d.stops) {
      REQUIRE(held_.count(id) == 1);
      stops_.push_back(id);
    }
    for (JobResult& r : d.results) {
      INFO("job " << r.id.ToString() << " ended twice");
      REQUIRE(results_.emplace(r.id, std::move(r)).second);
    }
    d.Clear();
    CheckLimits();
  }

  void CheckLimits() const {
    int64_t io = 0;
    for (const auto& [id, a] : held_) io += a.uses_io;
    REQUIRE(static_cast<int64_t>(held_.size()) <= options_.worker_slots);
    if (options_.max_io_depth) REQUIRE(io <= *options_.max_io_depth);
    for (const JobQueueOptions& q : options_.queues) {
      int64_t running = 0, q_io = 0;
      for (const auto& [id, a] : held_) {
        if (a.queue != q.name) continue;
        ++running;
        q_io += a.uses_io;
      }
      INFO("queue " << q.name);
      REQUIRE(running <= q.max_concurrency);
      if (q.max_io_depth) REQUIRE(q_io <= *q.max_io_depth);
    }
    const JobPoolStats stats = planner_.Stats(now());
    REQUIRE(stats.running == static_cast<int64_t>(held_.size()));
    REQUIRE(stats.io_in_flight == io);
  }

 private:
  JobPoolOptions options_;
  ManualClock clock_;
  JobPlanner planner_;
  std::map<JobId, std::string> queue_of_;
  std::map<JobId, HeldAttempt> held_;
  std::map<JobId, JobResult> results_;
  std::vector<JobStart> started_;
  std::vector<JobId> stops_;
};

// One queue named `name` with `concurrency` slots in a pool of as many.
inline JobPoolOptions OneQueue(const std::string& name = "q", int concurrency = 1) {
  JobPoolOptions o;
  JobQueueOptions q;
  q.name = name;
  q.max_concurrency = concurrency;
  q.concurrency_under_demand = concurrency;
  o.queues = {q};
  o.worker_slots = concurrency;
  return o;
}

}  // namespace hearth::jobs_testing

#endif  // HEARTH_TESTS_JOBS_PLANNER_HARNESS_H_
