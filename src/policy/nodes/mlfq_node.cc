// File: src/policy/nodes/mlfq_node.cc
//
// Each level holds two indexed heaps of entries: offerable waiting ones,
// longest waiting on top, and running ones, latest arrival on top. An entry
// sits in at most one heap of its leaf at a time, so one heap position per
// slot suffices. Demotions at quantum boundaries (every step, for long jobs)
// and preemptions move entries between heaps without allocating: heaps grow
// together with the leaf (see Push).

#include "policy/nodes/mlfq_node.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "policy/internal/indexed_heap.h"

namespace hearth::policy_internal {
namespace {

struct MlfqSlot {
  // Service at the current level.
  double served = 0;
  int32_t level = 0;
  // Index in the one heap of the leaf that holds the entry, or -1.
  int32_t heap_pos = -1;
  // Promoted for starvation since it last ran.
  bool promoted = false;
  // Demoted since it was last admitted: its quantum ran out, so it may yield.
  bool demoted_while_running = false;
};
using MlfqSlots = std::vector<MlfqSlot>;

struct SlotPositions {
  MlfqSlots* slots;
  int32_t Get(Entry* const& e) const { return (*slots)[e->index].heap_pos; }
  void Set(Entry* const& e, int32_t at) { (*slots)[e->index].heap_pos = at; }
};

// Waiting: the longest waiting on top; ties by arrival.
struct LongerWaiting {
  bool operator()(const Entry* a, const Entry* b) const {
    return std::tie(a->waiting_since, a->arrival_seq) <
           std::tie(b->waiting_since, b->arrival_seq);
  }
};
// Running: the latest arrival on top.
struct LaterArrival {
  bool operator()(const Entry* a, const Entry* b) const {
    return a->arrival_seq > b->arrival_seq;
  }
};
using WaitingHeap = IndexedHeap<Entry*, LongerWaiting, SlotPositions>;
using RunningHeap = IndexedHeap<Entry*, LaterArrival, SlotPositions>;

// Room every heap starts with.
constexpr int32_t kSmallHeap = 64;

class MlfqNode final : public Node {
 public:
  MlfqNode(const MlfqOptions& options, std::shared_ptr<MlfqSlots> slots)
      : options_(options), slots_(std::move(slots)) {
    double quantum = options.base_quantum;
    for (int32_t i = 0; i < options.num_levels; ++i) {
      quanta_.push_back(quantum);
      quantum *= 2;
      waiting_.emplace_back(LongerWaiting{}, SlotPositions{slots_.get()});
      running_.emplace_back(LaterArrival{}, SlotPositions{slots_.get()});
      waiting_.back().Reserve(kSmallHeap);
      running_.back().Reserve(kSmallHeap);
    }
  }

  void AddWaiting(Entry* e, Offer why) override {
    if (why == Offer::kArrived) SkipJoin(e);
    Push(waiting_[Slot(e).level], e);
  }
  void RemoveWaiting(Entry* e, bool for_good) override {
    if (!e->declined) waiting_[Slot(e).level].Erase(e);
  }
  void AddRunning(Entry* e) override {
    MlfqSlot& slot = Slot(e);
    slot.promoted = false;
    slot.demoted_while_running = false;
    Push(running_[slot.level], e);
  }
  void RemoveRunning(Entry* e) override { running_[Slot(e).level].Erase(e); }

  // Quanta measure service actually received: reservations do not count.
  void Reserve(Entry*, int32_t) override {}
  void Flush() override {}

  void Charge(Entry* e, int32_t prefill_tokens, int32_t decode_tokens,
              int32_t prepaid) override {
    AddService(e, prefill_tokens * options_.prefill_token_cost +
                      decode_tokens * options_.decode_token_cost);
  }

  void ChargeDecodes(absl::Span<Entry* const> entries) override {
    for (Entry* e : entries) AddService(e, options_.decode_token_cost);
  }

  void Advance(absl::Time now) override {
    // A new admission phase: a new step's allowance of time-slicing.
    preemptions_left_ = options_.max_preemptions_per_step;
    if (options_.starvation_bound == absl::InfiniteDuration()) return;
    for (int32_t level = 1; level < options_.num_levels; ++level) {
      PromoteStarving(level, now);
    }
  }

  Entry* Best() override {
    for (const WaitingHeap& queue : waiting_) {
      if (!queue.empty()) return queue.Top();
    }
    return nullptr;
  }

  Entry* Victim(const Entry* beneficiary, bool beneficiary_running) override {
    Entry* candidate = LowestRunning();
    if (candidate == nullptr || beneficiary == nullptr) return candidate;
    if (beneficiary_running) return GrowthVictim(beneficiary);
    // A promoted request waits for a free slot instead: if promotion could
    // preempt, two long jobs recomputing after each preemption could take
    // turns forever without finishing. Demotions only lower levels, so
    // preemptions between promotions are finite.
    const MlfqSlot& b = Slot(beneficiary);
    if (b.promoted) return nullptr;
    // As in FastServe, a job yields to more urgent work at the end of a
    // quantum: one admitted (or resumed) and not yet demoted since keeps
    // running, so every admission buys at least a quantum of service and
    // recompute preemption cannot undo each admission at once.
    const MlfqSlot& c = Slot(candidate);
    if (preemptions_left_ > 0 && c.level > b.level && c.demoted_while_running) {
      --preemptions_left_;
      return candidate;
    }
    return nullptr;
  }

  // Growth: the latest arrival of each level, lowest level first, each one
  // after the beneficiary (GrowthVictim's answer first), so that the core
  // can weigh more than one. Admission: Victim()'s one answer, since offering
  // spends one of the step's preemptions.
  size_t Victims(const Entry* beneficiary, bool beneficiary_running,
                 absl::Span<Entry*> out) override {
    if (out.empty()) return 0;
    if (beneficiary == nullptr || !beneficiary_running) {
      out[0] = Victim(beneficiary, beneficiary_running);
      return out[0] != nullptr ? 1 : 0;
    }
    size_t n = 0;
    for (int32_t level = options_.num_levels - 1; level >= 0 && n < out.size(); --level) {
      if (running_[level].empty()) continue;
      Entry* latest = running_[level].Top();
      if (latest->arrival_seq > beneficiary->arrival_seq) out[n++] = latest;
    }
    return n;
  }

 private:
  MlfqSlot& Slot(const Entry* e) const { return (*slots_)[e->index]; }

  // A full heap makes every heap of the leaf room for twice the leaf's
  // entries: a heap never holds more than the leaf, so the leaf allocates
  // only when it reaches a new size, however its entries move between levels.
  template <typename Heap>
  void Push(Heap& heap, Entry* e) {
    if (heap.size() == heap.capacity()) ReserveAll(2 * std::max(Entries(), kSmallHeap));
    heap.Push(e);
  }

  // Entries in the leaf's heaps (hidden ones aside).
  int32_t Entries() const {
    int32_t n = 0;
    for (int32_t level = 0; level < options_.num_levels; ++level) {
      n += waiting_[level].size() + running_[level].size();
    }
    return n;
  }
  void ReserveAll(int32_t n) {
    for (int32_t level = 0; level < options_.num_levels; ++level) {
      waiting_[level].Reserve(n);
      running_[level].Reserve(n);
    }
  }

  // Each level is ordered by waiting time, so only its head can be starving.
  void PromoteStarving(int32_t level, absl::Time now) {
    WaitingHeap& queue = waiting_[level];
    while (!queue.empty()) {
      Entry* head = queue.Top();
      if (now - head->waiting_since <= options_.starvation_bound) return;
      queue.Erase(head);
      MlfqSlot& slot = Slot(head);
      slot.level = 0;
      slot.served = 0;
      slot.promoted = true;
      Push(waiting_[0], head);
    }
  }

  // The latest arrival of the lowest level that runs anything.
  Entry* LowestRunning() const {
    for (int32_t level = options_.num_levels - 1; level >= 0; --level) {
      if (!running_[level].empty()) return running_[level].Top();
    }
    return nullptr;
  }

  // Memory for a running request's growth: a running request that arrived
  // later, from the lowest level that has one (latest arrival first). Levels
  // move, arrival order does not; keeping victims later in arrival order
  // means the earliest running request is never displaced and finishes, so
  // recompute preemption cannot cycle. O(levels).
  Entry* GrowthVictim(const Entry* beneficiary) const {
    for (int32_t level = options_.num_levels - 1; level >= 0; --level) {
      if (running_[level].empty()) continue;
      Entry* latest = running_[level].Top();
      if (latest->arrival_seq > beneficiary->arrival_seq) return latest;
    }
    return nullptr;
  }

  // Service at the current level; demotes once it exceeds the quantum (the
  // last level keeps everyone).
  void AddService(Entry* e, double units) {
    MlfqSlot& slot = Slot(e);
    slot.served += units;
    if (slot.level < options_.num_levels - 1 && slot.served > quanta_[slot.level]) {
      Demote(e);
    }
  }

  // Quantum used up: one level down, with a fresh quantum there. Kept out
  // of line so that the charge path, run for every sequence of every step,
  // stays free of the heap's register spills.
  [[gnu::noinline]] void Demote(Entry* e) {
    MlfqSlot& slot = Slot(e);
    if (e->running) running_[slot.level].Erase(e);
    ++slot.level;
    slot.served = 0;
    if (e->running) {
      slot.demoted_while_running = true;
      Push(running_[slot.level], e);
    }
  }

  // A new request enters the highest level whose quantum covers its
  // estimated prefill cost.
  void SkipJoin(Entry* e) {
    if (e->index >= static_cast<int32_t>(slots_->size())) {
      slots_->resize(e->index + 1);
    }
    const double cost = e->prompt_tokens * options_.prefill_token_cost;
    int32_t level = 0;
    while (level + 1 < options_.num_levels && quanta_[level] < cost) ++level;
    Slot(e) = MlfqSlot{.level = level};
  }

  MlfqOptions options_;
  std::shared_ptr<MlfqSlots> slots_;
  std::vector<double> quanta_;
  // Per level: offerable waiting entries and running entries.
  std::vector<WaitingHeap> waiting_;
  std::vector<RunningHeap> running_;
  // Time-slicing preemptions still allowed in this admission phase.
  int32_t preemptions_left_ = 0;
};

}  // namespace

NodeFactory MlfqLeafFactory(const MlfqOptions& options) {
  auto slots = std::make_shared<MlfqSlots>();
  return [options, slots] { return std::make_unique<MlfqNode>(options, slots); };
}

}  // namespace hearth::policy_internal
