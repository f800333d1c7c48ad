// File: bench/soak/result_ledger.h
//
// Exactly-once accounting of a soak: every id Submit returned must end once.
// An id ended twice is `duplicated`, an id ended that Submit never returned
// is `unknown`, and whatever is still live once the run drains is `lost`.
// Also keeps the live ids in a form a random one can be drawn from (for host
// cancels) and counts the terminal phases.
//
// Memory: two bits per id ever issued (ids are numbered densely by Submit;
// ids far beyond what was issued go to a map instead, so a change of
// numbering costs this ledger memory, not correctness) plus the live set.

#ifndef HEARTH_BENCH_SOAK_RESULT_LEDGER_H_
#define HEARTH_BENCH_SOAK_RESULT_LEDGER_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "bench/common/seeded_random.h"
#include "hearth/common/ids.h"
#include "hearth/request/request_state.h"

namespace hearth::bench {

class ResultLedger {
 public:
  // Sizes the id bitmap for about `expected_ids` up front, so that a soak's
  // RSS series shows the scheduler's growth rather than the ledger's.
  explicit ResultLedger(uint64_t expected_ids);

  // Submit returned `id`.
  void Accept(RequestId id);
  // A result arrived for `result.id`.
  void End(const RequestResult& result);

  size_t live() const { return live_ids_.size(); }
  // A live id drawn at random. REQUIRES: live() > 0.
  RequestId RandomLive(SeededRandom& random) const;

  uint64_t accepted() const { return accepted_; }
  uint64_t ended() const { return ended_; }
  uint64_t duplicated() const { return duplicated_; }
  uint64_t unknown() const { return unknown_; }
  // Ids Submit returned twice.
  uint64_t reissued() const { return reissued_; }
  uint64_t phase_count(RequestPhase phase) const {
    return phases_[static_cast<size_t>(phase)];
  }

 private:
  static constexpr uint8_t kAccepted = 1;
  static constexpr uint8_t kEnded = 2;

  uint8_t State(uint64_t id) const;
  void SetState(uint64_t id, uint8_t state);

  std::vector<uint64_t> dense_;  // 32 two-bit states per word
  absl::flat_hash_map<uint64_t, uint8_t> sparse_;
  std::vector<uint64_t> live_ids_;
  absl::flat_hash_map<uint64_t, uint32_t> live_index_;
  uint64_t accepted_ = 0;
  uint64_t ended_ = 0;
  uint64_t duplicated_ = 0;
  uint64_t unknown_ = 0;
  uint64_t reissued_ = 0;
  std::array<uint64_t, 16> phases_{};
};

}  // namespace hearth::bench

#endif  // HEARTH_BENCH_SOAK_RESULT_LEDGER_H_
