// Overlapped planning in the contract (SchedulerOptions::overlap_planning):
// step N+1 planned while step N runs; decodes whose input is step N's token
// (input_pending); outcomes completed in step order; entries voided by what
// step N's outcome or the next plan decided, and their outcomes ignored.

#include <algorithm>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/metrics/fanout_sink.h"
#include "hearth/metrics/metrics_collector.h"
#include "hearth/scheduler/scheduler.h"
#include "scheduler/scheduler_peer.h"

namespace hearth {
namespace {

SchedulerOptions Options(bool overlap) {
  SchedulerOptions o;
  o.kv.block_size = 4;
  o.kv.num_device_blocks = 64;
  o.models[0].vocab_size = 100;
  o.overlap_planning = overlap;
  return o;
}

std::unique_ptr<Scheduler> Make(const SchedulerOptions& o) {
  auto s = Scheduler::Create(o);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return *std::move(s);
}

RequestId Submit(Scheduler& s, int32_t prompt, int32_t max_new) {
  RequestSpec spec;
  spec.prompt_tokens = prompt;
  spec.max_new_tokens = max_new;
  spec.prompt_token_ids.assign(static_cast<size_t>(prompt), 7);
  return *s.Submit(spec);
}

absl::Time At(int t) { return absl::UnixEpoch() + absl::Milliseconds(t); }

// Every sampling sequence produces `token`.
StepOutcome Run(const StepPlan& plan, TokenId token = 1) {
  StepOutcome out;
  out.step = plan.step;
  for (const ScheduledSequence& s : plan.sequences) {
    SequenceOutcome& o = out.sequences.emplace_back();
    o.id = s.id;
    o.produced_token = s.sample;
    o.token = token;
  }
  return out;
}

const ScheduledSequence* Entry(const StepPlan& plan, RequestId id) {
  for (const ScheduledSequence& s : plan.sequences) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

bool Voided(const StepPlan& plan, RequestId id) {
  return IsVoided(plan, id);
}

RequestResult ResultOf(Scheduler& s, RequestId id) {
  std::vector<RequestResult> results;
  s.DrainResults(&results);
  for (RequestResult& r : results) {
    if (r.id == id) return r;
  }
  FAIL("no result for " << id.ToString());
  return {};
}

TEST_CASE("Without overlap_planning a second Plan is refused and says what allows it",
          "[scheduler][overlap]") {
  auto s = Make(Options(false));
  Submit(*s, 6, 4);
  REQUIRE(s->Plan(At(1)).ok());
  absl::StatusOr<const StepPlan*> again = s->Plan(At(2));
  CHECK(again.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(again.status().message().find("overlap_planning") != std::string::npos);
  CHECK(s->plans_outstanding() == 1);
}

TEST_CASE("With overlap_planning two plans are outstanding, never three, completed in order",
          "[scheduler][overlap]") {
  auto s = Make(Options(true));
  const RequestId id = Submit(*s, 6, 10);
  const StepPlan* p1 = *s->Plan(At(1));
  const StepPlan* p2 = *s->Plan(At(2));
  CHECK(p1 != p2);
  CHECK(p2->step == p1->step + 1);
  CHECK(s->plans_outstanding() == 2);
  CHECK(s->CheckInvariants().ok());
  CHECK(s->Plan(At(3)).status().code() == absl::StatusCode::kFailedPrecondition);

  // The prefill samples the first token in step 1; step 2 decodes it without
  // knowing it.
  REQUIRE(p1->sequences.size() == 1);
  CHECK(p1->sequences[0].sample);
  const ScheduledSequence* d = Entry(*p2, id);
  REQUIRE(d != nullptr);
  CHECK(d->decode);
  CHECK(d->input_pending);
  CHECK(d->token_ids.empty());
  CHECK(d->start_position == 6);
  CHECK(d->num_tokens == 1);
  CHECK(p2->num_decodes == 1);

  // Step 2's outcome first is refused whole; step 1's is taken.
  absl::Status early = s->Complete(Run(*p2));
  CHECK(early.code() == absl::StatusCode::kInvalidArgument);
  CHECK(s->plans_outstanding() == 2);
  REQUIRE(s->Complete(Run(*p1, 11)).ok());
  CHECK(s->plans_outstanding() == 1);
  CHECK(s->CheckInvariants().ok());
  // Plan 3 while step 2 runs: the decode after it, pending again.
  const StepPlan* p3 = *s->Plan(At(4));
  const ScheduledSequence* d3 = Entry(*p3, id);
  REQUIRE(d3 != nullptr);
  CHECK(d3->input_pending);
  CHECK(d3->start_position == 7);
  REQUIRE(s->Complete(Run(*p2, 12)).ok());
  REQUIRE(s->Complete(Run(*p3, 13)).ok());
  absl::StatusOr<RequestView> v = s->GetRequest(id);
  REQUIRE(v.ok());
  CHECK(v->output_tokens == 3);
  CHECK(v->computed_tokens == 8);
  CHECK(s->CheckInvariants().ok());
}

TEST_CASE("A request that step N's token ends by its limit is not planned after it",
          "[scheduler][overlap]") {
  auto s = Make(Options(true));
  const RequestId id = Submit(*s, 6, 2);
  const StepPlan* p1 = *s->Plan(At(1));
  const StepPlan* p2 = *s->Plan(At(2));
  REQUIRE(Entry(*p2, id) != nullptr);  // token 2 of 2 is decoded in step 2
  REQUIRE(s->Complete(Run(*p1)).ok());
  const StepPlan* p3 = *s->Plan(At(3));
  CHECK(Entry(*p3, id) == nullptr);  // step 2's token is its last
  REQUIRE(s->Complete(Run(*p2)).ok());
  REQUIRE(s->Complete(Run(*p3)).ok());
  const RequestResult r = ResultOf(*s, id);
  CHECK(r.phase == RequestPhase::kFinished);
  CHECK(r.finish_reason == FinishReason::kLength);
  CHECK(r.output_tokens == 2);
}

TEST_CASE("A stop in step N voids the entry planned after it, whose outcome is not read",
          "[scheduler][overlap]") {
  auto s = Make(Options(true));
  const RequestId id = Submit(*s, 6, 10);
  const RequestId other = Submit(*s, 5, 10);
  const StepPlan* p1 = *s->Plan(At(1));
  const StepPlan* p2 = *s->Plan(At(2));
  REQUIRE(Entry(*p2, id) != nullptr);
  StepOutcome o1 = Run(*p1);
  for (SequenceOutcome& o : o1.sequences) {
    if (o.id == id) o.finish = FinishReason::kStopToken;
  }
  REQUIRE(s->Complete(o1).ok());
  CHECK(Voided(*p2, id));
  CHECK_FALSE(Voided(*p2, other));
  CHECK(s->CheckInvariants().ok());
  const StepPlan* p3 = *s->Plan(At(3));
  CHECK(Entry(*p3, id) == nullptr);
  // The engine's garbage for the voided entry (an id out of range, a
  // finish without a token) is not read; its id is.
  StepOutcome o2 = Run(*p2);
  for (SequenceOutcome& o : o2.sequences) {
    if (o.id != id) continue;
    o.produced_token = false;
    o.token = -5;
    o.finish = FinishReason::kStopString;
  }
  StepOutcome wrong_id = o2;
  for (SequenceOutcome& o : wrong_id.sequences) {
    if (o.id == id) o.id = RequestId(999);
  }
  CHECK(s->Complete(wrong_id).code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(s->Complete(o2).ok());
  const RequestResult r = ResultOf(*s, id);
  CHECK(r.phase == RequestPhase::kFinished);
  CHECK(r.finish_reason == FinishReason::kStopToken);
  CHECK(r.output_tokens == 1);
  REQUIRE(s->Complete(Run(*p3)).ok());
  absl::StatusOr<RequestView> v = s->GetRequest(other);
  REQUIRE(v.ok());
  CHECK(v->output_tokens == 3);
  CHECK(s->CheckInvariants().ok());
}

TEST_CASE("A cancel taken by the next plan voids the step in flight",
          "[scheduler][overlap]") {
  auto s = Make(Options(true));
  const RequestId id = Submit(*s, 6, 10);
  const StepPlan* p1 = *s->Plan(At(1));
  REQUIRE(s->Complete(Run(*p1)).ok());
  const StepPlan* p2 = *s->Plan(At(2));  // a decode
  REQUIRE(Entry(*p2, id) != nullptr);
  REQUIRE(s->Cancel(id, "user left").ok());
  const StepPlan* p3 = *s->Plan(At(3));
  CHECK(Entry(*p3, id) == nullptr);
  REQUIRE(p3->released.size() == 1);
  CHECK(p3->released[0].id == id);
  CHECK(Voided(*p2, id));
  CHECK(internal::SchedulerPeer::allocator(*s).num_owned() == 0);
  CHECK(s->CheckInvariants().ok());
  REQUIRE(s->Complete(Run(*p2)).ok());
  REQUIRE(s->Complete(Run(*p3)).ok());
  const RequestResult r = ResultOf(*s, id);
  CHECK(r.phase == RequestPhase::kCancelled);
  CHECK(r.output_tokens == 1);  // step 2's token was dropped with the request
}

TEST_CASE("A slot freed while the engine may read it is not reused until that step completes",
          "[scheduler][overlap]") {
  SchedulerOptions o = Options(true);
  o.max_prefill_chunk_tokens = 4;
  auto s = Make(o);
  const RequestId a = Submit(*s, 12, 4);
  const StepPlan* p1 = *s->Plan(At(1));
  const StepPlan* p2 = *s->Plan(At(2));
  REQUIRE(Entry(*p2, a) != nullptr);
  const absl::Span<const TokenId> a_tokens = Entry(*p2, a)->token_ids;
  REQUIRE(a_tokens.size() == 4);
  // A fails in step 1, while step 2 (reading its prompt) may be running.
  StepOutcome o1 = Run(*p1);
  o1.sequences[0].error = "engine failure";
  REQUIRE(s->Complete(o1).ok());
  CHECK(Voided(*p2, a));
  // B arrives before step 2 completes and must not take A's token buffer.
  RequestSpec b;
  b.prompt_tokens = 12;
  b.max_new_tokens = 4;
  b.prompt_token_ids.assign(12, 9);
  REQUIRE(s->Submit(b).ok());
  const StepPlan* p3 = *s->Plan(At(3));
  CHECK(p3->sequences.size() == 1);
  CHECK(std::all_of(a_tokens.begin(), a_tokens.end(), [](TokenId t) { return t == 7; }));
  REQUIRE(s->Complete(Run(*p2)).ok());
  REQUIRE(s->Complete(Run(*p3)).ok());
  CHECK(s->CheckInvariants().ok());
}

TEST_CASE("Out of KV in step N voids the entry after it and drops the sequence once",
          "[scheduler][overlap]") {
  auto s = Make(Options(true));
  const RequestId id = Submit(*s, 6, 4);
  const StepPlan* p1 = *s->Plan(At(1));
  const StepPlan* p2 = *s->Plan(At(2));
  StepOutcome o1 = Run(*p1);
  o1.sequences[0].out_of_kv = true;
  o1.sequences[0].produced_token = false;
  REQUIRE(s->Complete(o1).ok());
  CHECK(Voided(*p2, id));
  const StepPlan* p3 = *s->Plan(At(3));
  // The drop answers step 1's outcome, in the plan after the one in flight.
  REQUIRE(p3->preempted.size() == 1);
  CHECK(p3->preempted[0].id == id);
  CHECK(p3->preempted[0].cause == PreemptionCause::kEngineOutOfKv);
  CHECK(Entry(*p3, id) == nullptr);
  REQUIRE(s->Complete(Run(*p2)).ok());
  // It comes back from scratch and finishes with all its tokens.
  const StepPlan* in_flight = p3;
  for (int t = 4; t < 40 && s->GetRequest(id).ok(); ++t) {
    const StepPlan* next = *s->Plan(At(t));
    REQUIRE(s->Complete(Run(*in_flight)).ok());
    CHECK(s->CheckInvariants().ok());
    in_flight = next;
  }
  REQUIRE(s->Complete(Run(*in_flight)).ok());
  const RequestResult r = ResultOf(*s, id);
  CHECK(r.phase == RequestPhase::kFinished);
  CHECK(r.output_tokens == 4);
  CHECK(s->stats().engine_out_of_kv_preemptions == 1);
  CHECK(internal::SchedulerPeer::allocator(*s).num_owned() == 0);
}

TEST_CASE("Host blocks a plan built ahead copies from stay in use until that plan completes",
          "[scheduler][overlap]") {
  // A cache that holds two of the four requests' outputs: decode growth
  // swaps some out and back in, with every plan built ahead.
  SchedulerOptions o = Options(true);
  o.kv.num_device_blocks = 12;
  o.kv.num_host_blocks = 32;
  o.kv.growth_headroom_tokens = 0;
  o.preemption_mode = PreemptionMode::kSwap;
  auto s = Make(o);
  for (int i = 0; i < 4; ++i) Submit(*s, 8, 12);
  int swap_ins_ahead = 0;
  const StepPlan* in_flight = *s->Plan(At(1));
  for (int t = 2; t < 400 && (s->plans_outstanding() > 0); ++t) {
    absl::StatusOr<const StepPlan*> next = s->Plan(At(t));
    REQUIRE(next.ok());
    REQUIRE(s->Complete(Run(*in_flight)).ok());
    REQUIRE(s->CheckInvariants().ok());
    // The step before has run its copies; this one's have not.
    for (const BlockCopy& c : (*next)->swap_in) {
      CHECK(internal::SchedulerPeer::allocator(*s).host_in_use(c.source));
      ++swap_ins_ahead;
    }
    for (const BlockCopy& c : (*next)->swap_out) CHECK(internal::SchedulerPeer::allocator(*s).host_in_use(c.target));
    in_flight = *next;
    if (s->stats().running + s->stats().waiting + s->stats().swapped == 0) break;
  }
  REQUIRE(s->Complete(Run(*in_flight)).ok());
  CHECK(swap_ins_ahead > 0);
  CHECK(internal::SchedulerPeer::allocator(*s).num_free_host() == 32);
}

// Records every request event's kind and time.
class EventLog : public MetricsSink {
 public:
  void OnRequestEvent(const RequestEvent& e) override { events.push_back(e); }
  void OnStep(const StepPlan&, const StepOutcome&) override {}
  std::vector<RequestEvent> events;
};

TEST_CASE("A step ends no earlier than the step before it, and the next plan follows",
          "[scheduler][overlap]") {
  // Step N+1 is planned at 1 ms while step N runs; N completes at 10 ms.
  // N+1 without a completed_at (its now, 1 ms), or with one before 10 ms,
  // ends at 10 ms; a Plan at 5 ms then plans at 10 ms.
  for (const bool explicit_end : {false, true}) {
    INFO((explicit_end ? "completed_at 4 ms" : "no completed_at"));
    SchedulerOptions o = Options(true);
    EventLog log;
    MetricsOptions mo = MetricsOptionsFor(o);
    auto collector = *MetricsCollector::Create(mo);
    FanoutSink fanout({&log, collector.get()});
    o.metrics_sink = &fanout;
    auto s = Make(o);
    const RequestId a = Submit(*s, 4, 6);
    const StepPlan& n = **s->Plan(At(0));
    StepOutcome ran = Run(n);
    ran.completed_at = At(10);
    const RequestId b = Submit(*s, 4, 6);
    const StepPlan& next = **s->Plan(At(1));
    REQUIRE(s->Complete(ran).ok());
    StepOutcome ran_next = Run(next);
    if (explicit_end) ran_next.completed_at = At(4);
    REQUIRE(s->Complete(ran_next).ok());
    // b's first token came in step N+1: at 10 ms, not before a's of step N.
    absl::Time last = absl::InfinitePast();
    for (const RequestEvent& e : log.events) {
      INFO("event " << static_cast<int>(e.kind) << " of " << e.id.ToString());
      CHECK(e.time >= last);
      last = std::max(last, e.time);
      if (e.kind == RequestEventKind::kFirstToken && e.id == b) CHECK(e.time == At(10));
    }
    // Not refused until the clock passes 10 ms: planned at 10 ms.
    absl::StatusOr<const StepPlan*> later = s->Plan(At(5));
    REQUIRE(later.ok());
    CHECK((*later)->now == At(10));
    // Still refused: a now before the previous Plan's own.
    REQUIRE(s->Complete(Run(**later)).ok());
    CHECK(s->Plan(At(2)).status().code() == absl::StatusCode::kInvalidArgument);
    // The collector applies the same rule: a's first token at 10 ms after
    // arriving at 0, b's at 10 ms after 1.
    const MetricsReport r = collector->Report();
    CHECK(r.total.histograms.ttft.count() == 2);
    CHECK(r.total.histograms.ttft.sum() == Approx(0.019));
    (void)a;
  }
}

TEST_CASE("Without overlap too, a Plan before the last step's end plans at that end",
          "[scheduler][overlap]") {
  // The engine's completion stamps may run ahead of the host's clock; the
  // engine loop is not refused until its clock catches up.
  auto s = Make(Options(false));
  Submit(*s, 4, 6);
  StepOutcome ran = Run(**s->Plan(At(0)));
  ran.completed_at = At(10'000);
  REQUIRE(s->Complete(ran).ok());
  absl::StatusOr<const StepPlan*> early = s->Plan(At(5'000));
  REQUIRE(early.ok());
  CHECK((*early)->now == At(10'000));
}

TEST_CASE("Voided entries are not counted as served tokens", "[scheduler][overlap]") {
  MetricsOptions m;
  auto metrics = MetricsCollector::Create(m);
  REQUIRE(metrics.ok());
  SchedulerOptions o = Options(true);
  o.metrics_sink = metrics->get();
  auto s = Make(o);
  const RequestId id = Submit(*s, 6, 10);
  const StepPlan* p1 = *s->Plan(At(1));
  const StepPlan* p2 = *s->Plan(At(2));
  StepOutcome o1 = Run(*p1);
  o1.sequences[0].out_of_kv = true;  // it stays live, its entry in step 2 void
  o1.sequences[0].produced_token = false;
  REQUIRE(s->Complete(o1).ok());
  REQUIRE(Voided(*p2, id));
  REQUIRE(s->Complete(Run(*p2)).ok());  // the voided decode "produced" a token
  const MetricsReport report = (*metrics)->Report();
  int64_t output = 0;
  for (const GroupReport& u : report.users) output += u.output_tokens;
  CHECK(output == 0);
}

}  // namespace
}  // namespace hearth
