#include "scheduler/submission_queues.h"

#include <algorithm>
#include <utility>

namespace hearth::internal {
namespace {

// Tells the core it is spinning: cheaper for a sibling hyperthread, and a
// gentler retry on the lock's cache line.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// About 10-20 us of tries: a running holder's critical section is a push or
// a pop (under a microsecond); a holder that is still busy after this has
// been switched out, and waiting for it could take a whole OS tick.
constexpr int kBriefTries = 256;

}  // namespace

bool TryLockBriefly(std::mutex& mu) {
  for (int i = 0; i < kBriefTries; ++i) {
    if (mu.try_lock()) return true;
    CpuRelax();
  }
  return false;
}

SubmissionQueues::SubmissionQueues(size_t num_users)
    : users_(std::make_unique<UserQueue[]>(num_users)) {
  // Neither list ever needs more than one entry per user: no allocation
  // under ready_mu_, which the engine tries.
  ready_.reserve(num_users);
  turns_.reserve(num_users);
  arrivals_.reserve(num_users);
}

void SubmissionQueues::Push(uint32_t user, Submission sub) {
  UserQueue& q = users_[user];
  bool newly_ready = false;
  {
    std::lock_guard<std::mutex> lock(q.mu);
    q.queue.push_back(std::move(sub));
    newly_ready = !q.listed;
    q.listed = true;
  }
  size_.fetch_add(1, std::memory_order_relaxed);
  if (newly_ready) {
    std::lock_guard<std::mutex> lock(ready_mu_);
    ready_.push_back(user);
  }
}

void SubmissionQueues::AdmitReadyUsers() {
  if (!TryLockBriefly(ready_mu_)) return;  // They join at the next Plan.
  {
    std::lock_guard<std::mutex> lock(ready_mu_, std::adopt_lock);
    arrivals_.swap(ready_);
  }
  turns_.insert(turns_.end(), arrivals_.begin(), arrivals_.end());
  arrivals_.clear();
}

bool SubmissionQueues::TakeFrom(uint32_t user, int32_t n, std::vector<Submission>* out,
                                int32_t* taken, bool* emptied) {
  UserQueue& q = users_[user];
  *taken = 0;
  *emptied = false;
  if (!TryLockBriefly(q.mu)) return false;
  std::lock_guard<std::mutex> lock(q.mu, std::adopt_lock);
  while (*taken < n && !q.queue.empty()) {
    out->push_back(std::move(q.queue.front()));
    q.queue.pop_front();
    ++*taken;
  }
  if (q.queue.empty()) {
    q.listed = false;
    *emptied = true;
  }
  size_.fetch_sub(*taken, std::memory_order_relaxed);
  return true;
}

void SubmissionQueues::TakeTurns(int32_t budget, std::vector<Submission>* out) {
  AdmitReadyUsers();
  while (budget > 0 && !turns_.empty()) {
    // An even share per lock hold rather than one submission per turn: the
    // engine sorts the batch by arrival anyway, so what turns decide is only
    // how much of the budget each user gets.
    const int32_t share = std::max<int32_t>(1, budget / static_cast<int32_t>(turns_.size()));
    bool progress = false;
    size_t i = 0;
    while (i < turns_.size() && budget > 0) {
      int32_t taken = 0;
      bool emptied = false;
      if (TakeFrom(turns_[i], std::min(share, budget), out, &taken, &emptied)) {
        budget -= taken;
        progress = progress || taken > 0;
      }
      if (emptied) {
        turns_.erase(turns_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    // The budget ran out mid-round: the next Plan starts with whoever was next.
    if (i < turns_.size()) {
      std::rotate(turns_.begin(), turns_.begin() + static_cast<std::ptrdiff_t>(i), turns_.end());
    }
    if (!progress) break;  // Every remaining queue is busy: they go next Plan.
  }
}

Submission* SubmissionQueues::Locate(std::deque<Submission>& queue, RequestId id) {
  auto it = std::lower_bound(queue.begin(), queue.end(), id,
                             [](const Submission& s, RequestId v) { return s.id < v; });
  return it != queue.end() && it->id == id ? &*it : nullptr;
}

bool SubmissionQueues::MarkCancelled(uint32_t user, RequestId id, std::string_view reason) {
  UserQueue& q = users_[user];
  std::lock_guard<std::mutex> lock(q.mu);
  Submission* sub = Locate(q.queue, id);
  if (sub == nullptr) return false;
  sub->cancelled = true;
  sub->cancel_reason = reason;
  return true;
}

bool SubmissionQueues::ApplyChange(uint32_t user, RequestId id,
                                   std::optional<int32_t> priority,
                                   std::optional<WorkClassId> work_class, bool release) {
  UserQueue& q = users_[user];
  std::lock_guard<std::mutex> lock(q.mu);
  Submission* sub = Locate(q.queue, id);
  if (sub == nullptr) return false;
  if (priority) sub->spec.priority = *priority;
  if (work_class) sub->spec.work_class = *work_class;
  if (release) sub->spec.hold = false;
  return true;
}

bool SubmissionQueues::Contains(uint32_t user, RequestId id) const {
  UserQueue& q = users_[user];
  std::lock_guard<std::mutex> lock(q.mu);
  return Locate(q.queue, id) != nullptr;
}

size_t SubmissionQueues::SizeOf(uint32_t user) const {
  std::lock_guard<std::mutex> lock(users_[user].mu);
  return users_[user].queue.size();
}

}  // namespace hearth::internal
