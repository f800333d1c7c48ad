// File: hearth/sim/request_jsonl.h
//
// Hearth's own request trace: JSONL, one request per line, for traces that
// fit none of the public formats (an engine's log, a converted trace):
//
//   {"id": "s1.0", "user": "alice", "class": "chat", "arrival_s": 12.5,
//    "prompt_tokens": 812, "output_tokens": 64}
//   {"id": "s1.1", "user": "alice", "class": "chat", "parent": "s1.0",
//    "think_s": 4.0, "prompt_tokens": 1020, "output_tokens": 80,
//    "shared_prefix_tokens": 876, "prefix_hashes": [7, 8]}
//
// Keys (others are ignored, so a converter may keep its own):
//   prompt_tokens, output_tokens  required, integers in [1, 2^30]; output is
//                                 the hidden true length
//   arrival_s                     seconds since the start, in [0, 1e9];
//                                 required unless `parent` is given
//   user, class                   names from the scenario; absent: the
//                                 defaults in RequestJsonlOptions
//   id                            a string naming this request for `parent`
//                                 (unique in the file)
//   parent                        the id of an earlier line: this call is
//                                 issued think_s after that one ends
//   think_s                       in [0, 1e9], only with a parent (0)
//   shared_prefix_tokens          leading tokens equal to the parent's
//                                 prompt then answer, only with a parent
//   max_new_tokens                the bound the scheduler sees (0: default)
//   prefix_hashes                 integers in [0, 2^64): hashes of the
//                                 prompt's leading blocks of
//                                 hash_block_tokens tokens; equal hashes mean
//                                 equal tokens (see workload.h)
//   cache_scope, cache_shared_scope  names (RequestSpec::cache_scope's
//   cache_shared_prefix_tokens       name, shared_prefix_scope and
//   cache_opt_out                    shared_prefix_tokens; opt_out, a bool):
//                                 any of them sets the request's scope;
//                                 none: SimRequest::cache_scope's default
// Errors name the file, line and key ("req.jsonl:3: user 'zoe' ...").
//
// Example:
//   hearth::RequestJsonlOptions o;
//   o.user_names = {"alice", "bob"};  o.class_names = {"chat", "agent"};
//   absl::StatusOr<hearth::Workload> w = hearth::LoadRequestJsonl("req.jsonl", o);

#ifndef HEARTH_SIM_REQUEST_JSONL_H_
#define HEARTH_SIM_REQUEST_JSONL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hearth/sim/workload.h"

namespace hearth {

struct RequestJsonlOptions {
  // Names `user` and `class` are looked up in (index = position). Non-empty.
  std::vector<std::string> user_names = {"user"};
  std::vector<std::string> class_names = {"default"};
  // Indices used when a line has no `user` or `class`.
  uint32_t default_user = 0;
  uint32_t default_class = 0;
  // Tokens per prefix hash, in [1, 2^20].
  int32_t hash_block_tokens = 16;
  // Stop after this many lines (0: no limit).
  int64_t max_requests = 0;
};

// `name` stands for the file in errors and labels.
absl::StatusOr<Workload> ParseRequestJsonl(std::string_view text, const std::string& name,
                                           const RequestJsonlOptions& options);
absl::StatusOr<Workload> LoadRequestJsonl(const std::string& path,
                                          const RequestJsonlOptions& options);

}  // namespace hearth

#endif  // HEARTH_SIM_REQUEST_JSONL_H_
