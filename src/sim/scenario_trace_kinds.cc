// The [workload] kinds read from one trace file with a TraceMapping or names
// of their own: mooncake, sharegpt, burstgpt and jsonl.

#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hearth/sim/scenario_config.h"
#include "internal/status_macros.h"
#include "sim/scenario_reader.h"

namespace hearth::internal {
namespace {

constexpr const char* kPath = "workload";

// Every kind's common keys and a trace file.
std::vector<std::string_view> WithCommonKeys(std::initializer_list<std::string_view> own,
                                             bool mapped) {
  std::vector<std::string_view> out = {"kind", "file", "flood", "request_cap"};
  out.insert(out.end(), own.begin(), own.end());
  if (mapped) out.insert(out.end(), std::begin(kMappingKeys), std::end(kMappingKeys));
  return out;
}

absl::Status ParseBurstGpt(const ScenarioReader& r, const toml::table& w, Scenario& s) {
  BurstGptOptions& o = s.workload.burstgpt;
  HEARTH_ASSIGN_OR_RETURN(o.models, r.Strings(w, "models", kPath));
  HEARTH_ASSIGN_OR_RETURN(std::string failed, r.String(w, "failed", kPath, "replay_prefill"));
  if (failed == "skip") {
    o.failed = FailedResponses::kSkip;
  } else if (failed != "replay_prefill") {
    return r.Error(*w.get("failed"), "workload.failed",
                   "must be \"replay_prefill\" or \"skip\"");
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> NamedIndex(const ScenarioReader& r, const toml::table& w,
                                    std::string_view key, const std::vector<std::string>& names,
                                    std::string_view what) {
  if (w.get(key) == nullptr) return 0;
  HEARTH_ASSIGN_OR_RETURN(std::string name, r.String(w, key, kPath, std::nullopt));
  return r.Lookup(*w.get(key), absl::StrCat(kPath, ".", std::string(key)), name, names, what);
}

absl::Status ParseRequestJsonlKind(const ScenarioReader& r, const toml::table& w, Scenario& s) {
  RequestJsonlOptions& o = s.workload.request_jsonl;
  o.user_names = UserNames(s);
  o.class_names = ClassNames(s);
  HEARTH_ASSIGN_OR_RETURN(o.default_user,
                          NamedIndex(r, w, "default_user", o.user_names, "user"));
  HEARTH_ASSIGN_OR_RETURN(o.default_class,
                          NamedIndex(r, w, "default_class", o.class_names, "class"));
  HEARTH_ASSIGN_OR_RETURN(int64_t block, r.Int(w, "hash_block_tokens", kPath, 16, 1, 1 << 20));
  o.hash_block_tokens = static_cast<int32_t>(block);
  HEARTH_ASSIGN_OR_RETURN(o.max_requests, r.Int(w, "max_requests", kPath, 0, 0, INT64_MAX));
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string_view> TraceKindKeys(std::string_view kind) {
  if (kind == "mooncake") return WithCommonKeys({"block_tokens"}, true);
  if (kind == "sharegpt") return WithCommonKeys({"rate_per_s", "bytes_per_token"}, true);
  if (kind == "burstgpt") return WithCommonKeys({"models", "failed"}, true);
  if (kind == "jsonl") {
    return WithCommonKeys({"default_user", "default_class", "hash_block_tokens", "max_requests"},
                          false);
  }
  return {};
}

absl::Status ParseTraceKind(const ScenarioReader& r, const toml::table& w, std::string_view kind,
                            Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(std::string file, r.String(w, "file", kPath, std::nullopt));
  s.workload.trace_path = r.Resolve(file);
  if (kind == "jsonl") {
    s.workload.kind = WorkloadSpec::Kind::kRequestJsonl;
    return ParseRequestJsonlKind(r, w, s);
  }
  HEARTH_RETURN_IF_ERROR(ParseMapping(r, w, s));
  if (kind == "mooncake") {
    s.workload.kind = WorkloadSpec::Kind::kMooncake;
    HEARTH_ASSIGN_OR_RETURN(int64_t block, r.Int(w, "block_tokens", kPath,
                                                 kMooncakeBlockTokens, 1, 1 << 20));
    s.workload.mooncake_block_tokens = static_cast<int32_t>(block);
    return absl::OkStatus();
  }
  if (kind == "sharegpt") {
    s.workload.kind = WorkloadSpec::Kind::kShareGpt;
    ShareGptOptions& o = s.workload.sharegpt;
    HEARTH_ASSIGN_OR_RETURN(o.rate_per_s, r.Number(w, "rate_per_s", kPath, 1, 1e-6, 1e6));
    HEARTH_ASSIGN_OR_RETURN(o.bytes_per_token,
                            r.Number(w, "bytes_per_token", kPath, 4, 0.1, 100));
    return absl::OkStatus();
  }
  s.workload.kind = WorkloadSpec::Kind::kBurstGpt;
  return ParseBurstGpt(r, w, s);
}

absl::StatusOr<Workload> LoadTraceKind(const Scenario& s) {
  const WorkloadSpec& spec = s.workload;
  TraceMapping mapping = spec.mapping;
  mapping.seed = s.seed;
  switch (spec.kind) {
    case WorkloadSpec::Kind::kMooncake:
      return LoadMooncakeTrace(spec.trace_path, mapping, spec.mooncake_block_tokens);
    case WorkloadSpec::Kind::kShareGpt:
      return LoadShareGptLengths(spec.trace_path, mapping, spec.sharegpt);
    case WorkloadSpec::Kind::kBurstGpt:
      return LoadBurstGptTrace(spec.trace_path, mapping, spec.burstgpt);
    case WorkloadSpec::Kind::kRequestJsonl:
      return LoadRequestJsonl(spec.trace_path, spec.request_jsonl);
    default:
      break;
  }
  return absl::InternalError("LoadTraceKind: not a single-file trace kind");
}

}  // namespace hearth::internal
