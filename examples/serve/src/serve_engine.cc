#include "serve_engine.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hearth_llama_cpp/llama_engine.h"
#include "hearth_llama_cpp/llama_runtime.h"
#include "json_fields.h"

namespace hearth::serve {
namespace {

// The sizes the llama.cpp context allows: LlamaEngine's own sizing (one
// rule for every host of the context, swap space included), under the
// served model's name.
absl::Status SizeFromContext(llama_context* ctx, const ServeEngineOptions& in,
                             SchedulerOptions& o) {
  if (in.swap_space_mib < 0 || in.swap_space_mib > (int64_t{1} << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat("ServeEngineOptions.swap_space_mib is ", in.swap_space_mib,
                     "; allowed: [0, 1048576] (0: no swap)"));
  }
  llama_cpp::KvSizing sizing;
  sizing.prefix_cache_sequences = in.prefix_cache_sequences;
  sizing.host_mib = in.swap_space_mib;
  if (absl::Status s = llama_cpp::SizeSchedulerForContext(ctx, sizing, o); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("ServeEngineOptions: ", s.message()));
  }
  o.models[0].name = in.model_name;
  return absl::OkStatus();
}

RequestEnd EndOf(const RequestResult& r, int32_t completion_tokens) {
  RequestEnd end;
  end.prompt_tokens = r.prompt_tokens;
  end.completion_tokens = completion_tokens;
  end.cached_prompt_tokens = r.cached_prompt_tokens;
  end.first_admitted = r.first_admit_time;
  end.first_token = r.first_token_time;
  end.ended = r.end_time;
  switch (r.phase) {
    case RequestPhase::kFinished:
      end.finish_reason = r.finish_reason == FinishReason::kLength ? "length" : "stop";
      break;
    case RequestPhase::kCancelled:
      end.status = absl::CancelledError(absl::StrCat("request cancelled: ", r.message));
      break;
    case RequestPhase::kTimedOut:
      end.status = absl::DeadlineExceededError(absl::StrCat("request timed out: ", r.message));
      break;
    case RequestPhase::kRejected:
      // Intake rejects what Submit could not judge yet: a parent that ended
      // and was another member's, an arrival stamp far ahead.
      end.status = absl::InvalidArgumentError(absl::StrCat("request rejected: ", r.message));
      break;
    default:
      end.status = absl::InternalError(absl::StrCat("request failed: ", r.message));
      break;
  }
  return end;
}

std::vector<absl::Duration> TtftTargets(const std::vector<SloTarget>& slos) {
  std::vector<absl::Duration> out;
  for (const SloTarget& slo : slos) out.push_back(slo.ttft);
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServeEngine>> ServeEngine::Create(llama_context* ctx,
                                                                const ModelText* text,
                                                                ServeEngineOptions options) {
  if (ctx == nullptr || text == nullptr) {
    return absl::InvalidArgumentError("ServeEngine needs a llama context and its model text");
  }
  if (absl::Status s = SizeFromContext(ctx, options, options.scheduler); !s.ok()) {
    return s;
  }
  if (options.slos.size() != options.scheduler.work_classes.size()) {
    return absl::InvalidArgumentError("ServeEngineOptions.slos must have one entry per class");
  }
  MetricsOptions mo = MetricsOptionsFor(options.scheduler);
  mo.class_slos = options.slos;
  // Bounded, so a long-running server's report stays cheap to take.
  mo.max_samples_per_series = 4096;
  mo.series_interval = absl::ZeroDuration();
  absl::StatusOr<std::unique_ptr<MetricsCollector>> collector = MetricsCollector::Create(mo);
  if (!collector.ok()) return collector.status();
  options.scheduler.metrics_sink = collector->get();
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(options.scheduler);
  if (!scheduler.ok()) return scheduler.status();
  llama_cpp::LlamaExecutorOptions eo;
  if (options.prefix_cache_sequences > 0) eo.block_size = options.scheduler.kv.block_size;
  absl::StatusOr<std::unique_ptr<llama_cpp::LlamaStepExecutor>> executor =
      llama_cpp::LlamaStepExecutor::Create(ctx, eo);
  if (!executor.ok()) return executor.status();
  const int32_t context_length = options.scheduler.models[0].context_length;
  return std::unique_ptr<ServeEngine>(new ServeEngine(*std::move(collector), *std::move(scheduler),
                                                      *std::move(executor), text,
                                                      std::move(options), context_length,
                                                      llama_cpp::KvStreams(ctx)));
}

ServeEngine::ServeEngine(std::unique_ptr<MetricsCollector> collector,
                         std::unique_ptr<Scheduler> scheduler,
                         std::unique_ptr<llama_cpp::LlamaStepExecutor> executor,
                         const ModelText* text, ServeEngineOptions options, int32_t context_length,
                         int32_t kv_streams)
    : collector_(std::move(collector)),
      scheduler_(std::move(scheduler)),
      executor_(std::move(executor)),
      loop_(*scheduler_, *executor_),
      text_(text),
      options_(std::move(options)),
      context_length_(context_length),
      kv_streams_(kv_streams),
      backlog_(TtftTargets(options_.slos), options_.interactive_classes) {
  executor_->set_logits_observer([this](RequestId id, absl::Span<const float> logits) {
    auto it = live_.find(id);
    if (it == live_.end() || it->second.sampler == nullptr) return;
    const int32_t token = it->second.sampler->Sample(logits, scratch_);
    sampled_[id] = token;
    // Only when asked: a pass over the vocabulary per token.
    if (it->second.logprobs && token != kNoAllowedToken) {
      LogprobsAt(logits, token, *it->second.logprobs, logprob_scratch_, logprobs_[id]);
    }
  });
  PublishSnapshot(absl::Now());
}

ServeEngine::~ServeEngine() = default;

absl::StatusOr<Submission> ServeEngine::Submit(GenerationJob job) {
  if (job.n < 1 || job.n > kMaxChoices) {
    return BadField("n", absl::StrCat("must be an integer in [1, ", kMaxChoices, "]"));
  }
  if (job.n > 1 && options_.prefix_cache_sequences == 0) {
    return BadField("n", "must be 1 on this server: several choices share the prompt's KV "
                         "cells, which needs prefix caching (--prefix_cache_sequences > 0)");
  }
  if (job.n > options_.scheduler.max_running) {
    return BadField("n", absl::StrCat("must be at most ", options_.scheduler.max_running,
                                      ": the choices run side by side, one sequence each"));
  }
  RequestSpec spec;
  spec.user = job.user;
  spec.work_class = job.work_class;
  spec.parent = job.parent;
  spec.prompt_tokens = static_cast<int32_t>(job.prompt.size());
  spec.prompt_token_ids = std::move(job.prompt);
  // The member's own scope, but for the template's public beginning.
  if (job.shared_prefix_tokens > 0) {
    spec.cache_scope.shared_prefix_tokens = std::min(job.shared_prefix_tokens, spec.prompt_tokens);
    spec.cache_scope.shared_prefix_scope = kTemplateCacheScope;
  }
  spec.max_new_tokens = job.max_tokens;
  spec.num_samples = job.n;
  return Enqueue(spec, &job);
}

absl::StatusOr<Submission> ServeEngine::SubmitEmbedding(EmbeddingJob job) {
  RequestSpec spec;
  spec.user = job.user;
  spec.work_class = job.work_class;
  spec.kind = RequestKind::kEmbed;
  spec.pooling = job.pooling;
  spec.max_new_tokens = 0;
  spec.prompt_tokens = static_cast<int32_t>(job.prompt.size());
  spec.prompt_token_ids = std::move(job.prompt);
  return Enqueue(spec, nullptr);
}

absl::StatusOr<Submission> ServeEngine::Enqueue(const RequestSpec& request,
                                                const GenerationJob* generation) {
  RequestSpec spec = request;
  spec.arrival_time = absl::Now();
  const int32_t choices = std::max(spec.num_samples, 1);
  std::vector<LiveRequest> each(static_cast<size_t>(choices));
  Submission out;
  for (int32_t k = 0; k < choices; ++k) {
    LiveRequest& c = each[static_cast<size_t>(k)];
    c.user = spec.user;
    c.work_class = spec.work_class;
    c.prompt_tokens = spec.prompt_tokens;
    c.submitted = spec.arrival_time;
    c.channel = std::make_shared<RequestChannel>();
    if (generation != nullptr) {
      c.text = std::make_unique<OutputText>(generation->stop);
      c.logprobs = generation->logprobs;
    }
    out.channels.push_back(c.channel);
  }
  out.channel = out.channels.front();
  absl::MutexLock lock(&mu_);
  if (intake_closed_) {
    return absl::UnavailableError("the server is shutting down and takes no new requests");
  }
  if (generation != nullptr) {
    for (int32_t k = 0; k < choices; ++k) {
      // Choice k of a seeded request is what the seed + k alone would give.
      SamplingParams params = generation->sampling;
      if (params.seed) params.seed = *params.seed + static_cast<uint32_t>(k);
      each[static_cast<size_t>(k)].sampler = std::make_unique<TokenSampler>(
          params, generation->grammar.get(), seeds_ = seeds_ * 1664525u + 1013904223u,
          options_.scheduler.models.front().vocab_size);
    }
  }
  // Held across Submit so that the engine cannot see the request in a plan
  // before it is registered here (AdoptSubmissions runs after Plan).
  absl::StatusOr<RequestId> id = scheduler_->Submit(spec);
  if (!id.ok()) return id.status();
  out.id = *id;
  for (int32_t k = 0; k < choices; ++k) {
    incoming_.emplace(RequestId(id->value() + static_cast<uint64_t>(k)),
                      std::move(each[static_cast<size_t>(k)]));
  }
  live_count_.fetch_add(choices);
  wake_ = true;
  return out;
}

void ServeEngine::Cancel(RequestId id, bool disconnected) {
  // Held across the cancellation and its count: the engine thread may end
  // the request (in Plan or Complete) before this thread counts it, and
  // PublishSnapshot reads the count under mu_ after the report, so no
  // snapshot shows the request cancelled and the disconnect not yet counted.
  absl::MutexLock lock(&mu_);
  if (scheduler_->Cancel(id).ok() && disconnected) disconnect_cancels_.fetch_add(1);
}

void ServeEngine::CloseIntake() {
  absl::MutexLock lock(&mu_);
  intake_closed_ = true;
}

bool ServeEngine::intake_closed() const {
  absl::MutexLock lock(&mu_);
  return intake_closed_;
}

void ServeEngine::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    wake_ = true;
  }
  // The engine thread may be asleep in the scheduler's WaitForWork.
  scheduler_->Wake();
}

void ServeEngine::Idle() {
  if (live_.empty()) {
    // Nothing live: sleep until a request comes (Submit wakes it), Stop, a
    // model's keep-alive is due, or the next /metrics snapshot, instead of
    // polling.
    // The server plans by absl::Now() (Step), so both events are on it.
    const absl::Time now = absl::Now();
    scheduler_->WaitForWork(std::min(scheduler_->NextEventTime(), next_snapshot_) - now);
    return;
  }
  // Live requests that could not run (their classes full, their model
  // loading): the scheduler has nothing to wait on for them, so poll.
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&wake_), absl::Milliseconds(2));
  wake_ = false;
}

void ServeEngine::AdoptSubmissions() {
  absl::MutexLock lock(&mu_);
  for (auto& [id, live] : incoming_) {
    backlog_.Waiting(id, live.work_class, live.submitted);
    live_.emplace(id, std::move(live));
  }
  incoming_.clear();
}

void ServeEngine::Run() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stop_) break;
    }
    const bool ran = Step();
    if (!ran) Idle();
  }
  // Whatever is left ends now, so no HTTP thread waits forever.
  AdoptSubmissions();
  for (auto& [id, live] : live_) {
    RequestEnd end;
    end.status = absl::UnavailableError("the server stopped before the request ended");
    end.prompt_tokens = live.prompt_tokens;
    end.completion_tokens = live.completion_tokens;
    live.channel->End(std::move(end));
  }
  live_count_.fetch_sub(static_cast<int32_t>(live_.size()));
  live_.clear();
}

bool ServeEngine::Step() {
  const absl::Time now = std::max(last_now_, absl::Now());
  last_now_ = now;
  // Plan refuses only a broken contract (time going backwards is clamped
  // above): try again next round. A failed step or a refused outcome has
  // failed the step's requests (EngineLoop's policy); they end through
  // their channels below, and the server goes on.
  loop_.Step(now, *this).IgnoreError();
  if (!loop_.last_step().planned) return false;
  EndRequests();
  ReportDemand();
  if (now >= next_snapshot_) PublishSnapshot(now);
  return loop_.last_step().sequences > 0;
}

void ServeEngine::OnPlanned(const StepPlan&) {
  AdoptSubmissions();
  sampled_.clear();
  logprobs_.clear();
}

void ServeEngine::OnExecuted(const StepPlan& plan, const absl::Status& executed,
                             StepOutcome& outcome) {
  if (executed.ok()) {
    TakeEmbeddings(plan, outcome);
    ApplyTokens(outcome);
  }
  outcome.completed_at = std::max(plan.now, absl::Now());
  last_now_ = outcome.completed_at;
}

void ServeEngine::ReportDemand() {
  if (options_.on_interactive_demand) options_.on_interactive_demand(backlog_.Demand(absl::Now()));
}

void ServeEngine::TakeEmbeddings(const StepPlan& plan, const StepOutcome& outcome) {
  if (outcome.embeddings.empty()) return;
  const auto width = static_cast<size_t>(outcome.embedding_width);
  size_t at = 0;
  for (size_t i = 0; i < plan.sequences.size() && i < outcome.sequences.size(); ++i) {
    const SequenceOutcome& o = outcome.sequences[i];
    // Vectors are laid out for the pooled sequences that neither failed
    // nor ran out of KV (step_outcome.h).
    if (!plan.sequences[i].pool || !o.error.empty() || o.out_of_kv) continue;
    const size_t from = at;
    at += width;
    if (at > outcome.embeddings.size()) return;
    auto live = live_.find(o.id);
    if (live == live_.end()) continue;
    live->second.embedding.assign(outcome.embeddings.begin() + static_cast<ptrdiff_t>(from),
                                  outcome.embeddings.begin() + static_cast<ptrdiff_t>(at));
  }
}

void ServeEngine::ApplyTokens(StepOutcome& outcome) {
  for (SequenceOutcome& o : outcome.sequences) {
    if (!o.produced_token || !o.error.empty()) continue;
    auto live = live_.find(o.id);
    if (live == live_.end() || live->second.text == nullptr) continue;
    auto sampled = sampled_.find(o.id);
    // The logit bias and grammar left no token: the answer ends as it is
    // (the executor's token stays in the record, never in the text).
    const bool none_allowed = sampled != sampled_.end() && sampled->second == kNoAllowedToken;
    if (sampled != sampled_.end() && !none_allowed) o.token = sampled->second;
    LiveRequest& r = live->second;
    if (++r.completion_tokens == 1) backlog_.Answered(o.id);
    const bool eog = none_allowed || text_->IsEndOfGeneration(o.token);
    o.finish = eog ? FinishReason::kStopToken : FinishReason::kNone;
    if (eog) continue;
    AppendToken(o.id, r, o.token, o);
  }
}

void ServeEngine::AppendToken(RequestId id, LiveRequest& r, int32_t token, SequenceOutcome& o) {
  std::string piece = text_->Piece(token);
  if (r.logprobs) {
    auto ids = logprobs_.find(id);
    if (ids != logprobs_.end()) r.trail.Add(Named(ids->second, piece));
  }
  std::string delta = r.text->Append(piece);
  r.sent_bytes += delta.size();
  std::vector<TokenLogprob> done;
  if (r.text->stopped()) {
    o.finish = FinishReason::kStopString;
    done = r.trail.TakeUntil(r.sent_bytes);
  } else {
    done = r.trail.TakeSent(r.sent_bytes);
  }
  if (!delta.empty() || !done.empty()) r.channel->Push(delta, std::move(done));
}

TokenLogprob ServeEngine::Named(const LogprobIds& ids, std::string piece) const {
  TokenLogprob out;
  out.token = std::move(piece);
  out.logprob = ids.logprob;
  out.top.reserve(ids.top.size());
  for (const auto& [token, logprob] : ids.top) out.top.push_back({text_->Piece(token), logprob});
  return out;
}

void ServeEngine::EndRequests() {
  results_.clear();
  scheduler_->DrainResults(&results_);
  for (const RequestResult& result : results_) {
    auto it = live_.find(result.id);
    if (it == live_.end()) {
      AdoptSubmissions();
      it = live_.find(result.id);
      if (it == live_.end()) continue;
    }
    LiveRequest& r = it->second;
    if (result.phase == RequestPhase::kFinished && r.text != nullptr) {
      std::string rest = r.text->Flush();
      std::vector<TokenLogprob> done = r.trail.TakeAll();
      if (!rest.empty() || !done.empty()) r.channel->Push(rest, std::move(done));
    }
    RequestEnd end = EndOf(result, r.completion_tokens);
    if (result.phase == RequestPhase::kFinished && r.sampler == nullptr) {
      if (r.embedding.empty()) {
        end.status = absl::InternalError("the embedding finished without its pooled vector");
      }
      end.embedding = std::move(r.embedding);
    }
    r.channel->End(std::move(end));
    backlog_.Answered(result.id);
    live_.erase(it);
    live_count_.fetch_sub(1);
  }
}

std::shared_ptr<const EngineSnapshot> ServeEngine::snapshot() const {
  absl::MutexLock lock(&snapshot_mu_);
  return snapshot_;
}

}  // namespace hearth::serve
