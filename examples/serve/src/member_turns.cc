#include "member_turns.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace hearth::serve {

struct MemberTurns::Turn::Held {
  MemberTurns* owner;
  size_t member;
  ~Held() { owner->Release(member); }
};

MemberTurns::MemberTurns(size_t members, int per_member)
    : per_member_(std::max(1, per_member)), members_(members) {}

absl::StatusOr<MemberTurns::Turn> MemberTurns::Acquire(UserId member, absl::Time deadline) {
  const size_t m = member.value();
  absl::MutexLock lock(&mu_);
  if (m >= members_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("member ", m, " is not one of the ",
                                                   members_.size(), " of this household"));
  }
  Member& state = members_[m];
  if (state.waiting.empty() && state.held < per_member_) {
    ++state.held;
  } else {
    Waiter self;
    state.waiting.push_back(&self);
    const absl::Time since = absl::Now();
    if (!mu_.AwaitWithDeadline(absl::Condition(&self.granted), deadline)) {
      // Still in line (a grant removes the waiter before setting it).
      state.waiting.erase(std::find(state.waiting.begin(), state.waiting.end(), &self));
      return absl::DeadlineExceededError(absl::StrCat(
          "this member's earlier calls were still being prepared after ",
          absl::FormatDuration(absl::Now() - since), " (at most ", per_member_,
          " of one member's calls are parsed and tokenized at once); send fewer at a time"));
    }
  }
  return Turn(std::shared_ptr<Turn::Held>(new Turn::Held{this, m}));
}

void MemberTurns::Release(size_t member) {
  absl::MutexLock lock(&mu_);
  Member& state = members_[member];
  --state.held;
  while (state.held < per_member_ && !state.waiting.empty()) {
    state.waiting.front()->granted = true;
    state.waiting.pop_front();
    ++state.held;
  }
}

int MemberTurns::held(UserId member) const {
  absl::MutexLock lock(&mu_);
  return member.value() < members_.size() ? members_[member.value()].held : 0;
}

int MemberTurns::waiting(UserId member) const {
  absl::MutexLock lock(&mu_);
  return member.value() < members_.size()
             ? static_cast<int>(members_[member.value()].waiting.size())
             : 0;
}

}  // namespace hearth::serve
