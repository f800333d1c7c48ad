#include "bench/soak/soak_run.h"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "bench/common/process_memory.h"
#include "bench/soak/result_ledger.h"
#include "bench/common/seeded_random.h"
#include "bench/soak/soak_workload.h"
#include "hearth/exec/engine_loop.h"
#include "hearth/exec/step_outcome_fill.h"
#include "hearth/scheduler/scheduler.h"

namespace hearth::bench {

namespace {

// Simulated engine time of a step: a fixed cost plus a cost per token, so
// deadlines, queue timeouts and workflow retention see plausible times.
absl::Duration StepDuration(const StepPlan& plan) {
  return absl::Milliseconds(1) + absl::Microseconds(4) * plan.num_batched_tokens;
}

// Steps the drain may take after intake stops before the rest counts as lost.
constexpr uint64_t kMaxDrainSteps = 2'000'000;

// The soak's engine is its own executor (outcomes built from the plan, with
// injected failures and stops) under the one EngineLoop; between Execute and
// Complete it probes Complete with corrupt outcomes, which must be refused.
class SoakLoop : private StepExecutor, private EngineHooks {
 public:
  SoakLoop(const SoakConfig& config, std::unique_ptr<Scheduler> scheduler, SoakReport* report)
      : config_(config),
        scheduler_(std::move(scheduler)),
        report_(*report),
        workload_(config.seed, config.invalid_spec_rate),
        engine_random_(config.seed ^ 0x5eed'e1'91'e0ull),
        host_random_(config.seed ^ 0x0c0a'5e1ull),
        corruptor_(SoakWorkload::kVocab),
        // Deliberately invalid specs take no id, so ids stay near `requests`.
        ledger_(static_cast<uint64_t>(config.requests)),
        now_(absl::UnixEpoch() + absl::Hours(24 * 365)),
        loop_(*scheduler_, *this) {}

  void Run() {
    CheckCompleteWithoutPlan();
    uint64_t drain_steps = 0;
    while (true) {
      const bool intake_open = ledger_.accepted() < static_cast<uint64_t>(config_.requests);
      if (!intake_open && ledger_.live() == 0) break;
      if (!intake_open && ++drain_steps > kMaxDrainSteps) break;
      if (intake_open) Intake();
      MaybeCancel();
      if (!Step()) {
        Finish();
        return;
      }
    }
    report_.quiescent = ledger_.live() == 0;
    // One more step hands the engine the last releases and frees what the
    // last cancels held.
    Step();
    Finish();
  }

 private:
  void Intake() {
    // Keep the pending limit full; now and then try one past it, so the
    // ResourceExhausted path is exercised without dominating the counts.
    const size_t target = static_cast<size_t>(config_.max_pending) +
                          (host_random_.Bernoulli(config_.overfill_per_step) ? 1 : 0);
    while (ledger_.live() < target &&
           ledger_.accepted() < static_cast<uint64_t>(config_.requests)) {
      bool invalid = false;
      RequestSpec spec = workload_.Next(now_, &invalid);
      if (invalid) ++report_.invalid_specs_sent;
      absl::StatusOr<RequestId> id = scheduler_->Submit(spec);
      if (!id.ok()) {
        ++report_.submit_rejections[std::string(absl::StatusCodeToString(id.status().code()))];
        if (absl::IsResourceExhausted(id.status())) break;
        continue;
      }
      if (invalid) ++report_.invalid_specs_accepted;
      ledger_.Accept(*id);
      workload_.Accepted(spec, *id);
    }
  }

  void MaybeCancel() {
    if (ledger_.live() == 0 || !host_random_.Bernoulli(config_.cancel_per_step)) return;
    const absl::Status s = scheduler_->Cancel(ledger_.RandomLive(host_random_));
    if (s.ok()) {
      ++report_.cancels_ok;
    } else if (absl::IsNotFound(s)) {
      ++report_.cancels_not_found;
    } else {
      ++report_.cancels_other;
    }
  }

  // One EngineLoop step. False when the scheduler refused to plan or
  // refused a correct outcome, which ends the run (it is reported as a
  // contract violation).
  bool Step() {
    const absl::Status s = loop_.Step(now_, *this);
    if (!loop_.last_step().planned) {
      Violation(absl::StrCat("Plan failed: ", s.ToString()));
      return false;
    }
    if (!s.ok()) {
      Violation(absl::StrCat("Complete rejected a correct outcome: ", s.ToString()));
      return false;
    }
    AfterComplete();
    return true;
  }

  absl::Status Execute(const StepPlan& plan, StepOutcome* outcome) override {
    ++report_.steps;
    BuildOutcome(plan, *outcome);
    return absl::OkStatus();
  }

  void OnExecuted(const StepPlan& plan, const absl::Status&, StepOutcome& outcome) override {
    step_end_ = outcome.completed_at;
    // A corrupt outcome Complete accepted completed the plan: the loop's
    // own Complete is then refused, and the run ends on that violation.
    if (engine_random_.Bernoulli(config_.corrupt_per_step)) SendCorrupt(plan, outcome);
  }

  void BuildOutcome(const StepPlan& plan, StepOutcome& good) {
    StartStepOutcome(plan, &good);
    good.completed_at = plan.now + StepDuration(plan);
    for (const ScheduledSequence& s : plan.sequences) {
      SequenceOutcome& o = good.sequences.emplace_back();
      o.id = s.id;
      if (engine_random_.Bernoulli(config_.failure_per_sequence)) {
        o.error = "injected engine failure";
        ++report_.injected_failures;
        continue;
      }
      if (!s.sample) continue;
      const uint64_t position = static_cast<uint64_t>(s.start_position) + s.num_tokens;
      const auto token =
          static_cast<TokenId>(MixBits(s.id.value(), position) % SoakWorkload::kVocab);
      RecordSampledToken(token, engine_random_.Bernoulli(config_.stop_per_token), o);
    }
  }

  // Hands Complete a corrupt outcome. True when it was rejected as it must be
  // (the plan is still outstanding); false when Complete accepted it.
  bool SendCorrupt(const StepPlan& plan, const StepOutcome& good) {
    const Corruption kind = corruptor_.Corrupt(plan, good, engine_random_, &bad_);
    ++report_.corrupt_sent;
    ++report_.corrupt_by_kind[static_cast<size_t>(kind)];
    const absl::Status s = scheduler_->Complete(bad_);
    if (s.ok()) {
      ++report_.corrupt_accepted;
      Violation(absl::StrCat("Complete accepted a corrupt outcome (", std::string(CorruptionName(kind)), ")"));
      return false;
    }
    if (!absl::IsInvalidArgument(s)) {
      ++report_.corrupt_wrong_code;
      Violation(absl::StrCat("corrupt outcome (", std::string(CorruptionName(kind)), ") got ", s.ToString()));
    } else {
      ++report_.corrupt_rejected;
    }
    // The contract: nothing was applied and the plan stays outstanding.
    if (!scheduler_->plan_outstanding()) {
      Violation("no plan outstanding after a rejected outcome");
    }
    if (engine_random_.Bernoulli(0.1)) {
      absl::StatusOr<const StepPlan*> again = scheduler_->Plan(now_);
      if (again.ok() || !absl::IsFailedPrecondition(again.status())) {
        Violation("Plan with an outstanding plan was not FailedPrecondition");
      }
    }
    return true;
  }

  void AfterComplete() {
    now_ = step_end_;
    results_.clear();
    scheduler_->DrainResults(&results_);
    for (const RequestResult& r : results_) ledger_.End(r);
    while (ledger_.ended() >= next_rss_) {
      report_.rss.push_back({next_rss_, CurrentRssKib()});
      next_rss_ += static_cast<uint64_t>(config_.rss_every_ended);
    }
    if (config_.invariant_every_steps > 0 &&
        report_.steps % static_cast<uint64_t>(config_.invariant_every_steps) == 0) {
      CheckInvariants();
    }
  }

  void CheckInvariants() {
    ++report_.invariant_checks;
    if (absl::Status s = scheduler_->CheckInvariants(); !s.ok()) {
      if (report_.invariant_failures++ == 0) {
        report_.first_invariant_failure =
            absl::StrCat("step ", report_.steps, ": ", s.ToString());
      }
    }
  }

  void CheckCompleteWithoutPlan() {
    const absl::Status s = scheduler_->Complete(StepOutcome{});
    if (!absl::IsFailedPrecondition(s)) Violation("Complete without a plan was not FailedPrecondition");
  }

  void Violation(std::string what) {
    if (report_.contract_violations++ == 0) report_.first_contract_violation = std::move(what);
  }

  void Finish() {
    CheckInvariants();
    const SchedulerStats stats = scheduler_->stats();
    report_.leaked_device_blocks =
        stats.device_blocks - stats.free_device_blocks - stats.cached_device_blocks;
    report_.leaked_host_blocks = stats.host_blocks - stats.free_host_blocks;
    report_.preemptions = stats.preemptions;
    report_.prefix_hit_tokens = stats.prefix_hit_tokens;
    report_.accepted = ledger_.accepted();
    report_.ended = ledger_.ended();
    report_.lost = ledger_.live();
    report_.duplicated = ledger_.duplicated();
    report_.unknown = ledger_.unknown();
    report_.reissued_ids = ledger_.reissued();
    report_.finished = ledger_.phase_count(RequestPhase::kFinished);
    report_.cancelled = ledger_.phase_count(RequestPhase::kCancelled);
    report_.timed_out = ledger_.phase_count(RequestPhase::kTimedOut);
    report_.failed = ledger_.phase_count(RequestPhase::kFailed);
    report_.rejected = ledger_.phase_count(RequestPhase::kRejected);
    if (report_.rss.empty() || report_.rss.back().ended != ledger_.ended()) {
      report_.rss.push_back({ledger_.ended(), CurrentRssKib()});
    }
    report_.peak_rss_kib = PeakRssKib();
  }

  const SoakConfig& config_;
  std::unique_ptr<Scheduler> scheduler_;
  SoakReport& report_;
  SoakWorkload workload_;
  SeededRandom engine_random_;
  SeededRandom host_random_;
  OutcomeCorruptor corruptor_;
  ResultLedger ledger_;
  absl::Time now_;
  EngineLoop loop_;
  absl::Time step_end_;
  StepOutcome bad_;
  std::vector<RequestResult> results_;
  uint64_t next_rss_ = 0;
};

}  // namespace

SoakReport RunSoak(const SoakConfig& config) {
  SoakReport report;
  report.config = config;
  absl::StatusOr<SchedulerOptions> options = MakeSoakSchedulerOptions(config);
  if (!options.ok()) {
    report.setup = options.status();
    return report;
  }
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(*std::move(options));
  if (!scheduler.ok()) {
    report.setup = scheduler.status();
    return report;
  }
  const auto start = std::chrono::steady_clock::now();
  SoakLoop loop(config, *std::move(scheduler), &report);
  loop.Run();
  report.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

bool SoakPassed(const SoakReport& r) {
  return r.setup.ok() && r.quiescent && r.lost == 0 && r.duplicated == 0 && r.unknown == 0 &&
         r.reissued_ids == 0 && r.leaked_device_blocks == 0 && r.leaked_host_blocks == 0 &&
         r.invariant_failures == 0 && r.corrupt_accepted == 0 && r.corrupt_wrong_code == 0 &&
         r.contract_violations == 0 && r.invalid_specs_accepted == 0 && r.cancels_other == 0;
}

}  // namespace hearth::bench
