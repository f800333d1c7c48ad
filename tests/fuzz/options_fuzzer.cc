// options_fuzzer: every SchedulerOptions field from the input, edges
// included (0, negative, the type's largest, NaN, infinities, infinite
// durations, empty and duplicate names, registries as long as the input
// allows). Scheduler::Create must answer with a Status: no crash, no UB, no
// exception, no allocation sized by an unchecked option. A scheduler it
// accepts must survive a few steps of ordinary work. KvBlocksForMemory is
// fuzzed alongside, since residency sizes caches with it.

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "hearth/scheduler/scheduler.h"
#include "hearth/scheduler/scheduler_options.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/hostile_values.h"
#include "tests/fuzz/small_options.h"

namespace hearth::fuzz {
namespace {

constexpr int32_t kMaxFuzzedBlocks = 1 << 20;

// A few names, so that duplicates are common; sometimes empty or any bytes.
std::string AnyName(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0: return "";
    case 1: return in.ConsumeRandomLengthString(32);
    default: return absl::StrCat("n", in.ConsumeIntegralInRange(0, 3));
  }
}

// How many registry entries: usually a few, sometimes as many as the input
// can still pay for (each entry consumes bytes, so this is bounded).
size_t AnyCount(FuzzedDataProvider& in) {
  if (in.ConsumeIntegralInRange(0, 7) == 0) {
    return in.ConsumeIntegralInRange<size_t>(0, in.remaining_bytes());
  }
  return in.ConsumeIntegralInRange<size_t>(0, 4);
}

ModelConfig AnyModel(FuzzedDataProvider& in) {
  ModelConfig m;
  m.name = AnyName(in);
  m.context_length = SmallOrEdge<int32_t>(in, 2, 1 << 20);
  m.vocab_size = SmallOrEdge<int32_t>(in, 0, 1 << 17);
  m.kv_bytes_per_token = SmallOrEdge<int64_t>(in, 0, 1 << 20);
  m.weights_bytes = SmallOrEdge<int64_t>(in, 0, int64_t{1} << 34);
  m.preload = in.ConsumeBool();
  m.keep_alive = SmallOrEdgeDuration(in, 100'000);
  return m;
}

UserConfig AnyUser(FuzzedDataProvider& in) {
  UserConfig u;
  u.name = AnyName(in);
  u.weight = SmallOrEdgeDouble(in, 0, 1e10);
  u.max_queued_requests = SmallOrEdge<int32_t>(in, 0, 100);
  u.token_quota = SmallOrEdge<int64_t>(in, 0, 1 << 20);
  u.quota_window = SmallOrEdgeDuration(in, 1'000'000);
  return u;
}

WorkClassConfig AnyClass(FuzzedDataProvider& in) {
  WorkClassConfig c;
  c.name = AnyName(in);
  c.priority = SmallOrEdge<int32_t>(in, -10, 10);
  c.max_running = SmallOrEdge<int32_t>(in, 0, 64);
  c.kv_block_budget = SmallOrEdge<int32_t>(in, 0, 1 << 16);
  c.borrow = in.ConsumeBool();
  c.queue_timeout = SmallOrEdgeDuration(in, 100'000);
  c.max_retries = SmallOrEdge<int32_t>(in, 0, 200);
  c.weight = SmallOrEdgeDouble(in, 0, 1e10);
  return c;
}

SchedulerOptions AnyOptions(FuzzedDataProvider& in) {
  SchedulerOptions o;
  o.models.resize(AnyCount(in));
  for (ModelConfig& m : o.models) m = AnyModel(in);
  o.users.resize(AnyCount(in));
  for (UserConfig& u : o.users) u = AnyUser(in);
  o.work_classes.resize(AnyCount(in));
  for (WorkClassConfig& c : o.work_classes) c = AnyClass(in);
  o.kv.block_size = SmallOrEdge<int32_t>(in, 1, 4096);
  // The pools are allocated per configured block, as documented (up to
  // 2^24); beyond 2^20 a valid Create is slow under ASan.
  o.kv.num_device_blocks = std::min(SmallOrEdge<int32_t>(in, 1, 1 << 16), kMaxFuzzedBlocks);
  o.kv.num_host_blocks = std::min(SmallOrEdge<int32_t>(in, 0, 1 << 16), kMaxFuzzedBlocks);
  o.kv.watermark_blocks = SmallOrEdge<int32_t>(in, 0, 1 << 10);
  o.kv.enable_prefix_caching = in.ConsumeBool();
  o.residency.device_memory_bytes = SmallOrEdge<int64_t>(in, 0, int64_t{1} << 36);
  o.residency.max_concurrent_loads = SmallOrEdge<int32_t>(in, 1, 8);
  o.preemption_mode = in.ConsumeBool() ? PreemptionMode::kSwap : PreemptionMode::kRecompute;
  if (in.ConsumeIntegralInRange(0, 15) == 0) {
    o.preemption_mode = static_cast<PreemptionMode>(in.ConsumeIntegral<uint8_t>());
  }
  o.max_pending_requests = SmallOrEdge<int32_t>(in, 1, 1 << 20);
  o.max_pending_bytes = SmallOrEdge<int64_t>(in, 1, int64_t{1} << 30);
  o.reserved_pending_share = SmallOrEdgeDouble(in, 0, 1);
  o.max_intake_per_plan = SmallOrEdge<int32_t>(in, 1, 1 << 20);
  o.max_label_bytes = SmallOrEdge<int32_t>(in, 0, 1 << 24);
  o.max_arrival_lead = SmallOrEdgeDuration(in, 100'000);
  o.workflow_retention = SmallOrEdgeDuration(in, 1'000'000);
  o.max_batched_tokens = SmallOrEdge<int32_t>(in, 1, 1 << 16);
  o.max_running = SmallOrEdge<int32_t>(in, 1, 1 << 12);
  o.max_prefill_chunk_tokens = SmallOrEdge<int32_t>(in, 0, 1 << 16);
  o.max_admission_declines = SmallOrEdge<int32_t>(in, 0, 64);
  return o;
}

// A few steps of ordinary work on a scheduler Create accepted.
void ExerciseBriefly(FuzzedDataProvider& in, Scheduler& s) {
  absl::Time now = absl::UnixEpoch() + absl::Hours(24 * 365 * 50);
  for (int step = 0; step < 8; ++step) {
    RequestSpec spec;
    const SchedulerOptions& o = s.options();
    spec.user = UserId(in.ConsumeIntegralInRange<uint32_t>(0, o.users.size() - 1));
    spec.work_class = WorkClassId(in.ConsumeIntegralInRange<uint32_t>(0, o.work_classes.size() - 1));
    spec.model = ModelId(in.ConsumeIntegralInRange<uint32_t>(0, o.models.size() - 1));
    spec.prompt_tokens = SmallOrEdge<int32_t>(in, 1, 256);
    spec.max_new_tokens = SmallOrEdge<int32_t>(in, 1, 64);
    spec.priority = SmallOrEdge<int32_t>(in, -3, 3);
    (void)s.Submit(spec);
    now += absl::Milliseconds(10);
    const absl::StatusOr<const StepPlan*> plan = s.Plan(now);
    Require(plan.ok(), absl::StrCat("Plan failed: ", plan.status().ToString()));
    StepOutcome out;
    out.step = (*plan)->step;
    for (const ScheduledSequence& seq : (*plan)->sequences) {
      out.sequences.push_back({.id = seq.id, .produced_token = seq.sample});
    }
    const absl::Status done = s.Complete(out);
    Require(done.ok(), absl::StrCat("an honest Complete was refused: ", done.ToString()));
    const absl::Status inv = s.CheckInvariants();
    Require(inv.ok(), absl::StrCat("CheckInvariants: ", inv.ToString()));
  }
}

void FuzzKvBlocksForMemory(FuzzedDataProvider& in) {
  const int64_t memory = SmallOrEdge<int64_t>(in, 0, int64_t{1} << 40);
  const int64_t per_token = SmallOrEdge<int64_t>(in, 0, 1 << 20);
  const int32_t block_size = SmallOrEdge<int32_t>(in, 1, 4096);
  const int32_t blocks = KvBlocksForMemory(memory, per_token, block_size);
  Require(blocks >= 0, "KvBlocksForMemory returned a negative count");
  if (blocks > 0) {
    // The blocks it counts fit the memory (checked without overflow).
    const __int128 bytes = static_cast<__int128>(blocks) * per_token * block_size;
    Require(bytes <= memory, "KvBlocksForMemory counted more blocks than fit");
  }
}

}  // namespace
}  // namespace hearth::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hearth;
  FuzzedDataProvider in(data, size);
  fuzz::FuzzKvBlocksForMemory(in);
  SchedulerOptions options = fuzz::AnyOptions(in);
  if (!fuzz::SetPolicy(in, fuzz::PickPolicy(in), options).ok()) return 0;
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(std::move(options));
  if (!scheduler.ok()) {
    fuzz::Require(!scheduler.status().message().empty(), "Create refused without a message");
    return 0;
  }
  fuzz::ExerciseBriefly(in, **scheduler);
  return 0;
}
