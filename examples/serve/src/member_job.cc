#include "member_job.h"

#include "absl/time/clock.h"

namespace hearth::serve {

absl::StatusOr<MemberTurns::Turn> TakeMemberTurn(const ServeContext& ctx, UserId user) {
  if (ctx.generation_turns == nullptr || !user.valid()) return MemberTurns::Turn();
  return ctx.generation_turns->Acquire(user, absl::Now() + ctx.limits.interactive_job_timeout);
}

}  // namespace hearth::serve
