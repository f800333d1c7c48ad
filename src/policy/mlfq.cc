// File: src/policy/mlfq.cc
//
// Skip-join preemptive MLFQ (FastServe) as a policy-tree leaf, and the
// standalone "mlfq" policy (a tree of this leaf alone).

#include "hearth/policy/mlfq.h"

#include <cmath>
#include <memory>
#include <tuple>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hearth/policy/policy_tree.h"
#include "policy/internal/policy_node.h"

namespace hearth {
namespace policy_internal {
namespace {

class MlfqNode final : public Node {
 public:
  explicit MlfqNode(const MlfqOptions& options)
      : options_(options), waiting_(options.num_levels) {
    double quantum = options.base_quantum;
    for (int32_t i = 0; i < options.num_levels; ++i) {
      quanta_.push_back(quantum);
      quantum *= 2;
    }
  }

  void AddWaiting(Entry* e, bool fresh) override {
    if (e->mlfq_level < 0) SkipJoin(e);
    waiting_[e->mlfq_level].emplace(WaitKey(e), e);
  }
  void RemoveWaiting(Entry* e, bool for_good) override {
    if (!e->declined) waiting_[e->mlfq_level].erase(WaitKey(e));
  }
  void AddRunning(Entry* e) override {
    e->mlfq_promoted = false;
    e->mlfq_demoted_while_running = false;
    running_.emplace(RunKey(e), e);
  }
  void RemoveRunning(Entry* e) override { running_.erase(RunKey(e)); }

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
    // Each level is ordered by waiting time, so only heads can be starving.
    for (int32_t level = 1; level < options_.num_levels; ++level) {
      auto& queue = waiting_[level];
      while (!queue.empty()) {
        Entry* head = queue.begin()->second;
        if (now - head->waiting_since <= options_.starvation_bound) break;
        queue.erase(queue.begin());
        head->mlfq_level = 0;
        head->mlfq_served = 0;
        head->mlfq_promoted = true;
        waiting_[0].emplace(WaitKey(head), head);
      }
    }
  }

  Entry* Best() override {
    for (auto& queue : waiting_) {
      if (!queue.empty()) return queue.begin()->second;
    }
    return nullptr;
  }

  Entry* Victim(const Entry* beneficiary, bool beneficiary_running) override {
    if (running_.empty()) return nullptr;
    // Lowest level, latest arrival.
    Entry* candidate = running_.rbegin()->second;
    if (beneficiary == nullptr) return candidate;
    if (beneficiary_running) return GrowthVictim(beneficiary);
    // A promoted request waits for a free slot instead: if promotion could
    // preempt, two long jobs recomputing after each preemption could take
    // turns forever without finishing. Demotions only lower levels, so
    // preemptions between promotions are finite.
    if (beneficiary->mlfq_promoted) return nullptr;
    // As in FastServe, a job yields to more urgent work at the end of a
    // quantum: one admitted (or resumed) and not yet demoted since keeps
    // running, so every admission buys at least a quantum of service and
    // recompute preemption cannot undo each admission at once.
    if (preemptions_left_ > 0 && candidate->mlfq_level > beneficiary->mlfq_level &&
        candidate->mlfq_demoted_while_running) {
      --preemptions_left_;
      return candidate;
    }
    return nullptr;
  }

 private:
  // Memory for a running request's growth: a running request that arrived
  // later, from the lowest level that has one (latest arrival first). Levels
  // move, arrival order does not; keeping victims later in arrival order
  // means the earliest running request is never displaced and finishes, so
  // recompute preemption cannot cycle. O(levels * log n).
  Entry* GrowthVictim(const Entry* beneficiary) const {
    for (int32_t level = options_.num_levels - 1; level >= 0; --level) {
      auto it = running_.lower_bound(RunKeyType{level + 1, 0});
      if (it == running_.begin()) continue;
      --it;
      Entry* latest = it->second;
      if (latest->mlfq_level == level &&
          latest->arrival_seq > beneficiary->arrival_seq) {
        return latest;
      }
    }
    return nullptr;
  }

  using WaitKeyType = std::tuple<absl::Time, uint64_t>;
  using RunKeyType = std::tuple<int32_t, uint64_t>;
  static WaitKeyType WaitKey(const Entry* e) {
    return {e->waiting_since, e->arrival_seq};
  }
  static RunKeyType RunKey(const Entry* e) {
    return {e->mlfq_level, e->arrival_seq};
  }

  // Service at the current level; demotes once it exceeds the quantum (the
  // last level keeps everyone).
  void AddService(Entry* e, double units) {
    e->mlfq_served += units;
    if (e->mlfq_level < options_.num_levels - 1 &&
        e->mlfq_served > quanta_[e->mlfq_level]) {
      Demote(e);
    }
  }

  // Quantum used up: one level down, with a fresh quantum there. Kept out
  // of line so that the charge path, run for every sequence of every step,
  // stays free of the btree's register spills.
  [[gnu::noinline]] void Demote(Entry* e) {
    if (e->running) running_.erase(RunKey(e));
    ++e->mlfq_level;
    e->mlfq_served = 0;
    if (e->running) {
      e->mlfq_demoted_while_running = true;
      running_.emplace(RunKey(e), e);
    }
  }

  // The highest level whose quantum covers the estimated prefill cost.
  void SkipJoin(Entry* e) {
    double cost = e->prompt_tokens * options_.prefill_token_cost;
    int32_t level = 0;
    while (level + 1 < options_.num_levels && quanta_[level] < cost) ++level;
    e->mlfq_level = level;
    e->mlfq_served = 0;
  }

  MlfqOptions options_;
  std::vector<double> quanta_;
  // Offerable waiting entries per level, longest waiting first.
  std::vector<absl::btree_map<WaitKeyType, Entry*>> waiting_;
  // Running entries by (level, arrival): the last one is the first victim.
  absl::btree_map<RunKeyType, Entry*> running_;
  // Time-slicing preemptions still allowed in this admission phase.
  int32_t preemptions_left_ = 0;
};

}  // namespace

std::unique_ptr<Node> NewMlfqNode(const MlfqOptions& options) {
  return std::make_unique<MlfqNode>(options);
}

}  // namespace policy_internal

absl::Status ValidateMlfqOptions(const MlfqOptions& options) {
  if (options.num_levels < 1 || options.num_levels > 32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MlfqOptions::num_levels is ", options.num_levels,
        "; it must be in [1, 32]"));
  }
  if (!std::isfinite(options.base_quantum) || options.base_quantum <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MlfqOptions::base_quantum is ", options.base_quantum,
        "; it must be finite and > 0"));
  }
  if (!std::isfinite(options.prefill_token_cost) ||
      options.prefill_token_cost < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MlfqOptions::prefill_token_cost is ", options.prefill_token_cost,
        "; it must be finite and >= 0"));
  }
  if (!std::isfinite(options.decode_token_cost) ||
      options.decode_token_cost < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MlfqOptions::decode_token_cost is ", options.decode_token_cost,
        "; it must be finite and >= 0"));
  }
  if (options.max_preemptions_per_step < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MlfqOptions::max_preemptions_per_step is ", options.max_preemptions_per_step,
        "; it must be >= 0 (0 turns time-slicing off)"));
  }
  if (options.starvation_bound <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MlfqOptions::starvation_bound is ",
        absl::FormatDuration(options.starvation_bound),
        "; it must be > 0 (InfiniteDuration() disables promotion)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<PolicyFactory> MlfqPolicyFactory(const MlfqOptions& options) {
  PolicyTreeConfig tree;
  tree.name = "mlfq";
  tree.class_level = ClassLevel::kNone;
  tree.user_level = UserLevel::kNone;
  tree.request_level = RequestLevel::kMlfq;
  tree.mlfq = options;
  return PolicyTreeFactory(tree);
}

}  // namespace hearth
