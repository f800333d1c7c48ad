// File: examples/serve/src/serve_engine.h
//
// `ServeEngine` runs hearth-serve's one llama.cpp context under Hearth's
// Scheduler, on its own thread, for HTTP threads that submit token-id
// prompts and read text back as it is generated.
//
// Each step: Plan -> LlamaStepExecutor (one llama_decode) -> the server's
// own sampling and text -> Complete -> results. The executor picks a greedy
// token; its logits observer hands the same logits row to the request's
// TokenSampler (logit bias, grammar, penalties, top-k/p, min-p,
// temperature, seed), whose token replaces it before Complete; a stop
// string found in the text ends the request as kStopString, and so does a
// step where the logit bias and grammar leave no token (as a stop). A
// request that asked for logprobs gets them from the same row, before any
// of that (token_logprobs.h), each sent with the text of its token
// (logprob_trail.h). Sizes come from the context by LlamaEngine's own
// SizeSchedulerForContext (llama_engine.h lists them; swap_space_mib
// becomes its host_mib), so a plan can never break llama.cpp.
//
// Prefix caching (ServeEngineOptions::prefix_cache_sequences > 0) is scoped
// per member (RequestSpec::cache_scope): a member's later turns reuse the KV
// of its earlier ones, and the prompt's leading tokens that equal the chat
// template's fixed beginning (GenerationJob::shared_prefix_tokens) are
// shared by all members in the scope kTemplateCacheScope; another member's
// identical conversation reuses nothing else. Each answer reports its
// cached tokens (RequestEnd::cached_prompt_tokens).
//
// Requests end exactly once, through their RequestChannel: finished,
// cancelled (Cancel, e.g. the client left), timed out, rejected or failed.
//
// Each iteration the engine also reports the interactive demand it sees
// (interactive_backlog.h) to `on_interactive_demand`, so that the CPU job
// queues give their cores back while voice and chat wait for the GPU.
//
// Thread-safety: Submit, Cancel, CloseIntake, live, snapshot and Stop from
// any thread; Run on the engine thread only.
//
// Example:
//   auto engine = *ServeEngine::Create(ctx, &text, options);
//   std::thread loop([&] { engine->Run(); });
//   absl::StatusOr<Submission> s = engine->Submit(job);
//   ... s->channel->Wait(...) ...
//   engine->Stop(); loop.join();

#ifndef HEARTH_SERVE_SERVE_ENGINE_H_
#define HEARTH_SERVE_SERVE_ENGINE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "engine_snapshot.h"
#include "grammar_sampler.h"
#include "hearth/common/clock.h"
#include "hearth/common/ids.h"
#include "hearth/exec/engine_loop.h"
#include "hearth/jobs/interactive_demand.h"
#include "hearth/metrics/metrics_collector.h"
#include "hearth/scheduler/scheduler.h"
#include "hearth_llama_cpp/llama_step_executor.h"
#include "interactive_backlog.h"
#include "llama.h"
#include "logprob_trail.h"
#include "model_text.h"
#include "openai_request.h"
#include "output_text.h"
#include "request_channel.h"
#include "token_logprobs.h"
#include "token_sampler.h"

namespace hearth::serve {

struct ServeEngineOptions {
  // Users, work classes, policy, kv.block_size and kv.prefix_hash_key; the
  // engine sets the sizes from the context, the model, prefix caching (from
  // prefix_cache_sequences) and swap (from swap_space_mib).
  SchedulerOptions scheduler;
  // llama.cpp sequence ids of the context kept for the cells of ended
  // requests, so that prefix-cache hits find them; max_running is
  // n_seq_max minus this. 0: no prefix caching. In [0, n_seq_max - 1].
  int32_t prefix_cache_sequences = 0;
  // Host memory for swap preemption, in MiB: preempted requests' KV cells
  // are saved there (llama_state_seq_get_data) and restored, instead of
  // recomputed, while it has room. Hearth's host blocks are sized from the
  // model's KV bytes per token, and memory is taken only while a request is
  // swapped out. 0: preemption recomputes. In [0, 2^20]. On the unified
  // pool a restore (llama_state_seq_set_data) needs free cells that kept
  // prefix-cache sequences may hold, and one that finds none fails its
  // request.
  int64_t swap_space_mib = 0;
  // One per work class.
  std::vector<SloTarget> slos;
  std::string model_name = "model";
  std::string policy_name = "household";
  // How often the engine thread publishes an EngineSnapshot.
  absl::Duration snapshot_interval = absl::Milliseconds(250);
  // Index for index over the work classes: whose requests count as
  // interactive demand (someone is waiting for the first word). Missing
  // entries are not interactive.
  std::vector<bool> interactive_classes;
  // Called on the engine thread after every iteration (at least every 50 ms)
  // with the demand; must be quick (JobPool::SetInteractiveDemand is). May
  // be empty.
  std::function<void(const InteractiveDemand&)> on_interactive_demand;
};

// The shared cache scope of the chat template's fixed beginning.
inline constexpr const char* kTemplateCacheScope = "chat-template";

struct GenerationJob {
  UserId user;
  WorkClassId work_class;
  // An earlier request of the same member (agent workflows); invalid: none.
  RequestId parent;
  std::vector<int32_t> prompt;
  // The prompt's leading tokens that equal the chat template's fixed
  // beginning (ModelText::TemplatePrefixLength): cached in the scope all
  // members share; the rest stays in the member's own. Only public text.
  int32_t shared_prefix_tokens = 0;
  int32_t max_tokens = 0;
  SamplingParams sampling;
  // Compiled in the member's turn (grammar_sampler.h); null: none.
  CompiledGrammar grammar;
  std::vector<std::string> stop;
  // Absent: no logprobs; else the alternatives listed per token.
  std::optional<int32_t> logprobs;
  // Choices sampled from the one computed prompt (Hearth's parallel
  // samples, RequestSpec::num_samples): choice k's sampler is seeded with
  // sampling.seed + k when a seed is given. In [1, kMaxChoices]; above 1
  // needs prefix caching (the choices share the prompt's KV cells) and at
  // most max_running choices.
  int32_t n = 1;
};

// One text to embed (RequestKind::kEmbed): prefilled, pooled, never
// sampled. Its vector comes in RequestEnd::embedding.
struct EmbeddingJob {
  UserId user;
  WorkClassId work_class;
  std::vector<int32_t> prompt;
  Pooling pooling = Pooling::kMean;
};

struct Submission {
  // The first choice's; choice k is id + k.
  RequestId id;
  std::shared_ptr<RequestChannel> channel;
  // Every choice's channel, choice 0's first (== channel).
  std::vector<std::shared_ptr<RequestChannel>> channels;
};

class ServeEngine : private EngineHooks {
 public:
  // `ctx` and `text` are not owned and must outlive the engine.
  // InvalidArgument for options Hearth rejects.
  static absl::StatusOr<std::unique_ptr<ServeEngine>> Create(llama_context* ctx,
                                                            const ModelText* text,
                                                            ServeEngineOptions options);
  ~ServeEngine();

  // ServeEngine::Submit()
  //
  // Queues a generation. Unavailable once intake is closed; otherwise
  // Hearth's answer (InvalidArgument, ResourceExhausted for a member's quota
  // or queue limits). Thread-safe.
  absl::StatusOr<Submission> Submit(GenerationJob job) ABSL_LOCKS_EXCLUDED(mu_);
  // Queues an embedding: its channel gets no text, and ends with the pooled
  // vector (mean of llama.cpp's final hidden states, unit length,
  // ModelText::embedding_width() floats). Errors as Submit's. Thread-safe.
  absl::StatusOr<Submission> SubmitEmbedding(EmbeddingJob job) ABSL_LOCKS_EXCLUDED(mu_);
  // Cancels a live request (its channel then ends as Cancelled); no-op for
  // one that already ended. `disconnected` counts it as a client that left.
  void Cancel(RequestId id, bool disconnected) ABSL_LOCKS_EXCLUDED(mu_);

  // The engine loop; returns once Stop() is called.
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);
  // Refuses new submissions from now on (SIGTERM).
  void CloseIntake() ABSL_LOCKS_EXCLUDED(mu_);
  bool intake_closed() const ABSL_LOCKS_EXCLUDED(mu_);
  // Requests submitted and not yet ended.
  int32_t live() const { return live_count_.load(); }

  std::shared_ptr<const EngineSnapshot> snapshot() const ABSL_LOCKS_EXCLUDED(snapshot_mu_);
  const Scheduler& scheduler() const { return *scheduler_; }
  int32_t context_length() const { return context_length_; }
  // What one token's KV cells take (K and V, f16, every layer).
  int64_t kv_bytes_per_token() const {
    return options_.scheduler.models.front().kv_bytes_per_token;
  }
  // Hearth's host blocks for swap (0: preemption recomputes).
  int32_t host_blocks() const { return options_.scheduler.kv.num_host_blocks; }

 private:
  // A request as the engine thread keeps it.
  struct LiveRequest {
    UserId user;
    WorkClassId work_class;
    int32_t prompt_tokens = 0;
    int32_t completion_tokens = 0;
    absl::Time submitted;
    // Null for an embedding, which neither samples nor writes text.
    std::unique_ptr<TokenSampler> sampler;
    std::unique_ptr<OutputText> text;
    // An embedding's pooled vector, once its last chunk ran.
    std::vector<float> embedding;
    // As GenerationJob::logprobs; the entries wait in `trail` for their text.
    std::optional<int32_t> logprobs;
    LogprobTrail trail;
    // Bytes of answer pushed to the channel so far.
    size_t sent_bytes = 0;
    std::shared_ptr<RequestChannel> channel;
  };

  ServeEngine(std::unique_ptr<MetricsCollector> collector, std::unique_ptr<Scheduler> scheduler,
              std::unique_ptr<llama_cpp::LlamaStepExecutor> executor, const ModelText* text,
              ServeEngineOptions options, int32_t context_length,
              int32_t kv_streams);
  // One EngineLoop step; returns whether the plan ran anything.
  bool Step();
  // EngineLoop's hooks: adopt submissions once planned, sample and apply
  // tokens once executed.
  void OnPlanned(const StepPlan& plan) override;
  void OnExecuted(const StepPlan& plan, const absl::Status& executed,
                  StepOutcome& outcome) override;
  // Moves requests submitted since the last call into live_.
  void AdoptSubmissions() ABSL_LOCKS_EXCLUDED(mu_);
  // Queues `spec` for `live` (Submit and SubmitEmbedding).
  // Queues `spec`: a generation (`generation` not null: each of its
  // choices with its own text, sampler and channel) or an embedding.
  absl::StatusOr<Submission> Enqueue(const RequestSpec& spec, const GenerationJob* generation)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Keeps each pooled sequence's vector (the outcome's, in plan order).
  void TakeEmbeddings(const StepPlan& plan, const StepOutcome& outcome);
  // Replaces the executor's greedy tokens by the samplers' and turns tokens
  // into text, ending requests at a stop string.
  void ApplyTokens(StepOutcome& outcome);
  // Adds a token's text (and logprobs) to its answer; pushes what is final.
  void AppendToken(RequestId id, LiveRequest& r, int32_t token, SequenceOutcome& o);
  // The token's logprobs with their text.
  TokenLogprob Named(const LogprobIds& ids, std::string piece) const;
  void EndRequests();
  void PublishSnapshot(absl::Time now);
  void ReportDemand();
  // After a step that ran nothing: with nothing live, sleeps in the
  // scheduler's WaitForWork until a submission, Stop(), a model's keep-alive
  // or the next snapshot; else waits briefly for a submission or Stop().
  void Idle() ABSL_LOCKS_EXCLUDED(mu_);

  std::unique_ptr<MetricsCollector> collector_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<llama_cpp::LlamaStepExecutor> executor_;
  EngineLoop loop_;
  const ModelText* text_;
  const ServeEngineOptions options_;
  const int32_t context_length_;
  // llama.cpp's KV streams (1: the unified pool).
  const int32_t kv_streams_;
  RealClock clock_;

  // Engine thread only.
  absl::flat_hash_map<RequestId, LiveRequest> live_;
  InteractiveBacklog backlog_;
  absl::flat_hash_map<RequestId, int32_t> sampled_;
  std::vector<llama_token_data> scratch_;
  // This step's logprobs, for the requests that asked.
  absl::flat_hash_map<RequestId, LogprobIds> logprobs_;
  std::vector<int32_t> logprob_scratch_;
  std::vector<RequestResult> results_;
  absl::Time last_now_ = absl::InfinitePast();
  absl::Time next_snapshot_ = absl::InfinitePast();
  uint32_t seeds_ = 0x9e3779b9u;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<RequestId, LiveRequest> incoming_ ABSL_GUARDED_BY(mu_);
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool intake_closed_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<int32_t> live_count_{0};
  std::atomic<uint64_t> disconnect_cancels_{0};

  mutable absl::Mutex snapshot_mu_;
  std::shared_ptr<const EngineSnapshot> snapshot_ ABSL_GUARDED_BY(snapshot_mu_);
};

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_SERVE_ENGINE_H_
