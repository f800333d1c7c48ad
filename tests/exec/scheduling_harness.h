// File: tests/exec/scheduling_harness.h
//
// Drives a real Scheduler with a real executor over a workload of requests
// with token ids and records, per request, the tokens the executor sampled.
// The "scheduling never changes results" tests run one workload under many
// scheduler configurations and compare those token sequences exactly.
//
// Example:
//   std::vector<WorkloadRequest> w = RandomWorkload({.requests = 12});
//   absl::StatusOr<WorkloadRun> run = RunWorkload(options, w, executor_factory);

#ifndef HEARTH_TESTS_EXEC_SCHEDULING_HARNESS_H_
#define HEARTH_TESTS_EXEC_SCHEDULING_HARNESS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hearth/exec/cpu_reference_executor.h"
#include "hearth/exec/step_executor.h"
#include "hearth/scheduler/scheduler.h"

namespace hearth::testing {

struct WorkloadRequest {
  std::vector<TokenId> prompt;
  int32_t max_new_tokens = 1;
  // Submitted just before the Plan() of this step (0 = the first).
  int32_t arrival_step = 0;
  UserId user = UserId(0);
  WorkClassId work_class = WorkClassId(0);
  int32_t priority = 0;
  // > 0: submitted held (RequestSpec::hold) and released this many steps
  // later, just before that step's Plan().
  int32_t hold_steps = 0;
  // RequestSpec::cache_scope.opt_out.
  bool cache_opt_out = false;
  // RequestSpec::num_samples and handle (sample k's handle is handle + k).
  int32_t num_samples = 1;
  uint64_t handle = 0;
  // RequestSpec::kind and pooling; an embedding ignores max_new_tokens.
  RequestKind kind = RequestKind::kGenerate;
  Pooling pooling = Pooling::kLast;
  // RequestSpec::encoder_spans; each span's content is PhotoContent(handle,
  // span index), and its content_hash PhotoContentHash of the same.
  std::vector<EncoderSpan> encoder_spans;
};

// The toy encoder's input for span `span_index` of the request with
// `handle` (CpuExecutorFactory serves it), and the hash workloads give it.
std::string PhotoContent(uint64_t handle, int32_t span_index);
uint64_t PhotoContentHash(uint64_t handle, int32_t span_index);

struct WorkloadShape {
  int32_t requests = 12;
  int32_t min_prompt = 1;
  int32_t max_prompt = 70;
  int32_t max_new_tokens = 24;
  // Arrivals spread uniformly over [0, arrival_spread] steps.
  int32_t arrival_spread = 20;
  // When > 0, prompts come in groups sharing their first `shared_prefix`
  // tokens (prefix-cache hits); prompts are then longer than the prefix.
  int32_t shared_prefix = 0;
  int32_t prefix_groups = 3;
  int32_t vocab_size = 256;
  int32_t num_users = 1;
  int32_t num_work_classes = 1;
  uint64_t seed = 1;
  // When > 0, every embed_every-th request is an embedding instead (mean and
  // last pooling in turn); the other requests stay as without.
  int32_t embed_every = 0;
  // When > 0, every photo_every-th generation carries a photo: a 12-position
  // encoder span at position 10, across the first block boundary of 16-token
  // blocks (shorter prompts get a shorter one, none under 12 tokens), one of
  // three photos in turn (by handle).
  int32_t photo_every = 0;
};

// Deterministic for a given shape (own PRNG, no std distributions).
std::vector<WorkloadRequest> RandomWorkload(const WorkloadShape& shape);

struct WorkloadRun {
  // Sampled tokens per output slot: workload request i's sample k is slot
  // first_slot[i] + k (slot i when no request has several samples).
  std::vector<std::vector<TokenId>> tokens;
  std::vector<size_t> first_slot;
  // Embeddings' vectors, in workload order (empty for generations), from
  // the outcomes (StepOutcome::embeddings).
  std::vector<std::vector<float>> embeddings;
  int64_t pooled = 0;
  // Terminal results per output slot.
  std::vector<RequestResult> results;
  SchedulerStats stats;
  int64_t steps = 0;
  int64_t swap_out_copies = 0;
  int64_t swap_in_copies = 0;
  int64_t cow_copies = 0;
  int64_t chunked_prefill_steps = 0;  // prefill steps not reaching the end
  int32_t max_batch = 0;              // most sequences in one step
  // Speculative decoding: draft tokens planned, and those the engine accepted.
  int64_t draft_tokens = 0;
  int64_t accepted_drafts = 0;
  // Overlapped planning: decodes planned before their input token was known.
  int64_t pending_inputs = 0;
  // Encoder spans encoded, and read from the encoder cache without encoding.
  int64_t encoder_encodes = 0;
  int64_t encoder_reads = 0;
  // Chunks that start inside a span (a prefix hit ending in it).
  int64_t chunks_inside_span = 0;
};

using ExecutorFactory = std::function<absl::StatusOr<std::unique_ptr<StepExecutor>>(
    const SchedulerOptions& options)>;

// Runs the workload to completion. Checks the scheduler's invariants after
// every step; fails on any error, on an executor-failed sequence, or when the
// run does not finish within `max_steps`.
absl::StatusOr<WorkloadRun> RunWorkload(const SchedulerOptions& options,
                                        const std::vector<WorkloadRequest>& workload,
                                        const ExecutorFactory& make_executor,
                                        int64_t max_steps = 20000);

// Runs every request alone on a fresh scheduler with a cache large enough for
// it and no prefix caching: the tokens any other schedule must reproduce.
// RunAlone's tokens, and the embeddings' vectors, per output slot (each
// sample of a group run alone as one request with its handle).
struct AloneResults {
  std::vector<std::vector<TokenId>> tokens;
  std::vector<std::vector<float>> embeddings;
};
absl::StatusOr<AloneResults> RunEachAlone(
    const SchedulerOptions& options, const std::vector<WorkloadRequest>& workload,
    const ExecutorFactory& make_executor);
absl::StatusOr<std::vector<std::vector<TokenId>>> RunAlone(
    const SchedulerOptions& options, const std::vector<WorkloadRequest>& workload,
    const ExecutorFactory& make_executor);

// An ExecutorFactory for the CPU reference executor with the default model,
// sized from the scheduler options; sampling `stop_token` (when >= 0) ends
// a request; `sampling` as CpuReferenceExecutorOptions::sampling (empty:
// greedy).
ExecutorFactory CpuExecutorFactory(TokenId stop_token = -1,
                                   std::function<SamplingParams(uint64_t)> sampling = {});

}  // namespace hearth::testing

#endif  // HEARTH_TESTS_EXEC_SCHEDULING_HARNESS_H_
