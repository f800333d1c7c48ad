#include "hearth/sim/scenario_keys.h"

#include <deque>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "hearth/scheduler/option_fields.h"

namespace hearth {
namespace {

// Durations that accept "off" say so in their default or meaning; the
// reader's Seconds(..., DurationOff::kAllowed) is what accepts it.
constexpr ScenarioKey kHandKeys[] = {
    // Top level.
    {"", "name", "string", "required", "Scenario name; names the report and the default output folder."},
    {"", "description", "string", "\"\"", "Printed under the report's title."},
    {"", "seed", "-", "1", "Seeds every generator, the floods and the simulation (`--seed` overrides)."},
    {"", "policies", "list of names", "all",
     "Policies to run, in report order: fifo, vtc, priority, mlfq, household (the registry) and "
     "oracle_srpt, oracle_srpt_preemptive (simulator-only baselines that know true output lengths)."},
    {"", "timeline", "bool", "false", "Record a Perfetto timeline per policy (`--timeline`)."},
    {"", "series_interval_s", "s", "10", "Sampling period of the time series behind the plots."},

    {"gpu", "name", "string", "required",
     "Catalogue entry: H200, H100 SXM, A100-80GB, L4, RTX 4090, RTX 3090."},
    {"gpu", "memory_bandwidth_gbs", "GB/s", "catalogue", "Overrides the GPU's memory bandwidth."},
    {"gpu", "bf16_tflops", "TFLOP/s", "catalogue", "Overrides the GPU's dense BF16 throughput."},
    {"gpu", "memory_gib", "GiB", "catalogue", "Overrides the GPU's memory."},

    {"model", "name", "string", "required",
     "Catalogue entry: Llama-3.1-8B, Qwen2.5-7B, Llama-3.2-3B, Mistral-7B (generative only)."},

    {"cost", "kind", "string", "\"roofline\"",
     "\"roofline\" (from the GPU and model) or \"fitted\" (a measured profile, fitted_cost_model.h)."},
    {"cost", "profile", "path", "required with \"fitted\"", "The fitted profile's TOML file."},
    {"cost", "compute_efficiency", "-", "1.0", "Roofline: fraction of peak FLOP/s reached, in (0, 1]."},
    {"cost", "bandwidth_efficiency", "-", "1.0",
     "Roofline: fraction of peak memory bandwidth reached, in (0, 1]."},
    {"cost", "step_overhead_ms", "ms", "0", "Roofline: fixed cost added to every step."},
    {"cost", "host_link_gbs", "GB/s", "25", "Roofline: host link bandwidth, prices swap copies."},

    {"engine", "gpu_memory_utilization", "-", "0.9",
     "KV blocks = (GPU memory x this - weights) / (KV bytes per token x block_size), as vLLM "
     "sizes its cache; unused when scheduler.kv.num_device_blocks is set."},
    {"engine", "tpot_budget", "bool", "false",
     "Classes' tpot_slo_s also reach the scheduler (WorkClassConfig::tpot_slo), which then "
     "cuts step budgets to keep them; without it they are judged in the report only."},
    {"engine", "max_new_tokens", "tokens", "2048",
     "The output bound the scheduler sees for requests that set none; true lengths stay hidden "
     "(except from the oracle policies)."},
    {"hints", "output_length", "bool", "false",
     "Each request carries a predicted output length made from its true one "
     "(RequestSpec::predicted_output, SimulationOptions::output_hints)."},
    {"hints", "output_length_noise", "-", "0 (exact)",
     "Log-normal error of the prediction: expected = true x exp(noise x z), z standard normal, "
     "in [0, 10] (OutputHintOptions::noise_sigma)."},

    {"users", "name", "string", "required",
     "Unique, a valid name (hearth/common/names.h), not \"_other\"; one [[users]] entry per "
     "member, in UserId order."},
    {"users", "activity", "-", "1.0", "Household generator: this member's rate multiplier."},
    {"classes", "name", "string", "required",
     "Unique, a valid name (hearth/common/names.h); one [[classes]] entry per work class, in "
     "WorkClassId order."},
    {"classes", "timeout_s", "s or \"off\"", "\"off\"",
     "A request ends as timed out this long after arrival (the simulator stamps "
     "RequestSpec::deadline)."},
    {"policy", "vtc_prompt_weight", "-", "1.0",
     "VTC charge per prompt token (VtcOptions::prompt_token_weight); also weighs the reports' "
     "service."},
    {"policy", "vtc_decode_weight", "-", "2.0",
     "VTC charge per decoded token (VtcOptions::decode_token_weight); also weighs the reports' "
     "service."},
    {"policy", "vtc_preempt", "bool", "false",
     "A waiting request may preempt a user far ahead (VtcOptions::preempt_for_admission)."},
    {"policy", "vtc_admission_preemption_gap", "weighted tokens", "8192",
     "How far ahead that user's counter must be (VtcOptions::admission_preemption_gap)."},
    {"policy", "aging_s", "s or \"off\"", "30",
     "Wait that raises a request's priority by one; \"off\": no aging "
     "(PriorityQuotaOptions::aging_interval)."},
    {"policy", "quota_window_s", "s", "10", "Length of a quota window (PriorityQuotaOptions::quota_window)."},
    {"policy", "quotas", "list of tables", "[] (none)",
     "Per-level quotas, e.g. [{ priority = 3, max_share = 0.5 }] (PriorityQuotaOptions::quotas)."},
    {"policy", "priority_kv_reserve", "share", "0.2",
     "Share of the KV cache a request of the lowest class priority must leave free when "
     "admitted, graded to none at the highest; with it, waiting requests evict no one "
     "(PriorityQuotaOptions::kv_reserve)."},
    {"policy", "mlfq_levels", "levels", "8", "MLFQ levels (MlfqOptions::num_levels)."},
    {"policy", "mlfq_base_quantum", "service units", "32",
     "Quantum of level 0; level i has 2^i of it (MlfqOptions::base_quantum)."},
    {"policy", "mlfq_prefill_token_cost", "service units", "1.0",
     "Service per prompt or recomputed token (MlfqOptions::prefill_token_cost)."},
    {"policy", "mlfq_decode_token_cost", "service units", "1.0",
     "Service per decoded token (MlfqOptions::decode_token_cost)."},
    {"policy", "mlfq_max_preemptions_per_step", "preemptions", "1",
     "Quantum-boundary preemptions per step; 0: no time-slicing "
     "(MlfqOptions::max_preemptions_per_step)."},
    {"policy", "mlfq_time_slice_with_recompute", "bool", "false",
     "Time-slice even when preemption recomputes (no swap tier) "
     "(MlfqOptions::time_slice_with_recompute)."},
    {"policy", "mlfq_starvation_s", "s or \"off\"", "60",
     "A waiting request that arrived this long ago is starving and may take the starving "
     "lane; \"off\": no lane (MlfqOptions::starvation_bound)."},
    {"policy", "mlfq_starving_share", "-", "0.5",
     "Share of admissions the starving lane (earliest arrival first) takes while anything "
     "starves, in (0, 1] (MlfqOptions::starving_share)."},
    {"policy", "mlfq_use_predicted_output", "bool", "true",
     "Skip-join counts a request's predicted output length when it has one "
     "(MlfqOptions::use_predicted_output)."},
    {"policy", "household_request_level", "string", "\"fifo\"",
     "\"fifo\" or \"mlfq\": the household tree's request level "
     "(PolicyConfig::household_request_level)."},
    {"policy", "household_background_kv_reserve", "share", "0.2",
     "Share of the KV cache a household request without a TTFT target must leave free when "
     "admitted, in [0, 1); with it, waiting requests evict no one "
     "(PolicyConfig::household_background_kv_reserve)."},
    {"policy", "household_background_prefill_tokens", "tokens", "128",
     "Prefill tokens per step household requests without a TTFT target may take together "
     "while anything decodes; 0: no cap (PolicyConfig::household_background_prefill_tokens)."},
    {"policy", "household_member_guard", "bool", "true",
     "The household tree shares a shortage between members by weight across classes: late "
     "work least-served member first, and a member's share reclaimed from one holding more "
     "than its entitlement (PolicyConfig::household_member_guard, "
     "PolicyTreeConfig::member_guard)."},
    {"policy", "vtc_backfill_s", "s", "120",
     "How long \"vtc\" lets requests that fit pass one that finds no room; 0: never "
     "(PolicyConfig::vtc_backfill_wait)."},
    {"policy", "household_backfill_s", "s", "120",
     "How long the household tree lets requests that fit pass one that finds no room; 0: "
     "never (PolicyConfig::household_backfill_wait, PolicyTreeConfig::backfill_wait)."},
    {"policy", "workflow_head_start_s", "s or \"off\"", "30",
     "How much earlier an agent workflow's next call ranks; \"off\": at its workflow's first "
     "arrival (PolicyConfig::workflow_head_start)."},

    {"policy.quotas", "priority", "-", "required", "The level (class plus request priority) (LevelQuota::priority)."},
    {"policy.quotas", "tokens_per_window", "tokens", "0 (no cap)",
     "Tokens the level may be served per window (LevelQuota::tokens_per_window)."},
    {"policy.quotas", "max_share", "-", "0 (no cap)",
     "Largest share of a window's tokens, in [0, 1]; set this or tokens_per_window "
     "(LevelQuota::max_share)."},

    {"capacity", "p99_itl_ms", "ms or \"off\"", "\"off\"",
     "`--capacity`: bound on the P99 time between tokens, over every gap of every request of a "
     "run, stalls included (LatencyCriterion::p99_itl)."},
    {"capacity", "p50_queue_wait_s", "s or \"off\"", "\"off\"",
     "`--capacity`: bound on the median scheduling delay, arrival to first admission "
     "(LatencyCriterion::p50_queue_wait)."},
    {"capacity", "p50_ttft_s", "s or \"off\"", "\"off\"",
     "`--capacity`: bound on the median TTFT (LatencyCriterion::p50_ttft)."},
    {"capacity", "token_budgets", "list of tokens", "[] (the engine's)",
     "`--capacity`: one search per budget, each setting engine.max_batched_tokens to it and "
     "max_prefill_chunk_tokens to 0 (chunks as large as the budget); each whole, >= "
     "scheduler.max_running (CapacitySpec::token_budgets)."},
    {"capacity", "low_per_s", "requests/s", "0.25",
     "`--capacity`: the rate tried first; when it fails, [0, low] is bisected instead "
     "(BisectionOptions::low)."},
    {"capacity", "high_per_s", "requests/s", "16",
     "`--capacity`: the highest rate searched, >= low_per_s (BisectionOptions::high)."},
    {"capacity", "steps", "-", "10",
     "`--capacity`: bisection steps after the first try, in [0, 64] (BisectionOptions::steps)."},
};


// The keys the options schema gives a table (hearth/scheduler/
// option_fields.h): SchedulerOptions' in [scheduler], ModelConfig's in
// [model] beside the catalogue's name, UserConfig's and WorkClassConfig's in
// each entry. Rows are generated, so their spelling, default, range and
// meaning are the schema's.
struct SchemaTable {
  std::string_view table;
  OptionScope scope;
};
constexpr SchemaTable kSchemaTables[] = {{"model", OptionScope::kModel},
                                         {"scheduler", OptionScope::kOptions},
                                         {"users", OptionScope::kUser},
                                         {"classes", OptionScope::kWorkClass}};

std::string_view UnitOf(const OptionFieldInfo& f) {
  switch (f.type) {
    case OptionType::kInt32:
    case OptionType::kInt64:
    case OptionType::kUint64: return "integer";
    case OptionType::kDouble: return "number";
    case OptionType::kBool: return "bool";
    case OptionType::kDuration:
      return absl::StrContains(absl::string_view(f.allowed.data(), f.allowed.size()),
                               "InfiniteDuration")
                 ? "s or \"off\""
                 : "s";
    case OptionType::kString:
    case OptionType::kPreemptionMode: return "string";
  }
  return "-";
}

// A field's default in a scenario: the library's, but where the reader
// starts elsewhere (scenario_config.cc: ParseModelConfig, ParseScheduler).
std::string DefaultOf(const OptionFieldInfo& f) {
  const std::string_view p = f.path;
  if (f.scope == OptionScope::kModel && (p == "context_length" || p == "vocab_size" ||
                                         p == "kv_bytes_per_token")) {
    return "catalogue";
  }
  if (f.scope == OptionScope::kOptions && p == "kv.num_device_blocks") {
    return "computed (engine.gpu_memory_utilization)";
  }
  if (f.scope == OptionScope::kOptions && p == "max_running") return "128";
  if (f.type == OptionType::kString && f.scope != OptionScope::kOptions) return "required";
  switch (f.scope) {
    case OptionScope::kOptions: return OptionValueText(GetOptionField(SchedulerOptions(), f));
    case OptionScope::kModel: return OptionValueText(GetOptionField(ModelConfig(), f));
    case OptionScope::kUser: return OptionValueText(GetOptionField(UserConfig(), f));
    case OptionScope::kWorkClass: return OptionValueText(GetOptionField(WorkClassConfig(), f));
  }
  return "";
}

// "Tokens per KV block. Must be in [1, 4096] (KvCacheConfig::block_size)."
std::string MeaningOf(const OptionFieldInfo& f) {
  std::string allowed = absl::StrReplaceAll(
      absl::string_view(f.allowed.data(), f.allowed.size()),
      {{"InfiniteDuration", "\"off\""}, {"|", "/"}});
  if (!allowed.empty()) allowed[0] = 'M';
  return absl::StrCat(absl::string_view(f.doc.data(), f.doc.size()), " ", allowed, ".");
}

// Every row: the hand-kept ones, each schema table's after its hand rows
// (or, for [scheduler], which has none, after [engine]'s).
std::vector<ScenarioKey> BuildKeys() {
  static auto* const texts = new std::deque<std::string>();
  auto keep = [](std::string text) -> std::string_view { return texts->emplace_back(std::move(text)); };
  std::vector<ScenarioKey> rows;
  auto add_schema = [&](std::string_view table) {
    for (const SchemaTable& st : kSchemaTables) {
      if (st.table != table) continue;
      for (const OptionFieldInfo& f : OptionFields(st.scope)) {
        if (f.path == "name") continue;  // A hand row says more (uniqueness, catalogue).
        rows.push_back({st.table, keep(OptionKey(f)), UnitOf(f), keep(DefaultOf(f)),
                        keep(MeaningOf(f))});
      }
    }
  };
  const size_t n = sizeof(kHandKeys) / sizeof(kHandKeys[0]);
  for (size_t i = 0; i < n; ++i) {
    rows.push_back(kHandKeys[i]);
    const std::string_view table = kHandKeys[i].table;
    if (i + 1 < n && kHandKeys[i + 1].table == table) continue;
    add_schema(table);
    if (table == "engine") add_schema("scheduler");
  }
  return rows;
}

const std::vector<ScenarioKey>& AllKeys() {
  static const auto* const keys = new std::vector<ScenarioKey>(BuildKeys());
  return *keys;
}

std::string TableTitle(std::string_view table) {
  if (table.empty()) return "Top level";
  const std::string name(table);
  if (table == "users" || table == "classes") return absl::StrCat("`[[", name, "]]` (each entry)");
  if (table == "policy.quotas") return "`[policy] quotas` (each entry)";
  return absl::StrCat("`[", name, "]`");
}

}  // namespace

absl::Span<const ScenarioKey> ScenarioKeys() { return AllKeys(); }

std::vector<std::string_view> ScenarioKeysOf(std::string_view table) {
  std::vector<std::string_view> keys;
  for (const ScenarioKey& k : AllKeys()) {
    if (k.table == table) keys.push_back(k.key);
  }
  return keys;
}

std::string ScenarioKeysMarkdown() {
  std::string out;
  std::string_view table = "(none)";
  for (const ScenarioKey& k : AllKeys()) {
    if (k.table != table) {
      table = k.table;
      absl::StrAppend(&out, out.empty() ? "" : "\n", TableTitle(table),
                      "\n\n| key | unit | default | meaning |\n|---|---|---|---|\n");
    }
    absl::StrAppend(&out, "| `", std::string(k.key), "` | ", std::string(k.unit), " | ",
                    std::string(k.default_value), " | ", std::string(k.meaning), " |\n");
  }
  return out;
}

}  // namespace hearth
