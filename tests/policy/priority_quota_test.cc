// Properties of priority with quota and aging, through the Policy interface.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/policy/priority_quota.h"
#include "tests/testing/policy_driver.h"

namespace hearth {
namespace {

using testing_policy::DriverOptions;
using testing_policy::DriverRequest;
using testing_policy::PolicyDriver;

constexpr int32_t kVoice = 4;
constexpr int32_t kChat = 2;
constexpr int32_t kMaintenance = 0;

PolicyFactory MakePriority(const PriorityQuotaOptions& options) {
  absl::StatusOr<PolicyFactory> factory = PriorityQuotaPolicyFactory(options);
  REQUIRE(factory.ok());
  return *factory;
}

DriverOptions SmallMachine() {
  DriverOptions d;
  d.max_running = 8;
  d.token_budget = 256;
  d.max_chunk = 256;
  d.step_time = absl::Milliseconds(10);
  return d;
}

// Voice requests take 8 steps each (one prefill step, 7 decodes); with 8
// slots the machine finishes one per step. An initial backlog of 20 plus one
// arrival per step keeps voice work waiting at every step, without growing.
void VoiceFlood(PolicyDriver& d, int64_t steps) {
  for (int i = 0; i < 20; ++i) {
    d.AddAt(0, {.user = 0, .prompt = 16, .max_new = 8, .priority = kVoice});
  }
  for (int64_t s = 1; s < steps; ++s) {
    d.AddAt(s, {.user = 0, .prompt = 16, .max_new = 8, .priority = kVoice});
  }
}

TEST_CASE("priority: a maintenance request under a voice flood is admitted "
          "within the aging bound",
          "[policy][priority]") {
  const int64_t kSteps = 1500;
  const int64_t kMaintenanceArrival = 200;
  PriorityQuotaOptions options;
  options.aging_interval = absl::Milliseconds(100);  // 10 steps
  PolicyDriver d(MakePriority(options), SmallMachine());
  VoiceFlood(d, kSteps);
  RequestId maintenance = d.AddAt(
      kMaintenanceArrival, {.user = 1, .prompt = 64, .max_new = 16, .priority = kMaintenance});
  int64_t voice_waiting_steps = 0;
  d.set_on_admit([&](RequestId id) {
    if (d.request(id).view.priority == kVoice) {
      voice_waiting_steps = std::max(
          voice_waiting_steps, d.step() - d.request(id).arrival_step);
    }
  });
  d.Run(kSteps);
  REQUIRE(d.waiting_count() > 0);  // the flood lasted to the end
  const DriverRequest& m = d.request(maintenance);
  REQUIRE(m.first_admit_step >= 0);
  // Aged past the top priority after (P - p + 1) intervals, it then only
  // waits for voice requests that arrived before it, i.e. at most the
  // longest voice wait, plus one step for a slot to free.
  const int64_t interval_steps = 10;
  const int64_t bound =
      (kVoice - kMaintenance + 1) * interval_steps + voice_waiting_steps + 1;
  INFO("maintenance waited " << m.first_admit_step - kMaintenanceArrival
                             << " steps; bound " << bound);
  CHECK(m.first_admit_step - kMaintenanceArrival <= bound);
  CHECK(m.finish_step >= 0);
  CHECK(d.errors().empty());

  // Control: without aging the flood starves it.
  options.aging_interval = absl::InfiniteDuration();
  PolicyDriver control(MakePriority(options), SmallMachine());
  VoiceFlood(control, kSteps);
  RequestId starved = control.AddAt(
      kMaintenanceArrival, {.user = 1, .prompt = 64, .max_new = 16, .priority = kMaintenance});
  control.Run(kSteps);
  CHECK(control.request(starved).first_admit_step < 0);
}

TEST_CASE("priority: every admission respects effective priority",
          "[policy][priority]") {
  uint64_t seed = GENERATE(1, 2, 3);
  PriorityQuotaOptions options;
  options.aging_interval = absl::Milliseconds(50);  // 5 steps
  DriverOptions machine = SmallMachine();
  machine.seed = seed;
  PolicyDriver d(MakePriority(options), machine);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 3000; ++i) {
    int64_t at = std::uniform_int_distribution<int64_t>(0, 1500)(rng);
    int32_t priority = std::uniform_int_distribution<int32_t>(0, 4)(rng);
    // Output before prompt, as the old positional call evaluated them (see
    // policy_contract_test.cc).
    const int32_t output = std::uniform_int_distribution<int32_t>(2, 16)(rng);
    const int32_t prompt = std::uniform_int_distribution<int32_t>(8, 64)(rng);
    d.AddAt(at, {.user = static_cast<uint32_t>(priority),
                 .prompt = prompt,
                 .max_new = output,
                 .priority = priority});
  }
  // When q is admitted while r waits, eff(q) >= eff(r), so
  //   wait(r) < wait(q) + (p(q) - p(r) + 1) * interval.
  int64_t violations = 0;
  d.set_on_admit([&](RequestId q) {
    const DriverRequest& admitted = d.request(q);
    int64_t wait_q = d.step() - admitted.arrival_step;
    for (RequestId r : d.waiting()) {
      const DriverRequest& other = d.request(r);
      int64_t wait_r = d.step() - other.arrival_step;
      int64_t slack = (admitted.view.priority - other.view.priority + 1) * 5;
      if (wait_r >= wait_q + slack) ++violations;
    }
  });
  d.Run(2500);
  CHECK(violations == 0);
  CHECK(d.errors().empty());
}

TEST_CASE("priority: a quota caps a level's share while others wait",
          "[policy][priority]") {
  PriorityQuotaOptions options;
  options.quota_window = absl::Seconds(1);  // 100 steps
  // The machine serves about 2,400 tokens per window here (8 slots, 48-token
  // requests taking 16 steps each): voice may take a third of it.
  const int64_t kQuota = 800;
  options.quotas = {{kVoice, kQuota, 0}};
  const int64_t kSteps = 2000;
  auto run = [&](const PriorityQuotaOptions& o, std::vector<int64_t>* voice,
                 std::vector<int64_t>* chat) {
    PolicyDriver d(MakePriority(o), SmallMachine());
    // Voice floods (3 per step, more than the machine serves); chat has a
    // deep backlog.
    for (int64_t s = 0; s < kSteps; ++s) {
      for (int k = 0; k < 3; ++k) {
        d.AddAt(s, {.user = 0, .prompt = 32, .max_new = 16, .priority = kVoice});
      }
    }
    for (int i = 0; i < 2000; ++i) {
      d.AddAt(0, {.user = 1, .prompt = 32, .max_new = 16, .priority = kChat});
    }
    int64_t v = 0, c = 0;
    for (int64_t s = 0; s < kSteps; ++s) {
      d.Step();
      v += d.last_step_by_priority().count(kVoice) ? d.last_step_by_priority().at(kVoice) : 0;
      c += d.last_step_by_priority().count(kChat) ? d.last_step_by_priority().at(kChat) : 0;
      if ((s + 1) % 100 == 0) {
        voice->push_back(v);
        chat->push_back(c);
        v = c = 0;
      }
    }
    CHECK(d.errors().empty());
  };
  std::vector<int64_t> voice, chat;
  run(options, &voice, &chat);
  // Quota plus what already-running voice requests finish: at most
  // max_running requests of 48 tokens each, on both edges of a window.
  const int64_t overshoot = 2 * 8 * 48;
  for (size_t w = 0; w < voice.size(); ++w) {
    INFO("window " << w << " voice " << voice[w] << " chat " << chat[w]);
    CHECK(voice[w] <= kQuota + overshoot);
    CHECK(chat[w] > 0);
  }
  // Work-conserving: the machine stays as busy as without the quota.
  for (size_t w = 1; w < voice.size(); ++w) {
    CHECK(voice[w] + chat[w] >= 2000);
  }

  // Control: without a quota voice takes (nearly) everything.
  std::vector<int64_t> voice_free, chat_free;
  run(PriorityQuotaOptions{}, &voice_free, &chat_free);
  CHECK(voice_free.back() > kQuota + overshoot);
  CHECK(chat_free.back() == 0);
}

TEST_CASE("priority: a share quota caps a level's share of each window",
          "[policy][priority]") {
  PriorityQuotaOptions options;
  options.quota_window = absl::Seconds(1);  // 100 steps
  options.quotas = {{kVoice, 0, 0.3}};
  PolicyDriver d(MakePriority(options), SmallMachine());
  for (int64_t s = 0; s < 2000; ++s) {
    for (int k = 0; k < 3; ++k) {
      d.AddAt(s, {.user = 0, .prompt = 32, .max_new = 16, .priority = kVoice});
    }
  }
  for (int i = 0; i < 2000; ++i) {
    d.AddAt(0, {.user = 1, .prompt = 32, .max_new = 16, .priority = kChat});
  }
  int64_t voice = 0, total = 0;
  for (int64_t s = 0; s < 2000; ++s) {
    d.Step();
    for (const auto& [priority, tokens] : d.last_step_by_priority()) {
      total += tokens;
      if (priority == kVoice) voice += tokens;
    }
    if ((s + 1) % 100 == 0) {
      // Admissions stop at 30%; running voice requests (8 slots of 48
      // tokens at most) finish beyond it.
      INFO("window ending at step " << s << ": voice " << voice << " of " << total);
      CHECK(voice <= 0.3 * total + 8 * 48);
      CHECK(voice >= 0.15 * total);  // but voice is not shut out either
      voice = total = 0;
    }
  }
  CHECK(d.errors().empty());
}

TEST_CASE("priority: victims come from strictly lower levels",
          "[policy][priority]") {
  PriorityQuotaOptions options;
  options.aging_interval = absl::InfiniteDuration();
  DriverOptions machine = SmallMachine();
  machine.max_running = 2;
  PolicyDriver d(MakePriority(options), machine);
  Policy& p = d.policy();
  RequestId low = d.AddAt(0, {.user = 0, .prompt = 16, .max_new = 1000, .priority = kMaintenance});
  RequestId mid = d.AddAt(0, {.user = 0, .prompt = 16, .max_new = 1000, .priority = kChat});
  d.Run(3);
  REQUIRE(d.request(low).view.phase == RequestPhase::kRunning);
  RequestId high = d.AddAt(3, {.user = 0, .prompt = 16, .max_new = 10, .priority = kVoice});
  RequestId also_mid = d.AddAt(3, {.user = 0, .prompt = 16, .max_new = 10, .priority = kChat});
  d.Run(1);
  // The voice request displaced the maintenance one (lowest level first),
  // which this machine swaps out.
  CHECK(d.request(low).view.phase == RequestPhase::kSwapped);
  CHECK(d.request(high).view.phase == RequestPhase::kRunning);
  // A waiting chat request cannot displace the running chat request.
  CHECK(d.request(also_mid).view.phase == RequestPhase::kWaiting);
  CHECK_FALSE(p.PickVictim(d.core_id(also_mid), false).valid());
  CHECK(d.request(mid).view.phase == RequestPhase::kRunning);
  CHECK(d.errors().empty());
}

TEST_CASE("priority: options are validated", "[policy][priority]") {
  PriorityQuotaOptions o;
  CHECK(ValidatePriorityQuotaOptions(o).ok());
  o.quotas = {{1, 100, 0}, {1, 200, 0}};
  absl::Status dup = ValidatePriorityQuotaOptions(o);
  CHECK(dup.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(dup.message()).find("quotas[1]") != std::string::npos);
  o.quotas = {{1, 0, 0}};
  CHECK_FALSE(ValidatePriorityQuotaOptions(o).ok());
  o.quotas = {{1, 0, 1.5}};
  CHECK_FALSE(ValidatePriorityQuotaOptions(o).ok());
  o.quotas = {{1, 0, 0.25}};
  CHECK(ValidatePriorityQuotaOptions(o).ok());
  o.quotas = {};
  o.aging_interval = absl::ZeroDuration();
  CHECK_FALSE(PriorityQuotaPolicyFactory(o).ok());
  o.aging_interval = absl::Seconds(1);
  o.quota_window = absl::InfiniteDuration();
  CHECK_FALSE(ValidatePriorityQuotaOptions(o).ok());
}


TEST_CASE("priority: class and request priorities add without overflow",
          "[policy][priority]") {
  // Each sum below is beyond int32: folded in 32 bits, the most urgent
  // request would wrap around to the least urgent.
  constexpr int32_t kHuge = 2'000'000'000;
  SchedulerOptions scheduler;
  scheduler.work_classes = {{.name = "urgent", .priority = kHuge},
                            {.name = "plain", .priority = 0},
                            {.name = "sunk", .priority = -kHuge}};
  PriorityQuotaOptions options;
  options.aging_interval =
      GENERATE(absl::InfiniteDuration(), absl::Seconds(30));
  absl::StatusOr<PolicyFactory> factory = PriorityQuotaPolicyFactory(options);
  REQUIRE(factory.ok());
  DriverOptions machine = SmallMachine();
  machine.max_running = 1;
  PolicyDriver d(*factory, machine, scheduler);
  RequestId lowest =
      d.AddAt(0, {.user = 0, .work_class = 2, .prompt = 16, .max_new = 1, .priority = -kHuge});
  RequestId middle =
      d.AddAt(0, {.user = 0, .work_class = 1, .prompt = 16, .max_new = 1, .priority = kHuge});
  RequestId highest =
      d.AddAt(0, {.user = 0, .work_class = 0, .prompt = 16, .max_new = 1, .priority = kHuge});
  std::vector<RequestId> order;
  d.set_on_admit([&](RequestId id) { order.push_back(id); });
  d.Run(20);
  CHECK(order == std::vector<RequestId>{highest, middle, lowest});
  CHECK(d.errors().empty());
}

}  // namespace
}  // namespace hearth
