// File: tests/policy/policy_driver.h
//
// A small stand-in for the scheduler core that drives a hearth::Policy
// through its interface only, so policies can be tested without the core:
// requests arrive at given steps, admission asks the policy (preempting
// through PickVictim when the sequence cap is reached), every step serves
// decodes first and then prefill chunks under a token budget, reports
// OnServed and removes finished requests.
//
// It also checks the policy's side of the contract on every call: offered
// candidates are waiting and not declined, victims are running and not the
// beneficiary, and the policy offers a candidate whenever an undeclined
// request waits (work conservation). Violations are collected in errors().

#ifndef HEARTH_TESTS_POLICY_POLICY_DRIVER_H_
#define HEARTH_TESTS_POLICY_POLICY_DRIVER_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "hearth/policy/policy.h"
#include "hearth/policy/policy_tree.h"
#include "hearth/request/request_view.h"
#include "hearth/scheduler/scheduler_options.h"
#include "tests/testing/request_builder.h"

namespace hearth::testing_policy {

struct DriverOptions {
  // Sequence cap: running requests at most.
  int32_t max_running = 8;
  // Tokens served per step (decodes first, then prefill chunks).
  int32_t token_budget = 256;
  // Largest prefill chunk of one request in one step.
  int32_t max_chunk = 256;
  // KV capacity in tokens held by running requests; 0 = unlimited. When a
  // decode cannot grow, the driver asks PickVictim(b, true) and preempts the
  // victim, or the beneficiary itself.
  int32_t kv_capacity_tokens = 0;
  absl::Duration step_time = absl::Milliseconds(10);
  // Whether a preempted request loses its progress (recompute) or keeps it.
  bool recompute = false;
  // Chance that the driver declines an offered candidate.
  double decline_probability = 0;
  // Chance per step that one random live request is cancelled.
  double cancel_probability = 0;
  uint64_t seed = 1;
};

struct DriverRequest {
  RequestView view;
  int32_t output_len = 0;
  int64_t arrival_step = 0;
  int64_t first_admit_step = -1;
  int64_t finish_step = -1;
  // Steps spent waiting since it last became waiting, and the longest such
  // stretch.
  int64_t waiting_since_step = 0;
  int64_t longest_wait_steps = 0;
  bool arrived = false;
  bool done = false;
  int64_t prefill_served = 0;
  int64_t decode_served = 0;
};

class PolicyDriver {
 public:
  PolicyDriver(std::unique_ptr<Policy> policy, DriverOptions options)
      : policy_(std::move(policy)), options_(options), rng_(options.seed) {}

  // Adds a request that arrives at the start of step `arrival_step`, with
  // the fields testing::Spec takes (it produces exactly `max_new` tokens).
  // The driver serves one model and knows no workflows: REQUIREs that
  // `model` and `parent` are unset.
  RequestId AddAt(int64_t arrival_step, const testing::SpecFields& f) {
    REQUIRE(f.model == 0);
    REQUIRE(!f.parent.valid());
    DriverRequest r;
    r.view.id = RequestId(next_id_++);
    r.view.user = UserId(f.user);
    r.view.work_class = WorkClassId(f.work_class);
    r.view.model = ModelId(0);
    r.view.priority = f.priority;
    r.view.prompt_tokens = f.prompt;
    r.view.max_new_tokens = f.max_new;
    r.view.phase = RequestPhase::kQueued;
    r.output_len = f.max_new;
    r.arrival_step = std::max<int64_t>(arrival_step, step_);
    RequestId id = r.view.id;
    requests_.emplace(id.value(), std::move(r));
    pending_.emplace(requests_.at(id.value()).arrival_step, id);
    return id;
  }

  void Step() {
    absl::Time now = Now();
    Arrivals(now);
    MaybeCancel(now);
    Admission(now);
    Serve(now);
    ++step_;
  }

  // Called at every admission with the admitted request; the request is
  // still listed in waiting() during the call.
  void set_on_admit(std::function<void(RequestId)> on_admit) {
    on_admit_ = std::move(on_admit);
  }
  const std::vector<RequestId>& waiting() const { return waiting_; }
  const std::vector<RequestId>& running() const { return running_; }

  void Run(int64_t steps) {
    for (int64_t i = 0; i < steps; ++i) Step();
  }

  absl::Time Now() const {
    return absl::UnixEpoch() + options_.step_time * step_;
  }
  int64_t step() const { return step_; }
  // The host's output-length prediction for a request not yet arrived.
  void PredictOutput(RequestId id, int32_t expected_tokens) {
    Mut(id).view.predicted_output.expected_tokens = expected_tokens;
  }

  const DriverRequest& request(RequestId id) const {
    return requests_.at(id.value());
  }
  const std::map<uint64_t, DriverRequest>& requests() const {
    return requests_;
  }
  int32_t waiting_of_user(uint32_t user) const {
    int32_t n = 0;
    for (RequestId id : waiting_) n += request(id).view.user.value() == user;
    return n;
  }
  size_t waiting_count() const { return waiting_.size(); }
  size_t running_count() const { return running_.size(); }
  // Tokens served so far by user and by priority.
  const std::map<uint32_t, int64_t>& prefill_by_user() const { return prefill_by_user_; }
  const std::map<uint32_t, int64_t>& decode_by_user() const { return decode_by_user_; }
  const std::map<int32_t, int64_t>& tokens_by_priority() const { return tokens_by_priority_; }
  // Tokens served in the last step by priority.
  const std::map<int32_t, int64_t>& last_step_by_priority() const { return last_step_by_priority_; }
  const std::vector<std::string>& errors() const { return errors_; }
  int64_t preemptions() const { return preemptions_; }

 private:
  DriverRequest& Mut(RequestId id) { return requests_.at(id.value()); }

  void Error(std::string what) {
    if (errors_.size() < 20) errors_.push_back(absl::StrCat("step ", step_, ": ", what));
  }

  void Arrivals(absl::Time now) {
    while (!pending_.empty() && pending_.begin()->first <= step_) {
      RequestId id = pending_.begin()->second;
      pending_.erase(pending_.begin());
      DriverRequest& r = Mut(id);
      r.arrived = true;
      r.view.phase = RequestPhase::kWaiting;
      r.view.arrival_seq = next_seq_++;
      r.view.arrival_time = now;
      r.waiting_since_step = step_;
      waiting_.push_back(id);
      policy_->OnArrival(r.view, now);
    }
  }

  void MaybeCancel(absl::Time now) {
    if (options_.cancel_probability <= 0) return;
    if (std::uniform_real_distribution<double>(0, 1)(rng_) >=
        options_.cancel_probability) {
      return;
    }
    size_t live = waiting_.size() + running_.size();
    if (live == 0) return;
    size_t pick = std::uniform_int_distribution<size_t>(0, live - 1)(rng_);
    RequestId id = pick < waiting_.size() ? waiting_[pick]
                                          : running_[pick - waiting_.size()];
    Finish(id, now, RequestPhase::kCancelled);
  }

  void Finish(RequestId id, absl::Time now, RequestPhase phase) {
    DriverRequest& r = Mut(id);
    Erase(waiting_, id);
    Erase(running_, id);
    r.done = true;
    r.finish_step = step_;
    r.view.phase = phase;
    policy_->OnRemoved(r.view, now);
  }

  static void Erase(std::vector<RequestId>& v, RequestId id) {
    auto it = std::find(v.begin(), v.end(), id);
    if (it != v.end()) v.erase(it);
  }
  static bool Contains(const std::vector<RequestId>& v, RequestId id) {
    return std::find(v.begin(), v.end(), id) != v.end();
  }

  void Admission(absl::Time now) {
    policy_->BeginAdmission(now);
    absl::flat_hash_set<RequestId> declined;
    int32_t preempted_this_step = 0;
    for (int guard = 0; guard < 10000; ++guard) {
      RequestId id = policy_->NextAdmission();
      if (!id.valid()) {
        if (declined.size() < waiting_.size()) {
          Error(absl::StrCat("no candidate offered while ",
                             waiting_.size() - declined.size(),
                             " undeclined requests wait"));
        }
        break;
      }
      if (!Contains(waiting_, id) || declined.contains(id)) {
        Error(absl::StrCat("offered ", id.value(), " which is not an undeclined waiting request"));
        break;
      }
      if (options_.decline_probability > 0 &&
          std::uniform_real_distribution<double>(0, 1)(rng_) <
              options_.decline_probability) {
        declined.insert(id);
        policy_->Decline(id);
        continue;
      }
      if (static_cast<int32_t>(running_.size()) >= options_.max_running) {
        if (preempted_this_step >= options_.max_running) break;
        RequestId victim = policy_->PickVictim(id, /*beneficiary_running=*/false);
        if (!victim.valid()) break;
        if (!Contains(running_, victim)) {
          Error(absl::StrCat("victim ", victim.value(), " is not running"));
          break;
        }
        Preempt(victim, now);
        ++preempted_this_step;
      }
      Admit(id, now);
    }
    policy_->EndAdmission();
  }

  void Admit(RequestId id, absl::Time now) {
    if (on_admit_) on_admit_(id);
    DriverRequest& r = Mut(id);
    Erase(waiting_, id);
    running_.push_back(id);
    r.view.phase = RequestPhase::kRunning;
    if (r.first_admit_step < 0) r.first_admit_step = step_;
    r.longest_wait_steps =
        std::max(r.longest_wait_steps, step_ - r.waiting_since_step);
    policy_->OnAdmitted(r.view, now);
  }

  void Preempt(RequestId id, absl::Time now) {
    DriverRequest& r = Mut(id);
    Erase(running_, id);
    waiting_.push_back(id);
    ++preemptions_;
    ++r.view.preemptions;
    r.view.phase = RequestPhase::kWaiting;
    if (options_.recompute) r.view.computed_tokens = 0;
    r.waiting_since_step = step_;
    policy_->OnPreempted(r.view, now);
  }

  int64_t KvHeld() const {
    int64_t held = 0;
    for (RequestId id : running_) {
      const RequestView& v = request(id).view;
      held += v.computed_tokens;
    }
    return held;
  }

  // Decode growth under a KV capacity: the policy picks victims.
  bool MakeRoomFor(RequestId id, int32_t tokens, absl::Time now) {
    if (options_.kv_capacity_tokens <= 0) return true;
    for (int guard = 0; guard < 64; ++guard) {
      if (KvHeld() + tokens <= options_.kv_capacity_tokens) return true;
      RequestId victim = policy_->PickVictim(id, /*beneficiary_running=*/true);
      if (!victim.valid()) {
        Preempt(id, now);
        return false;
      }
      if (victim == id || !Contains(running_, victim)) {
        Error(absl::StrCat("bad victim ", victim.value(), " for running ", id.value()));
        Preempt(id, now);
        return false;
      }
      Preempt(victim, now);
    }
    return false;
  }

  void Serve(absl::Time now) {
    served_.clear();
    last_step_by_priority_.clear();
    int32_t budget = options_.token_budget;
    // Decodes first, then prefill chunks, as the core does.
    std::vector<RequestId> order = running_;
    for (int pass = 0; pass < 2; ++pass) {
      for (RequestId id : order) {
        if (!Contains(running_, id) || budget <= 0) continue;
        DriverRequest& r = Mut(id);
        RequestView& v = r.view;
        int32_t target = v.length() - (v.output_tokens > 0 ? 1 : 0);
        bool decoding = v.output_tokens > 0 && v.computed_tokens >= target;
        if ((pass == 0) != decoding) continue;
        int32_t tokens = decoding ? 1 : std::min({target - v.computed_tokens,
                                                  options_.max_chunk, budget});
        if (!MakeRoomFor(id, tokens, now)) continue;
        budget -= tokens;
        v.computed_tokens += tokens;
        ServedTokens s;
        s.id = id;
        s.user = v.user;
        s.work_class = v.work_class;
        s.prefill_tokens = decoding ? 0 : tokens;
        s.decode_tokens = decoding ? 1 : 0;
        served_.push_back(s);
        prefill_by_user_[v.user.value()] += s.prefill_tokens;
        decode_by_user_[v.user.value()] += s.decode_tokens;
        tokens_by_priority_[v.priority] += tokens;
        last_step_by_priority_[v.priority] += tokens;
        r.prefill_served += s.prefill_tokens;
        r.decode_served += s.decode_tokens;
        if (v.computed_tokens >= v.length() - (v.output_tokens > 0 ? 1 : 0)) {
          ++v.output_tokens;  // a sample ends every step that reaches the end
        }
      }
    }
    // As the core does: requests that finished this step are removed before
    // the step's service is reported.
    std::vector<RequestId> finished;
    for (RequestId id : running_) {
      if (request(id).view.output_tokens >= request(id).output_len) {
        finished.push_back(id);
      }
    }
    for (RequestId id : finished) Finish(id, now, RequestPhase::kFinished);
    policy_->OnServed(served_, now);
  }

  std::unique_ptr<Policy> policy_;
  DriverOptions options_;
  std::mt19937_64 rng_;
  int64_t step_ = 0;
  uint64_t next_id_ = 1;
  uint64_t next_seq_ = 0;
  std::map<uint64_t, DriverRequest> requests_;
  std::multimap<int64_t, RequestId> pending_;
  std::vector<RequestId> waiting_;
  std::vector<RequestId> running_;
  std::vector<ServedTokens> served_;
  std::map<uint32_t, int64_t> prefill_by_user_;
  std::map<uint32_t, int64_t> decode_by_user_;
  std::map<int32_t, int64_t> tokens_by_priority_;
  std::map<int32_t, int64_t> last_step_by_priority_;
  std::vector<std::string> errors_;
  int64_t preemptions_ = 0;
  std::function<void(RequestId)> on_admit_;
};

// Plain arrival order over all users and classes (a tree with only its
// request level): the control that fairness and MLFQ tests must beat.
inline std::unique_ptr<Policy> MakeArrivalOrder() {
  PolicyTreeConfig tree;
  tree.name = "arrival";
  tree.class_level = ClassLevel::kNone;
  tree.user_level = UserLevel::kNone;
  absl::StatusOr<PolicyFactory> factory = PolicyTreeFactory(tree);
  REQUIRE(factory.ok());
  return (*factory)(SchedulerOptions{});
}

}  // namespace hearth::testing_policy

#endif  // HEARTH_TESTS_POLICY_POLICY_DRIVER_H_
