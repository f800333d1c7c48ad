// Unit tests of the one path a call's CPU work takes (member_job.h): the
// member's turn is held while the work runs, on the interactive queue of a
// real JobPool or inline without one, and released when it returns; the
// member's next call waits for it, another member's does not.

#ifdef HEARTH_SERVE_FOUND

#include <cstdint>
#include <memory>

#include <catch2/catch.hpp>

#include "absl/time/clock.h"
#include "member_job.h"
#include "serve_job_queues.h"

namespace hearth::serve {
namespace {

const UserId kAna(0);
const UserId kBen(1);

TEST_CASE("member job: the turn is held while the work runs, then released",
          "[serve][threads]") {
  MemberTurns turns(/*members=*/2, /*per_member=*/1);
  auto pool = JobPool::Create(ServeJobQueues(2, 8));
  REQUIRE(pool.ok());
  for (JobPool* jobs : {static_cast<JobPool*>(nullptr), pool->get()}) {
    INFO("with a job pool: " << (jobs != nullptr));
    ServeContext ctx;
    ctx.jobs = jobs;
    ctx.generation_turns = &turns;
    // Only the refusals below wait this long.
    ctx.limits.interactive_job_timeout = absl::Milliseconds(20);
    absl::StatusOr<MemberTurns::Turn> turn = TakeMemberTurn(ctx, kAna);
    REQUIRE(turn.ok());
    const uint64_t submitted = jobs != nullptr ? jobs->Stats().queues[0].submitted : 0;
    absl::StatusOr<int> seen = CallInMemberTurn<int>(
        ctx, *std::move(turn), "test", [&turns]() -> absl::StatusOr<int> {
          // Ana's one turn is taken, so her next call would wait; Ben's is free.
          return turns.held(kAna) * 10 + turns.held(kBen);
        });
    REQUIRE(seen.ok());
    CHECK(*seen == 10);
    if (jobs != nullptr) CHECK(jobs->Stats().queues[0].submitted == submitted + 1);
    // The pool may drop the job (and the turn in it) just after its caller
    // woke: the next turn comes once it has, not necessarily at once.
    absl::StatusOr<MemberTurns::Turn> held = turns.Acquire(kAna, absl::Now() + absl::Seconds(30));
    REQUIRE(held.ok());
    CHECK(TakeMemberTurn(ctx, kAna).status().code() == absl::StatusCode::kDeadlineExceeded);
    CHECK(TakeMemberTurn(ctx, kBen).ok());
  }
}

TEST_CASE("member job: no turns to take without a bound or a member", "[serve]") {
  ServeContext ctx;
  CHECK(TakeMemberTurn(ctx, kAna).ok());
  MemberTurns turns(1, 1);
  ctx.generation_turns = &turns;
  CHECK(TakeMemberTurn(ctx, UserId()).ok());
  CHECK(turns.held(kAna) == 0);
}

}  // namespace
}  // namespace hearth::serve

#endif  // HEARTH_SERVE_FOUND
