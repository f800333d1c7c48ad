// Scheduler::Impl lifecycle: the one place where a request changes phase.
// SetPhase keeps the per-phase counts and model residency and tells the
// policy what the change means to it; every phase change in the scheduler,
// admission's included (scheduler_admission.cc), goes through it.
// Preemption, retry-or-fail and the end of a request are written side by
// side here so that what each one releases stays symmetric.

#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/scheduler_impl.h"

namespace hearth {

using internal::RequestRecord;
using internal::RunList;

namespace {

// Who a result or an event is about, and its token counts.
template <typename Report>
void FillAbout(const RequestRecord& r, Report& out) {
  out.id = r.id;
  out.handle = r.handle;
  out.user = r.user;
  out.work_class = r.work_class;
  out.prompt_tokens = r.prompt_tokens;
  out.output_tokens = r.output_tokens;
}

// Parallel sampling: which group and sample a result belongs to.
void FillGroup(const RequestRecord& r, RequestResult& out) {
  if (r.num_samples <= 1) return;
  out.group = RequestId(r.id.value() - static_cast<uint64_t>(r.sample_index));
  out.sample_index = r.sample_index;
}

// Phases whose KV (device or host) needs the request's model resident.
bool PinsModel(RequestPhase p) {
  return p == RequestPhase::kRunning || p == RequestPhase::kSwapped;
}

}  // namespace

void Scheduler::Impl::SetPhase(RequestRecord& r, RequestPhase to, absl::Time now) {
  const RequestPhase from = r.phase;
  table_.CountPhaseChange(from, to);
  if (PinsModel(from) != PinsModel(to)) {
    residency_.AddActive(r.model, PinsModel(to) ? 1 : -1,
                         BlocksFor(r.prompt_tokens + r.max_new_tokens));
  }
  r.phase = to;
  TellPolicy(r, from, to, now);
}

void Scheduler::Impl::TellPolicy(const RequestRecord& r, RequestPhase from, RequestPhase to,
                                 absl::Time now) {
  // The policy knows requests that are waiting (swapped ones included) or
  // running; preparation happens apart from it.
  const bool known_before = from == RequestPhase::kWaiting || PinsModel(from);
  const bool known_after = to == RequestPhase::kWaiting || PinsModel(to);
  if (!known_before && known_after) {
    policy_->OnArrival(ViewOf(r), now);
  } else if (known_before && !known_after) {
    policy_->OnRemoved(ViewOf(r), now);
  } else if (to == RequestPhase::kRunning) {
    policy_->OnAdmitted(ViewOf(r), now);
  } else if (from == RequestPhase::kRunning) {
    policy_->OnPreempted(ViewOf(r), now);
  }
  // Swapped -> waiting (its host copies given up) is still waiting.
}

void Scheduler::Impl::StartRunning(RequestRecord& r) {
  table_.Link(r, r.decoding() ? RunList::kDecoding : RunList::kPrefilling);
  capacity_.AddRunning(r.work_class.value(), 1);
  residency_.AddRunning(r.model, 1);
}

void Scheduler::Impl::StopRunning(RequestRecord& r) {
  if (r.list == RunList::kNone) return;
  if (step_.outstanding > 0 && options_.overlap_planning) VoidOutstandingEntry(r);
  table_.Unlink(r);
  const uint32_t cls = r.work_class.value();
  kv_.StopRunning(r.kv, cls);
  capacity_.AddRunning(cls, -1);
  residency_.AddRunning(r.model, -1);
  capacity_.ClearBorrowing(r.slot);
}

void Scheduler::Impl::MoveToDecoding(RequestRecord& r) {
  kv_.FinishPrefill(r.kv);
  table_.Unlink(r);
  table_.Link(r, RunList::kDecoding);
}

void Scheduler::Impl::Preempt(RequestRecord& r, absl::Time now) {
  if (ScheduledNow(r)) Unschedule(r);
  StopRunning(r);
  const PreemptionMode mode = kv_.Preempt(r.kv, r.work_class.value(), r.id, r.computed, step_.plan);
  const RequestPhase to =
      mode == PreemptionMode::kSwap ? RequestPhase::kSwapped : RequestPhase::kWaiting;
  if (mode == PreemptionMode::kRecompute) r.computed = 0;
  if (DropDeviceState(r)) {
    step_.plan->preempted.push_back({r.id, r.handle, mode, PreemptionCause::kScheduler});
  }
  ++r.preemptions;
  r.preempted_step = step_.plan->step;
  ++stats_.counters.preemptions;
  SetPhase(r, to, now);
  if (sink_ != nullptr) {
    RequestEvent e = EventFor(RequestEventKind::kPreempt, r, now);
    e.preemption_mode = mode;
    sink_->OnRequestEvent(e);
  }
}

void Scheduler::Impl::RetryOrFail(RequestRecord& r, const std::string& error, absl::Time now) {
  const WorkClassConfig& c = options_.work_classes[r.work_class.value()];
  if (r.retries >= c.max_retries) {
    Terminate(r, RequestPhase::kFailed, FinishReason::kNone,
              r.retries == 0
                  ? absl::StrCat("the engine failed the sequence: ", error)
                  : absl::StrCat("the engine failed the sequence ", r.retries + 1,
                                 " times (class \"", c.name, "\" retries ", c.max_retries,
                                 "); last error: ", error),
              now);
    return;
  }
  // Retry from scratch: whatever the engine holds for it may be bad, so its
  // KV is dropped and recomputed (prompt plus the tokens already accepted).
  ++r.retries;
  ++stats_.counters.retries;
  RequeueForRecompute(r, PreemptionCause::kRetry, now);
  Emit(RequestEventKind::kRetry, r, now);
}

void Scheduler::Impl::PreemptOutOfKv(RequestRecord& r, absl::Time now) {
  // Counted here, off the per-step path: a token produced since the last
  // report starts the count afresh.
  if (r.output_tokens != r.out_of_kv_output_mark) r.out_of_kv_reports = 0;
  r.out_of_kv_output_mark = r.output_tokens;
  if (++r.out_of_kv_reports >= options_.max_out_of_kv_reports) {
    Terminate(r, RequestPhase::kFailed, FinishReason::kNone,
              absl::StrCat("the engine reported the sequence out of KV ", r.out_of_kv_reports,
                           " times without a token in between (SchedulerOptions."
                           "max_out_of_kv_reports); its ",
                           r.prompt_tokens + r.max_new_tokens,
                           " tokens may not fit the engine's own cache"),
              now);
    return;
  }
  ++r.preemptions;
  ++stats_.counters.preemptions;
  ++stats_.counters.engine_out_of_kv_preemptions;
  RequeueForRecompute(r, PreemptionCause::kEngineOutOfKv, now);
  if (sink_ != nullptr) {
    RequestEvent e = EventFor(RequestEventKind::kPreempt, r, now);
    e.preemption_mode = PreemptionMode::kRecompute;
    e.preemption_cause = PreemptionCause::kEngineOutOfKv;
    sink_->OnRequestEvent(e);
  }
}

void Scheduler::Impl::RequeueForRecompute(RequestRecord& r, PreemptionCause cause,
                                          absl::Time now) {
  StopRunning(r);
  if (DropDeviceState(r)) {
    outputs_.pending_drops.push_back({r.id, r.handle, PreemptionMode::kRecompute, cause});
  }
  r.computed = 0;
  // The next plan lists the drop; readmission waits a step more, so a plan
  // never both drops and schedules the same request. (With a plan built
  // ahead, the next plan is the one after it.)
  r.preempted_step = stats_.counters.steps + 1;
  SetPhase(r, RequestPhase::kWaiting, now);
}

void Scheduler::Impl::Terminate(RequestRecord& r, RequestPhase phase, FinishReason reason,
                                std::string message, absl::Time now) {
  if (ScheduledNow(r)) Unschedule(r);
  StopRunning(r);
  if (DropDeviceState(r)) outputs_.to_release.push_back({r.id, r.handle});
  // Swapped out by the plan being built (a class change, then a cancel or a
  // deadline in the same Plan): its copies are still to run, so its host
  // blocks are freed once that step ran, not reused by this plan. Host
  // blocks of earlier swap-outs hold finished copies and go at once.
  if (step_.planning && r.preempted_step == step_.plan->step) {
    kv_.DeferHostRelease(r.kv);
  } else {
    kv_.ReleaseHost(r.kv);
  }
  residency_.RemoveLive(r.model, now);
  SetPhase(r, phase, now);
  if (sink_ != nullptr) {
    RequestEvent e = EventFor(RequestEventKind::kEnd, r, now);
    e.finish_reason = reason;
    sink_->OnRequestEvent(e);
  }
  if (phase == RequestPhase::kFinished) ++stats_.counters.finished;
  // Sample 0 ended before its first token: the others compute the prompt.
  if (r.num_samples > 1 && r.sample_index == 0 && r.awaiting_first_token) {
    intake_.group_releases.emplace_back(r.id, r.num_samples);
  }
  DeliverResult(r, phase, reason, std::move(message), now);
  intake_.workflows.Remember(r.id, r.workflow, now);
  FreeSlot(table_.Unmap(r.id));
  r.id = RequestId();
}

void Scheduler::Impl::DeliverResult(RequestRecord& r, RequestPhase phase, FinishReason reason,
                                    std::string message, absl::Time now) {
  RequestResult result;
  FillAbout(r, result);
  FillGroup(r, result);
  result.label = std::move(r.label);
  result.phase = phase;
  result.finish_reason = reason;
  result.message = std::move(message);
  result.cached_prompt_tokens = r.cached_prompt_tokens;
  result.preemptions = r.preemptions;
  result.retries = r.retries;
  result.arrival_time = r.arrival_time;
  result.first_admit_time = r.first_admit_time;
  result.first_token_time = r.first_token_time;
  result.end_time = now;
  const bool callback = static_cast<bool>(options_.on_result);
  if (callback) options_.on_result(result);
  // Handed to the inbox in one batch when Plan/Complete returns: one lock
  // per call, not per ended request, however hard hosts hammer Submit.
  outputs_.ended.push_back(std::move(result));
}

bool Scheduler::Impl::DropDeviceState(RequestRecord& r) {
  ReleaseBlocks(r, 0);
  return kv_.ForgetEngineState(r.kv);
}

RequestEvent Scheduler::Impl::EventFor(RequestEventKind kind, const RequestRecord& r,
                                       absl::Time now) const {
  RequestEvent e;
  e.kind = kind;
  e.time = kind == RequestEventKind::kArrive ? r.arrival_time : now;
  FillAbout(r, e);
  e.ttft_slo = r.ttft_slo;
  e.tpot_slo = r.tpot_slo;
  e.cached_tokens = r.cached_prompt_tokens;
  e.phase = r.phase;
  return e;
}

void Scheduler::Impl::Emit(RequestEventKind kind, const RequestRecord& r, absl::Time now) {
  if (sink_ != nullptr) sink_->OnRequestEvent(EventFor(kind, r, now));
}

uint32_t Scheduler::Impl::TakeSlot() {
  const internal::RequestTable::Taken taken = table_.TakeSlot();
  if (taken.added) capacity_.AddSlot();
  return taken.slot;
}

void Scheduler::Impl::FreeSlot(uint32_t slot) {
  // Without overlap the plan naming it has completed (or is the one being
  // built, which dropped it). With it, the newest step the engine may be
  // running: the one in flight while a plan is built, else the newest
  // outstanding one.
  if (!options_.overlap_planning || step_.outstanding == 0 ||
      (!step_.planning && step_.outstanding == 1)) {
    table_.FreeSlot(slot);
    return;
  }
  table_.HoldSlot(slot, step_.planning ? step_.in_flight_step : stats_.counters.steps);
}

}  // namespace hearth
