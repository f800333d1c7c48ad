// Multimodal prompts (RequestSpec::encoder_spans): a chunk never ends inside
// a span, every span a chunk computes is listed with the encoder cache entry
// its output is in (encoded within the step's budget, or reused in the same
// cache scope), the content hash enters the prefix chain, and a failed
// encode is never trusted again. The harness's plan checker holds every plan
// to the encoder rules (tests/testing/plan_checker.cc).

#include <catch2/catch.hpp>

#include <numeric>
#include <string>
#include <vector>

#include "hearth/metrics/metrics_collector.h"
#include "hearth/metrics/prometheus.h"
#include "hearth/scheduler/scheduler.h"
#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::PlanCopy;
using testing::SchedulerHarness;
using testing::Spec;

SchedulerOptions Options() {
  SchedulerOptions o;
  o.kv.block_size = 4;
  o.kv.num_device_blocks = 128;
  o.max_running = 8;
  o.max_batched_tokens = 32;
  o.max_prefill_chunk_tokens = 8;
  o.models[0].vocab_size = 100;
  o.users = {UserConfig{.name = "alice"}, UserConfig{.name = "bob"}};
  return o;
}

RequestSpec Photo(int32_t prompt, std::vector<EncoderSpan> spans, uint32_t user = 0) {
  RequestSpec spec = Spec({.user = user, .prompt = prompt, .max_new = 2});
  spec.prompt_token_ids.resize(static_cast<size_t>(prompt));
  std::iota(spec.prompt_token_ids.begin(), spec.prompt_token_ids.end(), 1);
  // The engine's placeholder id at every image position.
  for (const EncoderSpan& e : spans) {
    for (int32_t p = e.position; p < e.position + e.length; ++p) {
      spec.prompt_token_ids[static_cast<size_t>(p)] = 99;
    }
  }
  spec.encoder_spans = std::move(spans);
  return spec;
}

std::vector<PlanCopy::Sequence> EntriesOf(const SchedulerHarness& h, RequestId id) {
  std::vector<PlanCopy::Sequence> out;
  for (const PlanCopy& p : h.history()) {
    if (const PlanCopy::Sequence* s = p.Find(id)) out.push_back(*s);
  }
  return out;
}

std::vector<EncoderInput> InputsOf(const SchedulerHarness& h, RequestId id) {
  std::vector<EncoderInput> out;
  for (const PlanCopy& p : h.history()) {
    for (const EncoderInput& in : p.encoder_inputs) {
      if (in.id == id) out.push_back(in);
    }
  }
  return out;
}

TEST_CASE("Multimodal: chunks end only between spans, and a span may pass the chunk cap",
          "[scheduler][multimodal]") {
  auto h = *SchedulerHarness::Create(Options());
  h->keep_history(true);
  // Chunks of 8: [0, 8) would stop two short of the first span, and the
  // 20-position span is longer than a chunk, so it is computed whole.
  const RequestId id = *h->Submit(Photo(60, {{10, 20, 7}, {40, 15, 8}}));
  REQUIRE(h->RunUntilIdle(100).ok());
  std::vector<std::pair<int32_t, int32_t>> chunks;
  for (const PlanCopy::Sequence& s : EntriesOf(*h, id)) {
    if (s.start_position < 60) chunks.emplace_back(s.start_position, s.num_tokens);
  }
  CHECK(chunks == std::vector<std::pair<int32_t, int32_t>>{
                      {0, 8}, {8, 2}, {10, 20}, {30, 8}, {38, 2}, {40, 15}, {55, 5}});
  const std::vector<EncoderInput> inputs = InputsOf(*h, id);
  REQUIRE(inputs.size() == 2);
  CHECK(inputs[0].span_index == 0);
  CHECK(inputs[0].position == 10);
  CHECK(inputs[0].length == 20);
  CHECK(inputs[0].encode);
  CHECK(inputs[1].span_index == 1);
  CHECK(inputs[1].encode);
  CHECK(h->results().at(id).phase == RequestPhase::kFinished);
  CHECK(h->scheduler().CheckInvariants().ok());
}

TEST_CASE("Multimodal: the encoder's budget per step holds back a second image",
          "[scheduler][multimodal]") {
  SchedulerOptions o = Options();
  o.max_prefill_chunk_tokens = 0;
  o.max_encoder_tokens_per_step = 12;
  o.encoder_cache_tokens = 48;
  auto h = *SchedulerHarness::Create(o);
  h->keep_history(true);
  const RequestId a = *h->Submit(Photo(16, {{0, 12, 1}}));
  const RequestId b = *h->Submit(Photo(16, {{0, 12, 2}}));
  REQUIRE(h->RunUntilIdle(100).ok());
  for (const PlanCopy& p : h->history()) CHECK(p.num_encoder_tokens <= 12);
  // Each image needs the whole budget: they are encoded in different steps.
  uint64_t step_a = 0, step_b = 0;
  for (const PlanCopy& p : h->history()) {
    for (const EncoderInput& in : p.encoder_inputs) {
      if (in.encode && in.id == a) step_a = p.step;
      if (in.encode && in.id == b) step_b = p.step;
    }
  }
  CHECK(step_a != 0);
  CHECK(step_b != 0);
  CHECK(step_a != step_b);
  CHECK(h->results().at(b).phase == RequestPhase::kFinished);
}

TEST_CASE("Multimodal: the same photo in one scope is encoded once and hits the prefix cache, "
          "another member's or another photo is not",
          "[scheduler][multimodal]") {
  auto h = *SchedulerHarness::Create(Options());
  h->keep_history(true);
  // 8 text positions, a 12-position image, 4 of text: blocks 2-4 hold the image.
  const RequestId first = *h->Submit(Photo(24, {{8, 12, 0xCAFE}}));
  REQUIRE(h->RunUntilIdle(100).ok());
  // Same member, same photo, a different question after it: the hit covers
  // every full block of the photo; the rest of its span reads the cache.
  RequestSpec again = Photo(24, {{8, 12, 0xCAFE}});
  again.prompt_token_ids[22] = 42;
  const RequestId same = *h->Submit(again);
  REQUIRE(h->RunUntilIdle(100).ok());
  CHECK(h->results().at(same).cached_prompt_tokens == 20);
  const std::vector<EncoderInput> reused = InputsOf(*h, same);
  REQUIRE(reused.size() <= 1);
  for (const EncoderInput& in : reused) CHECK_FALSE(in.encode);

  // Another photo behind the same placeholder ids: nothing past the text.
  const RequestId other = *h->Submit(Photo(24, {{8, 12, 0xBEEF}}));
  REQUIRE(h->RunUntilIdle(100).ok());
  CHECK(h->results().at(other).cached_prompt_tokens == 8);
  const std::vector<EncoderInput> encoded = InputsOf(*h, other);
  REQUIRE(encoded.size() == 1);
  CHECK(encoded[0].encode);

  // Another member's identical request finds neither blocks nor output.
  const RequestId bob = *h->Submit(Photo(24, {{8, 12, 0xCAFE}}, /*user=*/1));
  REQUIRE(h->RunUntilIdle(100).ok());
  CHECK(h->results().at(bob).cached_prompt_tokens == 0);
  const std::vector<EncoderInput> bobs = InputsOf(*h, bob);
  REQUIRE(bobs.size() == 1);
  CHECK(bobs[0].encode);
  CHECK(h->results().at(first).phase == RequestPhase::kFinished);
  CHECK(h->scheduler().CheckInvariants().ok());
}

TEST_CASE("Multimodal: the encoder cache evicts least recently read outputs within its size",
          "[scheduler][multimodal]") {
  SchedulerOptions o = Options();
  o.kv.enable_prefix_caching = false;
  o.max_encoder_tokens_per_step = 12;
  o.encoder_cache_tokens = 24;
  auto h = *SchedulerHarness::Create(o);
  h->keep_history(true);
  int frees = 0;
  for (uint64_t content = 1; content <= 4; ++content) {
    (void)*h->Submit(Photo(16, {{2, 12, content}}));
    REQUIRE(h->RunUntilIdle(100).ok());
  }
  for (const PlanCopy& p : h->history()) frees += static_cast<int>(p.encoder_frees.size());
  // Two outputs fit; the third and fourth each evicted the oldest.
  CHECK(frees == 2);
  // Photo 3 is still held: asked again, it is read, not encoded.
  const RequestId again = *h->Submit(Photo(16, {{2, 12, 3}}));
  REQUIRE(h->RunUntilIdle(100).ok());
  const std::vector<EncoderInput> in = InputsOf(*h, again);
  REQUIRE(in.size() == 1);
  CHECK_FALSE(in[0].encode);
  CHECK(h->scheduler().CheckInvariants().ok());
}

TEST_CASE("Multimodal: an encode the engine failed is freed and encoded again on retry",
          "[scheduler][multimodal]") {
  SchedulerOptions o = Options();
  o.work_classes[0].max_retries = 1;
  auto sched = *Scheduler::Create(o);
  const RequestId id = *sched->Submit(Photo(16, {{0, 12, 5}}));
  const StepPlan* plan = *sched->Plan(absl::UnixEpoch());
  REQUIRE(plan->encoder_inputs.size() == 1);
  REQUIRE(plan->encoder_inputs[0].encode);
  const int32_t entry = plan->encoder_inputs[0].entry;
  StepOutcome outcome;
  outcome.step = plan->step;
  outcome.completed_at = absl::UnixEpoch() + absl::Milliseconds(10);
  SequenceOutcome& s = outcome.sequences.emplace_back();
  s.id = id;
  s.error = "encoder: unreadable image";
  REQUIRE(sched->Complete(outcome).ok());
  const StepPlan* retry = *sched->Plan(absl::UnixEpoch() + absl::Milliseconds(20));
  CHECK(std::find(retry->encoder_frees.begin(), retry->encoder_frees.end(), entry) !=
        retry->encoder_frees.end());
  // The retry is planned after the plan that drops its state.
  REQUIRE(retry->sequences.empty());
  StepOutcome none;
  none.step = retry->step;
  none.completed_at = absl::UnixEpoch() + absl::Milliseconds(30);
  REQUIRE(sched->Complete(none).ok());
  const StepPlan* next = *sched->Plan(absl::UnixEpoch() + absl::Milliseconds(40));
  bool encoded_again = false;
  for (const EncoderInput& in : next->encoder_inputs) encoded_again |= in.id == id && in.encode;
  CHECK(encoded_again);
  CHECK(sched->CheckInvariants().ok());
}

TEST_CASE("Multimodal: a span larger than a TPOT-bound step still starts, sized in next",
          "[scheduler][multimodal]") {
  SchedulerOptions o = Options();
  o.max_prefill_chunk_tokens = 0;
  // Steps cost 2 ms + 1 ms a token and chat's TPOT is 8 ms, which the
  // harness's 10 ms steps fall behind: with four decoding chats a step is
  // cut to its floor, them and a block (8 tokens), never a 16-position photo.
  o.step_time_model = {.fixed = absl::Milliseconds(2), .per_token = absl::Milliseconds(1)};
  o.work_classes[0].tpot_slo = absl::Milliseconds(8);
  auto h = *SchedulerHarness::Create(o);
  h->keep_history(true);
  std::vector<RequestId> chats;
  for (int i = 0; i < 4; ++i) {
    RequestSpec chat = Spec({.prompt = 4, .max_new = 200});
    chats.push_back(*h->Submit(chat));
  }
  for (int i = 0; i < 5; ++i) REQUIRE(h->Step().ok());
  const RequestId photo = *h->Submit(Photo(20, {{0, 16, 3}}));
  int steps = 0;
  while (InputsOf(*h, photo).empty() && steps < 20) {
    REQUIRE(h->Step().ok());
    ++steps;
  }
  CHECK(steps <= 3);
  REQUIRE(InputsOf(*h, photo).size() == 1);
  // The chats were still decoding: the photo did not wait for them to end.
  for (RequestId c : chats) CHECK(h->live().contains(c));
  REQUIRE(h->RunUntilIdle(1000).ok());
  CHECK(h->results().at(photo).phase == RequestPhase::kFinished);
}

TEST_CASE("Multimodal: metrics count each member's encoded and reused photo positions",
          "[scheduler][multimodal][metrics]") {
  SchedulerOptions o = Options();
  auto collector = *MetricsCollector::Create(MetricsOptionsFor(o));
  o.metrics_sink = collector.get();
  auto h = *SchedulerHarness::Create(o);
  // The photo [8, 22) crosses the block boundary at 20: a repeat hits the
  // first five blocks and computes [20, 24), reading the cached output.
  REQUIRE(h->Submit(Photo(24, {{8, 14, 0xF00D}})).ok());
  REQUIRE(h->RunUntilIdle(100).ok());
  RequestSpec again = Photo(24, {{8, 14, 0xF00D}});
  again.prompt_token_ids[23] = 42;
  REQUIRE(h->Submit(again).ok());
  REQUIRE(h->RunUntilIdle(100).ok());
  // Bob's identical photo is his own: encoded again.
  REQUIRE(h->Submit(Photo(24, {{8, 14, 0xF00D}}, /*user=*/1)).ok());
  REQUIRE(h->RunUntilIdle(100).ok());
  collector->Flush();
  const MetricsReport r = collector->Report();
  CHECK(r.total.encoder_tokens == 28);
  CHECK(r.total.encoder_cache_hit_tokens == 14);
  REQUIRE(r.users.size() == 2);
  CHECK(r.users[0].encoder_tokens == 14);
  CHECK(r.users[0].encoder_cache_hit_tokens == 14);
  CHECK(r.users[1].encoder_tokens == 14);
  CHECK(r.users[1].encoder_cache_hit_tokens == 0);
  const std::string text = PrometheusText(r);
  CHECK_THAT(text, Catch::Contains("hearth_encoder_tokens_total{class=\"default\"} 28"));
  CHECK_THAT(text, Catch::Contains("hearth_user_encoder_cache_hit_tokens_total{user=\"alice\"} 14"));
}

TEST_CASE("Multimodal: Submit refuses spans it could never plan, naming the rule",
          "[scheduler][multimodal][bad_input]") {
  auto sched = *Scheduler::Create(Options());
  struct Case {
    std::vector<EncoderSpan> spans;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{{-1, 4, 0}}, "encoder_spans[0].position is -1"},
      {{{24, 1, 0}}, "encoder_spans[0].position is 24"},
      {{{0, 0, 0}}, "encoder_spans[0].length is 0"},
      {{{0, 33, 0}}, "must fit max_encoder_tokens_per_step"},
      {{{20, 8, 0}}, "past the prompt"},
      {{{8, 4, 0}, {10, 4, 0}}, "must not overlap"},
      {{{8, 4, 0}, {2, 4, 0}}, "sorted by position"},
      {std::vector<EncoderSpan>(65, EncoderSpan{0, 1, 0}), "kMaxEncoderSpans"},
  };
  for (const Case& c : cases) {
    RequestSpec spec = Spec({.prompt = 24, .max_new = 2});
    spec.encoder_spans = c.spans;
    absl::StatusOr<RequestId> id = sched->Submit(spec);
    REQUIRE_FALSE(id.ok());
    CHECK(id.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(id.status().message()), Catch::Contains(c.says));
  }
}

}  // namespace
}  // namespace hearth
