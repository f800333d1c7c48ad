#include "hearth/sim/mooncake_trace.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "internal/status_macros.h"
#include "sim/json_fields.h"
#include "sim/toml_util.h"
#include "sim/trace_lines.h"
#include "sim/trace_rows.h"

namespace hearth {

using internal::RowError;

namespace {

// Latest timestamp accepted: about 3,000 years in milliseconds, so that
// differences convert to a Duration exactly.
constexpr double kMaxTimestampMs = 1e14;

struct MooncakeRow {
  double timestamp_ms = 0;
  SimRequest request;
};

absl::StatusOr<MooncakeRow> ParseRow(absl::string_view line, int32_t block_tokens) {
  HEARTH_ASSIGN_OR_RETURN(internal::Json row, internal::ParseJsonObjectLine(line));
  MooncakeRow out;
  HEARTH_ASSIGN_OR_RETURN(out.timestamp_ms,
                          internal::RequiredNumber(row, "timestamp", 0, kMaxTimestampMs));
  HEARTH_ASSIGN_OR_RETURN(int64_t input, internal::RequiredInt(row, "input_length", 1,
                                                               internal::kMaxTraceTokens));
  HEARTH_ASSIGN_OR_RETURN(int64_t output, internal::RequiredInt(row, "output_length", 1,
                                                                internal::kMaxTraceTokens));
  // Only the ids that cover the prompt matter; more than ever could is junk.
  const size_t blocks = static_cast<size_t>((input + block_tokens - 1) / block_tokens);
  HEARTH_ASSIGN_OR_RETURN(out.request.prefix_hashes,
                          internal::HashList(row, "hash_ids", std::max<size_t>(blocks, size_t{1} << 16)));
  if (out.request.prefix_hashes.size() > blocks) out.request.prefix_hashes.resize(blocks);
  out.request.prefix_hash_tokens = block_tokens;
  out.request.prompt_tokens = static_cast<int32_t>(input);
  out.request.output_tokens = static_cast<int32_t>(output);
  return out;
}

}  // namespace

absl::StatusOr<Workload> ParseMooncakeTrace(std::string_view text, const std::string& name,
                                            const TraceMapping& mapping, int32_t block_tokens) {
  HEARTH_RETURN_IF_ERROR(ValidateTraceMapping(mapping));
  if (block_tokens < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("mooncake: block_tokens is ", block_tokens, "; must be >= 1"));
  }
  TraceRowMapper mapper(mapping);
  const std::string base = internal::BaseName(name);
  Workload w;
  std::optional<double> first;
  for (const internal::TraceLine& line : internal::SplitTraceLines(text)) {
    if (line.text.empty()) continue;
    absl::StatusOr<MooncakeRow> row = ParseRow(line.text, block_tokens);
    if (!row.ok()) return RowError(name, line.number, row.status().message());
    if (!first) first = row->timestamp_ms;
    if (row->timestamp_ms < *first) {
      return RowError(name, line.number, "timestamp is earlier than the first row's");
    }
    const absl::Duration offset =
        absl::Microseconds(std::llround((row->timestamp_ms - *first) * 1000));
    row->request.label = absl::StrCat(base, ":", line.number);
    if (!internal::AddMappedRow(mapping, mapper, offset, std::move(row->request), w)) break;
  }
  return w;
}

absl::StatusOr<Workload> LoadMooncakeTrace(const std::string& path, const TraceMapping& mapping,
                                           int32_t block_tokens) {
  HEARTH_ASSIGN_OR_RETURN(std::string text, internal::ReadFileToString(path));
  return ParseMooncakeTrace(text, path, mapping, block_tokens);
}

}  // namespace hearth
