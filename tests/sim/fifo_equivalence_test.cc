// Warnings for policies that cannot order a scenario's requests differently
// from FIFO.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "hearth/sim/fifo_equivalence.h"
#include "hearth/sim/scenario_config.h"

namespace hearth {
namespace {

Scenario Parsed(const std::string& registries) {
  const std::string text = "name = \"w\"\n"
                           "policies = [\"fifo\", \"vtc\", \"priority\", \"mlfq\", \"household\"]\n"
                           "[gpu]\nname = \"RTX 4090\"\n[model]\nname = \"Llama-3.2-3B\"\n" +
                           registries +
                           "[workload]\nkind = \"household\"\nclasses = { chat = \"chat\" }\n";
  absl::StatusOr<Scenario> s = ParseScenario(text, "w.toml", ".");
  REQUIRE(s.ok());
  return *s;
}

// `n` requests of (user, class) pairs, without workflows.
Workload Requests(const std::vector<std::pair<uint32_t, uint32_t>>& who) {
  Workload w;
  for (const auto& [user, work_class] : who) {
    SimRequest r;
    r.user = user;
    r.work_class = work_class;
    r.prompt_tokens = 8;
    r.output_tokens = 8;
    w.requests.push_back(r);
  }
  return w;
}

std::vector<std::string> Flagged(const std::vector<std::string>& warnings) {
  std::vector<std::string> policies;
  for (const std::string& w : warnings) policies.push_back(w.substr(0, w.find(' ')));
  return policies;
}

constexpr const char* kTwoByTwo =
    "[[users]]\nname = \"a\"\n[[users]]\nname = \"b\"\n"
    "[[classes]]\nname = \"voice\"\npriority = 2\nttft_slo_s = 0.5\n"
    "[[classes]]\nname = \"chat\"\n";

TEST_CASE("one user and one class: vtc, priority and household cannot differ from fifo",
          "[sim]") {
  const Scenario s = Parsed("[[users]]\nname = \"a\"\n[[classes]]\nname = \"chat\"\n");
  const std::vector<std::string> warnings = FifoEquivalenceWarnings(s, Requests({{0, 0}, {0, 0}}));
  CHECK(Flagged(warnings) == std::vector<std::string>{"vtc", "priority", "household"});
  for (const std::string& w : warnings) CHECK_THAT(w, Catch::Contains("cannot differ from fifo"));
}

TEST_CASE("users and classes that differ silence the warnings", "[sim]") {
  const Scenario s = Parsed(kTwoByTwo);
  CHECK(FifoEquivalenceWarnings(s, Requests({{0, 0}, {1, 1}})).empty());
  // Configured but unused: only what has requests counts.
  CHECK(Flagged(FifoEquivalenceWarnings(s, Requests({{0, 1}, {0, 1}}))) ==
        std::vector<std::string>{"vtc", "priority", "household"});
  // Two users, one class: vtc and household share between them.
  CHECK(Flagged(FifoEquivalenceWarnings(s, Requests({{0, 1}, {1, 1}}))) ==
        std::vector<std::string>{"priority"});
}

TEST_CASE("agent workflows with a head start can differ from fifo", "[sim]") {
  const Scenario s = Parsed("[[users]]\nname = \"a\"\n[[classes]]\nname = \"chat\"\n");
  Workload w = Requests({{0, 0}, {0, 0}});
  w.requests[1].parent = 0;
  CHECK(FifoEquivalenceWarnings(s, w).empty());
}

TEST_CASE("the report repeats the warnings a run's arrivals imply", "[sim]") {
  const Scenario s = Parsed("[[users]]\nname = \"a\"\n[[classes]]\nname = \"chat\"\n");
  SimulationResult run;
  run.report.users.resize(1);
  run.report.classes.resize(1);
  run.report.users[0].arrived = 3;
  run.report.classes[0].arrived = 3;
  CHECK(FifoEquivalenceWarnings(s, run) == FifoEquivalenceWarnings(s, Requests({{0, 0}})));
  run.workflows = 1;
  CHECK(FifoEquivalenceWarnings(s, run).empty());
}

}  // namespace
}  // namespace hearth
