#include <string>

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

[cost]
compute_efficiency = 0.6
bandwidth_efficiency = 0.8
step_overhead_ms = 2

[engine]
max_batched_tokens = 1024
max_running = 32
max_model_len = 40000

[[users]]
name = "alice"
weight = 2

[[users]]
name = "bob"

[[classes]]
name = "voice"
priority = 2
timeout_s = 60
slo_ttft_ms = 500

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
  text.replace(text.find(chat), chat.size(), chat + "slo_tpot_ms = \"off\"\nslo_e2e_s = 30\n");
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
             Catch::Contains("classes[2].borrow: must be true or false"));
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
             Catch::StartsWith("t.toml:19: engine.max_running: must be an integer"));
  CHECK_THAT(ErrorOf(Replace(base, "kind = \"household\"", "kind = \"poisson\"")),
             Catch::StartsWith("t.toml:42: workload.kind: must be"));
  CHECK_THAT(ErrorOf("name = \"x\"\n[gpu\n"), Catch::StartsWith("t.toml:2:"));
  CHECK(absl::IsNotFound(LoadScenario("/nonexistent.toml").status()));
}

}  // namespace
}  // namespace hearth

namespace hearth {
namespace {

TEST_CASE("the intake section sets the scheduler's intake limits", "[sim]") {
  const std::string text = std::string(kScenario) + R"(
[intake]
max_pending_requests = 5000
max_pending_bytes = 1000000
reserved_pending_share = 0.25
max_intake_per_plan = 64
max_label_bytes = 100
max_arrival_lead_s = 2.5
)";
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

  auto bad = ParseScenario(std::string(kScenario) + "\n[intake]\nreserved_pending_share = 1.5\n",
                           "tiny.toml", ".");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("tiny.toml:") && Catch::Contains("intake.reserved_pending_share"));
  auto unknown = ParseScenario(std::string(kScenario) + "\n[intake]\nmax_queue = 1\n",
                               "tiny.toml", ".");
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(std::string(unknown.status().message()), Catch::Contains("max_queue"));
}

}  // namespace
}  // namespace hearth
