#include "hearth/sim/request_jsonl.h"

#include <cmath>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "internal/status_macros.h"
#include "sim/json_fields.h"
#include "sim/quote.h"
#include "sim/toml_util.h"
#include "sim/trace_lines.h"
#include "sim/trace_rows.h"

namespace hearth {

using internal::Json;

namespace {

constexpr double kMaxSeconds = 1e9;

absl::Duration Seconds(double s) { return absl::Nanoseconds(std::llround(s * 1e9)); }

// The index of the name at `key`, or `fallback` when the key is absent.
absl::StatusOr<uint32_t> NameAt(const Json& row, absl::string_view key,
                                const std::vector<std::string>& names, uint32_t fallback) {
  HEARTH_ASSIGN_OR_RETURN(std::optional<std::string> name, internal::OptionalString(row, key));
  if (!name) return fallback;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == *name) return static_cast<uint32_t>(i);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(key, " ", internal::Quote(*name), " is not one of ",
                   internal::Clip(absl::StrJoin(names, ", "))));
}

class RequestReader {
 public:
  explicit RequestReader(const RequestJsonlOptions& o) : o_(o) {}

  // The request on one line; `index` is its place in the workload.
  absl::StatusOr<SimRequest> Read(const Json& row, int32_t index) {
    SimRequest r;
    HEARTH_ASSIGN_OR_RETURN(int64_t prompt, internal::RequiredInt(row, "prompt_tokens", 1,
                                                                  internal::kMaxTraceTokens));
    HEARTH_ASSIGN_OR_RETURN(int64_t output, internal::RequiredInt(row, "output_tokens", 1,
                                                                  internal::kMaxTraceTokens));
    r.prompt_tokens = static_cast<int32_t>(prompt);
    r.output_tokens = static_cast<int32_t>(output);
    HEARTH_ASSIGN_OR_RETURN(std::optional<int64_t> max_new, internal::OptionalInt(
                                row, "max_new_tokens", 0, internal::kMaxTraceTokens));
    r.max_new_tokens = static_cast<int32_t>(max_new.value_or(0));
    HEARTH_ASSIGN_OR_RETURN(r.user, NameAt(row, "user", o_.user_names, o_.default_user));
    HEARTH_ASSIGN_OR_RETURN(r.work_class, NameAt(row, "class", o_.class_names, o_.default_class));
    HEARTH_ASSIGN_OR_RETURN(r.prefix_hashes,
                            internal::HashList(row, "prefix_hashes", MaxHashes(prompt)));
    r.prefix_hash_tokens = o_.hash_block_tokens;
    HEARTH_RETURN_IF_ERROR(ReadTiming(row, r));
    HEARTH_RETURN_IF_ERROR(ReadCacheScope(row, r));
    HEARTH_ASSIGN_OR_RETURN(std::optional<std::string> id, internal::OptionalString(row, "id"));
    if (id && !ids_.emplace(*id, index).second) {
      return absl::InvalidArgumentError(absl::StrCat("id ", internal::Quote(*id),
                                                     " is used by an earlier line"));
    }
    return r;
  }

 private:
  size_t MaxHashes(int64_t prompt) const {
    return static_cast<size_t>((prompt + o_.hash_block_tokens - 1) / o_.hash_block_tokens);
  }

  // cache_scope, cache_shared_prefix_tokens, cache_shared_scope and
  // cache_opt_out; any of them sets the request's whole scope (the
  // scheduler checks it at Submit, as for any host).
  static absl::Status ReadCacheScope(const Json& row, SimRequest& r) {
    HEARTH_ASSIGN_OR_RETURN(std::optional<std::string> name,
                            internal::OptionalString(row, "cache_scope"));
    HEARTH_ASSIGN_OR_RETURN(std::optional<std::string> shared_scope,
                            internal::OptionalString(row, "cache_shared_scope"));
    HEARTH_ASSIGN_OR_RETURN(std::optional<int64_t> shared, internal::OptionalInt(
                                row, "cache_shared_prefix_tokens", 0, r.prompt_tokens));
    std::optional<bool> opt_out;
    if (auto it = row.find("cache_opt_out"); it != row.end()) {
      if (!it->is_boolean()) return absl::InvalidArgumentError("cache_opt_out must be true or false");
      opt_out = it->get<bool>();
    }
    if (!name && !shared_scope && !shared && !opt_out) return absl::OkStatus();
    CacheScope& scope = r.cache_scope.emplace();
    scope.name = name.value_or("");
    scope.shared_prefix_scope = shared_scope.value_or("");
    scope.shared_prefix_tokens = static_cast<int32_t>(shared.value_or(0));
    scope.opt_out = opt_out.value_or(false);
    return absl::OkStatus();
  }

  // arrival_s, or parent, think_s and shared_prefix_tokens.
  absl::Status ReadTiming(const Json& row, SimRequest& r) {
    HEARTH_ASSIGN_OR_RETURN(std::optional<std::string> parent,
                            internal::OptionalString(row, "parent"));
    HEARTH_ASSIGN_OR_RETURN(std::optional<double> think,
                            internal::OptionalNumber(row, "think_s", 0, kMaxSeconds));
    HEARTH_ASSIGN_OR_RETURN(std::optional<int64_t> shared, internal::OptionalInt(
                                row, "shared_prefix_tokens", 0, internal::kMaxTraceTokens));
    if (!parent) {
      if (think || shared) {
        return absl::InvalidArgumentError("think_s and shared_prefix_tokens need a parent");
      }
      HEARTH_ASSIGN_OR_RETURN(double arrival,
                              internal::RequiredNumber(row, "arrival_s", 0, kMaxSeconds));
      r.arrival = Seconds(arrival);
      return absl::OkStatus();
    }
    const auto it = ids_.find(*parent);
    if (it == ids_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parent ", internal::Quote(*parent), " is not the id of an earlier line"));
    }
    r.parent = it->second;
    r.think_time = Seconds(think.value_or(0));
    r.shared_prefix_tokens = static_cast<int32_t>(shared.value_or(0));
    return absl::OkStatus();
  }

  const RequestJsonlOptions& o_;
  absl::flat_hash_map<std::string, int32_t> ids_;
};

absl::Status ValidateOptions(const RequestJsonlOptions& o) {
  if (o.user_names.empty() || o.class_names.empty() || o.default_user >= o.user_names.size() ||
      o.default_class >= o.class_names.size()) {
    return absl::InvalidArgumentError(
        "request jsonl: user_names and class_names must be non-empty and hold the defaults");
  }
  if (o.hash_block_tokens < 1 || o.hash_block_tokens > (1 << 20) || o.max_requests < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request jsonl: hash_block_tokens is ", o.hash_block_tokens,
        "; must be in [1, 2^20], and max_requests >= 0"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Workload> ParseRequestJsonl(std::string_view text, const std::string& name,
                                           const RequestJsonlOptions& options) {
  HEARTH_RETURN_IF_ERROR(ValidateOptions(options));
  RequestReader reader(options);
  const std::string base = internal::BaseName(name);
  Workload w;
  for (const internal::TraceLine& line : internal::SplitTraceLines(text)) {
    if (absl::StripAsciiWhitespace(line.text).empty()) continue;
    if (options.max_requests > 0 &&
        static_cast<int64_t>(w.requests.size()) >= options.max_requests) {
      break;
    }
    absl::StatusOr<Json> row = internal::ParseJsonObjectLine(line.text);
    if (!row.ok()) return internal::RowError(name, line.number, row.status().message());
    absl::StatusOr<SimRequest> r =
        reader.Read(*row, static_cast<int32_t>(w.requests.size()));
    if (!r.ok()) return internal::RowError(name, line.number, r.status().message());
    r->label = absl::StrCat(base, ":", line.number);
    w.requests.push_back(*std::move(r));
  }
  // Shared prefixes against the parent's lengths, and the rest of the
  // workload's rules, with the line in the message.
  absl::Status valid = ValidateWorkload(w, static_cast<uint32_t>(options.user_names.size()),
                                        static_cast<uint32_t>(options.class_names.size()));
  if (!valid.ok()) return absl::InvalidArgumentError(absl::StrCat(name, ": ", valid.message()));
  return w;
}

absl::StatusOr<Workload> LoadRequestJsonl(const std::string& path,
                                          const RequestJsonlOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(std::string text, internal::ReadFileToString(path));
  return ParseRequestJsonl(text, path, options);
}

}  // namespace hearth
