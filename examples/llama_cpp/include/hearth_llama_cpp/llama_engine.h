// File: hearth_llama_cpp/llama_engine.h
//
// `LlamaEngine` is a small host engine: Hearth's Scheduler decides, a
// LlamaStepExecutor runs the plans on one llama.cpp context, and host threads
// submit token-id prompts and collect finished generations.
//
// Sizing comes from the context, so a plan can never break llama.cpp:
//   max_running          = n_seq_max - prefix_cache_sequences
//                                               (llama sequence ids)
//   max_batched_tokens   = n_batch              (more would abort llama.cpp)
//   KV blocks            unified pool: n_ctx / block_size;
//                        per-sequence streams (KvLayout::kPerSequence):
//                        max_running * (n_ctx_seq / block_size), the
//                        running sequences' streams
//   model context length = the positions one sequence's cells hold, in
//                          whole blocks: n_ctx (unified) or n_ctx_seq
//                          (streams: a stream bounds a sequence);
//   vocabulary = the model's. hearth-serve sizes its scheduler by the same
//   function, SizeSchedulerForContext().
// Swap is on when `host_blocks` > 0: Hearth preempts by swap (falling back
// to recompute when the host tier is full), and the executor saves a
// swapped-out sequence's cells in host memory (llama_step_executor.h).
// Prefix caching is on when
// `prefix_cache_sequences` > 0: that many sequence ids keep the cells of
// released sequences, which Hearth's hits then share (llama_step_executor.h
// says how); requests keep their RequestSpec::cache_scope.
//
// Out of KV: when llama.cpp still finds no slot (only possible when
// `kv_blocks` oversubscribes a unified pool; a stream always holds the
// longest sequence Hearth runs), the executor evicts a sequence and
// reports it out_of_kv; Hearth preempts it by recompute under the same id
// (prompt plus the tokens generated so far), so its Completion carries all
// tokens and its one set of times. After max_evictions such reports the
// engine fails the request instead, so a request that never fits cannot
// cycle forever.
//
// Each Step is one hearth::EngineLoop step, with its failure policy: a
// failed llama_decode or an outcome Complete refuses fails the step's
// sequences, and the engine goes on.
//
// Overlapped planning (options.scheduler.overlap_planning): llama_decode
// runs on EngineLoop's worker thread while the engine thread plans the next
// step and completes the one before; a decode planned ahead feeds the token the
// executor sampled for it the step before. Tokens of entries voided
// meanwhile (StepPlan::voided) are dropped, so the tokens are the same as
// without overlap (the scheduler's choices, e.g. of preemption victims, may
// differ). The last step launched is still running when Step() returns:
// Finish() waits for it and completes it. Until then the executor (its
// stats, its logits observer, which runs on the worker thread) belongs to
// the worker.
//
// Host data is keyed by RequestSpec::handle, stored before Scheduler::Submit
// is called, so the engine thread finds it whenever the request first
// appears in a plan or ends, with no lock held across Submit.
//
// Thread-safety: Submit, TakeCompletions, pending and Wake are safe from any
// thread; Step, WaitForWork, scheduler, executor and stats belong to the
// engine thread.
//
// Example:
//   LlamaEngineOptions options;
//   auto engine = LlamaEngine::Create(ctx, options);
//   hearth::RequestSpec spec;
//   spec.prompt_token_ids = ByteTokens("hello");
//   spec.prompt_tokens = 5;
//   spec.max_new_tokens = 16;
//   absl::StatusOr<hearth::RequestId> id = (*engine)->Submit(spec);
//   hearth::RealClock clock;
//   while ((*engine)->pending() > 0) {
//     absl::StatusOr<bool> ran = (*engine)->Step(clock);
//     if (!ran.ok()) return ran.status();
//     if (!*ran) (*engine)->WaitForWork(clock);
//   }
//   for (const Completion& c : (*engine)->TakeCompletions()) ...

#ifndef HEARTH_LLAMA_CPP_LLAMA_ENGINE_H_
#define HEARTH_LLAMA_CPP_LLAMA_ENGINE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "hearth/common/clock.h"
#include "hearth/common/ids.h"
#include "hearth/exec/engine_loop.h"
#include "hearth/request/request_spec.h"
#include "hearth/request/request_state.h"
#include "hearth/scheduler/scheduler.h"
#include "hearth/scheduler/scheduler_options.h"
#include "hearth_llama_cpp/llama_step_executor.h"
#include "llama.h"

namespace hearth::llama_cpp {

struct LlamaEngineOptions {
  // Users, work classes, policy, metrics sink, prefill chunk size,
  // overlap_planning, kv.block_size and kv.prefix_hash_key are taken from
  // here; the sizes listed in the file comment, the model registry, prefix
  // caching, swap and on_result are set by the engine.
  SchedulerOptions scheduler;
  // KV blocks Hearth may hand out; 0 means n_ctx / block_size. A larger value
  // oversubscribes llama.cpp's pool (only to exercise the out-of-KV path).
  int32_t kv_blocks = 0;
  // How often one request may be reported out of KV (and preempted by
  // Hearth) before the engine fails it.
  int32_t max_evictions = 16;
  // Sequence ids of the context kept for prefix caching (released
  // sequences' cells); 0: no prefix caching. In [0, n_seq_max - 1].
  int32_t prefix_cache_sequences = 0;
  // Hearth's host blocks for swap preemption (kv.num_host_blocks); 0: no
  // swap, preemption recomputes. In [0, 2^24].
  int32_t host_blocks = 0;
  // Each request's sampling (LlamaExecutorOptions::sampling), by the
  // RequestSpec::handle the host submitted (handle + k for parallel sample
  // k; the engine keys requests by handles of its own); empty: greedy.
  std::function<SamplingParams(uint64_t handle)> sampling;
};

// What a host chooses of the sizing SizeSchedulerForContext derives.
struct KvSizing {
  // As in LlamaEngineOptions.
  int32_t kv_blocks = 0;
  int32_t prefix_cache_sequences = 0;
  int32_t host_blocks = 0;
  // Swap space in MiB of host memory, instead of host_blocks: as many
  // whole blocks of the model's KV (K and V, f16, every layer) as fit, at
  // least one, at most 2^24. 0: host_blocks decides. In [0, 2^20].
  int64_t host_mib = 0;
};

// SizeSchedulerForContext()
//
// Sets in `options` what LlamaEngine derives from `ctx` (the sizes listed in
// the file comment, the model registry, prefix caching with
// `prefix_cache_sequences` > 0, swap preemption with `host_blocks` > 0 and
// recompute otherwise, no on_result), so that a host running its own loop,
// or a simulator replaying the same requests, schedules exactly as the
// engine does. InvalidArgument for a null context, a block size outside
// [1, the cells one sequence may use], kv_blocks < 0, prefix_cache_sequences
// outside [0, n_seq_max - 1], host_blocks outside [0, 2^24], host_mib
// outside [0, 2^20], or both host_blocks and host_mib set.
absl::Status SizeSchedulerForContext(llama_context* ctx, const KvSizing& sizing,
                                     SchedulerOptions& options);
// The same without swap.
absl::Status SizeSchedulerForContext(llama_context* ctx, int32_t kv_blocks,
                                     SchedulerOptions& options,
                                     int32_t prefix_cache_sequences = 0);

// A finished (or otherwise ended) request, as the host submitted it.
struct Completion {
  // The id Submit returned.
  RequestId id;
  // Hearth's result for the request.
  RequestResult result;
  // Every generated token, the end-of-generation token included.
  std::vector<TokenId> output;
  // An embedding's (RequestKind::kEmbed) vector when it finished pooled:
  // n_embd floats of unit length (llama_step_executor.h); empty otherwise.
  std::vector<float> embedding;
  // Times llama.cpp had no KV for it and Hearth preempted it.
  int32_t kv_evictions = 0;
};

// Engine-thread totals, for overhead measurements.
struct LlamaEngineStats {
  uint64_t steps = 0;
  // Hearth's own time: Scheduler::Plan() and Scheduler::Complete().
  absl::Duration plan_time;
  absl::Duration complete_time;
  // Sequences reported out of KV (Hearth preempted them).
  uint64_t out_of_kv_reports = 0;
};

class LlamaEngine : private EngineHooks {
 public:
  // `ctx` is not owned and must outlive the engine. InvalidArgument for a
  // null context or options Hearth rejects (with Hearth's message).
  static absl::StatusOr<std::unique_ptr<LlamaEngine>> Create(llama_context* ctx,
                                                            LlamaEngineOptions options);
  // Waits for a step the loop's worker runs (overlapped planning).
  ~LlamaEngine();

  // LlamaEngine::Submit()
  //
  // Queues a request (num_samples > 1: a group of samples, each completed
  // on its own). Requires prompt_token_ids (prompt_tokens is set from
  // them when 0); everything else is validated by Hearth. Thread-safe.
  absl::StatusOr<RequestId> Submit(RequestSpec spec) ABSL_LOCKS_EXCLUDED(mu_);

  // LlamaEngine::Step()
  //
  // One iteration: Plan(clock.Now()) -> llama_decode -> Complete, then
  // collection of finished requests. Returns whether the plan had sequences
  // to run. A failed llama_decode() or a refused outcome fails the step's
  // sequences (no request is dropped silently) and returns the error
  // (EngineLoop's policy); the next Step may follow. With overlapped planning:
  // Plan(clock.Now()) while the step before decodes, then that step's
  // Complete while this one decodes.
  absl::StatusOr<bool> Step(const Clock& clock) ABSL_LOCKS_EXCLUDED(mu_);

  // LlamaEngine::WaitForWork()
  //
  // Sleeps until a Step has work (Scheduler::WaitForWork): a Submit, a
  // Wake, a due timer (Scheduler::NextEventTime, on `clock`, the one Step
  // plans by), or `timeout` of wall-clock time. Returns whether there is
  // work. Engine thread.
  bool WaitForWork(const hearth::Clock& clock,
                   absl::Duration timeout = absl::InfiniteDuration());
  // Makes a WaitForWork in progress return. Thread-safe.
  void Wake() { scheduler_->Wake(); }

  // LlamaEngine::Finish()
  //
  // Overlapped planning: waits for the step in flight and completes it, so
  // that no plan is outstanding and the executor is the engine thread's
  // again; a no-op otherwise. `clock` as for Step. Call before reading
  // executor() or stats(). Engine thread.
  absl::Status Finish(const Clock& clock) ABSL_LOCKS_EXCLUDED(mu_);

  // Moves out the requests that ended since the last call. Thread-safe.
  std::vector<Completion> TakeCompletions() ABSL_LOCKS_EXCLUDED(mu_);
  // Submitted requests not yet ended. Thread-safe.
  int32_t pending() const ABSL_LOCKS_EXCLUDED(mu_);

  Scheduler& scheduler() { return *scheduler_; }
  LlamaStepExecutor& executor() { return *executor_; }
  const LlamaEngineStats& stats() const { return stats_; }

 private:
  // A live request as the host sees it, under its handle.
  struct HostRequest {
    std::vector<TokenId> output;
    std::vector<float> embedding;
    int32_t evictions = 0;
    // The handle the host submitted (+ k for parallel sample k): what
    // LlamaEngineOptions::sampling is asked with.
    uint64_t host_handle = 0;
  };
  // LlamaEngineOptions::sampling by the engine's own handle.
  SamplingParams SamplingOf(uint64_t handle) const ABSL_LOCKS_EXCLUDED(mu_);

  LlamaEngine(std::unique_ptr<Scheduler> scheduler, std::unique_ptr<LlamaStepExecutor> executor,
              int32_t max_evictions, std::function<SamplingParams(uint64_t)> sampling);
  // EngineLoop's hooks: time Plan and Complete; stamp the step's end and
  // cap evictions before Complete; record tokens and results after it.
  void OnPlanned(const StepPlan& plan) override;
  void OnExecuted(const StepPlan& plan, const absl::Status& executed,
                  StepOutcome& outcome) override ABSL_LOCKS_EXCLUDED(mu_);
  void OnCompleted(const StepOutcome& outcome) override ABSL_LOCKS_EXCLUDED(mu_);
  // Engine thread, before Complete: notes the plan's handles and voided
  // entries (the plan is gone after Complete), counts out-of-KV reports and
  // turns the ones past max_evictions into failures.
  void CapEvictions(const StepPlan& plan, StepOutcome& outcome) ABSL_LOCKS_EXCLUDED(mu_);
  // Tokens, and embeddings' vectors, of the step's entries that count.
  void RecordTokens(const StepOutcome& outcome) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves the drained results_ to the completions.
  void AbsorbResults() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<LlamaStepExecutor> executor_;
  const int32_t max_evictions_;
  EngineLoop loop_;
  // The clock of the Step or Finish in progress; the hooks read it.
  const Clock* clock_ = nullptr;
  absl::Time plan_start_;
  absl::Time complete_start_;
  // The handles of the step's sequences, in plan order, and whether each
  // entry was voided (the plan is gone after Complete).
  std::vector<uint64_t> step_handles_;
  std::vector<bool> step_voided_;
  // Which of them pool an embedding's vector.
  std::vector<bool> step_pools_;
  std::vector<RequestResult> results_;
  LlamaEngineStats stats_;

  mutable absl::Mutex mu_;
  uint64_t next_handle_ ABSL_GUARDED_BY(mu_) = 1;
  const std::function<SamplingParams(uint64_t)> sampling_;
  // Live requests by handle.
  absl::flat_hash_map<uint64_t, HostRequest> requests_ ABSL_GUARDED_BY(mu_);
  std::vector<Completion> completions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace hearth::llama_cpp

#endif  // HEARTH_LLAMA_CPP_LLAMA_ENGINE_H_
