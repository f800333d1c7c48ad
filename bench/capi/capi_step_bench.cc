// The C API's steady decode step against the C++ core's, in one run: the
// same options, requests and stand-in engine as bench/common/steady_decode.h,
// driven through hearth/c/hearth.h (libhearth_c.so, as a C, Python or Go
// host links it), with the built-in metrics collector on (the default) and
// off ("metrics": {"enabled": false}).
//
//   build/bench/capi/hearth_capi_step_bench --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
//
// Two C hosts: one making a call per sequence each way (hearth_plan_sequence,
// hearth_outcome_add), and one making one call each way for the whole step
// (hearth_plan_get_arrays, hearth_outcome_add_arrays), as a Python or Go
// host should. Compare each with CxxStep at the same size.

#include <cstdint>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "bench/common/time_steps.h"
#include "bench/common/steady_decode.h"
#include "hearth/c/hearth.h"
#include "hearth/policy/policy_registry.h"

namespace hearth::bench {
namespace {

constexpr int32_t kUsers = 4;
constexpr int32_t kMaxSteps = 40000;
constexpr const char* kClasses[] = {"voice", "chat", "agent", "embedding", "maintenance"};

[[noreturn]] void DieC(const char* what, hearth_error* error) {
  Die(absl::InternalError(absl::StrCat(what, ": ", hearth_error_message(error))));
}

// SteadyDecode's options as the C API's JSON.
std::string OptionsJson(int32_t running, int32_t waiting, bool metrics) {
  const int32_t positions = kMaxSteps + 64;
  std::string users;
  for (int32_t u = 0; u < kUsers; ++u) {
    absl::StrAppend(&users, u ? ", " : "", "{\"name\": \"user", u, "\", \"weight\": ", 1 + u, "}");
  }
  return absl::StrCat(
      "{\"max_running\": ", running, ", \"max_batched_tokens\": ", 2 * running,
      ", \"kv\": {\"block_size\": 16, \"num_device_blocks\": ",
      running * (2 + positions / 16) + 64, "}, \"max_pending_requests\": ",
      running + waiting + 1, ", \"models\": [{\"name\": \"default\", \"context_length\": ",
      1 << 20, "}], \"users\": [", users,
      "], \"work_classes\": [{\"name\": \"voice\", \"priority\": 4, \"ttft_slo_s\": 0.5},"
      " {\"name\": \"chat\", \"priority\": 3, \"ttft_slo_s\": 2},"
      " {\"name\": \"agent\", \"priority\": 2, \"ttft_slo_s\": 5},"
      " {\"name\": \"embedding\", \"priority\": 1}, {\"name\": \"maintenance\", \"priority\": 0}],"
      " \"policy\": \"household\", \"metrics\": {\"enabled\": ",
      metrics ? "true" : "false", "}}");
}

// SteadyDecode through the C API.
class CSteadyDecode {
 public:
  // `arrays`: the batched calls instead of per-sequence ones.
  CSteadyDecode(int32_t running, int32_t waiting, bool metrics, bool arrays)
      : arrays_(arrays), tokens_(static_cast<size_t>(running), 1) {
    hearth_error* error = nullptr;
    hearth_options* options = nullptr;
    if (hearth_options_from_json(OptionsJson(running, waiting, metrics).c_str(), &options,
                                 &error) ||
        hearth_scheduler_create(options, &scheduler_, &error) ||
        hearth_outcome_new(&outcome_, &error)) {
      DieC("setup", error);
    }
    hearth_options_free(options);
    std::string users[kUsers];
    for (int32_t u = 0; u < kUsers; ++u) users[u] = absl::StrCat("user", u);
    for (int32_t i = 0; i < running + waiting; ++i) {
      hearth_request r = hearth_request_default();
      r.user = users[i % kUsers].c_str();
      r.work_class = kClasses[i % 5];
      r.prompt_tokens = 16;
      r.max_new_tokens = kMaxSteps + 64;
      uint64_t id = 0;
      if (hearth_scheduler_submit(scheduler_, &r, &id, &error)) DieC("submit", error);
    }
    for (int i = 0; i < 10000; ++i) {
      Step();
      hearth_stats stats;
      if (hearth_scheduler_stats(scheduler_, &stats, &error)) DieC("stats", error);
      if (stats.queued == 0 && last_decodes_ == running) return;
    }
    Die(absl::InternalError("never reached steady decode"));
  }
  ~CSteadyDecode() {
    hearth_outcome_free(outcome_);
    hearth_scheduler_free(scheduler_);
  }

  // Not inlined, so a profiler can collect this alone (callgrind
  // --toggle-collect='*CSteadyDecode::Step*').
  ABSL_ATTRIBUTE_NOINLINE void Step() {
    hearth_error* error = nullptr;
    const hearth_plan* plan = nullptr;
    if (hearth_scheduler_plan(scheduler_, now_, &plan, &error) ||
        hearth_outcome_begin(outcome_, plan, &error)) {
      DieC("plan", error);
    }
    if (arrays_) {
      hearth_plan_arrays a;
      if (hearth_plan_get_arrays(plan, &a, sizeof(a), &error)) DieC("arrays", error);
      if (a.num_sequences > tokens_.size()) tokens_.resize(a.num_sequences, 1);
      if (hearth_outcome_add_arrays(outcome_, a.num_sequences, nullptr, nullptr, tokens_.data(),
                                    nullptr, &error) ||
          hearth_scheduler_complete(scheduler_, outcome_, &error)) {
        DieC("complete", error);
      }
      last_batch_ = static_cast<int32_t>(a.num_sequences);
      last_decodes_ = a.num_decodes;
      now_ += 0.02;
      return;
    }
    const size_t n = hearth_plan_count(plan, HEARTH_PLAN_SEQUENCES);
    int32_t decodes = 0;
    for (size_t i = 0; i < n; ++i) {
      hearth_sequence s;
      if (hearth_plan_sequence(plan, i, &s, &error) ||
          hearth_outcome_add(outcome_, s.id, s.sample, /*token=*/1, HEARTH_FINISH_NONE, &error)) {
        DieC("sequence", error);
      }
      decodes += s.decode;
    }
    if (hearth_scheduler_complete(scheduler_, outcome_, &error)) DieC("complete", error);
    last_batch_ = static_cast<int32_t>(n);
    last_decodes_ = decodes;
    now_ += 0.02;
  }

  int32_t last_batch() const { return last_batch_; }

 private:
  hearth_scheduler* scheduler_ = nullptr;
  hearth_outcome* outcome_ = nullptr;
  const bool arrays_;
  std::vector<int32_t> tokens_;
  double now_ = 0;
  int32_t last_batch_ = 0;
  int32_t last_decodes_ = 0;
};

// The C++ core on the same workload and policy (the C API's default,
// "household"), no metrics sink.
void BM_CxxStep(benchmark::State& state) {
  absl::StatusOr<PolicyFactory> household = MakePolicyFactory("household", {});
  if (!household.ok()) Die(household.status());
  SteadyDecode fixture(static_cast<int32_t>(state.range(0)), static_cast<int32_t>(state.range(1)),
                       *household, kMaxSteps, kUsers);
  TimeSteps(state, fixture);
}

void BM_CStep(benchmark::State& state, bool metrics, bool arrays) {
  CSteadyDecode fixture(static_cast<int32_t>(state.range(0)),
                        static_cast<int32_t>(state.range(1)), metrics, arrays);
  TimeSteps(state, fixture);
}

void BM_CStepMetricsOff(benchmark::State& state) { BM_CStep(state, false, false); }
void BM_CStepMetricsOn(benchmark::State& state) { BM_CStep(state, true, false); }
void BM_CArraysStepMetricsOff(benchmark::State& state) { BM_CStep(state, false, true); }
void BM_CArraysStepMetricsOn(benchmark::State& state) { BM_CStep(state, true, true); }

BENCHMARK(BM_CxxStep)->Args({1024, 10000})->Args({64, 1000});
BENCHMARK(BM_CStepMetricsOff)->Args({1024, 10000})->Args({64, 1000});
BENCHMARK(BM_CStepMetricsOn)->Args({1024, 10000})->Args({64, 1000});
BENCHMARK(BM_CArraysStepMetricsOff)->Args({1024, 10000})->Args({64, 1000});
BENCHMARK(BM_CArraysStepMetricsOn)->Args({1024, 10000})->Args({64, 1000});

}  // namespace
}  // namespace hearth::bench

BENCHMARK_MAIN();
