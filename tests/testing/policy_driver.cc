#include "tests/testing/policy_driver.h"

#include <algorithm>
#include <utility>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "hearth/policy/policy_tree.h"

namespace hearth::testing_policy {
namespace {

// Registry entries every driven core has at least: tests name users and
// classes by number without configuring them, as they did when the policy
// alone was driven.
constexpr size_t kMinUsers = 8;
constexpr size_t kMinClasses = 8;
constexpr int32_t kBlockSize = 16;

SchedulerOptions CoreOptions(const DriverOptions& d, SchedulerOptions o) {
  while (o.users.size() < kMinUsers) {
    o.users.push_back({.name = absl::StrCat("driver-user-", o.users.size())});
  }
  while (o.work_classes.size() < kMinClasses) {
    o.work_classes.push_back({.name = absl::StrCat("driver-class-", o.work_classes.size())});
  }
  o.max_running = d.max_running;
  o.max_batched_tokens = d.token_budget;
  o.max_prefill_chunk_tokens = d.max_chunk;
  o.kv.block_size = kBlockSize;
  const int32_t context = o.models[0].context_length;
  o.kv.num_device_blocks = d.kv_capacity_tokens > 0
                               ? d.kv_capacity_tokens / kBlockSize
                               : d.max_running * ((context + kBlockSize - 1) / kBlockSize);
  o.preemption_mode = d.recompute ? PreemptionMode::kRecompute : PreemptionMode::kSwap;
  o.kv.num_host_blocks = d.recompute ? 0 : 8 * o.kv.num_device_blocks;
  o.max_intake_per_plan = 1 << 20;
  return o;
}

void Erase(std::vector<RequestId>& v, RequestId id) {
  auto it = std::find(v.begin(), v.end(), id);
  if (it != v.end()) v.erase(it);
}

}  // namespace

PolicyDriver::PolicyDriver(PolicyFactory factory, DriverOptions options,
                           SchedulerOptions registries)
    : options_(options), rng_(options.seed), executor_(options.seed) {
  REQUIRE(factory);
  SchedulerOptions o = CoreOptions(options_, std::move(registries));
  testing::PolicyObserver* observer = this;
  o.policy_factory = [this, observer, factory = std::move(factory)](const SchedulerOptions& built) {
    auto checking = std::make_unique<testing::ContractCheckingPolicy>(factory(built), observer);
    checking_ = checking.get();
    return std::unique_ptr<Policy>(std::move(checking));
  };
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(std::move(o));
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  scheduler_ = std::move(*s);
  REQUIRE(checking_ != nullptr);
  checker_ = std::make_unique<testing::PlanChecker>(scheduler_->options());
}

PolicyDriver::~PolicyDriver() = default;

RequestId PolicyDriver::AddAt(int64_t arrival_step, const testing::SpecFields& f) {
  REQUIRE(f.model == 0);
  REQUIRE(!f.parent.valid());
  const RequestId id(next_id_++);
  DriverRequest& r = requests_[id.value()];
  r.view.user = UserId(f.user);
  r.view.work_class = WorkClassId(f.work_class);
  r.view.priority = f.priority;
  r.view.prompt_tokens = f.prompt;
  r.view.max_new_tokens = f.max_new;
  r.output_len = f.max_new;
  r.arrival_step = std::max(arrival_step, step_);
  Pending p{id, testing::Spec(f)};
  // Results name the request by the host's handle: the driver's id.
  p.spec.handle = id.value();
  pending_.emplace(r.arrival_step, std::move(p));
  return id;
}

PolicyDriver::Pending& PolicyDriver::PendingOf(RequestId id) {
  for (auto& [step, p] : pending_) {
    if (p.id == id) return p;
  }
  FAIL("request " << id.value() << " has already arrived");
  return pending_.begin()->second;
}

void PolicyDriver::PredictOutput(RequestId id, int32_t expected_tokens) {
  PendingOf(id).spec.predicted_output.expected_tokens = expected_tokens;
  requests_.at(id.value()).view.predicted_output.expected_tokens = expected_tokens;
}

void PolicyDriver::StopAfter(RequestId id, int32_t tokens) {
  PendingOf(id).stop_after = tokens;
  requests_.at(id.value()).output_len = tokens;
}

RequestId PolicyDriver::core_id(RequestId id) const {
  auto it = core_id_.find(id);
  REQUIRE(it != core_id_.end());
  return it->second;
}

int32_t PolicyDriver::waiting_of_user(uint32_t user) const {
  int32_t n = 0;
  for (RequestId id : waiting_) n += request(id).view.user.value() == user;
  return n;
}

void PolicyDriver::Error(std::string what) {
  if (errors_.size() < 20) errors_.push_back(absl::StrCat("step ", step_, ": ", what));
}

DriverRequest& PolicyDriver::Of(RequestId core) {
  return requests_.at(driver_id_.at(core).value());
}

void PolicyDriver::Step() {
  SubmitArrivals();
  MaybeCancel();
  last_step_by_priority_.clear();
  absl::StatusOr<const StepPlan*> plan = scheduler_->Plan(Now());
  if (!plan.ok()) FAIL("Plan at step " << step_ << ": " << plan.status());
  if (absl::Status s = checker_->CheckPlan(**plan); !s.ok()) Error(std::string(s.message()));
  StepOutcome outcome;
  if (absl::Status s = executor_.Execute(**plan, &outcome); !s.ok()) FAIL(s.ToString());
  if (absl::Status s = scheduler_->Complete(outcome); !s.ok()) {
    FAIL("Complete at step " << step_ << ": " << s);
  }
  checker_->AfterComplete(**plan, outcome);
  CollectResults();
  ++step_;
}

void PolicyDriver::Run(int64_t steps) {
  for (int64_t i = 0; i < steps; ++i) Step();
  if (absl::Status s = scheduler_->CheckInvariants(); !s.ok()) Error(std::string(s.message()));
}

void PolicyDriver::SubmitArrivals() {
  while (!pending_.empty() && pending_.begin()->first <= step_) {
    Pending p = std::move(pending_.begin()->second);
    pending_.erase(pending_.begin());
    absl::StatusOr<RequestId> core = scheduler_->Submit(p.spec);
    if (!core.ok()) FAIL("Submit of " << p.id.value() << ": " << core.status());
    driver_id_[*core] = p.id;
    core_id_[p.id] = *core;
    if (p.stop_after > 0) executor_.SetStopAfter(*core, p.stop_after);
  }
}

void PolicyDriver::MaybeCancel() {
  if (options_.cancel_probability <= 0) return;
  if (std::uniform_real_distribution<double>(0, 1)(rng_) >= options_.cancel_probability) return;
  const size_t live = waiting_.size() + running_.size();
  if (live == 0) return;
  const size_t pick = std::uniform_int_distribution<size_t>(0, live - 1)(rng_);
  const RequestId id = pick < waiting_.size() ? waiting_[pick] : running_[pick - waiting_.size()];
  if (absl::Status s = scheduler_->Cancel(core_id(id)); !s.ok()) {
    Error(absl::StrCat("Cancel of ", id.value(), ": ", s.ToString()));
  }
}

void PolicyDriver::CollectResults() {
  results_.clear();
  scheduler_->DrainResults(&results_);
  for (const RequestResult& result : results_) {
    DriverRequest& r = requests_.at(result.handle);
    r.done = true;
    r.finish_step = step_;
    r.view.phase = result.phase;
    r.view.preemptions = result.preemptions;
    r.view.output_tokens = result.output_tokens;
  }
}

void PolicyDriver::Arrived(const RequestView& view) {
  const RequestId id = driver_id_.at(view.id);
  DriverRequest& r = requests_.at(id.value());
  r.view = view;
  r.arrived = true;
  r.waiting_since_step = step_;
  waiting_.push_back(id);
}

void PolicyDriver::Admitted(const RequestView& view) {
  const RequestId id = driver_id_.at(view.id);
  if (on_admit_) on_admit_(id);
  DriverRequest& r = requests_.at(id.value());
  r.view = view;
  if (r.first_admit_step < 0) r.first_admit_step = step_;
  r.longest_wait_steps = std::max(r.longest_wait_steps, step_ - r.waiting_since_step);
  Erase(waiting_, id);
  running_.push_back(id);
}

void PolicyDriver::Preempted(const RequestView& view) {
  const RequestId id = driver_id_.at(view.id);
  DriverRequest& r = requests_.at(id.value());
  r.view = view;
  r.waiting_since_step = step_;
  ++preemptions_;
  Erase(running_, id);
  waiting_.push_back(id);
}

void PolicyDriver::Removed(const RequestView& view) {
  const RequestId id = driver_id_.at(view.id);
  requests_.at(id.value()).view = view;
  Erase(waiting_, id);
  Erase(running_, id);
}

void PolicyDriver::Served(absl::Span<const ServedTokens> served) {
  for (const ServedTokens& s : served) {
    DriverRequest& r = Of(s.id);
    const int32_t tokens = s.prefill_tokens + s.decode_tokens;
    prefill_by_user_[s.user.value()] += s.prefill_tokens;
    decode_by_user_[s.user.value()] += s.decode_tokens;
    tokens_by_priority_[r.view.priority] += tokens;
    last_step_by_priority_[r.view.priority] += tokens;
    r.prefill_served += s.prefill_tokens;
    r.decode_served += s.decode_tokens;
  }
}

PolicyFactory MakeArrivalOrder() {
  PolicyTreeConfig tree;
  tree.name = "arrival";
  tree.class_level = ClassLevel::kNone;
  tree.user_level = UserLevel::kNone;
  absl::StatusOr<PolicyFactory> factory = PolicyTreeFactory(tree);
  REQUIRE(factory.ok());
  return *factory;
}

}  // namespace hearth::testing_policy
