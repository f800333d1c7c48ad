#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/sim/report_writer.h"
#include "hearth/sim/scenario_config.h"

namespace hearth {
namespace {

const char* kScenario = R"(
name = "tiny"
seed = 3
policies = ["fifo", "household"]

[gpu]
name = "RTX 4090"

[model]
name = "Llama-3.2-3B"
context_length = 40000

[cost]
compute_efficiency = 0.6
bandwidth_efficiency = 0.8
step_overhead_ms = 2

[scheduler]
max_batched_tokens = 1024
max_running = 32

[[users]]
name = "alice"
weight = 2

[[users]]
name = "bob"

[[classes]]
name = "voice"
priority = 2
timeout_s = 60
ttft_slo_s = 0.5

[[classes]]
name = "chat"

[[classes]]
name = "documents"

[workload]
kind = "household"
duration_s = 600
start_hour = 20
classes = { voice = "voice", chat = "chat", documents = "documents" }

[[workload.flood]]
user = "bob"
class = "documents"
count = 3
spacing_s = 1
)";

// An absent SLO key is no target (InfiniteDuration), as is "off": a zero
// read as "none" would judge every request as missing it.
TEST_CASE("absent or off SLO keys are no target, given ones reach the report and the "
          "scheduler", "[sim]") {
  std::string text = kScenario;
  const std::string chat = "name = \"chat\"\n";
  text.replace(text.find(chat), chat.size(), chat + "tpot_slo_s = \"off\"\ne2e_slo_s = 30\n");
  auto s = ParseScenario(text, "tiny.toml", ".");
  REQUIRE(s.ok());
  REQUIRE(s->class_slos.size() == 3);
  CHECK(s->class_slos[0].ttft == absl::Milliseconds(500));
  CHECK(s->class_slos[0].tpot == absl::InfiniteDuration());
  CHECK(s->class_slos[0].e2e == absl::InfiniteDuration());
  CHECK(s->class_slos[1].ttft == absl::InfiniteDuration());
  CHECK(s->class_slos[1].tpot == absl::InfiniteDuration());
  CHECK(s->class_slos[1].e2e == absl::Seconds(30));
  CHECK(s->class_slos[2].ttft == absl::InfiniteDuration());
  CHECK(s->scheduler.work_classes[0].ttft_slo == absl::Milliseconds(500));
  CHECK(s->scheduler.work_classes[1].ttft_slo == absl::InfiniteDuration());
}

TEST_CASE("a scenario file parses into scheduler and workload settings",
          "[sim]") {
  auto s = ParseScenario(kScenario, "tiny.toml", ".");
  REQUIRE(s.ok());
  CHECK(s->name == "tiny");
  CHECK(s->scheduler.users.size() == 2);
  CHECK(s->scheduler.users[0].weight == 2);
  CHECK(s->scheduler.work_classes[0].priority == 2);
  CHECK(s->class_timeouts[0] == absl::Seconds(60));
  CHECK(s->class_timeouts[1] == absl::InfiniteDuration());
  CHECK(s->class_slos[0].ttft == absl::Milliseconds(500));

  CHECK(s->scheduler.models[0].context_length == 40000);
  // (24 GiB * 0.9 - 6.43 GB of weights) / (28*8*128*2*2 B * 16) blocks.
  const double kv = 24.0 * 1073741824 * 0.9 - 3'212'749'824.0 * 2;
  CHECK(s->scheduler.kv.num_device_blocks ==
        static_cast<int32_t>(kv / (114688.0 * 16)));
  CHECK(s->workload.household.classes.size() == 3);
  CHECK(s->workload.floods.size() == 1);
  auto w = BuildWorkload(*s);
  REQUIRE(w.ok());
  CHECK(w->requests.size() > 3);
  CHECK(w->requests.back().label == "flood:2");
  auto o = SimulationOptionsFor(*s, "household");
  REQUIRE(o.ok());
  auto r = RunSimulation(*w, *o);
  REQUIRE(r.ok());
  auto oracle = SimulationOptionsFor(*s, "oracle_srpt");
  REQUIRE(oracle.ok());
  CHECK(oracle->oracle_policy);
  auto ro = RunSimulation(*w, *oracle);
  REQUIRE(ro.ok());
  std::vector<PolicyRun> runs = {{"household", *r}, {"oracle_srpt", *ro}};
  const std::string md = MarkdownReport(*s, runs);
  CHECK_THAT(md, Catch::Contains("| household |"));
  CHECK_THAT(md, Catch::Contains("| oracle_srpt |"));
  // JCT in the headline, per class and per user.
  CHECK_THAT(md, Catch::Contains("| mean / p99 JCT s |") &&
                     Catch::Contains("p99 ITL ms, mean / p99 JCT s, SLO met") &&
                     Catch::Contains("p99 TTFT ms, mean / p99 JCT s:"));
  CHECK_THAT(md, Catch::Contains("| voice |"));
  CHECK_THAT(ResultsCsv(runs), Catch::Contains("household,class,documents,"));
  CHECK_THAT(ResultsJson(*s, runs), Catch::StartsWith("{\"scenario\":\"tiny\""));
}

std::string ErrorOf(std::string text) {
  auto s = ParseScenario(text, "t.toml", ".");
  REQUIRE_FALSE(s.ok());
  return std::string(s.status().message());
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

TEST_CASE("class limits parse into WorkClassConfig", "[sim]") {
  const std::string text = Replace(kScenario, "name = \"documents\"\n",
                                   "name = \"documents\"\nmax_running = 2\nkv_block_budget = 500\n"
                                   "borrow = false\nqueue_timeout_s = 120\nmax_retries = 3\n");
  auto s = ParseScenario(text, "tiny.toml", ".");
  REQUIRE(s.ok());
  const WorkClassConfig& docs = s->scheduler.work_classes[2];
  CHECK(docs.max_running == 2);
  CHECK(docs.kv_block_budget == 500);
  CHECK_FALSE(docs.borrow);
  CHECK(docs.queue_timeout == absl::Seconds(120));
  CHECK(docs.max_retries == 3);
  CHECK(s->scheduler.work_classes[0].max_running == 0);
  CHECK(s->scheduler.work_classes[0].borrow);
  CHECK_THAT(ErrorOf(Replace(text, "borrow = false", "borrow = 3")),
             Catch::Contains("classes[2].borrow: is 3; must be true or false"));
}

TEST_CASE("scenario errors name file, line and key", "[sim]") {
  const std::string base = kScenario;
  CHECK_THAT(ErrorOf(Replace(base, "timeout_s = 60", "timeout_s = -1")),
             Catch::StartsWith("t.toml:32: classes[0].timeout_s: must be a number of seconds"));
  CHECK_THAT(ErrorOf(Replace(base, "name = \"RTX 4090\"", "name = \"TPU\"")),
             Catch::StartsWith("t.toml:7: gpu.name: unknown GPU 'TPU'"));
  CHECK_THAT(ErrorOf(Replace(base, "weight = 2", "wieght = 2")),
             Catch::StartsWith("t.toml:24: users[0].wieght: unknown key"));
  CHECK_THAT(ErrorOf(Replace(base, "user = \"bob\"", "user = \"eve\"")),
             Catch::Contains("workload.flood[0].user: unknown user 'eve'; known: alice, bob"));
  CHECK_THAT(ErrorOf(Replace(base, "\"household\"]", "\"lottery\"]")),
             Catch::StartsWith("t.toml:4: policies: unknown policy 'lottery'"));
  CHECK_THAT(ErrorOf(Replace(base, "max_running = 32", "max_running = \"many\"")),
             Catch::StartsWith("t.toml:20: scheduler.max_running: is \"many\"; must be an integer"));
  CHECK_THAT(ErrorOf(Replace(base, "kind = \"household\"", "kind = \"poisson\"")),
             Catch::StartsWith("t.toml:42: workload.kind: must be"));
  CHECK_THAT(ErrorOf("name = \"x\"\n[gpu\n"), Catch::StartsWith("t.toml:2:"));
  CHECK(absl::IsNotFound(LoadScenario("/nonexistent.toml").status()));
}

}  // namespace
}  // namespace hearth

namespace hearth {
namespace {

// The scenario with `lines` added to its [scheduler] table.
std::string WithScheduler(const std::string& lines) {
  std::string text = kScenario;
  text.insert(text.find("[scheduler]\n") + 12, lines);
  return text;
}

TEST_CASE("the scheduler table sets the scheduler's intake limits", "[sim]") {
  const std::string text = WithScheduler(R"(max_pending_requests = 5000
max_pending_bytes = 1000000
reserved_pending_share = 0.25
max_intake_per_plan = 64
max_label_bytes = 100
max_arrival_lead_s = 2.5
)");
  auto s = ParseScenario(text, "tiny.toml", ".");
  REQUIRE(s.ok());
  const SchedulerOptions& o = s->scheduler;
  CHECK(o.max_pending_requests == 5000);
  CHECK(o.max_pending_bytes == 1000000);
  CHECK(o.reserved_pending_share == 0.25);
  CHECK(o.max_intake_per_plan == 64);
  CHECK(o.max_label_bytes == 100);
  CHECK(o.max_arrival_lead == absl::Milliseconds(2500));
  // Absent, the library's defaults.
  auto plain = ParseScenario(kScenario, "tiny.toml", ".");
  REQUIRE(plain.ok());
  CHECK(plain->scheduler.max_intake_per_plan == SchedulerOptions{}.max_intake_per_plan);

  auto bad = ParseScenario(WithScheduler("reserved_pending_share = 1.5\n"), "tiny.toml", ".");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::StartsWith("tiny.toml:19: scheduler.reserved_pending_share: is 1.5; must be "
                               "in [0, 1]"));
  auto unknown = ParseScenario(WithScheduler("max_queue = 1\n"), "tiny.toml", ".");
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(std::string(unknown.status().message()), Catch::Contains("scheduler.max_queue"));
}

TEST_CASE("hostile scheduler values are refused with the key and the range", "[sim]") {
  for (const auto& [line, want] : std::vector<std::pair<std::string, std::string>>{
           {"max_intake_per_plan = 2147483648\n", "is 2147483648; must be in [1, 2^20]"},
           {"max_intake_per_plan = -1\n", "is -1; must be in [1, 2^20]"},
           {"swap_block_cost_tokens = nan\n", "is nan; must be >= 0 and finite"},
           {"swap_block_cost_tokens = inf\n", "is inf; must be >= 0 and finite"},
           {"max_arrival_lead_s = nan\n", "is nan; must be >= 0 and finite"},
           {"max_arrival_lead_s = 1e300\n", "; must be >= 0 and finite"},
           {"max_arrival_lead_s = -1\n", "is -1s; must be >= 0 and finite"},
           {"kv.block_size = 9223372036854775807\n", "must be in [1, 4096]"},
           {"preemption_mode = \"" + std::string(5000, 'x') + "\"\n",
            "...\"; must be \"recompute\" or \"swap\""},
           {"kv = 3\n", "scheduler.kv: must be a table"}}) {
    INFO(line.substr(0, 80));
    auto s = ParseScenario(WithScheduler(line), "tiny.toml", ".");
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(std::string(s.status().message()),
               Catch::StartsWith("tiny.toml:19") && Catch::Contains(want));
    CHECK(s.status().message().size() < 400);
  }
}

}  // namespace
}  // namespace hearth
