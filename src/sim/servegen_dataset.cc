#include "hearth/sim/servegen_dataset.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "internal/status_macros.h"
#include "sim/json_fields.h"
#include "sim/quote.h"
#include "sim/trace_rows.h"

namespace hearth {

using internal::Json;

namespace {

// Window starts: as the trace files' time_s (servegen_trace.cc).
constexpr double kMaxWindowStart = 1e9;

// "{39: 0.0003, 40: 0.0001}" as lengths and cumulative mass; empty for "{}".
absl::StatusOr<DiscreteLengths> ParsePmf(absl::string_view text) {
  absl::string_view body = absl::StripAsciiWhitespace(text);
  if (!absl::ConsumePrefix(&body, "{") || !absl::ConsumeSuffix(&body, "}")) {
    return absl::InvalidArgumentError(
        absl::StrCat(internal::Quote(text), " must be a dict literal {tokens: probability, ...}"));
  }
  DiscreteLengths out;
  if (absl::StripAsciiWhitespace(body).empty()) return out;
  std::vector<std::pair<int64_t, double>> mass;
  for (absl::string_view entry : absl::StrSplit(body, ',')) {
    const std::vector<absl::string_view> kv = absl::StrSplit(entry, ':');
    int64_t tokens = 0;
    double p = 0;
    if (kv.size() != 2 ||
        !absl::SimpleAtoi(absl::StripAsciiWhitespace(kv[0]), &tokens) || tokens < 0 ||
        tokens > internal::kMaxTraceTokens ||
        !absl::SimpleAtod(absl::StripAsciiWhitespace(kv[1]), &p) || !std::isfinite(p) ||
        p < 0 || p > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "entry ", internal::Quote(entry),
          " must be tokens: probability with tokens in [0, 2^30] and probability in [0, 1]"));
    }
    mass.emplace_back(tokens, p);
  }
  std::sort(mass.begin(), mass.end());
  double sum = 0;
  for (const auto& [tokens, p] : mass) {
    if (p == 0) continue;
    sum += p;
    // A 0-token prompt or answer still costs a step: at least one token.
    out.tokens.push_back(static_cast<int32_t>(std::max<int64_t>(tokens, 1)));
    out.cumulative.push_back(sum);
  }
  if (out.tokens.empty()) {
    return absl::InvalidArgumentError("every probability is 0");
  }
  return out;
}

absl::StatusOr<DiscreteLengths> Field(const Json& window, absl::string_view key) {
  const auto it = window.find(std::string(key));
  if (it == window.end() || !it->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(key, " must be a string"));
  }
  absl::StatusOr<DiscreteLengths> d = ParsePmf(it->get_ref<const std::string&>());
  if (!d.ok()) return absl::InvalidArgumentError(absl::StrCat(key, ": ", d.status().message()));
  return d;
}

}  // namespace

int32_t DiscreteLengths::At(double u) const {
  const double target = u * cumulative.back();
  const size_t i = static_cast<size_t>(
      std::upper_bound(cumulative.begin(), cumulative.end(), target) - cumulative.begin());
  return tokens[std::min(i, tokens.size() - 1)];
}

absl::StatusOr<std::vector<ServeGenLengthWindow>> ParseServeGenDataset(std::string_view text,
                                                                       const std::string& name) {
  HEARTH_ASSIGN_OR_RETURN(Json doc, internal::ParseJsonDocument(text, name));
  if (!doc.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": expected an object keyed by window start, found ", doc.type_name()));
  }
  // nlohmann_json iterates keys sorted, not as written: find each one's line.
  absl::flat_hash_map<std::string, int64_t> line_of;
  for (const internal::JsonMemberPosition& m : internal::TopLevelMembers(text)) {
    line_of.try_emplace(m.key, m.line);
  }
  std::vector<ServeGenLengthWindow> out;
  for (const auto& item : doc.items()) {
    const std::string& key = item.key();
    const Json& fields = item.value();
    auto bad = [&](absl::string_view what) {
      auto at = line_of.find(key);
      return absl::InvalidArgumentError(absl::StrCat(
          name, at == line_of.end() ? "" : absl::StrCat(":", at->second), ": window ",
          internal::Quote(key), ": ", what));
    };
    ServeGenLengthWindow w;
    if (!absl::SimpleAtod(key, &w.start_s) || !std::isfinite(w.start_s) || w.start_s < 0 ||
        w.start_s > kMaxWindowStart) {
      return bad(absl::StrCat("the key must be seconds in [0, ", kMaxWindowStart, "]"));
    }
    if (!fields.is_object()) return bad("must be an object of fields");
    absl::StatusOr<DiscreteLengths> input = Field(fields, "input_tokens");
    if (!input.ok()) return bad(input.status().message());
    absl::StatusOr<DiscreteLengths> output = Field(fields, "output_tokens");
    if (!output.ok()) return bad(output.status().message());
    if (input->tokens.empty() || output->tokens.empty()) continue;  // no data
    w.input = *std::move(input);
    w.output = *std::move(output);
    out.push_back(std::move(w));
  }
  // JSON keys sort as strings ("21600" < "3600"); windows go by time.
  std::sort(out.begin(), out.end(), [](const ServeGenLengthWindow& a,
                                       const ServeGenLengthWindow& b) {
    return a.start_s < b.start_s;
  });
  return out;
}

const ServeGenLengthWindow* ServeGenWindowAt(const std::vector<ServeGenLengthWindow>& windows,
                                             double t_s) {
  const auto it = std::upper_bound(
      windows.begin(), windows.end(), t_s,
      [](double t, const ServeGenLengthWindow& w) { return t < w.start_s; });
  return it == windows.begin() ? nullptr : &*(it - 1);
}

}  // namespace hearth
