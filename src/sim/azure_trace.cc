#include "hearth/sim/azure_trace.h"

#include <cmath>
#include <cstdint>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "internal/status_macros.h"
#include "sim/quote.h"
#include "sim/toml_util.h"
#include "sim/trace_lines.h"

namespace hearth {

using internal::RowError;

namespace {

// Rows must fall in [1970, 2200): real traces do, and every offset between
// two rows then fits a Duration with nanoseconds to spare.
const absl::Time kEarliestRow = absl::UnixEpoch();
const absl::Time kLatestRow = absl::FromCivil(absl::CivilSecond(2200, 1, 1, 0, 0, 0),
                                              absl::UTCTimeZone());

// "YYYY-MM-DD HH:MM:SS[.fraction]" in UTC, within the years above.
std::optional<absl::Time> ParseTimestamp(absl::string_view field) {
  absl::Time t;
  std::string error;
  if (!absl::ParseTime("%Y-%m-%d %H:%M:%E*S", field, absl::UTCTimeZone(), &t, &error) ||
      t < kEarliestRow || t >= kLatestRow) {
    return std::nullopt;
  }
  return t;
}

// A token count in [1, 2^30].
std::optional<int64_t> ParseTokenCount(absl::string_view field) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(field, &v) || v < 1 || v > (int64_t{1} << 30)) {
    return std::nullopt;
  }
  return v;
}

}  // namespace

absl::StatusOr<Workload> ParseAzureTrace(std::string_view text,
                                         const std::string& name,
                                         const TraceMapping& mapping) {
  HEARTH_RETURN_IF_ERROR(ValidateTraceMapping(mapping));
  TraceRowMapper mapper(mapping);
  const std::vector<internal::TraceLine> lines = internal::SplitTraceLines(text);
  if (lines.empty() || lines[0].text != "TIMESTAMP,ContextTokens,GeneratedTokens") {
    return RowError(name, 1,
                    "expected the header TIMESTAMP,ContextTokens,GeneratedTokens");
  }
  // Base name for labels ("conv.csv:17" rather than a long path).
  const size_t slash = name.find_last_of('/');
  const std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  Workload w;
  std::optional<absl::Time> first;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].text.empty()) continue;
    const int64_t n = lines[i].number;
    const std::vector<absl::string_view> f = absl::StrSplit(lines[i].text, ',');
    if (f.size() != 3) {
      return RowError(name, n, absl::StrCat("expected 3 fields, found ", f.size()));
    }
    const std::optional<absl::Time> t = ParseTimestamp(f[0]);
    if (!t) {
      return RowError(name, n, absl::StrCat("TIMESTAMP ", internal::Quote(f[0]),
                                            " must be YYYY-MM-DD HH:MM:SS.fff in years [1970, 2200)"));
    }
    const std::optional<int64_t> prompt = ParseTokenCount(f[1]);
    if (!prompt) {
      return RowError(name, n, absl::StrCat("ContextTokens ", internal::Quote(f[1]),
                                            " must be an integer in [1, 2^30]"));
    }
    const std::optional<int64_t> output = ParseTokenCount(f[2]);
    if (!output) {
      return RowError(name, n, absl::StrCat("GeneratedTokens ", internal::Quote(f[2]),
                                            " must be an integer in [1, 2^30]"));
    }
    if (!first) first = *t;
    if (*t < *first) {
      return RowError(name, n, "TIMESTAMP is earlier than the first row's");
    }
    const absl::Duration offset = *t - *first;
    if (!mapper.InWindow(offset)) continue;
    SimRequest r;
    r.arrival = mapper.ArrivalFor(offset);
    r.user = mapper.NextUser();
    r.prompt_tokens = static_cast<int32_t>(*prompt);
    r.output_tokens = static_cast<int32_t>(*output);
    r.work_class = mapper.ClassFor(r.prompt_tokens, r.output_tokens);
    r.label = absl::StrCat(base, ":", n);
    w.requests.push_back(std::move(r));
    if (mapping.max_requests > 0 &&
        static_cast<int64_t>(w.requests.size()) >= mapping.max_requests) {
      break;
    }
  }
  return w;
}

absl::StatusOr<Workload> LoadAzureTrace(const std::string& path,
                                        const TraceMapping& mapping) {
  HEARTH_ASSIGN_OR_RETURN(std::string text, internal::ReadFileToString(path));
  return ParseAzureTrace(text, path, mapping);
}

}  // namespace hearth
