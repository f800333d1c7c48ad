// File: hearth/common/ids.h
//
// Strong identifier types. A `RequestId` cannot be passed where a `BlockId` is
// expected, and neither converts silently from a bare integer. All ids are
// trivially copyable value types, hashable with Abseil and std::hash, ordered,
// and printable.
//
// Example:
//   hearth::RequestId id(42);
//   absl::flat_hash_map<hearth::RequestId, int> m;
//   m[id] = 1;

#ifndef HEARTH_COMMON_IDS_H_
#define HEARTH_COMMON_IDS_H_

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <utility>

namespace hearth {

// StrongId<Tag, Rep>
//
// A value of type `Rep` tagged so that ids of different kinds do not mix. The
// maximum value of `Rep` is reserved as "invalid" and is what a
// default-constructed id holds.
template <typename Tag, typename Rep>
class StrongId {
 public:
  using ValueType = Rep;
  static constexpr Rep kInvalidValue = std::numeric_limits<Rep>::max();

  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep value) : value_(value) {}

  constexpr Rep value() const { return value_; }
  constexpr bool valid() const { return value_ != kInvalidValue; }

  friend constexpr auto operator<=>(StrongId, StrongId) = default;

  template <typename H>
  friend H AbslHashValue(H h, StrongId id) {
    return H::combine(std::move(h), id.value_);
  }
  friend std::ostream& operator<<(std::ostream& os, StrongId id) {
    return os << id.ToString();
  }
  // For messages: the number, or "<invalid>". (The pinned Abseil's StrCat
  // cannot format user types, so call sites use this.)
  std::string ToString() const {
    return valid() ? std::to_string(value_) : std::string("<invalid>");
  }

 private:
  Rep value_ = kInvalidValue;
};

// Identifies one submitted request for its whole life. Assigned by
// Scheduler::Submit(), never reused by the same scheduler.
using RequestId = StrongId<struct RequestIdTag, uint64_t>;
// A household member (or API tenant); index into SchedulerOptions::users.
using UserId = StrongId<struct UserIdTag, uint32_t>;
// A work class (voice, chat, ...); index into SchedulerOptions::work_classes.
using WorkClassId = StrongId<struct WorkClassIdTag, uint32_t>;
// A model; index into SchedulerOptions::models.
using ModelId = StrongId<struct ModelIdTag, uint32_t>;
// A KV-cache block. Device and host tiers number their blocks independently;
// which tier a BlockId refers to is always clear from where it appears.
using BlockId = StrongId<struct BlockIdTag, uint32_t>;

// Token ids are plain integers: they are data, not handles.
using TokenId = int32_t;

}  // namespace hearth

template <typename Tag, typename Rep>
struct std::hash<hearth::StrongId<Tag, Rep>> {
  size_t operator()(hearth::StrongId<Tag, Rep> id) const noexcept {
    return std::hash<Rep>()(id.value());
  }
};

#endif  // HEARTH_COMMON_IDS_H_
