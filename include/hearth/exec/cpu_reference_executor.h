// File: hearth/exec/cpu_reference_executor.h
//
// `CpuReferenceExecutor` runs StepPlans on a small float32 transformer on the
// CPU, the way a production engine would: K/V live in a paged pool of
// `num_device_blocks` blocks (plus a host tier of `num_host_blocks` for swap),
// every attention read and write goes through the sequence's block table, the
// plan's swap and copy-on-write copies are applied before the forward pass,
// and one token is sampled where the plan asks for one: greedily (argmax,
// lowest id on ties), or by the request's SamplingParams. It is the executor every test can run, and the yardstick for
// the CUDA executor.
//
// Results depend only on the tokens and the weights' seed, never on how a step
// is batched or chunked: each position is computed by the same sequence of
// float operations whatever else is in the step. That is what lets tests check
// that a scheduler's plans are right by comparing tokens exactly.
//
// Speculative decoding: a decode with draft tokens (ScheduledSequence::
// draft_tokens) is drafted by prompt lookup (the tokens that followed the
// latest earlier occurrence of the sequence's last 3, 2 or 1 tokens), the
// drafts are fed in the same forward pass, and accepted while each is the
// token picked (greedily or by its SamplingParams) after the position
// before it; the token after the last
// accepted one is sampled as usual. Since every position is computed the
// same way, a request's tokens are the same with speculation on or off.
//
// Overlapped planning: a decode with ScheduledSequence::input_pending feeds
// the token this executor sampled for the request in its previous step.
//
// Embeddings (ScheduledSequence::embed): nothing is sampled; a mean-pooled
// one keeps a running sum of its positions' final hidden states, in
// position order, from position 0 (a chunk that does not continue it fails
// alone), and its pooling step hands out the vector in StepOutcome::
// embeddings: model.hidden_size floats, the final-normed hidden state of the
// last prompt position (Pooling::kLast) or its mean over every prompt
// position (kMean), scaled to unit length.
// Since each position is computed alike in any batch and the sum runs in
// position order, a vector is the same alone, batched with generation, or
// chunked any way.
//
// Multimodal prompts (StepPlan::encoder_inputs): a toy encoder turns a
// span's content (its bytes, from CpuReferenceExecutorOptions::
// encoder_content) into one embedding row per span position, a fixed
// function of the bytes and the offset (values in [-0.5, 0.5]); the model
// reads those rows at the span's positions instead of token embeddings. It
// keeps outputs by encoder cache entry as the plan says (encoder_frees
// first, then the encodes), so a span reused from the cache and one
// encoded again give the same tokens. A sequence reading an entry it holds
// no output in (its content could not be had, or the entry was never
// encoded) fails alone.
//
// The executor needs token ids: requests must be submitted with
// RequestSpec::prompt_token_ids, so that ScheduledSequence::token_ids is
// filled. A sequence without them fails (SequenceOutcome::error).
//
// Malformed plans never crash it: a copy naming a block outside its tier fails
// the whole step (InvalidArgument, nothing changed); a sequence with a wrong
// table, positions or tokens fails alone and its engine state is dropped.
//
// Thread-safety: none; one engine thread calls Execute().
//
// Example:
//   hearth::CpuReferenceExecutorOptions options;   // the tiny default model
//   options.kv.num_device_blocks = scheduler.options().kv.num_device_blocks;
//   options.kv.block_size = scheduler.options().kv.block_size;
//   auto executor = hearth::CpuReferenceExecutor::Create(options);
//   if (!executor.ok()) return executor.status();
//   hearth::EngineLoop loop(scheduler, **executor);
//   while (serving) {
//     absl::Status s = loop.Step(host_clock.Now());
//     if (!s.ok()) return s;
//   }

#ifndef HEARTH_EXEC_CPU_REFERENCE_EXECUTOR_H_
#define HEARTH_EXEC_CPU_REFERENCE_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hearth/common/ids.h"
#include "hearth/exec/executor_kv_config.h"
#include "hearth/exec/sampling.h"
#include "hearth/exec/step_executor.h"
#include "hearth/exec/transformer_config.h"
#include "hearth/scheduler/step_outcome.h"
#include "hearth/scheduler/step_plan.h"

namespace hearth {

struct CpuReferenceExecutorOptions {
  // The model; dtype must be kFloat32.
  TransformerConfig model;
  // Must match the scheduler's KvCacheConfig.
  ExecutorKvConfig kv;
  // The ModelId the executor serves; sequences naming another model fail.
  ModelId model_id = ModelId(0);
  // When >= 0, sampling this token ends the request (FinishReason::kStopToken).
  TokenId stop_token = -1;
  // Each request's sampling (hearth/exec/sampling.h), by its
  // RequestSpec::handle (so parallel
  // samples, whose handles are handle + k, can differ); called on the
  // engine thread for every sampled sequence. Empty: greedy for all.
  std::function<SamplingParams(uint64_t handle)> sampling;
  // The content of encoder span `span_index` of the request with this
  // RequestSpec::handle (e.g. an image's bytes), for the toy encoder; an
  // error fails the sequences that read it. Empty: every encode fails.
  std::function<absl::StatusOr<std::string>(uint64_t handle, int32_t span_index)>
      encoder_content;
};

class CpuReferenceExecutor : public StepExecutor {
 public:
  // InvalidArgument naming the bad field (model, kv sizes, dtype).
  static absl::StatusOr<std::unique_ptr<CpuReferenceExecutor>> Create(
      const CpuReferenceExecutorOptions& options);
  ~CpuReferenceExecutor() override;

  // CpuReferenceExecutor::Execute()
  //
  // Applies the plan's preemptions and releases (forgetting those requests),
  // then swap_out, swap_in and copy_on_write copies in that order, then runs
  // the sequences as one batch. Fills `outcome` in plan order.
  absl::Status Execute(const StepPlan& plan, StepOutcome* outcome) override;

  // CpuReferenceExecutor::last_logits()
  //
  // Float logits of the last Execute()'s sampled sequences, in plan order of
  // the sequences with `sample` set (vocab_size values each). For tests and
  // for comparing other executors against this one.
  const std::vector<float>& last_logits() const;

  // Requests the executor holds engine-side state for.
  size_t num_live_sequences() const;

  const CpuReferenceExecutorOptions& options() const;

 private:
  class Impl;
  explicit CpuReferenceExecutor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hearth

#endif  // HEARTH_EXEC_CPU_REFERENCE_EXECUTOR_H_
