#include "scheduler/encoder_cache.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"

namespace hearth::internal {

EncoderCache::EncoderCache(int32_t capacity_tokens) : capacity_(capacity_tokens) {
  // Outputs are hundreds of positions each (an image's tokens): a few
  // hundred entries cover any cache a device holds, and more grow the map
  // only when a new most is reached.
  by_key_.reserve(static_cast<size_t>(std::min(capacity_tokens, 1024)));
}

int32_t EncoderCache::Find(uint64_t key) const {
  const auto it = by_key_.find(key);
  return it == by_key_.end() ? -1 : it->second;
}

int32_t EncoderCache::Available(uint64_t step) const {
  return capacity_ - PinnedTokens(step);
}

void EncoderCache::Touch(int32_t e, uint64_t step) {
  Entry& entry = entries_[static_cast<size_t>(e)];
  if (pin_step_ != step) {
    pin_step_ = step;
    pinned_ = 0;
  }
  if (entry.pinned_step != step) {
    entry.pinned_step = step;
    pinned_ += entry.tokens;
  }
  Unlink(e);
  PushBack(e);
}

int32_t EncoderCache::Store(uint64_t key, int32_t tokens, uint64_t step,
                            std::vector<int32_t>* freed) {
  // Pinned entries were read by this plan, so they are the most recent:
  // eviction from the least recent end never meets one before the room.
  while (capacity_ - used_ < tokens && head_ >= 0 &&
         entries_[static_cast<size_t>(head_)].pinned_step != step) {
    Free(head_, freed);
  }
  int32_t e;
  if (!free_ids_.empty()) {
    e = free_ids_.back();
    free_ids_.pop_back();
  } else {
    e = static_cast<int32_t>(entries_.size());
    entries_.emplace_back();
  }
  Entry& entry = entries_[static_cast<size_t>(e)];
  entry.key = key;
  entry.tokens = tokens;
  entry.pinned_step = 0;
  used_ += tokens;
  by_key_.emplace(key, e);
  Touch(e, step);  // links it at the most recent end
  return e;
}

void EncoderCache::Drop(int32_t e, std::vector<int32_t>* freed) {
  if (e < 0 || static_cast<size_t>(e) >= entries_.size() ||
      entries_[static_cast<size_t>(e)].tokens == 0) {
    return;
  }
  Entry& entry = entries_[static_cast<size_t>(e)];
  if (entry.pinned_step == pin_step_) pinned_ -= entry.tokens;
  Free(e, freed);
}

void EncoderCache::Free(int32_t e, std::vector<int32_t>* freed) {
  Entry& entry = entries_[static_cast<size_t>(e)];
  Unlink(e);
  by_key_.erase(entry.key);
  used_ -= entry.tokens;
  entry.tokens = 0;
  entry.pinned_step = 0;
  free_ids_.push_back(e);
  freed->push_back(e);
}

void EncoderCache::Unlink(int32_t e) {
  Entry& entry = entries_[static_cast<size_t>(e)];
  if (entry.prev >= 0) {
    entries_[static_cast<size_t>(entry.prev)].next = entry.next;
  } else if (head_ == e) {
    head_ = entry.next;
  }
  if (entry.next >= 0) {
    entries_[static_cast<size_t>(entry.next)].prev = entry.prev;
  } else if (tail_ == e) {
    tail_ = entry.prev;
  }
  entry.prev = entry.next = -1;
}

void EncoderCache::PushBack(int32_t e) {
  Entry& entry = entries_[static_cast<size_t>(e)];
  entry.prev = tail_;
  entry.next = -1;
  if (tail_ >= 0) entries_[static_cast<size_t>(tail_)].next = e;
  tail_ = e;
  if (head_ < 0) head_ = e;
}

std::string EncoderCache::Check() const {
  int64_t listed = 0;
  size_t count = 0;
  for (int32_t e = head_; e >= 0; e = entries_[static_cast<size_t>(e)].next) {
    const Entry& entry = entries_[static_cast<size_t>(e)];
    if (entry.tokens <= 0) return absl::StrCat("encoder entry ", e, " is listed but free");
    const auto it = by_key_.find(entry.key);
    if (it == by_key_.end() || it->second != e) {
      return absl::StrCat("encoder entry ", e, " is listed but not found by its key");
    }
    listed += entry.tokens;
    if (++count > entries_.size()) return "the encoder cache's LRU list has a cycle";
  }
  if (count != by_key_.size()) {
    return absl::StrCat("encoder cache lists ", count, " entries but maps ", by_key_.size());
  }
  if (listed != used_ || used_ > capacity_) {
    return absl::StrCat("encoder cache entries hold ", listed, " positions, counted ", used_,
                        ", capacity ", capacity_);
  }
  return "";
}

}  // namespace hearth::internal
