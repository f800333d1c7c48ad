#include "hearth_llama_cpp/llama_engine.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hearth_llama_cpp/llama_runtime.h"

namespace hearth::llama_cpp {

namespace {

// The KV blocks of the sequences Hearth may run at once and the most
// positions one sequence may hold. A unified pool is all of n_ctx for any
// sequence. Per-sequence streams give each sequence id n_ctx_seq cells of
// its own: a sequence can never use more, and the ids kept for prefix
// caching hold their own streams, outside the running sequences' pool.
struct KvShape {
  int32_t blocks = 0;
  int32_t context_length = 0;
};

KvShape ShapeOf(llama_context* ctx, int32_t block_size, int32_t max_running) {
  KvShape shape;
  if (KvStreams(ctx) == 1) {
    const int32_t n_ctx = static_cast<int32_t>(llama_n_ctx(ctx));
    shape.blocks = n_ctx / block_size;
    // A table cannot hold a part block's cells.
    shape.context_length = std::min(n_ctx, shape.blocks * block_size);
    return shape;
  }
  const int32_t per_stream = static_cast<int32_t>(llama_n_ctx_seq(ctx)) / block_size;
  shape.blocks = per_stream * max_running;
  shape.context_length = per_stream * block_size;
  return shape;
}

}  // namespace

absl::Status SizeSchedulerForContext(llama_context* ctx, int32_t kv_blocks, SchedulerOptions& o,
                                     int32_t prefix_cache_sequences) {
  return SizeSchedulerForContext(ctx, KvSizing{kv_blocks, prefix_cache_sequences, 0}, o);
}

namespace {

absl::Status ValidateSizing(llama_context* ctx, const KvSizing& sizing, int32_t block_size) {
  const int32_t longest = static_cast<int32_t>(llama_n_ctx_seq(ctx));
  if (block_size < 1 || block_size > longest) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kv.block_size is ", block_size, "; allowed: [1, ", longest,
        "] (the cells one sequence may use: n_ctx, or n_ctx / n_seq_max per stream)"));
  }
  if (sizing.kv_blocks < 0) {
    return absl::InvalidArgumentError("kv_blocks must be >= 0 (0: n_ctx / block_size)");
  }
  const int32_t n_seq = static_cast<int32_t>(llama_n_seq_max(ctx));
  if (sizing.prefix_cache_sequences < 0 || sizing.prefix_cache_sequences >= n_seq) {
    return absl::InvalidArgumentError(absl::StrCat(
        "prefix_cache_sequences is ", sizing.prefix_cache_sequences,
        "; allowed: [0, n_seq_max - 1 = ", n_seq - 1, "] (0: no prefix caching)"));
  }
  if (sizing.host_blocks < 0 || sizing.host_blocks > (1 << 24)) {
    return absl::InvalidArgumentError(absl::StrCat("host_blocks is ", sizing.host_blocks,
                                                   "; allowed: [0, 2^24] (0: no swap)"));
  }
  if (sizing.host_mib < 0 || sizing.host_mib > (int64_t{1} << 20)) {
    return absl::InvalidArgumentError(absl::StrCat("host_mib is ", sizing.host_mib,
                                                   "; allowed: [0, 1048576] (0: no swap)"));
  }
  if (sizing.host_blocks > 0 && sizing.host_mib > 0) {
    return absl::InvalidArgumentError("host_blocks and host_mib are both set; set one");
  }
  return absl::OkStatus();
}

// The model's registry entry: its vocabulary, the positions one sequence
// may hold, and the KV bytes of one token.
ModelConfig ModelOf(llama_context* ctx, const KvShape& shape, int32_t blocks, int32_t block_size) {
  const llama_model* model = llama_get_model(ctx);
  ModelConfig m;
  m.name = "llama";
  m.context_length = std::min(shape.context_length, blocks * block_size);
  m.vocab_size = llama_vocab_n_tokens(llama_model_get_vocab(model));
  // K and V, f16 (llama.cpp's default cache type), per layer and KV head.
  const int64_t head_dim = llama_model_n_embd(model) / std::max(1, llama_model_n_head(model));
  m.kv_bytes_per_token = int64_t{llama_model_n_layer(model)} * llama_model_n_head_kv(model) *
                         head_dim * 2 * 2;
  return m;
}

int32_t HostBlocks(const KvSizing& sizing, int64_t kv_bytes_per_token, int32_t block_size) {
  if (sizing.host_mib == 0) return sizing.host_blocks;
  const int64_t block_bytes = std::max<int64_t>(1, kv_bytes_per_token * block_size);
  return static_cast<int32_t>(
      std::clamp<int64_t>((sizing.host_mib << 20) / block_bytes, 1, int64_t{1} << 24));
}

}  // namespace

absl::Status SizeSchedulerForContext(llama_context* ctx, const KvSizing& sizing,
                                     SchedulerOptions& o) {
  if (ctx == nullptr) return absl::InvalidArgumentError("llama context is null");
  const int32_t block_size = o.kv.block_size;
  if (absl::Status s = ValidateSizing(ctx, sizing, block_size); !s.ok()) return s;
  const int32_t n_seq = static_cast<int32_t>(llama_n_seq_max(ctx));
  o.max_batched_tokens = static_cast<int32_t>(llama_n_batch(ctx));
  o.max_running = std::min<int32_t>(n_seq - sizing.prefix_cache_sequences, o.max_batched_tokens);
  const KvShape shape = ShapeOf(ctx, block_size, o.max_running);
  o.kv.num_device_blocks = sizing.kv_blocks > 0 ? sizing.kv_blocks : shape.blocks;
  o.kv.enable_prefix_caching = sizing.prefix_cache_sequences > 0;
  o.on_result = nullptr;
  o.models = {ModelOf(ctx, shape, o.kv.num_device_blocks, block_size)};
  o.kv.num_host_blocks = HostBlocks(sizing, o.models[0].kv_bytes_per_token, block_size);
  o.preemption_mode =
      o.kv.num_host_blocks > 0 ? PreemptionMode::kSwap : PreemptionMode::kRecompute;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LlamaEngine>> LlamaEngine::Create(llama_context* ctx,
                                                                LlamaEngineOptions options) {
  if (ctx == nullptr) return absl::InvalidArgumentError("llama context is null");
  if (options.max_evictions < 0) return absl::InvalidArgumentError("max_evictions must be >= 0");
  absl::Status sized = SizeSchedulerForContext(
      ctx, KvSizing{options.kv_blocks, options.prefix_cache_sequences, options.host_blocks},
      options.scheduler);
  if (!sized.ok()) return sized;
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(options.scheduler);
  if (!scheduler.ok()) return scheduler.status();
  LlamaExecutorOptions eo;
  if (options.prefix_cache_sequences > 0) eo.block_size = options.scheduler.kv.block_size;
  absl::StatusOr<std::unique_ptr<LlamaStepExecutor>> executor = LlamaStepExecutor::Create(ctx, eo);
  if (!executor.ok()) return executor.status();
  return std::unique_ptr<LlamaEngine>(new LlamaEngine(*std::move(scheduler),
                                                      *std::move(executor),
                                                      options.max_evictions,
                                                      std::move(options.sampling)));
}

LlamaEngine::LlamaEngine(std::unique_ptr<Scheduler> scheduler,
                         std::unique_ptr<LlamaStepExecutor> executor, int32_t max_evictions,
                         std::function<SamplingParams(uint64_t)> sampling)
    : scheduler_(std::move(scheduler)),
      executor_(std::move(executor)),
      max_evictions_(max_evictions),
      loop_(*scheduler_, *executor_, {.overlap = true}),
      sampling_(std::move(sampling)) {
  // The executor sees the engine's handles; the host seeds by its own.
  if (sampling_) executor_->set_sampling([this](uint64_t h) { return SamplingOf(h); });
}

SamplingParams LlamaEngine::SamplingOf(uint64_t handle) const {
  uint64_t host = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = requests_.find(handle);
    if (it == requests_.end()) return {};
    host = it->second.host_handle;
  }
  return sampling_(host);
}

// The loop (declared after the executor) finishes a step its worker runs
// before the executor goes.
LlamaEngine::~LlamaEngine() = default;

absl::StatusOr<RequestId> LlamaEngine::Submit(RequestSpec spec) {
  if (spec.prompt_token_ids.empty()) {
    return absl::InvalidArgumentError(
        "the llama.cpp engine needs prompt_token_ids (llama.cpp computes real tokens)");
  }
  if (spec.prompt_tokens == 0) spec.prompt_tokens = static_cast<int32_t>(spec.prompt_token_ids.size());
  // A group's sample k plans and ends with handle + k.
  const int32_t samples = std::clamp(spec.num_samples, 1, kMaxSamples);
  {
    // Registered before Submit: the engine thread may plan (and even end)
    // the request before Submit returns, and finds it by handle.
    const uint64_t host = spec.handle;
    absl::MutexLock lock(&mu_);
    spec.handle = next_handle_;
    next_handle_ += static_cast<uint64_t>(samples);
    for (int32_t k = 0; k < samples; ++k) {
      HostRequest& r = requests_[spec.handle + static_cast<uint64_t>(k)];
      r.output.reserve(static_cast<size_t>(std::max(spec.max_new_tokens, 0)));
      r.host_handle = host + static_cast<uint64_t>(k);
    }
  }
  absl::StatusOr<RequestId> id = scheduler_->Submit(spec);
  if (!id.ok()) {
    absl::MutexLock lock(&mu_);
    for (int32_t k = 0; k < samples; ++k) {
      requests_.erase(spec.handle + static_cast<uint64_t>(k));
    }
  }
  return id;
}

absl::StatusOr<bool> LlamaEngine::Step(const Clock& clock) {
  clock_ = &clock;
  plan_start_ = absl::Now();
  if (absl::Status s = loop_.Step(clock.Now(), *this); !s.ok()) return s;
  return loop_.last_step().sequences > 0;
}

absl::Status LlamaEngine::Finish(const Clock& clock) {
  clock_ = &clock;
  return loop_.Finish(*this);
}

void LlamaEngine::OnPlanned(const StepPlan&) {
  stats_.plan_time += absl::Now() - plan_start_;
  ++stats_.steps;
}

void LlamaEngine::OnExecuted(const StepPlan& plan, const absl::Status&, StepOutcome& outcome) {
  outcome.completed_at = std::max(plan.now, clock_->Now());
  CapEvictions(plan, outcome);
  complete_start_ = absl::Now();
}

void LlamaEngine::OnCompleted(const StepOutcome& outcome) {
  stats_.complete_time += absl::Now() - complete_start_;
  results_.clear();
  scheduler_->DrainResults(&results_);
  absl::MutexLock lock(&mu_);
  RecordTokens(outcome);
  AbsorbResults();
}

bool LlamaEngine::WaitForWork(const Clock& clock, absl::Duration timeout) {
  return scheduler_->WaitForWork(std::min(timeout, scheduler_->NextEventTime() - clock.Now()));
}

void LlamaEngine::CapEvictions(const StepPlan& plan, StepOutcome& outcome) {
  step_handles_.clear();
  step_voided_.clear();
  step_pools_.clear();
  for (const ScheduledSequence& s : plan.sequences) {
    step_handles_.push_back(s.handle);
    step_voided_.push_back(!plan.voided.empty() && IsVoided(plan, s.id));
    step_pools_.push_back(s.pool);
  }
  bool any = false;
  for (const SequenceOutcome& o : outcome.sequences) any = any || o.out_of_kv;
  if (!any) return;
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < outcome.sequences.size(); ++i) {
    SequenceOutcome& o = outcome.sequences[i];
    if (!o.out_of_kv || !o.error.empty() || step_voided_[i]) continue;
    ++stats_.out_of_kv_reports;
    HostRequest& r = requests_[step_handles_[i]];
    if (++r.evictions > max_evictions_) {
      o.error = absl::StrCat("llama.cpp had no KV for this sequence ", r.evictions,
                             " times (max_evictions ", max_evictions_, "); giving up");
    }
  }
}

void LlamaEngine::RecordTokens(const StepOutcome& outcome) {
  const auto width = static_cast<size_t>(outcome.embedding_width);
  size_t vector_at = 0;
  for (size_t i = 0; i < outcome.sequences.size(); ++i) {
    const SequenceOutcome& o = outcome.sequences[i];
    if (step_pools_[i] && o.error.empty() && !o.out_of_kv) {
      const size_t from = vector_at;
      vector_at += width;
      auto it = requests_.find(step_handles_[i]);
      if (!step_voided_[i] && it != requests_.end() && vector_at <= outcome.embeddings.size()) {
        it->second.embedding.assign(outcome.embeddings.begin() + static_cast<int64_t>(from),
                                    outcome.embeddings.begin() + static_cast<int64_t>(vector_at));
      }
      continue;
    }
    if (!o.produced_token || !o.error.empty() || o.out_of_kv || step_voided_[i]) continue;
    auto it = requests_.find(step_handles_[i]);
    if (it != requests_.end()) it->second.output.push_back(o.token);
  }
}

void LlamaEngine::AbsorbResults() {
  for (RequestResult& result : results_) {
    auto it = requests_.find(result.handle);
    if (it == requests_.end()) continue;
    Completion& c = completions_.emplace_back();
    c.id = result.id;
    c.output = std::move(it->second.output);
    if (result.finish_reason == FinishReason::kPooled) c.embedding = std::move(it->second.embedding);
    c.kv_evictions = it->second.evictions;
    c.result = std::move(result);
    requests_.erase(it);
  }
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
