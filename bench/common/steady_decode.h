// File: bench/common/steady_decode.h
//
// A scheduler in steady decode: `running` sequences decoding (long outputs,
// so none finishes during a run) and `waiting` more queued behind the
// sequence cap. Step() is one engine iteration with a trivial engine. Shared
// by the core's step benchmark and the per-policy benchmarks.

#ifndef HEARTH_BENCH_COMMON_STEADY_DECODE_H_
#define HEARTH_BENCH_COMMON_STEADY_DECODE_H_

#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <memory>

#include "absl/time/clock.h"
#include "hearth/scheduler/scheduler.h"

namespace hearth::bench {

// Benchmarks have no error path: report and stop.
[[noreturn]] inline void Die(const absl::Status& s) {
  std::fprintf(stderr, "benchmark setup failed: %s\n", s.ToString().c_str());
  std::abort();
}

class SteadyDecode {
 public:
  // `max_steps` bounds how many Step() calls the KV cache is sized for.
  // Warm-up runs until every step is all decodes, or, when `fixed_warmup` >
  // 0, exactly that many steps (for policies that keep preempting and
  // readmitting, whose steps never become all decodes).
  // `draft_tokens` > 0: speculative decoding (SchedulerOptions::
  // max_draft_tokens), the stand-in engine accepting all of a decode's
  // drafts and none in turn, so that steps both grow tables by several
  // tokens and give blocks of rejected drafts back.
  // `overlap`: overlapped planning (SchedulerOptions::overlap_planning),
  // each Step() planning the next step before completing the one before.
  SteadyDecode(int32_t running, int32_t waiting, PolicyFactory policy,
               int32_t max_steps = 40000, int32_t users = 4, int32_t fixed_warmup = 0,
               int32_t draft_tokens = 0, bool overlap = false)
      : now_(absl::UnixEpoch()), overlap_(overlap) {
    SchedulerOptions o;
    o.overlap_planning = overlap;
    o.max_running = running;
    o.max_batched_tokens = (2 + draft_tokens) * running;
    o.max_draft_tokens = draft_tokens;
    o.kv.block_size = 16;
    const int32_t positions = (max_steps + 64) * (1 + draft_tokens);
    o.kv.num_device_blocks = running * (2 + positions / 16) + 64;
    o.models[0].context_length = 1 << 20;
    o.max_pending_requests = running + waiting + 1;
    o.users.clear();
    for (int32_t u = 0; u < users; ++u) o.users.push_back({"user" + std::to_string(u), 1.0 + u});
    o.work_classes = {{"voice", 4}, {"chat", 3}, {"agent", 2}, {"embedding", 1}, {"maintenance", 0}};
    // Interactive classes carry TTFT targets, as a household's do, so that
    // deadline-aware policies do their real work (the rest is background).
    o.work_classes[0].ttft_slo = absl::Milliseconds(500);
    o.work_classes[1].ttft_slo = absl::Seconds(2);
    o.work_classes[2].ttft_slo = absl::Seconds(5);
    o.policy_factory = std::move(policy);
    auto s = Scheduler::Create(o);
    if (!s.ok()) Die(s.status());
    scheduler_ = std::move(*s);
    for (int32_t i = 0; i < running + waiting; ++i) {
      RequestSpec spec;
      spec.user = UserId(static_cast<uint32_t>(i % users));
      spec.work_class = WorkClassId(static_cast<uint32_t>(i % 5));
      spec.prompt_tokens = 16;
      spec.max_new_tokens = positions;
      auto id = scheduler_->Submit(spec);
      if (!id.ok()) Die(id.status());
    }
    for (StepOutcome& outcome : outcomes_) outcome.sequences.reserve(static_cast<size_t>(running));
    // Plan takes in max_intake_per_plan submissions at a time: the measured
    // steps start once every request has been taken in.
    if (fixed_warmup > 0) {
      for (int i = 0; i < fixed_warmup || scheduler_->stats().queued > 0; ++i) Step();
      return;
    }
    // Admit and prefill everything that fits, until every step is all decodes.
    for (int i = 0; i < 10000 && (last_decodes_ < running || scheduler_->stats().queued > 0); ++i) {
      Step();
    }
    if (last_decodes_ < running) Die(absl::InternalError("never reached steady decode"));
  }

  // One iteration. Adds the time spent inside Plan() and Complete() (not the
  // trivial engine's) to `scheduler_time` when given.
  void Step(absl::Duration* scheduler_time = nullptr) {
    const absl::Time t0 = scheduler_time ? absl::Now() : absl::InfinitePast();
    auto plan = scheduler_->Plan(now_);
    if (!plan.ok()) Die(plan.status());
    const absl::Time t1 = scheduler_time ? absl::Now() : absl::InfinitePast();
    const StepPlan& p = **plan;
    // With overlap, the outcome completed below is the previous step's.
    StepOutcome& outcome_ = outcomes_[next_];
    outcome_.step = p.step;
    outcome_.sequences.resize(p.sequences.size());
    outcome_.draft_ids.clear();
    for (size_t i = 0; i < p.sequences.size(); ++i) {
      SequenceOutcome& o = outcome_.sequences[i];
      o.id = p.sequences[i].id;
      o.produced_token = p.sequences[i].sample;
      o.token = 1;
      o.accepted_drafts = (p.step + i) % 2 == 0 ? p.sequences[i].draft_tokens : 0;
      outcome_.draft_ids.insert(outcome_.draft_ids.end(), o.accepted_drafts, 1);
    }
    last_batch_ = static_cast<int32_t>(p.sequences.size());
    last_decodes_ = p.num_decodes;
    preempted_ += p.preempted.size();
    const absl::Time t2 = scheduler_time ? absl::Now() : absl::InfinitePast();
    if (overlap_) {
      next_ ^= 1;
      if (in_flight_) {
        absl::Status s = scheduler_->Complete(outcomes_[next_]);
        if (!s.ok()) Die(s);
      }
      in_flight_ = true;
    } else {
      absl::Status s = scheduler_->Complete(outcome_);
      if (!s.ok()) Die(s);
    }
    if (scheduler_time) *scheduler_time += (t1 - t0) + (absl::Now() - t2);
    now_ += absl::Milliseconds(20);
  }

  int32_t last_batch() const { return last_batch_; }
  // Preemptions listed in plans so far (warm-up included).
  uint64_t preempted() const { return preempted_; }
  Scheduler& scheduler() { return *scheduler_; }

 private:
  std::unique_ptr<Scheduler> scheduler_;
  StepOutcome outcomes_[2];
  int next_ = 0;
  absl::Time now_;
  const bool overlap_;
  bool in_flight_ = false;
  int32_t last_batch_ = 0;
  int32_t last_decodes_ = 0;
  uint64_t preempted_ = 0;
};

}  // namespace hearth::bench

#endif  // HEARTH_BENCH_COMMON_STEADY_DECODE_H_
