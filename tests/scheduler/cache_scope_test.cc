// Prefix-cache scopes through the whole scheduler (RequestSpec::cache_scope):
// a member's prompt never reuses another member's blocks, a scope shared on
// purpose does, a shared prefix is shared and the rest is the member's, an
// opted-out request computes everything; and nothing a member or the house
// can read (results, per-user, per-class and total metrics, gauges, the
// timeline) depends on what another scope's prompts contain.

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/metrics/engine_gauges.h"
#include "hearth/metrics/fanout_sink.h"
#include "hearth/metrics/metrics_collector.h"
#include "hearth/metrics/prometheus.h"
#include "hearth/metrics/timeline_recorder.h"
#include "hearth/scheduler/scheduler.h"
#include "tests/testing/scheduler_harness.h"
#include "scheduler/scheduler_peer.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;

constexpr int32_t kBlock = 16;
constexpr int32_t kVocab = 1000;

SchedulerOptions Options(int32_t blocks = 256) {
  SchedulerOptions o;
  o.users = {UserConfig{.name = "alice"}, UserConfig{.name = "bob"}, UserConfig{.name = "carol"}};
  o.kv.block_size = kBlock;
  o.kv.num_device_blocks = blocks;
  o.models[0].vocab_size = kVocab;
  return o;
}

// A scheduler in a harness, with a metrics collector and a timeline.
struct Run {
  explicit Run(SchedulerOptions o) {
    collector = *MetricsCollector::Create(MetricsOptionsFor(o));
    timeline = *TimelineRecorder::Create(
        {.user_names = {"alice", "bob", "carol"}, .class_names = {"default"}});
    fanout = std::make_unique<FanoutSink>(
        std::vector<MetricsSink*>{collector.get(), timeline.get()});
    o.metrics_sink = fanout.get();
    auto made = SchedulerHarness::Create(std::move(o));
    REQUIRE(made.ok());
    h = *std::move(made);
  }
  RequestId Submit(const RequestSpec& spec) {
    absl::StatusOr<RequestId> id = h->Submit(spec);
    INFO(id.status().ToString());
    REQUIRE(id.ok());
    return *id;
  }
  // Runs `spec` alone to its end and returns its result.
  RequestResult RunOne(const RequestSpec& spec) {
    h->keep_history(true);
    const RequestId id = Submit(spec);
    REQUIRE(h->RunUntilIdle().ok());
    first_entry = {};
    for (const testing::PlanCopy& p : h->history()) {
      if (const auto* s = p.Find(id); s != nullptr) {
        if (first_entry.num_tokens == 0) first_entry = *s;
        computed_positions += s->num_tokens;
      }
    }
    return h->results().at(id);
  }
  uint64_t UserHits(uint32_t user) { return collector->Report().users[user].prefix_hit_tokens; }
  std::string Prometheus() {
    PrometheusOptions po;
    po.gauges = EngineGaugesFrom(h->scheduler());
    return PrometheusText(collector->Report(), po);
  }

  std::unique_ptr<MetricsCollector> collector;
  std::unique_ptr<TimelineRecorder> timeline;
  std::unique_ptr<FanoutSink> fanout;
  std::unique_ptr<SchedulerHarness> h;
  testing::PlanCopy::Sequence first_entry;
  int32_t computed_positions = 0;
};

std::vector<TokenId> Ids(int32_t n, int32_t salt) {
  std::vector<TokenId> v(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = (i * 7 + salt) % kVocab;
  return v;
}

RequestSpec Prompt(uint32_t user, std::vector<TokenId> ids, int32_t max_new = 2) {
  RequestSpec s;
  s.user = UserId(user);
  s.prompt_tokens = static_cast<int32_t>(ids.size());
  s.prompt_token_ids = std::move(ids);
  s.max_new_tokens = max_new;
  return s;
}

TEST_CASE("cache scope: a member's identical prompt never reuses another member's blocks",
          "[scheduler]") {
  Run run(Options());
  const std::vector<TokenId> text = Ids(128, 3);
  CHECK(run.RunOne(Prompt(0, text)).cached_prompt_tokens == 0);
  // Bob sends what Alice sent: nothing is found, every position is computed.
  run.computed_positions = 0;
  const RequestResult bob = run.RunOne(Prompt(1, text));
  CHECK(bob.cached_prompt_tokens == 0);
  CHECK(run.first_entry.start_position == 0);
  CHECK(run.computed_positions >= 128);
  CHECK(run.UserHits(1) == 0);
  // Alice's own repeat reuses all but the last position, and so does Bob's.
  CHECK(run.RunOne(Prompt(0, text)).cached_prompt_tokens == 127);
  CHECK(run.RunOne(Prompt(1, text)).cached_prompt_tokens == 127);
  CHECK(run.UserHits(0) == 127);
  CHECK(run.UserHits(1) == 127);
  CHECK(run.h->scheduler().stats().prefix_hit_tokens == 254);
}

TEST_CASE("cache scope: a request that ends in its prefill step leaves its blocks cached",
          "[scheduler]") {
  Run run(Options());
  const std::vector<TokenId> text = Ids(64, 3);
  CHECK(run.RunOne(Prompt(0, text, /*max_new=*/1)).cached_prompt_tokens == 0);
  CHECK(run.RunOne(Prompt(0, text, /*max_new=*/1)).cached_prompt_tokens == 63);
  CHECK(run.RunOne(Prompt(1, text, /*max_new=*/1)).cached_prompt_tokens == 0);
}

TEST_CASE("cache scope: a scope shared by name is reused across members", "[scheduler]") {
  Run run(Options());
  RequestSpec alice = Prompt(0, Ids(128, 3));
  alice.cache_scope.name = "household-notes";
  RequestSpec bob = alice;
  bob.user = UserId(1);
  CHECK(run.RunOne(alice).cached_prompt_tokens == 0);
  CHECK(run.RunOne(bob).cached_prompt_tokens == 127);
  CHECK(run.first_entry.start_position == 127);
  CHECK(run.UserHits(1) == 127);
  // Outside the named scope, the same tokens find nothing: not Bob's own
  // scope, not another name.
  CHECK(run.RunOne(Prompt(1, alice.prompt_token_ids)).cached_prompt_tokens == 0);
  RequestSpec other = bob;
  other.cache_scope.name = "household-notes2";
  CHECK(run.RunOne(other).cached_prompt_tokens == 0);
}

TEST_CASE("cache scope: a shared prefix is reused across members, the rest only by its member",
          "[scheduler]") {
  Run run(Options());
  // A 64-token common system prompt, then the same question from everyone.
  std::vector<TokenId> text = Ids(64, 5);
  for (TokenId t : Ids(64, 9)) text.push_back(t);
  auto templated = [&](uint32_t user, int32_t shared) {
    RequestSpec s = Prompt(user, text);
    s.cache_scope.shared_prefix_tokens = shared;
    s.cache_scope.shared_prefix_scope = "system-prompt";
    return s;
  };
  CHECK(run.RunOne(templated(0, 64)).cached_prompt_tokens == 0);
  // Bob finds the four shared blocks and computes his own from position 64,
  // although his rest equals Alice's.
  CHECK(run.RunOne(templated(1, 64)).cached_prompt_tokens == 64);
  CHECK(run.first_entry.start_position == 64);
  // Alice finds hers: the prefix and her own blocks after it.
  CHECK(run.RunOne(templated(0, 64)).cached_prompt_tokens == 127);
  // A prefix that ends inside a block shares the whole blocks before it;
  // the block it ends in is Carol's own.
  CHECK(run.RunOne(templated(2, 70)).cached_prompt_tokens == 64);
  // And the same prefix without the shared scope is private.
  CHECK(run.RunOne(Prompt(2, text)).cached_prompt_tokens == 0);
  // Another start never matches the shared blocks.
  RequestSpec different = templated(1, 64);
  different.prompt_token_ids[0] += 1;
  CHECK(run.RunOne(different).cached_prompt_tokens == 0);
}

TEST_CASE("cache scope: an opted-out request computes every position and leaves nothing",
          "[scheduler]") {
  Run run(Options());
  RequestSpec spec = Prompt(0, Ids(128, 3));
  spec.cache_scope.opt_out = true;
  for (int i = 0; i < 2; ++i) {
    run.computed_positions = 0;
    const RequestResult r = run.RunOne(spec);
    CHECK(r.cached_prompt_tokens == 0);
    CHECK(run.first_entry.start_position == 0);
    CHECK(run.computed_positions == 128 + 1);  // The prompt, then one decode.
  }
  CHECK(internal::SchedulerPeer::allocator(run.h->scheduler()).num_cached() == 0);
  // Its blocks were never registered: the same prompt in Alice's own scope
  // finds nothing either.
  CHECK(run.RunOne(Prompt(0, spec.prompt_token_ids)).cached_prompt_tokens == 0);
  // Cached in her scope now, it still does not serve an opted-out request.
  CHECK(run.RunOne(spec).cached_prompt_tokens == 0);
  CHECK(run.UserHits(0) == 0);
}

// The noninterference property. A random household: three members, prompts
// drawn from a few shared texts (so members often send the same tokens),
// scopes of every kind, a cache small enough to evict, requests overlapping.
// The second run replaces every token Alice keeps in her own scope with
// another (a fixed permutation, so her own repeats stay repeats), and keeps
// the tokens she deliberately shares. If no lookup can reach another scope,
// nothing anyone can read changes: every result, the whole Prometheus page
// (per-user, per-class and total counters, gauges) and the timeline.
struct Scenario {
  std::vector<RequestSpec> specs;
  std::vector<int32_t> steps_after;  // Steps run after each submission.
};

Scenario RandomScenario(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<TokenId>> texts;
  for (int t = 0; t < 3; ++t) texts.push_back(Ids(160, 11 * t + 1));
  Scenario s;
  for (int i = 0; i < 40; ++i) {
    const auto& base = texts[rng() % texts.size()];
    const int32_t len = 20 + static_cast<int32_t>(rng() % 130);
    std::vector<TokenId> ids(base.begin(), base.begin() + len);
    // Some diverge from the shared text part way.
    if (rng() % 3 == 0) ids[rng() % ids.size()] = static_cast<TokenId>(rng() % kVocab);
    // Output length before user: the order in which the call's arguments
    // were evaluated when both were drawn inside it (right to left, by GCC;
    // Clang went left to right), so each seed's scenario stays the same.
    const int32_t max_new = 1 + static_cast<int32_t>(rng() % 40);
    const auto user = static_cast<uint32_t>(rng() % 3);
    RequestSpec spec = Prompt(user, std::move(ids), max_new);
    switch (rng() % 10) {
      case 0:
      case 1:
        spec.cache_scope.shared_prefix_tokens =
            std::min<int32_t>(spec.prompt_tokens, 8 + static_cast<int32_t>(rng() % 40));
        spec.cache_scope.shared_prefix_scope = "template";
        break;
      case 2:
        spec.cache_scope.name = "house";
        break;
      case 3:
        spec.cache_scope.opt_out = true;
        break;
      default:
        break;
    }
    s.specs.push_back(std::move(spec));
    s.steps_after.push_back(static_cast<int32_t>(rng() % 6));
  }
  return s;
}

// Alice's own-scope tokens, permuted (389 is prime to the vocabulary, and
// t -> 389 t + 1 has no fixed point mod 1000).
Scenario PermuteAlice(Scenario s) {
  for (RequestSpec& spec : s.specs) {
    if (spec.user != UserId(0) || !spec.cache_scope.name.empty()) continue;
    const size_t from = static_cast<size_t>(spec.cache_scope.shared_prefix_tokens / kBlock * kBlock);
    for (size_t p = from; p < spec.prompt_token_ids.size(); ++p) {
      TokenId& t = spec.prompt_token_ids[p];
      t = static_cast<TokenId>((static_cast<int64_t>(t) * 389 + 1) % kVocab);
    }
  }
  return s;
}

struct Observed {
  std::vector<RequestResult> results;
  std::string prometheus;
  std::string timeline;
  uint64_t hits = 0;
};

Observed Play(const Scenario& s) {
  SchedulerOptions o = Options(/*blocks=*/48);
  o.max_running = 6;
  Run run(o);
  std::vector<RequestId> ids;
  for (size_t i = 0; i < s.specs.size(); ++i) {
    ids.push_back(run.Submit(s.specs[i]));
    for (int32_t k = 0; k < s.steps_after[i]; ++k) REQUIRE(run.h->Step().ok());
  }
  REQUIRE(run.h->RunUntilIdle().ok());
  Observed out;
  for (RequestId id : ids) out.results.push_back(run.h->results().at(id));
  out.prometheus = run.Prometheus();
  out.timeline = run.timeline->Json();
  out.hits = run.h->scheduler().stats().prefix_hit_tokens;
  return out;
}

TEST_CASE("cache scope: what anyone can read never depends on another scope's tokens",
          "[scheduler]") {
  int64_t shared_hits_across_members = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    INFO("seed " << seed);
    const Scenario base = RandomScenario(seed);
    const Observed a = Play(base);
    const Observed b = Play(PermuteAlice(base));
    REQUIRE(a.results.size() == b.results.size());
    for (size_t i = 0; i < a.results.size(); ++i) {
      INFO("request " << i << " of user " << base.specs[i].user.value());
      const RequestResult& x = a.results[i];
      const RequestResult& y = b.results[i];
      CHECK(x.phase == y.phase);
      CHECK(x.cached_prompt_tokens == y.cached_prompt_tokens);
      CHECK(x.output_tokens == y.output_tokens);
      CHECK(x.preemptions == y.preemptions);
      CHECK(x.first_admit_time == y.first_admit_time);
      CHECK(x.first_token_time == y.first_token_time);
      CHECK(x.end_time == y.end_time);
      if (!base.specs[i].cache_scope.shared_prefix_scope.empty() && x.cached_prompt_tokens > 0) {
        ++shared_hits_across_members;
      }
    }
    CHECK(a.hits == b.hits);
    CHECK(a.prometheus == b.prometheus);
    CHECK(a.timeline == b.timeline);
    CHECK(a.hits > 0);  // The scenario reuses blocks at all.
  }
  CHECK(shared_hits_across_members > 0);
}

}  // namespace
}  // namespace hearth
