#include "public_request_ids.h"

#include <cstdint>

#include "random_hex.h"

namespace hearth::serve {
namespace {

std::string RandomHexId() { return RandomHex(PublicRequestIds::kIdChars / 2); }

}  // namespace

PublicRequestIds::PublicRequestIds(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

std::string PublicRequestIds::Issue(RequestId id, UserId owner) {
  std::string shown = RandomHexId();
  absl::MutexLock lock(&mu_);
  // 96 random bits: a repeat is a broken random source, not bad luck; the
  // loop keeps the table one-to-one all the same.
  while (by_public_.contains(shown)) shown = RandomHexId();
  if (ring_.size() < capacity_) {
    ring_.push_back(shown);
  } else {
    std::string& oldest = ring_[next_];
    auto it = by_public_.find(oldest);
    if (it != by_public_.end()) {
      by_request_.erase(it->second.id);
      by_public_.erase(it);
    }
    oldest = shown;
    next_ = (next_ + 1) % capacity_;
  }
  by_public_.emplace(shown, Entry{id, owner});
  by_request_.insert_or_assign(id, shown);
  return shown;
}

std::optional<RequestId> PublicRequestIds::Resolve(absl::string_view public_id,
                                                   UserId owner) const {
  absl::MutexLock lock(&mu_);
  auto it = by_public_.find(public_id);
  if (it == by_public_.end() || it->second.owner != owner) return std::nullopt;
  return it->second.id;
}

std::string PublicRequestIds::PublicOf(RequestId id) const {
  absl::MutexLock lock(&mu_);
  auto it = by_request_.find(id);
  return it == by_request_.end() ? std::string() : it->second;
}

}  // namespace hearth::serve
