#include "hearth/scheduler/scheduler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hearth/kv/prefix_cache.h"
#include "hearth/policy/fifo.h"
#include "scheduler/options_validation.h"
#include "scheduler/scheduler_impl.h"

namespace hearth {

using internal::RequestRecord;
using internal::RunList;

namespace {
constexpr int32_t kMaxBorrowReclaims = 2;
}  // namespace

// ---------------------------------------------------------------- Scheduler

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(
    SchedulerOptions options) {
  absl::Status valid = internal::ValidateOptions(options);
  if (!valid.ok()) return valid;
  absl::StatusOr<BlockAllocator> allocator = BlockAllocator::Create(
      {.num_device_blocks = options.kv.num_device_blocks,
       .num_host_blocks = options.kv.num_host_blocks});
  if (!allocator.ok()) return allocator.status();
  std::unique_ptr<Policy> policy =
      options.policy_factory ? options.policy_factory(options) : NewFifoPolicy();
  if (policy == nullptr) {
    return absl::InvalidArgumentError(
        "SchedulerOptions.policy_factory returned null; it must build a policy");
  }
  auto impl = std::make_unique<Impl>(std::move(options), std::move(*allocator),
                                     std::move(policy));
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(impl)));
}

Scheduler::Scheduler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Scheduler::~Scheduler() = default;

absl::StatusOr<RequestId> Scheduler::Submit(const RequestSpec& spec) {
  return impl_->Submit(spec);
}
absl::Status Scheduler::Cancel(RequestId id) { return impl_->Cancel(id); }
absl::StatusOr<const StepPlan*> Scheduler::Plan(absl::Time now) {
  return impl_->Plan(now);
}
absl::Status Scheduler::Complete(const StepOutcome& outcome) {
  return impl_->Complete(outcome);
}
bool Scheduler::plan_outstanding() const { return impl_->plan_outstanding(); }
size_t Scheduler::DrainResults(std::vector<RequestResult>* out) {
  return impl_->DrainResults(out);
}
absl::StatusOr<RequestView> Scheduler::GetRequest(RequestId id) const {
  return impl_->GetRequest(id);
}
const SchedulerOptions& Scheduler::options() const { return impl_->options(); }
std::string_view Scheduler::policy_name() const { return impl_->policy_name(); }
SchedulerStats Scheduler::stats() const { return impl_->stats(); }
const BlockAllocator& Scheduler::block_allocator() const {
  return impl_->allocator();
}
absl::Status Scheduler::CheckInvariants() const {
  return impl_->CheckInvariants();
}

namespace {

template <typename Config, typename Id>
absl::StatusOr<Id> FindByName(const std::vector<Config>& configs,
                              std::string_view name, std::string_view what) {
  for (size_t i = 0; i < configs.size(); ++i) {
    if (configs[i].name == name) return Id(static_cast<uint32_t>(i));
  }
  return absl::NotFoundError(absl::StrCat(
      "no ", absl::string_view(what.data(), what.size()), " named \"",
      absl::string_view(name.data(), name.size()), "\"; configured: ",
      absl::StrJoin(configs, ", ", [](std::string* out, const Config& c) {
        absl::StrAppend(out, c.name);
      })));
}

}  // namespace

absl::StatusOr<UserId> Scheduler::FindUser(std::string_view name) const {
  return FindByName<UserConfig, UserId>(options().users, name, "user");
}
absl::StatusOr<WorkClassId> Scheduler::FindWorkClass(std::string_view name) const {
  return FindByName<WorkClassConfig, WorkClassId>(options().work_classes, name,
                                                  "work class");
}
absl::StatusOr<ModelId> Scheduler::FindModel(std::string_view name) const {
  return FindByName<ModelConfig, ModelId>(options().models, name, "model");
}

// --------------------------------------------------------------------- Impl

Scheduler::Impl::Impl(SchedulerOptions options, BlockAllocator allocator,
                      std::unique_ptr<Policy> policy)
    : options_(std::move(options)),
      block_size_(options_.kv.block_size),
      chunk_cap_(options_.max_prefill_chunk_tokens > 0
                     ? options_.max_prefill_chunk_tokens
                     : options_.max_batched_tokens),
      inbox_(options_.max_pending_requests, options_.users),
      allocator_(std::move(allocator)),
      policy_(std::move(policy)),
      sink_(options_.metrics_sink),
      residency_(options_),
      workflows_(options_.workflow_retention) {
  preparing_.resize(options_.models.size());
  for (const ModelConfig& m : options_.models) {
    context_length_.push_back(m.context_length);
    vocab_size_.push_back(m.vocab_size);
  }
  if (options_.kv.enable_prefix_caching) prefix_cache_.emplace(&allocator_);
  class_running_.assign(options_.work_classes.size(), 0);
  class_blocks_.assign(options_.work_classes.size(), 0);
  class_reserved_.assign(options_.work_classes.size(), 0);
  borrowed_.reserve(static_cast<size_t>(options_.max_running));
  pending_drops_.reserve(static_cast<size_t>(options_.max_running));
  const auto running = static_cast<size_t>(options_.max_running);
  decoding_.reserve(running);
  prefilling_.reserve(running);
  snapshot_.reserve(running);
  plan_.sequences.reserve(running);
  plan_slots_.reserve(running);
  plan_.preempted.reserve(running);
  served_.reserve(running);
  // Copies are bounded by the blocks that exist.
  const auto blocks = static_cast<size_t>(options_.kv.num_device_blocks);
  plan_.swap_out.reserve(std::min<size_t>(blocks, options_.kv.num_host_blocks));
  plan_.swap_in.reserve(std::min<size_t>(blocks, options_.kv.num_host_blocks));
  plan_.copy_on_write.reserve(running);
  to_release_.reserve(running);
  plan_.released.reserve(running);
}

absl::StatusOr<RequestId> Scheduler::Impl::Submit(const RequestSpec& spec) {
  absl::Status valid = internal::ValidateSpec(spec, options_);
  if (!valid.ok()) return valid;
  std::vector<uint64_t> hashes;
  if (options_.kv.enable_prefix_caching && !spec.prompt_token_ids.empty()) {
    const size_t full = spec.prompt_token_ids.size() / block_size_;
    hashes.reserve(full + spec.max_new_tokens / block_size_ + 1);
    uint64_t parent = PrefixCache::RootHash(spec.model);
    absl::Span<const TokenId> ids(spec.prompt_token_ids);
    for (size_t b = 0; b < full; ++b) {
      parent = PrefixCache::HashBlock(parent, ids.subspan(b * block_size_, block_size_));
      hashes.push_back(parent);
    }
  }
  return inbox_.Submit(spec, std::move(hashes));
}

RequestRecord* Scheduler::Impl::Find(RequestId id) {
  auto it = slot_of_.find(id);
  return it == slot_of_.end() ? nullptr : &slab_[it->second];
}
const RequestRecord* Scheduler::Impl::Find(RequestId id) const {
  auto it = slot_of_.find(id);
  return it == slot_of_.end() ? nullptr : &slab_[it->second];
}

RequestRecord& Scheduler::Impl::CreateRecord(internal::Submission& sub,
                                             absl::Time now) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slab_.size());
    slab_.emplace_back();
  }
  RequestRecord& r = slab_[slot];
  r.slot = slot;
  RequestSpec& spec = sub.spec;
  // Reset field by field to keep the vectors' capacity from the slot's
  // previous occupant.
  r.id = sub.id;
  r.user = spec.user;
  r.work_class = spec.work_class;
  r.model = spec.model;
  r.parent = spec.parent;
  r.priority = spec.priority;
  r.label = std::move(spec.label);
  r.arrival_seq = next_arrival_seq_++;
  r.arrival_time = spec.arrival_time == absl::InfinitePast()
                       ? now : std::min(spec.arrival_time, now);
  r.deadline = spec.deadline;
  r.phase = RequestPhase::kWaiting;
  r.prompt_tokens = spec.prompt_tokens;
  r.max_new_tokens = spec.max_new_tokens;
  r.output_tokens = 0;
  r.computed = 0;
  r.has_token_ids = !spec.prompt_token_ids.empty();
  r.tokens.clear();
  const size_t max_len = static_cast<size_t>(spec.prompt_tokens) + spec.max_new_tokens;
  if (r.has_token_ids) {
    r.tokens.reserve(max_len);
    r.tokens.assign(spec.prompt_token_ids.begin(), spec.prompt_token_ids.end());
  }
  r.block_hashes = std::move(sub.prompt_block_hashes);
  if (r.has_token_ids) r.block_hashes.reserve(max_len / block_size_ + 1);
  r.device_blocks.clear();
  r.device_blocks.reserve(BlocksFor(static_cast<int32_t>(max_len)) + 1);
  r.host_blocks.clear();
  r.registered_blocks = 0;
  r.blocks_sent = 0;
  r.needs_full_table = true;
  r.engine_has_state = false;
  r.list = RunList::kNone;
  r.list_index = -1;
  r.plan_index = -1;
  r.scheduled_step = 0;
  r.admitted_step = 0;
  r.preempted_step = 0;
  r.cached_prompt_tokens = 0;
  r.preemptions = 0;
  r.retries = 0;
  r.reserved_blocks = 0;
  r.prefill_reserve = 0;
  r.borrowed = false;
  r.borrowed_index = -1;
  const absl::Duration patience = options_.work_classes[spec.work_class.value()].queue_timeout;
  r.queue_deadline = patience == absl::InfiniteDuration() ? absl::InfiniteFuture()
                                                          : r.arrival_time + patience;
  r.first_admit_time = absl::InfiniteFuture();
  r.first_token_time = absl::InfiniteFuture();
  slot_of_[r.id] = slot;
  return r;
}

std::string Scheduler::Impl::JoinWorkflow(RequestRecord& r) {
  r.workflow = internal::WorkflowInfo{r.id, r.arrival_seq, r.arrival_time, 0, r.user};
  if (!r.parent.valid()) return "";
  const internal::WorkflowInfo* parent = nullptr;
  if (const RequestRecord* live = Find(r.parent)) {
    parent = &live->workflow;
  } else {
    parent = workflows_.FindEnded(r.parent);
  }
  // Forgotten (ended beyond workflow_retention) or not drained yet: the call
  // starts a workflow of its own.
  if (parent == nullptr) return "";
  if (parent->user != r.user) {
    return absl::StrCat("parent ", internal::ForeignParentReason(
                                       r.parent, options_.users[parent->user.value()].name,
                                       options_.users[r.user.value()].name));
  }
  r.workflow = *parent;
  r.workflow.depth = parent->depth + 1;
  return "";
}

void Scheduler::Impl::AddToList(RequestRecord& r, RunList list) {
  LinkIntoList(r, list);
  ++class_running_[r.work_class.value()];
  residency_.AddActive(r.model, 1);
}

void Scheduler::Impl::RemoveFromList(RequestRecord& r) {
  if (r.list == RunList::kNone) return;
  DropPrefillReserve(r);
  UnlinkFromList(r);
  --class_running_[r.work_class.value()];
  class_reserved_[r.work_class.value()] -= r.reserved_blocks;
  r.reserved_blocks = 0;
  residency_.AddActive(r.model, -1);
  if (r.borrowed) ClearBorrowed(r);
}

void Scheduler::Impl::MoveToDecoding(RequestRecord& r) {
  DropPrefillReserve(r);
  UnlinkFromList(r);
  LinkIntoList(r, RunList::kDecoding);
}

void Scheduler::Impl::LinkIntoList(RequestRecord& r, RunList list) {
  std::vector<uint32_t>& v = list == RunList::kDecoding ? decoding_ : prefilling_;
  r.list = list;
  r.list_index = static_cast<int32_t>(v.size());
  v.push_back(r.slot);
}

void Scheduler::Impl::UnlinkFromList(RequestRecord& r) {
  std::vector<uint32_t>& v = r.list == RunList::kDecoding ? decoding_ : prefilling_;
  const auto i = static_cast<size_t>(r.list_index);
  if (i + 1 != v.size()) {
    v[i] = v.back();
    slab_[v[i]].list_index = static_cast<int32_t>(i);
  }
  v.pop_back();
  r.list = RunList::kNone;
  r.list_index = -1;
}

bool Scheduler::Impl::ClassOver(uint32_t cls) const {
  const WorkClassConfig& c = options_.work_classes[cls];
  return (c.max_running > 0 && class_running_[cls] > c.max_running) ||
         (c.kv_block_budget > 0 && class_blocks_[cls] > c.kv_block_budget);
}

void Scheduler::Impl::MarkBorrowed(RequestRecord& r) {
  if (r.borrowed) return;
  r.borrowed = true;
  r.borrowed_index = static_cast<int32_t>(borrowed_.size());
  borrowed_.push_back(r.slot);
}

void Scheduler::Impl::ClearBorrowed(RequestRecord& r) {
  const auto i = static_cast<size_t>(r.borrowed_index);
  if (i + 1 != borrowed_.size()) {
    borrowed_[i] = borrowed_.back();
    slab_[borrowed_[i]].borrowed_index = static_cast<int32_t>(i);
  }
  borrowed_.pop_back();
  r.borrowed = false;
  r.borrowed_index = -1;
}

RequestRecord* Scheduler::Impl::PickBorrowedVictim(const RequestRecord& beneficiary) {
  // Newest borrowers first; those whose class came back within its limits
  // are no longer borrowing and leave the list.
  for (size_t i = borrowed_.size(); i-- > 0;) {
    if (i >= borrowed_.size()) continue;
    RequestRecord& r = slab_[borrowed_[i]];
    if (!ClassOver(r.work_class.value())) {
      ClearBorrowed(r);
      continue;
    }
    // A sequence loses its work each time it is reclaimed; after a few
    // reclaims only the policy may preempt it. Without this, a borrower the
    // policy ranks first can be reclaimed and readmitted forever (seen in the
    // randomized driver with classes that each need most of the cache).
    if (r.preemptions >= kMaxBorrowReclaims) continue;
    if (&r != &beneficiary && r.work_class != beneficiary.work_class && CanBeVictim(r)) return &r;
  }
  return nullptr;
}

bool Scheduler::Impl::DropDeviceState(RequestRecord& r) {
  ReleaseDeviceBlocks(r, 0);
  r.needs_full_table = true;
  return std::exchange(r.engine_has_state, false);
}

void Scheduler::Impl::ReleaseDeviceBlocks(RequestRecord& r, size_t keep) {
  // Release tail blocks first so the LRU evicts a sequence's end before its
  // (more shareable) beginning.
  while (r.device_blocks.size() > keep) {
    absl::Status s = allocator_.Release(r.device_blocks.back());
    (void)s;  // Cannot fail: the table holds exactly one reference per entry.
    r.device_blocks.pop_back();
    --class_blocks_[r.work_class.value()];
  }
  r.registered_blocks = std::min<int32_t>(r.registered_blocks, static_cast<int32_t>(keep));
  r.blocks_sent = std::min<int32_t>(r.blocks_sent, static_cast<int32_t>(keep));
}

RequestEvent Scheduler::Impl::EventFor(RequestEventKind kind, const RequestRecord& r,
                                       absl::Time now) const {
  RequestEvent e;
  e.kind = kind;
  e.time = kind == RequestEventKind::kArrive ? r.arrival_time : now;
  e.id = r.id;
  e.user = r.user;
  e.work_class = r.work_class;
  e.prompt_tokens = r.prompt_tokens;
  e.output_tokens = r.output_tokens;
  e.cached_tokens = r.cached_prompt_tokens;
  e.phase = r.phase;
  return e;
}

void Scheduler::Impl::Emit(RequestEventKind kind, const RequestRecord& r,
                           absl::Time now) {
  if (sink_ != nullptr) sink_->OnRequestEvent(EventFor(kind, r, now));
}

void Scheduler::Impl::Terminate(RequestRecord& r, RequestPhase phase,
                                FinishReason reason, std::string message,
                                absl::Time now) {
  if (ScheduledNow(r)) Unschedule(r);
  RemoveFromList(r);
  if (DropDeviceState(r)) to_release_.push_back(r.id);
  for (BlockId b : r.host_blocks) (void)allocator_.ReleaseHost(b);
  r.host_blocks.clear();
  if (r.phase == RequestPhase::kWaiting) --num_waiting_;
  if (r.phase == RequestPhase::kSwapped) {
    --num_swapped_;
    residency_.AddActive(r.model, -1);
  }
  // kQueued: rejected at intake, before the policy heard of it.
  const bool known_to_policy =
      r.phase != RequestPhase::kPreparing && r.phase != RequestPhase::kQueued;
  if (r.phase == RequestPhase::kPreparing) --num_preparing_;
  residency_.RemoveLive(r.model, now);
  r.phase = phase;
  if (known_to_policy) policy_->OnRemoved(r.View(), now);

  if (sink_ != nullptr) {
    RequestEvent e = EventFor(RequestEventKind::kEnd, r, now);
    e.finish_reason = reason;
    sink_->OnRequestEvent(e);
  }
  RequestResult result;
  result.id = r.id;
  result.user = r.user;
  result.work_class = r.work_class;
  result.label = std::move(r.label);
  result.phase = phase;
  result.finish_reason = reason;
  result.message = std::move(message);
  result.prompt_tokens = r.prompt_tokens;
  result.output_tokens = r.output_tokens;
  result.cached_prompt_tokens = r.cached_prompt_tokens;
  result.preemptions = r.preemptions;
  result.retries = r.retries;
  result.arrival_time = r.arrival_time;
  result.first_admit_time = r.first_admit_time;
  result.first_token_time = r.first_token_time;
  result.end_time = now;
  if (phase == RequestPhase::kFinished) ++counters_.finished;
  const bool callback = static_cast<bool>(options_.on_result);
  if (callback) options_.on_result(result);
  inbox_.Finish(std::move(result), /*keep=*/!callback);

  workflows_.Remember(r.id, r.workflow, now);
  auto it = slot_of_.find(r.id);
  free_slots_.push_back(it->second);
  slot_of_.erase(it);
  r.id = RequestId();
}

absl::StatusOr<RequestView> Scheduler::Impl::GetRequest(RequestId id) const {
  if (const RequestRecord* r = Find(id)) return r->View();
  if (inbox_.IsQueued(id)) {
    RequestView v;
    v.id = id;
    v.phase = RequestPhase::kQueued;
    return v;
  }
  return absl::NotFoundError(absl::StrCat(
      "request ", id.ToString(), " is unknown or already ended (results come through "
      "DrainResults or on_result)"));
}

SchedulerStats Scheduler::Impl::stats() const {
  SchedulerStats s = counters_;
  s.waiting = num_waiting_;
  s.preparing = num_preparing_;
  s.running = running_count();
  s.swapped = num_swapped_;
  s.queued = inbox_.num_queued();
  s.free_device_blocks = allocator_.num_free();
  s.kv_block_limit = residency_.kv_block_limit();
  s.resident_weight_bytes = residency_.resident_weight_bytes();
  s.cached_device_blocks = allocator_.num_cached();
  s.free_host_blocks = allocator_.num_free_host();
  return s;
}

}  // namespace hearth
