// Replays small fixture traces through the real scheduler and checks the
// metrics against figures worked out by hand.

#include <catch2/catch.hpp>

#include "hearth/sim/azure_trace.h"
#include "hearth/sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace hearth {
namespace {

using testing_sim::FlatCost;
using testing_sim::SmallScheduler;

// fixture_azure.csv: r1 at 0.000 s (prompt 32, output 3), r2 at 0.015 s
// (prompt 16, output 2). Every step costs 10 ms. Under FIFO:
//   step [0.00, 0.01]  r1 admitted at 0, prefill 32 -> token 1 at 0.010
//   step [0.01, 0.02]  r1 decode -> token 2 at 0.020 (r2 not yet arrived
//                      when this step was planned)
//   step [0.02, 0.03]  r1 decode -> token 3, stop; r2 admitted at 0.020,
//                      prefill 16 -> token 1 at 0.030
//   step [0.03, 0.04]  r2 decode -> token 2 at 0.040, stop
// r1: wait 0, TTFT 0.010, ITL 0.010 and 0.010, e2e 0.030.
// r2: wait 0.005, TTFT 0.015, ITL 0.010, e2e 0.025.
TEST_CASE("fixture replay gives hand-checked queue wait, TTFT and ITL",
          "[sim]") {
  TraceMapping mapping;
  auto w = LoadAzureTrace(testing_sim::Fixture("fixture_azure.csv"), mapping);
  REQUIRE(w.ok());
  REQUIRE(w->requests.size() == 2);
  CHECK(w->requests[1].arrival == absl::Milliseconds(15));
  CHECK(w->requests[1].label == "fixture_azure.csv:3");

  auto cost = FlatCost(10);
  SimulationOptions o;
  o.scheduler = SmallScheduler({"u"}, {"c"});
  o.cost_model = cost.get();
  auto r = RunSimulation(*w, o);
  REQUIRE(r.ok());
  const GroupReport& t = r->report.total;
  CHECK(t.finished == 2);
  CHECK(t.output_tokens == 5);
  CHECK(t.queue_wait.max == Approx(0.005));
  CHECK(t.queue_wait.mean == Approx(0.0025));
  CHECK(t.ttft.p50 == Approx(0.010));
  CHECK(t.ttft.max == Approx(0.015));
  CHECK(t.itl.count == 3);
  CHECK(t.itl.mean == Approx(0.010));
  CHECK(t.itl.max == Approx(0.010));
  CHECK(t.e2e.p50 == Approx(0.025));
  CHECK(t.e2e.max == Approx(0.030));
  CHECK(t.prefill_tokens == 48);
  CHECK(t.decode_tokens == 3);
  CHECK(r->steps == 4);
  CHECK(r->simulated_seconds == Approx(0.040));
  CHECK(r->report.window_seconds == Approx(0.040));
  // No policy set: the scheduler's default, which with one user and one
  // class serves in arrival order, as the timings above assume.
  CHECK(r->policy_name == "household");
}

TEST_CASE("azure parser rejects malformed rows naming file and line",
          "[sim]") {
  TraceMapping m;
  const std::string header = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  const std::string good = "2023-11-16 18:15:46.6805900,374,44\n";
  auto bad = [&](const std::string& text) {
    absl::StatusOr<Workload> w = ParseAzureTrace(text, "t.csv", m);
    REQUIRE_FALSE(w.ok());
    return std::string(w.status().message());
  };
  CHECK_THAT(bad("when,prompt,output\n"), Catch::StartsWith("t.csv:1: "));
  CHECK_THAT(bad(header + good + "2023-11-16 18:15:47.0,12\n"),
             Catch::StartsWith("t.csv:3: expected 3 fields"));
  CHECK_THAT(bad(header + good + "2023-13-16 18:15:47.0,12,3\n"),
             Catch::StartsWith("t.csv:3: TIMESTAMP"));
  CHECK_THAT(bad(header + good + good + "2023-11-16 18:15:47.0,-4,3\n"),
             Catch::StartsWith("t.csv:4: ContextTokens '-4'"));
  CHECK_THAT(bad(header + good + "2023-11-16 18:15:47.0,12,x\n"),
             Catch::StartsWith("t.csv:3: GeneratedTokens 'x'"));
  CHECK_THAT(bad(header + good + "2023-11-16 18:15:40.0,12,3\n"),
             Catch::StartsWith("t.csv:3: TIMESTAMP is earlier"));
  const std::pair<const char*, const char*> third_rows[] = {
      {"2023-11-16T18:15:47.0,12,3", "TIMESTAMP '2023-11-16T18:15:47.0' must be YYYY"},
      {"2023-11-16 25:15:47.0,12,3", "TIMESTAMP '2023-11-16 25:15:47.0' must be YYYY"},
      {"2023-11-16 18:15:47.0,12.5,3", "ContextTokens '12.5' must be an integer in [1, 2^30]"},
      {"2023-11-16 18:15:47.0,12,1073741825", "GeneratedTokens '1073741825' must be"},
      {"2023-11-16 18:15:47.0,99999999999999999999,3", "ContextTokens '99999999999999999999'"},
  };
  for (const auto& [row, message] : third_rows) {
    CHECK_THAT(bad(header + good + row + "\n"),
               Catch::StartsWith(std::string("t.csv:3: ") + message));
  }
  // CRLF line ends, a missing final newline and blank lines are fine.
  auto ok = ParseAzureTrace(
      header + "2023-11-16 18:15:46.5,10,2\r\n\n2023-11-16 18:15:47.5,20,3", "t.csv",
      m);
  REQUIRE(ok.ok());
  REQUIRE(ok->requests.size() == 2);
  CHECK(ok->requests[1].arrival == absl::Seconds(1));
  // Fractions are exact to the nanosecond, across midnight.
  ok = ParseAzureTrace(header + "2023-12-31 23:59:59.000000001,10,2\n"
                                "2024-01-01 00:00:00.123456789,10,2\n",
                       "t.csv", m);
  REQUIRE(ok.ok());
  REQUIRE(ok->requests.size() == 2);
  CHECK(ok->requests[1].arrival == absl::Nanoseconds(1'123'456'788));
}

TEST_CASE("trace mapping assigns users, classes and the replay window",
          "[sim]") {
  std::string text = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  for (int i = 0; i < 10; ++i) {
    text += "2023-11-16 18:00:0" + std::to_string(i) + ".0," +
            std::to_string(100 * (i + 1)) + ",5\n";
  }
  TraceMapping m;
  m.users = {2, 0};
  m.class_rules = {{.max_prompt_tokens = 300, .work_class = 1}};
  m.default_class = 3;
  m.skip = absl::Seconds(2);
  m.duration = absl::Seconds(6);
  m.time_scale = 2;
  auto w = ParseAzureTrace(text, "t.csv", m);
  REQUIRE(w.ok());
  REQUIRE(w->requests.size() == 6);  // rows at 2..7 s
  CHECK(w->requests[0].arrival == absl::Seconds(0));
  CHECK(w->requests[5].arrival == absl::Seconds(2.5));
  CHECK(w->requests[0].user == 2);
  CHECK(w->requests[1].user == 0);
  CHECK(w->requests[0].work_class == 1);  // prompt 300
  CHECK(w->requests[1].work_class == 3);  // prompt 400
  m.max_requests = 2;
  CHECK(ParseAzureTrace(text, "t.csv", m)->requests.size() == 2);
  m.time_scale = 0;
  CHECK(absl::IsInvalidArgument(ParseAzureTrace(text, "t.csv", m).status()));
}

}  // namespace
}  // namespace hearth
