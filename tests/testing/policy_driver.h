// File: tests/testing/policy_driver.h
//
// Drives a policy through the real core (hearth::Scheduler, with the fake
// engine of fake_executor.h) on a step clock, so policy tests can say "this
// request arrives at step 100" and read per-request and per-user outcomes
// by step. Requests are submitted at their arrival step; every plan is
// checked (PlanChecker), and the policy is wrapped in ContractCheckingPolicy,
// whose violations, like the plan checker's, are collected in errors().
//
// Ids: AddAt returns the driver's own ids, 1, 2, ... in the order requests
// are added, which every accessor here speaks. The core numbers requests
// as they are submitted, at their arrival steps, so a test that asks the
// policy itself about a request translates with core_id().

#ifndef HEARTH_TESTS_TESTING_POLICY_DRIVER_H_
#define HEARTH_TESTS_TESTING_POLICY_DRIVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "hearth/policy/policy.h"
#include "hearth/request/request_view.h"
#include "hearth/scheduler/scheduler.h"
#include "hearth/scheduler/scheduler_options.h"
#include "tests/testing/contract_checking_policy.h"
#include "tests/testing/fake_executor.h"
#include "tests/testing/plan_checker.h"
#include "tests/testing/request_builder.h"

namespace hearth::testing_policy {

// The machine, as the SchedulerOptions fields each one sets.
struct DriverOptions {
  // SchedulerOptions::max_running.
  int32_t max_running = 8;
  // SchedulerOptions::max_batched_tokens: decodes plus prefill chunks.
  int32_t token_budget = 256;
  // SchedulerOptions::max_prefill_chunk_tokens.
  int32_t max_chunk = 256;
  // KV capacity in tokens: kv.num_device_blocks of 16 tokens, rounded down.
  // 0: room for max_running sequences of the model's whole context, so
  // memory never binds.
  int32_t kv_capacity_tokens = 0;
  // The clock: step s plans at UnixEpoch() + s * step_time.
  absl::Duration step_time = absl::Milliseconds(10);
  // PreemptionMode::kRecompute (a preempted request loses its progress), or
  // kSwap with a host tier eight times the device's (it keeps it, unless
  // the core finds recomputing cheaper or the host tier full).
  bool recompute = false;
  // Chance per step that one random live request is cancelled
  // (Scheduler::Cancel) before the step's plan.
  double cancel_probability = 0;
  // Cancellations and the fake engine.
  uint64_t seed = 1;
};

struct DriverRequest {
  // The core's view as the policy was last shown it (at arrival, admission,
  // preemption or removal; its id is the core's); after the request ended,
  // its result's phase and preemptions.
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
  // Tokens the core reported serving it (Policy::OnServed).
  int64_t prefill_served = 0;
  int64_t decode_served = 0;
};

class PolicyDriver : private testing::PolicyObserver {
 public:
  // The core gets `registries`' models, users and work classes, padded with
  // default users and classes up to 8 of each (so a test may name users and
  // classes it does not configure), its other fields as given except the
  // ones DriverOptions sets, and max_intake_per_plan at its limit (every
  // request is taken in at its arrival step). `factory` builds the policy
  // from those options, as Scheduler::Create does.
  PolicyDriver(PolicyFactory factory, DriverOptions options, SchedulerOptions registries = {});
  PolicyDriver(const PolicyDriver&) = delete;
  PolicyDriver& operator=(const PolicyDriver&) = delete;
  ~PolicyDriver() override;

  // Adds a request submitted at the start of step `arrival_step` (or the
  // current step, if that has passed), with the fields testing::Spec takes.
  // It produces exactly `max_new` tokens unless StopAfter says otherwise.
  // The driver serves one model and knows no workflows: REQUIREs that
  // `model` and `parent` are unset.
  RequestId AddAt(int64_t arrival_step, const testing::SpecFields& f);
  // The host's output-length prediction (RequestSpec::predicted_output), for
  // a request not yet arrived; the core requires it within [1, max_new].
  void PredictOutput(RequestId id, int32_t expected_tokens);
  // The engine ends the request (stop token) after `tokens` outputs, which
  // the core learns only then; for a request not yet arrived.
  void StopAfter(RequestId id, int32_t tokens);

  // Submits the step's arrivals, maybe cancels, plans, runs the plan on the
  // fake engine and completes it.
  void Step();
  // Step() `steps` times, then the core's own audit (Scheduler::
  // CheckInvariants, O(requests + blocks): once per run, not per step).
  void Run(int64_t steps);

  // Called at every admission with the admitted request; the request is
  // still listed in waiting() during the call.
  void set_on_admit(std::function<void(RequestId)> on_admit) { on_admit_ = std::move(on_admit); }
  // The policy's waiting (swapped ones included) and running requests.
  const std::vector<RequestId>& waiting() const { return waiting_; }
  const std::vector<RequestId>& running() const { return running_; }

  absl::Time Now() const { return absl::UnixEpoch() + options_.step_time * step_; }
  int64_t step() const { return step_; }

  const DriverRequest& request(RequestId id) const { return requests_.at(id.value()); }
  const std::map<uint64_t, DriverRequest>& requests() const { return requests_; }
  // The core's id of a request that has arrived.
  RequestId core_id(RequestId id) const;
  // The policy the factory built (not the checking wrapper).
  Policy& policy() { return checking_->inner(); }
  int64_t declines() const { return checking_->declines(); }

  int32_t waiting_of_user(uint32_t user) const;
  size_t waiting_count() const { return waiting_.size(); }
  size_t running_count() const { return running_.size(); }
  // Tokens served so far by user and by priority (RequestView::priority).
  const std::map<uint32_t, int64_t>& prefill_by_user() const { return prefill_by_user_; }
  const std::map<uint32_t, int64_t>& decode_by_user() const { return decode_by_user_; }
  const std::map<int32_t, int64_t>& tokens_by_priority() const { return tokens_by_priority_; }
  // Tokens served in the last step by priority.
  const std::map<int32_t, int64_t>& last_step_by_priority() const { return last_step_by_priority_; }
  const std::vector<std::string>& errors() const { return errors_; }
  int64_t preemptions() const { return preemptions_; }

 private:
  struct Pending {
    RequestId id;
    RequestSpec spec;
    int32_t stop_after = 0;
  };

  // PolicyObserver.
  void Arrived(const RequestView& r) override;
  void Admitted(const RequestView& r) override;
  void Preempted(const RequestView& r) override;
  void Removed(const RequestView& r) override;
  void Served(absl::Span<const ServedTokens> served) override;
  void Violation(std::string what) override { Error(std::move(what)); }

  void Error(std::string what);
  Pending& PendingOf(RequestId id);
  DriverRequest& Of(RequestId core);
  void SubmitArrivals();
  void MaybeCancel();
  void CollectResults();

  DriverOptions options_;
  std::mt19937_64 rng_;
  testing::FakeExecutor executor_;
  std::unique_ptr<Scheduler> scheduler_;
  // Owned by scheduler_.
  testing::ContractCheckingPolicy* checking_ = nullptr;
  std::unique_ptr<testing::PlanChecker> checker_;
  int64_t step_ = 0;
  uint64_t next_id_ = 1;
  std::map<uint64_t, DriverRequest> requests_;
  // By arrival step, then in the order added.
  std::multimap<int64_t, Pending> pending_;
  absl::flat_hash_map<RequestId, RequestId> driver_id_;
  absl::flat_hash_map<RequestId, RequestId> core_id_;
  std::vector<RequestId> waiting_;
  std::vector<RequestId> running_;
  std::vector<RequestResult> results_;
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
PolicyFactory MakeArrivalOrder();

}  // namespace hearth::testing_policy

#endif  // HEARTH_TESTS_TESTING_POLICY_DRIVER_H_
