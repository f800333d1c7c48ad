// File: hearth/sim/workload.h
//
// A `Workload` is the list of requests a simulation replays, whatever produced
// it (a trace reader or a generator). Each request names its user and work
// class by index into the simulation's registries, its prompt length, and its
// hidden true output length, which only the SimulatedExecutor sees.
//
// Dependent calls (agent chains, chat turns) name a `parent`: they arrive
// `think_time` after the parent ends, so their arrival time depends on how
// fast the simulated system served the parent. A call may share the first
// `shared_prefix_tokens` of its prompt with its parent's prompt followed by
// the parent's answer (a chat resending its history); the simulator then
// gives both the same token ids (the SimulatedExecutor samples token 0, so
// the answer part is zeros) and the scheduler's prefix cache can reuse the
// KV.
//
// Traces that publish prefix hashes instead (Mooncake's `hash_ids`, the
// generic JSONL's `prefix_hashes`) give `prefix_hashes`: the prompt's first
// blocks of `prefix_hash_tokens` tokens each, named by hash. The simulator
// derives a block's token ids from its hash alone, so equal hashes give equal
// tokens in any request and the prefix cache finds them. Those blocks are
// cached in a scope all members share (SimRequest::cache_scope); everything
// else in a member's own, as hearth::Scheduler does by default.
//
// Example:
//   hearth::Workload w;
//   w.requests.push_back({.arrival = absl::Seconds(1), .user = 0,
//                         .work_class = 0, .prompt_tokens = 300,
//                         .output_tokens = 40});

#ifndef HEARTH_SIM_WORKLOAD_H_
#define HEARTH_SIM_WORKLOAD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hearth/request/request_spec.h"

namespace hearth {

struct SimRequest {
  // Since the start of the simulation; ignored when `parent` >= 0.
  absl::Duration arrival = absl::ZeroDuration();
  uint32_t user = 0;
  uint32_t work_class = 0;
  int32_t prompt_tokens = 0;
  // Hidden true output length (the stop token comes after this many).
  int32_t output_tokens = 0;
  // Upper bound the scheduler sees; 0 means the simulation's default.
  int32_t max_new_tokens = 0;
  // An embedding (RequestKind::kEmbed) is submitted with max_new_tokens 0
  // and its pooling; output_tokens and max_new_tokens are not read for it.
  // The cost models price it by its prefill chunks, as any prefill.
  RequestKind kind = RequestKind::kGenerate;
  Pooling pooling = Pooling::kLast;
  // A photo's (or any encoder's) positions in the prompt, submitted as
  // RequestSpec::encoder_spans; the cost models price their encoding
  // (StepWork::encoder_tokens) where the scheduler plans it.
  std::vector<EncoderSpan> encoder_spans;
  // Index of an earlier request this one waits for, or -1.
  int32_t parent = -1;
  // Delay after the parent ends (only with a parent).
  absl::Duration think_time = absl::ZeroDuration();
  // Leading prompt tokens equal to the parent's prompt then answer (only
  // with a parent); at most this prompt and the parent's prompt + output.
  int32_t shared_prefix_tokens = 0;
  // Hashes of the prompt's leading blocks, each of prefix_hash_tokens
  // tokens (the last block may be cut short by prompt_tokens; hashes past
  // the prompt are ignored). Tokens after the hashed blocks are the
  // request's own.
  std::vector<uint64_t> prefix_hashes;
  int32_t prefix_hash_tokens = 0;
  // The request's prefix-cache scope (RequestSpec::cache_scope). Unset: its
  // member's own, except that hashed blocks of a request without a parent
  // prefix are in the shared scope "trace" (kTraceCacheScope): a trace's
  // equal block hashes say that its service shared those blocks across its
  // users (a common system prompt or document), so the replay shares them
  // across members too.
  std::optional<CacheScope> cache_scope;
  // Where the request came from, e.g. "conv.csv:17" (kept short: it is
  // copied into every result).
  std::string label;
};

// The shared scope of traces' hashed blocks (SimRequest::cache_scope).
inline constexpr const char* kTraceCacheScope = "trace";

// The scope a simulation submits `r` with (SimRequest::cache_scope).
CacheScope SimCacheScope(const SimRequest& r);

struct Workload {
  std::vector<SimRequest> requests;
};

// Default cap on the requests a generator may produce (household, ServeGen,
// floods). A request costs a few hundred bytes across the workload and the
// simulation's records, so the default keeps a run within a few GB; rates
// or durations that would go past it fail with ResourceExhausted up front.
inline constexpr int64_t kDefaultRequestCap = 4'000'000;

// Checks indices and lengths: users < num_users, classes < num_classes,
// positive lengths, parents earlier in the list, shared prefixes within both
// prompts, prefix_hash_tokens >= 1 with prefix hashes. InvalidArgument names the first bad request (index and label).
absl::Status ValidateWorkload(const Workload& workload, uint32_t num_users,
                              uint32_t num_classes);

}  // namespace hearth

#endif  // HEARTH_SIM_WORKLOAD_H_
