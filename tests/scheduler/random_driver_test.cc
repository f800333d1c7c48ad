// The randomized driver: thousands of seeded sequences of Submit / Cancel /
// SetPriority / SetWorkClass / Plan / Complete with random sizes and random configurations, every
// invariant checked after every call (SchedulerHarness), and at the end, with
// the engine kept running, every request reaches exactly one terminal state.
// Requests carry random host handles, checked in every plan entry and result
// (SchedulerHarness); the engine fails some sequences, reports others out
// of KV, and accepts a random number of speculative decodes' drafts
// (FakeExecutor).

#include <cstdlib>
#include <random>

#include <catch2/catch.hpp>

#include "hearth/policy/fifo.h"
#include "tests/testing/random_workload.h"
#include "tests/testing/residency_workload.h"

namespace hearth {
namespace {

TEST_CASE("Random operation sequences keep every invariant (FIFO)", "[scheduler][property]") {
  for (uint64_t seed = 1; seed <= 1500; ++seed) {
    INFO("seed " << seed);
    testing::RandomWorkloadStats stats;
    absl::Status s = testing::RunRandomWorkload(seed, /*policy=*/nullptr, &stats);
    if (!s.ok()) FAIL(s.ToString());
  }
}

TEST_CASE("Random workloads exercise what they claim to", "[scheduler][property]") {
  testing::RandomWorkloadStats total;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    testing::RandomWorkloadStats stats;
    REQUIRE(testing::RunRandomWorkload(seed, nullptr, &stats).ok());
    total.Add(stats);
  }
  // Guard against a driver that silently stopped covering a path.
  CHECK(total.finished > 1000);
  CHECK(total.cancelled > 50);
  CHECK(total.timed_out > 10);
  CHECK(total.failed > 10);
  CHECK(total.rejected_at_submit > 50);
  CHECK(total.rejected_at_intake > 5);  // a parent of another user, ended
  CHECK(total.preemptions_recompute > 50);
  CHECK(total.preemptions_swap > 50);
  CHECK(total.preemptions_out_of_kv > 50);
  CHECK(total.retries > 10);
  CHECK(total.prefix_hit_tokens > 1000);
  CHECK(total.copy_on_write > 5);
  CHECK(total.victims_checked > 50);
  CHECK(total.live_changes > 200);
  CHECK(total.draft_tokens > 1000);
  CHECK(total.adapter_configs > 20);
  CHECK(total.overlap_configs > 50);
  CHECK(total.pending_inputs > 1000);
  CHECK(total.voided_entries > 20);
  CHECK(total.held > 200);
  CHECK(total.releases > 100);
  CHECK(total.embeddings > 200);
  CHECK(total.pooled > 100);
  CHECK(total.sample_groups > 100);
  CHECK(total.photos > 100);
  CHECK(total.models_added > 200);
  CHECK(total.models_removed > 100);
  CHECK(total.runtime_model_requests > 200);
}

// Residency with adapters, several bases and memory for only some of them,
// no deadline and no queue timeout: every request ends whichever order its
// burst arrived in, and NextEventTime() never has an engine plan for
// nothing. 500 seeds in each order here; HEARTH_RESIDENCY_SEEDS=N runs N.
TEST_CASE("Random residency workloads end every request in either arrival order",
          "[scheduler][property][residency]") {
  uint64_t seeds = 500;
  if (const char* n = std::getenv("HEARTH_RESIDENCY_SEEDS")) seeds = std::strtoull(n, nullptr, 10);
  testing::ResidencyWorkloadStats total;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    for (const auto order : {testing::ArrivalOrder::kAsDrawn, testing::ArrivalOrder::kReversed}) {
      absl::Status s = testing::RunResidencyWorkload(seed, order, &total);
      if (!s.ok()) FAIL(s.ToString());
    }
  }
  INFO("residency: " << total.requests << " requests, " << total.loads << " loads, "
                     << total.unloads << " unloads, " << total.tight_configs << " tight");
  // Guard against a driver that silently stopped covering a path.
  if (seeds >= 500) {
    CHECK(total.tight_configs > 500);
    CHECK(total.loads > 5000);
    CHECK(total.unloads > 2000);
    CHECK(total.finished > 10000);
    CHECK(total.failed > 50);
  }
}

}  // namespace
}  // namespace hearth
