// Per-step cost of each policy inside the real scheduler: one engine step
// (Plan + building the outcome + Complete) with `running` sequences decoding
// and `waiting` more queued, mixed over 4 users and 5 work classes.
//
//   build/bench/policy/hearth_policy_step_bench --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
//
// Compare each policy's row with the fifo row of the same size (target:
// within 1.5x), and the /10000 rows with the /100000 rows (the waiting
// queue's size must not matter). Counters: allocs/step (0 in steady state),
// seqs/step and preempted/step (a policy that time-slices, like MLFQ with
// small quanta, preempts and readmits every step: that work is counted).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/common/alloc_counter.h"
#include "hearth/policy/policy_registry.h"
#include "hearth/scheduler/scheduler.h"

namespace hearth::bench {
namespace {

[[noreturn]] void Die(const absl::Status& s) {
  std::fprintf(stderr, "policy step bench: %s\n", s.ToString().c_str());
  std::abort();
}

// Like the core's steady-decode fixture, but tolerant of policies that keep
// preempting and admitting (it warms up for a fixed number of steps).
class PolicyFixture {
 public:
  PolicyFixture(int32_t running, int32_t waiting, PolicyFactory policy,
                int32_t max_steps)
      : now_(absl::UnixEpoch()) {
    SchedulerOptions o;
    o.max_running = running;
    o.max_batched_tokens = 2 * running;
    o.kv.block_size = 16;
    o.kv.num_device_blocks = running * (2 + (max_steps + 64) / 16) + 64;
    o.models[0].context_length = 1 << 20;
    o.max_pending_requests = running + waiting + 1;
    o.users.clear();
    for (int32_t u = 0; u < 4; ++u) o.users.push_back({"user" + std::to_string(u), 1.0 + u});
    o.work_classes = {{"voice", 4}, {"chat", 3}, {"agent", 2}, {"embedding", 1}, {"maintenance", 0}};
    o.policy_factory = std::move(policy);
    auto s = Scheduler::Create(o);
    if (!s.ok()) Die(s.status());
    scheduler_ = std::move(*s);
    for (int32_t i = 0; i < running + waiting; ++i) {
      RequestSpec spec;
      spec.user = UserId(static_cast<uint32_t>(i % 4));
      spec.work_class = WorkClassId(static_cast<uint32_t>(i % 5));
      spec.prompt_tokens = 16;
      spec.max_new_tokens = max_steps + 32;
      auto id = scheduler_->Submit(spec);
      if (!id.ok()) Die(id.status());
    }
    outcome_.sequences.reserve(static_cast<size_t>(running));
    for (int i = 0; i < 200; ++i) Step();
  }

  void Step() {
    auto plan = scheduler_->Plan(now_);
    if (!plan.ok()) Die(plan.status());
    const StepPlan& p = **plan;
    outcome_.step = p.step;
    outcome_.sequences.resize(p.sequences.size());
    for (size_t i = 0; i < p.sequences.size(); ++i) {
      SequenceOutcome& o = outcome_.sequences[i];
      o.id = p.sequences[i].id;
      o.produced_token = p.sequences[i].sample;
      o.token = 1;
    }
    last_batch_ = static_cast<int32_t>(p.sequences.size());
    preempted_ += p.preempted.size();
    absl::Status s = scheduler_->Complete(outcome_);
    if (!s.ok()) Die(s);
    now_ += absl::Milliseconds(20);
  }

  int32_t last_batch() const { return last_batch_; }
  uint64_t preempted() const { return preempted_; }

 private:
  std::unique_ptr<Scheduler> scheduler_;
  StepOutcome outcome_;
  absl::Time now_;
  int32_t last_batch_ = 0;
  uint64_t preempted_ = 0;
};

constexpr int kIterations = 20000;

void BM_PolicyStep(benchmark::State& state, std::string name) {
  PolicyConfig config;
  config.vtc.user_weights = {1, 2, 3, 4};
  absl::StatusOr<PolicyFactory> factory = MakePolicyFactory(name, config);
  if (!factory.ok()) Die(factory.status());
  const int32_t running = static_cast<int32_t>(state.range(0));
  const int32_t waiting = static_cast<int32_t>(state.range(1));
  PolicyFixture fixture(running, waiting, *factory, kIterations + 400);
  const uint64_t preempted_before = fixture.preempted();
  uint64_t allocations = 0;
  for (auto _ : state) {
    const uint64_t before = AllocationCount();
    fixture.Step();
    allocations += AllocationCount() - before;
  }
  const double steps = static_cast<double>(state.iterations());
  state.counters["allocs/step"] = static_cast<double>(allocations) / steps;
  state.counters["preempted/step"] =
      static_cast<double>(fixture.preempted() - preempted_before) / steps;
  state.counters["seqs/step"] = fixture.last_batch();
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->Args({1024, 10000})->Args({1024, 100000})->Iterations(kIterations)
      ->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_PolicyStep, fifo, std::string("fifo"))->Apply(Sizes);
BENCHMARK_CAPTURE(BM_PolicyStep, vtc, std::string("vtc"))->Apply(Sizes);
BENCHMARK_CAPTURE(BM_PolicyStep, priority, std::string("priority"))->Apply(Sizes);
BENCHMARK_CAPTURE(BM_PolicyStep, mlfq, std::string("mlfq"))->Apply(Sizes);
BENCHMARK_CAPTURE(BM_PolicyStep, household, std::string("household"))->Apply(Sizes);

}  // namespace
}  // namespace hearth::bench

BENCHMARK_MAIN();
