// The scenario's [paper] table: figures parse, bad ones are rejected with a
// message naming the key, and the report prints them beside Hearth's.

#include <string>

#include <catch2/catch.hpp>

#include "hearth/sim/reference_figures.h"
#include "hearth/sim/report_writer.h"
#include "hearth/sim/scenario_config.h"

namespace hearth {
namespace {

// `paper` goes after line 15.
std::string ScenarioText(const std::string& paper) {
  return "name = \"p\"\n"
         "policies = [\"fifo\", \"vtc\"]\n"
         "[gpu]\n"
         "name = \"A10G\"\n"
         "[model]\n"
         "name = \"Llama-2-7B\"\n"
         "[scheduler]\n"
         "kv.num_device_blocks = 100\n"
         "[[users]]\n"
         "name = \"a\"\n"
         "[[classes]]\n"
         "name = \"chat\"\n"
         "[workload]\n"
         "kind = \"household\"\n"
         "classes = { chat = \"chat\" }\n" +
         paper;
}

std::string Figure(const std::string& policy, const std::string& figure, const std::string& value) {
  return "[[paper.figure]]\npolicy = \"" + policy + "\"\nfigure = \"" + figure +
         "\"\nvalue = " + value + "\n";
}

std::string ParseError(const std::string& paper) {
  absl::StatusOr<Scenario> s = ParseScenario(ScenarioText(paper), "p.toml", ".");
  REQUIRE_FALSE(s.ok());
  return std::string(s.status().message());
}

TEST_CASE("a paper table parses into named figures", "[sim]") {
  absl::StatusOr<Scenario> s = ParseScenario(
      ScenarioText("[paper]\nsource = \"the paper\"\n" +
                   Figure("vtc", "max_accumulated_service_difference", "8100") +
                   Figure("fifo", "output_tokens_per_s", "438.5")),
      "p.toml", ".");
  REQUIRE(s.ok());
  CHECK(s->paper.source == "the paper");
  REQUIRE(s->paper.figures.size() == 2);
  CHECK(s->paper.figures[0].policy == "vtc");
  CHECK(s->paper.figures[0].figure == "max_accumulated_service_difference");
  CHECK(s->paper.figures[0].value == 8100);
  CHECK(s->paper.figures[1].value == 438.5);
  CHECK(ParseScenario(ScenarioText(""), "p.toml", ".")->paper.figures.empty());
}

TEST_CASE("bad paper-table figures are rejected with the key and what is allowed", "[sim]") {
  const std::string head = "[paper]\nsource = \"s\"\n";
  CHECK_THAT(ParseError(head + Figure("vtc", "max_accumulated_service_difference", "-1")),
             Catch::Contains("paper.figure[0].value: must be in [0, 1e+15]; got -1"));
  CHECK_THAT(ParseError(head + Figure("vtc", "max_accumulated_service_difference", "nan")),
             Catch::Contains("paper.figure[0].value"));
  CHECK_THAT(ParseError(head + Figure("mlfq", "output_tokens_per_s", "1")),
             Catch::Contains("paper.figure[0].policy: \"mlfq\" is not one of the scenario's "
                             "policies (fifo, vtc)"));
  CHECK_THAT(ParseError(head + Figure("vtc", "speed", "1")),
             Catch::Contains("paper.figure[0].figure: unknown figure \"speed\"; known: "
                             "max_accumulated_service_difference") &&
                 Catch::Contains("capacity_gain, capacity_per_s (the last two measured by "
                                 "--capacity)"));
  CHECK_THAT(ParseError(head + Figure("vtc", "finished_per_s", "1") +
                        Figure("vtc", "finished_per_s", "2")),
             Catch::Contains("paper.figure[1]: repeats finished_per_s for vtc"));
  CHECK_THAT(ParseError(head + Figure("vtc", "finished_per_s", "\"fast\"")),
             Catch::Contains("paper.figure[0].value"));
  CHECK_THAT(ParseError("[paper]\nsource = \"s\"\n"),
             Catch::Contains("paper.figure: must list at least one"));
  CHECK_THAT(ParseError("[paper]\n" + Figure("vtc", "finished_per_s", "1")),
             Catch::Contains("paper.source"));
  CHECK_THAT(ParseError(head + "colour = 1\n" + Figure("vtc", "finished_per_s", "1")),
             Catch::Contains("colour"));
  CHECK_THAT(ParseError(head + "[[paper.figure]]\npolicy = \"vtc\"\nfigure = \"finished_per_s\"\n"
                               "value = 1\nunit = \"x\"\n"),
             Catch::Contains("unit"));
}

TEST_CASE("the report prints each figure beside the run's measure and their ratio", "[sim]") {
  absl::StatusOr<Scenario> s = ParseScenario(
      ScenarioText("[paper]\nsource = \"the paper\"\n" +
                   Figure("vtc", "finished_per_s", "4") + Figure("fifo", "finished_per_s", "2")),
      "p.toml", ".");
  REQUIRE(s.ok());
  PolicyRun vtc{"vtc", {}};
  vtc.result.report.finished_per_s = 2;
  const std::string table = ReferenceFiguresMarkdown(*s, {vtc});
  CHECK_THAT(table, Catch::Contains("source: the paper"));
  CHECK_THAT(table, Catch::Contains("| vtc | finished_per_s | 4 | 2 | 0.500 |"));
  // FIFO's figure has no run to compare with.
  CHECK_THAT(table, Catch::Contains("| fifo | finished_per_s | 2 | not run |"));
  CHECK(ReferenceFiguresMarkdown(*ParseScenario(ScenarioText(""), "p.toml", "."), {vtc}).empty());
  for (const char* name : kReferenceFigureNames) CHECK(MeasuredFigure(name, vtc.result).ok());
  CHECK_FALSE(MeasuredFigure("speed", vtc.result).ok());
}

TEST_CASE("each oracle run gets a column measuring the paper's figure", "[sim]") {
  absl::StatusOr<Scenario> s = ParseScenario(
      ScenarioText("[paper]\nsource = \"the paper\"\n" + Figure("vtc", "finished_per_s", "4")),
      "p.toml", ".");
  REQUIRE(s.ok());
  PolicyRun vtc{"vtc", {}};
  vtc.result.report.finished_per_s = 2;
  PolicyRun oracle{"oracle_srpt", {}};
  oracle.result.report.finished_per_s = 3;
  const std::string table = ReferenceFiguresMarkdown(*s, {vtc, oracle});
  CHECK_THAT(table, Catch::Contains("| Hearth / paper | oracle_srpt | note |"));
  CHECK_THAT(table, Catch::Contains("| vtc | finished_per_s | 4 | 2 | 0.500 | 3 |"));
}

TEST_CASE("capacity figures parse, and only the capacity report prints them", "[sim]") {
  absl::StatusOr<Scenario> s = ParseScenario(
      ScenarioText("[paper]\nsource = \"the paper\"\n" + Figure("fifo", "capacity_gain", "2.6")),
      "p.toml", ".");
  REQUIRE(s.ok());
  CHECK(IsCapacityFigure("capacity_gain"));
  CHECK_FALSE(IsCapacityFigure("finished_per_s"));
  CHECK(ReferenceFiguresMarkdown(*s, {PolicyRun{"fifo", {}}}).empty());
  const std::string table = ReferenceFiguresTable(
      s->paper, /*capacity=*/true, {"oracle_srpt"},
      [](const std::string& policy, const std::string&) -> absl::StatusOr<double> {
        if (policy == "fifo") return 1.3;
        return absl::NotFoundError("not run");
      });
  CHECK_THAT(table, Catch::Contains("| fifo | capacity_gain | 2.6 | 1.3 | 0.500 | not run |"));
}

}  // namespace
}  // namespace hearth
