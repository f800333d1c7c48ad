// Inputs the fuzzers (tests/fuzz) found to break the simulator, each kept
// as a test; the raw reproducers are in tests/fuzz/corpus/<target>/regress-*.

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/sim/agent_trace.h"
#include "hearth/sim/azure_trace.h"
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

}  // namespace
}  // namespace hearth
