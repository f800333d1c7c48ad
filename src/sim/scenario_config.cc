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
  HEARTH_RETURN_IF_ERROR(internal::CheckKeys(*model, ScenarioKeysOf("model"), r.file(), "model"));
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

// The [engine] keys that price preemption and predict step time.
absl::Status ParsePreemptionCosts(const ScenarioReader& r, const toml::table& e,
                                  SchedulerOptions& o) {
  HEARTH_ASSIGN_OR_RETURN(o.swap_block_cost_tokens,
                          r.Number(e, "swap_block_cost_tokens", "engine",
                                   o.swap_block_cost_tokens, 0, 1e9));
  HEARTH_ASSIGN_OR_RETURN(o.max_admission_waste_per_block,
                          r.Number(e, "max_admission_waste_per_block", "engine",
                                   o.max_admission_waste_per_block, 0, 1e9));
  HEARTH_ASSIGN_OR_RETURN(int64_t per_request,
                          r.Int(e, "max_preemptions_per_request", "engine",
                                o.max_preemptions_per_request, 1, INT32_MAX));
  o.max_preemptions_per_request = static_cast<int32_t>(per_request);
  HEARTH_ASSIGN_OR_RETURN(int64_t declines, r.Int(e, "max_admission_declines", "engine",
                                                  o.max_admission_declines, 0, INT32_MAX));
  o.max_admission_declines = static_cast<int32_t>(declines);
  HEARTH_ASSIGN_OR_RETURN(o.workflow_retention,
                          r.Duration(e, "workflow_retention_s", "engine", o.workflow_retention,
                                     {}));
  const ScenarioReader::DurationRule ms{.seconds_per_unit = 1e-3};
  HEARTH_ASSIGN_OR_RETURN(o.step_time_model.fixed,
                          r.Duration(e, "step_time_fixed_ms", "engine",
                                     o.step_time_model.fixed, ms));
  HEARTH_ASSIGN_OR_RETURN(o.step_time_model.per_token,
                          r.Duration(e, "step_time_per_token_ms", "engine",
                                     o.step_time_model.per_token, ms));
  return absl::OkStatus();
}

absl::Status ParseEngine(const ScenarioReader& r, const toml::table& root,
                         Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(const toml::table* e, r.Table(root, "engine", ""));
  HEARTH_RETURN_IF_ERROR(
      internal::CheckKeys(*e, ScenarioKeysOf("engine"), r.file(), "engine"));
  SchedulerOptions& o = s.scheduler;
  HEARTH_ASSIGN_OR_RETURN(int64_t block, r.Int(*e, "block_size", "engine", 16, 1, 4096));
  o.kv.block_size = static_cast<int32_t>(block);
  HEARTH_ASSIGN_OR_RETURN(int64_t max_len, r.Int(*e, "max_model_len", "engine", 0, 0, 1 << 24));
  ModelConfig& mc = o.models[0];
  mc.name = s.model.name;
  mc.context_length = max_len > 0 ? static_cast<int32_t>(std::min<int64_t>(
                                        max_len, s.model.context_length))
                                  : s.model.context_length;
  mc.vocab_size = s.model.vocab_size;
  mc.kv_bytes_per_token = s.model.KvBytesPerToken();
  HEARTH_ASSIGN_OR_RETURN(double util, r.Number(*e, "gpu_memory_utilization", "engine",
                                                0.9, 0.05, 1));
  HEARTH_ASSIGN_OR_RETURN(int64_t blocks, r.Int(*e, "kv_blocks", "engine", 0, 0, 1 << 24));
  if (blocks == 0) {
    // vLLM's sizing: the memory budget minus the weights holds the KV cache.
    const double kv_bytes = static_cast<double>(s.gpu.memory_bytes) * util -
                            static_cast<double>(s.model.WeightBytes());
    blocks = static_cast<int64_t>(kv_bytes / (static_cast<double>(mc.kv_bytes_per_token) *
                                              o.kv.block_size));
    if (blocks < 1) {
      return r.Error(*e, "engine.gpu_memory_utilization",
                     absl::StrCat(s.model.name, " (", s.model.WeightBytes() / 1e9,
                                  " GB of weights) leaves no KV cache on ", s.gpu.name));
    }
  }
  o.kv.num_device_blocks = static_cast<int32_t>(blocks);
  HEARTH_ASSIGN_OR_RETURN(int64_t host, r.Int(*e, "host_blocks", "engine", 0, 0, 1 << 24));
  o.kv.num_host_blocks = static_cast<int32_t>(host);
  HEARTH_ASSIGN_OR_RETURN(int64_t wm, r.Int(*e, "watermark_blocks", "engine", 0, 0, blocks));
  o.kv.watermark_blocks = static_cast<int32_t>(wm);
  HEARTH_ASSIGN_OR_RETURN(int64_t headroom, r.Int(*e, "growth_headroom_tokens", "engine",
                                                  o.kv.growth_headroom_tokens, 0, 1 << 20));
  o.kv.growth_headroom_tokens = static_cast<int32_t>(headroom);
  HEARTH_ASSIGN_OR_RETURN(o.kv.enable_prefix_caching,
                          r.Bool(*e, "prefix_caching", "engine", true));
  HEARTH_ASSIGN_OR_RETURN(int64_t mbt, r.Int(*e, "max_batched_tokens", "engine", 2048, 1, 1 << 20));
  o.max_batched_tokens = static_cast<int32_t>(mbt);
  HEARTH_ASSIGN_OR_RETURN(int64_t mr, r.Int(*e, "max_running", "engine", 128, 1, mbt));
  o.max_running = static_cast<int32_t>(mr);
  HEARTH_ASSIGN_OR_RETURN(int64_t chunk, r.Int(*e, "max_prefill_chunk_tokens", "engine",
                                               0, 0, mbt));
  o.max_prefill_chunk_tokens = static_cast<int32_t>(chunk);
  HEARTH_ASSIGN_OR_RETURN(std::string pre, r.String(*e, "preemption", "engine", "recompute"));
  if (pre == "swap") {
    o.preemption_mode = PreemptionMode::kSwap;
  } else if (pre != "recompute") {
    return r.Error(*e->get("preemption"), "engine.preemption",
                   "must be \"recompute\" or \"swap\"");
  }
  HEARTH_ASSIGN_OR_RETURN(int64_t mnt, r.Int(*e, "max_new_tokens", "engine", 2048, 1, 1 << 24));
  s.default_max_new_tokens = static_cast<int32_t>(mnt);
  HEARTH_ASSIGN_OR_RETURN(s.tpot_budget, r.Bool(*e, "tpot_budget", "engine", false));
  return ParsePreemptionCosts(r, *e, o);
}

// Durations that may be "off" (InfiniteDuration) but not 0.
constexpr ScenarioReader::DurationRule kOff{.off_allowed = true, .positive = true};

// A class's SLO targets.
absl::StatusOr<SloTarget> ParseSlo(const ScenarioReader& r, const toml::table& c,
                                   const std::string& path) {
  // SloTarget's "no target" is InfiniteDuration, which is also what "off"
  // reads as; an absent key is no target.
  SloTarget slo;
  constexpr ScenarioReader::DurationRule kMs{.seconds_per_unit = 1e-3, .off_allowed = true};
  constexpr ScenarioReader::DurationRule kS{.off_allowed = true};
  HEARTH_ASSIGN_OR_RETURN(slo.ttft, r.Duration(c, "slo_ttft_ms", path, slo.ttft, kMs));
  HEARTH_ASSIGN_OR_RETURN(slo.tpot, r.Duration(c, "slo_tpot_ms", path, slo.tpot, kMs));
  HEARTH_ASSIGN_OR_RETURN(slo.e2e, r.Duration(c, "slo_e2e_s", path, slo.e2e, kS));
  return slo;
}

// A user's intake limits (UserConfig).
absl::Status ParseUserLimits(const ScenarioReader& r, const toml::table& t,
                             const std::string& path, UserConfig& u) {
  HEARTH_ASSIGN_OR_RETURN(int64_t queued, r.Int(t, "max_queued_requests", path,
                                                u.max_queued_requests, 0, INT32_MAX));
  u.max_queued_requests = static_cast<int32_t>(queued);
  HEARTH_ASSIGN_OR_RETURN(u.token_quota,
                          r.Int(t, "token_quota", path, u.token_quota, 0, INT64_MAX));
  HEARTH_ASSIGN_OR_RETURN(u.quota_window, r.Duration(t, "quota_window_s", path,
                                                      u.quota_window, {.positive = true}));
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
    HEARTH_RETURN_IF_ERROR(
        internal::CheckKeys(*users[i], ScenarioKeysOf("users"), r.file(), path));
    UserConfig u;
    HEARTH_ASSIGN_OR_RETURN(u.name, r.String(*users[i], "name", path, std::nullopt));
    if (absl::Status bad = ValidateName(u.name, "the name"); !bad.ok()) {
      return r.Error(*users[i]->get("name"), path + ".name", bad.message());
    }
    if (u.name == kOtherUsersName) {
      return r.Error(*users[i]->get("name"), path + ".name",
                     "\"_other\" is reserved (the Prometheus series of users beyond "
                     "max_user_series)");
    }
    if (!seen.insert(u.name).second) {
      return r.Error(*users[i], path + ".name", "must be non-empty and unique");
    }
    HEARTH_ASSIGN_OR_RETURN(u.weight, r.Number(*users[i], "weight", path, 1.0, 1e-6, 1e6));
    HEARTH_ASSIGN_OR_RETURN(double activity,
                            r.Number(*users[i], "activity", path, 1.0, 0, 1e6));
    HEARTH_RETURN_IF_ERROR(ParseUserLimits(r, *users[i], path, u));
    s.scheduler.users.push_back(u);
    s.workload.household.members.push_back({static_cast<uint32_t>(i), activity});
  }
  s.scheduler.work_classes.clear();
  seen.clear();
  for (size_t i = 0; i < classes.size(); ++i) {
    const std::string path = absl::StrCat("classes[", i, "]");
    const toml::table& c = *classes[i];
    HEARTH_RETURN_IF_ERROR(internal::CheckKeys(c, ScenarioKeysOf("classes"), r.file(), path));
    WorkClassConfig wc;
    HEARTH_ASSIGN_OR_RETURN(wc.name, r.String(c, "name", path, std::nullopt));
    if (absl::Status bad = ValidateName(wc.name, "the name"); !bad.ok()) {
      return r.Error(*c.get("name"), path + ".name", bad.message());
    }
    if (!seen.insert(wc.name).second) {
      return r.Error(c, path + ".name", "must be non-empty and unique");
    }
    HEARTH_ASSIGN_OR_RETURN(int64_t prio, r.Int(c, "priority", path, 0, -1000, 1000));
    wc.priority = static_cast<int32_t>(prio);
    HEARTH_ASSIGN_OR_RETURN(wc.weight, r.Number(c, "weight", path, 1.0, 1e-6, 1e9));
    // WorkClassConfig limits; the scheduler validates them against the
    // engine (e.g. a budget larger than the KV cache) when it is created.
    HEARTH_ASSIGN_OR_RETURN(int64_t cap, r.Int(c, "max_running", path, 0, 0, 1 << 20));
    wc.max_running = static_cast<int32_t>(cap);
    HEARTH_ASSIGN_OR_RETURN(int64_t budget, r.Int(c, "kv_block_budget", path, 0, 0, 1 << 24));
    wc.kv_block_budget = static_cast<int32_t>(budget);
    if (c.get("borrow") != nullptr) {
      const auto* b = c.get("borrow")->as_boolean();
      if (b == nullptr) return r.Error(c, path + ".borrow", "must be true or false");
      wc.borrow = b->get();
    }
    HEARTH_ASSIGN_OR_RETURN(wc.queue_timeout,
                            r.Duration(c, "queue_timeout_s", path, absl::InfiniteDuration(), kOff));
    HEARTH_ASSIGN_OR_RETURN(int64_t retries, r.Int(c, "max_retries", path, 0, 0, 100));
    wc.max_retries = static_cast<int32_t>(retries);
    s.scheduler.work_classes.push_back(wc);
    absl::Duration timeout;
    HEARTH_ASSIGN_OR_RETURN(timeout,
                            r.Duration(c, "timeout_s", path, absl::InfiniteDuration(), kOff));
    s.class_timeouts.push_back(timeout);
    HEARTH_ASSIGN_OR_RETURN(SloTarget slo, ParseSlo(r, c, path));
    // The scheduler serves by the same target the report judges.
    s.scheduler.work_classes.back().ttft_slo = slo.ttft;
    if (s.tpot_budget) {
      s.scheduler.work_classes.back().tpot_slo = slo.tpot;
    }
    s.scheduler.work_classes.back().e2e_slo = slo.e2e;
    s.class_slos.push_back(slo);
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
       {"gpu", "model", "cost", "engine", "intake", "hints", "users", "classes", "policy",
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
  HEARTH_RETURN_IF_ERROR(ParseEngine(r, root, s));
  HEARTH_RETURN_IF_ERROR(internal::ParseIntake(r, root, s));
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
