// A background request (no TTFT target) that was decoding when it was
// swapped out resumes with its decode even in a step whose background
// prefill share (PrefillRules::background_tokens) is already spent: the
// share limits prefill, and admission lets a decoding request past it, so
// the plan must give it its one token, not an entry of none.

#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>

#include "hearth/policy/fifo.h"
#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;
using testing::Spec;

constexpr uint32_t kVoice = 0, kDocuments = 1;

// Arrival order with a background prefill share, whose only victim is the
// one the test names, for the one beneficiary it names.
class ScriptedVictimPolicy final : public Policy {
 public:
  struct Script {
    RequestId beneficiary, victim;
  };
  explicit ScriptedVictimPolicy(const Script* script) : fifo_(NewFifoPolicy()), script_(script) {}

  std::string_view name() const override { return "scripted"; }
  void OnArrival(const RequestView& r, absl::Time t) override { fifo_->OnArrival(r, t); }
  void OnAdmitted(const RequestView& r, absl::Time t) override { fifo_->OnAdmitted(r, t); }
  void OnPreempted(const RequestView& r, absl::Time t) override { fifo_->OnPreempted(r, t); }
  void OnRemoved(const RequestView& r, absl::Time t) override { fifo_->OnRemoved(r, t); }
  void OnServed(absl::Span<const ServedTokens> s, absl::Time t) override { fifo_->OnServed(s, t); }
  void BeginAdmission(absl::Time t) override { fifo_->BeginAdmission(t); }
  RequestId NextAdmission() override { return fifo_->NextAdmission(); }
  void Decline(RequestId id) override { fifo_->Decline(id); }
  void EndAdmission() override { fifo_->EndAdmission(); }
  PrefillRules prefill_rules() const override { return {.background_tokens = 16}; }
  RequestId PickVictim(RequestId beneficiary, bool beneficiary_running) override {
    return !beneficiary_running && beneficiary == script_->beneficiary ? script_->victim
                                                                       : RequestId();
  }

 private:
  std::unique_ptr<Policy> fifo_;
  const Script* script_;
};

TEST_CASE(
    "scheduler: a swapped-out decode of background work resumes with a token "
    "while the background prefill share is spent",
    "[scheduler]") {
  ScriptedVictimPolicy::Script script;
  SchedulerOptions o;
  o.work_classes = {{.name = "voice", .ttft_slo = absl::Seconds(1)}, {.name = "documents"}};
  o.max_running = 3;
  o.max_batched_tokens = 256;
  o.preemption_mode = PreemptionMode::kSwap;
  o.kv.num_host_blocks = 256;
  o.policy_factory = [&script](const SchedulerOptions&) {
    return std::unique_ptr<Policy>(std::make_unique<ScriptedVictimPolicy>(&script));
  };
  auto h = SchedulerHarness::Create(std::move(o));
  REQUIRE(h.ok());
  SchedulerHarness& harness = **h;
  // A document that decodes, a voice call that keeps decoding (so the
  // share applies), and a long document prompt that takes the share each
  // step.
  const RequestId decoding =
      *harness.Submit(Spec({.work_class = kDocuments, .prompt = 16, .max_new = 50}));
  REQUIRE(harness.StepUntilDecoding(decoding).ok());
  REQUIRE(harness.Submit(Spec({.work_class = kVoice, .prompt = 8, .max_new = 200})).ok());
  REQUIRE(harness.Step().ok());
  const RequestId prompt =
      *harness.Submit(Spec({.work_class = kDocuments, .prompt = 320, .max_new = 4}));
  REQUIRE(harness.Step().ok());
  REQUIRE(harness.last_plan().Find(prompt) != nullptr);
  REQUIRE(harness.last_plan().Find(prompt)->num_tokens == 16);
  // A short voice call finds the sequence cap full and evicts the decoding
  // document, which is swapped out with its progress.
  script.victim = decoding;
  script.beneficiary = *harness.Submit(Spec({.work_class = kVoice, .prompt = 8, .max_new = 2}));
  REQUIRE(harness.Step().ok());
  REQUIRE(harness.scheduler().GetRequest(decoding)->phase == RequestPhase::kSwapped);
  // Once the call ends, the document is readmitted in a step whose share
  // the long prompt took; every step passes the plan checks (an entry of no
  // tokens fails them).
  bool resumed = false;
  for (int i = 0; i < 10 && !resumed; ++i) {
    const absl::Status step = harness.Step();
    INFO(step.ToString());
    REQUIRE(step.ok());
    const testing::PlanCopy::Sequence* s = harness.last_plan().Find(decoding);
    if (s == nullptr) continue;
    resumed = true;
    CHECK(s->num_tokens == 1);
    REQUIRE(harness.last_plan().Find(prompt) != nullptr);
    CHECK(harness.last_plan().Find(prompt)->num_tokens == 16);
  }
  CHECK(resumed);
}

}  // namespace
}  // namespace hearth
