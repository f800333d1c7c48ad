#include "hearth/scheduler/scheduler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/strings/str_join.h"
#include "hearth/policy/policy_registry.h"
#include "scheduler/options_validation.h"
#include "scheduler/scheduler_impl.h"
#include "scheduler/scheduler_peer.h"

namespace hearth {

using internal::RequestRecord;

// ---------------------------------------------------------------- Scheduler

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(
    SchedulerOptions options) {
  absl::Status valid = internal::ValidateOptions(options);
  if (!valid.ok()) return valid;
  // An adapter's 0 vocabulary and KV size read as its base's from here on,
  // so that token ids of its requests are checked like the base's.
  for (ModelConfig& m : options.models) {
    const int64_t base = internal::BaseModelIndex(options, m);
    if (base < 0) continue;
    const ModelConfig& b = options.models[static_cast<size_t>(base)];
    if (m.vocab_size == 0) m.vocab_size = b.vocab_size;
    if (m.kv_bytes_per_token == 0) m.kv_bytes_per_token = b.kv_bytes_per_token;
  }
  absl::StatusOr<BlockAllocator> allocator = BlockAllocator::Create(
      {.num_device_blocks = options.kv.num_device_blocks,
       .num_host_blocks = options.kv.num_host_blocks});
  if (!allocator.ok()) return allocator.status();
  if (!options.policy_factory) {
    absl::StatusOr<PolicyFactory> household = MakePolicyFactory("household", PolicyConfig{});
    if (!household.ok()) return household.status();
    options.policy_factory = *std::move(household);
  }
  std::unique_ptr<Policy> policy = options.policy_factory(options);
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
absl::Status Scheduler::Cancel(RequestId id, std::string_view reason) {
  return impl_->Cancel(id, reason);
}
absl::Status Scheduler::Release(RequestId id) { return impl_->Release(id); }

absl::Status Scheduler::SetPriority(RequestId id, int32_t priority) {
  return impl_->SetPriority(id, priority);
}

absl::Status Scheduler::SetWorkClass(RequestId id, WorkClassId work_class) {
  return impl_->SetWorkClass(id, work_class);
}
absl::Time Scheduler::NextEventTime() const { return impl_->NextEventTime(); }
bool Scheduler::WaitForWork(absl::Duration timeout) { return impl_->WaitForWork(timeout); }
void Scheduler::Wake() { impl_->Wake(); }
absl::StatusOr<const StepPlan*> Scheduler::Plan(absl::Time now) {
  absl::StatusOr<const StepPlan*> plan = impl_->Plan(now);
  impl_->HandOverEnded();
  if (plan.ok()) impl_->PublishStats();
  return plan;
}
absl::Status Scheduler::Complete(const StepOutcome& outcome) {
  absl::Status status = impl_->Complete(outcome);
  impl_->HandOverEnded();
  if (status.ok()) impl_->PublishStats();
  return status;
}
bool Scheduler::plan_outstanding() const { return impl_->plan_outstanding(); }
int Scheduler::plans_outstanding() const { return impl_->plans_outstanding(); }
size_t Scheduler::DrainResults(std::vector<RequestResult>* out) {
  return impl_->DrainResults(out);
}
absl::StatusOr<RequestView> Scheduler::GetRequest(RequestId id) const {
  return impl_->GetRequest(id);
}
const SchedulerOptions& Scheduler::options() const { return impl_->options(); }
std::string_view Scheduler::policy_name() const { return impl_->policy_name(); }
SchedulerStats Scheduler::stats() const { return impl_->stats(); }
SchedulerStats Scheduler::PublishedStats() const { return impl_->PublishedStats(); }
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
  // The name may come from anyone (a request's JSON, say): escaped and cut.
  return absl::NotFoundError(absl::StrCat(
      "no ", absl::string_view(what.data(), what.size()), " named \"",
      absl::CHexEscape(absl::string_view(name.data(), std::min<size_t>(name.size(), 64))),
      name.size() > 64 ? "\"...; configured: " : "\"; configured: ",
      absl::StrJoin(configs, ", ", [](std::string* out, const Config& c) {
        absl::StrAppend(out, c.name);
      })));
}

internal::PlanLimits LimitsOf(const SchedulerOptions& o) {
  internal::PlanLimits limits;
  limits.block_size = o.kv.block_size;
  limits.chunk_cap =
      o.max_prefill_chunk_tokens > 0 ? o.max_prefill_chunk_tokens : o.max_batched_tokens;
  for (const ModelConfig& m : o.models) {
    limits.context_length.push_back(m.context_length);
    limits.vocab_size.push_back(m.vocab_size);
  }
  return limits;
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
  return impl_->models().Find(name);
}
absl::StatusOr<ModelConfig> Scheduler::GetModel(ModelId model) const {
  const internal::ModelEntry* e = impl_->models().Get(model);
  if (e == nullptr || e->removed.load(std::memory_order_acquire)) {
    return absl::NotFoundError(absl::StrCat("model ", model.ToString(),
                                            e == nullptr ? " was never registered" : " was removed"));
  }
  return e->config;
}
absl::StatusOr<ModelId> Scheduler::AddModel(ModelConfig model) {
  return impl_->AddModel(std::move(model));
}
absl::Status Scheduler::RemoveModel(ModelId model) { return impl_->RemoveModel(model); }

// --------------------------------------------------------------------- Impl

Scheduler::Impl::Impl(SchedulerOptions options, BlockAllocator allocator,
                      std::unique_ptr<Policy> policy)
    : options_(std::move(options)),
      limits_(LimitsOf(options_)),
      models_(options_.models),
      models_version_seen_(models_.version()),
      models_removed_seen_(options_.models.size(), false),
      inbox_(options_, models_),
      kv_(std::move(allocator), options_),
      capacity_(options_.work_classes, kv_.classes()),
      tokens_(options_.step_time_model, options_.work_classes),
      encoder_(internal::EncoderBudgetPerStep(options_), internal::EncoderCacheTokens(options_)),
      policy_(std::move(policy)),
      sink_(options_.metrics_sink),
      residency_(options_),
      intake_(options_.workflow_retention,
              static_cast<size_t>(std::clamp(options_.max_pending_requests,
                                             internal::IntakeState::kMinRememberedEnds,
                                             internal::IntakeState::kMaxRememberedEnds))) {
  // Tables that grow with the requests taken in are sized up front for the
  // usual backlog: growing one by doubling moves all of it inside one Plan.
  const auto backlog = static_cast<size_t>(
      std::min(options_.max_pending_requests, internal::IntakeState::kReservedBacklog));
  capacity_.ReserveSlots(backlog);
  model_queues_.preparing.resize(options_.models.size());
  const auto running = static_cast<size_t>(options_.max_running);
  table_.Reserve(backlog, running, options_.overlap_planning ? running : 0);
  for (auto* v : {&step_.snapshot, &step_.reclaimable_slots}) {
    v->reserve(running);
  }
  step_.reclaimable.reserve(running);
  if (options_.max_draft_tokens > 0) step_.draft_room.reserve(running);
  if (policy_ != nullptr) tokens_.set_prefill_rules(policy_->prefill_rules());
  outputs_.pending_drops.reserve(running);
  outputs_.served.reserve(running);
  ReservePlanBuffers(running);
  outputs_.to_release.reserve(running);
  outputs_.ended.reserve(running);
}

void Scheduler::Impl::ReservePlanBuffers(size_t running) {
  // Copies are bounded by the blocks that exist.
  const auto swaps = std::min<size_t>(static_cast<size_t>(options_.kv.num_device_blocks),
                                      static_cast<size_t>(options_.kv.num_host_blocks));
  // Only the first buffer is used without overlap.
  for (int i = 0; i < (options_.overlap_planning ? 2 : 1); ++i) {
    internal::PlanBuffer& b = step_.buffers[i];
    b.slots.reserve(running);
    b.plan.sequences.reserve(running);
    b.plan.preempted.reserve(running);
    b.plan.swap_out.reserve(swaps);
    b.plan.swap_in.reserve(swaps);
    b.plan.copy_on_write.reserve(running);
    b.plan.released.reserve(running);
    if (options_.overlap_planning) b.plan.voided.reserve(running);
    // Only multimodal hosts fill these; they grow to their most once.
    b.plan.encoder_inputs.reserve(64);
    b.plan.encoder_frees.reserve(64);
  }
}

absl::StatusOr<RequestId> Scheduler::Impl::Submit(const RequestSpec& spec) {
  absl::Status valid = internal::ValidateSpec(spec, options_, models_);
  if (!valid.ok()) return valid;
  const internal::ChainScope scope =
      internal::ResolveChainScope(spec, options_.kv.prefix_hash_key, limits_.block_size);
  std::vector<uint64_t> hashes;
  if (options_.kv.enable_prefix_caching && scope.cached && !spec.prompt_token_ids.empty()) {
    const size_t full = spec.prompt_token_ids.size() / limits_.block_size;
    hashes.reserve(internal::KvManager::HashCapacity(spec.prompt_tokens + spec.max_new_tokens,
                                                     limits_.block_size));
    internal::KvManager::ExtendHashChain(scope, spec.prompt_token_ids, limits_.block_size, full,
                                         &hashes, spec.encoder_spans);
  }
  // The SLO targets are resolved at intake, against the class the request
  // has then (SetWorkClass may change it while queued).
  return inbox_.Submit(spec, std::move(hashes), scope);
}

absl::Status Scheduler::Impl::SetPriority(RequestId id, int32_t priority) {
  return inbox_.Change(internal::RequestChange{.id = id, .priority = priority, .work_class = std::nullopt});
}

absl::Status Scheduler::Impl::SetWorkClass(RequestId id, WorkClassId work_class) {
  if (!work_class.valid() || work_class.value() >= options_.work_classes.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "work class ", work_class.valid() ? std::to_string(work_class.value()) : "(invalid)",
        " is not registered; SchedulerOptions.work_classes has ",
        options_.work_classes.size(), " (ids 0..", options_.work_classes.size() - 1, ")"));
  }
  return inbox_.Change(internal::RequestChange{.id = id, .priority = std::nullopt, .work_class = work_class});
}

void Scheduler::Impl::HandOverEnded() {
  if (outputs_.ended.empty()) return;
  inbox_.Finish(&outputs_.ended);
}


absl::StatusOr<RequestView> Scheduler::Impl::GetRequest(RequestId id) const {
  if (const RequestRecord* r = Find(id)) return ViewOf(*r);
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

absl::Time Scheduler::Impl::NextEventTime() const {
  // Any live request may be planned now: ask again after the next Plan.
  // Samples waiting for sample 0 that the next Plan lets run count too.
  // A model removed since the last plan is unloaded by the next.
  const bool owed = !outputs_.to_release.empty() || !outputs_.pending_drops.empty() ||
                    !intake_.group_releases.empty() || models_.version() != models_version_seen_;
  const bool runnable = table_.num_live() > static_cast<size_t>(count(RequestPhase::kHeld));
  if (owed || runnable || inbox_.num_queued() > 0 || inbox_.has_changes()) {
    return absl::InfinitePast();
  }
  // Only held requests (or none): what can happen without a Release is a
  // deadline (the earliest watched may belong to one ended since; planning
  // then just drops it) or an unload.
  return std::min(intake_.deadlines.earliest(), residency_.NextUnloadTime());
}

bool Scheduler::Impl::WaitForWork(absl::Duration timeout) {
  // Beyond a year is "until work comes": no clock conversion can overflow.
  const absl::Time deadline = timeout <= absl::ZeroDuration()   ? absl::InfinitePast()
                              : timeout > absl::Hours(24 * 366) ? absl::InfiniteFuture()
                                                                : absl::Now() + timeout;
  return inbox_.WaitForWork(deadline, NextEventTime() == absl::InfinitePast());
}

SchedulerStats Scheduler::Impl::stats() const {
  SchedulerStats s = stats_.counters;
  s.waiting = count(RequestPhase::kWaiting);
  s.preparing = count(RequestPhase::kPreparing);
  s.held = count(RequestPhase::kHeld);
  s.running = running_count();
  s.swapped = count(RequestPhase::kSwapped);
  s.queued = inbox_.num_queued();
  const BlockAllocator& blocks = kv_.allocator();
  s.device_blocks = blocks.num_device_blocks();
  s.free_device_blocks = blocks.num_free();
  s.kv_block_limit = residency_.kv_block_limit();
  s.resident_weight_bytes = residency_.resident_weight_bytes();
  s.cached_device_blocks = blocks.num_cached();
  s.host_blocks = blocks.num_host_blocks();
  s.free_host_blocks = blocks.num_free_host();
  return s;
}

const BlockAllocator& internal::SchedulerPeer::allocator(const Scheduler& s) {
  return s.impl_->allocator();
}

}  // namespace hearth
