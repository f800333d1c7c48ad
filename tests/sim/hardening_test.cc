// Inputs an adversary used against the simulator's readers and generators:
// each must end in a specific error (or a counted rejection), never a hang,
// an overflow or a silent drop.

#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/sim/agent_trace.h"
#include "hearth/sim/azure_trace.h"
#include "hearth/sim/household_workload.h"
#include "hearth/sim/report_writer.h"
#include "hearth/sim/scenario_config.h"
#include "hearth/sim/servegen_trace.h"
#include "hearth/sim/simulator.h"
#include "sim/quote.h"
#include "tests/sim/sim_test_util.h"

namespace hearth {
namespace {

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST_CASE("servegen fits that would stall the sampler are refused", "[sim]") {
  struct Case {
    const char* row;
    const char* expected;
  };
  const Case cases[] = {
      {"0,1,1,Weibull,0.001,1", "c.csv:1: Weibull shape 0.001 must be in [0.00588235, inf)"},
      {"0,1,1,Weibull,1e-300,1", "c.csv:1: Weibull shape 1e-300 must be in"},
      {"0,1,1,Gamma,1e300,1e300", "c.csv:1: shape 1e+300 and scale 1e+300 give an "
                                  "inter-arrival mean of inf; it must be finite and > 0"},
  };
  for (const Case& c : cases) {
    INFO(c.row);
    auto r = ParseServeGenClient(c.row, "c.csv");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(Message(r.status()), Catch::StartsWith(c.expected));
  }
}

TEST_CASE("servegen sampling ends for any window, even one never parsed", "[sim]") {
  // Without the checks each of these loops forever: the rescaled gap is 0
  // (Weibull 0.001: tgamma overflows, so the scale factor is 0) or NaN.
  struct Case {
    ArrivalPattern pattern;
    double shape;
    double scale;
    bool resource_exhausted;
  };
  const Case cases[] = {
      {ArrivalPattern::kWeibull, 0.001, 1, false},   // infinite mean
      {ArrivalPattern::kGamma, 1e-6, 1, true},       // gaps almost all exactly 0
      {ArrivalPattern::kWeibull, 0.0059, 1e-300, true},  // gaps underflow to 0
  };
  for (const Case& c : cases) {
    INFO(c.shape);
    const std::vector<ServeGenWindow> w = {{0, 1.0, 1, c.pattern, c.shape, c.scale}};
    auto r = SampleServeGenArrivals(w, absl::ZeroDuration(), absl::Seconds(100), 1.0, 7,
                                    /*request_cap=*/1000);
    REQUIRE_FALSE(r.ok());
    CHECK(absl::IsResourceExhausted(r.status()) == c.resource_exhausted);
  }
}

TEST_CASE("generators refuse to exceed the request cap up front", "[sim]") {
  const std::vector<ServeGenWindow> w = {{0, 1e9, 1, ArrivalPattern::kIdle, 0, 0}};
  auto r = SampleServeGenArrivals(w, absl::ZeroDuration(), absl::Seconds(500), 1.0, 1);
  REQUIRE(absl::IsResourceExhausted(r.status()));
  CHECK_THAT(Message(r.status()),
             Catch::Contains("about 5e+11 arrivals expected") &&
                 Catch::Contains("over the request_cap of 4000000 (about 800 MB") &&
                 Catch::Contains("lower duration_s, rate_scale"));

  struct Case {
    double load_scale;
    absl::Duration duration;
  };
  const Case cases[] = {{1e6, absl::Hours(4)}, {1, absl::Seconds(1e9)}};
  for (const Case& c : cases) {
    HouseholdOptions h = DefaultHousehold(4, 0, 1, 2, 3, 4);
    h.load_scale = c.load_scale;
    h.duration = c.duration;
    auto g = GenerateHousehold(h);
    REQUIRE(absl::IsResourceExhausted(g.status()));
    CHECK_THAT(Message(g.status()), Catch::Contains("calls expected") &&
                                        Catch::Contains("request_cap of 4000000"));
  }
}

TEST_CASE("agent timestamps out of range name the file, line and field", "[sim]") {
  struct Case {
    const char* line2;
    const char* expected;
  };
  const Case cases[] = {
      {R"({"timestamp": 1e19, "input": "b", "output": "y"})",
       "s.jsonl:2: timestamp '1e+19' must be a number of microseconds in [0, 1e+17]"},
      {R"({"timestamp": -1, "input": "b", "output": "y"})", "s.jsonl:2: timestamp '-1'"},
      {R"({"timestamp": 1.5e308, "input": "b", "output": "y"})", "s.jsonl:2: timestamp"},
  };
  for (const Case& c : cases) {
    const std::string text =
        std::string(R"({"timestamp": 5, "input": "a", "output": "x"})") + "\n" + c.line2;
    auto r = ParseAgentSession(text, "s.jsonl", 4);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(Message(r.status()), Catch::StartsWith(c.expected));
  }
}

TEST_CASE("azure timestamps outside 1970-2200 are refused, not overflowed", "[sim]") {
  TraceMapping m;
  m.users = {0};
  const std::string head = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                           "2023-11-16 18:15:46.6805900,374,44\n";
  const char* rows[] = {"9999-12-31 23:59:59.0000000,10,10",
                        "1601-01-01 00:00:00.0000000,10,10",
                        "2200-01-01 00:00:00.0000000,10,10"};
  for (const char* row : rows) {
    auto r = ParseAzureTrace(head + row + "\n", "t.csv", m);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(Message(r.status()),
               Catch::StartsWith("t.csv:3: TIMESTAMP '") &&
                   Catch::Contains("in years [1970, 2200)"));
  }
}

TEST_CASE("long values are clipped wherever messages echo them", "[sim]") {
  const std::string huge(100000, 'x');
  CHECK(internal::Quote("short") == "'short'");
  CHECK(internal::Quote(huge) == "'" + std::string(80, 'x') + "... (100000 bytes)'");
  // A 3-byte character straddling the cut is left out whole.
  CHECK(internal::Clip(std::string(79, 'a') + "\xE2\x82\xAC" + "zz") ==
        std::string(79, 'a') + "... (84 bytes)");
  TraceMapping m;
  m.users = {0};
  const std::vector<absl::StatusOr<Workload>> results = {
      ParseAzureTrace("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,1," +
                          huge + "\n", "t.csv", m),
      ParseAzureTrace("TIMESTAMP,ContextTokens,GeneratedTokens\n" + huge + ",1,1\n", "t.csv", m)};
  for (const auto& r : results) {
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().size() < 300);
  }
  const std::vector<absl::StatusOr<std::vector<AgentCall>>> agent = {
      ParseAgentSession("{\"" + huge + "\": {}}", "s.jsonl", 4),
      ParseAgentSession("{\"timestamp\": 1, " + huge + "}", "s.jsonl", 4)};
  for (const auto& a : agent) {
    REQUIRE_FALSE(a.ok());
    CHECK(a.status().message().size() < 300);
  }
  auto s = ParseServeGenClient("0,1,1," + huge + ",1,1", "c.csv");
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().message().size() < 300);
}

constexpr const char* kHead = R"(
name = "h"
[gpu]
name = "RTX 4090"
[model]
name = "Llama-3.2-3B"
[[users]]
name = "alice"
[[classes]]
name = "chat"
)";

TEST_CASE("workload errors carry the scenario's file:line: key", "[sim]") {
  struct Case {
    const char* workload;
    const char* expected;
  };
  const Case cases[] = {
      // The cap, set on line 14, refuses the household's expected calls.
      {"[workload]\nkind = \"household\"\nclasses = { chat = \"chat\" }\n"
       "request_cap = 10\n",
       "h.toml:14: workload.request_cap: household: about "},
      // Floods count against the same cap.
      {"[workload]\nkind = \"household\"\nclasses = { chat = \"chat\" }\n"
       "duration_s = 1\nrequest_cap = 5\n[[workload.flood]]\nuser = \"alice\"\n"
       "class = \"chat\"\ncount = 6\n",
       "h.toml:15: workload.request_cap: the workload and its floods make "},
      // A trace folder without the client's file.
      {"[workload]\nkind = \"servegen\"\ndirectory = \"/nonexistent\"\n"
       "[[workload.clients]]\nid = 1\nuser = \"alice\"\nclass = \"chat\"\n",
       "h.toml:13: workload.directory: cannot open '/nonexistent/chunk-1-trace.csv'"},
  };
  for (const Case& c : cases) {
    INFO(c.workload);
    auto s = ParseScenario(std::string(kHead) + c.workload, "h.toml", ".");
    REQUIRE(s.ok());
    auto w = BuildWorkload(*s);
    REQUIRE_FALSE(w.ok());
    CHECK_THAT(Message(w.status()), Catch::StartsWith(c.expected));
  }
  auto bad = ParseScenario(std::string(kHead) + "[workload]\nkind = \"household\"\n"
                                                "classes = { chat = \"chat\" }\n"
                                                "request_cap = 0\n", "h.toml", ".");
  CHECK_THAT(Message(bad.status()),
             Catch::StartsWith("h.toml:14: workload.request_cap: must be in [1, 100000000]"));
}

TEST_CASE("requests refused at submission are counted in the report", "[sim]") {
  auto cost = testing_sim::FlatCost(10);
  SimulationOptions o;
  o.scheduler = testing_sim::SmallScheduler({"u"}, {"c"});
  o.cost_model = cost.get();
  Workload w;
  for (int32_t prompt : {100, 5000, 4096, 200}) {  // context 4096: two do not fit
    SimRequest r;
    r.prompt_tokens = prompt;
    r.output_tokens = 4;
    w.requests.push_back(r);
  }
  auto r = RunSimulation(w, o);
  REQUIRE(r.ok());
  CHECK(r->submit_rejected == 2);
  CHECK(r->submit_rejected_by_reason == std::map<std::string, uint64_t>{{"over_context", 2}});
  // Counted where every table reads: as arrived and rejected, in the total,
  // their user and their class.
  CHECK(r->report.total.arrived == 4);
  CHECK(r->report.total.rejected == 2);
  CHECK(r->report.users[0].rejected == 2);
  CHECK(r->report.classes[0].arrived == 4);
  CHECK(r->report.classes[0].rejected == 2);

  Scenario s;
  s.name = "x";
  s.scheduler = o.scheduler;
  std::vector<PolicyRun> runs = {{"fifo", *r}};
  const std::string md = MarkdownReport(s, runs);
  CHECK_THAT(md, Catch::Contains("Refused at submission (counted as arrived and rejected in "
                                 "every table below): fifo 2 (2 over the model's 4096-token "
                                 "context)."));
  CHECK_THAT(md, Catch::Contains("4 requests in the workload"));
  CHECK_THAT(md, Catch::Contains("| fifo | 4 | 2 | 0 | 2 | 0 | 0 |"));   // the headline
  CHECK_THAT(md, Catch::Contains(", 2 rejected |"));
  CHECK_THAT(ResultsCsv(runs), Catch::Contains("fifo,total,all,4,2,0,2,"));
  CHECK_THAT(ResultsJson(s, runs),
             Catch::Contains(R"("submit_rejected_by_reason":{"over_context":2})"));
  runs[0].result.submit_rejected = 0;
  runs[0].result.submit_rejected_by_reason.clear();
  CHECK_THAT(MarkdownReport(s, runs), !Catch::Contains("Refused at submission"));
  CHECK_THAT(ResultsJson(s, runs), !Catch::Contains("submit_rejected_by_reason"));
}

}  // namespace
}  // namespace hearth
