// The policy seam for preemption: Policy::ChooseVictim chooses, given the
// core's prices (PreemptionCosts), and the core preempts the answer only
// when its own prices allow it.

#include <memory>
#include <optional>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/container/flat_hash_set.h"
#include "hearth/policy/fifo.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;

// What one ChooseVictim call saw and answered.
struct Choice {
  VictimRequest request;
  // Prices of every request running when it was asked.
  std::vector<std::pair<RequestId, PreemptionPrice>> prices;
  RequestId answer;
};

// FIFO for everything but ChooseVictim, whose answer `pick` decides.
class VictimChooser final : public Policy {
 public:
  enum class Pick { kDefault, kOldestOther, kBeneficiary, kWaiting };
  VictimChooser(Pick pick, std::vector<Choice>* choices)
      : inner_(NewFifoPolicy()), pick_(pick), choices_(choices) {}

  std::string_view name() const override { return "victim-chooser"; }
  void OnArrival(const RequestView& r, absl::Time now) override {
    waiting_.insert(r.id);
    inner_->OnArrival(r, now);
  }
  void OnAdmitted(const RequestView& r, absl::Time now) override {
    waiting_.erase(r.id);
    running_.push_back(r.id);
    inner_->OnAdmitted(r, now);
  }
  void OnPreempted(const RequestView& r, absl::Time now) override {
    Forget(r.id);
    waiting_.insert(r.id);
    inner_->OnPreempted(r, now);
  }
  void OnRemoved(const RequestView& r, absl::Time now) override {
    Forget(r.id);
    waiting_.erase(r.id);
    inner_->OnRemoved(r, now);
  }
  void OnServed(absl::Span<const ServedTokens> s, absl::Time now) override {
    inner_->OnServed(s, now);
  }
  void BeginAdmission(absl::Time now) override { inner_->BeginAdmission(now); }
  RequestId NextAdmission() override { return inner_->NextAdmission(); }
  void Decline(RequestId id) override { inner_->Decline(id); }
  void EndAdmission() override { inner_->EndAdmission(); }
  RequestId PickVictim(RequestId beneficiary, bool running) override {
    return inner_->PickVictim(beneficiary, running);
  }

  RequestId ChooseVictim(const VictimRequest& request, const PreemptionCosts& costs) override {
    Choice& c = choices_->emplace_back();
    c.request = request;
    for (RequestId id : running_) c.prices.push_back({id, costs.Price(id)});
    c.answer = Answer(request, costs);
    return c.answer;
  }

 private:
  RequestId Answer(const VictimRequest& request, const PreemptionCosts& costs) {
    switch (pick_) {
      case Pick::kDefault: return Policy::ChooseVictim(request, costs);
      case Pick::kOldestOther:
        for (RequestId id : running_) {
          if (id != request.beneficiary) return id;
        }
        return RequestId();
      case Pick::kBeneficiary: return request.beneficiary;
      case Pick::kWaiting: return waiting_.empty() ? RequestId(999999) : *waiting_.begin();
    }
    return RequestId();
  }
  void Forget(RequestId id) { std::erase(running_, id); }

  std::unique_ptr<Policy> inner_;
  Pick pick_;
  std::vector<Choice>* choices_;
  std::vector<RequestId> running_;  // in admission order
  absl::flat_hash_set<RequestId> waiting_;
};

struct Pressure {
  std::vector<Choice> choices;
  std::vector<RequestId> ids;
  // The first plan that preempted, and the choice made for it.
  std::optional<testing::PlanCopy> plan;
  size_t choice_index = 0;
  std::unique_ptr<SchedulerHarness> harness;
};

// Four decoding sequences outgrow a 10-block pool: the oldest's growth is
// the first to find no block, and the policy is asked for a victim.
std::unique_ptr<Pressure> Grow(VictimChooser::Pick pick) {
  auto run = std::make_unique<Pressure>();
  SchedulerOptions o;
  o.max_running = 4;
  o.kv.num_device_blocks = 10;
  o.kv.watermark_blocks = 0;
  o.kv.growth_headroom_tokens = 0;
  auto* choices = &run->choices;
  o.policy_factory = [pick, choices](const auto&...) {
    return std::make_unique<VictimChooser>(pick, choices);
  };
  auto h = SchedulerHarness::Create(std::move(o));
  REQUIRE(h.ok());
  run->harness = std::move(*h);
  RequestSpec spec;
  spec.prompt_tokens = 16;
  spec.max_new_tokens = 64;
  for (int i = 0; i < 4; ++i) run->ids.push_back(*run->harness->Submit(spec));
  for (int step = 0; step < 200 && !run->plan; ++step) {
    const size_t asked = run->choices.size();
    REQUIRE(run->harness->Step().ok());
    if (!run->harness->last_plan().preempted.empty()) {
      run->plan = run->harness->last_plan();
      REQUIRE(run->choices.size() > asked);
      run->choice_index = asked;
    }
  }
  REQUIRE(run->plan.has_value());
  return run;
}

TEST_CASE("The core prices every running request but the beneficiary as preemptible",
          "[scheduler][seam][preemption]") {
  auto run = Grow(VictimChooser::Pick::kDefault);
  const Choice& c = run->choices[run->choice_index];
  CHECK(c.request.beneficiary_running);
  CHECK(c.request.reason == VictimReason::kPolicyOrder);
  CHECK(c.request.need_blocks >= 1);
  REQUIRE(c.prices.size() >= 2);
  for (const auto& [id, price] : c.prices) {
    if (id == c.request.beneficiary) {
      CHECK_FALSE(price.allowed);
      continue;
    }
    CHECK(price.allowed);
    CHECK(price.freed_blocks >= 1);
    // No host tier: the whole computed blocks are recomputed.
    CHECK(price.waste_tokens > 0);
    CHECK(static_cast<int64_t>(price.waste_tokens) % 16 == 0);
  }
}

TEST_CASE("The policy's allowed answer is the request preempted", "[scheduler][seam][preemption]") {
  auto run = Grow(VictimChooser::Pick::kOldestOther);
  const Choice& c = run->choices[run->choice_index];
  REQUIRE(c.answer.valid());
  REQUIRE(c.answer != c.request.beneficiary);
  CHECK(run->plan->preempted.front().id == c.answer);
  REQUIRE(run->harness->RunUntilIdle().ok());
  for (RequestId id : run->ids) {
    CHECK(run->harness->results().at(id).phase == RequestPhase::kFinished);
  }
}

TEST_CASE("An answer the prices do not allow preempts nobody for the beneficiary",
          "[scheduler][seam][preemption]") {
  for (auto pick : {VictimChooser::Pick::kBeneficiary, VictimChooser::Pick::kWaiting}) {
    auto run = Grow(pick);
    const Choice& c = run->choices[run->choice_index];
    // With no victim a growing request yields its own blocks.
    REQUIRE(c.request.beneficiary_running);
    CHECK(run->plan->preempted.front().id == c.request.beneficiary);
    for (const Preemption& p : run->plan->preempted) {
      CHECK((p.id != c.answer || p.id == c.request.beneficiary));
    }
    REQUIRE(run->harness->RunUntilIdle().ok());
    for (RequestId id : run->ids) {
      CHECK(run->harness->results().at(id).phase == RequestPhase::kFinished);
    }
  }
}

}  // namespace
}  // namespace hearth
