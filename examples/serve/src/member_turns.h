// File: examples/serve/src/member_turns.h
//
// `MemberTurns` bounds each member's CPU work before the GPU: at most
// `per_member` calls of one member are being prepared at once (the body
// parsed, the chat templated, the prompt tokenized on the interactive job
// queue); that member's other calls wait, in arrival order, for one of its
// own turns to end. So one member's flood of large prompts queues behind
// itself, holds at most `per_member` cores and job-queue places, and
// another member's one-line chat finds its own turn free: it waits for
// nobody else's megabytes. A turn is a place in line, not a core; the job
// queues' limits still decide when the work runs.
//
// A turn ends when the last copy of its handle goes. A job that keeps
// running after its caller gave up (job_call.h) holds a copy, so the bound
// holds for the work itself, not only for the callers waiting on it.
//
// Thread-safety: any thread. Waiting costs no CPU.
//
// Example:
//   MemberTurns turns(/*members=*/3, /*per_member=*/1);
//   absl::StatusOr<MemberTurns::Turn> turn =
//       turns.Acquire(user, absl::Now() + absl::Seconds(30));
//   if (!turn.ok()) return turn.status();  // DeadlineExceeded: 504
//   ... parse, template, tokenize; the turn ends with `turn`.

#ifndef HEARTH_SERVE_MEMBER_TURNS_H_
#define HEARTH_SERVE_MEMBER_TURNS_H_

#include <cstddef>
#include <deque>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "hearth/common/ids.h"

namespace hearth::serve {

class MemberTurns {
 public:
  // Holds one turn of one member while it lives; copies share it. A
  // default-constructed Turn holds nothing.
  class Turn {
   public:
    Turn() = default;

   private:
    friend class MemberTurns;
    struct Held;
    explicit Turn(std::shared_ptr<Held> held) : held_(std::move(held)) {}
    std::shared_ptr<Held> held_;
  };

  // Members are UserId 0 .. members - 1. `per_member` is clamped to >= 1.
  MemberTurns(size_t members, int per_member);
  // REQUIRES: no Turn outlives this object.
  ~MemberTurns() = default;
  MemberTurns(const MemberTurns&) = delete;
  MemberTurns& operator=(const MemberTurns&) = delete;

  // MemberTurns::Acquire()
  //
  // A turn of `member`, once fewer than per_member of its turns are held
  // and its calls that came earlier have theirs. DeadlineExceeded when
  // `deadline` passes first (the call is then no longer in line);
  // InvalidArgument for a member out of range.
  absl::StatusOr<Turn> Acquire(UserId member, absl::Time deadline);

  int per_member() const { return per_member_; }
  // Turns of `member` held now, and its calls waiting for one (0 for a
  // member out of range).
  int held(UserId member) const;
  int waiting(UserId member) const;

 private:
  struct Waiter {
    bool granted = false;
  };
  struct Member {
    int held = 0;
    // Oldest first; each lives on its caller's stack while it waits.
    std::deque<Waiter*> waiting;
  };
  void Release(size_t member);

  const int per_member_;
  mutable absl::Mutex mu_;
  std::vector<Member> members_ ABSL_GUARDED_BY(mu_);
};

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_MEMBER_TURNS_H_
