#include "hearth/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <queue>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hearth/common/clock.h"
#include "hearth/exec/engine_loop.h"
#include "hearth/metrics/fanout_sink.h"
#include "hearth/metrics/timeline_recorder.h"
#include "hearth/scheduler/scheduler.h"
#include "hearth/sim/simulated_executor.h"
#include "internal/status_macros.h"
#include "sim/preemption_tally.h"
#include "sim/service_difference.h"
#include "sim/sim_random.h"

namespace hearth {
namespace {

// Consecutive empty iterations with work pending but no arrival left before
// the run is declared stuck (10 ms ticks: about 116 simulated days).
constexpr int64_t kMaxIdleTicks = 1'000'000'000;

struct Arrival {
  absl::Time time;
  int32_t index;
  bool operator>(const Arrival& o) const {
    return time != o.time ? time > o.time : index > o.index;
  }
};

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

// Fills the prompt positions from `from` up to the end of the hashed blocks
// with ids that depend only on (seed, block hash, offset in the block), and
// returns where the hashed blocks end (at least `from`).
int32_t FillHashedBlocks(const SimRequest& r, uint64_t seed, int32_t from,
                         std::vector<TokenId>& ids, int32_t vocab) {
  if (r.prefix_hashes.empty()) return from;
  const int64_t hashed = std::min<int64_t>(
      r.prompt_tokens,
      static_cast<int64_t>(r.prefix_hashes.size()) * r.prefix_hash_tokens);
  for (int64_t p = from; p < hashed; ++p) {
    const uint64_t block = Mix(seed ^ Mix(r.prefix_hashes[p / r.prefix_hash_tokens] + 0x7f4a7c15ull));
    ids[p] = static_cast<TokenId>(Mix(block + static_cast<uint64_t>(p % r.prefix_hash_tokens)) %
                                  static_cast<uint64_t>(vocab));
  }
  return static_cast<int32_t>(std::max<int64_t>(from, hashed));
}

absl::Status ValidateOptions(const SimulationOptions& o) {
  if (o.cost_model == nullptr) {
    return absl::InvalidArgumentError("SimulationOptions.cost_model is required");
  }
  if (o.scheduler.metrics_sink != nullptr || o.scheduler.on_result) {
    return absl::InvalidArgumentError(
        "SimulationOptions.scheduler.metrics_sink and on_result must be unset; "
        "the simulator installs its own");
  }
  if (o.default_max_new_tokens < 1) {
    return absl::InvalidArgumentError(
        "SimulationOptions.default_max_new_tokens must be >= 1");
  }
  const size_t classes = o.scheduler.work_classes.size();
  if (!o.class_timeouts.empty() && o.class_timeouts.size() != classes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SimulationOptions.class_timeouts must be empty or have one entry per "
        "class (", classes, ")"));
  }
  for (absl::Duration d : o.class_timeouts) {
    if (d <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          "SimulationOptions.class_timeouts must be > 0");
    }
  }
  if (o.idle_tick <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("SimulationOptions.idle_tick must be > 0");
  }
  if (o.scheduler.models.empty()) {
    return absl::InvalidArgumentError("SimulationOptions.scheduler.models is empty");
  }
  if (!(o.output_hints.noise_sigma >= 0 && o.output_hints.noise_sigma <= 10)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SimulationOptions.output_hints.noise_sigma is ", o.output_hints.noise_sigma,
        "; must be in [0, 10]"));
  }
  return absl::OkStatus();
}

class SimulationRun : private EngineHooks {
 public:
  SimulationRun(const Workload& w, const SimulationOptions& o)
      : w_(w), o_(o), start_(absl::UnixEpoch()), clock_(start_) {}

  absl::StatusOr<SimulationResult> Run();

 private:
  absl::Status Setup();
  void Submit(int32_t index, absl::Time arrival);
  void BuildTokenIds(int32_t index, RequestSpec& spec);
  // OutputHintOptions' prediction for request `index`; its own random
  // stream, so predictions do not depend on the order of submissions.
  OutputLengthPrediction PredictOutput(int32_t index, int32_t max_new_tokens) const;
  void OnResult(const RequestResult& r);
  void DropDependents(int32_t index);
  // A call of a tracked workflow ended (or will never be issued: `end` is
  // InfinitePast then).
  void EndCall(int32_t index, bool finished, absl::Time end);
  // One EngineLoop step at `now`; returns whether it ran anything
  // (sequences, or block copies that took time).
  absl::StatusOr<bool> RunStep(absl::Time now);
  void OnExecuted(const StepPlan& plan, const absl::Status& executed,
                  StepOutcome& outcome) override;
  absl::Status Loop();
  // Adds the requests Submit() refused to their user, class and total as
  // arrived and rejected.
  void CountSubmitRejections(MetricsReport& report) const;

  const Workload& w_;
  const SimulationOptions& o_;
  const absl::Time start_;
  ManualClock clock_;

  std::unique_ptr<MetricsCollector> metrics_;
  std::unique_ptr<TimelineRecorder> timeline_;
  internal::PreemptionTally preemption_tally_;
  std::unique_ptr<FanoutSink> fanout_;
  // Read by an oracle policy, so declared before (and destroyed after) the
  // scheduler that owns it.
  TrueOutputLengths true_lengths_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<SimulatedExecutor> executor_;
  std::unique_ptr<EngineLoop> loop_;
  // The end of the latest step that ran (SimulatedExecutor's completed_at).
  absl::Time step_end_;

  std::priority_queue<Arrival, std::vector<Arrival>, std::greater<Arrival>>
      arrivals_;
  // Children of each request, as a linked list through child_next_.
  std::vector<int32_t> child_head_;
  std::vector<int32_t> child_next_;
  std::vector<int32_t> children_left_;
  // Prompt token ids kept for requests whose children share their prefix.
  absl::flat_hash_map<int32_t, std::vector<TokenId>> prompt_ids_;
  absl::flat_hash_map<RequestId, int32_t> index_of_;
  // Scheduler id of each issued request (for its children's parent field).
  std::vector<RequestId> id_of_;
  // Per request, the first call of its workflow; per workflow root, its
  // calls, the latest end, and whether every call finished.
  std::vector<int32_t> root_of_;
  struct WorkflowTrack {
    int32_t calls = 0;
    int32_t ended = 0;
    bool all_finished = true;
    absl::Time first_arrival = absl::InfiniteFuture();
    absl::Time last_end = absl::InfinitePast();
  };
  absl::flat_hash_map<int32_t, WorkflowTrack> workflows_;
  std::vector<RequestResult> results_;

  int32_t vocab_ = 32000;
  int32_t context_ = 0;
  int64_t live_ = 0;
  uint64_t ended_ = 0;
  uint64_t submit_rejected_ = 0;
  std::map<std::string, uint64_t> rejected_by_reason_;
  std::vector<uint64_t> rejected_per_user_;
  std::vector<uint64_t> rejected_per_class_;
  uint64_t dependents_dropped_ = 0;
  uint64_t steps_ = 0;
  absl::Time last_end_;
  // Earliest and latest arrival submitted (the series' origin and the
  // accumulated service difference's horizon).
  absl::Time first_arrival_ = absl::InfiniteFuture();
  absl::Time last_arrival_ = absl::InfinitePast();
};

absl::Status SimulationRun::Setup() {
  const SchedulerOptions& so = o_.scheduler;
  HEARTH_RETURN_IF_ERROR(ValidateWorkload(
      w_, static_cast<uint32_t>(so.users.size()),
      static_cast<uint32_t>(so.work_classes.size())));
  MetricsOptions mo = MetricsOptionsFor(so);
  if (!o_.class_slos.empty()) mo.class_slos = o_.class_slos;
  mo.prefill_weight = o_.prefill_weight;
  mo.decode_weight = o_.decode_weight;
  mo.series_interval = o_.series_interval;
  mo.max_samples_per_series = o_.latency_samples_per_series;
  mo.clock = &clock_;
  HEARTH_ASSIGN_OR_RETURN(metrics_, MetricsCollector::Create(mo));
  std::vector<MetricsSink*> sinks = {metrics_.get(), &preemption_tally_};
  if (o_.record_timeline) {
    TimelineOptions to;
    to.user_names = mo.user_names;
    to.class_names = mo.class_names;
    to.clock = &clock_;
    to.origin = start_;
    to.max_events = o_.timeline_max_events;
    HEARTH_ASSIGN_OR_RETURN(timeline_, TimelineRecorder::Create(to));
    sinks.push_back(timeline_.get());
  }
  fanout_ = std::make_unique<FanoutSink>(sinks);
  SchedulerOptions options = so;
  options.metrics_sink = fanout_.get();
  if (o_.oracle_policy) {
    options.policy_factory = [this](const SchedulerOptions& so) {
      return o_.oracle_policy(so, true_lengths_);
    };
  }
  HEARTH_ASSIGN_OR_RETURN(scheduler_, Scheduler::Create(std::move(options)));
  const ModelConfig& model = so.models[0];
  context_ = model.context_length;
  if (model.vocab_size > 0) vocab_ = model.vocab_size;
  executor_ = std::make_unique<SimulatedExecutor>(
      o_.cost_model, so.kv.block_size, model.kv_bytes_per_token);
  loop_ = std::make_unique<EngineLoop>(*scheduler_, *executor_);

  rejected_per_user_.assign(so.users.size(), 0);
  rejected_per_class_.assign(so.work_classes.size(), 0);
  const size_t n = w_.requests.size();
  child_head_.assign(n, -1);
  child_next_.assign(n, -1);
  children_left_.assign(n, 0);
  id_of_.assign(n, RequestId());
  root_of_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const int32_t parent = w_.requests[i].parent;  // Earlier in the list.
    root_of_[i] = parent < 0 ? static_cast<int32_t>(i) : root_of_[parent];
    if (parent >= 0) {
      WorkflowTrack& t = workflows_[root_of_[i]];
      t.calls += t.calls == 0 ? 2 : 1;  // The root and this call.
    }
  }
  // Insert in reverse so each list runs in index order.
  for (size_t i = n; i-- > 0;) {
    const SimRequest& r = w_.requests[i];
    if (r.parent < 0) {
      arrivals_.push({start_ + r.arrival, static_cast<int32_t>(i)});
      continue;
    }
    child_next_[i] = child_head_[r.parent];
    child_head_[r.parent] = static_cast<int32_t>(i);
    ++children_left_[r.parent];
  }
  return absl::OkStatus();
}

void SimulationRun::BuildTokenIds(int32_t index, RequestSpec& spec) {
  const SimRequest& r = w_.requests[index];
  bool needed = r.shared_prefix_tokens > 0 || !r.prefix_hashes.empty();
  for (int32_t c = child_head_[index]; c >= 0 && !needed; c = child_next_[c]) {
    needed = w_.requests[c].shared_prefix_tokens > 0;
  }
  if (!needed) return;
  std::vector<TokenId>& ids = spec.prompt_token_ids;
  ids.resize(r.prompt_tokens);
  int32_t shared = 0;
  if (r.shared_prefix_tokens > 0) {
    auto it = prompt_ids_.find(r.parent);
    if (it != prompt_ids_.end()) {
      // The parent's prompt, then its answer: the executor samples token 0.
      const int32_t from_prompt = std::min<int32_t>(
          r.shared_prefix_tokens, static_cast<int32_t>(it->second.size()));
      std::copy_n(it->second.begin(), from_prompt, ids.begin());
      std::fill(ids.begin() + from_prompt, ids.begin() + r.shared_prefix_tokens, 0);
      shared = r.shared_prefix_tokens;
    }
  }
  shared = FillHashedBlocks(r, o_.seed, shared, ids, vocab_);
  const uint64_t base = Mix(o_.seed ^ (uint64_t{static_cast<uint32_t>(index)} << 32));
  for (int32_t p = shared; p < r.prompt_tokens; ++p) {
    ids[p] = static_cast<TokenId>(Mix(base + static_cast<uint64_t>(p)) %
                                  static_cast<uint64_t>(vocab_));
  }
  if (children_left_[index] > 0) prompt_ids_[index] = ids;
}

OutputLengthPrediction SimulationRun::PredictOutput(int32_t index,
                                                   int32_t max_new_tokens) const {
  const double sigma = o_.output_hints.noise_sigma;
  internal::SimRandom random(Mix(o_.seed ^ 0x68696e74ull) ^ static_cast<uint64_t>(index));
  const double expected =
      w_.requests[index].output_tokens * (sigma > 0 ? std::exp(sigma * random.Normal()) : 1.0);
  // 1.2816: the standard normal's 90th percentile.
  const double spread = std::exp(1.2816 * sigma);
  auto clamp = [max_new_tokens](double tokens) {
    return static_cast<int32_t>(std::clamp(std::round(tokens), 1.0, double(max_new_tokens)));
  };
  OutputLengthPrediction p;
  p.expected_tokens = clamp(expected);
  p.low_tokens = std::min(clamp(expected / spread), p.expected_tokens);
  p.high_tokens = std::max(clamp(expected * spread), p.expected_tokens);
  return p;
}

void SimulationRun::Submit(int32_t index, absl::Time arrival) {
  const SimRequest& r = w_.requests[index];
  // The parent's ids stay until its last child has copied them.
  if (r.parent >= 0) --children_left_[r.parent];
  RequestSpec spec;
  spec.user = UserId(r.user);
  spec.work_class = WorkClassId(r.work_class);
  spec.model = ModelId(0);
  spec.prompt_tokens = r.prompt_tokens;
  const int32_t cap = r.max_new_tokens > 0 ? r.max_new_tokens
                                           : o_.default_max_new_tokens;
  spec.max_new_tokens = std::max(1, std::min(cap, context_ - r.prompt_tokens));
  spec.kind = r.kind;
  spec.pooling = r.pooling;
  spec.encoder_spans = r.encoder_spans;
  if (r.kind == RequestKind::kEmbed) spec.max_new_tokens = 0;
  spec.arrival_time = arrival;
  spec.label = r.label;
  if (o_.output_hints.enabled && r.kind == RequestKind::kGenerate) {
    spec.predicted_output = PredictOutput(index, spec.max_new_tokens);
  }
  first_arrival_ = std::min(first_arrival_, arrival);
  last_arrival_ = std::max(last_arrival_, arrival);
  // Issued only once the parent finished, so its id is known.
  if (r.parent >= 0) spec.parent = id_of_[r.parent];
  if (!o_.class_timeouts.empty() &&
      o_.class_timeouts[r.work_class] != absl::InfiniteDuration()) {
    spec.deadline = arrival + o_.class_timeouts[r.work_class];
  }
  BuildTokenIds(index, spec);
  if (!spec.prompt_token_ids.empty()) spec.cache_scope = SimCacheScope(r);
  if (r.parent >= 0 && children_left_[r.parent] == 0) {
    prompt_ids_.erase(r.parent);
  }
  if (auto t = workflows_.find(root_of_[index]); t != workflows_.end()) {
    t->second.first_arrival = std::min(t->second.first_arrival, arrival);
  }
  absl::StatusOr<RequestId> id = scheduler_->Submit(spec);
  if (!id.ok()) {
    ++submit_rejected_;
    ++rejected_per_user_[r.user];
    ++rejected_per_class_[r.work_class];
    ++rejected_by_reason_[r.prompt_tokens >= context_
                              ? std::string("over_context")
                              : absl::StatusCodeToString(id.status().code())];
    ++ended_;
    EndCall(index, /*finished=*/false, arrival);
    DropDependents(index);
    return;
  }
  id_of_[index] = *id;
  const int32_t true_length = std::min(r.output_tokens, spec.max_new_tokens);
  // An embedding samples nothing; any length lets the executor run it.
  (void)executor_->SetOutputLength(*id, std::max(true_length, 1));
  if (o_.oracle_policy) true_lengths_.Set(*id, true_length);
  index_of_[*id] = index;
  ++live_;
}

void SimulationRun::OnResult(const RequestResult& r) {
  --live_;
  ++ended_;
  executor_->Forget(r.id);
  true_lengths_.Forget(r.id);
  auto it = index_of_.find(r.id);
  if (it == index_of_.end()) return;
  const int32_t index = it->second;
  index_of_.erase(it);
  EndCall(index, r.phase == RequestPhase::kFinished, r.end_time);
  if (r.phase != RequestPhase::kFinished) {
    DropDependents(index);
    return;
  }
  for (int32_t c = child_head_[index]; c >= 0; c = child_next_[c]) {
    arrivals_.push({r.end_time + w_.requests[c].think_time, c});
  }
}

void SimulationRun::EndCall(int32_t index, bool finished, absl::Time end) {
  auto t = workflows_.find(root_of_[index]);
  if (t == workflows_.end()) return;
  ++t->second.ended;
  t->second.all_finished = t->second.all_finished && finished;
  t->second.last_end = std::max(t->second.last_end, end);
}

void SimulationRun::DropDependents(int32_t index) {
  // A call whose parent never finished is never issued, nor are its own
  // dependents.
  prompt_ids_.erase(index);
  std::vector<int32_t> stack = {index};
  while (!stack.empty()) {
    const int32_t i = stack.back();
    stack.pop_back();
    for (int32_t c = child_head_[i]; c >= 0; c = child_next_[c]) {
      ++dependents_dropped_;
      ++ended_;
      EndCall(c, /*finished=*/false, absl::InfinitePast());
      stack.push_back(c);
    }
  }
}

absl::StatusOr<bool> SimulationRun::RunStep(absl::Time now) {
  clock_.Set(now);
  if (absl::Status s = loop_->Step(now, *this); !s.ok()) {
    // The simulated executor answers every plan; a refusal is a bug. A
    // failed step's sequences were completed as failed, retried or ended
    // per their class, and the run ends with the executor's error.
    if (!loop_->last_step().outcome_refused) return s;
    return absl::InternalError(
        absl::StrCat("the scheduler rejected the simulated outcome: ", s.message()));
  }
  return loop_->last_step().sequences > 0 ||
         executor_->last_step_time() > absl::ZeroDuration();
}

void SimulationRun::OnExecuted(const StepPlan&, const absl::Status& executed,
                               StepOutcome& outcome) {
  if (!executed.ok()) return;
  // The clock stands at the step's end while Complete runs, as a real
  // host's would; metrics read it for a step end the outcome leaves unset.
  clock_.Set(outcome.completed_at);
  step_end_ = outcome.completed_at;
}

absl::Status SimulationRun::Loop() {
  absl::Time now = start_;
  last_end_ = start_;
  int64_t idle_ticks = 0;
  const double total = static_cast<double>(std::max<size_t>(1, w_.requests.size()));
  for (uint64_t iteration = 0;; ++iteration) {
    while (!arrivals_.empty() && arrivals_.top().time <= now) {
      const Arrival a = arrivals_.top();
      arrivals_.pop();
      Submit(a.index, a.time);
    }
    HEARTH_ASSIGN_OR_RETURN(const bool ran, RunStep(now));
    if (ran) {
      ++steps_;
      now = step_end_;
      last_end_ = now;
    }
    results_.clear();
    scheduler_->DrainResults(&results_);
    for (const RequestResult& r : results_) OnResult(r);
    if (o_.progress && (iteration & 4095) == 0) o_.progress(ended_ / total);
    if (ran) {
      idle_ticks = 0;
      continue;
    }
    if (live_ == 0 && arrivals_.empty()) break;
    const absl::Time next =
        arrivals_.empty() ? absl::InfiniteFuture() : arrivals_.top().time;
    if (live_ == 0) {
      now = std::max(now, next);
      continue;
    }
    // Work waits but nothing could run (a cap, a full cache): let time pass
    // so deadlines and policy aging can act, or jump to the next arrival.
    now = std::min(next, now + o_.idle_tick);
    if (++idle_ticks > kMaxIdleTicks) {
      return absl::InternalError(absl::StrCat(
          "simulation stuck: ", live_, " requests live but none runs"));
    }
  }
  if (o_.progress) o_.progress(1.0);
  return absl::OkStatus();
}

void SimulationRun::CountSubmitRejections(MetricsReport& report) const {
  // The scheduler never saw these requests, so its metrics hold none of
  // them; a report that counted only what it accepted would hide them.
  auto add = [](GroupReport& g, uint64_t n) {
    g.arrived += n;
    g.rejected += n;
  };
  for (size_t u = 0; u < report.users.size() && u < rejected_per_user_.size(); ++u) {
    add(report.users[u], rejected_per_user_[u]);
  }
  for (size_t c = 0; c < report.classes.size() && c < rejected_per_class_.size(); ++c) {
    add(report.classes[c], rejected_per_class_[c]);
  }
  add(report.total, submit_rejected_);
}

absl::StatusOr<SimulationResult> SimulationRun::Run() {
  HEARTH_RETURN_IF_ERROR(ValidateOptions(o_));
  HEARTH_RETURN_IF_ERROR(Setup());
  HEARTH_RETURN_IF_ERROR(Loop());
  metrics_->Flush();
  SimulationResult result;
  result.policy_name = std::string(scheduler_->policy_name());
  result.cost_model = o_.cost_model->Describe();
  result.report = metrics_->Report();
  CountSubmitRejections(result.report);
  result.series = metrics_->series();
  for (size_t c = 0; c < o_.scheduler.work_classes.size(); ++c) {
    absl::Span<const double> s =
        metrics_->ClassTtftSamples(WorkClassId(static_cast<uint32_t>(c)));
    result.class_ttft.emplace_back(s.begin(), s.end());
  }
  if (timeline_ != nullptr) result.timeline_json = timeline_->Json();
  result.steps = steps_;
  result.simulated_seconds = absl::ToDoubleSeconds(last_end_ - start_);
  result.submit_rejected = submit_rejected_;
  result.submit_rejected_by_reason = rejected_by_reason_;
  result.dependents_dropped = dependents_dropped_;
  result.prefix_hit_tokens = scheduler_->stats().prefix_hit_tokens;
  result.swap_preemptions = preemption_tally_.swaps();
  result.recompute_preemptions = preemption_tally_.recomputes();
  for (const auto& [root, t] : workflows_) {
    ++result.workflows;
    if (!t.all_finished || t.ended < t.calls) {
      ++result.workflows_incomplete;
      continue;
    }
    result.workflow_seconds.push_back(absl::ToDoubleSeconds(t.last_end - t.first_arrival));
  }
  std::sort(result.workflow_seconds.begin(), result.workflow_seconds.end());
  if (first_arrival_ <= last_arrival_) {
    result.max_accumulated_service_difference = internal::MaxAccumulatedServiceDifference(
        result.series, result.report.users,
        absl::ToDoubleSeconds(last_arrival_ - first_arrival_));
  }
  return result;
}

}  // namespace

absl::StatusOr<SimulationResult> RunSimulation(const Workload& workload,
                                               const SimulationOptions& options) {
  SimulationRun run(workload, options);
  return run.Run();
}

}  // namespace hearth
