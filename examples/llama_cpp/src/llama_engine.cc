#include "hearth_llama_cpp/llama_engine.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hearth/exec/step_executor.h"

namespace hearth::llama_cpp {

absl::Status SizeSchedulerForContext(llama_context* ctx, int32_t kv_blocks, SchedulerOptions& o) {
  if (ctx == nullptr) return absl::InvalidArgumentError("llama context is null");
  const llama_model* model = llama_get_model(ctx);
  const int32_t n_ctx = static_cast<int32_t>(llama_n_ctx(ctx));
  const int32_t block_size = o.kv.block_size;
  if (block_size < 1 || block_size > n_ctx) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kv.block_size is ", block_size, "; allowed: [1, n_ctx = ", n_ctx, "]"));
  }
  if (kv_blocks < 0) return absl::InvalidArgumentError("kv_blocks must be >= 0 (0: n_ctx / block_size)");
  o.kv.num_device_blocks = kv_blocks > 0 ? kv_blocks : n_ctx / block_size;
  o.kv.num_host_blocks = 0;
  o.kv.enable_prefix_caching = false;
  o.preemption_mode = PreemptionMode::kRecompute;
  o.max_batched_tokens = static_cast<int32_t>(llama_n_batch(ctx));
  o.max_running = std::min<int32_t>(static_cast<int32_t>(llama_n_seq_max(ctx)), o.max_batched_tokens);
  o.on_result = nullptr;
  ModelConfig m;
  m.name = "llama";
  m.context_length = n_ctx;
  m.vocab_size = llama_vocab_n_tokens(llama_model_get_vocab(model));
  // K and V, f16 (llama.cpp's default cache type), per layer and KV head.
  const int64_t head_dim = llama_model_n_embd(model) / std::max(1, llama_model_n_head(model));
  m.kv_bytes_per_token = int64_t{llama_model_n_layer(model)} * llama_model_n_head_kv(model) *
                         head_dim * 2 * 2;
  o.models = {m};
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LlamaEngine>> LlamaEngine::Create(llama_context* ctx,
                                                                LlamaEngineOptions options) {
  if (ctx == nullptr) return absl::InvalidArgumentError("llama context is null");
  if (options.max_evictions < 0) return absl::InvalidArgumentError("max_evictions must be >= 0");
  absl::Status sized = SizeSchedulerForContext(ctx, options.kv_blocks, options.scheduler);
  if (!sized.ok()) return sized;
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(options.scheduler);
  if (!scheduler.ok()) return scheduler.status();
  absl::StatusOr<std::unique_ptr<LlamaStepExecutor>> executor = LlamaStepExecutor::Create(ctx);
  if (!executor.ok()) return executor.status();
  return std::unique_ptr<LlamaEngine>(
      new LlamaEngine(*std::move(scheduler), *std::move(executor), options.max_evictions));
}

LlamaEngine::LlamaEngine(std::unique_ptr<Scheduler> scheduler,
                         std::unique_ptr<LlamaStepExecutor> executor, int32_t max_evictions)
    : scheduler_(std::move(scheduler)),
      executor_(std::move(executor)),
      max_evictions_(max_evictions) {}

absl::StatusOr<RequestId> LlamaEngine::Submit(RequestSpec spec) {
  if (spec.prompt_token_ids.empty()) {
    return absl::InvalidArgumentError(
        "the llama.cpp engine needs prompt_token_ids (llama.cpp computes real tokens)");
  }
  if (spec.prompt_tokens == 0) spec.prompt_tokens = static_cast<int32_t>(spec.prompt_token_ids.size());
  absl::MutexLock lock(&mu_);
  // Held across Submit so the engine thread cannot see the request's result
  // before it is registered here.
  absl::StatusOr<RequestId> id = scheduler_->Submit(spec);
  if (!id.ok()) return id.status();
  HostRequest& r = requests_[*id];
  r.id = *id;
  r.spec = std::move(spec);
  incarnations_[*id] = *id;
  return id;
}

absl::StatusOr<bool> LlamaEngine::Step(const Clock& clock) {
  const absl::Time now = clock.Now();
  const absl::Time plan_start = absl::Now();
  absl::StatusOr<const StepPlan*> plan = scheduler_->Plan(now);
  stats_.plan_time += absl::Now() - plan_start;
  if (!plan.ok()) return plan.status();
  ++stats_.steps;
  const bool had_work = !(*plan)->sequences.empty();
  absl::Status executed = ExecuteStep(*executor_, **plan, &outcome_);
  outcome_.completed_at = std::max(now, clock.Now());
  const absl::Time complete_start = absl::Now();
  absl::Status completed = scheduler_->Complete(outcome_);
  stats_.complete_time += absl::Now() - complete_start;
  if (!completed.ok()) return completed;

  const std::vector<RequestId> evicted = executor_->TakeEvicted();
  results_.clear();
  scheduler_->DrainResults(&results_);
  {
    absl::MutexLock lock(&mu_);
    RecordTokens(outcome_);
    AbsorbResults(evicted, outcome_.completed_at);
  }
  if (!executed.ok()) return executed;
  return had_work;
}

void LlamaEngine::AbsorbResults(const std::vector<RequestId>& evicted, absl::Time now) {
  absl::flat_hash_set<RequestId> superseded(evicted.begin(), evicted.end());
  bool freed = false;
  for (RequestResult& result : results_) {
    auto it = incarnations_.find(result.id);
    if (it == incarnations_.end()) continue;
    HostRequest& r = requests_.at(it->second);
    r.arrival = std::min(r.arrival, result.arrival_time);
    r.first_admit = std::min(r.first_admit, result.first_admit_time);
    r.first_token = std::min(r.first_token, result.first_token_time);
    incarnations_.erase(it);
    if (superseded.contains(result.id)) {
      parked_.push_back(r.id);
      continue;
    }
    freed = true;
    Complete(r, std::move(result));
  }
  // Evicted requests wait until KV has been freed (a request ended, or no
  // sequence is left in llama.cpp); resubmitting at once would only evict
  // them again while the pool is still full.
  if (!parked_.empty() && (freed || executor_->live_sequences() == 0)) {
    std::vector<RequestId> parked;
    parked.swap(parked_);
    for (RequestId id : parked) Resubmit(id, now);
  }
}

void LlamaEngine::Complete(HostRequest& r, RequestResult result) {
  Completion& c = completions_.emplace_back();
  c.id = r.id;
  c.output = std::move(r.output);
  c.kv_evictions = r.evictions;
  c.result = std::move(result);
  c.result.id = r.id;
  c.result.prompt_tokens = r.spec.prompt_tokens;
  c.result.output_tokens = static_cast<int32_t>(c.output.size());
  c.result.arrival_time = r.arrival;
  c.result.first_admit_time = r.first_admit;
  c.result.first_token_time = r.first_token;
  requests_.erase(r.id);
}

void LlamaEngine::RecordTokens(const StepOutcome& outcome) {
  for (const SequenceOutcome& o : outcome.sequences) {
    if (!o.produced_token || !o.error.empty()) continue;
    auto it = incarnations_.find(o.id);
    if (it != incarnations_.end()) requests_.at(it->second).output.push_back(o.token);
  }
}

void LlamaEngine::Resubmit(RequestId original, absl::Time now) {
  HostRequest& r = requests_.at(original);
  ++r.evictions;
  ++stats_.resubmissions;
  RequestSpec spec = r.spec;
  spec.prompt_token_ids.insert(spec.prompt_token_ids.end(), r.output.begin(), r.output.end());
  spec.prompt_tokens = static_cast<int32_t>(spec.prompt_token_ids.size());
  spec.max_new_tokens = r.spec.max_new_tokens - static_cast<int32_t>(r.output.size());
  spec.arrival_time = std::min(r.arrival, now);
  absl::StatusOr<RequestId> id = absl::FailedPreconditionError("");
  if (r.evictions > max_evictions_) {
    id = absl::ResourceExhaustedError(absl::StrCat(
        "evicted ", r.evictions, " times for lack of llama.cpp KV; giving up"));
  } else if (spec.max_new_tokens < 1) {
    id = absl::InternalError("evicted after its last token");
  } else {
    id = scheduler_->Submit(spec);
  }
  if (id.ok()) {
    incarnations_[*id] = original;
    return;
  }
  RequestResult failed;
  failed.user = r.spec.user;
  failed.work_class = r.spec.work_class;
  failed.label = r.spec.label;
  failed.phase = RequestPhase::kFailed;
  failed.message = absl::StrCat("resubmission after KV eviction failed: ", id.status().message());
  failed.end_time = now;
  Complete(r, std::move(failed));
}

std::vector<Completion> LlamaEngine::TakeCompletions() {
  absl::MutexLock lock(&mu_);
  std::vector<Completion> out;
  out.swap(completions_);
  return out;
}

int32_t LlamaEngine::pending() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int32_t>(requests_.size());
}

}  // namespace hearth::llama_cpp
