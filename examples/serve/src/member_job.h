// File: examples/serve/src/member_job.h
//
// The one path by which a call's CPU work that grows with its body --
// templating and tokenising a prompt, /tokenize, /detokenize -- runs: in
// one of the caller's member turns (member_turns.h: a member's flood waits
// behind itself, never in front of another member), on the interactive job
// queue (first in line, never given back), so the HTTP thread only waits.
// Without a job pool (unit tests) the work runs inline.
//
// The turn is moved into the job, not kept by the caller: a job that
// outlives its caller's wait (job_call.h) keeps holding it, so the bound
// holds for the work itself.
//
// Thread-safety: any thread.
//
// Example:
//   absl::StatusOr<MemberTurns::Turn> turn = TakeMemberTurn(ctx, caller.user);
//   if (!turn.ok()) return turn.status();
//   absl::StatusOr<int> n = CallInMemberTurn<int>(ctx, *std::move(turn), "count",
//       [text = std::string(body)]() -> absl::StatusOr<int> { return text.size(); });

#ifndef HEARTH_SERVE_MEMBER_JOB_H_
#define HEARTH_SERVE_MEMBER_JOB_H_

#include <functional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "job_call.h"
#include "member_turns.h"
#include "serve_context.h"
#include "serve_job_queues.h"

namespace hearth::serve {

// A turn of `user` among ctx.generation_turns, waiting at most
// ctx.limits.interactive_job_timeout (DeadlineExceeded after: 504). An
// empty Turn when the server bounds nothing (unit tests) or the key belongs
// to no member (it makes no calls; the caller's own check refuses it).
absl::StatusOr<MemberTurns::Turn> TakeMemberTurn(const ServeContext& ctx, UserId user);

// Runs `fn` on the interactive queue holding `turn` until it returns.
// `fn` must capture by value (job_call.h). `label` names the job on the
// job queues' status.
template <typename T>
absl::StatusOr<T> CallInMemberTurn(const ServeContext& ctx, MemberTurns::Turn turn,
                                   std::string label, std::function<absl::StatusOr<T>()> fn) {
  if (ctx.jobs == nullptr) return fn();
  JobSpec spec;
  spec.queue = kInteractiveQueue;
  spec.queue_timeout = ctx.limits.interactive_job_timeout;
  spec.label = std::move(label);
  return CallOnQueue<T>(*ctx.jobs, spec,
                        [turn = std::move(turn), fn = std::move(fn)](const JobContext&) {
                          return fn();
                        });
}

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_MEMBER_JOB_H_
