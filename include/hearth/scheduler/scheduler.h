// File: hearth/scheduler/scheduler.h
//
// `Scheduler` is Hearth's core: it takes requests from any thread and, once
// per engine iteration, decides who is admitted, who decodes, how big each
// prefill chunk is, who is preempted and which KV blocks each sequence holds.
//
// The iteration contract:
//   host threads:  Submit(spec) -> RequestId       Cancel(id, reason)
//                  SetPriority(id, p)  SetWorkClass(id, cls)
//   engine thread: loop {
//                    WaitForWork(NextEventTime() - now);  // idle: sleep
//                    const StepPlan* plan = *scheduler->Plan(now);
//                    ... run it (own kernels or a hearth::StepExecutor) ...
//                    outcome.step = plan->step;
//                    scheduler->Complete(outcome);
//                  }
// One plan is outstanding at a time: Plan() after Plan() without Complete()
// is a FailedPrecondition, as is Complete() without a plan. With
// SchedulerOptions::overlap_planning, two may be: the host plans step N+1
// while step N runs, then completes N and N+1 in that order (example below).
//
// Every accepted request ends in exactly one terminal phase, reported once
// through DrainResults() or SchedulerOptions::on_result.
//
// Ids and handles: Submit returns the RequestId only after the request is
// queued, and the engine thread may plan it before the submitting thread has
// stored the id anywhere. A host that keys its own per-request data by id
// must therefore not expect to find it when the request first appears in a
// plan. The host handle (RequestSpec::handle) closes that gap: store the
// data under a handle of your choosing first, then Submit; every plan entry
// and the result carry the handle. Both are stable for the request's life.
//
// Thread-safety: Submit, Cancel, Release, SetPriority, SetWorkClass, Wake,
// AddModel, RemoveModel, DrainResults, PublishedStats, Find*, GetModel and
// options() are safe from any thread. Plan, Complete, NextEventTime,
// WaitForWork, GetRequest, stats and CheckInvariants must
// be called from one thread at a time (the engine thread).
//
// Example:
//   hearth::SchedulerOptions options;
//   options.kv.num_device_blocks = 2048;
//   auto scheduler = hearth::Scheduler::Create(options);
//   hearth::RequestSpec spec;
//   spec.prompt_tokens = 100;
//   spec.max_new_tokens = 20;
//   spec.handle = 7;  // the host's own key for this request
//   absl::StatusOr<hearth::RequestId> id = (*scheduler)->Submit(spec);
//
// Example (overlapped planning, with options.overlap_planning set):
//   // Step N runs (RunOnGpu stands for launching it and, later, awaiting
//   // its outcome) while step N+1 is planned.
//   const hearth::StepPlan* running = *scheduler.Plan(host_clock.Now());
//   hearth::StepOutcome ran = RunOnGpu(*running);
//   while (serving) {
//     absl::StatusOr<const hearth::StepPlan*> next = scheduler.Plan(host_clock.Now());
//     if (!next.ok()) return next.status();
//     // Step N's voided entries are final now; their tokens are dropped.
//     for (const hearth::SequenceOutcome& o : ran.sequences) {
//       if (hearth::IsVoided(*running, o.id)) continue;
//       // ... deliver o.token to its request ...
//     }
//     ran.step = running->step;
//     if (absl::Status s = scheduler.Complete(ran); !s.ok()) return s;
//     running = *next;
//     // A decode with input_pending feeds the token step N sampled for it.
//     ran = RunOnGpu(*running);
//   }

#ifndef HEARTH_SCHEDULER_SCHEDULER_H_
#define HEARTH_SCHEDULER_SCHEDULER_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hearth/common/ids.h"
#include "hearth/request/request_spec.h"
#include "hearth/request/request_state.h"
#include "hearth/request/request_view.h"
#include "hearth/scheduler/scheduler_options.h"
#include "hearth/scheduler/step_outcome.h"
#include "hearth/scheduler/step_plan.h"

namespace hearth {

// Counts at the last Plan/Complete: Scheduler::stats() on the engine thread,
// Scheduler::PublishedStats() from any thread.
struct SchedulerStats {
  uint64_t steps = 0;
  int32_t waiting = 0;
  int32_t running = 0;
  int32_t swapped = 0;
  // Waiting for their model to load.
  int32_t preparing = 0;
  // Submitted with RequestSpec::hold, not released yet.
  int32_t held = 0;
  // Submitted but not yet seen by Plan.
  int32_t queued = 0;
  // The device pool and its unreferenced blocks; device_blocks -
  // free_device_blocks - cached_device_blocks are held by sequences.
  int32_t device_blocks = 0;
  int32_t free_device_blocks = 0;
  // Device blocks that may be held at once: the whole pool, or with
  // residency what resident weights leave.
  int32_t kv_block_limit = 0;
  int64_t resident_weight_bytes = 0;
  int32_t cached_device_blocks = 0;
  // The host (swap) pool and its free blocks; 0 and 0 without swap.
  int32_t host_blocks = 0;
  int32_t free_host_blocks = 0;
  // Tokens whose KV an admission found in the prefix cache instead of
  // computing, over every admission: a readmission after a recompute
  // preemption counts again, and may count generated tokens. Work saved, not
  // a prompt hit rate (MetricsCollector reports that).
  uint64_t prefix_hit_tokens = 0;
  // Preemptions of every cause but kRetry (PreemptionCause): the
  // scheduler's, and the engine's out-of-KV reports, which are also counted
  // apart in engine_out_of_kv_preemptions.
  uint64_t preemptions = 0;
  uint64_t engine_out_of_kv_preemptions = 0;
  // Engine-reported failures retried (listed in StepPlan::preempted with
  // cause kRetry); not counted in `preemptions`.
  uint64_t retries = 0;
  uint64_t finished = 0;
};

namespace internal {
// Tests' access to the scheduler's internals (src/scheduler/scheduler_peer.h).
struct SchedulerPeer;
}  // namespace internal

class Scheduler {
 public:
  // Validates `options` (InvalidArgument naming the field otherwise).
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(
      SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Scheduler::Submit()
  //
  // Validates `spec` and queues it; a later Plan() takes it in (at most
  // max_intake_per_plan per Plan, users taking turns). Thread-safe.
  // InvalidArgument: non-positive or insane token counts, token ids out of
  //   range or of the wrong count, prompt plus max_new_tokens beyond the
  //   model's context, a request whose KV could never fit the whole cache,
  //   unknown model, user or class, an InfiniteFuture arrival time, a label
  //   over max_label_bytes, more bytes than max_pending_bytes, an SLO
  //   override (ttft_slo, tpot_slo) not in (0, kMaxSloTarget] or infinite.
  // ResourceExhausted: the user's part of max_pending_requests or
  //   max_pending_bytes (SchedulerOptions::reserved_pending_share), its
  //   max_queued_requests, or its token quota is used up.
  // The scheduler has no clock of its own: a request's arrival time is
  // spec.arrival_time or, by default, the `now` of the Plan() that takes it
  // in. A rejected request leaves nothing behind.
  absl::StatusOr<RequestId> Submit(const RequestSpec& spec);

  // Scheduler::Cancel()
  //
  // Asks to end a queued, waiting, running or swapped request as kCancelled,
  // with `reason` (any text; empty: "cancelled by the host") leading its
  // RequestResult::message. A queued request ends at the Plan() that takes
  // it in; any other, and its blocks, at the next Plan() (listed in
  // `released`), or a few Plans later if host threads happen to hold the
  // scheduler's bookkeeping lock then: the engine never waits for them.
  // OK means the cancellation is recorded, not that the request will end
  // cancelled: one that reaches another terminal phase first (its last
  // token in a Complete() before that Plan, a deadline, an engine failure)
  // keeps that ending, and its result says so; the cancellation is dropped.
  // Wakes a WaitForWork() in progress.
  // Thread-safe. NotFound for unknown ids and requests already terminal or
  // already being cancelled.
  absl::Status Cancel(RequestId id, std::string_view reason = {});

  // Scheduler::Release()
  //
  // Makes a request submitted with RequestSpec::hold ready to run: the Plan
  // that takes it in (when still queued) or the next Plan moves it on as
  // if it had just arrived without the hold (to its model's preparation,
  // or to waiting, where the policy sees it with its original arrival
  // time). Like Cancel, OK means the release is recorded; a request that
  // ends first (a deadline, a cancel) keeps that ending. Thread-safe; wakes
  // a WaitForWork(). NotFound for unknown ids and requests already terminal
  // or being cancelled; FailedPrecondition for one not held (submitted
  // without hold, or released already).
  absl::Status Release(RequestId id);

  // Scheduler::SetPriority() / Scheduler::SetWorkClass()
  //
  // Change a live request's RequestSpec::priority or work class, e.g. when a
  // member raises a document summary they are now waiting for, or an agent
  // run is moved to background work. A queued request is taken in with the
  // change; any other has it applied at the next Plan() (before deadlines
  // and admission), in the order made, repeated changes merging. The
  // policy re-ranks it (Policy::OnChanged): it keeps its arrival time,
  // progress and KV, and what it was served so far stays charged where it
  // was. A new class brings its SLO targets (unless RequestSpec set the
  // request's own), its queue timeout (from the arrival time, while it has
  // never been admitted), its limits and its KV budget: a running request
  // counts against the new class from then on, as a borrower when beyond
  // its limits; one whose new class may not borrow and is full, or whose
  // hard KV budget cannot reserve it, is preempted (swapped when that
  // pays) and waits to be admitted there. Events after the change and the
  // RequestResult carry the new class and targets; MetricsCollector keeps
  // counting the request under the class and targets it arrived with (and
  // judges its SLO by them).
  // OK means the change is recorded, like Cancel: a request that ends
  // first ends as it would have. Thread-safe; wakes a WaitForWork(). NotFound
  // for unknown ids and requests already terminal or being cancelled;
  // SetWorkClass: InvalidArgument for a class id not in
  // SchedulerOptions::work_classes, or a class whose hard KV budget could
  // never hold the request (as Submit would refuse it).
  absl::Status SetPriority(RequestId id, int32_t priority);
  absl::Status SetWorkClass(RequestId id, WorkClassId work_class);

  // Scheduler::AddModel()
  //
  // Thread-safe. Registers a model or an adapter (ModelConfig::base_model
  // naming a registered base model) while the scheduler runs, checked as
  // Create checks SchedulerOptions::models with it among the models
  // registered now; Submit accepts requests for the returned id as soon as
  // this returns. With residency the model starts unloaded (`preload` is a
  // Create-time field and reads false here) and loads, through the plan's
  // model commands, when its first request wants it; its KV must fit the
  // blocks sized at Create (kv_bytes_per_token at most the largest of
  // Create's models). An adapter's 0 vocab_size and kv_bytes_per_token
  // read as its base's (GetModel shows them so). Ids are never reused,
  // removed models' included.
  // InvalidArgument naming the field for a bad config or a name a
  // registered model has; ResourceExhausted once the scheduler's 4,096 ids
  // (over the scheduler's life) are taken.
  absl::StatusOr<ModelId> AddModel(ModelConfig model);

  // Scheduler::RemoveModel()
  //
  // Thread-safe. Unregisters a model, given at Create or added since:
  // FailedPrecondition while a request of it has not ended (queued, held,
  // preparing, waiting, running or swapped; a request counts until its
  // result is handed over, as DrainResults says) or while an adapter of it
  // is registered (remove those first); NotFound for an id never registered
  // or already removed. Once it returns, Submit refuses the model
  // (InvalidArgument), FindModel and GetModel no longer find it, its name
  // may be registered again (under a new id), and with residency the next
  // Plan unloads its weights if resident (a kUnload model command; a load
  // in flight completes first). Its cached prefix blocks are never read
  // again and go as the cache evicts.
  absl::Status RemoveModel(ModelId model);

  // Scheduler::NextEventTime()
  //
  // When the engine next has something to do if no Submit, Cancel or
  // Release comes: InfinitePast() while any request is queued or live and
  // not held, a cancel or change waits to be taken in, or a plan entry is
  // owed to the engine (Plan now); else the
  // earliest timer that a Plan() would act on (a held request's deadline or
  // queue timeout, a model's keep-alive unload); else InfiniteFuture().
  // Engine thread.
  absl::Time NextEventTime() const;

  // Scheduler::WaitForWork()
  //
  // Blocks the engine thread until there is work, for at most `timeout` of
  // wall-clock time. Returns true at once when NextEventTime() is
  // InfinitePast(), or when a Submit, Cancel or Wake has come since the last
  // Plan(); otherwise sleeps until one comes (true) or `timeout` passes
  // (false). Zero or less never sleeps; InfiniteDuration() sleeps until work
  // comes. The wait is relative because NextEventTime() is on the host's plan
  // clock (whatever it passes to Plan), not necessarily absl::Now(): an idle
  // engine waits until its next event on its own clock,
  //   scheduler.WaitForWork(scheduler.NextEventTime() - host_clock.Now());
  // which is -InfiniteDuration() (no sleep) while work is live and
  // InfiniteDuration() (until a Submit, Cancel or Wake) when nothing is due.
  // Also hands over results that ended requests left waiting for the
  // bookkeeping lock, so DrainResults sees them while the engine sleeps.
  // Engine thread.
  bool WaitForWork(absl::Duration timeout);

  // Scheduler::Wake()
  //
  // Makes a WaitForWork() in progress (or the next one) return true, e.g. to
  // let the engine thread see a shutdown flag. Thread-safe.
  void Wake();

  // Scheduler::Plan()
  //
  // Builds the next step. `now` must not be before the previous Plan's
  // (InvalidArgument); one before the latest step's end (as Complete()
  // applied it, StepOutcome::completed_at) is taken as that end, which the
  // plan's `now` then says. FailedPrecondition while a plan is outstanding
  // (with overlap_planning: while two are). The returned plan stays valid
  // until its Complete(). Allocation-free in steady state.
  absl::StatusOr<const StepPlan*> Plan(absl::Time now);

  // Scheduler::Complete()
  //
  // Applies the engine's outcome of the outstanding plan (with two
  // outstanding: of the older one; outcomes come in step order).
  // InvalidArgument when it does not match the plan (step number, count, ids,
  // order, a missing or unexpected token); nothing is applied then and the
  // plan stays outstanding, so the engine may retry with a corrected
  // outcome. Outcomes of the plan's `voided` entries are read only for
  // their ids and accepted_drafts (see StepPlan::voided).
  absl::Status Complete(const StepOutcome& outcome);

  // Whether a plan is waiting for its Complete().
  bool plan_outstanding() const;
  // How many plans are waiting for their Complete() (0, 1, or with
  // overlap_planning 2).
  int plans_outstanding() const;

  // Moves terminal results accumulated since the last call into `out`
  // (appending). Returns how many were moved. Thread-safe. A result is here
  // once the Plan() or Complete() that ended its request returns, or, if a
  // host thread held the bookkeeping lock then, after a later engine call
  // (the 17th at the latest). Unused when
  // SchedulerOptions::on_result is set. A null `out` moves nothing and
  // returns 0; the results stay for the next call.
  size_t DrainResults(std::vector<RequestResult>* out);

  // Snapshot of a live request (NotFound once terminal or unknown; queued
  // requests not yet seen by Plan are reported as kQueued).
  absl::StatusOr<RequestView> GetRequest(RequestId id) const;

  // Registry lookups by name; NotFound lists the known names.
  absl::StatusOr<UserId> FindUser(std::string_view name) const;
  absl::StatusOr<WorkClassId> FindWorkClass(std::string_view name) const;
  // Models registered now: those of Create not removed, and those added.
  absl::StatusOr<ModelId> FindModel(std::string_view name) const;
  // Thread-safe. A registered model's config (normalised as AddModel
  // says); NotFound for an unknown or removed id.
  absl::StatusOr<ModelConfig> GetModel(ModelId model) const;

  // The options as Create validated them. Its `models` are Create's, not
  // those added or removed since (FindModel and GetModel see those).
  const SchedulerOptions& options() const;
  std::string_view policy_name() const;
  // Engine thread: the counts as of now.
  SchedulerStats stats() const;
  // Scheduler::PublishedStats()
  //
  // Any thread: a consistent copy of stats() as it was when the last Plan()
  // or Complete() returned (all zero before the first). Lock-free for the
  // engine, which publishes it; a reader retries while a publication is in
  // progress, so it never waits for the engine to reach a call.
  SchedulerStats PublishedStats() const;

  // Scheduler::CheckInvariants()
  //
  // O(all requests + blocks) self-check for tests: every device block is
  // free, cached or owned with a ref count equal to the number of block
  // tables holding it; no table holds a block twice; free + cached + owned ==
  // total; host blocks likewise; each request is in exactly one queue that
  // matches its phase. Internal error describing the first violation.
  absl::Status CheckInvariants() const;

 private:
  friend struct internal::SchedulerPeer;
  class Impl;
  explicit Scheduler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hearth

#endif  // HEARTH_SCHEDULER_SCHEDULER_H_
