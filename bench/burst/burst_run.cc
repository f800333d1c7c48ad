#include "bench/burst/burst_run.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "bench/common/process_memory.h"
#include "hearth/exec/step_outcome_fill.h"
#include "hearth/scheduler/scheduler.h"

namespace hearth::bench {

namespace {

int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

int64_t InvoluntarySwitches() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_nivcsw;
}

constexpr uint32_t kAlice = 0;
constexpr uint32_t kBob = 1;

// Defaults everywhere but the household's members and the cache's size: the
// point is to judge the defaults.
SchedulerOptions BurstOptions(const BurstConfig& config) {
  SchedulerOptions o;
  o.users = {{.name = "alice"}, {.name = "bob"}};
  o.kv.num_device_blocks =
      KvBlocksForMemory(config.kv_bytes, config.kv_bytes_per_token, o.kv.block_size);
  return o;
}

}  // namespace

BurstReport RunBurst(const BurstConfig& config) {
  BurstReport report;
  report.config = config;
  const SchedulerOptions options = BurstOptions(config);
  report.device_blocks = options.kv.num_device_blocks;
  absl::StatusOr<std::unique_ptr<Scheduler>> created = Scheduler::Create(options);
  if (!created.ok()) {
    report.setup = created.status();
    return report;
  }
  Scheduler& scheduler = **created;
  BystanderProbe bob{UserId(kBob)};
  Flooder alice(&scheduler, {.user = UserId(kAlice),
                             .requests = config.requests,
                             .seed = config.seed,
                             .token_ids = config.flood_token_ids});
  report.plan_ns.reserve(1 << 20);
  report.plan_cpu_ns.reserve(1 << 20);
  report.complete_ns.reserve(1 << 20);
  report.plan_switched_out.reserve(1 << 20);
  report.intake.reserve(1 << 20);
  report.waiting.reserve(1 << 20);
  report.busy.reserve(1 << 20);
  uint64_t alice_seen = 0;
  StepOutcome outcome;
  std::vector<RequestResult> results;
  uint64_t bob_accepted = 0;
  absl::Time now = absl::Now();

  const auto start = std::chrono::steady_clock::now();
  const auto give_up = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   std::chrono::duration<double>(config.max_seconds));
  alice.Start();
  // The burst starts with alice's first accepted request: steps before it
  // would only add empty plans to the percentiles.
  while (alice.accepted() == 0 && !alice.done()) std::this_thread::yield();
  while (true) {
    const bool alice_live = !alice.done() || report.alice_ended < alice.accepted();
    if (!alice_live && report.bob_ended == bob_accepted) break;
    if (std::chrono::steady_clock::now() > give_up) {
      report.timed_out = true;
      break;
    }
    if (alice_live && report.steps % static_cast<uint64_t>(config.bystander_every_steps) == 0) {
      bob.Submit(scheduler, report.steps);
      if (bob.requests().back().accepted) ++bob_accepted;
    }
    now = std::max(now, absl::Now());
    const uint64_t alice_now = alice.accepted();
    const int64_t switches0 = InvoluntarySwitches();
    const int64_t cpu0 = ThreadCpuNs();
    const auto t0 = std::chrono::steady_clock::now();
    absl::StatusOr<const StepPlan*> planned = scheduler.Plan(now);
    const auto t1 = std::chrono::steady_clock::now();
    report.plan_cpu_ns.push_back(ThreadCpuNs() - cpu0);
    report.plan_switched_out.push_back(InvoluntarySwitches() != switches0 ? 1 : 0);
    if (!planned.ok()) {
      report.setup = planned.status();
      break;
    }
    const StepPlan& plan = **planned;
    ++report.steps;
    report.plan_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
    report.intake.push_back(static_cast<int64_t>(alice_now - alice_seen));
    alice_seen = alice_now;
    report.busy.push_back(plan.sequences.empty() ? 0 : 1);
    bob.Observe(plan);
    if (config.engine_step_us > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(config.engine_step_us));
    }
    // The engine answers at once: every sampled token is an ordinary one, so
    // requests end at max_new_tokens.
    StartStepOutcome(plan, &outcome);
    for (const ScheduledSequence& s : plan.sequences) {
      SequenceOutcome& o = outcome.sequences.emplace_back();
      o.id = s.id;
      if (s.sample) RecordSampledToken(1, false, o);
    }
    const auto c0 = std::chrono::steady_clock::now();
    absl::Status completed = scheduler.Complete(outcome);
    report.complete_ns.push_back(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - c0)
            .count());
    if (!completed.ok()) {
      report.setup = completed;
      break;
    }
    report.waiting.push_back(scheduler.stats().waiting);
    report.max_waiting = std::max(report.max_waiting, report.waiting.back());
    results.clear();
    scheduler.DrainResults(&results);
    for (const RequestResult& r : results) {
      ++(r.user.value() == kBob ? report.bob_ended : report.alice_ended);
    }
  }
  alice.Stop();
  alice.Join();
  report.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.alice = alice.report();
  report.bob = bob.requests();
  report.lost = report.alice.accepted + bob_accepted - report.alice_ended - report.bob_ended;
  report.peak_rss_kib = PeakRssKib();
  return report;
}

}  // namespace hearth::bench
