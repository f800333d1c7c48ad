#include "hearth/policy/fifo.h"

#include <cstdint>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"

namespace hearth {
namespace {

// Ranks by arrival sequence: earlier is higher. Waiting and running requests
// live in ordered maps keyed by arrival_seq, so every event is O(log n) and
// the next candidate is the first entry not declined this step.
class FifoPolicy final : public Policy {
 public:
  std::string_view name() const override { return "fifo"; }

  void OnArrival(const RequestView& r, absl::Time) override {
    seq_of_[r.id] = r.arrival_seq;
    waiting_.emplace(r.arrival_seq, r.id);
  }
  void OnAdmitted(const RequestView& r, absl::Time) override {
    waiting_.erase(r.arrival_seq);
    running_.emplace(r.arrival_seq, r.id);
  }
  void OnPreempted(const RequestView& r, absl::Time) override {
    running_.erase(r.arrival_seq);
    waiting_.emplace(r.arrival_seq, r.id);
  }
  void OnRemoved(const RequestView& r, absl::Time) override {
    waiting_.erase(r.arrival_seq);
    running_.erase(r.arrival_seq);
    seq_of_.erase(r.id);
  }
  void OnServed(absl::Span<const ServedTokens>, absl::Time) override {}

  void BeginAdmission(absl::Time) override { declined_up_to_.reset(); }
  RequestId NextAdmission() override {
    // Candidates come in arrival order, so everything up to the last declined
    // one has been offered: resume after it. (No stored iterator: admissions
    // erase from `waiting_` between calls.)
    auto it = declined_up_to_.has_value() ? waiting_.upper_bound(*declined_up_to_)
                                          : waiting_.begin();
    return it == waiting_.end() ? RequestId() : it->second;
  }
  void Decline(RequestId id) override {
    auto it = seq_of_.find(id);
    if (it != seq_of_.end()) declined_up_to_ = it->second;
  }
  void EndAdmission() override { declined_up_to_.reset(); }

  RequestId PickVictim(RequestId beneficiary, bool beneficiary_running) override {
    if (!beneficiary_running || running_.empty()) return RequestId();
    auto it = seq_of_.find(beneficiary);
    const uint64_t own = it == seq_of_.end() ? 0 : it->second;
    // The latest arrival runs last in FIFO order; preempt it if it arrived
    // after the beneficiary, else the beneficiary yields itself.
    auto last = std::prev(running_.end());
    if (last->first > own) return last->second;
    return RequestId();
  }

 private:
  absl::btree_map<uint64_t, RequestId> waiting_;
  absl::btree_map<uint64_t, RequestId> running_;
  absl::flat_hash_map<RequestId, uint64_t> seq_of_;
  std::optional<uint64_t> declined_up_to_;
};

}  // namespace

std::unique_ptr<Policy> NewFifoPolicy() {
  return std::make_unique<FifoPolicy>();
}

}  // namespace hearth
