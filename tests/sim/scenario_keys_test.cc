// The scenario keys documented in bench/suites/README.md: the README's
// generated section is the reader's table, and every key listed there,
// set to a value other than its default, reaches the option it names.

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "hearth/sim/scenario_config.h"
#include "hearth/scheduler/option_fields.h"
#include "hearth/sim/scenario_keys.h"

namespace hearth {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string ReadReadme() {
  std::ifstream in(std::string(HEARTH_SOURCE_DIR) + "/bench/suites/README.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The text between the README's markers ("" when one is missing).
std::string GeneratedSection(const std::string& readme) {
  const size_t begin = readme.find(kScenarioKeysBegin);
  const size_t end = readme.find(kScenarioKeysEnd);
  if (begin == std::string::npos || end == std::string::npos || end < begin) return "";
  const size_t from = begin + kScenarioKeysBegin.size() + 1;  // Past the newline.
  return readme.substr(from, end - from);
}

// (table, key) of every row of the generated section, from its headings.
std::vector<std::pair<std::string, std::string>> ReadmeKeys(const std::string& section) {
  std::vector<std::pair<std::string, std::string>> keys;
  std::string table;
  for (absl::string_view line : absl::StrSplit(section, '\n')) {
    if (line.empty()) continue;
    if (absl::StartsWith(line, "| `")) {
      const size_t close = line.find('`', 3);
      keys.emplace_back(table, std::string(line.substr(3, close - 3)));
    } else if (!absl::StartsWith(line, "|")) {
      if (line == "Top level") {
        table = "";
      } else if (absl::StartsWith(line, "`[policy] quotas`")) {
        table = "policy.quotas";
      } else {
        // "`[engine]`" or "`[[users]]` (each entry)".
        const size_t from = line.find_first_not_of("`[");
        table = std::string(line.substr(from, line.find(']') - from));
      }
    }
  }
  return keys;
}

// A scenario with every table present and only required keys set.
const std::vector<std::pair<std::string, std::vector<std::string>>> kBase = {
    {"", {"name = \"keys\""}},
    {"gpu", {"name = \"RTX 4090\""}},
    {"model", {"name = \"Llama-3.2-3B\""}},
    {"cost", {}},
    {"engine", {}},
    {"scheduler", {}},
    {"hints", {}},
    {"[users]", {"name = \"alice\""}},
    {"[users]", {"name = \"bob\""}},
    {"[classes]", {"name = \"voice\""}},
    {"[classes]", {"name = \"chat\""}},
    {"policy", {}},
    {"workload", {"kind = \"household\"", "duration_s = 60",
                  "classes = { chat = \"chat\" }"}},
    {"capacity", {}},
};

// The base scenario with `lines` added to the first entry of `section`
// (a base line setting the same key is dropped).
std::string ScenarioWith(const std::string& section, const std::vector<std::string>& lines) {
  std::string out;
  bool done = false;
  for (const auto& [name, base] : kBase) {
    if (!name.empty()) absl::StrAppend(&out, "[", name, "]\n");
    const bool here = !done && (name == section || name == "[" + section + "]");
    for (const std::string& b : base) {
      bool replaced = false;
      for (const std::string& l : lines) {
        replaced = replaced || (here && b.substr(0, b.find(' ')) == l.substr(0, l.find(' ')));
      }
      if (!replaced) absl::StrAppend(&out, b, "\n");
    }
    if (here) {
      for (const std::string& l : lines) absl::StrAppend(&out, l, "\n");
      done = true;
    }
  }
  return out;
}

absl::StatusOr<Scenario> Parse(const std::string& text) {
  return ParseScenario(text, "keys.toml", HEARTH_SIM_TESTDATA);
}

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }
double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }
// A report SLO target: zero means none, which the README writes "off".
double SloMs(absl::Duration d) { return d == absl::ZeroDuration() ? kInf : Ms(d); }

// A key, the line(s) that set it to a non-default value, and what the
// option it names reads afterwards. `raw`: read() is the option itself, so
// the README's numeric default must equal read() of the base scenario.
struct Probe {
  std::string table;
  std::string key;
  std::vector<std::string> lines;
  std::function<double(const Scenario&)> read;
  double want;
  bool raw = true;
};

double QuotaField(const Scenario& s, double LevelQuota::*field) {
  return s.policy_config.priority.quotas.empty() ? -1
                                                 : s.policy_config.priority.quotas[0].*field;
}

std::vector<Probe> Probes() {
  const auto& wc = [](const Scenario& s) -> const WorkClassConfig& {
    return s.scheduler.work_classes[0];
  };
  const auto& user = [](const Scenario& s) -> const UserConfig& { return s.scheduler.users[0]; };
  return {
      {"", "name", {"name = \"renamed\""}, [](const Scenario& s) { return s.name == "renamed"; }, 1, false},
      {"", "description", {"description = \"d\""}, [](const Scenario& s) { return s.description == "d"; }, 1, false},
      {"", "seed", {"seed = 7"}, [](const Scenario& s) { return double(s.seed); }, 7},
      {"", "policies", {"policies = [\"oracle_srpt\"]"},
       [](const Scenario& s) { return s.policies == std::vector<std::string>{"oracle_srpt"}; }, 1, false},
      {"", "timeline", {"timeline = true"}, [](const Scenario& s) { return double(s.record_timeline); }, 1},
      {"", "series_interval_s", {"series_interval_s = 3"}, [](const Scenario& s) { return Seconds(s.series_interval); }, 3},

      {"gpu", "name", {"name = \"H200\""}, [](const Scenario& s) { return s.gpu.name == "H200"; }, 1, false},
      {"gpu", "memory_bandwidth_gbs", {"memory_bandwidth_gbs = 123"}, [](const Scenario& s) { return s.gpu.memory_bandwidth; }, 123e9},
      {"gpu", "bf16_tflops", {"bf16_tflops = 45"}, [](const Scenario& s) { return s.gpu.bf16_flops; }, 45e12},
      {"gpu", "memory_gib", {"memory_gib = 48"}, [](const Scenario& s) { return double(s.gpu.memory_bytes); }, 48.0 * 1073741824.0},
      {"model", "name", {"name = \"Qwen2.5-7B\""}, [](const Scenario& s) { return s.model.name == "Qwen2.5-7B"; }, 1, false},

      {"cost", "kind", {"kind = \"fitted\"", "profile = \"fitted_profile.toml\""},
       [](const Scenario& s) { return absl::StartsWith(s.cost_model->Describe(), "fitted"); }, 1, false},
      {"cost", "profile", {"kind = \"fitted\"", "profile = \"fitted_profile.toml\""},
       [](const Scenario& s) { return absl::StrContains(s.cost_model->Describe(), ": 0.005 + "); }, 1, false},
      {"cost", "compute_efficiency", {"compute_efficiency = 0.25"},
       [](const Scenario& s) { return absl::StrContains(s.cost_model->Describe(), "compute eff 0.25"); }, 1, false},
      {"cost", "bandwidth_efficiency", {"bandwidth_efficiency = 0.35"},
       [](const Scenario& s) { return absl::StrContains(s.cost_model->Describe(), "bandwidth eff 0.35"); }, 1, false},
      {"cost", "step_overhead_ms", {"step_overhead_ms = 7"},
       [](const Scenario& s) { return absl::StrContains(s.cost_model->Describe(), "overhead 7ms"); }, 1, false},
      // A copy of 1 GB over a 5 GB/s link takes 0.2 s.
      {"cost", "host_link_gbs", {"host_link_gbs = 5"},
       [](const Scenario& s) {
         return std::round(Ms(s.cost_model->StepTime({.host_copy_bytes = 1'000'000'000})));
       }, 200, false},

      {"engine", "gpu_memory_utilization", {"gpu_memory_utilization = 0.5"},
       [](const Scenario& s) {
         const double kv = s.gpu.memory_bytes * 0.5 - double(s.model.WeightBytes());
         return double(s.scheduler.kv.num_device_blocks) ==
                std::floor(kv / (double(s.model.KvBytesPerToken()) * 16));
       }, 1, false},
      {"engine", "tpot_budget", {"tpot_budget = true"}, [](const Scenario& s) { return double(s.tpot_budget); }, 1},
      {"engine", "max_new_tokens", {"max_new_tokens = 100"}, [](const Scenario& s) { return double(s.default_max_new_tokens); }, 100},

      {"hints", "output_length", {"output_length = true"}, [](const Scenario& s) { return double(s.output_hints.enabled); }, 1, false},
      {"hints", "output_length_noise", {"output_length_noise = 0.5"}, [](const Scenario& s) { return s.output_hints.noise_sigma; }, 0.5},

      {"users", "name", {"name = \"carol\""}, [=](const Scenario& s) { return user(s).name == "carol"; }, 1, false},
      {"users", "activity", {"activity = 2"}, [](const Scenario& s) { return s.workload.household.members[0].activity; }, 2},

      {"classes", "name", {"name = \"call\""}, [=](const Scenario& s) { return wc(s).name == "call"; }, 1, false},
      {"classes", "timeout_s", {"timeout_s = 12"}, [](const Scenario& s) { return Seconds(s.class_timeouts[0]); }, 12},

      {"policy", "vtc_prompt_weight", {"vtc_prompt_weight = 0.5"}, [](const Scenario& s) { return s.policy_config.vtc.prompt_token_weight; }, 0.5},
      {"policy", "vtc_decode_weight", {"vtc_decode_weight = 3"}, [](const Scenario& s) { return s.policy_config.vtc.decode_token_weight; }, 3},
      {"policy", "vtc_preempt", {"vtc_preempt = true"}, [](const Scenario& s) { return double(s.policy_config.vtc.preempt_for_admission); }, 1},
      {"policy", "vtc_admission_preemption_gap", {"vtc_admission_preemption_gap = 100"}, [](const Scenario& s) { return s.policy_config.vtc.admission_preemption_gap; }, 100},
      {"policy", "aging_s", {"aging_s = \"off\""}, [](const Scenario& s) { return Seconds(s.policy_config.priority.aging_interval); }, kInf},
      {"policy", "quota_window_s", {"quota_window_s = 20"}, [](const Scenario& s) { return Seconds(s.policy_config.priority.quota_window); }, 20},
      {"policy", "quotas", {"quotas = [{ priority = 2, tokens_per_window = 50 }]"},
       [](const Scenario& s) { return double(s.policy_config.priority.quotas.size()); }, 1, false},
      {"policy", "mlfq_levels", {"mlfq_levels = 4"}, [](const Scenario& s) { return double(s.policy_config.mlfq.num_levels); }, 4},
      {"policy", "mlfq_base_quantum", {"mlfq_base_quantum = 64"}, [](const Scenario& s) { return s.policy_config.mlfq.base_quantum; }, 64},
      {"policy", "mlfq_prefill_token_cost", {"mlfq_prefill_token_cost = 0.5"}, [](const Scenario& s) { return s.policy_config.mlfq.prefill_token_cost; }, 0.5},
      {"policy", "mlfq_decode_token_cost", {"mlfq_decode_token_cost = 4"}, [](const Scenario& s) { return s.policy_config.mlfq.decode_token_cost; }, 4},
      {"policy", "mlfq_max_preemptions_per_step", {"mlfq_max_preemptions_per_step = 0"}, [](const Scenario& s) { return double(s.policy_config.mlfq.max_preemptions_per_step); }, 0},
      {"policy", "mlfq_time_slice_with_recompute", {"mlfq_time_slice_with_recompute = true"}, [](const Scenario& s) { return double(s.policy_config.mlfq.time_slice_with_recompute); }, 1},
      {"policy", "mlfq_starvation_s", {"mlfq_starvation_s = \"none\""}, [](const Scenario& s) { return Seconds(s.policy_config.mlfq.starvation_bound); }, kInf},
      {"policy", "mlfq_starving_share", {"mlfq_starving_share = 0.75"}, [](const Scenario& s) { return s.policy_config.mlfq.starving_share; }, 0.75},
      {"policy", "mlfq_use_predicted_output", {"mlfq_use_predicted_output = false"}, [](const Scenario& s) { return double(s.policy_config.mlfq.use_predicted_output); }, 0, false},
      {"policy", "household_request_level", {"household_request_level = \"mlfq\""},
       [](const Scenario& s) { return s.policy_config.household_request_level == RequestLevel::kMlfq; }, 1, false},
      {"policy", "priority_kv_reserve", {"priority_kv_reserve = 0.35"}, [](const Scenario& s) { return s.policy_config.priority.kv_reserve; }, 0.35},
      {"policy", "household_background_kv_reserve", {"household_background_kv_reserve = 0.5"}, [](const Scenario& s) { return s.policy_config.household_background_kv_reserve; }, 0.5},
      {"policy", "household_background_prefill_tokens", {"household_background_prefill_tokens = 64"}, [](const Scenario& s) { return double(s.policy_config.household_background_prefill_tokens); }, 64},
      {"policy", "household_member_guard", {"household_member_guard = false"}, [](const Scenario& s) { return double(s.policy_config.household_member_guard); }, 0, false},
      {"policy", "vtc_backfill_s", {"vtc_backfill_s = 9"}, [](const Scenario& s) { return Seconds(s.policy_config.vtc_backfill_wait); }, 9},
      {"policy", "household_backfill_s", {"household_backfill_s = 7"}, [](const Scenario& s) { return Seconds(s.policy_config.household_backfill_wait); }, 7},
      {"policy", "workflow_head_start_s", {"workflow_head_start_s = 5"}, [](const Scenario& s) { return Seconds(s.policy_config.workflow_head_start); }, 5},

      {"policy.quotas", "priority", {"quotas = [{ priority = 6, tokens_per_window = 50 }]"},
       [](const Scenario& s) { return s.policy_config.priority.quotas.empty() ? -1 : double(s.policy_config.priority.quotas[0].priority); }, 6, false},
      {"policy.quotas", "tokens_per_window", {"quotas = [{ priority = 0, tokens_per_window = 70 }]"},
       [](const Scenario& s) { return s.policy_config.priority.quotas.empty() ? -1 : double(s.policy_config.priority.quotas[0].tokens_per_window); }, 70, false},
      {"policy.quotas", "max_share", {"quotas = [{ priority = 0, max_share = 0.4 }]"},
       [](const Scenario& s) { return QuotaField(s, &LevelQuota::max_share); }, 0.4, false},

      {"capacity", "p99_itl_ms", {"p99_itl_ms = 100"}, [](const Scenario& s) { return Ms(s.capacity.criterion.p99_itl); }, 100},
      {"capacity", "p50_queue_wait_s", {"p50_queue_wait_s = 2"}, [](const Scenario& s) { return Seconds(s.capacity.criterion.p50_queue_wait); }, 2},
      {"capacity", "p50_ttft_s", {"p50_ttft_s = 3"}, [](const Scenario& s) { return Seconds(s.capacity.criterion.p50_ttft); }, 3},
      {"capacity", "token_budgets", {"token_budgets = [8192, 512]"},
       [](const Scenario& s) { return s.capacity.token_budgets == std::vector<int32_t>{8192, 512}; }, 1, false},
      {"capacity", "low_per_s", {"low_per_s = 0.5"}, [](const Scenario& s) { return s.capacity.bisection.low; }, 0.5},
      {"capacity", "high_per_s", {"high_per_s = 9"}, [](const Scenario& s) { return s.capacity.bisection.high; }, 9},
      {"capacity", "steps", {"steps = 4"}, [](const Scenario& s) { return double(s.capacity.bisection.steps); }, 4},
  };
}

// A row the options schema generates (scenario_keys.cc: kSchemaTables).
bool SchemaRow(const std::string& table, const std::string& key) {
  const OptionScope scope = table == "scheduler" ? OptionScope::kOptions
                            : table == "model"   ? OptionScope::kModel
                            : table == "users"   ? OptionScope::kUser
                                                 : OptionScope::kWorkClass;
  if (table != "scheduler" && table != "model" && table != "users" && table != "classes") {
    return false;
  }
  for (const OptionFieldInfo& f : OptionFields(scope)) {
    if (OptionKey(f) == key) return true;
  }
  return false;
}

// The README's default as a number: "16", "0 (computed)", "true", "\"off\"".
std::optional<double> NumericDefault(std::string_view text) {
  const std::string first(text.substr(0, text.find(' ')));
  if (first == "true") return 1;
  if (first == "false") return 0;
  if (first == "\"off\"") return kInf;
  double v = 0;
  if (absl::SimpleAtod(first, &v)) return v;
  return std::nullopt;
}

TEST_CASE("the README's scenario keys are the reader's table", "[sim]") {
  const std::string section = GeneratedSection(ReadReadme());
  REQUIRE_FALSE(section.empty());
  // On failure, regenerate: hearth_sim_cli --print_scenario_keys, pasted
  // between the markers.
  CHECK(section == ScenarioKeysMarkdown());
}

TEST_CASE("every README scenario key reaches the option it names", "[sim]") {
  const auto keys = ReadmeKeys(GeneratedSection(ReadReadme()));
  REQUIRE(keys.size() == ScenarioKeys().size());
  std::map<std::pair<std::string, std::string>, Probe> probes;
  for (Probe& p : Probes()) probes.emplace(std::make_pair(p.table, p.key), p);
  absl::StatusOr<Scenario> base = Parse(ScenarioWith("", {}));
  REQUIRE(base.ok());
  for (const auto& [table, key] : keys) {
    INFO("key " << table << (table.empty() ? "" : ".") << key);
    auto it = probes.find({table, key});
    if (it == probes.end()) {
      // The options schema's rows: tests/sim/option_walk_test.cc sets each.
      CHECK(SchemaRow(table, key));
      continue;
    }
    const Probe& p = it->second;
    const std::string section = table == "policy.quotas" ? "policy" : table;
    absl::StatusOr<Scenario> probed = Parse(ScenarioWith(section, p.lines));
    INFO(probed.status().message());
    REQUIRE(probed.ok());
    CHECK(p.read(*probed) == Approx(p.want).epsilon(1e-9));
    CHECK(p.read(*base) != Approx(p.want).epsilon(1e-9));
  }
  CHECK(probes.size() <= keys.size());
}

TEST_CASE("the README's numeric defaults are what the reader sets", "[sim]") {
  absl::StatusOr<Scenario> base = Parse(ScenarioWith("", {}));
  REQUIRE(base.ok());
  std::map<std::pair<std::string, std::string>, Probe> probes;
  for (Probe& p : Probes()) probes.emplace(std::make_pair(p.table, p.key), p);
  int checked = 0;
  for (const ScenarioKey& k : ScenarioKeys()) {
    auto it = probes.find({std::string(k.table), std::string(k.key)});
    const std::optional<double> documented = NumericDefault(k.default_value);
    if (it == probes.end() || !it->second.raw || !documented.has_value()) continue;
    INFO("key " << k.table << "." << k.key << " documented default " << k.default_value);
    CHECK(it->second.read(*base) == Approx(*documented).epsilon(1e-9));
    ++checked;
  }
  CHECK(checked > 15);
  // The schema's rows in [scheduler]: the generated default is what the
  // reader starts from (but the computed pool size).
  int generated = 0;
  for (const ScenarioKey& k : ScenarioKeys()) {
    if (k.table != "scheduler" || k.key == "kv.num_device_blocks") continue;
    for (const OptionFieldInfo& f : OptionFields(OptionScope::kOptions)) {
      if (OptionKey(f) != k.key) continue;
      INFO("key scheduler." << k.key);
      CHECK(OptionValueText(GetOptionField(base->scheduler, f)) == k.default_value);
      ++generated;
    }
  }
  CHECK(generated > 25);
}

TEST_CASE("durations take \"off\" where unbounded is allowed, and say so otherwise", "[sim]") {
  auto zero = Parse(ScenarioWith("policy", {"aging_s = 0"}));
  REQUIRE_FALSE(zero.ok());
  CHECK_THAT(std::string(zero.status().message()),
             Catch::Contains("keys.toml:") && Catch::Contains("policy.aging_s") &&
                 Catch::Contains("above 0, or \"off\" for none; got 0"));
  auto word = Parse(ScenarioWith("classes", {"timeout_s = \"never\""}));
  REQUIRE_FALSE(word.ok());
  CHECK_THAT(std::string(word.status().message()),
             Catch::Contains("classes[0].timeout_s") && Catch::Contains("'never'"));
  auto finite_only = Parse(ScenarioWith("policy", {"quota_window_s = \"off\""}));
  REQUIRE_FALSE(finite_only.ok());
  CHECK_THAT(std::string(finite_only.status().message()),
             Catch::Contains("policy.quota_window_s: must be a number of seconds"));
  auto off = Parse(ScenarioWith("classes", {"timeout_s = \"off\"", "ttft_slo_s = \"off\""}));
  REQUIRE(off.ok());
  CHECK(off->class_timeouts[0] == absl::InfiniteDuration());
  CHECK(off->scheduler.work_classes[0].ttft_slo == absl::InfiniteDuration());
}

TEST_CASE("a scenario key outside the table is an unknown key", "[sim]") {
  auto typo = Parse(ScenarioWith("scheduler", {"swap_block_cost = 2"}));
  REQUIRE_FALSE(typo.ok());
  CHECK_THAT(std::string(typo.status().message()), Catch::Contains("scheduler.swap_block_cost"));
  auto quota = Parse(ScenarioWith("policy", {"quotas = [{ priority = 1, share = 0.5 }]"}));
  REQUIRE_FALSE(quota.ok());
  CHECK_THAT(std::string(quota.status().message()), Catch::Contains("policy.quotas[0]"));
}

TEST_CASE("every suite scenario reads with the documented keys", "[sim]") {
  int read = 0;
  const std::filesystem::path root(HEARTH_SOURCE_DIR);
  const std::filesystem::path suites = root / "bench/suites";
  // The public traces live beside the repository (../shared/traces), not in
  // it; a clone elsewhere cannot read the scenarios that list their folders
  // while parsing, and those are skipped there, with a warning.
  const bool have_shared_traces = std::filesystem::exists(root / "../shared/traces");
  for (const auto& entry : std::filesystem::directory_iterator(suites)) {
    if (entry.path().extension() != ".toml") continue;
    INFO(entry.path().string());
    absl::StatusOr<Scenario> s = LoadScenario(entry.path().string());
    if (!s.ok() && !have_shared_traces &&
        absl::StrContains(s.status().message(), "/shared/traces/")) {
      WARN("skipped " << entry.path().filename().string()
                      << ": ../shared/traces is not beside this clone");
      continue;
    }
    INFO(s.status().message());
    CHECK(s.ok());
    ++read;
  }
  CHECK(read >= 10);
}

}  // namespace
}  // namespace hearth
