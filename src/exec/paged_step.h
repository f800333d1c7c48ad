// File: src/exec/paged_step.h
//
// The start and end of Execute() for executors that keep a paged KV pool
// through SequenceTables (the CPU reference and the CUDA executor), written
// once so that both check plans, apply copies and report outcomes alike:
//
//   BeginPagedStep: StartStepOutcome -> ValidateCopies -> DropEnded ->
//                   copies in step_plan.h's order -> PrepareSequences
//   (the executor's forward pass over the prepared sequences)
//   FillPagedOutcome: one SequenceOutcome per planned sequence, tables
//                     advanced, sampled tokens and stop tokens recorded.
// Not part of the public API.

#ifndef HEARTH_EXEC_PAGED_STEP_H_
#define HEARTH_EXEC_PAGED_STEP_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "exec/sequence_tables.h"
#include "hearth/common/ids.h"
#include "hearth/scheduler/step_outcome.h"
#include "hearth/scheduler/step_plan.h"

namespace hearth::exec_internal {

// Which of a plan's copy lists a BlockCopier is asked to apply.
enum class CopyKind { kSwapOut, kSwapIn, kCopyOnWrite };

// Applies one copy list (device->host, host->device or device->device).
using BlockCopier =
    absl::FunctionRef<absl::Status(const std::vector<BlockCopy>&, CopyKind)>;

// Resets `outcome` for `plan`, rejects bad copies (InvalidArgument, nothing
// changed), forgets preempted and released requests, applies swap_out,
// swap_in, copy_on_write in that order (a block freed by a swap-out may be a
// swap-in or copy-on-write target in the same step), and prepares the
// sequences. Returns the copier's first error, if any.
absl::StatusOr<std::vector<PreparedSequence>> BeginPagedStep(
    const StepPlan& plan, SequenceTables& tables, BlockCopier copy,
    StepOutcome* outcome);

// The token the forward pass sampled for the `sample`-th sampling sequence
// (plan order, failed sequences skipped).
using SampledToken = absl::FunctionRef<TokenId(int32_t sample)>;

// Appends one outcome per planned sequence: the prepared error for a sequence
// that could not run; else its table advanced past the computed positions
// and, when it samples, its token with kStopToken when it is `stop_token`
// (negative: none).
void FillPagedOutcome(const StepPlan& plan,
                      const std::vector<PreparedSequence>& prepared,
                      SequenceTables& tables, SampledToken sampled_token,
                      TokenId stop_token, StepOutcome* outcome);

}  // namespace hearth::exec_internal

#endif  // HEARTH_EXEC_PAGED_STEP_H_
