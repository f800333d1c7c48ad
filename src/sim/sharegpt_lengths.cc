#include "hearth/sim/sharegpt_lengths.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "internal/status_macros.h"
#include "sim/json_fields.h"
#include "sim/sim_random.h"
#include "sim/toml_util.h"
#include "sim/trace_lines.h"
#include "sim/trace_rows.h"

namespace hearth {

using internal::Json;

namespace {

constexpr double kMaxArrivalS = 1e9;

struct Lengths {
  int32_t prompt = 0;
  int32_t output = 0;
};

// Tokens in a turn's text: at least 1, at most the trace limit.
absl::StatusOr<int32_t> TurnTokens(const Json& turn, size_t k, double bytes_per_token) {
  const auto value = turn.is_object() ? turn.find("value") : turn.end();
  if (!turn.is_object() || value == turn.end() || !value->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("conversations[", k, "] must be an object with a string \"value\""));
  }
  const double tokens =
      std::floor(static_cast<double>(value->get_ref<const std::string&>().size()) /
                 bytes_per_token);
  return static_cast<int32_t>(
      std::clamp(tokens, 1.0, static_cast<double>(internal::kMaxTraceTokens)));
}

// An entry's lengths; nullopt for a conversation with fewer than two turns.
absl::StatusOr<std::optional<Lengths>> EntryLengths(const Json& e, double bytes_per_token) {
  if (!e.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("expected an object, found ", e.type_name()));
  }
  const auto conversation = e.find("conversations");
  if (conversation != e.end()) {
    if (!conversation->is_array()) {
      return absl::InvalidArgumentError("conversations must be a list of turns");
    }
    if (conversation->size() < 2) return std::nullopt;
    Lengths l;
    HEARTH_ASSIGN_OR_RETURN(l.prompt, TurnTokens((*conversation)[0], 0, bytes_per_token));
    HEARTH_ASSIGN_OR_RETURN(l.output, TurnTokens((*conversation)[1], 1, bytes_per_token));
    return l;
  }
  HEARTH_ASSIGN_OR_RETURN(int64_t prompt,
                          internal::RequiredInt(e, "prompt_len", 1, internal::kMaxTraceTokens));
  HEARTH_ASSIGN_OR_RETURN(int64_t output,
                          internal::RequiredInt(e, "output_len", 1, internal::kMaxTraceTokens));
  return Lengths{static_cast<int32_t>(prompt), static_cast<int32_t>(output)};
}

// Entries with where they are: the line they start on and, in a list,
// their index.
struct Entry {
  int64_t line = 0;
  std::optional<size_t> index;
  Json value;
};

// "s.json:17: [16]" in a list, "s.jsonl:17" in JSONL.
std::string Where(const std::string& file, const Entry& e) {
  return e.index ? absl::StrCat(file, ":", e.line, ": [", *e.index, "]")
                 : absl::StrCat(file, ":", e.line);
}
// A request's label: "s[16]" or "s:17".
std::string Label(const std::string& base, const Entry& e) {
  return e.index ? absl::StrCat(base, "[", *e.index, "]") : absl::StrCat(base, ":", e.line);
}

absl::StatusOr<std::vector<Entry>> ReadEntries(std::string_view text, const std::string& name) {
  std::vector<Entry> out;
  const absl::string_view rest =
      absl::StripLeadingAsciiWhitespace(absl::string_view(text.data(), text.size()));
  if (!rest.empty() && rest.front() == '[') {
    HEARTH_ASSIGN_OR_RETURN(Json list, internal::ParseJsonDocument(text, name));
    if (!list.is_array()) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": expected a JSON list"));
    }
    const std::vector<internal::JsonMemberPosition> at = internal::TopLevelMembers(text);
    for (size_t i = 0; i < list.size(); ++i) {
      out.push_back({i < at.size() ? at[i].line : 0, i, std::move(list[i])});
    }
    return out;
  }
  for (const internal::TraceLine& line : internal::SplitTraceLines(text)) {
    if (absl::StripAsciiWhitespace(line.text).empty()) continue;
    absl::StatusOr<Json> v = internal::ParseJsonObjectLine(line.text);
    if (!v.ok()) return internal::RowError(name, line.number, v.status().message());
    out.push_back({line.number, std::nullopt, *std::move(v)});
  }
  return out;
}

}  // namespace

absl::StatusOr<Workload> ParseShareGptLengths(std::string_view text, const std::string& name,
                                              const TraceMapping& mapping,
                                              const ShareGptOptions& options) {
  HEARTH_RETURN_IF_ERROR(ValidateTraceMapping(mapping));
  if (!(options.rate_per_s >= 1e-6 && options.rate_per_s <= 1e6) ||
      !(options.bytes_per_token > 0 && options.bytes_per_token <= 100)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sharegpt: rate_per_s is ", options.rate_per_s, " and bytes_per_token ",
        options.bytes_per_token, "; they must be in [1e-6, 1e6] and (0, 100]"));
  }
  HEARTH_ASSIGN_OR_RETURN(std::vector<Entry> entries, ReadEntries(text, name));
  TraceRowMapper mapper(mapping);
  internal::SimRandom rng(mapping.seed ^ 0x5ba4e6ull);
  const std::string base = internal::BaseName(name);
  Workload w;
  double t = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    absl::StatusOr<std::optional<Lengths>> l = EntryLengths(entries[i].value, options.bytes_per_token);
    if (!l.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(Where(name, entries[i]), ": ", l.status().message()));
    }
    if (!l->has_value()) continue;
    t += rng.Exponential(1 / options.rate_per_s);
    // Arrivals become int64 nanoseconds: 1e9 s (31 years) keeps them far
    // inside that, whatever the file's length and the rate.
    if (t > kMaxArrivalS) {
      return absl::InvalidArgumentError(absl::StrCat(
          Where(name, entries[i]), ": arrives after ", kMaxArrivalS,
          " s at rate_per_s ", options.rate_per_s, "; raise the rate or use fewer entries"));
    }
    SimRequest r;
    r.prompt_tokens = (*l)->prompt;
    r.output_tokens = (*l)->output;
    r.label = Label(base, entries[i]);
    if (!internal::AddMappedRow(mapping, mapper, absl::Nanoseconds(std::llround(t * 1e9)),
                                std::move(r), w)) {
      break;
    }
  }
  return w;
}

absl::StatusOr<Workload> LoadShareGptLengths(const std::string& path, const TraceMapping& mapping,
                                             const ShareGptOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(std::string text, internal::ReadFileToString(path));
  return ParseShareGptLengths(text, path, mapping, options);
}

}  // namespace hearth
