// Capacity by bisection (capacity_search.h) and the latency capacity of a
// scenario (latency_capacity.h): the bisection answers a load at which the
// criterion held beside one at which it failed, a tighter criterion never
// gets the higher capacity, and --capacity's runs at capacity meet the
// scenario's bounds.

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>

#include "hearth/sim/capacity_search.h"
#include "hearth/sim/latency_capacity.h"
#include "hearth/sim/scenario_config.h"

namespace hearth {
namespace {

// A criterion that holds or not at random, but always the same way at the
// same load (a hash of the load's bits and a seed): as arbitrary as a noisy
// simulation may be.
bool Coin(double load, uint64_t seed, double p_true) {
  uint64_t bits = 0;
  std::memcpy(&bits, &load, sizeof(bits));
  uint64_t h = (bits ^ seed) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return static_cast<double>(h % 10000) / 10000.0 < p_true;
}

TEST_CASE("bisection answers a load that met the criterion beside one that did not", "[sim]") {
  const BisectionOptions o{.low = 0.5, .high = 8, .steps = 12};
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    auto meets = [&](double load) -> absl::StatusOr<bool> { return Coin(load, seed, 0.6); };
    absl::StatusOr<BisectionResult> r = BisectCapacity(o, meets);
    REQUIRE(r.ok());
    INFO("seed " << seed << " capacity " << r->capacity);
    CHECK(r->capacity < r->lowest_failing);
    if (r->capacity > 0) CHECK(*meets(r->capacity));
    if (r->saw_failure) CHECK_FALSE(*meets(r->lowest_failing));
    CHECK(r->tried.front() == o.low);
    CHECK(r->tried.size() <= static_cast<size_t>(o.steps) + 1);
  }
}

TEST_CASE("a tighter criterion never has the higher capacity", "[sim]") {
  const BisectionOptions o{.low = 0.25, .high = 16, .steps = 10};
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    // Tight implies loose at every load, nothing more is assumed.
    auto loose = [&](double load) -> absl::StatusOr<bool> { return Coin(load, seed, 0.7); };
    auto tight = [&](double load) -> absl::StatusOr<bool> {
      return Coin(load, seed, 0.7) && Coin(load, seed * 7919, 0.7);
    };
    absl::StatusOr<BisectionResult> l = BisectCapacity(o, loose);
    absl::StatusOr<BisectionResult> t = BisectCapacity(o, tight);
    REQUIRE(l.ok());
    REQUIRE(t.ok());
    INFO("seed " << seed);
    CHECK(t->capacity <= l->capacity);
  }
}

TEST_CASE("bisection of a threshold finds it to the resolution of its steps", "[sim]") {
  const BisectionOptions o{.low = 0.25, .high = 16, .steps = 10};
  for (double threshold : {0.1, 0.25, 3.3, 15.9, 20.0}) {
    absl::StatusOr<BisectionResult> r =
        BisectCapacity(o, [&](double load) -> absl::StatusOr<bool> { return load <= threshold; });
    REQUIRE(r.ok());
    INFO("threshold " << threshold);
    CHECK(r->capacity <= threshold);
    CHECK(r->saw_failure == (threshold < 16 - 16.0 / 1024));
    if (threshold < 16) CHECK(threshold - r->capacity <= 16.0 / 1024);
  }
}

TEST_CASE("bisection rejects bad bounds and passes the criterion's errors on", "[sim]") {
  auto yes = [](double) -> absl::StatusOr<bool> { return true; };
  CHECK_THAT(std::string(BisectCapacity({.low = 0, .high = 1, .steps = 3}, yes).status().message()),
             Catch::Contains("bisection bounds are [0, 1]; need 0 < low <= high"));
  CHECK_THAT(std::string(BisectCapacity({.low = 2, .high = 1, .steps = 3}, yes).status().message()),
             Catch::Contains("need 0 < low <= high"));
  CHECK_THAT(std::string(BisectCapacity({.low = 1, .high = 2, .steps = 65}, yes).status().message()),
             Catch::Contains("65 steps; must be in [0, 64]"));
  absl::StatusOr<BisectionResult> failed = BisectCapacity(
      {.low = 1, .high = 2, .steps = 3},
      [](double) -> absl::StatusOr<bool> { return absl::InternalError("run failed"); });
  CHECK(failed.status().message() == "run failed");
}

TEST_CASE("the latency criterion names the bounds a run missed", "[sim]") {
  GroupReport total;
  total.finished = 10;
  total.itl.p99 = 0.120;
  total.queue_wait.p50 = 1.5;
  total.ttft.p50 = 2.5;
  LatencyCriterion c;
  CHECK(c.empty());
  CHECK(LatencyCriterionMisses(c, total).empty());
  c.p99_itl = absl::Milliseconds(100);
  c.p50_queue_wait = absl::Seconds(2);
  CHECK(c.Describe() == "P99 ITL <= 100 ms, median queue wait <= 2 s");
  CHECK(LatencyCriterionMisses(c, total) == "P99 ITL 120 ms > 100 ms");
  c.p50_ttft = absl::Seconds(2);
  CHECK(LatencyCriterionMisses(c, total) == "P99 ITL 120 ms > 100 ms, median TTFT 2.5 s > 2 s");
  c.p99_itl = absl::Milliseconds(120);
  c.p50_ttft = absl::InfiniteDuration();
  CHECK(LatencyCriterionMisses(c, total).empty());  // at the bound is within it
  total.finished = 0;
  CHECK(LatencyCriterionMisses(c, total) == "nothing finished");
}

// The Sarathi-Serve scenario's setting on 300 of its requests.
std::string CapacityScenario(const std::string& capacity) {
  return std::string("name = \"cap\"\npolicies = [\"fifo\"]\n"
                     "[gpu]\nname = \"A100-80GB\"\n[model]\nname = \"Mistral-7B\"\ncontext_length = 8192\n"
                     "[cost]\ncompute_efficiency = 0.6\nbandwidth_efficiency = 0.8\n"
                     "step_overhead_ms = 3\n"
                     "[scheduler]\nmax_batched_tokens = 8192\n"
                     "[[users]]\nname = \"u\"\n[[classes]]\nname = \"chat\"\n"
                     "[workload]\nkind = \"sharegpt\"\n"
                     "file = \"" HEARTH_SOURCE_DIR
                     "/bench/suites/traces/sarathi_sharegpt_lengths.jsonl\"\n"
                     "max_requests = 300\ndefault_class = \"chat\"\n"
                     "[capacity]\n") +
         capacity;
}

absl::StatusOr<Scenario> Parse(const std::string& capacity) {
  return ParseScenario(CapacityScenario(capacity), "cap.toml", ".");
}

TEST_CASE("the capacity runs at capacity meet the bound, and a tighter one gets less",
          "[sim]") {
  const std::string common =
      "p50_queue_wait_s = 2\ntoken_budgets = [8192, 512]\nlow_per_s = 0.5\n"
      "high_per_s = 8\nsteps = 6\n";
  absl::StatusOr<Scenario> relaxed = Parse("p99_itl_ms = 500\n" + common);
  absl::StatusOr<Scenario> strict = Parse("p99_itl_ms = 100\n" + common);
  REQUIRE(relaxed.ok());
  REQUIRE(strict.ok());
  absl::StatusOr<LatencyCapacityResult> r = RunLatencyCapacity(*relaxed);
  absl::StatusOr<LatencyCapacityResult> s = RunLatencyCapacity(*strict);
  REQUIRE(r.ok());
  REQUIRE(s.ok());
  REQUIRE(r->cells.size() == 2);
  REQUIRE(s->cells.size() == 2);
  CHECK(r->requests == 300);
  for (size_t i = 0; i < 2; ++i) {
    INFO("budget " << r->cells[i].token_budget);
    CHECK(s->cells[i].search.capacity <= r->cells[i].search.capacity);
    for (const LatencyCapacityResult* x : {&*r, &*s}) {
      const CapacityCell& c = x->cells[i];
      REQUIRE(c.search.capacity > 0);
      CHECK(absl::Seconds(c.p99_itl_s) <= x->spec.criterion.p99_itl);
      CHECK(c.p50_queue_wait_s <= 2);
      if (c.search.saw_failure) CHECK_FALSE(c.limited_by.empty());
    }
  }
  // Sarathi-Serve's point: under a tight P99 ITL, chunked prefill sustains
  // more than whole prompts do.
  CHECK(s->cells[1].search.capacity > s->cells[0].search.capacity);
  absl::StatusOr<double> gain = MeasuredCapacityFigure("capacity_gain", "fifo", *s);
  REQUIRE(gain.ok());
  CHECK(*gain == Approx(s->cells[1].search.capacity / s->cells[0].search.capacity));
  CHECK(absl::IsNotFound(MeasuredCapacityFigure("capacity_gain", "vtc", *s).status()));
  CHECK_THAT(LatencyCapacityMarkdown(*strict, *s),
             Catch::Contains("| fifo | 512 |") && Catch::Contains("P99 ITL <= 100 ms"));
}

TEST_CASE("a bad [capacity] table is rejected with the key and what is allowed", "[sim]") {
  auto error = [](const std::string& capacity) {
    absl::StatusOr<Scenario> s = Parse(capacity);
    REQUIRE_FALSE(s.ok());
    return std::string(s.status().message());
  };
  CHECK_THAT(error("token_budgets = [8192, 64]\n"),
             Catch::Contains("capacity.token_budgets[1]: is 64; must be a whole number of "
                             "tokens in [128 (scheduler.max_running), 1048576]"));
  CHECK_THAT(error("token_budgets = [512.5]\n"), Catch::Contains("capacity.token_budgets[0]"));
  CHECK_THAT(error("p99_itl_ms = 0\n"), Catch::Contains("capacity.p99_itl_ms"));
  CHECK_THAT(error("low_per_s = 2\nhigh_per_s = 1\n"), Catch::Contains("capacity.high_per_s"));
  CHECK_THAT(error("steps = 100\n"), Catch::Contains("capacity.steps"));
  CHECK_THAT(error("p99_tbt_ms = 100\n"), Catch::Contains("p99_tbt_ms"));
  absl::StatusOr<Scenario> unbounded = Parse("");
  REQUIRE(unbounded.ok());
  CHECK_THAT(std::string(RunLatencyCapacity(*unbounded).status().message()),
             Catch::Contains("the [capacity] table sets no bound"));
}

}  // namespace
}  // namespace hearth
