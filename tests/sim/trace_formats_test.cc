// Readers for the trace formats people have: Mooncake, ServeGen datasets,
// ShareGPT-style lengths, BurstGPT and Hearth's request JSONL. Each reads a
// hand-written sample in testdata/ that follows the public format, and
// names the file, line and field of a bad row.

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/sim/burstgpt_trace.h"
#include "hearth/sim/mooncake_trace.h"
#include "hearth/sim/scenario_config.h"
#include "hearth/sim/request_jsonl.h"
#include "hearth/sim/servegen_dataset.h"
#include "hearth/sim/servegen_trace.h"
#include "hearth/sim/sharegpt_lengths.h"
#include "hearth/sim/simulator.h"
#include "sim/json_fields.h"
#include "tests/sim/sim_test_util.h"

namespace hearth {
namespace {

using testing_sim::Fixture;

std::string ErrorOf(const absl::StatusOr<Workload>& w) {
  REQUIRE_FALSE(w.ok());
  return std::string(w.status().message());
}

TEST_CASE("mooncake rows keep their hash ids as 512-token prefix blocks", "[sim]") {
  auto w = LoadMooncakeTrace(Fixture("mooncake_sample.jsonl"), TraceMapping{});
  REQUIRE(w.ok());
  REQUIRE(w->requests.size() == 5);
  const SimRequest& third = w->requests[2];
  CHECK(third.arrival == absl::Seconds(4));
  CHECK(third.prompt_tokens == 1300);
  CHECK(third.output_tokens == 30);
  CHECK(third.prefix_hashes == std::vector<uint64_t>{0, 1, 5});
  CHECK(third.prefix_hash_tokens == 512);
  CHECK(third.label == "mooncake_sample.jsonl:3");
  CHECK(w->requests[4].label == "mooncake_sample.jsonl:6");  // the blank line counts
}

TEST_CASE("a mooncake replay hits the prefix cache on shared hash ids", "[sim]") {
  auto w = LoadMooncakeTrace(Fixture("mooncake_sample.jsonl"), TraceMapping{});
  REQUIRE(w.ok());
  auto cost = testing_sim::FlatCost(10);
  SimulationOptions o;
  o.scheduler = testing_sim::SmallScheduler({"u"}, {"c"});
  o.cost_model = cost.get();
  auto r = RunSimulation(*w, o);
  REQUIRE(r.ok());
  CHECK(r->report.total.finished == 5);
  // Rows 3 and 4 share ids 0 and 1 with row 1 (1024 tokens, 64 blocks), and
  // row 4 also id 2: only full 16-token blocks hit.
  CHECK(r->prefix_hit_tokens >= 2 * 1024);

  // Without hash ids the same lengths share nothing.
  for (SimRequest& q : w->requests) q.prefix_hashes.clear();
  auto plain = RunSimulation(*w, o);
  REQUIRE(plain.ok());
  CHECK(plain->prefix_hit_tokens == 0);
}

TEST_CASE("mooncake rows name the line and field at fault", "[sim]") {
  auto parse = [](const char* text) { return ParseMooncakeTrace(text, "m.jsonl", {}); };
  CHECK_THAT(ErrorOf(parse("{\"timestamp\": 0, \"input_length\": 0, \"output_length\": 1}\n")),
             Catch::StartsWith("m.jsonl:1: input_length '0' must be an integer in [1, "));
  CHECK_THAT(ErrorOf(parse("{\"timestamp\": 5, \"input_length\": 9, \"output_length\": 1}\n"
                           "{\"timestamp\": -1, \"input_length\": 9, \"output_length\": 1}\n")),
             Catch::StartsWith("m.jsonl:2: timestamp '-1' must be a number in [0, "));
  CHECK_THAT(ErrorOf(parse("{\"timestamp\": 0, \"input_length\": 9, \"output_length\": 1, "
                           "\"hash_ids\": [1, -2]}\n")),
             Catch::StartsWith("m.jsonl:1: hash_ids[1] '-2' must be an integer in [0, 2^64)"));
  CHECK_THAT(ErrorOf(parse("{\"timestamp\": 0, \"input_length\": 9}\n")),
             Catch::StartsWith("m.jsonl:1: output_length is missing"));
  CHECK_THAT(ErrorOf(parse("{\"timestamp\": 0, \"input_length\": 1e300, \"output_length\": 1}")),
             Catch::StartsWith("m.jsonl:1: input_length '1e+300' must be an integer"));
  CHECK_THAT(ErrorOf(parse("[1]\n")), Catch::StartsWith("m.jsonl:1: JSON: expected an object"));
  CHECK_THAT(ErrorOf(parse("{\"timestamp\": 9, \"input_length\": 9, \"output_length\": 1}\n"
                           "{\"timestamp\": 1, \"input_length\": 9, \"output_length\": 1}\n")),
             Catch::StartsWith("m.jsonl:2: timestamp is earlier than the first row's"));
  // Ids past the prompt are dropped: 9 tokens need one block.
  auto w = parse("{\"timestamp\": 0, \"input_length\": 9, \"output_length\": 1, "
                 "\"hash_ids\": [4, 5, 6]}");
  REQUIRE(w.ok());
  CHECK(w->requests[0].prefix_hashes.size() == 1);
}

TEST_CASE("TopLevelMembers finds where each element or key starts", "[sim]") {
  using internal::TopLevelMembers;
  auto lines = [](std::string_view text) {
    std::vector<std::pair<int64_t, std::string>> out;
    for (const auto& m : TopLevelMembers(text)) out.emplace_back(m.line, m.key);
    return out;
  };
  using Members = std::vector<std::pair<int64_t, std::string>>;
  CHECK(lines("[1, 2,\n 3]") == Members{{1, ""}, {1, ""}, {2, ""}});
  CHECK(lines("  {\n\"b\": {\"x\": [1,\n2]},\n\"a\\\"q\": \"},\"\n}") ==
        Members{{2, "b"}, {4, "a\\\"q"}});
  CHECK(lines("[]").empty());
  CHECK(lines("{}").empty());
}

TEST_CASE("servegen datasets give each client its own lengths", "[sim]") {
  auto windows = ParseServeGenDataset(
      R"({"1200": {"input_tokens": "{7: 1.0}", "output_tokens": "{3: 1}"},
          "600": {"input_tokens": "{5: 0.5, 6: 0.5}", "output_tokens": "{2: 1.0}"},
          "0": {"input_tokens": "{}", "output_tokens": "{}"}})",
      "d.json");
  REQUIRE(windows.ok());
  REQUIRE(windows->size() == 2);  // the empty window carries no data
  CHECK((*windows)[0].start_s == 600);  // sorted by time, not as strings
  CHECK(ServeGenWindowAt(*windows, 599) == nullptr);
  CHECK(ServeGenWindowAt(*windows, 1199.9)->start_s == 600);
  CHECK((*windows)[0].input.At(0.25) == 5);
  CHECK((*windows)[0].input.At(0.75) == 6);

  auto msg = [](const char* text) {
    auto r = ParseServeGenDataset(text, "d.json");
    REQUIRE_FALSE(r.ok());
    return std::string(r.status().message());
  };
  CHECK_THAT(msg(R"({"x": {}})"), Catch::StartsWith("d.json:1: window 'x': the key must be"));
  CHECK_THAT(msg(R"({"0": {"input_tokens": "{5: nan}", "output_tokens": "{}"}})"),
             Catch::StartsWith("d.json:1: window '0': input_tokens: entry '5: nan' must be"));
  CHECK_THAT(msg("{\"1\": {\"input_tokens\": \"{}\", \"output_tokens\": \"{}\"},\n"
                 "\"0\": {\"input_tokens\": \"{5: 0}\", \"output_tokens\": \"{1: 1}\"}}"),
             Catch::StartsWith("d.json:2: window '0': input_tokens: every probability is 0"));
  CHECK_THAT(msg("{\n\"0\": {\"input_tokens\": 5,}\n}"), Catch::StartsWith("d.json:2: JSON: "));
  CHECK_THAT(msg(R"({"0": {"output_tokens": "{1: 1}"}})"),
             Catch::StartsWith("d.json:1: window '0': input_tokens must be a string"));

  ServeGenOptions o;
  o.directory = Fixture("");
  o.clients = {{.client_id = 7, .user = 0}};
  o.start = absl::Seconds(600);
  o.duration = absl::Seconds(1200);
  o.lengths_from_datasets = true;
  auto w = LoadServeGen(o);
  REQUIRE(w.ok());
  REQUIRE_FALSE(w->requests.empty());
  for (const SimRequest& r : w->requests) {
    const bool late = r.arrival >= absl::Seconds(600);  // trace time 1200 s on
    CHECK((late ? (r.prompt_tokens == 3000 || r.prompt_tokens == 4000)
                : (r.prompt_tokens == 100 || r.prompt_tokens == 200)));
    CHECK((late ? (r.output_tokens == 1 || r.output_tokens == 50) : r.output_tokens == 10));
  }
  o.dataset_directory = "/nonexistent";
  CHECK_FALSE(LoadServeGen(o).ok());
}

TEST_CASE("sharegpt lengths come from conversations or lists, at Poisson times", "[sim]") {
  TraceMapping m;
  m.users = {0, 1};
  ShareGptOptions o;
  o.rate_per_s = 2;
  auto w = LoadShareGptLengths(Fixture("sharegpt_sample.json"), m, o);
  REQUIRE(w.ok());
  REQUIRE(w->requests.size() == 3);  // the one-turn conversation is skipped
  CHECK(w->requests[0].prompt_tokens == 70 / 4);
  CHECK(w->requests[1].prompt_tokens == 512);
  CHECK(w->requests[1].output_tokens == 128);
  CHECK(w->requests[1].label == "sharegpt_sample.json[2]");
  CHECK(w->requests[1].user == 1);
  CHECK(w->requests[0].arrival < w->requests[1].arrival);
  CHECK(w->requests[1].arrival < w->requests[2].arrival);
  // Seeded: the same mapping gives the same times, another seed others.
  auto again = LoadShareGptLengths(Fixture("sharegpt_sample.json"), m, o);
  CHECK(again->requests[2].arrival == w->requests[2].arrival);
  m.seed = 2;
  auto other = LoadShareGptLengths(Fixture("sharegpt_sample.json"), m, o);
  CHECK(other->requests[2].arrival != w->requests[2].arrival);

  auto lines = LoadShareGptLengths(Fixture("sharegpt_lengths.jsonl"), TraceMapping{}, o);
  REQUIRE(lines.ok());
  CHECK(lines->requests.size() == 3);
  CHECK(lines->requests[1].label == "sharegpt_lengths.jsonl:2");

  auto parse = [&o](const char* text) { return ParseShareGptLengths(text, "s.json", {}, o); };
  CHECK_THAT(ErrorOf(parse("[{\"prompt_len\": 1, \"output_len\": 1}, {\"prompt_len\": -3}]")),
             Catch::StartsWith("s.json:1: [1]: prompt_len '-3' must be an integer"));
  CHECK_THAT(ErrorOf(parse("{\"prompt_len\": 4, \"output_len\": 2}\n{\"prompt_len\": 4, \"output_len\": \"x\"}\n")),
             Catch::StartsWith("s.json:2: output_len '\"x\"' must be an integer"));
  CHECK_THAT(ErrorOf(parse("[\n{\"conversations\": [1, 2]}\n]")),
             Catch::StartsWith("s.json:2: [0]: conversations[0] must be an object"));
  // Each entry's own line, however the list is laid out, strings and nesting
  // included.
  CHECK_THAT(ErrorOf(parse("[\n {\"prompt_len\": 1, \"output_len\": 1, \"x\": \"],\\\"{\"},\n"
                           " [1, [2]],\n\n {\"prompt_len\": 0}\n]")),
             Catch::StartsWith("s.json:3: [1]: "));
  CHECK_THAT(ErrorOf(parse("[\n{\"prompt_len\": 4,,}\n]")), Catch::StartsWith("s.json:2: JSON: "));
  o.rate_per_s = 0;
  CHECK_FALSE(parse("").ok());
}

TEST_CASE("burstgpt rows replay failed responses as a prefill unless skipped", "[sim]") {
  auto w = LoadBurstGptTrace(Fixture("burstgpt_sample.csv"), TraceMapping{});
  REQUIRE(w.ok());
  REQUIRE(w->requests.size() == 5);
  CHECK(w->requests[1].prompt_tokens == 1087);
  CHECK(w->requests[1].output_tokens == 1);  // failed: 0 response tokens
  CHECK(w->requests[1].arrival == absl::Seconds(40));
  BurstGptOptions o;
  o.failed = FailedResponses::kSkip;
  o.models = {"ChatGPT"};
  auto chatgpt = LoadBurstGptTrace(Fixture("burstgpt_sample.csv"), TraceMapping{}, o);
  REQUIRE(chatgpt.ok());
  CHECK(chatgpt->requests.size() == 3);
  CHECK(chatgpt->requests[2].label == "burstgpt_sample.csv:6");

  const std::string header =
      "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n";
  auto parse = [](const std::string& text) { return ParseBurstGptTrace(text, "b.csv", {}); };
  CHECK_THAT(ErrorOf(parse("Timestamp,Model\n")), Catch::StartsWith("b.csv:1: expected the header"));
  CHECK_THAT(ErrorOf(parse(header + "nan,ChatGPT,1,1,2,API log\n")),
             Catch::StartsWith("b.csv:2: Timestamp 'nan' must be seconds"));
  CHECK_THAT(ErrorOf(parse(header + "1,ChatGPT,0,1,1,API log\n")),
             Catch::StartsWith("b.csv:2: Request tokens '0' must be an integer in [1, 2^30]"));
  CHECK_THAT(ErrorOf(parse(header + "1,ChatGPT,5,-1,4,API log\n")),
             Catch::StartsWith("b.csv:2: Response tokens '-1'"));
  CHECK_THAT(ErrorOf(parse(header + "1,ChatGPT,5,1\n")),
             Catch::StartsWith("b.csv:2: expected 6 fields, found 4"));
}

TEST_CASE("request jsonl reads users, classes, chains and prefix hashes by name", "[sim]") {
  RequestJsonlOptions o;
  o.user_names = {"alice", "bob"};
  o.class_names = {"chat", "agent"};
  auto w = LoadRequestJsonl(Fixture("requests_sample.jsonl"), o);
  REQUIRE(w.ok());
  REQUIRE(w->requests.size() == 4);
  CHECK(w->requests[1].parent == 0);
  CHECK(w->requests[1].think_time == absl::Seconds(2));
  CHECK(w->requests[1].shared_prefix_tokens == 430);
  CHECK(w->requests[2].user == 1);
  CHECK(w->requests[2].work_class == 0);  // the default class
  CHECK(w->requests[2].prefix_hashes == std::vector<uint64_t>{1, 2, 3});
  CHECK(w->requests[3].work_class == 1);
  CHECK(w->requests[3].max_new_tokens == 8);

  auto cost = testing_sim::FlatCost(10);
  SimulationOptions so;
  so.scheduler = testing_sim::SmallScheduler(o.user_names, o.class_names);
  so.cost_model = cost.get();
  auto r = RunSimulation(*w, so);
  REQUIRE(r.ok());
  CHECK(r->report.total.finished == 4);
  CHECK(r->prefix_hit_tokens > 0);  // bob's request shares alice's hashed blocks

  auto parse = [&o](const char* text) { return ParseRequestJsonl(text, "r.jsonl", o); };
  CHECK_THAT(ErrorOf(parse("{\"user\": \"zoe\", \"arrival_s\": 0, \"prompt_tokens\": 1, "
                           "\"output_tokens\": 1}")),
             Catch::StartsWith("r.jsonl:1: user 'zoe' is not one of alice, bob"));
  CHECK_THAT(ErrorOf(parse("{\"prompt_tokens\": 1, \"output_tokens\": 1}")),
             Catch::StartsWith("r.jsonl:1: arrival_s is missing"));
  CHECK_THAT(ErrorOf(parse("{\"parent\": \"p\", \"prompt_tokens\": 1, \"output_tokens\": 1}")),
             Catch::StartsWith("r.jsonl:1: parent 'p' is not the id of an earlier line"));
  CHECK_THAT(ErrorOf(parse("{\"id\": \"a\", \"arrival_s\": 0, \"prompt_tokens\": 1, "
                           "\"output_tokens\": 1}\n{\"id\": \"a\", \"arrival_s\": 0, "
                           "\"prompt_tokens\": 1, \"output_tokens\": 1}")),
             Catch::StartsWith("r.jsonl:2: id 'a' is used by an earlier line"));
  CHECK_THAT(ErrorOf(parse("{\"arrival_s\": 1e10, \"prompt_tokens\": 1, \"output_tokens\": 1}")),
             Catch::StartsWith("r.jsonl:1: arrival_s '10000000000.0' must be a number in [0, "));
  CHECK_THAT(ErrorOf(parse("{\"id\": \"a\", \"arrival_s\": 0, \"prompt_tokens\": 4, "
                           "\"output_tokens\": 1}\n{\"parent\": \"a\", \"prompt_tokens\": 9, "
                           "\"output_tokens\": 1, \"shared_prefix_tokens\": 9}")),
             Catch::Contains("(r.jsonl:2): shared_prefix_tokens needs a parent and must fit"));
}

}  // namespace
}  // namespace hearth

namespace hearth {
namespace {

TEST_CASE("Jain's index counts the users who sent work, not idle ones", "[sim]") {
  // Two members with the same requests and a third configured but idle: the
  // two got equal service, so the index is 1, not 2/3.
  Workload w;
  for (uint32_t user : {0u, 1u, 0u, 1u}) {
    SimRequest r;
    r.user = user;
    r.prompt_tokens = 64;
    r.output_tokens = 8;
    w.requests.push_back(r);
  }
  auto cost = testing_sim::FlatCost(10);
  SimulationOptions o;
  o.scheduler = testing_sim::SmallScheduler({"a", "b", "idle"}, {"c"});
  o.cost_model = cost.get();
  auto r = RunSimulation(w, o);
  REQUIRE(r.ok());
  CHECK(r->report.users[2].arrived == 0);
  CHECK(r->report.jain_index == Approx(1.0));
}

}  // namespace
}  // namespace hearth

namespace hearth {
namespace {

constexpr const char* kScenarioHead = R"(
name = "t"
[gpu]
name = "RTX 4090"
[model]
name = "Llama-3.2-3B"
[[users]]
name = "alice"
[[users]]
name = "bob"
[[classes]]
name = "chat"
[[classes]]
name = "agent"
)";

absl::StatusOr<Workload> ScenarioWorkload(const std::string& workload) {
  auto s = ParseScenario(std::string(kScenarioHead) + workload, "t.toml", HEARTH_SIM_TESTDATA);
  if (!s.ok()) return s.status();
  return BuildWorkload(*s);
}

TEST_CASE("scenarios read the new trace kinds and name their bad keys", "[sim]") {
  auto mooncake = ScenarioWorkload(
      "[workload]\nkind = \"mooncake\"\nfile = \"mooncake_sample.jsonl\"\n"
      "default_class = \"agent\"\nmax_requests = 3\n");
  REQUIRE(mooncake.ok());
  CHECK(mooncake->requests.size() == 3);
  CHECK(mooncake->requests[0].work_class == 1);
  auto sharegpt = ScenarioWorkload(
      "[workload]\nkind = \"sharegpt\"\nfile = \"sharegpt_lengths.jsonl\"\nrate_per_s = 10\n"
      "default_class = \"chat\"\n");
  REQUIRE(sharegpt.ok());
  CHECK(sharegpt->requests.size() == 3);
  auto burst = ScenarioWorkload(
      "[workload]\nkind = \"burstgpt\"\nfile = \"burstgpt_sample.csv\"\nfailed = \"skip\"\n"
      "default_class = \"chat\"\n");
  REQUIRE(burst.ok());
  CHECK(burst->requests.size() == 4);
  auto jsonl = ScenarioWorkload(
      "[workload]\nkind = \"jsonl\"\nfile = \"requests_sample.jsonl\"\ndefault_user = \"bob\"\n");
  REQUIRE(jsonl.ok());
  CHECK(jsonl->requests.size() == 4);

  auto message = [](const std::string& workload) {
    auto s = ParseScenario(std::string(kScenarioHead) + workload, "t.toml", ".");
    REQUIRE_FALSE(s.ok());
    return std::string(s.status().message());
  };
  CHECK_THAT(message("[workload]\nkind = \"burstgpt\"\nfile = \"b.csv\"\ndefault_class = "
                     "\"chat\"\nfailed = \"maybe\"\n"),
             Catch::StartsWith("t.toml:19: workload.failed: must be \"replay_prefill\" or"));
  CHECK_THAT(message("[workload]\nkind = \"mooncake\"\nfile = \"m.jsonl\"\ndefault_class = "
                     "\"chat\"\nblock = 5\n"),
             Catch::Contains("workload.block: unknown key; allowed: kind, file, flood, "
                             "request_cap, block_tokens, users"));
  CHECK_THAT(message("[workload]\nkind = \"jsonl\"\nfile = \"r.jsonl\"\ndefault_user = \"zoe\"\n"),
             Catch::Contains("workload.default_user: unknown user 'zoe'"));
  // A bad row's error names the scenario entry and the trace's line.
  auto bad = ScenarioWorkload("[workload]\nkind = \"mooncake\"\nfile = \"burstgpt_sample.csv\"\n"
                              "default_class = \"chat\"\n");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("t.toml:17: workload.file: ") &&
                 Catch::Contains("burstgpt_sample.csv:1: JSON: "));
}

}  // namespace
}  // namespace hearth
