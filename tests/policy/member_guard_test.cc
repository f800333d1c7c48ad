// The household policy's member guard (PolicyTreeConfig::member_guard): once
// deadlines cannot be met, two backlogged members share the engine by weight
// whatever classes their work is in, within the Virtual Token Counter's bound.

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/container/flat_hash_map.h"
#include "hearth/policy/policy_tree.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;

constexpr int32_t kKvTokens = 1024;
constexpr int32_t kBudget = 256;
constexpr int32_t kLongestPrompt = 200;
constexpr absl::Duration kLoosestTarget = absl::Milliseconds(60);

struct Members {
  double weight[2] = {1, 1};
  // Work classes each member's requests are drawn from (voice, chat, agent).
  std::vector<uint32_t> classes[2];
};

SchedulerOptions Machine(const Members& m, bool guard) {
  SchedulerOptions o;
  o.kv.block_size = 16;
  o.kv.num_device_blocks = kKvTokens / 16;
  o.kv.enable_prefix_caching = false;
  o.max_batched_tokens = kBudget;
  o.max_running = 8;
  o.max_prefill_chunk_tokens = 128;
  o.users = {{.name = "a", .weight = m.weight[0]}, {.name = "b", .weight = m.weight[1]}};
  // Targets shorter than a few steps: every request is late soon after the
  // backlog arrives, and the guard alone orders it.
  o.work_classes = {{.name = "voice", .ttft_slo = absl::Milliseconds(20)},
                    {.name = "chat", .ttft_slo = absl::Milliseconds(40)},
                    {.name = "agent", .ttft_slo = kLoosestTarget}};
  PolicyTreeConfig tree = HouseholdTreeConfig();
  tree.member_guard = guard;
  // Service counted as tokens, as the test counts it from plans.
  tree.vtc.decode_token_weight = 1;
  o.policy_factory = *PolicyTreeFactory(tree);
  return o;
}

// Backlogs both members at once and returns the largest difference of their
// weighted service (tokens computed for the first time, over the member's
// weight) while both still had requests waiting, or the first beyond
// `stop_above`.
double WorstGap(const Members& m, bool guard, uint64_t seed, double stop_above) {
  auto h = SchedulerHarness::Create(Machine(m, guard), seed);
  REQUIRE(h.ok());
  std::mt19937_64 rng(seed);
  absl::flat_hash_map<RequestId, uint32_t> owner;
  std::vector<RequestId> mine[2];
  for (int i = 0; i < 60; ++i) {
    for (uint32_t u = 0; u < 2; ++u) {
      RequestSpec spec;
      spec.user = UserId(u);
      spec.work_class = WorkClassId(m.classes[u][rng() % m.classes[u].size()]);
      spec.prompt_tokens = std::uniform_int_distribution<int32_t>(16, kLongestPrompt)(rng);
      spec.max_new_tokens = std::uniform_int_distribution<int32_t>(8, 100)(rng);
      absl::StatusOr<RequestId> id = (*h)->Submit(spec);
      REQUIRE(id.ok());
      owner[*id] = u;
      mine[u].push_back(*id);
    }
  }
  double served[2] = {0, 0};
  absl::flat_hash_map<RequestId, int32_t> reached;
  double worst = 0;
  for (int step = 0; step < 20000; ++step) {
    REQUIRE((*h)->Step().ok());
    for (const auto& s : (*h)->last_plan().sequences) {
      int32_t& most = reached[s.id];
      const int32_t end = s.start_position + s.num_tokens;
      served[owner.at(s.id)] += std::max(0, end - std::max(most, s.start_position));
      most = std::max(most, end);
    }
    bool both = true;
    for (uint32_t u = 0; u < 2 && both; ++u) {
      both = std::any_of(mine[u].begin(), mine[u].end(), [&](RequestId id) {
        auto v = (*h)->scheduler().GetRequest(id);
        return v.ok() && v->phase == RequestPhase::kWaiting;
      });
    }
    if (!both) break;
    worst = std::max(worst, std::abs(served[0] / m.weight[0] - served[1] / m.weight[1]));
    if (worst > stop_above) break;
  }
  return worst;
}

TEST_CASE("member guard: two backlogged members stay within the VTC bound across classes",
          "[policy][scheduler][property]") {
  // 2 * max(w_p * L_input, w_q * M), plus what earliest-deadline-first serves
  // before the loosest first deadline passes (a step's budget every 10 ms).
  const double bound = 2.0 * std::max(kLongestPrompt, kKvTokens) +
                       kBudget * static_cast<double>(kLoosestTarget / absl::Milliseconds(10));
  std::mt19937_64 rng(7);
  int unguarded_over = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    Members m;
    m.weight[0] = 1 + static_cast<double>(rng() % 3);
    m.weight[1] = 1 + static_cast<double>(rng() % 3);
    // One member sends the tight class, the other the loose ones (or a mix),
    // so that deadlines alone would always serve the first.
    m.classes[0] = rng() % 2 == 0 ? std::vector<uint32_t>{0} : std::vector<uint32_t>{0, 1};
    m.classes[1] = rng() % 2 == 0 ? std::vector<uint32_t>{2} : std::vector<uint32_t>{1, 2};
    const double gap = WorstGap(m, /*guard=*/true, seed, bound);
    const double unguarded = WorstGap(m, /*guard=*/false, seed, bound);
    INFO("seed " << seed << " weights " << m.weight[0] << ":" << m.weight[1] << " gap " << gap
                 << " unguarded " << unguarded << " bound " << bound);
    CHECK(gap <= bound);
    if (unguarded > bound) ++unguarded_over;
  }
  // Without the guard, late work by deadline lets one member starve the
  // other: the bound means something here.
  CHECK(unguarded_over >= 4);
}

}  // namespace
}  // namespace hearth
