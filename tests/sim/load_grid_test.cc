// The no-collapse grid (load_grid.h) and the load scaling under it
// (load_scaling.h), on a scenario small enough to run every cell here.

#include <algorithm>
#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "hearth/sim/load_grid.h"
#include "hearth/sim/load_scaling.h"
#include "hearth/sim/scenario_config.h"

namespace hearth {
namespace {

// Two members, 40 requests each at fixed spacing, a chat SLO; at most two
// sequences run, so MLFQ's skip-join preempts long requests for new ones
// where FIFO never preempts.
Scenario Tiny() {
  const std::string text =
      "name = \"tiny\"\n"
      "policies = [\"fifo\", \"vtc\", \"mlfq\"]\n"
      "[gpu]\nname = \"A10G\"\n"
      "[model]\nname = \"Llama-3.2-3B\"\n"
      "[engine]\nmax_new_tokens = 256\n"
      "[scheduler]\nkv.num_device_blocks = 400\nmax_running = 2\n"
      "[[users]]\nname = \"a\"\nactivity = 0\n"
      "[[users]]\nname = \"b\"\nactivity = 0\n"
      "[[classes]]\nname = \"chat\"\nttft_slo_s = 2\ntpot_slo_s = 0.1\n"
      "[policy]\nmlfq_base_quantum = 4\nmlfq_time_slice_with_recompute = true\n"
      "[workload]\nkind = \"household\"\nduration_s = 60\nclasses = { chat = \"chat\" }\n"
      "[[workload.flood]]\nuser = \"a\"\nclass = \"chat\"\ncount = 40\nstart_s = 0\n"
      "spacing_s = 1\nprompt = { kind = \"fixed\", value = 64 }\n"
      "output = { kind = \"uniform\", min = 8, max = 200 }\n"
      "[[workload.flood]]\nuser = \"b\"\nclass = \"chat\"\ncount = 40\nstart_s = 0.5\n"
      "spacing_s = 1\nprompt = { kind = \"fixed\", value = 64 }\n"
      "output = { kind = \"uniform\", min = 8, max = 200 }\n";
  absl::StatusOr<Scenario> s = ParseScenario(text, "tiny.toml", ".");
  REQUIRE(s.ok());
  return *s;
}

double OfferedPerSecond(const Workload& w) {
  absl::Duration first = absl::InfiniteDuration(), last = -absl::InfiniteDuration();
  for (const SimRequest& r : w.requests) {
    first = std::min(first, r.arrival);
    last = std::max(last, r.arrival);
  }
  return w.requests.size() / absl::ToDoubleSeconds(last - first);
}

TEST_CASE("time scaling offers load x capacity requests per second", "[sim]") {
  const Scenario s = Tiny();
  absl::StatusOr<LoadScaling> measured = LoadScaling::Create(s);
  REQUIRE(measured.ok());
  CHECK(measured->capacity_per_s() > 0);
  absl::StatusOr<LoadScaling> pinned = LoadScaling::Create(s, 3.0);
  REQUIRE(pinned.ok());
  CHECK(pinned->capacity_per_s() == 3.0);
  for (double load : {0.5, 1.0, 1.7}) {
    absl::StatusOr<Workload> w = pinned->WorkloadAt(load);
    REQUIRE(w.ok());
    CHECK(w->requests.size() == 80);
    CHECK(OfferedPerSecond(*w) == Approx(load * 3.0).epsilon(1e-9));
  }
  CHECK_FALSE(pinned->WorkloadAt(0).ok());
  CHECK_FALSE(pinned->WorkloadAt(std::nan("")).ok());
  CHECK_FALSE(LoadScaling::Create(s, -1).ok());
}

TEST_CASE("grid ratios are against FIFO of the same load, and violations are flagged",
          "[sim]") {
  const Scenario s = Tiny();
  LoadGridOptions o;
  o.loads = {0.7, 1.1};
  absl::StatusOr<LoadGridResult> g = RunLoadGrid(s, o);
  REQUIRE(g.ok());
  CHECK(g->has_slo_targets);
  REQUIRE(g->cells.size() == o.loads.size() * s.policies.size());
  bool flagged = false;
  for (double load : o.loads) {
    const auto fifo = std::find_if(g->cells.begin(), g->cells.end(), [&](const LoadGridCell& c) {
      return c.load == load && c.policy == "fifo";
    });
    REQUIRE(fifo != g->cells.end());
    CHECK_FALSE(fifo->slo_violation);
    CHECK_FALSE(fifo->preemption_violation);
    for (const LoadGridCell& c : g->cells) {
      if (c.load != load) continue;
      CHECK(c.slo_eligible == 80);
      CHECK(c.slo_share == Approx(static_cast<double>(c.slo_met) / c.slo_eligible));
      if (fifo->slo_met > 0) {
        CHECK(c.slo_vs_fifo == Approx(static_cast<double>(c.slo_met) / fifo->slo_met));
      }
      CHECK(c.slo_violation == (fifo->slo_met > 0 && c.slo_vs_fifo < o.min_slo_ratio));
      CHECK(c.preemption_violation ==
            (static_cast<double>(c.preemptions) > o.max_preemption_ratio * fifo->preemptions));
      flagged = flagged || c.slo_violation || c.preemption_violation;
      // Per class: the classes' counts add up to the cell's, and a class is
      // marked exactly when its share is below FIFO's for the same class.
      REQUIRE(c.classes.size() == fifo->classes.size());
      uint64_t eligible = 0, met = 0;
      for (size_t k = 0; k < c.classes.size(); ++k) {
        const LoadGridClass& cls = c.classes[k];
        CHECK(cls.name == fifo->classes[k].name);
        eligible += cls.slo_eligible;
        met += cls.slo_met;
        CHECK(cls.below_fifo == (cls.slo_eligible > 0 && fifo->classes[k].slo_eligible > 0 &&
                                 cls.slo_share < fifo->classes[k].slo_share));
      }
      CHECK(eligible == c.slo_eligible);
      CHECK(met == c.slo_met);
    }
  }
  // MLFQ preempts on this scenario where FIFO cannot (see Tiny()).
  REQUIRE(flagged);
  const std::string table = LoadGridMarkdown(*g);
  CHECK_THAT(table, Catch::Contains("**VIOLATION**"));
  CHECK_THAT(table, Catch::Contains("| 0.70 | fifo |"));
  CHECK_THAT(table, Catch::Contains("| 1.10 | mlfq |"));
  CHECK_THAT(table, Catch::Contains("SLO met per class"));
}

TEST_CASE("the grid rejects bad options and says what is allowed", "[sim]") {
  const Scenario s = Tiny();
  LoadGridOptions o;
  o.loads = {0.5, 0};
  CHECK_THAT(std::string(RunLoadGrid(s, o).status().message()),
             Catch::Contains("load 0; each must be in (0, 100)"));
  o.loads = {};
  CHECK_FALSE(RunLoadGrid(s, o).ok());
  o.loads = {1};
  o.min_slo_ratio = 2;
  CHECK_THAT(std::string(RunLoadGrid(s, o).status().message()),
             Catch::Contains("min_slo_ratio is 2; must be in (0, 1]"));
  o.min_slo_ratio = 0.8;
  o.max_preemption_ratio = 0.5;
  CHECK_THAT(std::string(RunLoadGrid(s, o).status().message()),
             Catch::Contains("max_preemption_ratio is 0.5"));
  o.max_preemption_ratio = 2;
  for (int32_t seeds : {0, -1, 65}) {
    o.seeds = seeds;
    CHECK_THAT(std::string(RunLoadGrid(s, o).status().message()),
               Catch::Contains("; must be in [1, 64]"));
  }
}

const LoadGridCell& CellOf(const LoadGridResult& g, const std::string& policy) {
  const auto it = std::find_if(g.cells.begin(), g.cells.end(),
                               [&](const LoadGridCell& c) { return c.policy == policy; });
  REQUIRE(it != g.cells.end());
  return *it;
}

TEST_CASE("a grid over several seeds sums each seed's own grid, at one capacity", "[sim]") {
  Scenario s = Tiny();
  LoadGridOptions o;
  o.loads = {1.1};
  o.reference_capacity_per_s = 2.5;
  o.seeds = 2;
  absl::StatusOr<LoadGridResult> both = RunLoadGrid(s, o);
  REQUIRE(both.ok());
  CHECK(both->first_seed == s.seed);
  CHECK(both->seeds == 2);
  o.seeds = 1;
  absl::StatusOr<LoadGridResult> first = RunLoadGrid(s, o);
  s.seed += 1;
  absl::StatusOr<LoadGridResult> second = RunLoadGrid(s, o);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  bool draws_differ = false;
  for (const std::string& policy : s.policies) {
    const LoadGridCell& sum = CellOf(*both, policy);
    const LoadGridCell& a = CellOf(*first, policy);
    const LoadGridCell& b = CellOf(*second, policy);
    CHECK(sum.slo_eligible == a.slo_eligible + b.slo_eligible);
    CHECK(sum.slo_met == a.slo_met + b.slo_met);
    CHECK(sum.slo_share == Approx(static_cast<double>(sum.slo_met) / sum.slo_eligible));
    CHECK(sum.preemptions == a.preemptions + b.preemptions);
    CHECK(sum.swap_preemptions + sum.recompute_preemptions == sum.preemptions);
    CHECK(sum.finished == a.finished + b.finished);
    CHECK(sum.jct_mean_s == Approx((a.jct_mean_s * a.finished + b.jct_mean_s * b.finished) /
                                   (a.finished + b.finished)));
    CHECK(sum.jct_p99_s == Approx((a.jct_p99_s + b.jct_p99_s) / 2));
    const LoadGridCell& fifo = CellOf(*both, "fifo");
    CHECK(sum.preemption_violation ==
          (static_cast<double>(sum.preemptions) > o.max_preemption_ratio * fifo.preemptions));
    draws_differ = draws_differ || a.jct_mean_s != b.jct_mean_s;
  }
  // Otherwise the second seed drew nothing new and the sums prove little.
  CHECK(draws_differ);
  CHECK_THAT(LoadGridMarkdown(*both), Catch::Contains("Each cell sums 2 workload draws (seeds 1-2"));
}

}  // namespace
}  // namespace hearth
