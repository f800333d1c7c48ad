#include "scheduler/workflow_table.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace hearth::internal {

std::string ForeignParentReason(RequestId parent, const std::string& user) {
  return absl::StrCat("request ", parent.ToString(), " is not one of user \"", user,
                      "\"'s requests; a workflow's calls must all belong to one user");
}

WorkflowTable::WorkflowTable(absl::Duration retention, size_t capacity) : retention_(retention) {
  if (retention_ <= absl::ZeroDuration()) return;
  ring_.resize(capacity);
  ended_.reserve(capacity);
}

void WorkflowTable::Remember(RequestId id, const WorkflowInfo& info,
                             absl::Time now) {
  if (retention_ <= absl::ZeroDuration()) return;
  if (count_ == ring_.size()) ForgetOldest();
  ring_[(head_ + count_) % ring_.size()] = Ended{now + retention_, id};
  ++count_;
  ended_.insert_or_assign(id, info);
}

const WorkflowInfo* WorkflowTable::FindEnded(RequestId id) const {
  return ended_.find(id);
}

void WorkflowTable::Expire(absl::Time now) {
  while (count_ > 0 && ring_[head_].forget_at < now) ForgetOldest();
}

void WorkflowTable::ForgetOldest() {
  ended_.erase(ring_[head_].id);
  head_ = (head_ + 1) % ring_.size();
  --count_;
}

}  // namespace hearth::internal
