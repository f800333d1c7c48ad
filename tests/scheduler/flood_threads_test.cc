// One member floods from its own thread, retrying refusals as fast as it
// can, while the engine runs and another member submits now and then. With
// default intake options the other member is never refused and its request
// is in the very next plan. Run under TSan in CI (tag [threads]).

#include <atomic>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/exec/step_outcome_fill.h"
#include "hearth/scheduler/scheduler.h"
#include "scheduler/scheduler_peer.h"

namespace hearth {
namespace {

TEST_CASE("A flooding member delays nobody else's admission", "[scheduler][threads]") {
  SchedulerOptions o;  // Defaults but the household's members.
  o.users = {{.name = "flood"}, {.name = "bob"}};
  o.max_pending_requests = 2048;  // Small enough that the flood hits it.
  auto sched = *Scheduler::Create(o);
  constexpr int kFlood = 20000;
  std::atomic<int> accepted{0};
  std::atomic<int> refusals{0};
  std::thread flood([&] {
    RequestSpec s;
    s.user = UserId(0);
    s.prompt_tokens = 16;
    s.max_new_tokens = 2;
    while (accepted.load() < kFlood) {
      if (sched->Submit(s).ok()) {
        ++accepted;
      } else {
        ++refusals;
      }
    }
  });

  StepOutcome outcome;
  std::vector<RequestResult> results;
  absl::Time now = absl::UnixEpoch();
  int bob_submitted = 0, bob_refused = 0, bob_late = 0;
  size_t ended = 0;
  for (int step = 0; step < 1000000; ++step) {
    RequestId bob;
    if (step % 7 == 0 && accepted.load() < kFlood) {
      RequestSpec s;
      s.user = UserId(1);
      s.prompt_tokens = 16;
      s.max_new_tokens = 2;
      absl::StatusOr<RequestId> id = sched->Submit(s);
      ++bob_submitted;
      if (id.ok()) bob = *id; else ++bob_refused;
    }
    absl::StatusOr<const StepPlan*> plan = sched->Plan(now);
    REQUIRE(plan.ok());
    StartStepOutcome(**plan, &outcome);
    bool bob_planned = false;
    for (const ScheduledSequence& seq : (*plan)->sequences) {
      bob_planned |= seq.id == bob;
      SequenceOutcome& so = outcome.sequences.emplace_back();
      so.id = seq.id;
      if (seq.sample) RecordSampledToken(1, false, so);
    }
    if (bob.valid() && !bob_planned) ++bob_late;
    REQUIRE(sched->Complete(outcome).ok());
    now += absl::Milliseconds(5);
    ended += sched->DrainResults(&results);
    if (accepted.load() >= kFlood && ended == static_cast<size_t>(accepted.load()) +
                                                  static_cast<size_t>(bob_submitted - bob_refused)) {
      break;
    }
  }
  flood.join();
  INFO("flood refusals " << refusals.load() << ", bob submitted " << bob_submitted);
  CHECK(refusals.load() > 0);  // The flood did reach its limit.
  CHECK(bob_submitted > 0);
  CHECK(bob_refused == 0);
  CHECK(bob_late == 0);
  REQUIRE(sched->CheckInvariants().ok());
  CHECK(internal::SchedulerPeer::allocator(*sched).num_owned() == 0);
}

}  // namespace
}  // namespace hearth
