#include "tests/testing/scheduler_harness.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace hearth::testing {

PlanCopy PlanCopy::Of(const StepPlan& plan) {
  PlanCopy c;
  c.step = plan.step;
  for (const ScheduledSequence& s : plan.sequences) {
    c.sequences.push_back({s.id, s.start_position, s.num_tokens, s.sample, s.full_block_table,
                           {s.block_table.begin(), s.block_table.end()},
                           {s.token_ids.begin(), s.token_ids.end()}, s.draft_tokens,
                           s.input_pending, s.embed, s.mean_pool, s.pool, s.model});
  }
  c.preempted = plan.preempted;
  for (const ReleasedSequence& r : plan.released) c.released.push_back(r.id);
  c.swap_out = plan.swap_out;
  c.swap_in = plan.swap_in;
  c.copy_on_write = plan.copy_on_write;
  c.num_batched_tokens = plan.num_batched_tokens;
  c.encoder_inputs = plan.encoder_inputs;
  c.encoder_frees = plan.encoder_frees;
  c.num_encoder_tokens = plan.num_encoder_tokens;
  c.model_commands = plan.model_commands;
  for (const ModelCommand& m : plan.model_commands) {
    if (m.kind == ModelCommandKind::kLoad) ++c.model_commands_loads;
    if (m.kind == ModelCommandKind::kUnload && m.model.value() < 8) ++c.unloads_of[m.model.value()];
  }
  return c;
}

absl::StatusOr<std::unique_ptr<SchedulerHarness>> SchedulerHarness::Create(
    SchedulerOptions options, uint64_t seed) {
  auto s = Scheduler::Create(std::move(options));
  if (!s.ok()) return s.status();
  return std::unique_ptr<SchedulerHarness>(new SchedulerHarness(std::move(*s), seed));
}

SchedulerHarness::SchedulerHarness(std::unique_ptr<Scheduler> s, uint64_t seed)
    : scheduler_(std::move(s)),
      executor_(seed, scheduler_->options().models[0].vocab_size > 0
                          ? scheduler_->options().models[0].vocab_size : 1000),
      checker_(scheduler_->options()) {}

std::vector<std::string> PlanCopy::CommandNames() const {
  std::vector<std::string> out;
  for (const ModelCommand& c : model_commands) {
    out.push_back(absl::StrCat(c.kind == ModelCommandKind::kLoad ? "load " : "unload ",
                               c.model.value()));
  }
  return out;
}

absl::StatusOr<RequestId> SchedulerHarness::Submit(const RequestSpec& spec) {
  auto id = scheduler_->Submit(spec);
  if (!id.ok()) return id;
  // The model may have been added at run time, so not in options().
  const absl::StatusOr<ModelConfig> model = scheduler_->GetModel(spec.model);
  const int32_t context = model.ok() ? model->context_length : 0;
  // A group's samples: consecutive ids, handles handle + k.
  for (int32_t k = 0; k < std::max(spec.num_samples, 1); ++k) {
    const RequestId sample(id->value() + static_cast<uint64_t>(k));
    checker_.RegisterSpans(sample, spec.encoder_spans);
    live_.insert(sample);
    handles_[sample] = spec.handle + static_cast<uint64_t>(k);
    limits_[sample] = {spec.max_new_tokens, context - spec.prompt_tokens};
  }
  return id;
}

absl::Status SchedulerHarness::CheckHandle(RequestId id, uint64_t handle,
                                           std::string_view where) const {
  auto it = handles_.find(id);
  if (it != handles_.end() && it->second == handle) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(absl::string_view(where.data(), where.size()), " names ", id.ToString(), " with handle ", handle,
                                          it == handles_.end() ? " but it is not live" : ""));
}

absl::Status SchedulerHarness::CheckHandles(const StepPlan& plan) const {
  for (const ScheduledSequence& s : plan.sequences) {
    if (absl::Status st = CheckHandle(s.id, s.handle, "a plan sequence"); !st.ok()) return st;
  }
  for (const Preemption& p : plan.preempted) {
    if (absl::Status st = CheckHandle(p.id, p.handle, "a preemption"); !st.ok()) return st;
  }
  for (const ReleasedSequence& r : plan.released) {
    if (absl::Status st = CheckHandle(r.id, r.handle, "a release"); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status SchedulerHarness::CollectResults() {
  std::vector<RequestResult> out;
  scheduler_->DrainResults(&out);
  for (RequestResult& r : out) {
    if (!live_.erase(r.id)) {
      return absl::InternalError(absl::StrCat("result for ", r.id.ToString(),
                                              " which is not live (duplicate or unknown)"));
    }
    if (absl::Status st = CheckHandle(r.id, r.handle, "a result"); !st.ok()) return st;
    if (!IsTerminal(r.phase)) {
      return absl::InternalError(absl::StrCat("result for ", r.id.ToString(), " is not terminal"));
    }
    results_.emplace(r.id, std::move(r));
  }
  return absl::OkStatus();
}

absl::Status SchedulerHarness::Step() {
  if (scheduler_->options().overlap_planning) return StepOverlapped();
  auto plan = PlanChecked({});
  if (!plan.ok()) return plan.status();
  StepOutcome outcome;
  absl::Status s = executor_.Execute(**plan, &outcome);
  if (!s.ok()) return s;
  s = scheduler_->Complete(outcome);
  if (!s.ok()) return s;
  checker_.AfterComplete(**plan, outcome);
  s = scheduler_->CheckInvariants();
  if (!s.ok()) return s;
  now_ += absl::Milliseconds(10);
  return CollectResults();
}

absl::flat_hash_set<RequestId> SchedulerHarness::ExcusedSkips() const {
  // The plan just made was built while the step in flight ran: a decode of
  // that step may be missing from it when that step's token reaches the
  // request's limits, when its drafts are in flight, or when that step
  // dropped it (it then waits).
  absl::flat_hash_set<RequestId> excused(dropped_in_flight_.begin(), dropped_in_flight_.end());
  if (in_flight_ == nullptr) return excused;
  for (const ScheduledSequence& s : in_flight_->sequences) {
    auto limit = limits_.find(s.id);
    auto done = produced_.find(s.id);
    const int32_t after = (done == produced_.end() ? 0 : done->second) + 1;
    if (s.draft_tokens > 0 ||
        (limit != limits_.end() &&
         (after >= limit->second.max_new_tokens || after >= limit->second.context_room))) {
      excused.insert(s.id);
    }
  }
  return excused;
}

absl::Status SchedulerHarness::CompleteInFlight() {
  absl::Status s = scheduler_->Complete(in_flight_outcome_);
  if (!s.ok()) return s;
  checker_.AfterComplete(*in_flight_, in_flight_outcome_);
  executor_.Discard(*in_flight_, in_flight_outcome_);
  voided_entries_ += static_cast<int64_t>(in_flight_->voided.size());
  for (const SequenceOutcome& o : in_flight_outcome_.sequences) {
    if (!o.produced_token || IsVoided(*in_flight_, o.id)) {
      continue;
    }
    produced_[o.id] += 1 + o.accepted_drafts;
  }
  in_flight_ = nullptr;
  return scheduler_->CheckInvariants();
}

absl::Status SchedulerHarness::FinishInFlight() {
  if (in_flight_ == nullptr) return absl::OkStatus();
  absl::Status s = CompleteInFlight();
  if (!s.ok()) return s;
  return CollectResults();
}

absl::StatusOr<const StepPlan*> SchedulerHarness::PlanChecked(
    const absl::flat_hash_set<RequestId>& excused) {
  auto plan = scheduler_->Plan(now_);
  if (!plan.ok()) return plan.status();
  absl::Status s = checker_.CheckPlan(**plan, excused);
  if (!s.ok()) return s;
  s = CheckHandles(**plan);
  if (!s.ok()) return s;
  s = scheduler_->CheckInvariants();
  if (!s.ok()) return s;
  last_plan_ = PlanCopy::Of(**plan);
  if (keep_history_) history_.push_back(last_plan_);
  return plan;
}

absl::Status SchedulerHarness::StepOverlapped() {
  auto plan = PlanChecked(ExcusedSkips());
  if (!plan.ok()) return plan.status();
  absl::Status s;
  if (in_flight_ != nullptr) {
    s = CompleteInFlight();
    if (!s.ok()) return s;
  }
  dropped_in_flight_.clear();
  for (const Preemption& p : (*plan)->preempted) dropped_in_flight_.insert(p.id);
  for (const ReleasedSequence& r : (*plan)->released) dropped_in_flight_.insert(r.id);
  s = executor_.Execute(**plan, &in_flight_outcome_);
  if (!s.ok()) return s;
  in_flight_ = *plan;
  now_ += absl::Milliseconds(10);
  return CollectResults();
}

absl::StatusOr<SchedulerHarness::RunEnd> SchedulerHarness::Run(const RunOptions& options) {
  for (int i = 0; i < options.max_steps; ++i) {
    if (options.until_idle && live_.empty()) return RunEnd::kIdle;
    if (absl::Status s = Step(); !s.ok()) return s;
    if (options.after_step) {
      if (absl::Status s = options.after_step(); !s.ok()) return s;
    }
    if (options.stop) {
      absl::StatusOr<bool> stop = options.stop();
      if (!stop.ok()) return stop.status();
      if (*stop) return RunEnd::kStopped;
    }
  }
  return RunEnd::kOutOfSteps;
}

absl::Status SchedulerHarness::RunUntilIdle(int max_steps) {
  absl::StatusOr<RunEnd> end = Run({.max_steps = max_steps});
  if (!end.ok()) return end.status();
  if (*end == RunEnd::kIdle) return absl::OkStatus();
  return absl::DeadlineExceededError(absl::StrCat(live_.size(), " requests still live after ",
                                                  max_steps, " steps"));
}

absl::Status SchedulerHarness::StepUntilDecoding(RequestId id, int max_steps) {
  absl::StatusOr<RunEnd> end =
      Run({.max_steps = max_steps, .until_idle = false, .stop = [&]() -> absl::StatusOr<bool> {
             absl::StatusOr<RequestView> v = scheduler_->GetRequest(id);
             if (!v.ok()) return v.status();
             return v->computed_tokens > v->prompt_tokens;
           }});
  if (!end.ok()) return end.status();
  if (*end == RunEnd::kStopped) return absl::OkStatus();
  return absl::DeadlineExceededError(
      absl::StrCat(id.value(), " still not decoding after ", max_steps, " steps"));
}

}  // namespace hearth::testing
