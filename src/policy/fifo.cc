// File: src/policy/fifo.cc
//
// The standalone FIFO policy: arrival order (arrival_order_queue.h) keyed by
// arrival sequence, without the bookkeeping of a policy tree (no entries, no
// service accounting), since FIFO ranks by nothing that service changes.

#include "hearth/policy/fifo.h"

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "policy/internal/arrival_order_queue.h"

namespace hearth {
namespace {

class FifoPolicy final : public Policy {
 public:
  std::string_view name() const override { return "fifo"; }

  void OnArrival(const RequestView& r, absl::Time) override {
    seq_of_[r.id] = r.arrival_seq;
    queue_.AddWaiting(r.arrival_seq, r.id);
  }
  void OnAdmitted(const RequestView& r, absl::Time) override {
    queue_.RemoveWaiting(r.arrival_seq);
    queue_.AddRunning(r.arrival_seq, r.id);
  }
  void OnPreempted(const RequestView& r, absl::Time) override {
    queue_.RemoveRunning(r.arrival_seq);
    queue_.AddWaiting(r.arrival_seq, r.id);
  }
  void OnRemoved(const RequestView& r, absl::Time) override {
    queue_.RemoveWaiting(r.arrival_seq);
    queue_.RemoveRunning(r.arrival_seq);
    seq_of_.erase(r.id);
  }
  void OnServed(absl::Span<const ServedTokens>, absl::Time) override {}

  void BeginAdmission(absl::Time) override { declined_up_to_.reset(); }
  RequestId NextAdmission() override {
    // Candidates come in arrival order, so everything up to the last declined
    // one has been offered: resume after it. (No stored iterator: admissions
    // erase from the queue between calls.)
    return declined_up_to_.has_value() ? queue_.FirstWaitingAfter(*declined_up_to_)
                                       : queue_.FirstWaiting();
  }
  void Decline(RequestId id) override {
    auto it = seq_of_.find(id);
    if (it != seq_of_.end()) declined_up_to_ = it->second;
  }
  void EndAdmission() override { declined_up_to_.reset(); }

  // Only a running request may displace, and only the latest arrival, if it
  // arrived after the beneficiary; else the beneficiary yields itself.
  RequestId PickVictim(RequestId beneficiary, bool beneficiary_running) override {
    if (!beneficiary_running) return RequestId();
    auto it = seq_of_.find(beneficiary);
    const uint64_t own = it == seq_of_.end() ? 0 : it->second;
    return queue_.LatestRunningAfter(own);
  }
  size_t VictimCandidates(RequestId beneficiary, bool beneficiary_running,
                          absl::Span<RequestId> out) override {
    if (!beneficiary_running) return 0;
    auto it = seq_of_.find(beneficiary);
    const uint64_t own = it == seq_of_.end() ? 0 : it->second;
    return queue_.LatestRunningAfter(own, out);
  }

 private:
  policy_internal::ArrivalOrderQueue<uint64_t, RequestId> queue_;
  absl::flat_hash_map<RequestId, uint64_t> seq_of_;
  std::optional<uint64_t> declined_up_to_;
};

}  // namespace

std::unique_ptr<Policy> NewFifoPolicy() {
  return std::make_unique<FifoPolicy>();
}

}  // namespace hearth
