// "Scheduling never changes results" under every policy of the registry:
// each orders admissions and preemptions differently (MLFQ and VTC also
// preempt for policy reasons), and none may change a request's tokens, with
// speculative decoding off or on.

#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "hearth/policy/policy_registry.h"
#include "scheduling_harness.h"

namespace hearth {
namespace {

using testing::RandomWorkload;
using testing::RunAlone;
using testing::RunWorkload;
using testing::WorkloadRun;
using testing::WorkloadShape;

SchedulerOptions PolicyOptions(PreemptionMode mode) {
  SchedulerOptions o;
  o.models[0].context_length = 512;
  o.models[0].vocab_size = 256;
  o.users = {{"alice", 1.0}, {"bob", 2.0}, {"carol", 1.0}};
  o.work_classes = {{"chat", 0}, {"voice", 5}};
  o.kv.block_size = 16;
  o.kv.num_device_blocks = 14;
  o.kv.num_host_blocks = mode == PreemptionMode::kSwap ? 48 : 0;
  o.kv.enable_prefix_caching = true;
  // Preemption is what the test exercises; the growth headroom would keep
  // 14 blocks from ever running short.
  o.kv.growth_headroom_tokens = 0;
  o.preemption_mode = mode;
  o.max_batched_tokens = 64;
  o.max_running = 8;
  o.max_prefill_chunk_tokens = 24;
  return o;
}

// Runs `w` with `o` under every registered policy (VTC preempting for
// admission, MLFQ with four levels from a quantum of 4), each run handed to
// `check` with the policy and `what` (the run's other settings) in context.
template <typename Check>
void ForEveryPolicy(SchedulerOptions o, const std::vector<testing::WorkloadRequest>& w,
                    const testing::ExecutorFactory& executor, const std::string& what,
                    Check check) {
  PolicyConfig config;
  config.vtc.preempt_for_admission = true;
  config.mlfq.base_quantum = 4.0;
  config.mlfq.num_levels = 4;
  REQUIRE(KnownPolicyNames().size() >= 5);
  for (std::string_view name : KnownPolicyNames()) {
    INFO(absl::StrFormat("policy %s, %s", name, what));
    absl::StatusOr<PolicyFactory> factory = MakePolicyFactory(name, config);
    INFO(factory.status().ToString());
    REQUIRE(factory.ok());
    o.policy_factory = *factory;
    absl::StatusOr<WorkloadRun> run = RunWorkload(o, w, executor);
    INFO(run.status().ToString());
    REQUIRE(run.ok());
    check(*run);
  }
}

std::string Settings(PreemptionMode mode, bool overlap) {
  return absl::StrFormat("%s preemption, overlap %s",
                         mode == PreemptionMode::kSwap ? "swap" : "recompute",
                         overlap ? "on" : "off");
}

TEST_CASE("No policy changes tokens", "[exec][invariance][policy]") {
  WorkloadShape shape;
  shape.requests = 16;
  shape.num_users = 3;
  shape.num_work_classes = 2;
  shape.shared_prefix = 20;
  shape.max_prompt = 50;
  // Outputs long enough that decode growth, not only admission, runs out of
  // blocks: admission reserves whole prompts, so prompts alone rarely preempt.
  shape.max_new_tokens = 60;
  shape.arrival_spread = 30;
  shape.seed = 11;
  const auto w = RandomWorkload(shape);
  const auto alone = RunAlone(PolicyOptions(PreemptionMode::kRecompute), w,
                              testing::CpuExecutorFactory());
  REQUIRE(alone.ok());

  const PreemptionMode mode =
      GENERATE(PreemptionMode::kRecompute, PreemptionMode::kSwap);
  // Plain decodes, and speculative ones verifying up to 3 drafts.
  const int32_t drafts = GENERATE(0, 3);
  // Step N+1 planned (and run) before step N completes.
  const bool overlap = GENERATE(false, true);
  SchedulerOptions o = PolicyOptions(mode);
  o.max_draft_tokens = drafts;
  o.overlap_planning = overlap;
  const auto check = [&](const WorkloadRun& run) {
    for (size_t i = 0; i < w.size(); ++i) {
      INFO("request " << i);
      CHECK(run.results[i].phase == RequestPhase::kFinished);
      CHECK(run.tokens[i] == (*alone)[i]);
    }
    CHECK(run.stats.preemptions > 0);
    if (drafts > 0) CHECK(run.accepted_drafts > 0);
    if (overlap) CHECK(run.pending_inputs > 0);
  };
  ForEveryPolicy(o, w, testing::CpuExecutorFactory(),
                 absl::StrFormat("%s, %d draft tokens", Settings(mode, overlap), drafts), check);
}

// Embeddings beside generations: each vector is the one the embedding gets
// alone, whatever the policy, the preemption mode or overlap did to the
// schedule (prefix hits for last pooling, recomputes from 0 for mean
// pooling, chunks of any size), and the generations' tokens stay too.
TEST_CASE("No policy changes an embedding", "[exec][invariance][policy][embed]") {
  WorkloadShape shape;
  shape.requests = 18;
  shape.num_users = 3;
  shape.num_work_classes = 2;
  shape.shared_prefix = 20;
  shape.max_prompt = 50;
  shape.max_new_tokens = 60;
  shape.arrival_spread = 30;
  shape.seed = 12;
  shape.embed_every = 3;
  const auto w = RandomWorkload(shape);
  const auto alone = testing::RunEachAlone(PolicyOptions(PreemptionMode::kRecompute), w,
                                           testing::CpuExecutorFactory());
  REQUIRE(alone.ok());
  const PreemptionMode mode = GENERATE(PreemptionMode::kRecompute, PreemptionMode::kSwap);
  const bool overlap = GENERATE(false, true);
  SchedulerOptions o = PolicyOptions(mode);
  o.overlap_planning = overlap;
  const auto check = [&](const WorkloadRun& run) {
    int embeddings = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      INFO("request " << i);
      CHECK(run.results[i].phase == RequestPhase::kFinished);
      if (w[i].kind == RequestKind::kEmbed) {
        ++embeddings;
        CHECK(run.results[i].finish_reason == FinishReason::kPooled);
        REQUIRE(alone->embeddings[i].size() == 64);
        CHECK(run.embeddings[i] == alone->embeddings[i]);
        CHECK(run.tokens[i].empty());
      } else {
        CHECK(run.tokens[i] == alone->tokens[i]);
      }
    }
    CHECK(embeddings == 6);
    CHECK(run.pooled == 6);
    CHECK(run.stats.preemptions > 0);
  };
  ForEveryPolicy(o, w, testing::CpuExecutorFactory(), Settings(mode, overlap), check);
}

// Parallel sampling: groups of 2-4 samples beside single requests, sampled
// at temperature 1 with a seed per handle. Each sample's tokens equal the
// same seed's run alone (its own request), under every policy, both
// preemption modes and overlap; the later samples reuse sample 0's cached
// prompt instead of computing it.
TEST_CASE("No policy changes a parallel sample", "[exec][invariance][policy][samples]") {
  WorkloadShape shape;
  shape.requests = 12;
  shape.num_users = 3;
  shape.num_work_classes = 2;
  shape.min_prompt = 20;
  shape.max_prompt = 60;
  shape.max_new_tokens = 40;
  shape.arrival_spread = 20;
  shape.seed = 13;
  std::vector<testing::WorkloadRequest> w = RandomWorkload(shape);
  int32_t groups = 0, slots = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    w[i].handle = 1000 * (i + 1);
    w[i].num_samples = i % 3 == 0 ? 1 : 2 + static_cast<int32_t>(i % 3);
    groups += w[i].num_samples > 1;
    slots += w[i].num_samples;
  }
  const auto sampling = [](uint64_t handle) {
    return SamplingParams{.temperature = 1.0f, .seed = handle * 0x9E3779B97F4A7C15ull};
  };
  const auto alone = testing::RunEachAlone(PolicyOptions(PreemptionMode::kRecompute), w,
                                           testing::CpuExecutorFactory(-1, sampling));
  REQUIRE(alone.ok());
  // The samples of a group differ (the seeds do their work).
  int32_t differing = 0;
  for (size_t i = 0, slot = 0; i < w.size(); slot += static_cast<size_t>(w[i].num_samples), ++i) {
    if (w[i].num_samples > 1) differing += alone->tokens[slot] != alone->tokens[slot + 1];
  }
  CHECK(differing >= groups - 1);
  const PreemptionMode mode = GENERATE(PreemptionMode::kRecompute, PreemptionMode::kSwap);
  const bool overlap = GENERATE(false, true);
  SchedulerOptions o = PolicyOptions(mode);
  o.overlap_planning = overlap;
  const auto check = [&](const WorkloadRun& run) {
    REQUIRE(run.tokens.size() == static_cast<size_t>(slots));
    int32_t reused = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      for (int32_t k = 0; k < w[i].num_samples; ++k) {
        const size_t slot = run.first_slot[i] + static_cast<size_t>(k);
        INFO("request " << i << " sample " << k);
        const RequestResult& r = run.results[slot];
        CHECK(r.phase == RequestPhase::kFinished);
        CHECK(run.tokens[slot] == alone->tokens[slot]);
        if (w[i].num_samples > 1) {
          CHECK(r.sample_index == k);
          CHECK(r.group == run.results[run.first_slot[i]].id);
          CHECK(r.handle == w[i].handle + static_cast<uint64_t>(k));
          if (k > 0) reused += r.cached_prompt_tokens > 0;
        }
      }
    }
    // Later samples found sample 0's prompt (in 14 blocks, preemptions and
    // evictions often take it first; tests/scheduler/parallel_samples_test.cc
    // checks the reuse where memory allows it).
    CHECK(reused > 0);
  };
  ForEveryPolicy(o, w, testing::CpuExecutorFactory(-1, sampling), Settings(mode, overlap), check);
}


TEST_CASE("No policy changes a photo's answer, cached or encoded", "[exec][invariance][policy][multimodal]") {
  WorkloadShape shape;
  shape.requests = 18;
  shape.num_users = 2;
  shape.num_work_classes = 2;
  // Prompts in three groups sharing their first 24 tokens: a photo's span
  // [10, 22) crosses the first block's end, so a hit of that block starts
  // the next chunk inside the span, which then reads cached output.
  shape.shared_prefix = 24;
  shape.max_prompt = 30;
  shape.max_new_tokens = 30;
  shape.arrival_spread = 30;
  shape.seed = 21;
  shape.photo_every = 2;
  const std::vector<testing::WorkloadRequest> w = RandomWorkload(shape);
  int32_t photos = 0;
  for (const testing::WorkloadRequest& r : w) photos += !r.encoder_spans.empty();
  REQUIRE(photos == 9);
  const auto alone = testing::RunEachAlone(PolicyOptions(PreemptionMode::kRecompute), w,
                                           testing::CpuExecutorFactory());
  REQUIRE(alone.ok());
  // The encoder matters: the same prompt tokens with another photo answer
  // differently (else equal tokens would prove nothing).
  {
    testing::WorkloadRequest a = w[1];
    a.max_new_tokens = 20;
    testing::WorkloadRequest b = a;
    b.handle = a.handle + 1;
    b.encoder_spans[0].content_hash = testing::PhotoContentHash(b.handle, 0);
    const auto both = testing::RunEachAlone(PolicyOptions(PreemptionMode::kRecompute), {a, b},
                                            testing::CpuExecutorFactory());
    REQUIRE(both.ok());
    CHECK(both->tokens[0] != both->tokens[1]);
  }
  const PreemptionMode mode = GENERATE(PreemptionMode::kRecompute, PreemptionMode::kSwap);
  const bool overlap = GENERATE(false, true);
  SchedulerOptions o = PolicyOptions(mode);
  o.overlap_planning = overlap;
  o.encoder_cache_tokens = 36;  // three photos
  const auto check = [&](const WorkloadRun& run) {
    for (size_t i = 0; i < w.size(); ++i) {
      INFO("request " << i);
      CHECK(run.results[i].phase == RequestPhase::kFinished);
      CHECK(run.tokens[i] == alone->tokens[i]);
    }
    // Both paths ran: outputs encoded, and outputs read from the cache,
    // some by chunks starting inside their span.
    CHECK(run.encoder_encodes > 0);
    CHECK(run.encoder_reads > 0);
    CHECK(run.chunks_inside_span > 0);
  };
  ForEveryPolicy(o, w, testing::CpuExecutorFactory(), Settings(mode, overlap), check);
}

}  // namespace
}  // namespace hearth
