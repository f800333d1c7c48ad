#include "bench/soak/result_ledger.h"

#include <algorithm>

namespace hearth::bench {

namespace {

// Ids below this bound live in the dense bitmap (64 MiB at most).
constexpr uint64_t kDenseLimit = uint64_t{1} << 28;

}  // namespace

ResultLedger::ResultLedger(uint64_t expected_ids)
    : dense_(std::min(expected_ids + 4096, kDenseLimit) / 32 + 1, 0) {}

uint8_t ResultLedger::State(uint64_t id) const {
  if (id >= kDenseLimit) {
    auto it = sparse_.find(id);
    return it == sparse_.end() ? 0 : it->second;
  }
  const size_t word = id / 32;
  if (word >= dense_.size()) return 0;
  return static_cast<uint8_t>((dense_[word] >> (2 * (id % 32))) & 3);
}

void ResultLedger::SetState(uint64_t id, uint8_t state) {
  if (id >= kDenseLimit) {
    sparse_[id] = state;
    return;
  }
  const size_t word = id / 32;
  if (word >= dense_.size()) dense_.resize(word + 1, 0);
  const int shift = static_cast<int>(2 * (id % 32));
  dense_[word] = (dense_[word] & ~(uint64_t{3} << shift)) | (uint64_t{state} << shift);
}

void ResultLedger::Accept(RequestId id) {
  const uint64_t v = id.value();
  if (State(v) != 0) {
    ++reissued_;
    return;
  }
  ++accepted_;
  SetState(v, kAccepted);
  live_index_[v] = static_cast<uint32_t>(live_ids_.size());
  live_ids_.push_back(v);
}

void ResultLedger::End(const RequestResult& result) {
  const uint64_t v = result.id.value();
  const uint8_t state = State(v);
  if (state == 0) {
    ++unknown_;
    return;
  }
  if (state & kEnded) {
    ++duplicated_;
    return;
  }
  ++ended_;
  ++phases_[static_cast<size_t>(result.phase) % phases_.size()];
  SetState(v, state | kEnded);
  auto it = live_index_.find(v);
  const uint32_t at = it->second;
  live_index_.erase(it);
  if (at + 1 != live_ids_.size()) {
    live_ids_[at] = live_ids_.back();
    live_index_[live_ids_[at]] = at;
  }
  live_ids_.pop_back();
}

RequestId ResultLedger::RandomLive(SeededRandom& random) const {
  return RequestId(live_ids_[random.Uniform(0, static_cast<int64_t>(live_ids_.size()) - 1)]);
}

}  // namespace hearth::bench
