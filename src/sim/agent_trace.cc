#include "hearth/sim/agent_trace.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "internal/status_macros.h"
#include "sim/json_fields.h"
#include "sim/quote.h"
#include "sim/trace_lines.h"
#include "sim/toml_util.h"

namespace hearth {

using internal::RowError;

namespace {

using Json = nlohmann::json;

struct RawCall {
  int64_t ts = 0;
  std::string input;
  size_t output_bytes = 0;
  int64_t line = 0;
};

// Latest call time accepted, in microseconds since the epoch (about the
// year 5100): converts to int64 exactly, and differences between calls stay
// far from overflow.
constexpr double kMaxTimestampUs = 1e17;

// Most tokens one prompt or output is estimated at: as many as any trace
// reader accepts (2^30). Such a call exceeds every model's context, so the
// simulator refuses it at submission and counts it; a tiny bytes_per_token
// would otherwise overflow the int32 cast.
constexpr double kMaxTokens = 1 << 30;

// Whole tokens in `bytes`, in [0, kMaxTokens].
int32_t WholeTokens(size_t bytes, double bytes_per_token) {
  return static_cast<int32_t>(
      std::min(kMaxTokens, std::floor(static_cast<double>(bytes) / bytes_per_token)));
}

// A length: at least one token.
int32_t Tokens(size_t bytes, double bytes_per_token) {
  return std::max<int32_t>(1, WholeTokens(bytes, bytes_per_token));
}

// One flat JSON object and nothing after it but blanks.
absl::StatusOr<Json> ParseFlatObject(absl::string_view line) {
  HEARTH_ASSIGN_OR_RETURN(Json object, internal::ParseJsonObjectLine(line));
  for (const auto& [key, value] : object.items()) {
    if (value.is_structured()) {
      return absl::InvalidArgumentError(
          absl::StrCat("JSON: nested value for key ", internal::Quote(key)));
    }
  }
  return object;
}

// The call on line `n`: `timestamp` a number >= 0, `input` and `output`
// strings; other keys are ignored.
absl::StatusOr<RawCall> ParseCall(absl::string_view line, const std::string& name,
                                  int64_t n) {
  absl::StatusOr<Json> object = ParseFlatObject(line);
  if (!object.ok()) return RowError(name, n, object.status().message());
  const auto ts = object->find("timestamp");
  const auto in = object->find("input");
  const auto out = object->find("output");
  const auto absent = object->end();
  if (ts != absent && !(ts->is_number() && ts->get<double>() >= 0 &&
                        ts->get<double>() <= kMaxTimestampUs)) {
    return RowError(name, n, absl::StrCat("timestamp ", internal::Quote(ts->dump()),
                                          " must be a number of microseconds in [0, ",
                                          kMaxTimestampUs, "]"));
  }
  if (in != absent && !in->is_string()) return RowError(name, n, "input must be a string");
  if (out != absent && !out->is_string()) {
    return RowError(name, n, "output must be a string");
  }
  if (ts == absent || in == absent || out == absent) {
    return RowError(name, n, "needs timestamp, input and output");
  }
  RawCall c;
  c.ts = static_cast<int64_t>(ts->get<double>());
  c.input = std::move(in->get_ref<std::string&>());
  c.output_bytes = out->get_ref<const std::string&>().size();
  c.line = n;
  return c;
}

// Calls in time order, with lengths in tokens and the prompt prefix each
// shares with the call before it.
std::vector<AgentCall> ToCalls(std::vector<RawCall> raw, double bytes_per_token) {
  std::stable_sort(raw.begin(), raw.end(),
                   [](const RawCall& a, const RawCall& b) { return a.ts < b.ts; });
  std::vector<AgentCall> calls;
  for (size_t i = 0; i < raw.size(); ++i) {
    AgentCall c;
    c.timestamp_us = raw[i].ts;
    c.line = raw[i].line;
    c.prompt_tokens = Tokens(raw[i].input.size(), bytes_per_token);
    c.output_tokens = Tokens(raw[i].output_bytes, bytes_per_token);
    if (i > 0) {
      const std::string& a = raw[i - 1].input;
      const std::string& b = raw[i].input;
      const size_t common =
          std::mismatch(a.begin(), a.begin() + std::min(a.size(), b.size()),
                        b.begin())
              .first -
          a.begin();
      c.shared_prefix_tokens = std::min(
          {WholeTokens(common, bytes_per_token), c.prompt_tokens, calls.back().prompt_tokens});
    }
    calls.push_back(c);
  }
  return calls;
}

}  // namespace

absl::StatusOr<std::vector<AgentCall>> ParseAgentSession(
    std::string_view text, const std::string& name, double bytes_per_token) {
  if (!(bytes_per_token > 0)) {
    return absl::InvalidArgumentError("agent trace: bytes_per_token must be > 0");
  }
  std::vector<RawCall> raw;
  for (const internal::TraceLine& line : internal::SplitTraceLines(text)) {
    if (line.text.empty()) continue;
    HEARTH_ASSIGN_OR_RETURN(RawCall call, ParseCall(line.text, name, line.number));
    raw.push_back(std::move(call));
  }
  return ToCalls(std::move(raw), bytes_per_token);
}

absl::StatusOr<std::vector<std::string>> ListJsonlFiles(
    const std::string& directory) {
  std::error_code ec;
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(directory, ec)) {
    if (e.path().extension() == ".jsonl") out.push_back(e.path().string());
  }
  if (ec) {
    return absl::NotFoundError(
        absl::StrCat("cannot list ", internal::Quote(directory), ": ", ec.message()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

absl::Status ValidateAgentOptions(const AgentTraceOptions& o) {
  if (o.users.empty()) {
    return absl::InvalidArgumentError("agent trace: users must not be empty");
  }
  if (!(o.think_scale >= 0) || o.max_think < absl::ZeroDuration() ||
      o.max_prompt_tokens < 0) {
    return absl::InvalidArgumentError(
        "agent trace: think_scale, max_think and max_prompt_tokens must be >= 0");
  }
  return absl::OkStatus();
}

// Sessions already parsed and each non-empty, with their labels' names,
// as chains of dependent calls.
Workload ChainSessions(const std::vector<std::vector<AgentCall>>& sessions,
                       const std::vector<std::string>& names, const AgentTraceOptions& o) {
  int64_t earliest = INT64_MAX;
  for (const auto& s : sessions) earliest = std::min(earliest, s[0].timestamp_us);
  Workload w;
  for (size_t s = 0; s < sessions.size(); ++s) {
    const std::vector<AgentCall>& calls = sessions[s];
    const absl::Duration start =
        o.session_spacing > absl::ZeroDuration()
            ? o.session_spacing * static_cast<int64_t>(s)
            : absl::Microseconds(calls[0].timestamp_us - earliest);
    for (size_t k = 0; k < calls.size(); ++k) {
      SimRequest r;
      r.user = o.users[s % o.users.size()];
      r.work_class = o.work_class;
      r.prompt_tokens = calls[k].prompt_tokens;
      if (o.max_prompt_tokens > 0) {
        r.prompt_tokens = std::min(r.prompt_tokens, o.max_prompt_tokens);
      }
      r.output_tokens = calls[k].output_tokens;
      r.label = absl::StrCat(names[s], ":", calls[k].line);
      if (k == 0) {
        r.arrival = start;
      } else {
        r.parent = static_cast<int32_t>(w.requests.size() - 1);
        const absl::Duration gap =
            absl::Microseconds(calls[k].timestamp_us - calls[k - 1].timestamp_us);
        r.think_time = std::min(gap * o.think_scale, o.max_think);
        r.shared_prefix_tokens =
            std::min({calls[k].shared_prefix_tokens, r.prompt_tokens,
                      w.requests[r.parent].prompt_tokens});
      }
      w.requests.push_back(std::move(r));
    }
  }
  return w;
}

// The label's name of a session file: its base name's first 8 characters.
std::string SessionLabel(const std::string& file) {
  const size_t slash = file.find_last_of('/');
  return file.substr(slash == std::string::npos ? 0 : slash + 1, 8);
}

bool SessionLimitReached(const AgentTraceOptions& o, size_t sessions) {
  return o.max_sessions > 0 && static_cast<int64_t>(sessions) >= o.max_sessions;
}

}  // namespace

absl::StatusOr<Workload> LoadAgentTraces(const AgentTraceOptions& o) {
  HEARTH_RETURN_IF_ERROR(ValidateAgentOptions(o));
  // One file in memory at a time: only the parsed calls are kept.
  std::vector<std::vector<AgentCall>> sessions;
  std::vector<std::string> names;
  for (const std::string& file : o.files) {
    if (SessionLimitReached(o, sessions.size())) break;
    HEARTH_ASSIGN_OR_RETURN(std::string text, internal::ReadFileToString(file));
    HEARTH_ASSIGN_OR_RETURN(std::vector<AgentCall> calls,
                            ParseAgentSession(text, file, o.bytes_per_token));
    if (calls.empty()) continue;
    sessions.push_back(std::move(calls));
    names.push_back(SessionLabel(file));
  }
  return ChainSessions(sessions, names, o);
}

absl::StatusOr<Workload> ParseAgentTraces(const std::vector<AgentSessionText>& texts,
                                          const AgentTraceOptions& o) {
  HEARTH_RETURN_IF_ERROR(ValidateAgentOptions(o));
  std::vector<std::vector<AgentCall>> sessions;
  std::vector<std::string> names;
  for (const AgentSessionText& t : texts) {
    if (SessionLimitReached(o, sessions.size())) break;
    HEARTH_ASSIGN_OR_RETURN(std::vector<AgentCall> calls,
                            ParseAgentSession(t.text, t.name, o.bytes_per_token));
    if (calls.empty()) continue;
    sessions.push_back(std::move(calls));
    names.push_back(SessionLabel(t.name));
  }
  return ChainSessions(sessions, names, o);
}

}  // namespace hearth
