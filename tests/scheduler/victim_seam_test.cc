// The policy seam for borrow reclaim: the core lists the borrowers it may
// reclaim, oldest borrower first, and preempts the one the policy names —
// and only a listed one.

#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/policy/fifo.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;

// FIFO for every decision but the reclaim victim, which `pick` chooses from
// the listed borrowers; remembers each list it was offered.
class ReclaimPicker final : public Policy {
 public:
  enum class Pick { kDefault, kOldest, kNone, kUnlisted };
  explicit ReclaimPicker(Pick pick, std::vector<std::vector<RequestId>>* offers)
      : inner_(NewFifoPolicy()), pick_(pick), offers_(offers) {}

  std::string_view name() const override { return "reclaim-picker"; }
  void OnArrival(const RequestView& r, absl::Time now) override { inner_->OnArrival(r, now); }
  void OnAdmitted(const RequestView& r, absl::Time now) override { inner_->OnAdmitted(r, now); }
  void OnPreempted(const RequestView& r, absl::Time now) override { inner_->OnPreempted(r, now); }
  void OnRemoved(const RequestView& r, absl::Time now) override { inner_->OnRemoved(r, now); }
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
  RequestId PickReclaimVictim(const RequestView& beneficiary,
                              absl::Span<const RequestView> borrowers) override {
    std::vector<RequestId>& offer = offers_->emplace_back();
    for (const RequestView& b : borrowers) offer.push_back(b.id);
    switch (pick_) {
      case Pick::kDefault: return Policy::PickReclaimVictim(beneficiary, borrowers);
      case Pick::kOldest: return borrowers.front().id;
      case Pick::kNone: return RequestId();
      case Pick::kUnlisted: return beneficiary.id;
    }
    return RequestId();
  }

 private:
  std::unique_ptr<Policy> inner_;
  Pick pick_;
  std::vector<std::vector<RequestId>>* offers_;
};

struct Run {
  std::vector<RequestId> maintenance;
  RequestId voice;
  std::vector<std::vector<RequestId>> offers;
  std::unique_ptr<SchedulerHarness> harness;
};

// Four maintenance sequences fill every slot (one within the class's cap,
// three borrowing, in submission order); then a voice request needs a slot.
std::unique_ptr<Run> Borrowed(ReclaimPicker::Pick pick) {
  auto run = std::make_unique<Run>();
  SchedulerOptions o;
  o.max_running = 4;
  o.work_classes = {{.name = "maintenance", .max_running = 1, .borrow = true},
                    {.name = "voice", .max_running = 4}};
  auto* offers = &run->offers;
  o.policy_factory = [pick, offers](const auto&...) {
    return std::make_unique<ReclaimPicker>(pick, offers);
  };
  auto h = SchedulerHarness::Create(std::move(o));
  REQUIRE(h.ok());
  run->harness = std::move(*h);
  RequestSpec spec;
  spec.prompt_tokens = 8;
  spec.max_new_tokens = 200;
  for (int i = 0; i < 4; ++i) run->maintenance.push_back(*run->harness->Submit(spec));
  REQUIRE(run->harness->Step().ok());
  spec.work_class = WorkClassId(1);
  spec.max_new_tokens = 5;
  run->voice = *run->harness->Submit(spec);
  REQUIRE(run->harness->Step().ok());
  return run;
}

RequestPhase PhaseOf(Run& run, RequestId id) {
  auto v = run.harness->scheduler().GetRequest(id);
  REQUIRE(v.ok());
  return v->phase;
}

TEST_CASE("The policy is offered the borrowers, oldest first, and its pick is preempted",
          "[scheduler][classes][seam]") {
  auto run = Borrowed(ReclaimPicker::Pick::kOldest);
  REQUIRE(run->offers.size() == 1);
  const std::vector<RequestId> borrowers(run->maintenance.begin() + 1, run->maintenance.end());
  CHECK(run->offers[0] == borrowers);
  CHECK(PhaseOf(*run, run->voice) == RequestPhase::kRunning);
  CHECK(PhaseOf(*run, run->maintenance[1]) == RequestPhase::kWaiting);
  CHECK(PhaseOf(*run, run->maintenance[3]) == RequestPhase::kRunning);
}

TEST_CASE("By default the newest borrower is reclaimed", "[scheduler][classes][seam]") {
  auto run = Borrowed(ReclaimPicker::Pick::kDefault);
  CHECK(PhaseOf(*run, run->voice) == RequestPhase::kRunning);
  CHECK(PhaseOf(*run, run->maintenance[3]) == RequestPhase::kWaiting);
  CHECK(PhaseOf(*run, run->maintenance[1]) == RequestPhase::kRunning);
}

TEST_CASE("A reclaim pick outside the list preempts nobody through reclaim",
          "[scheduler][classes][seam]") {
  for (auto pick : {ReclaimPicker::Pick::kNone, ReclaimPicker::Pick::kUnlisted}) {
    auto run = Borrowed(pick);
    CHECK(run->offers.size() >= 1);
    // FIFO's own victim order then decides: it ranks no earlier arrival
    // below the voice request, so everyone keeps running and voice waits.
    CHECK(PhaseOf(*run, run->voice) == RequestPhase::kWaiting);
    for (RequestId m : run->maintenance) CHECK(PhaseOf(*run, m) == RequestPhase::kRunning);
    CHECK(run->harness->last_plan().preempted.empty());
    REQUIRE(run->harness->RunUntilIdle().ok());
    CHECK(run->harness->results().at(run->voice).phase == RequestPhase::kFinished);
  }
}

}  // namespace
}  // namespace hearth
