// One member's backlog under the household policy: another member's voice
// commands still start at once and meet their target, whatever the order of
// arrival, the backlog's stamped arrival times or live class changes. The
// shortage is the backlogged member's, not everyone's.

#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "hearth/exec/step_outcome_fill.h"
#include "hearth/policy/policy_registry.h"
#include "hearth/policy/policy_tree.h"
#include "hearth/scheduler/scheduler.h"
#include "tests/testing/request_builder.h"

namespace hearth {
namespace {

using testing::Spec;

constexpr absl::Duration kStep = absl::Milliseconds(20);

// How the backlog and the voice commands reach the scheduler.
struct Overload {
  // Bob's voice commands arrive this long after Alice's backlog (negative:
  // before it).
  absl::Duration voice_after = absl::Seconds(5);
  // Alice stamps her requests' arrival this much earlier than they reach
  // the scheduler (within SchedulerOptions::max_arrival_lead).
  absl::Duration alice_stamped_early = absl::ZeroDuration();
  // Bob submits as chat and moves each request to voice in the same instant.
  bool voice_by_class_change = false;
  // Alice submits her backlog as voice and it is moved to chat at once.
  bool backlog_by_class_change = false;
  int32_t backlog = 2000;
};

struct VoiceOutcome {
  int32_t started = 0;
  int32_t met_target = 0;
  int32_t alice_finished = 0;
  uint64_t preemptions = 0;
  std::vector<std::string> reasons;
};

std::unique_ptr<Scheduler> HouseholdScheduler(bool member_guard) {
  SchedulerOptions o;
  o.kv.num_device_blocks = 512;
  o.max_running = 32;
  o.work_classes = HouseholdWorkClasses();
  o.users = {{.name = "alice"}, {.name = "bob"}};
  o.max_pending_requests = 4096;
  PolicyTreeConfig tree = HouseholdTreeConfig();
  tree.member_guard = member_guard;
  o.policy_factory = *PolicyTreeFactory(tree);
  auto s = Scheduler::Create(o);
  REQUIRE(s.ok());
  return std::move(*s);
}

// The ids `s` gave these names, for testing::Spec.
uint32_t User(Scheduler& s, const char* name) { return s.FindUser(name)->value(); }
uint32_t Class(Scheduler& s, const char* name) { return s.FindWorkClass(name)->value(); }

void SubmitBacklog(Scheduler& s, const Overload& o, absl::Time now) {
  for (int32_t i = 0; i < o.backlog; ++i) {
    RequestSpec spec = Spec({.user = User(s, "alice"),
                               .work_class = Class(s, o.backlog_by_class_change ? "voice" : "chat"),
                               .prompt = 200,
                               .max_new = 100});
    if (o.alice_stamped_early > absl::ZeroDuration()) spec.arrival_time = now - o.alice_stamped_early;
    absl::StatusOr<RequestId> id = s.Submit(spec);
    REQUIRE(id.ok());
    if (o.backlog_by_class_change) REQUIRE(s.SetWorkClass(*id, *s.FindWorkClass("chat")).ok());
  }
}

std::vector<RequestId> SubmitVoice(Scheduler& s, const Overload& o) {
  std::vector<RequestId> ids;
  for (int32_t i = 0; i < 10; ++i) {
    absl::StatusOr<RequestId> id =
        s.Submit(Spec({.user = User(s, "bob"),
                     .work_class = Class(s, o.voice_by_class_change ? "chat" : "voice"),
                     .prompt = 100,
                     .max_new = 20}));
    REQUIRE(id.ok());
    if (o.voice_by_class_change) REQUIRE(s.SetWorkClass(*id, *s.FindWorkClass("voice")).ok());
    ids.push_back(*id);
  }
  return ids;
}

// Runs the engine loop (a token per sampling sequence, 20 ms a step) until
// every voice command has ended and 15 s have passed.
VoiceOutcome Run(const Overload& o, bool member_guard) {
  std::unique_ptr<Scheduler> s = HouseholdScheduler(member_guard);
  const absl::Time t0 = absl::UnixEpoch() + absl::Hours(1);
  const absl::Time backlog_at = o.voice_after >= absl::ZeroDuration() ? t0 : t0 - o.voice_after;
  const absl::Time voice_at = o.voice_after >= absl::ZeroDuration() ? t0 + o.voice_after : t0;
  std::vector<RequestId> voice;
  absl::flat_hash_map<RequestId, RequestResult> voice_results;
  bool backlog_in = false;
  StepOutcome outcome;
  std::vector<RequestResult> drained;
  VoiceOutcome out;
  for (absl::Time now = t0; now < voice_at + absl::Seconds(15); now += kStep) {
    if (!backlog_in && now >= backlog_at) {
      SubmitBacklog(*s, o, now);
      backlog_in = true;
    }
    if (voice.empty() && now >= voice_at) voice = SubmitVoice(*s, o);
    absl::StatusOr<const StepPlan*> plan = s->Plan(now);
    REQUIRE(plan.ok());
    StartStepOutcome(**plan, &outcome);
    for (const ScheduledSequence& seq : (*plan)->sequences) {
      SequenceOutcome& so = outcome.sequences.emplace_back();
      so.id = seq.id;
      if (seq.sample) RecordSampledToken(0, false, so);
    }
    outcome.completed_at = now + kStep;
    REQUIRE(s->Complete(outcome).ok());
    drained.clear();
    s->DrainResults(&drained);
    for (RequestResult& r : drained) {
      if (r.user == *s->FindUser("bob")) {
        voice_results[r.id] = r;
      } else if (r.phase == RequestPhase::kFinished) {
        ++out.alice_finished;
      }
    }
  }
  REQUIRE(s->CheckInvariants().ok());
  out.preemptions = s->stats().preemptions;
  const absl::Duration target = absl::Milliseconds(500);
  for (RequestId id : voice) {
    auto it = voice_results.find(id);
    if (it == voice_results.end()) {
      out.reasons.push_back("still live");
      continue;
    }
    const RequestResult& r = it->second;
    if (r.first_admit_time != absl::InfiniteFuture()) ++out.started;
    if (r.phase == RequestPhase::kFinished && r.first_token_time - r.arrival_time <= target) {
      ++out.met_target;
    }
    if (r.phase != RequestPhase::kFinished) out.reasons.push_back(r.message);
  }
  return out;
}

// Judged against the same run without the member guard: what protecting
// Bob costs Alice.
void CheckVoiceProtected(const Overload& o) {
  const VoiceOutcome out = Run(o, /*member_guard=*/true);
  const VoiceOutcome unguarded = Run(o, /*member_guard=*/false);
  for (const std::string& reason : out.reasons) UNSCOPED_INFO("voice ended: " << reason);
  INFO("voice started " << out.started << ", met target " << out.met_target
                        << "; alice finished " << out.alice_finished << " (unguarded "
                        << unguarded.alice_finished << "); preemptions " << out.preemptions
                        << " (unguarded " << unguarded.preemptions << ")");
  CHECK(out.started == 10);
  CHECK(out.met_target >= 9);
  // Alice's backlog is served meanwhile: Bob's voice costs her a few turns
  // and at most one preempted chat per command, not the machine.
  CHECK(out.alice_finished * 10 >= unguarded.alice_finished * 9);
  CHECK(out.preemptions <= unguarded.preemptions + 10);
}

TEST_CASE("Member overload: a late backlog never starves another member's voice",
          "[scheduler][isolation]") {
  SECTION("voice 5 s after the backlog") { CheckVoiceProtected({}); }
  SECTION("voice before the backlog") {
    CheckVoiceProtected({.voice_after = -absl::Milliseconds(200)});
  }
  SECTION("voice 0.2 s after the backlog") {
    CheckVoiceProtected({.voice_after = absl::Milliseconds(200)});
  }
  SECTION("the backlog stamped a minute early") {
    CheckVoiceProtected({.alice_stamped_early = absl::Seconds(59)});
  }
  SECTION("voice moved into its class by SetWorkClass") {
    CheckVoiceProtected({.voice_by_class_change = true});
  }
  SECTION("the backlog moved out of voice by SetWorkClass") {
    CheckVoiceProtected({.backlog_by_class_change = true});
  }
}

}  // namespace
}  // namespace hearth
