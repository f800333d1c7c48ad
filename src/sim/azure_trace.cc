#include "hearth/sim/azure_trace.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "internal/status_macros.h"
#include "sim/text_lines.h"
#include "sim/toml_util.h"

namespace hearth {

using internal::RowError;

absl::StatusOr<Workload> ParseAzureTrace(std::string_view text,
                                         const std::string& name,
                                         const TraceMapping& mapping) {
  HEARTH_RETURN_IF_ERROR(ValidateTraceMapping(mapping));
  TraceRowMapper mapper(mapping);
  internal::LineReader lines(text);
  std::string_view line;
  if (!lines.Next(&line) || line != "TIMESTAMP,ContextTokens,GeneratedTokens") {
    return RowError(name, 1,
                    "expected the header TIMESTAMP,ContextTokens,GeneratedTokens");
  }
  // Base name for labels ("conv.csv:17" rather than a long path).
  const size_t slash = name.find_last_of('/');
  const std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  Workload w;
  std::optional<int64_t> first;
  while (lines.Next(&line)) {
    if (line.empty()) continue;
    const int64_t n = lines.line_no();
    const std::vector<std::string_view> f = internal::SplitFields(line, ',');
    if (f.size() != 3) {
      return RowError(name, n, absl::StrCat("expected 3 fields, found ", f.size()));
    }
    const std::optional<int64_t> t = internal::ParseDateTimeNanos(f[0]);
    if (!t) {
      return RowError(name, n, absl::StrCat("TIMESTAMP '", std::string(f[0]),
                                            "' is not YYYY-MM-DD HH:MM:SS.fff"));
    }
    const std::optional<int64_t> prompt = internal::ParseInt(f[1]);
    if (!prompt || *prompt < 1 || *prompt > (int64_t{1} << 30)) {
      return RowError(name, n, absl::StrCat("ContextTokens '", std::string(f[1]),
                                            "' must be an integer >= 1"));
    }
    const std::optional<int64_t> output = internal::ParseInt(f[2]);
    if (!output || *output < 1 || *output > (int64_t{1} << 30)) {
      return RowError(name, n, absl::StrCat("GeneratedTokens '", std::string(f[2]),
                                            "' must be an integer >= 1"));
    }
    if (!first) first = *t;
    if (*t < *first) {
      return RowError(name, n, "TIMESTAMP is earlier than the first row's");
    }
    const absl::Duration offset = absl::Nanoseconds(*t - *first);
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
