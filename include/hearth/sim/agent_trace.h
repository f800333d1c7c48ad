// File: hearth/sim/agent_trace.h
//
// Reader for the LMCache agent traces (../shared/traces/lmcache_agent,
// Apache-2.0): one JSONL file per agent session, one LLM call per line with
// `timestamp` (Unix microseconds), `input` (the full prompt text), `output`
// (the completion) and `session_id`. Lines are not always in time order, so
// each session is sorted by timestamp first.
//
// A session becomes a chain of dependent calls: call k+1 is issued
// `think_scale` x (its recorded gap after call k) after call k *ends in the
// simulation* (capped at max_think). The recorded gap also contains the
// original call's own latency, so replay is paced conservatively (slower).
// Lengths are estimated from UTF-8 bytes / bytes_per_token (there are no
// token counts in the traces); the prompt prefix call k+1 shares with call k
// (usually the whole previous conversation) is the common byte prefix, so the
// scheduler's prefix cache can reuse it.
//
// Malformed lines are errors naming the file and line.
//
// Example:
//   hearth::AgentTraceOptions o;
//   o.files = hearth::ListJsonlFiles("traces/lmcache_agent/miniswe").value();
//   o.users = {3};  o.work_class = 2;   // "agent" in HouseholdWorkClasses()
//   absl::StatusOr<hearth::Workload> w = hearth::LoadAgentTraces(o);

#ifndef HEARTH_SIM_AGENT_TRACE_H_
#define HEARTH_SIM_AGENT_TRACE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hearth/sim/workload.h"

namespace hearth {

struct AgentCall {
  int64_t timestamp_us = 0;
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;
  // Tokens of this prompt shared with the previous call's prompt (after
  // sorting); 0 for the first call.
  int32_t shared_prefix_tokens = 0;
  int64_t line = 0;
};

// One session file's calls, sorted by time. `bytes_per_token` > 0.
absl::StatusOr<std::vector<AgentCall>> ParseAgentSession(
    std::string_view text, const std::string& name, double bytes_per_token);

struct AgentTraceOptions {
  // Session files, replayed in this order.
  std::vector<std::string> files;
  // Sessions go round robin to these users. Non-empty.
  std::vector<uint32_t> users = {0};
  uint32_t work_class = 0;
  double bytes_per_token = 4.0;
  double think_scale = 1.0;
  absl::Duration max_think = absl::Seconds(120);
  // When > 0, session i starts at i * session_spacing; otherwise sessions
  // keep their recorded start times relative to the earliest.
  absl::Duration session_spacing = absl::ZeroDuration();
  // Prompts longer than this are cut to it (0: no cut), so sessions fit a
  // small model's context.
  int32_t max_prompt_tokens = 0;
  int64_t max_sessions = 0;
};

absl::StatusOr<Workload> LoadAgentTraces(const AgentTraceOptions& options);

// A session file's content already in memory; `name` stands for the file in
// errors and labels.
struct AgentSessionText {
  std::string name;
  std::string_view text;
};

// LoadAgentTraces over sessions in memory, in this order (options.files is
// not read).
absl::StatusOr<Workload> ParseAgentTraces(const std::vector<AgentSessionText>& sessions,
                                          const AgentTraceOptions& options);

// The *.jsonl files of `directory`, sorted by name.
absl::StatusOr<std::vector<std::string>> ListJsonlFiles(const std::string& directory);

}  // namespace hearth

#endif  // HEARTH_SIM_AGENT_TRACE_H_
