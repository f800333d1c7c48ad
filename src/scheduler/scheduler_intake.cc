// Scheduler::Impl intake: requests enter from the inbox, join their agent
// workflow, wait for their model if it is not resident, and leave early when
// a deadline passes.

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/scheduler_impl.h"

namespace hearth {

using internal::RequestRecord;

namespace {

// The result message of a cancelled request: the host's reason first.
std::string CancelMessage(std::string_view reason, std::string_view phase) {
  std::string message(reason);
  message += message.empty() ? "cancelled by the host while " : " (cancelled by the host while ";
  message += phase;
  if (!reason.empty()) message += ")";
  return message;
}

}  // namespace

void Scheduler::Impl::DrainInbox(absl::Time now) {
  inbox_.Drain(now, &intake_.drained, &intake_.changes, &intake_.cancels);
  // After the drain: a submission taken now may name a model added just
  // before it was submitted.
  SyncModels();
  // Host threads race to Submit; ordering a batch by stamped arrival time
  // (then id) makes arrival order, and so every arrival-ordered policy,
  // independent of that race whenever hosts stamp arrival times.
  if (intake_.drained.size() > 1) {
    std::sort(intake_.drained.begin(), intake_.drained.end(),
              [](const internal::Submission& a, const internal::Submission& b) {
                return a.spec.arrival_time < b.spec.arrival_time ||
                       (a.spec.arrival_time == b.spec.arrival_time && a.id < b.id);
              });
  }
  intake_.workflows.Expire(now);
  for (internal::Submission& sub : intake_.drained) Intake(sub, now);
  for (const internal::RequestChange& c : intake_.changes) ApplyChange(c, now);
  if (!intake_.group_releases.empty()) ReleaseGroups(now);
  for (const internal::Cancellation& c : intake_.cancels) {
    // Gone already when it ended otherwise first (e.g. its last token): that
    // ending stands.
    if (RequestRecord* r = Find(c.id)) {
      Terminate(*r, RequestPhase::kCancelled, FinishReason::kNone,
                CancelMessage(c.reason, PhaseName(r->phase)), now);
    }
  }
}

void Scheduler::Impl::Intake(internal::Submission& sub, absl::Time now) {
  RequestRecord& r = CreateRecord(sub, now);
  residency_.AddLive(r.model);
  Emit(RequestEventKind::kArrive, r, now);
  // Joined first, so that even a request ended here leaves a workflow its
  // children can find.
  std::string refused = JoinWorkflow(r);
  if (refused.empty()) refused = CheckArrivalStamp(sub.spec, now);
  if (!refused.empty()) {
    Terminate(r, RequestPhase::kRejected, FinishReason::kNone, std::move(refused), now);
    return;
  }
  if (sub.cancelled) {
    Terminate(r, RequestPhase::kCancelled, FinishReason::kNone,
              CancelMessage(sub.cancel_reason, PhaseName(RequestPhase::kQueued)), now);
    return;
  }
  for (absl::Time t : {r.deadline, r.queue_deadline}) WatchDeadline(t, r.id);
  if (sub.spec.hold) {
    // Apart from everything runnable until Release; its timers run.
    SetPhase(r, RequestPhase::kHeld, now);
    return;
  }
  if (r.sample_index > 0) {
    // A later sample waits for sample 0's prompt, to reuse its blocks.
    const RequestRecord* first = Find(RequestId(r.id.value() - static_cast<uint64_t>(r.sample_index)));
    if (first != nullptr && first->awaiting_first_token) {
      r.group_wait = true;
      SetPhase(r, RequestPhase::kHeld, now);
      return;
    }
  }
  MakeRunnable(r, now);
}

void Scheduler::Impl::ReleaseGroups(absl::Time now) {
  for (const auto& [first, size] : intake_.group_releases) {
    for (int32_t k = 1; k < size; ++k) {
      RequestRecord* r = Find(RequestId(first.value() + static_cast<uint64_t>(k)));
      if (r == nullptr || !r->group_wait) continue;
      r->group_wait = false;
      MakeRunnable(*r, now);
    }
  }
  intake_.group_releases.clear();
}

void Scheduler::Impl::MakeRunnable(RequestRecord& r, absl::Time now) {
  if (!residency_.ready(r.model)) {
    // Not runnable yet: it waits apart, so it never delays runnable work.
    SetPhase(r, RequestPhase::kPreparing, now);
    model_queues_.preparing[r.model.value()].emplace_back(r.slot, r.id);
    residency_.WantLoad(r.model);
    return;
  }
  SetPhase(r, RequestPhase::kWaiting, now);
}

RequestRecord& Scheduler::Impl::CreateRecord(internal::Submission& sub, absl::Time now) {
  const uint32_t slot = TakeSlot();
  RequestRecord& r = table_[slot];
  // A fresh record, but the buffers keep the capacity of the slot's previous
  // occupant (KvManager::Open resets the KV state).
  std::vector<TokenId> tokens = std::move(r.tokens);
  std::vector<internal::SpanRecord> spans = std::move(r.spans);
  internal::SequenceKv kv = std::move(r.kv);
  r = RequestRecord{};
  r.tokens = std::move(tokens);
  r.spans = std::move(spans);
  r.kv = std::move(kv);
  const RequestSpec& spec = sub.spec;
  r.id = sub.id;
  r.slot = slot;
  r.has_token_ids = !spec.prompt_token_ids.empty();
  r.prompt_tokens = spec.prompt_tokens;
  r.max_new_tokens = spec.max_new_tokens;
  r.num_samples = spec.num_samples;
  r.sample_index = sub.sample_index;
  r.embed = spec.kind == RequestKind::kEmbed;
  r.mean_pool = r.embed && spec.pooling == Pooling::kMean;
  r.has_spans = !spec.encoder_spans.empty();
  r.model = spec.model;
  r.user = spec.user;
  r.work_class = spec.work_class;
  r.handle = spec.handle;
  InitColdFields(r, sub, now);
  table_.Map(r.id, slot);
  return r;
}

void Scheduler::Impl::InitColdFields(RequestRecord& r, internal::Submission& sub,
                                     absl::Time now) {
  RequestSpec& spec = sub.spec;
  const int32_t max_len = spec.prompt_tokens + spec.max_new_tokens;
  r.tokens.clear();
  // Reused capacity would otherwise creep up to the longest request a slot
  // ever held, so memory would follow the rarest extremes, not the load.
  internal::DropOversized(r.tokens, r.has_token_ids ? static_cast<size_t>(max_len) : 0);
  if (r.has_token_ids) {
    r.tokens.reserve(static_cast<size_t>(max_len));
    r.tokens.assign(spec.prompt_token_ids.begin(), spec.prompt_token_ids.end());
  }
  r.spans.clear();
  for (const EncoderSpan& e : spec.encoder_spans) {
    r.spans.push_back({e.position, e.length,
                       internal::EncoderCacheKey(sub.chain_scope, e, limits_.block_size,
                                                 r.id.value())});
  }
  kv_.Open(r.kv, max_len, r.has_token_ids, sub.chain_scope, std::move(sub.prompt_block_hashes));
  r.parent = spec.parent;
  r.priority = spec.priority;
  r.predicted_output = spec.predicted_output;
  r.label = std::move(spec.label);
  r.arrival_seq = intake_.next_arrival_seq++;
  r.arrival_time = spec.arrival_time == absl::InfinitePast()
                       ? now : std::min(spec.arrival_time, now);
  r.deadline = spec.deadline;
  r.own_ttft_slo = spec.ttft_slo.has_value();
  r.own_tpot_slo = spec.tpot_slo.has_value();
  if (r.own_ttft_slo) r.ttft_slo = *spec.ttft_slo;
  if (r.own_tpot_slo) r.tpot_slo = *spec.tpot_slo;
  if (r.embed) {
    // No token follows an embedding's vector: whatever its class says, it
    // has no TPOT target (and keeps none through a change of class).
    r.own_tpot_slo = true;
    r.tpot_slo = absl::InfiniteDuration();
  }
  ResolveClassTargets(r);
}

std::string Scheduler::Impl::CheckArrivalStamp(const RequestSpec& spec, absl::Time now) const {
  // Submit has no clock to judge a stamp by; the Plan that takes the request
  // in has. Small leads are threads' clocks racing and are clamped.
  if (spec.arrival_time == absl::InfinitePast() ||
      spec.arrival_time - now <= options_.max_arrival_lead) {
    return "";
  }
  return absl::StrCat("arrival_time ", absl::FormatTime(spec.arrival_time), " lies ",
                      absl::FormatDuration(spec.arrival_time - now),
                      " after the Plan that took it in (", absl::FormatTime(now),
                      "); SchedulerOptions.max_arrival_lead allows ",
                      absl::FormatDuration(options_.max_arrival_lead));
}

std::string Scheduler::Impl::JoinWorkflow(RequestRecord& r) {
  r.workflow = internal::WorkflowInfo{r.id, r.arrival_seq, r.arrival_time, 0, r.user};
  if (!r.parent.valid()) return "";
  const internal::WorkflowInfo* parent = nullptr;
  if (const RequestRecord* live = Find(r.parent)) {
    parent = &live->workflow;
  } else {
    parent = intake_.workflows.FindEnded(r.parent);
  }
  // Forgotten (ended beyond workflow_retention) or not drained yet: the call
  // starts a workflow of its own.
  if (parent == nullptr) return "";
  if (parent->user != r.user) {
    return absl::StrCat("parent ", internal::ForeignParentReason(
                                       r.parent, options_.users[r.user.value()].name));
  }
  r.workflow = *parent;
  r.workflow.depth = parent->depth + 1;
  return "";
}

void Scheduler::Impl::WatchDeadline(absl::Time t, RequestId id) { intake_.deadlines.Watch(t, id); }

void Scheduler::Impl::ExpireDeadlines(absl::Time now) {
  while (const std::optional<internal::DeadlineHeap::Entry> due = intake_.deadlines.PopDue(now)) {
    if (RequestRecord* r = Find(due->second)) ExpireOne(*r, due->first, now);
  }
}

void Scheduler::Impl::ExpireOne(RequestRecord& r, absl::Time deadline, absl::Time now) {
  if (r.deadline == deadline) {
    Terminate(r, RequestPhase::kTimedOut, FinishReason::kNone,
              absl::StrCat("deadline ", absl::FormatTime(deadline), " passed while ",
                           std::string(PhaseName(r.phase)), " with ", r.output_tokens,
                           " tokens generated"),
              now);
  } else if (r.queue_deadline == deadline && r.first_admit_time == absl::InfiniteFuture()) {
    const WorkClassConfig& c = options_.work_classes[r.work_class.value()];
    const bool held = r.phase == RequestPhase::kHeld;
    Terminate(r, RequestPhase::kTimedOut, FinishReason::kNone,
              absl::StrCat(held ? "held " : "waited ", absl::FormatDuration(now - r.arrival_time),
                           held ? " without being released" : " without being admitted",
                           "; class \"", c.name, "\" has a queue timeout of ",
                           absl::FormatDuration(c.queue_timeout)),
              now);
  }
}

}  // namespace hearth
