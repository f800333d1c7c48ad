#include "tests/testing/residency_workload.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/testing/scheduler_harness.h"
#include "scheduler/scheduler_peer.h"

namespace hearth::testing {
namespace {

int32_t Uniform(std::mt19937_64& rng, int32_t lo, int32_t hi) {
  return std::uniform_int_distribution<int32_t>(lo, hi)(rng);
}

// Two or three base models, each with up to two adapters (at least one
// adapter in all), in memory that holds the largest base with its largest
// adapter and a little KV, sometimes more.
SchedulerOptions RandomResidencyOptions(std::mt19937_64& rng, ResidencyWorkloadStats* stats) {
  SchedulerOptions o;
  o.kv.block_size = std::vector<int32_t>{1, 4, 16}[rng() % 3];
  // The largest request (48 prompt tokens, 16 new) fits in the pool and in
  // the KV room memory leaves.
  const int32_t request_blocks = (64 + o.kv.block_size - 1) / o.kv.block_size;
  o.kv.num_device_blocks = Uniform(rng, request_blocks, request_blocks + 100);
  o.kv.num_host_blocks = rng() % 3 == 0 ? Uniform(rng, 1, 40) : 0;
  if (o.kv.num_host_blocks > 0 && rng() % 2) o.preemption_mode = PreemptionMode::kSwap;
  o.kv.enable_prefix_caching = rng() % 2;
  o.max_batched_tokens = Uniform(rng, 16, 160);
  o.max_running = Uniform(rng, 1, 12);
  o.max_pending_requests = 200;
  const int64_t kv_per_token = 1000;
  const int64_t block_bytes = kv_per_token * o.kv.block_size;
  o.models.clear();
  const int bases = Uniform(rng, 2, 3);
  int64_t largest_pair = 0, all_weights = 0;
  for (int b = 0; b < bases; ++b) {
    ModelConfig base;
    base.name = absl::StrCat("base", b);
    base.context_length = Uniform(rng, 64, 300);
    base.kv_bytes_per_token = kv_per_token;
    base.weights_bytes = Uniform(rng, 4, 40) * block_bytes;
    base.preload = false;
    if (rng() % 2) base.keep_alive = absl::Milliseconds(Uniform(rng, 10, 300));
    const size_t base_index = o.models.size();
    o.models.push_back(base);
    all_weights += base.weights_bytes;
    const int adapters = b == 0 ? Uniform(rng, 1, 2) : Uniform(rng, 0, 2);
    int64_t largest_adapter = 0;
    for (int a = 0; a < adapters; ++a) {
      ModelConfig adapter;
      adapter.name = absl::StrCat("base", b, "-lora", a);
      adapter.base_model = o.models[base_index].name;
      adapter.context_length = o.models[base_index].context_length;
      adapter.weights_bytes = Uniform(rng, 0, 3) * block_bytes;
      adapter.preload = false;
      if (rng() % 2) adapter.keep_alive = absl::Milliseconds(Uniform(rng, 10, 300));
      largest_adapter = std::max(largest_adapter, adapter.weights_bytes);
      all_weights += adapter.weights_bytes;
      o.models.push_back(adapter);
    }
    largest_pair = std::max(largest_pair, o.models[base_index].weights_bytes + largest_adapter);
  }
  // Room for the largest request beside the largest pair, and now and then
  // for everything.
  const int64_t kv_room =
      int64_t{Uniform(rng, request_blocks, request_blocks + o.kv.num_device_blocks / 4)} *
      block_bytes;
  o.residency.device_memory_bytes =
      rng() % 5 == 0 ? all_weights + kv_room : largest_pair + kv_room;
  if (o.residency.device_memory_bytes < all_weights + request_blocks * block_bytes) {
    ++stats->tight_configs;
  }
  // Preload the first base now and then.
  o.models[0].preload = rng() % 2;
  o.residency.max_concurrent_loads = Uniform(rng, 1, 2);
  o.residency.max_resident_adapters = Uniform(rng, 0, 2);
  o.residency.max_adapters_per_step = Uniform(rng, 0, 2);
  o.overlap_planning = rng() % 3 == 0;
  // No deadline, no queue timeout: nothing ends a request but running it
  // (or an engine failure).
  o.work_classes = {WorkClassConfig{}};
  return o;
}

std::string Stuck(SchedulerHarness& h, const SchedulerOptions& o, uint64_t seed,
                  ArrivalOrder order) {
  const SchedulerStats st = h.scheduler().stats();
  std::string detail = absl::StrCat(
      h.live().size(), " requests never ended (seed ", seed,
      order == ArrivalOrder::kReversed ? ", reversed" : ", as drawn", "): preparing ", st.preparing,
      " waiting ", st.waiting, " running ", st.running, " swapped ", st.swapped, "; weights ",
      st.resident_weight_bytes, " of memory ", o.residency.device_memory_bytes);
  for (const ModelConfig& m : o.models) {
    absl::StrAppend(&detail, "\n  model ", m.name, " weights ", m.weights_bytes,
                    m.base_model.empty() ? "" : " adapter of ", m.base_model);
  }
  absl::StrAppend(&detail, "\n  last plan: ", h.last_plan().sequences.size(), " sequences;");
  for (const ModelCommand& c : h.last_plan().model_commands) {
    absl::StrAppend(&detail, c.kind == ModelCommandKind::kLoad ? " load " : " unload ",
                    c.model.value());
  }
  for (RequestId id : h.live()) {
    auto v = h.scheduler().GetRequest(id);
    if (!v.ok()) continue;
    absl::StrAppend(&detail, "\n  ", id.ToString(), " ", std::string(PhaseName(v->phase)), " model ",
                    v->model.value());
  }
  return detail;
}

// A plan that moves nothing: no sequence, model command, preemption or
// release, and no request ended.
bool Idle(const PlanCopy& plan, size_t results_before, size_t results_after) {
  return plan.sequences.empty() && plan.model_commands.empty() && plan.preempted.empty() &&
         plan.released.empty() && results_before == results_after;
}

}  // namespace

absl::Status RunResidencyWorkload(uint64_t seed, ArrivalOrder order,
                                  ResidencyWorkloadStats* stats) {
  std::mt19937_64 rng(seed);
  const SchedulerOptions options = RandomResidencyOptions(rng, stats);
  auto harness = SchedulerHarness::Create(options, seed);
  if (!harness.ok()) {
    return absl::InternalError(absl::StrCat("seed ", seed, ": ", harness.status().ToString()));
  }
  SchedulerHarness& h = **harness;
  h.executor().set_load_failure_rate(rng() % 4 == 0 ? 0.05 : 0.0);
  h.executor().set_out_of_kv_rate(rng() % 4 == 0 ? 0.02 : 0.0);
  const auto num_models = static_cast<int32_t>(options.models.size());
  int64_t submitted = 0;
  // Plans in a row that NextEventTime() asked for and that moved nothing.
  int idle_streak = 0;
  // Before the next step: whether NextEventTime() says work is due, and the
  // results so far.
  bool due = false;
  size_t before = 0;
  auto note = [&] {
    due = h.scheduler().NextEventTime() == absl::InfinitePast();
    before = h.results().size();
  };
  auto check = [&]() -> absl::Status {
    const PlanCopy& plan = h.last_plan();
    stats->loads += plan.model_commands_loads;
    stats->unloads += static_cast<int64_t>(plan.model_commands.size()) - plan.model_commands_loads;
    idle_streak = due && Idle(plan, before, h.results().size()) ? idle_streak + 1 : 0;
    // An overlapped plan may wait one step for a load in flight; more than
    // that is an engine told to plan again and again for nothing.
    if (idle_streak > 2) {
      return absl::InternalError(absl::StrCat(
          "NextEventTime() is InfinitePast but ", idle_streak, " plans in a row did nothing; ",
          Stuck(h, options, seed, order)));
    }
    note();
    return absl::OkStatus();
  };
  auto run = [&](SchedulerHarness::RunOptions o) -> absl::Status {
    note();
    o.after_step = check;
    return h.Run(o).status();
  };
  const int bursts = Uniform(rng, 1, 8);
  for (int b = 0; b < bursts; ++b) {
    std::vector<RequestSpec> burst(static_cast<size_t>(Uniform(rng, 1, 10)));
    for (RequestSpec& spec : burst) {
      spec.model = ModelId(static_cast<uint32_t>(Uniform(rng, 0, num_models - 1)));
      spec.prompt_tokens = Uniform(rng, 1, 48);
      spec.max_new_tokens = Uniform(rng, 1, 16);
    }
    if (order == ArrivalOrder::kReversed) std::reverse(burst.begin(), burst.end());
    for (const RequestSpec& spec : burst) {
      auto id = h.Submit(spec);
      if (!id.ok()) {
        // Sizes are drawn to fit every model's context and the pool.
        return absl::InternalError(absl::StrCat("seed ", seed, ": ", id.status().ToString()));
      }
      ++submitted;
    }
    if (absl::Status st = run({.max_steps = Uniform(rng, 0, 6), .until_idle = false}); !st.ok()) {
      return st;
    }
  }
  if (absl::Status st = run({.max_steps = 5000}); !st.ok()) return st;
  if (absl::Status s = h.FinishInFlight(); !s.ok()) return s;
  if (!h.live().empty()) return absl::InternalError(Stuck(h, options, seed, order));
  if (static_cast<int64_t>(h.results().size()) != submitted) {
    return absl::InternalError(absl::StrCat("seed ", seed, ": ", h.results().size(),
                                            " results for ", submitted, " requests"));
  }
  for (const auto& [id, r] : h.results()) {
    if (r.phase == RequestPhase::kFinished) {
      ++stats->finished;
    } else if (r.phase == RequestPhase::kFailed && !r.message.empty()) {
      ++stats->failed;
    } else {
      return absl::InternalError(absl::StrCat("seed ", seed, ": ", id.ToString(), " ended ",
                                              std::string(PhaseName(r.phase)), ": ", r.message));
    }
  }
  stats->requests += submitted;
  if (internal::SchedulerPeer::allocator(h.scheduler()).num_owned() != 0) {
    return absl::InternalError(absl::StrCat("seed ", seed, ": blocks owned after every request ended"));
  }
  // One more plan hands over what is owed to the engine (released entries).
  if (absl::Status s = h.Step(); !s.ok()) return s;
  if (absl::Status s = h.FinishInFlight(); !s.ok()) return s;
  if (h.scheduler().NextEventTime() == absl::InfinitePast()) {
    return absl::InternalError(
        absl::StrCat("seed ", seed, ": NextEventTime() is InfinitePast with nothing live"));
  }
  return absl::OkStatus();
}

}  // namespace hearth::testing
