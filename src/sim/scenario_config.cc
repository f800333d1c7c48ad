#include "hearth/sim/scenario_config.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "internal/status_macros.h"
#include "hearth/common/names.h"
#include "hearth/sim/fitted_cost_model.h"
#include "hearth/sim/roofline_cost_model.h"
#include "hearth/sim/scenario_keys.h"
#include "sim/quote.h"
#include "sim/scenario_checks.h"
#include "sim/scenario_options.h"
#include "sim/scenario_reader.h"

namespace hearth {

using internal::ScenarioReader;

namespace {

absl::Status ParseHardware(const ScenarioReader& r, const toml::table& root,
                           Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(const toml::table* gpu, r.Table(root, "gpu", ""));
  HEARTH_RETURN_IF_ERROR(internal::CheckKeys(*gpu, ScenarioKeysOf("gpu"), r.file(), "gpu"));
  HEARTH_ASSIGN_OR_RETURN(std::string gpu_name, r.String(*gpu, "name", "gpu", std::nullopt));
  absl::StatusOr<GpuSpec> g = FindGpu(gpu_name);
  if (!g.ok()) return r.Error(*gpu->get("name"), "gpu.name", g.status().message());
  s.gpu = *g;
  HEARTH_ASSIGN_OR_RETURN(double bw, r.Number(*gpu, "memory_bandwidth_gbs", "gpu",
                                              s.gpu.memory_bandwidth / 1e9, 1, 1e6));
  HEARTH_ASSIGN_OR_RETURN(double tf, r.Number(*gpu, "bf16_tflops", "gpu",
                                              s.gpu.bf16_flops / 1e12, 0.1, 1e5));
  HEARTH_ASSIGN_OR_RETURN(double mem, r.Number(*gpu, "memory_gib", "gpu",
                                               s.gpu.memory_bytes / 1073741824.0, 1, 1e5));
  s.gpu.memory_bandwidth = bw * 1e9;
  s.gpu.bf16_flops = tf * 1e12;
  s.gpu.memory_bytes = static_cast<int64_t>(mem * 1073741824.0);

  HEARTH_ASSIGN_OR_RETURN(const toml::table* model, r.Table(root, "model", ""));
  // Its other keys are ModelConfig's, checked by ParseModelConfig.
  HEARTH_ASSIGN_OR_RETURN(std::string model_name,
                          r.String(*model, "name", "model", std::nullopt));
  absl::StatusOr<ModelSpec> m = FindModelSpec(model_name);
  if (!m.ok()) return r.Error(*model->get("name"), "model.name", m.status().message());
  if (!m->generative) {
    return r.Error(*model->get("name"), "model.name",
                   "an embedding model cannot serve generation; pick a generative model");
  }
  s.model = *m;

  HEARTH_ASSIGN_OR_RETURN(const toml::table* cost, r.Table(root, "cost", ""));
  HEARTH_RETURN_IF_ERROR(internal::CheckKeys(*cost, ScenarioKeysOf("cost"), r.file(), "cost"));
  HEARTH_ASSIGN_OR_RETURN(std::string kind, r.String(*cost, "kind", "cost", "roofline"));
  if (kind == "fitted") {
    HEARTH_ASSIGN_OR_RETURN(std::string profile,
                            r.String(*cost, "profile", "cost", std::nullopt));
    absl::StatusOr<std::unique_ptr<FittedCostModel>> fitted =
        FittedCostModel::LoadProfile(r.Resolve(profile));
    if (!fitted.ok()) {
      return r.Error(*cost->get("profile"), "cost.profile", fitted.status().message());
    }
    s.cost_model = *std::move(fitted);
    return absl::OkStatus();
  }
  if (kind != "roofline") {
    return r.Error(*cost->get("kind"), "cost.kind", "must be \"roofline\" or \"fitted\"");
  }
  RooflineOptions ro;
  HEARTH_ASSIGN_OR_RETURN(ro.compute_efficiency,
                          r.Number(*cost, "compute_efficiency", "cost", 1.0, 0.01, 1));
  HEARTH_ASSIGN_OR_RETURN(ro.bandwidth_efficiency,
                          r.Number(*cost, "bandwidth_efficiency", "cost", 1.0, 0.01, 1));
  HEARTH_ASSIGN_OR_RETURN(double overhead,
                          r.Number(*cost, "step_overhead_ms", "cost", 0.0, 0, 1e4));
  ro.step_overhead = absl::Microseconds(std::llround(overhead * 1000));
  HEARTH_ASSIGN_OR_RETURN(double link, r.Number(*cost, "host_link_gbs", "cost", 25, 0.1, 1e4));
  ro.host_link_bandwidth = link * 1e9;
  absl::StatusOr<std::unique_ptr<RooflineCostModel>> roofline =
      RooflineCostModel::Create(s.gpu, s.model, ro);
  if (!roofline.ok()) return r.Error(*cost, "cost", roofline.status().message());
  s.cost_model = *std::move(roofline);
  return absl::OkStatus();
}

// The [engine] table: what the simulated host decides beside the
// scheduler's options (the KV cache's size from the GPU memory, the output
// bound of requests that set none, whether classes' TPOT targets cut steps).
absl::Status ParseEngine(const ScenarioReader& r, const toml::table& root, Scenario& s,
                         double* gpu_memory_utilization) {
  HEARTH_ASSIGN_OR_RETURN(const toml::table* e, r.Table(root, "engine", ""));
  HEARTH_RETURN_IF_ERROR(internal::CheckKeys(*e, ScenarioKeysOf("engine"), r.file(), "engine"));
  HEARTH_ASSIGN_OR_RETURN(*gpu_memory_utilization,
                          r.Number(*e, "gpu_memory_utilization", "engine", 0.9, 0.05, 1));
  HEARTH_ASSIGN_OR_RETURN(int64_t mnt, r.Int(*e, "max_new_tokens", "engine", 2048, 1, 1 << 24));
  s.default_max_new_tokens = static_cast<int32_t>(mnt);
  HEARTH_ASSIGN_OR_RETURN(s.tpot_budget, r.Bool(*e, "tpot_budget", "engine", false));
  return absl::OkStatus();
}

// The [model] table: the catalogue's entry by name, then ModelConfig's
// fields, which default to the catalogue's figures.
absl::Status ParseModelConfig(const ScenarioReader& r, const toml::table& root, Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(const toml::table* model, r.Table(root, "model", ""));
  ModelConfig& mc = s.scheduler.models[0];
  mc.name = s.model.name;
  mc.context_length = s.model.context_length;
  mc.vocab_size = s.model.vocab_size;
  mc.kv_bytes_per_token = s.model.KvBytesPerToken();
  HEARTH_RETURN_IF_ERROR(internal::ReadOptionTable(r, *model, "model", mc));
  if (mc.context_length > s.model.context_length) {
    return r.Error(*model->get("context_length"), "model.context_length",
                   absl::StrCat("is ", mc.context_length, "; must be at most ", s.model.name,
                                "'s ", s.model.context_length));
  }
  return absl::OkStatus();
}

// The [scheduler] table: SchedulerOptions by the options schema, starting
// from the library's defaults but max_running (128) and
// kv.num_device_blocks (when absent, sized from the GPU memory as vLLM sizes
// its cache: the memory budget minus the weights holds the KV cache).
absl::Status ParseScheduler(const ScenarioReader& r, const toml::table& root,
                            double gpu_memory_utilization, Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(const toml::table* t, r.Table(root, "scheduler", ""));
  SchedulerOptions& o = s.scheduler;
  o.max_running = 128;
  HEARTH_RETURN_IF_ERROR(internal::ReadOptionTable(r, *t, "scheduler", o));
  const toml::node* kv = t->get("kv");
  if (kv != nullptr && kv->as_table() != nullptr && kv->as_table()->get("num_device_blocks")) {
    return absl::OkStatus();
  }
  const double kv_bytes = static_cast<double>(s.gpu.memory_bytes) * gpu_memory_utilization -
                          static_cast<double>(s.model.WeightBytes());
  const double blocks =
      kv_bytes / (static_cast<double>(o.models[0].kv_bytes_per_token) * o.kv.block_size);
  if (!(blocks >= 1)) {
    const toml::node* e = root.get("engine");
    return r.Error(e != nullptr ? *e : static_cast<const toml::node&>(root),
                   "engine.gpu_memory_utilization",
                   absl::StrCat(s.model.name, " (", s.model.WeightBytes() / 1e9,
                                " GB of weights) leaves no KV cache on ", s.gpu.name));
  }
  o.kv.num_device_blocks = static_cast<int32_t>(std::min(blocks, 2147483647.0));
  return absl::OkStatus();
}

// One [[users]] entry: UserConfig by the schema, plus the household
// generator's `activity`.
absl::Status ParseUser(const ScenarioReader& r, const toml::table& t, const std::string& path,
                       UserConfig& u, double* activity) {
  HEARTH_RETURN_IF_ERROR(internal::ReadOptionTable(r, t, path, u, {"activity"}));
  HEARTH_ASSIGN_OR_RETURN(u.name, r.String(t, "name", path, std::nullopt));
  if (absl::Status bad = ValidateName(u.name, "the name"); !bad.ok()) {
    return r.Error(*t.get("name"), path + ".name", bad.message());
  }
  if (u.name == kOtherUsersName) {
    return r.Error(*t.get("name"), path + ".name",
                   "\"_other\" is reserved (the Prometheus series of users beyond "
                   "max_user_series)");
  }
  HEARTH_ASSIGN_OR_RETURN(*activity, r.Number(t, "activity", path, 1.0, 0, 1e6));
  return absl::OkStatus();
}

// One [[classes]] entry: WorkClassConfig by the schema, plus the
// simulator's deadline `timeout_s`. The class's SLO targets are its
// WorkClassConfig's, which the report judges too; the TPOT target reaches
// the scheduler only with engine.tpot_budget.
absl::Status ParseClass(const ScenarioReader& r, const toml::table& c, const std::string& path,
                        Scenario& s) {
  WorkClassConfig wc;
  HEARTH_RETURN_IF_ERROR(internal::ReadOptionTable(r, c, path, wc, {"timeout_s"}));
  HEARTH_ASSIGN_OR_RETURN(wc.name, r.String(c, "name", path, std::nullopt));
  if (absl::Status bad = ValidateName(wc.name, "the name"); !bad.ok()) {
    return r.Error(*c.get("name"), path + ".name", bad.message());
  }
  constexpr ScenarioReader::DurationRule kOff{.off_allowed = true, .positive = true};
  HEARTH_ASSIGN_OR_RETURN(absl::Duration timeout,
                          r.Duration(c, "timeout_s", path, absl::InfiniteDuration(), kOff));
  s.class_timeouts.push_back(timeout);
  s.class_slos.push_back({.ttft = wc.ttft_slo, .tpot = wc.tpot_slo, .e2e = wc.e2e_slo});
  if (!s.tpot_budget) wc.tpot_slo = absl::InfiniteDuration();
  s.scheduler.work_classes.push_back(std::move(wc));
  return absl::OkStatus();
}

absl::Status ParseRegistries(const ScenarioReader& r, const toml::table& root,
                             Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(auto users, r.Tables(root, "users", ""));
  HEARTH_ASSIGN_OR_RETURN(auto classes, r.Tables(root, "classes", ""));
  if (users.empty() || classes.empty()) {
    return r.Error(root, users.empty() ? "users" : "classes",
                   "at least one [[users]] and one [[classes]] entry is required");
  }
  s.scheduler.users.clear();
  s.workload.household.members.clear();
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < users.size(); ++i) {
    const std::string path = absl::StrCat("users[", i, "]");
    UserConfig u;
    double activity = 1;
    HEARTH_RETURN_IF_ERROR(ParseUser(r, *users[i], path, u, &activity));
    if (!seen.insert(u.name).second) {
      return r.Error(*users[i], path + ".name", "must be non-empty and unique");
    }
    s.scheduler.users.push_back(u);
    s.workload.household.members.push_back({static_cast<uint32_t>(i), activity});
  }
  s.scheduler.work_classes.clear();
  seen.clear();
  for (size_t i = 0; i < classes.size(); ++i) {
    const std::string path = absl::StrCat("classes[", i, "]");
    HEARTH_RETURN_IF_ERROR(ParseClass(r, *classes[i], path, s));
    if (!seen.insert(s.scheduler.work_classes.back().name).second) {
      return r.Error(*classes[i], path + ".name", "must be non-empty and unique");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Scenario> ParseScenario(std::string_view text,
                                       const std::string& file_name,
                                       const std::string& base_dir) {
  HEARTH_ASSIGN_OR_RETURN(toml::table root, internal::ParseToml(text, file_name));
  ScenarioReader r(file_name, base_dir);
  std::vector<std::string_view> top = ScenarioKeysOf("");
  for (std::string_view table :
       {"gpu", "model", "cost", "engine", "scheduler", "hints", "users", "classes", "policy",
        "workload", "capacity", "paper"}) {
    top.push_back(table);
  }
  HEARTH_RETURN_IF_ERROR(internal::CheckKeys(root, top, file_name, ""));
  Scenario s;
  s.source_file = file_name;
  HEARTH_ASSIGN_OR_RETURN(s.name, r.String(root, "name", "", std::nullopt));
  HEARTH_ASSIGN_OR_RETURN(s.description, r.String(root, "description", "", ""));
  HEARTH_ASSIGN_OR_RETURN(int64_t seed, r.Int(root, "seed", "", 1, 0, INT64_MAX));
  s.seed = static_cast<uint64_t>(seed);
  HEARTH_ASSIGN_OR_RETURN(s.record_timeline, r.Bool(root, "timeline", "", false));
  HEARTH_ASSIGN_OR_RETURN(s.series_interval, r.Duration(root, "series_interval_s", "",
                                                         absl::Seconds(10), {.positive = true}));
  HEARTH_RETURN_IF_ERROR(ParseHardware(r, root, s));
  HEARTH_RETURN_IF_ERROR(ParseModelConfig(r, root, s));
  double gpu_memory_utilization = 0.9;
  HEARTH_RETURN_IF_ERROR(ParseEngine(r, root, s, &gpu_memory_utilization));
  HEARTH_RETURN_IF_ERROR(ParseScheduler(r, root, gpu_memory_utilization, s));
  HEARTH_RETURN_IF_ERROR(internal::ParseHints(r, root, s));
  HEARTH_RETURN_IF_ERROR(internal::ParseCapacity(r, root, s));
  HEARTH_RETURN_IF_ERROR(ParseRegistries(r, root, s));
  HEARTH_RETURN_IF_ERROR(internal::ParsePolicy(r, root, s));
  HEARTH_RETURN_IF_ERROR(internal::ParseWorkload(r, root, s));
  HEARTH_RETURN_IF_ERROR(internal::CheckSchedulerOptions(r, root, s));
  HEARTH_RETURN_IF_ERROR(internal::CheckPolicies(r, root, s));
  HEARTH_RETURN_IF_ERROR(internal::ParsePaper(r, root, s));
  return s;
}

absl::StatusOr<Scenario> LoadScenario(const std::string& path) {
  HEARTH_ASSIGN_OR_RETURN(std::string text, internal::ReadFileToString(path));
  const size_t slash = path.find_last_of('/');
  return ParseScenario(text, path, slash == std::string::npos ? "." : path.substr(0, slash));
}

std::vector<std::string_view> ScenarioPolicyNames() {
  std::vector<std::string_view> names = KnownPolicyNames();
  for (std::string_view oracle : OraclePolicyNames()) names.push_back(oracle);
  return names;
}

absl::StatusOr<SimulationOptions> SimulationOptionsFor(const Scenario& s,
                                                       std::string_view policy) {
  SimulationOptions o;
  o.scheduler = s.scheduler;
  if (IsOraclePolicy(policy)) {
    HEARTH_ASSIGN_OR_RETURN(o.oracle_policy, MakeOraclePolicyFactory(policy));
  } else {
    HEARTH_ASSIGN_OR_RETURN(o.scheduler.policy_factory,
                            MakePolicyFactory(policy, s.policy_config));
  }
  o.cost_model = s.cost_model.get();
  o.default_max_new_tokens = s.default_max_new_tokens;
  o.class_timeouts = s.class_timeouts;
  o.class_slos = s.class_slos;
  o.prefill_weight = s.policy_config.vtc.prompt_token_weight;
  o.decode_weight = s.policy_config.vtc.decode_token_weight;
  o.series_interval = s.series_interval;
  o.record_timeline = s.record_timeline;
  o.seed = s.seed;
  o.output_hints = s.output_hints;
  return o;
}

}  // namespace hearth
