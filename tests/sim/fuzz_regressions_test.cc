// Inputs the fuzzers (tests/fuzz) found to break the simulator, each kept
// as a test; the raw reproducers are in tests/fuzz/corpus/<target>/regress-*.

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/sim/agent_trace.h"
#include "hearth/sim/azure_trace.h"
#include "hearth/sim/servegen_trace.h"
#include "hearth/sim/trace_mapping.h"

namespace hearth {
namespace {

// azure_trace_fuzzer: a denormal time_scale passed "finite and > 0" and
// divided a two-year offset into an infinite arrival.
TEST_CASE("a trace mapping's time scale keeps arrivals finite", "[sim]") {
  const std::string text =
      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
      "1970-01-01 00:00:00,32,3\n"
      "2199-12-31 23:59:59.9999999,32,3\n";
  TraceMapping m;
  m.time_scale = 1e-300;
  absl::StatusOr<Workload> tiny = ParseAzureTrace(text, "t.csv", m);
  REQUIRE_FALSE(tiny.ok());
  CHECK_THAT(std::string(tiny.status().message()),
             Catch::StartsWith("trace mapping: time_scale is 1e-300; must be in [1e-06, 1e+06]"));
  m.time_scale = 1e7;
  CHECK(absl::IsInvalidArgument(ParseAzureTrace(text, "t.csv", m).status()));
  // The slowest replay allowed, over the widest span of rows allowed.
  m.time_scale = kMinTimeScale;
  absl::StatusOr<Workload> slow = ParseAzureTrace(text, "t.csv", m);
  REQUIRE(slow.ok());
  REQUIRE(slow->requests.size() == 2);
  CHECK(slow->requests[1].arrival < absl::InfiniteDuration());
  CHECK(slow->requests[1].arrival > absl::Hours(24 * 365) * 1e8);
}

// agent_trace_fuzzer: a number beyond a double made nlohmann throw
// out_of_range, which the syntax-error path did not catch (std::terminate).
TEST_CASE("an agent trace number beyond a double is a line error", "[sim]") {
  for (const char* line : {"{\"timestamp\": 20E7777777777, \"input\": \"a\", \"output\": \"b\"}",
                           "{\"timestamp\": 1, \"input\": \"a\", \"output\": \"b\", \"x\": -1e999}",
                           "1e999 trailing"}) {
    INFO(line);
    absl::StatusOr<std::vector<AgentCall>> calls =
        ParseAgentSession(std::string("\n") + line, "s.jsonl", 4);
    REQUIRE_FALSE(calls.ok());
    CHECK(absl::IsInvalidArgument(calls.status()));
    CHECK_THAT(std::string(calls.status().message()), Catch::StartsWith("s.jsonl:2: JSON: "));
  }
}

// agent_trace_fuzzer: a denormal bytes_per_token (allowed: "> 0") made a
// few bytes an infinite token count, cast to int32 (UB).
TEST_CASE("agent trace lengths are capped at 2^30 tokens", "[sim]") {
  const std::string text =
      "{\"timestamp\": 1, \"input\": \"abcd\", \"output\": \"ef\"}\n"
      "{\"timestamp\": 2, \"input\": \"abcdgh\", \"output\": \"\"}\n";
  absl::StatusOr<std::vector<AgentCall>> calls = ParseAgentSession(text, "s.jsonl", 5e-324);
  REQUIRE(calls.ok());
  REQUIRE(calls->size() == 2);
  CHECK((*calls)[0].prompt_tokens == 1 << 30);
  CHECK((*calls)[0].output_tokens == 1 << 30);
  CHECK((*calls)[1].output_tokens == 1);  // empty output: still one token
  CHECK((*calls)[1].shared_prefix_tokens == 1 << 30);
}

// servegen_trace_fuzzer: a window at time_s 1.6e11 put an arrival past what
// int64 nanoseconds hold (llround overflowed to an arrival at -inf).
TEST_CASE("a servegen window too far in time is a row error", "[sim]") {
  const std::string text =
      "12,0,0,,0,0\n"
      "160088600000,0.2,0,,0,0\n";
  absl::StatusOr<std::vector<ServeGenWindow>> windows = ParseServeGenClient(text, "c.csv");
  REQUIRE_FALSE(windows.ok());
  CHECK_THAT(std::string(windows.status().message()),
             Catch::StartsWith("c.csv:2:") && Catch::Contains("time_s") &&
                 Catch::Contains("at most 1e9"));
  // The latest window allowed still samples finite arrivals.
  absl::StatusOr<std::vector<ServeGenWindow>> late = ParseServeGenClient(
      "1000000000,0.5,1,Gamma,1,2\n", "c.csv");
  REQUIRE(late.ok());
  absl::StatusOr<std::vector<absl::Duration>> arrivals = SampleServeGenArrivals(
      *late, absl::ZeroDuration(), absl::InfiniteDuration(), 1, 7, 4096);
  REQUIRE(arrivals.ok());
  REQUIRE_FALSE(arrivals->empty());
  for (absl::Duration at : *arrivals) {
    CHECK(at >= absl::Seconds(1e9));
    CHECK(at < absl::Seconds(1e9 + 601));
  }
}

}  // namespace
}  // namespace hearth
