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
#include "hearth/exec/engine_loop.h"
#include "hearth/exec/step_outcome_fill.h"
#include "hearth/scheduler/scheduler.h"

namespace hearth::bench {

namespace {

int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// The engine thread's context switches so far: involuntary (the OS gave its
// core to another thread) and voluntary (it blocked: a lock, a page fault on
// I/O, a sleep).
std::pair<int64_t, int64_t> ContextSwitches() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return {usage.ru_nivcsw, usage.ru_nvcsw};
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

// The engine thread's side of the burst: plans, times and answers steps
// (its own executor, under the one EngineLoop), and counts who ended, into
// `report`.
class BurstEngine : private StepExecutor, private EngineHooks {
 public:
  BurstEngine(Scheduler* scheduler, const BurstConfig& config, BurstReport* report)
      : scheduler_(*scheduler), config_(config), report_(*report), loop_(scheduler_, *this) {
    for (auto* v : {&report_.plan_ns, &report_.plan_cpu_ns, &report_.complete_ns,
                    &report_.intake}) {
      v->reserve(1 << 20);
    }
    report_.plan_switched_out.reserve(1 << 20);
    report_.plan_blocked.reserve(1 << 20);
    report_.waiting.reserve(1 << 20);
    report_.busy.reserve(1 << 20);
  }

  // One step; false when the scheduler refused a call (report_.setup says why).
  bool Step(uint64_t alice_accepted, BystanderProbe& bob) {
    now_ = std::max(now_, absl::Now());
    alice_accepted_ = alice_accepted;
    bob_ = &bob;
    plan_switches_ = ContextSwitches();
    plan_cpu_ns_ = ThreadCpuNs();
    plan_start_ = std::chrono::steady_clock::now();
    const absl::Status s = loop_.Step(now_, *this);
    if (!loop_.last_step().planned) RecordPlanCost();
    if (!s.ok()) {
      report_.setup = s;
      return false;
    }
    report_.waiting.push_back(scheduler_.stats().waiting);
    report_.max_waiting = std::max(report_.max_waiting, report_.waiting.back());
    results_.clear();
    scheduler_.DrainResults(&results_);
    for (const RequestResult& r : results_) {
      ++(r.user.value() == kBob ? report_.bob_ended : report_.alice_ended);
    }
    return true;
  }

 private:
  // Plan's CPU time and whether the thread lost its core or blocked in it.
  void RecordPlanCost() {
    const auto [switched1, blocked1] = ContextSwitches();
    report_.plan_cpu_ns.push_back(ThreadCpuNs() - plan_cpu_ns_);
    report_.plan_switched_out.push_back(switched1 != plan_switches_.first ? 1 : 0);
    report_.plan_blocked.push_back(blocked1 != plan_switches_.second ? 1 : 0);
  }

  void OnPlanned(const StepPlan& plan) override {
    const auto t1 = std::chrono::steady_clock::now();
    RecordPlanCost();
    ++report_.steps;
    report_.plan_ns.push_back(
        std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - plan_start_).count());
    report_.intake.push_back(static_cast<int64_t>(alice_accepted_ - alice_seen_));
    alice_seen_ = alice_accepted_;
    report_.busy.push_back(plan.sequences.empty() ? 0 : 1);
    bob_->Observe(plan);
  }

  // The engine answers after engine_step_us: every sampled token is an
  // ordinary one, so requests end at max_new_tokens.
  absl::Status Execute(const StepPlan& plan, StepOutcome* outcome) override {
    if (config_.engine_step_us > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(config_.engine_step_us));
    }
    for (const ScheduledSequence& s : plan.sequences) {
      SequenceOutcome& o = outcome->sequences.emplace_back();
      o.id = s.id;
      if (s.sample) RecordSampledToken(1, false, o);
    }
    return absl::OkStatus();
  }

  void OnExecuted(const StepPlan&, const absl::Status&, StepOutcome&) override {
    complete_start_ = std::chrono::steady_clock::now();
  }

  void OnCompleted(const StepOutcome&) override {
    report_.complete_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      std::chrono::steady_clock::now() - complete_start_)
                                      .count());
  }

  Scheduler& scheduler_;
  const BurstConfig& config_;
  BurstReport& report_;
  EngineLoop loop_;
  absl::Time now_ = absl::Now();
  uint64_t alice_seen_ = 0;
  // The step in progress: what the hooks measure from.
  uint64_t alice_accepted_ = 0;
  BystanderProbe* bob_ = nullptr;
  std::pair<int64_t, int64_t> plan_switches_;
  int64_t plan_cpu_ns_ = 0;
  std::chrono::steady_clock::time_point plan_start_;
  std::chrono::steady_clock::time_point complete_start_;
  std::vector<RequestResult> results_;
};

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
  BurstEngine engine(&scheduler, config, &report);
  uint64_t bob_accepted = 0;
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
    if (!engine.Step(alice.accepted(), bob)) break;
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
