// A hand-written two-request event sequence shared by the metrics tests. The
// expected figures in the tests are computed by hand from this script:
//
//   r1 alice/voice prompt 4, arrives 0.0     r2 bob/chat prompt 8, arrives 1.0
//   step 1 [2.0, 2.5]  admit r1 @2.0; r1 prefill 0+4 -> token 1
//   step 2 [2.5, 3.0]  admit r2 @2.5; r1 decode 4 -> token 2; r2 prefill 0+8
//                      -> token 1
//   step 3 [3.0, 3.2]  r1 decode 5 -> token 3, ends (stop); r2 decode 8 ->
//                      token 2
//   step 4 [3.2, 3.2]  r2 preempted (recompute) @3.2, nothing runs
//   step 5 [4.0, 4.5]  r2 readmitted @4.0, recomputes 0+9, no token
//   step 6 [4.5, 4.8]  r2 decode 9 -> token 3, ends (stop)

#ifndef HEARTH_TESTS_METRICS_SCENARIO_H_
#define HEARTH_TESTS_METRICS_SCENARIO_H_

#include <map>
#include <vector>

#include "absl/time/time.h"
#include "hearth/common/clock.h"
#include "hearth/metrics/metrics_sink.h"

namespace hearth::testing_metrics {

inline absl::Time At(double s) { return absl::UnixEpoch() + absl::Seconds(s); }

struct Seq {
  uint64_t id;
  int32_t start;
  int32_t n;
  bool produced;
};

class Driver {
 public:
  Driver(ManualClock* clock, MetricsSink* sink) : clock_(clock), sink_(sink) {}
  // Report step ends through StepOutcome::completed_at instead of the clock.
  void set_stamp_outcome(bool on) { stamp_outcome_ = on; }

  void Event(RequestEventKind kind, double t, uint64_t id, uint32_t user,
             uint32_t cls, int32_t prompt,
             RequestPhase phase = RequestPhase::kFinished) {
    if (kind == RequestEventKind::kArrive) prompt_[id] = prompt;
    RequestEvent e;
    e.kind = kind;
    e.time = At(t);
    e.id = RequestId(id);
    e.user = UserId(user);
    e.work_class = WorkClassId(cls);
    e.prompt_tokens = prompt;
    e.phase = phase;
    sink_->OnRequestEvent(e);
  }

  void Step(double start, double end, const std::vector<Seq>& seqs) {
    StepPlan plan;
    plan.step = ++step_;
    plan.now = At(start);
    StepOutcome outcome;
    outcome.step = plan.step;
    for (const Seq& s : seqs) {
      ScheduledSequence& q = plan.sequences.emplace_back();
      q.id = RequestId(s.id);
      q.start_position = s.start;
      q.num_tokens = s.n;
      q.sample = s.produced;
      // As the scheduler marks decodes: one position, right after the
      // tokens generated so far.
      int32_t& produced = produced_[s.id];
      q.decode = produced > 0 && s.n == 1 && s.start == prompt_[s.id] + produced - 1;
      if (s.produced) ++produced;
      plan.num_batched_tokens += s.n;
      SequenceOutcome& o = outcome.sequences.emplace_back();
      o.id = q.id;
      o.produced_token = s.produced;
    }
    if (stamp_outcome_) {
      outcome.completed_at = At(end);
    } else {
      clock_->Set(At(end));
    }
    sink_->OnStep(plan, outcome);
  }

 private:
  ManualClock* clock_;
  MetricsSink* sink_;
  uint64_t step_ = 0;
  bool stamp_outcome_ = false;
  // Per request id: prompt length (from kArrive) and tokens produced.
  std::map<uint64_t, int32_t> prompt_;
  std::map<uint64_t, int32_t> produced_;
};

// Plays the script above. Terminal events are sent before the OnStep of the
// step that carries the last token, as Complete() does.
inline void PlayScenario(Driver& d) {
  using K = RequestEventKind;
  d.Event(K::kArrive, 0.0, 1, 0, 0, 4);
  d.Event(K::kArrive, 1.0, 2, 1, 1, 8);
  d.Event(K::kAdmit, 2.0, 1, 0, 0, 4);
  d.Step(2.0, 2.5, {{1, 0, 4, true}});
  d.Event(K::kAdmit, 2.5, 2, 1, 1, 8);
  d.Step(2.5, 3.0, {{1, 4, 1, true}, {2, 0, 8, true}});
  d.Event(K::kEnd, 3.0, 1, 0, 0, 4);
  d.Step(3.0, 3.2, {{1, 5, 1, true}, {2, 8, 1, true}});
  d.Event(K::kPreempt, 3.2, 2, 1, 1, 8);
  d.Step(3.2, 3.2, {});
  d.Event(K::kAdmit, 4.0, 2, 1, 1, 8);
  d.Step(4.0, 4.5, {{2, 0, 9, false}});
  d.Event(K::kEnd, 4.5, 2, 1, 1, 8);
  d.Step(4.5, 4.8, {{2, 9, 1, true}});
}

}  // namespace hearth::testing_metrics

#endif  // HEARTH_TESTS_METRICS_SCENARIO_H_
