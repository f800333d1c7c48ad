// File: src/policy/nodes/mlfq_node.cc
//
// Each level holds two indexed heaps of entries: offerable waiting ones,
// longest waiting on top, and running ones, latest arrival on top. An entry
// sits in at most one of them at a time, so one heap position per slot
// suffices; offerable entries also sit in one leaf-wide heap, earliest
// arrival on top, from which the starving lane admits (a second position).
// Demotions (every step, for long jobs) and preemptions move entries between
// heaps without allocating: heaps grow together with the leaf (see Push).

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
  // Service attained since arrival, and when it was last admitted.
  double served = 0;
  double served_at_admission = 0;
  int32_t level = 0;
  // Index in the one level heap of the leaf that holds the entry, or -1.
  int32_t heap_pos = -1;
  // Index in the leaf's heap of offerable entries, or -1.
  int32_t waiting_pos = -1;
  // Demoted since it was last admitted: its quantum ran out, so it may yield.
  bool demoted_while_running = false;
  // Kept out of the starving lane until admitted again: preempted to admit
  // a waiting request (see MlfqNode::BarFromLane).
  bool lane_barred = false;
};
using MlfqSlots = std::vector<MlfqSlot>;

struct SlotPositions {
  MlfqSlots* slots;
  int32_t Get(Entry* const& e) const { return (*slots)[e->index].heap_pos; }
  void Set(Entry* const& e, int32_t at) { (*slots)[e->index].heap_pos = at; }
};

struct WaitingPositions {
  MlfqSlots* slots;
  int32_t Get(Entry* const& e) const { return (*slots)[e->index].waiting_pos; }
  void Set(Entry* const& e, int32_t at) { (*slots)[e->index].waiting_pos = at; }
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
// The starving lane: the earliest arrival on top.
struct EarlierArrival {
  bool operator()(const Entry* a, const Entry* b) const {
    return a->arrival_seq < b->arrival_seq;
  }
};
using AllWaitingHeap = IndexedHeap<Entry*, EarlierArrival, WaitingPositions>;

// Room every heap starts with.
constexpr int32_t kSmallHeap = 64;
// Rounding the starving lane's credit forgives (shares like 0.1 do not add
// up to 1 exactly).
constexpr double kCreditSlack = 1e-9;

class MlfqNode final : public Node {
 public:
  MlfqNode(const MlfqOptions& options, std::shared_ptr<MlfqSlots> slots)
      : options_(options),
        slots_(std::move(slots)),
        all_waiting_(EarlierArrival{}, WaitingPositions{slots_.get()}) {
    all_waiting_.Reserve(kSmallHeap);
    growth_listed_.reserve(options.num_levels);
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
    if (why == Offer::kPreempted) BarFromLane(e);
    Push(waiting_[Slot(e).level], e);
    if (!Slot(e).lane_barred) Push(all_waiting_, e);
  }
  void RemoveWaiting(Entry* e, bool for_good) override {
    if (e->declined) return;
    waiting_[Slot(e).level].Erase(e);
    if (Slot(e).waiting_pos >= 0) all_waiting_.Erase(e);
  }
  void AddRunning(Entry* e) override {
    MlfqSlot& slot = Slot(e);
    slot.demoted_while_running = false;
    slot.served_at_admission = slot.served;
    slot.lane_barred = false;
    Push(running_[slot.level], e);
    // Every admission earns the starving lane its share; one it makes
    // spends a whole admission. The credit never exceeds 0, so a lane
    // without starving requests saves nothing up for a later burst.
    starving_credit_ += options_.starving_share;
    if (e == starving_pick_) {
      starving_credit_ -= 1;
      starving_pick_ = nullptr;
    }
    starving_credit_ = std::min(starving_credit_, 0.0);
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

  void ChargeDecodes(absl::Span<Entry* const> entries, bool /*repeat*/) override {
    for (Entry* e : entries) AddService(e, options_.decode_token_cost);
  }

  void Advance(absl::Time now) override {
    // A new admission phase: a new step's allowance of time-slicing.
    preemptions_left_ = options_.max_preemptions_per_step;
    now_ = now;
    starving_pick_ = nullptr;
    ForgetGrowthDecision();
  }

  // The starving lane first when it has credit (the earliest arrival of all
  // levels, if it arrived longer than the bound ago), else the most urgent
  // level's longest waiting.
  Entry* Best() override {
    starving_pick_ = nullptr;
    ForgetGrowthDecision();
    if (!all_waiting_.empty() && starving_credit_ > -kCreditSlack) {
      Entry* oldest = all_waiting_.Top();
      if (now_ - oldest->arrival_time > options_.starvation_bound) {
        starving_pick_ = oldest;
        return oldest;
      }
    }
    for (const WaitingHeap& queue : waiting_) {
      if (!queue.empty()) return queue.Top();
    }
    return nullptr;
  }

  Entry* Victim(const Entry* beneficiary, bool beneficiary_running) override {
    Entry* candidate = LowestRunning();
    if (beneficiary_running) {
      if (candidate != nullptr && beneficiary != nullptr) candidate = GrowthVictim(beneficiary);
      NoteGrowthDecision(beneficiary, absl::MakeConstSpan(&candidate, candidate != nullptr ? 1 : 0));
      return candidate;
    }
    ForgetGrowthDecision();
    if (candidate == nullptr || beneficiary == nullptr) return candidate;
    // The starving lane waits for a free slot instead: if it could preempt,
    // two long jobs recomputing after each preemption could take turns
    // forever without finishing. Each preemption at a quantum boundary
    // follows a quantum of service, so there are finitely many.
    if (beneficiary == starving_pick_) return nullptr;
    const MlfqSlot& b = Slot(beneficiary);
    // As in FastServe, a job yields to more urgent work at the end of a
    // quantum, so every admission buys at least a quantum of service and
    // recompute preemption cannot undo each admission at once.
    const MlfqSlot& c = Slot(candidate);
    if (preemptions_left_ > 0 && c.level > b.level && QuantumEnded(c)) {
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
    NoteGrowthDecision(beneficiary, out.first(n));
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

  void Push(AllWaitingHeap& heap, Entry* e) {
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
    all_waiting_.Reserve(n);
    for (int32_t level = 0; level < options_.num_levels; ++level) {
      waiting_[level].Reserve(n);
      running_[level].Reserve(n);
    }
  }

  // The victims just named for a running request's memory growth (and the
  // request itself, which yields its own memory when none is taken). Any
  // other preemption follows a different question (Best() and the
  // admission path of Victim() forget this one), so a preemption that
  // matches it was for growth.
  void NoteGrowthDecision(const Entry* beneficiary, absl::Span<Entry* const> listed) {
    growth_beneficiary_ = beneficiary;
    growth_listed_.assign(listed.begin(), listed.end());
  }
  void ForgetGrowthDecision() {
    growth_beneficiary_ = nullptr;
    growth_listed_.clear();
  }

  // Whether the starving lane may offer `e`, just preempted. Preempted for a
  // running request's memory growth, it may: a growth victim arrived after
  // the request that grew, and the lane never preempts, so it cannot evict
  // its evictor in turn; without the lane a long job that growth preempted
  // under overload waits behind every later short arrival. Preempted to
  // admit a waiting request (time-slicing, or a victim the core or a parent
  // named for an admission), it must not be offered before that request, so
  // it stays out of the lane until it is admitted again. Keeping
  // time-slicing victims out until then is also what lets short jobs pass
  // long ones: let back in once their beneficiary ran, they took half the
  // admissions under overload and FastServe's heavy-tailed workload lost
  // its mean JCT gain over FIFO (figures: bench/RESULTS.md, "Figures behind
  // the rules").
  void BarFromLane(Entry* e) {
    const bool for_growth =
        e == growth_beneficiary_ ||
        std::find(growth_listed_.begin(), growth_listed_.end(), e) != growth_listed_.end();
    Slot(e).lane_barred = !for_growth;
  }

  // A quantum ends with a demotion. The last level has none to mark it, so
  // there, as in a classic MLFQ's round-robin bottom queue, one ends with
  // each base quantum of service since admission. Without that, a job that
  // reached the last level (or joined it: a long prompt, or a long predicted
  // output) and was admitted kept its slot to the end, and every later short
  // job waited behind it: on FastServe's heavy-tailed workload that cost most
  // of MLFQ's mean and tail JCT gain over FIFO (figures: bench/RESULTS.md,
  // "Figures behind the rules").
  bool QuantumEnded(const MlfqSlot& c) const {
    return c.demoted_while_running ||
           (c.level == options_.num_levels - 1 &&
            c.served - c.served_at_admission >= quanta_[0]);
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

  // Attained service; demotes once it exceeds the level's bound (the last
  // level keeps everyone).
  void AddService(Entry* e, double units) {
    MlfqSlot& slot = Slot(e);
    slot.served += units;
    if (slot.level < options_.num_levels - 1 && slot.served > quanta_[slot.level]) {
      Demote(e);
    }
  }

  // Service past the level's bound: down to the level that holds the
  // service attained. Kept out of line so that the charge path, run for
  // every sequence of every step, stays free of the heap's register spills.
  [[gnu::noinline]] void Demote(Entry* e) {
    MlfqSlot& slot = Slot(e);
    if (e->running) running_[slot.level].Erase(e);
    slot.level = LevelFor(slot.served);
    if (e->running) {
      slot.demoted_while_running = true;
      Push(running_[slot.level], e);
    }
  }

  // The most urgent level whose bound covers `service` (the last level
  // when none does). O(levels).
  int32_t LevelFor(double service) const {
    int32_t level = 0;
    while (level + 1 < options_.num_levels && quanta_[level] < service) ++level;
    return level;
  }

  // A new request enters the level of the service it is expected to need:
  // its prefill cost, plus its predicted output's decode cost when the host
  // predicted one (and the options let predictions count).
  void SkipJoin(Entry* e) {
    if (e->index >= static_cast<int32_t>(slots_->size())) {
      slots_->resize(e->index + 1);
    }
    double estimate = e->prompt_tokens * options_.prefill_token_cost;
    if (options_.use_predicted_output) {
      estimate += e->predicted_output_tokens * options_.decode_token_cost;
    }
    Slot(e) = MlfqSlot{.level = LevelFor(estimate)};
  }

  MlfqOptions options_;
  std::shared_ptr<MlfqSlots> slots_;
  std::vector<double> quanta_;
  // Per level: offerable waiting entries and running entries.
  std::vector<WaitingHeap> waiting_;
  std::vector<RunningHeap> running_;
  // Every offerable waiting entry, for the starving lane.
  AllWaitingHeap all_waiting_;
  // Time-slicing preemptions still allowed in this admission phase.
  int32_t preemptions_left_ = 0;
  absl::Time now_ = absl::InfinitePast();
  // The starving lane's credit in admissions (<= 0): it may admit while
  // the credit is 0 (within rounding), and the last entry it offered.
  double starving_credit_ = 0;
  Entry* starving_pick_ = nullptr;
  // The last victim question, when it was for a running request's growth:
  // its beneficiary and the victims named (at most one per level); null and
  // empty after any other question.
  const Entry* growth_beneficiary_ = nullptr;
  std::vector<const Entry*> growth_listed_;
};

}  // namespace

NodeFactory MlfqLeafFactory(const MlfqOptions& options) {
  auto slots = std::make_shared<MlfqSlots>();
  return [options, slots] { return std::make_unique<MlfqNode>(options, slots); };
}

}  // namespace hearth::policy_internal
