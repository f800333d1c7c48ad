// Prefix caching on llama.cpp: Hearth's hits start sequences past position
// 0 on cells llama.cpp already holds (shared from the sequence that computed
// them, kept on spare sequence ids after it ended), and the generations equal
// plain one-sequence llama.cpp runs: tokens exactly, logits within 1e-3. With
// one spare id, retained cells are evicted and hits on them are recomputed
// from the recorded tokens; results stay the same. On per-sequence streams
// a hit takes over the stream of the ended sequence sharing its prefix, or
// copies the whole stream of a running one, instead.
#ifdef HEARTH_LLAMA_CPP_FOUND

#include <algorithm>
#include <random>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "catch2/catch.hpp"
#include "llama_test_env.h"

namespace hearth::llama_cpp {
namespace {

using testing::ReferencePrompt;
using testing::TinyLlama;

// Prompts that share a 40-token stem (two and a half 16-token blocks), then
// differ, each free of near-ties in its reference run.
std::vector<ReferencePrompt> StemPrompts(llama_context* reference, int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> stem;
  for (int i = 0; i < 40; ++i) stem.push_back(32 + static_cast<int32_t>(rng() % 95));
  std::vector<ReferencePrompt> out;
  GreedyRunOptions options;
  options.keep_logits = true;
  for (int attempt = 0; static_cast<int>(out.size()) < count && attempt < 50 * count; ++attempt) {
    ReferencePrompt p;
    p.prompt = stem;
    const int extra = 8 + static_cast<int>(rng() % 30);
    for (int i = 0; i < extra; ++i) p.prompt.push_back(32 + static_cast<int32_t>(rng() % 95));
    p.max_new_tokens = 12;
    auto run = RunGreedyAlone(reference, p.prompt, p.max_new_tokens, options);
    REQUIRE(run.ok());
    if (std::any_of(run->margins.begin(), run->margins.end(), [](float m) { return m < 0.02f; })) {
      continue;
    }
    p.run = *std::move(run);
    out.push_back(std::move(p));
  }
  REQUIRE(static_cast<int>(out.size()) == count);
  return out;
}

// A deterministic context of the tiny model: one thread, no flash
// attention, batches of 64.
ContextOptions TestContext(KvLayout layout, int32_t n_ctx, int32_t n_seq_max) {
  ContextOptions o;
  o.n_ctx = n_ctx;
  o.n_batch = 64;
  o.n_seq_max = n_seq_max;
  o.n_threads = 1;
  o.disable_flash_attention = true;
  o.kv_layout = layout;
  return o;
}

struct Round {
  std::vector<Completion> done;
  absl::flat_hash_map<RequestId, std::vector<std::vector<float>>> logits;
  std::vector<RequestId> ids;
};

// Submits `prompts` at once and runs them to the end.
Round RunRound(LlamaEngine& engine, const std::vector<ReferencePrompt>& prompts,
               ManualClock& clock) {
  Round round;
  engine.executor().set_logits_observer([&](RequestId id, absl::Span<const float> row) {
    round.logits[id].emplace_back(row.begin(), row.end());
  });
  for (const ReferencePrompt& p : prompts) {
    RequestSpec spec;
    spec.prompt_token_ids = p.prompt;
    spec.max_new_tokens = p.max_new_tokens;
    auto id = engine.Submit(spec);
    REQUIRE(id.ok());
    round.ids.push_back(*id);
  }
  auto done = testing::RunToCompletion(engine, clock);
  REQUIRE(done.ok());
  round.done = *std::move(done);
  return round;
}

int32_t ExpectSameAsAlone(const Round& round, const std::vector<ReferencePrompt>& prompts) {
  int32_t cached = 0;
  REQUIRE(round.done.size() == prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto it = std::find_if(round.done.begin(), round.done.end(),
                           [&](const Completion& c) { return c.id == round.ids[i]; });
    REQUIRE(it != round.done.end());
    INFO("prompt " << i << ": " << it->result.message);
    CHECK(it->result.phase == RequestPhase::kFinished);
    CHECK(it->output == prompts[i].run.tokens);
    cached += it->result.cached_prompt_tokens;
    const auto& rows = round.logits.at(round.ids[i]);
    REQUIRE(rows.size() == prompts[i].run.logits.size());
    for (size_t k = 0; k < rows.size(); ++k) {
      CHECK(testing::MaxAbsDiff(prompts[i].run.logits[k], rows[k]) <= 1e-3f);
    }
  }
  return cached;
}

TEST_CASE("llama.cpp under Hearth: prefix-cache hits share cells and equal single runs",
          "[llama_cpp]") {
  auto tiny = TinyLlama::Create();
  REQUIRE(tiny.ok());
  const KvLayout layout = GENERATE(KvLayout::kUnified, KvLayout::kPerSequence);
  INFO("kv_layout " << (layout == KvLayout::kUnified ? "unified" : "per-sequence"));
  ContextOptions copts = TestContext(layout, /*n_ctx=*/1024, /*n_seq_max=*/16);
  ContextOptions alone = copts;
  alone.n_seq_max = 1;
  auto reference = (*tiny)->NewContext(alone);
  REQUIRE(reference.ok());
  const std::vector<ReferencePrompt> prompts = StemPrompts(reference->get(), 6, 7);
  const std::vector<ReferencePrompt> others = StemPrompts(reference->get(), 7, 8);

  struct Case {
    const char* what;
    int32_t n_seq_max, spare_ids;
  };
  // With one spare id of eight, the third round's seven sequences take the
  // ids the second round's left cells on.
  for (Case c : {Case{"spare ids for every ended sequence", 16, 8}, Case{"one spare id", 8, 1}}) {
    INFO(c.what);
    copts.n_seq_max = c.n_seq_max;
    auto ctx = (*tiny)->NewContext(copts);
    REQUIRE(ctx.ok());
    LlamaEngineOptions options;
    options.prefix_cache_sequences = c.spare_ids;
    auto engine = LlamaEngine::Create(ctx->get(), options);
    REQUIRE(engine.ok());
    CHECK((*engine)->scheduler().options().kv.enable_prefix_caching);
    CHECK((*engine)->scheduler().options().max_running == c.n_seq_max - c.spare_ids);
    ManualClock clock;
    // The first prompt alone fills the cache with the stem's two blocks.
    std::vector<ReferencePrompt> first(prompts.begin(), prompts.begin() + 1);
    ExpectSameAsAlone(RunRound(**engine, first, clock), first);
    // Everyone again, the first one repeated: the stem hits for all, the
    // repeat's whole prompt but its last position.
    std::vector<ReferencePrompt> again = prompts;
    again.push_back(prompts[0]);
    const int32_t cached = ExpectSameAsAlone(RunRound(**engine, again, clock), again);
    const int32_t repeat_cached = static_cast<int32_t>(prompts[0].prompt.size()) / 16 * 16;
    CHECK(cached >= 32 * static_cast<int32_t>(prompts.size()) + repeat_cached - 32);
    // Once more, now that the first round's cells sit on retained ids.
    ExpectSameAsAlone(RunRound(**engine, again, clock), again);
    // Seven other prompts take every id; then the first prompt's blocks,
    // still cached in Hearth, have lost their cells with one spare id.
    ExpectSameAsAlone(RunRound(**engine, others, clock), others);
    CHECK(ExpectSameAsAlone(RunRound(**engine, first, clock), first) >= 32);
    const LlamaExecutorStats& stats = (*engine)->executor().stats();
    CHECK(stats.prefix_shared_positions > 0);
    // Streams: hits on ended sequences take their streams over, hits on
    // the sequences that took them copy.
    CHECK((stats.prefix_stream_reuses > 0) == (layout == KvLayout::kPerSequence));
    CHECK((stats.prefix_stream_copies > 0) == (layout == KvLayout::kPerSequence));
    if (c.spare_ids == 1) {
      CHECK(stats.retained_evictions > 0);
      // A stream keeps its whole prefix while retained: the last retained
      // sequence still holds the stem there, which the unified pool's
      // retained holders give up to the sequences that took their blocks.
      if (layout == KvLayout::kUnified) CHECK(stats.prefix_repaired_positions > 0);
    } else {
      CHECK(stats.prefix_repaired_positions == 0);
    }
    CHECK(stats.out_of_kv_returns == 0);
    REQUIRE((*engine)->scheduler().CheckInvariants().ok());
  }
}

TEST_CASE("llama.cpp under Hearth: a hit on a running sequence's blocks equals single runs",
          "[llama_cpp]") {
  // The holder is still decoding when the hit comes: its cells are copied
  // (streams: its whole stream, trimmed to what it has computed) while it
  // goes on writing its own.
  auto tiny = TinyLlama::Create();
  REQUIRE(tiny.ok());
  const KvLayout layout = GENERATE(KvLayout::kUnified, KvLayout::kPerSequence);
  INFO("kv_layout " << (layout == KvLayout::kUnified ? "unified" : "per-sequence"));
  ContextOptions copts = TestContext(layout, /*n_ctx=*/1024, /*n_seq_max=*/8);
  ContextOptions alone = copts;
  alone.n_seq_max = 1;
  auto reference = (*tiny)->NewContext(alone);
  REQUIRE(reference.ok());
  const std::vector<ReferencePrompt> prompts = StemPrompts(reference->get(), 3, 11);
  auto ctx = (*tiny)->NewContext(copts);
  REQUIRE(ctx.ok());
  LlamaEngineOptions options;
  options.prefix_cache_sequences = 2;
  auto engine = LlamaEngine::Create(ctx->get(), options);
  REQUIRE(engine.ok());
  ManualClock clock;
  Round round;
  (*engine)->executor().set_logits_observer([&](RequestId id, absl::Span<const float> row) {
    round.logits[id].emplace_back(row.begin(), row.end());
  });
  for (const ReferencePrompt& p : prompts) {
    RequestSpec spec;
    spec.prompt_token_ids = p.prompt;
    spec.max_new_tokens = p.max_new_tokens;
    auto id = (*engine)->Submit(spec);
    REQUIRE(id.ok());
    round.ids.push_back(*id);
    // The next one arrives after this one's prefill, while it decodes.
    for (int k = 0; k < 3; ++k) REQUIRE((*engine)->Step(clock).ok());
  }
  auto done = testing::RunToCompletion(**engine, clock);
  REQUIRE(done.ok());
  round.done = *std::move(done);
  CHECK(ExpectSameAsAlone(round, prompts) >= 2 * 32);
  const LlamaExecutorStats& stats = (*engine)->executor().stats();
  CHECK(stats.prefix_shared_positions >= 2 * 32);
  CHECK(stats.prefix_repaired_positions == 0);
  CHECK((stats.prefix_stream_copies == 2) == (layout == KvLayout::kPerSequence));
  CHECK(stats.prefix_stream_reuses == 0);
}

TEST_CASE("llama.cpp under Hearth: a hit whose holder was evicted is recomputed, equal to single runs",
          "[llama_cpp]") {
  // Two ids, one running: the first prompt's holder is evicted for a third
  // prompt's id, then the first prompt comes back and hits Hearth's cache.
  auto tiny = TinyLlama::Create();
  REQUIRE(tiny.ok());
  const KvLayout layout = GENERATE(KvLayout::kUnified, KvLayout::kPerSequence);
  INFO("kv_layout " << (layout == KvLayout::kUnified ? "unified" : "per-sequence"));
  ContextOptions copts = TestContext(layout, /*n_ctx=*/512, /*n_seq_max=*/2);
  ContextOptions alone = copts;
  alone.n_seq_max = 1;
  auto reference = (*tiny)->NewContext(alone);
  REQUIRE(reference.ok());
  auto ctx = (*tiny)->NewContext(copts);
  REQUIRE(ctx.ok());
  LlamaEngineOptions options;
  options.prefix_cache_sequences = 1;
  auto engine = LlamaEngine::Create(ctx->get(), options);
  REQUIRE(engine.ok());
  ManualClock clock;
  const std::vector<ReferencePrompt> first = StemPrompts(reference->get(), 1, 21);
  ExpectSameAsAlone(RunRound(**engine, first, clock), first);
  // The second ends retained beside the first; the third's id is the
  // first's, evicted.
  for (uint64_t seed : {22, 23}) {
    const std::vector<ReferencePrompt> other = StemPrompts(reference->get(), 1, seed);
    ExpectSameAsAlone(RunRound(**engine, other, clock), other);
  }
  CHECK(ExpectSameAsAlone(RunRound(**engine, first, clock), first) >= 32);
  const LlamaExecutorStats& stats = (*engine)->executor().stats();
  CHECK(stats.retained_evictions > 0);
  CHECK(stats.prefix_repaired_positions >= 32);
}

TEST_CASE("llama.cpp engine refuses prefix_cache_sequences outside [0, n_seq_max - 1]",
          "[llama_cpp]") {
  auto tiny = TinyLlama::Create();
  REQUIRE(tiny.ok());
  ContextOptions copts;
  copts.n_ctx = 256;
  copts.n_seq_max = 4;
  copts.n_threads = 1;
  auto ctx = (*tiny)->NewContext(copts);
  REQUIRE(ctx.ok());
  for (int32_t bad : {-1, 4, 1 << 30}) {
    LlamaEngineOptions options;
    options.prefix_cache_sequences = bad;
    auto engine = LlamaEngine::Create(ctx->get(), options);
    REQUIRE(engine.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(engine.status().message().find("prefix_cache_sequences is") != std::string::npos);
  }
  CHECK(LlamaStepExecutor::Create(ctx->get(), {.block_size = -1}).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("llama.cpp under Hearth: parallel samples share the prompt's cells and each equals "
          "its seed alone",
          "[llama_cpp][samples]") {
  auto tiny = TinyLlama::Create();
  REQUIRE(tiny.ok());
  const KvLayout layout = GENERATE(KvLayout::kUnified, KvLayout::kPerSequence);
  INFO("kv_layout " << (layout == KvLayout::kUnified ? "unified" : "per-sequence"));
  ContextOptions copts = TestContext(layout, /*n_ctx=*/1024, /*n_seq_max=*/8);
  std::mt19937_64 rng(11);
  std::vector<int32_t> prompt;
  for (int i = 0; i < 45; ++i) prompt.push_back(32 + static_cast<int32_t>(rng() % 95));
  const auto sampling = [](uint64_t handle) {
    return SamplingParams{.temperature = 1.0f, .seed = handle * 0x9E3779B97F4A7C15ull + 1};
  };
  LlamaEngineOptions options;
  options.prefix_cache_sequences = 2;
  options.sampling = sampling;
  constexpr int32_t kSamples = 4;
  constexpr uint64_t kHandle = 500;
  // Each sample's seed alone, on a fresh engine each.
  std::vector<std::vector<TokenId>> alone;
  for (int32_t k = 0; k < kSamples; ++k) {
    auto ctx = (*tiny)->NewContext(copts);
    REQUIRE(ctx.ok());
    auto engine = LlamaEngine::Create(ctx->get(), options);
    REQUIRE(engine.ok());
    RequestSpec spec;
    spec.prompt_token_ids = prompt;
    spec.max_new_tokens = 16;
    spec.handle = kHandle + static_cast<uint64_t>(k);
    REQUIRE((*engine)->Submit(spec).ok());
    ManualClock clock;
    auto done = testing::RunToCompletion(**engine, clock);
    REQUIRE(done.ok());
    REQUIRE(done->size() == 1);
    alone.push_back((*done)[0].output);
  }
  // The seeds do their work: not every sample says the same.
  CHECK(std::any_of(alone.begin() + 1, alone.end(),
                    [&](const std::vector<TokenId>& o) { return o != alone[0]; }));
  auto ctx = (*tiny)->NewContext(copts);
  REQUIRE(ctx.ok());
  auto engine = LlamaEngine::Create(ctx->get(), options);
  REQUIRE(engine.ok());
  RequestSpec group;
  group.prompt_token_ids = prompt;
  group.max_new_tokens = 16;
  group.num_samples = kSamples;
  group.handle = kHandle;
  auto first = (*engine)->Submit(group);
  REQUIRE(first.ok());
  ManualClock clock;
  auto done = testing::RunToCompletion(**engine, clock);
  REQUIRE(done.ok());
  REQUIRE(done->size() == static_cast<size_t>(kSamples));
  int32_t reused = 0;
  for (const Completion& c : *done) {
    const int32_t k = c.result.sample_index;
    INFO("sample " << k << ": " << c.result.message);
    CHECK(c.result.phase == RequestPhase::kFinished);
    CHECK(c.result.group == *first);
    REQUIRE(k >= 0);
    REQUIRE(k < kSamples);
    CHECK(c.output == alone[static_cast<size_t>(k)]);
    if (k > 0) reused += c.result.cached_prompt_tokens > 0;
  }
  // The later samples computed only the prompt's last position, on the
  // first sample's cells.
  CHECK(reused == kSamples - 1);
  CHECK((*engine)->executor().stats().prefix_shared_positions > 0);
  REQUIRE((*engine)->scheduler().CheckInvariants().ok());
}

}  // namespace
}  // namespace hearth::llama_cpp

#endif  // HEARTH_LLAMA_CPP_FOUND
