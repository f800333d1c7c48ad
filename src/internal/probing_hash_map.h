// File: src/internal/probing_hash_map.h
//
// A hash map for the tables that churn on the hot path (live request ids,
// record slots, recently ended requests): linear probing with backward-shift
// deletion, so an erase leaves no tombstone behind and no later insert ever
// has to clean up after a million erases.
//
// Why not absl::flat_hash_map: its erase leaves tombstones, and once they use
// up the spare room an insert rehashes the whole table in place. Under steady
// churn at 65,536 live entries that is a 1.1 ms stall about once per million
// inserts, inside Submit's lock or inside Plan; this table's worst insert is
// a probe run, or a doubling when the size reaches a new high (at most
// log2(size) times in a process's life, never under steady churn).
//
// Load is kept at or below one half, so probe runs stay short. Keys need
// absl::Hash and ==; K and V must be default-constructible and movable.
// Iteration order is unspecified; an insert or erase invalidates pointers and
// iterators (an erase may move a later entry into the freed slot).

#ifndef HEARTH_INTERNAL_PROBING_HASH_MAP_H_
#define HEARTH_INTERNAL_PROBING_HASH_MAP_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"

namespace hearth::internal {

template <typename K, typename V>
class ProbingHashMap {
 public:
  using value_type = std::pair<K, V>;

  class const_iterator {
   public:
    const value_type& operator*() const { return map_->slots_[i_]; }
    const value_type* operator->() const { return &map_->slots_[i_]; }
    const_iterator& operator++() {
      i_ = map_->NextUsed(i_ + 1);
      return *this;
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }

   private:
    friend class ProbingHashMap;
    const_iterator(const ProbingHashMap* map, size_t i) : map_(map), i_(i) {}
    const ProbingHashMap* map_;
    size_t i_;
  };

  ProbingHashMap() { Rebuild(kMinCapacity); }

  // Room for `n` entries without a doubling. Allocates at most once.
  void reserve(size_t n) {
    const size_t wanted = std::bit_ceil(std::max(kMinCapacity, 2 * n));
    if (wanted > slots_.size()) Rebuild(wanted);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  V* find(const K& key) {
    const size_t i = Locate(key);
    return used_[i] ? &slots_[i].second : nullptr;
  }
  const V* find(const K& key) const {
    const size_t i = Locate(key);
    return used_[i] ? &slots_[i].second : nullptr;
  }
  bool contains(const K& key) const { return find(key) != nullptr; }

  // The value under `key`, inserting `value` first if the key is absent;
  // `second` says whether it was inserted.
  std::pair<V*, bool> try_emplace(const K& key, V value) {
    size_t i = Locate(key);
    if (used_[i]) return {&slots_[i].second, false};
    if (2 * (size_ + 1) > slots_.size()) {
      Rebuild(2 * slots_.size());
      i = Locate(key);
    }
    slots_[i] = value_type(key, std::move(value));
    used_[i] = 1;
    ++size_;
    return {&slots_[i].second, true};
  }

  V& insert_or_assign(const K& key, V value) {
    auto [v, inserted] = try_emplace(key, V());
    *v = std::move(value);
    return *v;
  }

  // False when `key` was absent.
  bool erase(const K& key) {
    size_t hole = Locate(key);
    if (!used_[hole]) return false;
    // Backward shift: pull each later entry of the run into the hole unless
    // its home lies cyclically in (hole, j], where it must stay reachable.
    for (size_t j = Next(hole); used_[j]; j = Next(j)) {
      const size_t home = Home(slots_[j].first);
      const bool stays = hole < j ? (home > hole && home <= j) : (home > hole || home <= j);
      if (stays) continue;
      slots_[hole] = std::move(slots_[j]);
      hole = j;
    }
    slots_[hole] = value_type();
    used_[hole] = 0;
    --size_;
    return true;
  }

  const_iterator begin() const { return const_iterator(this, NextUsed(0)); }
  const_iterator end() const { return const_iterator(this, slots_.size()); }

 private:
  static constexpr size_t kMinCapacity = 16;

  size_t Home(const K& key) const { return absl::Hash<K>()(key) & (slots_.size() - 1); }
  size_t Next(size_t i) const { return (i + 1) & (slots_.size() - 1); }
  // The slot holding `key`, or the empty slot that ends its probe run (one
  // exists: load never exceeds one half).
  size_t Locate(const K& key) const {
    size_t i = Home(key);
    while (used_[i] && !(slots_[i].first == key)) i = Next(i);
    return i;
  }
  size_t NextUsed(size_t i) const {
    while (i < used_.size() && !used_[i]) ++i;
    return i;
  }
  void Rebuild(size_t capacity) {
    std::vector<value_type> old_slots(capacity);
    std::vector<uint8_t> old_used(capacity, 0);
    old_slots.swap(slots_);
    old_used.swap(used_);
    size_ = 0;
    for (size_t i = 0; i < old_slots.size(); ++i) {
      if (old_used[i]) try_emplace(old_slots[i].first, std::move(old_slots[i].second));
    }
  }

  std::vector<value_type> slots_;
  std::vector<uint8_t> used_;
  size_t size_ = 0;
};

}  // namespace hearth::internal

#endif  // HEARTH_INTERNAL_PROBING_HASH_MAP_H_
