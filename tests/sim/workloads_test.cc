#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "hearth/sim/agent_trace.h"
#include "hearth/sim/household_workload.h"
#include "hearth/sim/servegen_trace.h"
#include "tests/sim/sim_test_util.h"

namespace hearth {
namespace {

TEST_CASE("servegen client files parse and reject bad rows", "[sim]") {
  auto ok = ParseServeGenClient("0,0,0,,0,0\n600,2.5,1.1,Gamma,0.9,0.07\n", "c.csv");
  REQUIRE(ok.ok());
  REQUIRE(ok->size() == 2);
  CHECK((*ok)[1].pattern == ArrivalPattern::kGamma);
  CHECK((*ok)[1].rate == 2.5);
  auto msg = [](const char* text) {
    auto r = ParseServeGenClient(text, "c.csv");
    REQUIRE_FALSE(r.ok());
    return std::string(r.status().message());
  };
  CHECK_THAT(msg("0,0,0,,0,0\n600,1,1,Gamma,1\n"), Catch::StartsWith("c.csv:2: expected 6"));
  CHECK_THAT(msg("0,0,0,,0,0\n600,x,1,Gamma,1,1\n"), Catch::StartsWith("c.csv:2: rate 'x'"));
  CHECK_THAT(msg("0,1,1,Poisson,1,1\n"), Catch::StartsWith("c.csv:1: pattern 'Poisson'"));
  CHECK_THAT(msg("0,1,1,Gamma,0,1\n"), Catch::StartsWith("c.csv:1: shape and scale"));
  CHECK_THAT(msg("600,0,0,,0,0\n0,0,0,,0,0\n"), Catch::StartsWith("c.csv:2: time_s must increase"));
  CHECK_THAT(msg("0,inf,0,,0,0\n"), Catch::StartsWith("c.csv:1: rate 'inf' must be a finite number >= 0"));
  CHECK_THAT(msg("0,1,-2,,0,0\n"), Catch::StartsWith("c.csv:1: cv '-2' must be a finite number >= 0"));
  CHECK_THAT(msg("0,1,1,,0,1x\n"), Catch::StartsWith("c.csv:1: scale '1x'"));
}

TEST_CASE("servegen sampling follows the window rates", "[sim]") {
  std::vector<ServeGenWindow> windows = {
      {0, 0, 0, ArrivalPattern::kIdle, 0, 0},
      {600, 2.0, 1.0, ArrivalPattern::kGamma, 0.5, 1.0},
      {1200, 0.5, 1.0, ArrivalPattern::kWeibull, 0.8, 2.0},
      {1800, 0, 0, ArrivalPattern::kIdle, 0, 0}};
  auto a = *SampleServeGenArrivals(windows, absl::ZeroDuration(), absl::Hours(1), 1.0, 5);
  int first = 0, second = 0;
  for (absl::Duration d : a) {
    CHECK(d >= absl::Seconds(600));
    CHECK(d < absl::Seconds(1800));
    (d < absl::Seconds(1200) ? first : second)++;
  }
  // 1200 and 300 expected; Gamma shape 0.5 is bursty, so allow 25%.
  CHECK(first > 900);
  CHECK(first < 1500);
  CHECK(second > 225);
  CHECK(second < 375);
  CHECK(a == *SampleServeGenArrivals(windows, absl::ZeroDuration(), absl::Hours(1), 1.0, 5));
  CHECK(a != *SampleServeGenArrivals(windows, absl::ZeroDuration(), absl::Hours(1), 1.0, 6));
  // A replay window starting at 1000 s shifts offsets and halves with scale.
  auto b = *SampleServeGenArrivals(windows, absl::Seconds(1000), absl::Seconds(300), 0.5, 5);
  // 200 s at 1/s then 100 s at 0.25/s: 225 expected.
  for (absl::Duration d : b) CHECK(d < absl::Seconds(300));
  CHECK(b.size() > 150);
  CHECK(b.size() < 300);

  ServeGenOptions o;
  o.directory = HEARTH_SIM_TESTDATA;
  o.clients = {{.client_id = 7, .user = 1, .work_class = 2}};
  auto w = LoadServeGen(o);
  REQUIRE(w.ok());
  CHECK(w->requests.size() > 1000);
  CHECK(w->requests[0].user == 1);
  CHECK(w->requests[0].work_class == 2);
  CHECK(ValidateWorkload(*w, 2, 3).ok());
  o.clients[0].client_id = 8;
  CHECK(absl::IsNotFound(LoadServeGen(o).status()));
}

TEST_CASE("agent sessions become chains with shared prefixes", "[sim]") {
  std::ifstream in(std::string(HEARTH_SIM_TESTDATA) + "/session_a.jsonl");
  std::stringstream ss;
  ss << in.rdbuf();
  auto calls = ParseAgentSession(ss.str(), "a.jsonl", 4.0);
  REQUIRE(calls.ok());
  REQUIRE(calls->size() == 3);
  // Sorted by time: the "hi" call (line 2) comes first.
  CHECK((*calls)[0].line == 2);
  CHECK((*calls)[0].prompt_tokens == 35 / 4);
  CHECK((*calls)[0].output_tokens == 9 / 4);  // "Hello é!" is 9 UTF-8 bytes
  // Calls 1 and 2 share "SYSTEM: you are an agent.\nUSER: " (32 bytes).
  CHECK((*calls)[1].shared_prefix_tokens == 8);
  // Call 3 extends call 2's whole prompt (63 bytes -> 15 tokens).
  CHECK((*calls)[2].shared_prefix_tokens == 15);

  AgentTraceOptions o;
  o.files = {std::string(HEARTH_SIM_TESTDATA) + "/session_a.jsonl"};
  o.users = {4};
  o.work_class = 1;
  o.think_scale = 0.5;
  auto w = LoadAgentTraces(o);
  REQUIRE(w.ok());
  REQUIRE(w->requests.size() == 3);
  CHECK(w->requests[1].parent == 0);
  CHECK(w->requests[1].think_time == absl::Milliseconds(500));
  CHECK(w->requests[2].think_time == absl::Milliseconds(1500));
  CHECK(w->requests[2].user == 4);
  CHECK(ValidateWorkload(*w, 5, 2).ok());

  auto bad = ParseAgentSession("{\"timestamp\": 1, \"input\": \"x\", \"output\": \"y\"}\n"
                               "{\"timestamp\": 2, \"input\": [1], \"output\": \"y\"}\n",
                               "s.jsonl", 4);
  CHECK_THAT(std::string(bad.status().message()), Catch::StartsWith("s.jsonl:2: JSON: nested"));
  bad = ParseAgentSession("{\"timestamp\": 1, \"input\": \"x\"}\n", "s.jsonl", 4);
  CHECK_THAT(std::string(bad.status().message()),
             Catch::StartsWith("s.jsonl:1: needs timestamp, input and output"));
  bad = ParseAgentSession("{\"timestamp\": 1, \"input\": \"x\", \"output\": \"y\"} x\n", "s.jsonl", 4);
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("trailing"));
}

TEST_CASE("agent session lines must be flat objects with typed fields", "[sim]") {
  auto msg = [](const std::string& line) {
    auto r = ParseAgentSession(line + "\n", "s.jsonl", 4);
    REQUIRE_FALSE(r.ok());
    return std::string(r.status().message());
  };
  CHECK_THAT(msg("{\"timestamp\": 1, \"input\" \"x\"}"),
             Catch::StartsWith("s.jsonl:1: JSON: parse error at line 1, column 28: syntax error"));
  CHECK_THAT(msg("{\"timestamp\": 1, \"input\": \"x\""),
             Catch::StartsWith("s.jsonl:1: JSON: parse error"));
  CHECK_THAT(msg("[1, 2]"), Catch::StartsWith("s.jsonl:1: JSON: expected an object, found array"));
  CHECK_THAT(msg("{\"timestamp\": true, \"input\": \"x\", \"output\": \"y\"}"),
             Catch::StartsWith("s.jsonl:1: timestamp 'true' must be a number of microseconds in [0, 1e+17]"));
  CHECK_THAT(msg("{\"timestamp\": -1, \"input\": \"x\", \"output\": \"y\"}"),
             Catch::StartsWith("s.jsonl:1: timestamp '-1' must be a number of microseconds"));
  CHECK_THAT(msg("{\"timestamp\": 1, \"input\": 3, \"output\": \"y\"}"),
             Catch::StartsWith("s.jsonl:1: input must be a string"));
  CHECK_THAT(msg("{\"timestamp\": 1, \"input\": \"x\", \"output\": null}"),
             Catch::StartsWith("s.jsonl:1: output must be a string"));
  CHECK_THAT(msg("{\"timestamp\": 1, \"input\": \"x\", \"output\": \"y\"}}"),
             Catch::StartsWith("s.jsonl:1: JSON: trailing characters after the object at byte 45"));
  // Escapes are decoded before lengths are taken: "\u00e9" is two UTF-8 bytes.
  auto ok = ParseAgentSession(
      "{\"timestamp\": 1.5e3, \"input\": \"\\u00e9\\u00e9\", \"output\": \"\\n\", \"x\": null}  \r\n",
      "s.jsonl", 1);
  REQUIRE(ok.ok());
  CHECK((*ok)[0].timestamp_us == 1500);
  CHECK((*ok)[0].prompt_tokens == 4);
  CHECK((*ok)[0].output_tokens == 1);
}

TEST_CASE("household generator is seeded and shaped", "[sim]") {
  HouseholdOptions o = DefaultHousehold(4, 0, 1, 2, 3, 4);
  o.duration = absl::Hours(24);
  auto a = GenerateHousehold(o);
  auto b = GenerateHousehold(o);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(a->requests.size() == b->requests.size());
  for (size_t i = 0; i < a->requests.size(); ++i) {
    CHECK(a->requests[i].arrival == b->requests[i].arrival);
    CHECK(a->requests[i].prompt_tokens == b->requests[i].prompt_tokens);
  }
  CHECK(ValidateWorkload(*a, 4, 5).ok());
  o.seed = 2;
  auto c = GenerateHousehold(o);
  REQUIRE(c.ok());
  bool differs = c->requests.size() != a->requests.size();
  for (size_t i = 0; !differs && i < a->requests.size(); ++i) {
    differs = a->requests[i].arrival != c->requests[i].arrival;
  }
  CHECK(differs);
  // Calls per day near the expectation (Poisson sessions; loose bound).
  const double expected = ExpectedCallsPerSecond(o) * 86400;
  CHECK(static_cast<double>(c->requests.size()) > 0.7 * expected);
  CHECK(static_cast<double>(c->requests.size()) < 1.3 * expected);
  int nightly = 0;
  for (const SimRequest& r : a->requests) {
    if (r.work_class == 2) {
      CHECK(r.prompt_tokens >= 8000);
      CHECK(r.prompt_tokens <= 32000);
    }
    if (r.work_class == 4 && r.parent < 0) {
      ++nightly;
      const double hour = absl::ToDoubleHours(r.arrival);
      CHECK(hour >= 1);
      CHECK(hour < 5);
    }
    if (r.work_class == 1 && r.parent >= 0) {
      CHECK(r.shared_prefix_tokens > 0);
    }
  }
  CHECK(nightly > 0);
  o.diurnal = {1.0};
  CHECK(absl::IsInvalidArgument(GenerateHousehold(o).status()));
}

}  // namespace
}  // namespace hearth
