#include "scheduler/pending_shares.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace hearth::internal {

PendingShares::PendingShares(const SchedulerOptions& options)
    : requests_(MakeBound(options.max_pending_requests, options)),
      bytes_(MakeBound(options.max_pending_bytes, options)) {
  for (const UserConfig& u : options.users) names_.push_back(u.name);
}

PendingShares::Bound PendingShares::MakeBound(int64_t limit, const SchedulerOptions& options) {
  Bound b;
  b.limit = limit;
  double weights = 0;
  for (const UserConfig& u : options.users) weights += u.weight;
  for (const UserConfig& u : options.users) {
    const double share = options.reserved_pending_share * (u.weight / weights);
    const double want = std::floor(static_cast<double>(limit) * share);
    // Checked in double before the cast (a limit near 2^63 rounds up to it),
    // and capped by what is left, so that rounding can never reserve more
    // than the bound.
    const int64_t left = limit - b.committed;
    b.reserved.push_back(want >= static_cast<double>(left) ? left : static_cast<int64_t>(want));
    b.committed += b.reserved.back();
  }
  b.held.assign(options.users.size(), 0);
  return b;
}

bool PendingShares::Bound::Fits(uint32_t user, int64_t amount) const {
  // Everyone else's held-or-reserved room plus what this user holds is at
  // most `committed`, itself at most `limit`; compared by subtraction, since
  // adding `amount` could wrap for a limit near INT64_MAX.
  const int64_t others = committed - std::max(reserved[user], held[user]);
  return amount <= limit - (others + held[user]);
}

void PendingShares::Bound::Change(uint32_t user, int64_t amount) {
  committed -= std::max(reserved[user], held[user]);
  held[user] += amount;
  total += amount;
  committed += std::max(reserved[user], held[user]);
}

absl::Status PendingShares::CanAddRequest(uint32_t user, int64_t count) const {
  if (requests_.Fits(user, count)) return absl::OkStatus();
  return Refusal(user, requests_, count, "max_pending_requests", "unfinished requests");
}

absl::Status PendingShares::CanAddBytes(uint32_t user, int64_t bytes) const {
  if (bytes_.Fits(user, bytes)) return absl::OkStatus();
  return Refusal(user, bytes_, bytes, "max_pending_bytes", "bytes of token ids and labels");
}

absl::Status PendingShares::Refusal(uint32_t user, const Bound& bound, int64_t amount,
                                    const char* option, const char* unit) const {
  if (amount > bound.limit - bound.total) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the scheduler already holds ", bound.total, " ", unit, " (SchedulerOptions.", option,
        " = ", bound.limit, ") and this request needs ", amount, "; retry after some finish"));
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "user \"", names_[user], "\" holds ", bound.held[user], " ", unit,
      ", beyond its reserved ", bound.reserved[user], ", and the rest of ", option, " (",
      bound.limit, ") is held or reserved for other users (reserved_pending_share); "
      "retry after some of this user's requests finish"));
}

absl::Status PendingShares::Bound::Audit(const char* what) const {
  int64_t sum = 0;
  int64_t promised = 0;
  for (size_t u = 0; u < held.size(); ++u) {
    if (held[u] < 0) return absl::InternalError(absl::StrCat("user ", u, " holds ", held[u], " ", what));
    sum += held[u];
    promised += std::max(reserved[u], held[u]);
  }
  if (sum != total || promised != committed || committed > limit) {
    return absl::InternalError(absl::StrCat("pending ", what, ": users hold ", sum, " (total says ", total,
                                            "), committed ", promised, " (kept: ", committed,
                                            "), limit ", limit));
  }
  return absl::OkStatus();
}

absl::Status PendingShares::Audit() const {
  if (absl::Status s = requests_.Audit("requests"); !s.ok()) return s;
  return bytes_.Audit("bytes");
}

void PendingShares::Add(uint32_t user, int64_t bytes) {
  requests_.Change(user, 1);
  bytes_.Change(user, bytes);
}

void PendingShares::Remove(uint32_t user, int64_t bytes) {
  requests_.Change(user, -1);
  bytes_.Change(user, -bytes);
}

}  // namespace hearth::internal
