// Speculative decoding in the contract (SchedulerOptions::max_draft_tokens):
// what a decode's drafts take from the step, what an outcome may accept,
// how accepted drafts become tokens, and the blocks of rejected ones.

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/policy/fifo.h"
#include "hearth/scheduler/scheduler.h"
#include "scheduler/scheduler_peer.h"

namespace hearth {
namespace {

std::unique_ptr<Scheduler> Make(int32_t drafts, int32_t batched = 256) {
  SchedulerOptions o;
  o.kv.block_size = 4;
  o.kv.num_device_blocks = 64;
  o.max_batched_tokens = batched;
  o.max_draft_tokens = drafts;
  o.max_running = std::min(o.max_running, batched);
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

// Each sequence produces token 1 and accepts `accept` drafts (ids 2, 3, ...)
// when it has drafts.
StepOutcome Run(const StepPlan& plan, int32_t accept) {
  StepOutcome out;
  out.step = plan.step;
  for (const ScheduledSequence& s : plan.sequences) {
    SequenceOutcome& o = out.sequences.emplace_back();
    o.id = s.id;
    o.produced_token = s.sample;
    o.token = 1;
    o.accepted_drafts = std::min<int32_t>(accept, s.draft_tokens);
    for (int32_t d = 0; d < o.accepted_drafts; ++d) out.draft_ids.push_back(2 + d);
  }
  return out;
}

TEST_CASE("Decodes carry drafts, accepted drafts become tokens, rejected ones give "
          "their blocks back", "[scheduler][speculative]") {
  auto s = Make(/*drafts=*/4);
  const RequestId id = Submit(*s, 6, 40);
  const StepPlan* p = *s->Plan(At(1));
  REQUIRE(p->sequences.size() == 1);
  CHECK(p->sequences[0].draft_tokens == 0);  // A prefill has none.
  REQUIRE(s->Complete(Run(*p, 0)).ok());
  // Decode: the last token at position 6 and up to 4 drafts at 7..10.
  p = *s->Plan(At(2));
  REQUIRE(p->sequences.size() == 1);
  const ScheduledSequence& d = p->sequences[0];
  CHECK(d.decode);
  CHECK(d.num_tokens == 1);
  CHECK(d.draft_tokens == 4);
  CHECK(p->num_batched_tokens == 5);
  CHECK(d.block_table.size() * 4 >= size_t{6 + 1 + 4});
  // Two accepted: three new tokens (2, 3, then 1).
  REQUIRE(s->Complete(Run(*p, 2)).ok());
  absl::StatusOr<RequestView> v = s->GetRequest(id);
  REQUIRE(v.ok());
  CHECK(v->output_tokens == 1 + 3);
  CHECK(v->computed_tokens == 6 + 1 + 2);
  CHECK(internal::SchedulerPeer::allocator(*s).num_owned() == 3);  // 11 positions planned, 9 kept
  // Positions 9..13: four blocks; none accepted keeps 10 positions in three.
  p = *s->Plan(At(3));
  REQUIRE(p->sequences.size() == 1);
  CHECK_FALSE(p->sequences[0].full_block_table);
  CHECK(p->sequences[0].start_position == 9);
  CHECK(p->sequences[0].block_table.size() == 4);
  REQUIRE(s->Complete(Run(*p, 0)).ok());
  CHECK(internal::SchedulerPeer::allocator(*s).num_owned() == 3);
  // The table lost a block the engine had: the next entry carries it whole.
  p = *s->Plan(At(4));
  REQUIRE(p->sequences.size() == 1);
  CHECK(p->sequences[0].full_block_table);
  CHECK(p->sequences[0].start_position == 10);
  REQUIRE(s->Complete(Run(*p, 0)).ok());
  CHECK(s->CheckInvariants().ok());
}

TEST_CASE("Drafts never run past max_new_tokens, and take only the step's spare tokens",
          "[scheduler][speculative]") {
  // 3 decodes in a 7-token step: each keeps its one token, the 4 spare go
  // to drafts in order.
  auto s = Make(/*drafts=*/3, /*batched=*/7);
  std::vector<RequestId> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(Submit(*s, 2, 3));
  const StepPlan* p = *s->Plan(At(1));
  REQUIRE(p->sequences.size() == 3);
  REQUIRE(s->Complete(Run(*p, 0)).ok());
  p = *s->Plan(At(2));
  REQUIRE(p->sequences.size() == 3);
  int32_t drafts = 0;
  for (const ScheduledSequence& q : p->sequences) {
    // One token produced, two to go: at most one draft (the token after it
    // is the last).
    CHECK(q.draft_tokens <= 1);
    drafts += q.draft_tokens;
  }
  CHECK(drafts == 3);
  CHECK(p->num_batched_tokens == 6);
  // Accepting the draft and the token after it ends each request at 3.
  REQUIRE(s->Complete(Run(*p, 1)).ok());
  std::vector<RequestResult> results;
  s->DrainResults(&results);
  REQUIRE(results.size() == 3);
  for (const RequestResult& r : results) {
    CHECK(r.phase == RequestPhase::kFinished);
    CHECK(r.finish_reason == FinishReason::kLength);
    CHECK(r.output_tokens == 3);
  }
}

TEST_CASE("An outcome accepting more drafts than planned is refused whole",
          "[scheduler][speculative]") {
  auto s = Make(/*drafts=*/2);
  Submit(*s, 3, 20);
  const StepPlan* p = *s->Plan(At(1));
  REQUIRE(s->Complete(Run(*p, 0)).ok());
  p = *s->Plan(At(2));
  REQUIRE(p->sequences[0].draft_tokens == 2);
  StepOutcome bad = Run(*p, 2);
  bad.sequences[0].accepted_drafts = 3;
  bad.draft_ids.push_back(4);
  absl::Status status = s->Complete(bad);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()),
             Catch::Contains("accepted_drafts is 3; the plan gave this sequence 2 draft tokens"));
  bad.sequences[0].accepted_drafts = -1;
  CHECK_FALSE(s->Complete(bad).ok());
  bad.sequences[0].accepted_drafts = 1;
  CHECK_THAT(std::string(s->Complete(bad).message()),
             Catch::Contains("draft_ids holds 3 ids but the sequences accepted 1 drafts"));
  bad.draft_ids = {-5};
  CHECK_THAT(std::string(s->Complete(bad).message()),
             Catch::Contains("accepted draft token -5 is outside"));
  // Nothing was applied: the plan is still outstanding and takes a good one.
  REQUIRE(s->Complete(Run(*p, 1)).ok());
}

TEST_CASE("Drafts take only memory nothing else needs, and never cause a preemption",
          "[scheduler][speculative]") {
  // Five blocks of 4: after the prefills A holds 2 and B 2. A's drafts
  // could take the last free block, which B's next token needs.
  for (int32_t drafts : {0, 4}) {
    INFO("max_draft_tokens " << drafts);
    SchedulerOptions o;
    o.kv.block_size = 4;
    o.kv.num_device_blocks = 5;
    o.kv.watermark_blocks = 0;
    o.kv.growth_headroom_tokens = 0;
    o.max_draft_tokens = drafts;
    o.policy_factory = [](const SchedulerOptions&) { return NewFifoPolicy(); };
    auto s = *Scheduler::Create(o);
    Submit(*s, 6, 3);
    Submit(*s, 8, 3);
    for (int t = 1; t < 20; ++t) {
      const StepPlan* p = *s->Plan(At(t));
      CHECK(p->preempted.empty());
      REQUIRE(s->Complete(Run(*p, 0)).ok());
    }
    CHECK(s->stats().preemptions == 0);
    std::vector<RequestResult> results;
    s->DrainResults(&results);
    CHECK(results.size() == 2);
  }
}

TEST_CASE("max_draft_tokens is validated", "[scheduler][speculative]") {
  for (int32_t bad : {-1, kMaxDraftTokens + 1}) {
    SchedulerOptions o;
    o.max_draft_tokens = bad;
    CHECK_THAT(std::string(Scheduler::Create(o).status().message()),
               Catch::Contains("max_draft_tokens"));
  }
}

}  // namespace
}  // namespace hearth
