#include "hearth/sim/burstgpt_trace.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "internal/status_macros.h"
#include "sim/quote.h"
#include "sim/toml_util.h"
#include "sim/trace_lines.h"
#include "sim/trace_rows.h"

namespace hearth {

using internal::RowError;

namespace {

constexpr absl::string_view kHeader =
    "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type";

// Latest timestamp accepted, in seconds: about 3,000 years, so offsets
// convert to a Duration exactly.
constexpr double kMaxTimestampS = 1e11;

std::optional<int64_t> ParseCount(absl::string_view field, int64_t lo) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(field, &v) || v < lo || v > internal::kMaxTraceTokens) {
    return std::nullopt;
  }
  return v;
}

struct BurstRow {
  double timestamp_s = 0;
  absl::string_view model;
  int64_t request = 0;
  int64_t response = 0;
};

absl::StatusOr<BurstRow> ParseRow(absl::string_view line) {
  const std::vector<absl::string_view> f = absl::StrSplit(line, ',');
  if (f.size() != 6) {
    return absl::InvalidArgumentError(absl::StrCat("expected 6 fields, found ", f.size()));
  }
  BurstRow row;
  if (!absl::SimpleAtod(f[0], &row.timestamp_s) || !std::isfinite(row.timestamp_s) ||
      row.timestamp_s < 0 || row.timestamp_s > kMaxTimestampS) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Timestamp ", internal::Quote(f[0]), " must be seconds in [0, ", kMaxTimestampS, "]"));
  }
  row.model = f[1];
  const std::optional<int64_t> request = ParseCount(f[2], 1);
  if (!request) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Request tokens ", internal::Quote(f[2]), " must be an integer in [1, 2^30]"));
  }
  const std::optional<int64_t> response = ParseCount(f[3], 0);
  if (!response) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Response tokens ", internal::Quote(f[3]), " must be an integer in [0, 2^30]"));
  }
  // Total tokens and Log Type are not used, but a row whose total is not a
  // count is damaged and may have shifted columns.
  if (!ParseCount(f[4], 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Total tokens ", internal::Quote(f[4]), " must be an integer in [0, 2^30]"));
  }
  row.request = *request;
  row.response = *response;
  return row;
}

}  // namespace

absl::StatusOr<Workload> ParseBurstGptTrace(std::string_view text, const std::string& name,
                                            const TraceMapping& mapping,
                                            const BurstGptOptions& options) {
  HEARTH_RETURN_IF_ERROR(ValidateTraceMapping(mapping));
  TraceRowMapper mapper(mapping);
  const std::vector<internal::TraceLine> lines = internal::SplitTraceLines(text);
  if (lines.empty() || lines[0].text != kHeader) {
    return RowError(name, 1, absl::StrCat("expected the header ", kHeader));
  }
  const std::string base = internal::BaseName(name);
  Workload w;
  std::optional<double> first;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].text.empty()) continue;
    const int64_t n = lines[i].number;
    absl::StatusOr<BurstRow> row = ParseRow(lines[i].text);
    if (!row.ok()) return RowError(name, n, row.status().message());
    if (!first) first = row->timestamp_s;
    if (row->timestamp_s < *first) {
      return RowError(name, n, "Timestamp is earlier than the first row's");
    }
    if (!options.models.empty() &&
        std::find(options.models.begin(), options.models.end(), row->model) ==
            options.models.end()) {
      continue;
    }
    if (row->response == 0 && options.failed == FailedResponses::kSkip) continue;
    SimRequest r;
    r.prompt_tokens = static_cast<int32_t>(row->request);
    // A failed response: the prompt was read, one token stands for the end.
    r.output_tokens = static_cast<int32_t>(std::max<int64_t>(row->response, 1));
    r.label = absl::StrCat(base, ":", n);
    const absl::Duration offset =
        absl::Microseconds(std::llround((row->timestamp_s - *first) * 1e6));
    if (!internal::AddMappedRow(mapping, mapper, offset, std::move(r), w)) break;
  }
  return w;
}

absl::StatusOr<Workload> LoadBurstGptTrace(const std::string& path, const TraceMapping& mapping,
                                           const BurstGptOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(std::string text, internal::ReadFileToString(path));
  return ParseBurstGptTrace(text, path, mapping, options);
}

}  // namespace hearth
