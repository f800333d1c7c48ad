// Scheduling never changes what llama.cpp computes: greedy generations run
// under Hearth's plans -- batched with other sequences, with chunked
// prefill, preempted and recomputed, evicted for lack of KV and resubmitted --
// equal a plain one-sequence-at-a-time llama.cpp run of the same prompts
// (tokens exactly, logits within 1e-3; prompts are chosen so that no greedy
// step is a near-tie). Also: the token budget never exceeds n_batch. Each
// case runs on both KV layouts (a unified pool, per-sequence streams);
// llama.cpp can run out of KV only in the unified pool.
#ifdef HEARTH_LLAMA_CPP_FOUND

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "catch2/catch.hpp"
#include "hearth/metrics/metrics_sink.h"
#include "llama_test_env.h"

namespace hearth::llama_cpp {
namespace {

using testing::ReferencePrompt;
using testing::TinyLlama;

constexpr float kLogitTolerance = 1e-3f;

// Records every plan's token count, as the scheduler emitted it.
class BudgetSink : public MetricsSink {
 public:
  void OnRequestEvent(const RequestEvent&) override {}
  void OnStep(const StepPlan& plan, const StepOutcome&) override {
    int32_t sum = 0;
    for (const ScheduledSequence& s : plan.sequences) {
      sum += s.num_tokens;
      pending_inputs += s.input_pending;
    }
    voided += static_cast<int64_t>(plan.voided.size());
    plan_tokens.push_back(std::max(sum, plan.num_batched_tokens));
  }
  std::vector<int32_t> plan_tokens;
  int64_t pending_inputs = 0;
  int64_t voided = 0;
};

struct Observed {
  std::vector<Completion> completions;
  absl::flat_hash_map<RequestId, std::vector<std::vector<float>>> logits;
  std::vector<RequestId> ids;  // in prompt order
  LlamaExecutorStats executor;
  SchedulerStats scheduler;
  std::vector<int32_t> plan_tokens;
  int64_t pending_inputs = 0;
  int64_t voided = 0;
  int32_t n_batch = 0;
};

Observed RunUnderHearth(const TinyLlama& tiny, const ContextOptions& copts,
                        LlamaEngineOptions options, const std::vector<ReferencePrompt>& prompts) {
  Observed seen;
  auto ctx = tiny.NewContext(copts);
  REQUIRE(ctx.ok());
  BudgetSink budget;
  options.scheduler.metrics_sink = &budget;
  auto engine = LlamaEngine::Create(ctx->get(), options);
  REQUIRE(engine.ok());
  (*engine)->executor().set_logits_observer([&](RequestId id, absl::Span<const float> row) {
    seen.logits[id].emplace_back(row.begin(), row.end());
  });
  for (const ReferencePrompt& p : prompts) {
    RequestSpec spec;
    spec.prompt_token_ids = p.prompt;
    spec.max_new_tokens = p.max_new_tokens;
    auto id = (*engine)->Submit(spec);
    REQUIRE(id.ok());
    seen.ids.push_back(*id);
  }
  ManualClock clock;
  auto done = testing::RunToCompletion(**engine, clock);
  REQUIRE(done.ok());
  seen.completions = *std::move(done);
  seen.executor = (*engine)->executor().stats();
  seen.scheduler = (*engine)->scheduler().stats();
  seen.plan_tokens = budget.plan_tokens;
  seen.pending_inputs = budget.pending_inputs;
  seen.voided = budget.voided;
  seen.n_batch = static_cast<int32_t>(llama_n_batch(ctx->get()));
  REQUIRE((*engine)->scheduler().CheckInvariants().ok());
  return seen;
}

// Every request finished with the reference tokens; with `logits`, every
// sampled row within tolerance of the reference row.
void ExpectSameAsAlone(const Observed& seen, const std::vector<ReferencePrompt>& prompts,
                       bool logits) {
  REQUIRE(seen.completions.size() == prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto it = std::find_if(seen.completions.begin(), seen.completions.end(),
                           [&](const Completion& c) { return c.id == seen.ids[i]; });
    REQUIRE(it != seen.completions.end());
    INFO("prompt " << i << " (" << prompts[i].prompt.size() << " tokens): " << it->result.message);
    CHECK(it->result.phase == RequestPhase::kFinished);
    CHECK(it->output == prompts[i].run.tokens);
    CHECK(it->result.output_tokens == static_cast<int32_t>(prompts[i].run.tokens.size()));
    if (!logits) continue;
    auto rows = seen.logits.find(seen.ids[i]);
    REQUIRE(rows != seen.logits.end());
    REQUIRE(rows->second.size() == prompts[i].run.logits.size());
    for (size_t k = 0; k < rows->second.size(); ++k) {
      INFO("token " << k);
      CHECK(testing::MaxAbsDiff(prompts[i].run.logits[k], rows->second[k]) <= kLogitTolerance);
    }
  }
}

struct Fixture {
  explicit Fixture(KvLayout kv_layout) : layout(kv_layout) {
    auto created = TinyLlama::Create();
    REQUIRE(created.ok());
    tiny = *std::move(created);
    copts.n_ctx = 1024;
    copts.n_batch = 64;
    copts.n_seq_max = 8;
    copts.n_threads = 1;
    // llama.cpp's CPU flash attention rounds through f16 in a batch- and
    // cell-layout-dependent order (logits move by ~1e-3 of their scale
    // between schedules, with plain llama.cpp too); without it the CPU
    // results are bit-identical, so a mapping bug cannot hide in the noise.
    copts.disable_flash_attention = true;
    copts.kv_layout = layout;
    ContextOptions alone = copts;
    alone.n_seq_max = 1;
    auto ctx = tiny->NewContext(alone);
    REQUIRE(ctx.ok());
    reference = *std::move(ctx);
  }
  std::vector<ReferencePrompt> Prompts(const testing::PromptSet& set) {
    auto prompts = testing::TieFreePrompts(reference.get(), set);
    REQUIRE(prompts.ok());
    return *std::move(prompts);
  }
  bool unified() const { return layout == KvLayout::kUnified; }
  KvLayout layout;
  std::unique_ptr<TinyLlama> tiny;
  ContextOptions copts;
  ContextPtr reference;
};

TEST_CASE("llama.cpp under Hearth: batched sequences equal single runs", "[llama_cpp]") {
  Fixture f(GENERATE(KvLayout::kUnified, KvLayout::kPerSequence));
  INFO("kv_layout " << (f.unified() ? "unified" : "per-sequence"));
  testing::PromptSet set;
  set.count = 8;
  const auto prompts = f.Prompts(set);
  const Observed seen = RunUnderHearth(*f.tiny, f.copts, LlamaEngineOptions{}, prompts);
  ExpectSameAsAlone(seen, prompts, /*logits=*/true);
  // The eight ran together: some decode batch held several sequences.
  CHECK(seen.executor.max_batch_tokens > 8);
  CHECK(seen.executor.out_of_kv_returns == 0);
  CHECK(seen.scheduler.preemptions == 0);
}

TEST_CASE("llama.cpp under Hearth: chunked prefill equals single runs", "[llama_cpp]") {
  Fixture f(GENERATE(KvLayout::kUnified, KvLayout::kPerSequence));
  INFO("kv_layout " << (f.unified() ? "unified" : "per-sequence"));
  testing::PromptSet set;
  set.count = 6;
  set.min_len = 30;
  set.max_len = 60;
  set.seed = 2;
  const auto prompts = f.Prompts(set);
  LlamaEngineOptions options;
  options.scheduler.max_prefill_chunk_tokens = 7;
  const Observed seen = RunUnderHearth(*f.tiny, f.copts, options, prompts);
  ExpectSameAsAlone(seen, prompts, /*logits=*/true);
  // Every prompt needed several chunks.
  CHECK(seen.executor.decode_calls >= 60 / 7);
}

TEST_CASE("llama.cpp under Hearth: preempted and recomputed sequences equal single runs",
          "[llama_cpp]") {
  Fixture f(GENERATE(KvLayout::kUnified, KvLayout::kPerSequence));
  INFO("kv_layout " << (f.unified() ? "unified" : "per-sequence"));
  testing::PromptSet set;
  set.count = 8;
  set.min_len = 20;
  set.max_len = 40;
  set.max_new_tokens = 32;
  set.seed = 3;
  const auto prompts = f.Prompts(set);
  LlamaEngineOptions options;
  // 12 blocks of 16 tokens for eight requests of up to 72 tokens: decode
  // growth must preempt.
  options.kv_blocks = 12;
  const Observed seen = RunUnderHearth(*f.tiny, f.copts, options, prompts);
  ExpectSameAsAlone(seen, prompts, /*logits=*/true);
  CHECK(seen.scheduler.preemptions > 0);
  CHECK(seen.executor.out_of_kv_returns == 0);
}

TEST_CASE("llama.cpp under Hearth: sequences swapped out and in equal single runs",
          "[llama_cpp]") {
  // The preemption case again, with a host tier: victims' cells go to host
  // memory (llama_state_seq_get_data) and come back into another sequence
  // id (llama_state_seq_set_data) instead of being recomputed.
  Fixture f(GENERATE(KvLayout::kUnified, KvLayout::kPerSequence));
  INFO("kv_layout " << (f.unified() ? "unified" : "per-sequence"));
  testing::PromptSet set;
  set.count = 8;
  set.min_len = 20;
  set.max_len = 40;
  set.max_new_tokens = 32;
  set.seed = 3;
  const auto prompts = f.Prompts(set);
  // Also with prefix caching: a swapped-in sequence's new blocks hold the
  // tokens it swapped out with.
  for (int32_t spare : {0, 2}) {
    INFO("prefix_cache_sequences " << spare);
    LlamaEngineOptions options;
    options.kv_blocks = 12;
    options.host_blocks = 64;
    options.prefix_cache_sequences = spare;
    // Swap even the shortest victims: this test is about the copies.
    options.scheduler.swap_block_cost_tokens = 0;
    const Observed seen = RunUnderHearth(*f.tiny, f.copts, options, prompts);
    ExpectSameAsAlone(seen, prompts, /*logits=*/true);
    CHECK(seen.scheduler.preemptions > 0);
    CHECK(seen.executor.swapped_in > 0);
    CHECK(seen.executor.swapped_out == seen.executor.swapped_in);
    CHECK(seen.executor.swap_bytes == 0);
    CHECK(seen.executor.out_of_kv_returns == 0);
  }
}

TEST_CASE("llama.cpp under Hearth: out-of-KV returns evict, resubmit and lose nothing",
          "[llama_cpp]") {
  Fixture f(GENERATE(KvLayout::kUnified, KvLayout::kPerSequence));
  INFO("kv_layout " << (f.unified() ? "unified" : "per-sequence"));
  testing::PromptSet set;
  set.count = 8;
  set.min_len = 24;
  set.max_len = 40;
  set.max_new_tokens = 32;
  set.seed = 4;
  const auto prompts = f.Prompts(set);
  ContextOptions small = f.copts;
  small.n_ctx = 256;  // llama.cpp's smallest pool: 256 cells
  LlamaEngineOptions options;
  // Tell Hearth there are three times the 16 blocks llama.cpp has.
  options.kv_blocks = 48;
  const Observed seen = RunUnderHearth(*f.tiny, small, options, prompts);
  ExpectSameAsAlone(seen, prompts, /*logits=*/false);
  int evictions = 0;
  for (const Completion& c : seen.completions) evictions += c.kv_evictions;
  CHECK(evictions == static_cast<int>(seen.executor.evictions));
  if (f.unified()) {
    CHECK(seen.executor.out_of_kv_returns > 0);
    CHECK(evictions > 0);
  } else {
    // A stream holds the longest sequence Hearth may run: an oversubscribed
    // pool only lets more sequences wait for an id.
    CHECK(seen.executor.out_of_kv_returns == 0);
  }
}

TEST_CASE("llama.cpp under Hearth: overlapped planning equals single runs", "[llama_cpp]") {
  // llama_decode on the engine's worker while the next step is planned; in
  // a roomy cache, under preemption by recompute and by swap, and with
  // llama.cpp evicting sequences (their entries planned ahead are voided).
  Fixture f(GENERATE(KvLayout::kUnified, KvLayout::kPerSequence));
  INFO("kv_layout " << (f.unified() ? "unified" : "per-sequence"));
  testing::PromptSet set;
  set.count = 8;
  set.min_len = 20;
  set.max_len = 40;
  set.max_new_tokens = 32;
  set.seed = 5;
  const auto prompts = f.Prompts(set);
  struct Case {
    const char* what;
    int32_t n_ctx, kv_blocks, chunk, host_blocks;
  };
  for (Case c : {Case{"roomy, chunked", 1024, 0, 7, 0}, Case{"preempting", 1024, 12, 0, 0},
                 Case{"swapping", 1024, 12, 0, 64}, Case{"evicting", 256, 48, 0, 0}}) {
    INFO(c.what);
    ContextOptions copts = f.copts;
    copts.n_ctx = c.n_ctx;
    LlamaEngineOptions options;
    options.kv_blocks = c.kv_blocks;
    options.host_blocks = c.host_blocks;
    options.scheduler.swap_block_cost_tokens = 0;
    options.scheduler.max_prefill_chunk_tokens = c.chunk;
    options.scheduler.overlap_planning = true;
    const Observed seen = RunUnderHearth(*f.tiny, copts, options, prompts);
    // Logits are not compared: a voided entry is computed too, and the
    // observer sees its row.
    ExpectSameAsAlone(seen, prompts, /*logits=*/false);
    CHECK(seen.pending_inputs > 100);
    if (c.kv_blocks == 12) CHECK(seen.scheduler.preemptions > 0);
    if (c.host_blocks > 0) CHECK(seen.executor.swapped_in > 0);
    if (c.n_ctx == 256 && f.unified()) CHECK(seen.voided > 0);
    if (c.n_ctx == 256 && f.unified()) CHECK(seen.executor.out_of_kv_returns > 0);
  }
}

TEST_CASE("llama.cpp under Hearth: the token budget never exceeds n_batch", "[llama_cpp]") {
  Fixture f(GENERATE(KvLayout::kUnified, KvLayout::kPerSequence));
  INFO("kv_layout " << (f.unified() ? "unified" : "per-sequence"));
  testing::PromptSet set;
  set.count = 8;
  set.min_len = 50;
  set.max_len = 90;
  set.max_new_tokens = 8;
  set.seed = 5;
  const auto prompts = f.Prompts(set);
  const Observed seen = RunUnderHearth(*f.tiny, f.copts, LlamaEngineOptions{}, prompts);
  ExpectSameAsAlone(seen, prompts, /*logits=*/false);
  REQUIRE(!seen.plan_tokens.empty());
  const int32_t most = *std::max_element(seen.plan_tokens.begin(), seen.plan_tokens.end());
  CHECK(most <= seen.n_batch);
  // 8 prompts of 50+ tokens against a budget of 64: the budget was used in full.
  CHECK(most == seen.n_batch);
  CHECK(seen.executor.max_batch_tokens == seen.n_batch);
}

TEST_CASE("llama.cpp executor refuses a plan over n_batch instead of aborting", "[llama_cpp]") {
  Fixture f(GENERATE(KvLayout::kUnified, KvLayout::kPerSequence));
  INFO("kv_layout " << (f.unified() ? "unified" : "per-sequence"));
  auto ctx = f.tiny->NewContext(f.copts);
  REQUIRE(ctx.ok());
  auto executor = LlamaStepExecutor::Create(ctx->get());
  REQUIRE(executor.ok());
  std::vector<TokenId> ids(65, 'a');
  StepPlan plan;
  plan.step = 1;
  ScheduledSequence& s = plan.sequences.emplace_back();
  s.id = RequestId(1);
  s.num_tokens = 65;
  s.sample = true;
  s.token_ids = ids;
  plan.num_batched_tokens = 65;
  StepOutcome outcome;
  absl::Status status = (*executor)->Execute(plan, &outcome);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(status.message()).find("n_batch") != std::string::npos);

  // Within the budget it runs; a continuation at the wrong position fails
  // only that sequence.
  ids.resize(64);
  s.num_tokens = 64;
  s.token_ids = ids;
  plan.num_batched_tokens = 64;
  REQUIRE((*executor)->Execute(plan, &outcome).ok());
  REQUIRE(outcome.sequences.size() == 1);
  CHECK(outcome.sequences[0].produced_token);
  CHECK(outcome.sequences[0].error.empty());
  plan.step = 2;
  s.start_position = 63;  // llama.cpp expects 64
  s.num_tokens = 1;
  s.token_ids = absl::MakeConstSpan(ids).subspan(0, 1);
  plan.num_batched_tokens = 1;
  REQUIRE((*executor)->Execute(plan, &outcome).ok());
  CHECK(outcome.sequences[0].error.find("expects 64") != std::string::npos);
  CHECK((*executor)->live_sequences() == 0);
}

TEST_CASE("llama.cpp executor swaps whole sequences and refuses other swap-ins",
          "[llama_cpp]") {
  Fixture f(GENERATE(KvLayout::kUnified, KvLayout::kPerSequence));
  INFO("kv_layout " << (f.unified() ? "unified" : "per-sequence"));
  auto ctx = f.tiny->NewContext(f.copts);
  REQUIRE(ctx.ok());
  auto executor = LlamaStepExecutor::Create(ctx->get());
  REQUIRE(executor.ok());
  const std::vector<TokenId> ids(20, 'a');
  const BlockId host_a(5), host_b(6);
  auto step = [&](uint64_t n, int32_t start, std::vector<BlockCopy> in) {
    StepPlan plan;
    plan.step = n;
    plan.swap_in = std::move(in);
    ScheduledSequence& s = plan.sequences.emplace_back();
    s.id = RequestId(1);
    s.start_position = start;
    s.num_tokens = start == 0 ? 20 : 1;
    s.sample = true;
    s.full_block_table = true;
    s.token_ids = absl::MakeConstSpan(ids).subspan(0, static_cast<size_t>(s.num_tokens));
    plan.num_batched_tokens = s.num_tokens;
    StepOutcome outcome;
    REQUIRE((*executor)->Execute(plan, &outcome).ok());
    REQUIRE(outcome.sequences.size() == 1);
    return outcome.sequences[0];
  };
  const SequenceOutcome first = step(1, 0, {});
  REQUIRE(first.produced_token);
  // Preempted by swap: two blocks to the host tier.
  StepPlan out;
  out.step = 2;
  out.preempted.push_back({RequestId(1), 0, PreemptionMode::kSwap, PreemptionCause::kScheduler});
  out.swap_out = {{RequestId(1), BlockId(0), host_a}, {RequestId(1), BlockId(1), host_b}};
  StepOutcome outcome;
  REQUIRE((*executor)->Execute(out, &outcome).ok());
  CHECK((*executor)->live_sequences() == 0);
  CHECK((*executor)->stats().swapped_out == 1);
  // Half of it back: refused, the sequence fails, the saved state stays.
  SequenceOutcome half = step(3, 20, {{RequestId(1), host_a, BlockId(2)}});
  CHECK(half.error.find("whole sequences only") != std::string::npos);
  SequenceOutcome unknown = step(4, 20, {{RequestId(1), BlockId(9), BlockId(2)}});
  CHECK(unknown.error.find("hold no swapped-out sequence") != std::string::npos);
  // All of it: it continues where it left off.
  SequenceOutcome back =
      step(5, 20, {{RequestId(1), host_a, BlockId(2)}, {RequestId(1), host_b, BlockId(3)}});
  CHECK(back.error.empty());
  CHECK(back.produced_token);
  CHECK((*executor)->stats().swapped_in == 1);
  CHECK((*executor)->stats().swap_bytes == 0);
}

TEST_CASE("llama.cpp engine is sized from the context and validates submissions", "[llama_cpp]") {
  Fixture f(GENERATE(KvLayout::kUnified, KvLayout::kPerSequence));
  INFO("kv_layout " << (f.unified() ? "unified" : "per-sequence"));
  auto ctx = f.tiny->NewContext(f.copts);
  REQUIRE(ctx.ok());
  auto engine = LlamaEngine::Create(ctx->get(), LlamaEngineOptions{});
  REQUIRE(engine.ok());
  const SchedulerOptions& o = (*engine)->scheduler().options();
  const int32_t n_ctx = static_cast<int32_t>(llama_n_ctx(ctx->get()));
  CHECK(n_ctx >= f.copts.n_ctx);
  const int32_t per_seq = static_cast<int32_t>(llama_n_ctx_seq(ctx->get()));
  CHECK(KvStreams(ctx->get()) == (f.unified() ? 1 : f.copts.n_seq_max));
  CHECK(per_seq == (f.unified() ? n_ctx : n_ctx / f.copts.n_seq_max));
  // Streams: each running sequence's stream, and no sequence longer.
  CHECK(o.kv.num_device_blocks == (f.unified() ? n_ctx / o.kv.block_size
                                               : f.copts.n_seq_max * (per_seq / o.kv.block_size)));
  CHECK(o.max_running == f.copts.n_seq_max);
  CHECK(o.max_batched_tokens == f.copts.n_batch);
  CHECK(o.models.at(0).context_length == per_seq);
  CHECK(o.models.at(0).vocab_size == kTinyVocabSize);
  CHECK_FALSE(o.kv.enable_prefix_caching);

  RequestSpec spec;
  spec.max_new_tokens = 4;
  CHECK((*engine)->Submit(spec).status().code() == absl::StatusCode::kInvalidArgument);
  spec.prompt_token_ids = {1, 2, kTinyVocabSize};  // last id outside the vocabulary
  CHECK((*engine)->Submit(spec).status().code() == absl::StatusCode::kInvalidArgument);
  spec.prompt_token_ids = std::vector<TokenId>(per_seq, 'a');  // no room to generate
  CHECK((*engine)->Submit(spec).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK((*engine)->pending() == 0);

  CHECK(LlamaEngine::Create(nullptr, LlamaEngineOptions{}).status().code() ==
        absl::StatusCode::kInvalidArgument);
  LlamaEngineOptions negative;
  negative.kv_blocks = -1;
  CHECK(LlamaEngine::Create(ctx->get(), negative).status().code() ==
        absl::StatusCode::kInvalidArgument);
  LlamaEngineOptions no_host;
  no_host.host_blocks = -1;
  absl::Status refused = LlamaEngine::Create(ctx->get(), no_host).status();
  CHECK(refused.code() == absl::StatusCode::kInvalidArgument);
  CHECK(refused.message().find("host_blocks is -1") != std::string::npos);
}

// A plain llama.cpp embedding of `prompt` on a one-sequence context: every
// position output, final-normed hidden states (pooling NONE), pooled here.
std::vector<float> PlainEmbedding(llama_context* ctx, const std::vector<int32_t>& prompt,
                                  bool mean) {
  llama_memory_clear(llama_get_memory(ctx), /*data=*/true);
  llama_set_embeddings(ctx, true);
  const int32_t n = static_cast<int32_t>(prompt.size());
  llama_batch batch = llama_batch_init(n, 0, 1);
  for (int32_t i = 0; i < n; ++i) {
    batch.token[i] = prompt[static_cast<size_t>(i)];
    batch.pos[i] = i;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = true;
  }
  batch.n_tokens = n;
  REQUIRE(llama_decode(ctx, batch) == 0);
  const int32_t width = llama_model_n_embd(llama_get_model(ctx));
  std::vector<float> v(static_cast<size_t>(width), 0.0f);
  for (int32_t i = mean ? 0 : n - 1; i < n; ++i) {
    const float* h = llama_get_embeddings_ith(ctx, i);
    REQUIRE(h != nullptr);
    for (int32_t e = 0; e < width; ++e) v[static_cast<size_t>(e)] += h[e];
  }
  float norm = 0.0f;
  for (float& x : v) {
    x /= mean ? static_cast<float>(n) : 1.0f;
    norm += x * x;
  }
  for (float& x : v) x /= std::sqrt(norm);
  llama_batch_free(batch);
  llama_set_embeddings(ctx, false);
  llama_memory_clear(llama_get_memory(ctx), /*data=*/true);
  return v;
}

// Embeddings beside generations, in chunks, with prefix caching and with
// preemption: each vector is the plain run's, and the generations keep
// their tokens.
TEST_CASE("llama.cpp under Hearth: embeddings equal plain embedding runs", "[llama_cpp][embed]") {
  Fixture f(GENERATE(KvLayout::kUnified, KvLayout::kPerSequence));
  INFO("kv_layout " << (f.unified() ? "unified" : "per-sequence"));
  testing::PromptSet set;
  set.count = 6;
  set.min_len = 20;
  set.max_len = 50;
  set.seed = 4;
  const auto prompts = f.Prompts(set);
  const bool cached = GENERATE(false, true);
  INFO("prefix caching " << cached);
  LlamaEngineOptions options;
  options.scheduler.max_prefill_chunk_tokens = 7;
  options.scheduler.kv.block_size = 8;
  if (cached) options.prefix_cache_sequences = 2;
  auto ctx = f.tiny->NewContext(f.copts);
  REQUIRE(ctx.ok());
  auto engine = LlamaEngine::Create(ctx->get(), options);
  REQUIRE(engine.ok());
  struct Asked {
    RequestId id;
    size_t prompt;
    bool embed, mean;
  };
  std::vector<Asked> asked;
  // Each prompt generated, then embedded both ways (so with prefix caching
  // the last-pooled one hits the generation's blocks).
  for (size_t i = 0; i < prompts.size(); ++i) {
    RequestSpec spec;
    spec.prompt_token_ids = prompts[i].prompt;
    spec.max_new_tokens = prompts[i].max_new_tokens;
    asked.push_back({*(*engine)->Submit(spec), i, false, false});
  }
  ManualClock clock;
  auto generated = testing::RunToCompletion(**engine, clock);
  REQUIRE(generated.ok());
  for (size_t i = 0; i < prompts.size(); ++i) {
    for (const bool mean : {false, true}) {
      RequestSpec spec;
      spec.prompt_token_ids = prompts[i].prompt;
      spec.max_new_tokens = 0;
      spec.kind = RequestKind::kEmbed;
      spec.pooling = mean ? Pooling::kMean : Pooling::kLast;
      asked.push_back({*(*engine)->Submit(spec), i, true, mean});
    }
  }
  // And a generation beside them, so some steps run both passes.
  RequestSpec beside;
  beside.prompt_token_ids = prompts[0].prompt;
  beside.max_new_tokens = prompts[0].max_new_tokens;
  asked.push_back({*(*engine)->Submit(beside), 0, false, false});
  auto embedded = testing::RunToCompletion(**engine, clock);
  REQUIRE(embedded.ok());
  std::vector<Completion> all = *std::move(generated);
  for (Completion& c : *embedded) all.push_back(std::move(c));
  REQUIRE(all.size() == asked.size());
  int32_t hits = 0;
  for (const Asked& a : asked) {
    auto c = std::find_if(all.begin(), all.end(), [&](const Completion& x) { return x.id == a.id; });
    REQUIRE(c != all.end());
    INFO("prompt " << a.prompt << (a.embed ? (a.mean ? " mean" : " last") : " generated") << ": "
                   << c->result.message);
    REQUIRE(c->result.phase == RequestPhase::kFinished);
    if (!a.embed) {
      CHECK(c->output == prompts[a.prompt].run.tokens);
      CHECK(c->embedding.empty());
      continue;
    }
    CHECK(c->result.finish_reason == FinishReason::kPooled);
    CHECK(c->output.empty());
    const std::vector<float> want = PlainEmbedding(f.reference.get(), prompts[a.prompt].prompt, a.mean);
    CHECK(testing::MaxAbsDiff(want, c->embedding) <= 1e-4f);
    if (a.mean) CHECK(c->result.cached_prompt_tokens == 0);
    hits += c->result.cached_prompt_tokens > 0;
  }
  // Last pooling reused the generations' cached blocks.
  CHECK((hits > 0) == cached);
}

}  // namespace
}  // namespace hearth::llama_cpp

#endif  // HEARTH_LLAMA_CPP_FOUND
