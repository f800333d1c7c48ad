// hearth_scheduler_*: creating a scheduler, submitting and cancelling.

#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "capi/c_handles.h"
#include "capi/c_status.h"
#include "capi/c_time.h"
#include "capi/options_json.h"
#include "hearth/common/names.h"
#include "hearth/metrics/metrics_collector.h"
#include "hearth/policy/policy_registry.h"
#include "internal/status_macros.h"
#include "scheduler/options_validation.h"

using hearth::capi::Fail;
using hearth::capi::FromStatus;
using hearth::capi::Guard;

namespace {


absl::StatusOr<std::unique_ptr<hearth::MetricsCollector>> MakeCollector(
    const hearth_options& o) {
  hearth::MetricsOptions mo = hearth::MetricsOptionsFor(o.scheduler);
  mo.prefill_weight = o.metrics_prefill_weight;
  mo.decode_weight = o.metrics_decode_weight;
  mo.max_gap_users = o.metrics_max_gap_users;
  // The C API reports no time series; sampling one would only cost.
  mo.series_interval = absl::ZeroDuration();
  return hearth::MetricsCollector::Create(std::move(mo));
}

absl::Status Create(const hearth_options& o, hearth_scheduler& out) {
  hearth::SchedulerOptions options = o.scheduler;
  HEARTH_ASSIGN_OR_RETURN(options.policy_factory,
                          hearth::MakePolicyFactory(o.policy, o.policy_config));
  // First, so that a bad name is reported as the options' field it came
  // from, not as the collector's copy of it.
  HEARTH_RETURN_IF_ERROR(hearth::internal::ValidateOptions(options));
  if (o.metrics_enabled) {
    HEARTH_ASSIGN_OR_RETURN(out.collector, MakeCollector(o));
    options.metrics_sink = out.collector.get();
  }
  HEARTH_ASSIGN_OR_RETURN(out.scheduler, hearth::Scheduler::Create(std::move(options)));
  auto users = std::make_shared<NameList>();
  for (const hearth::UserConfig& u : o.scheduler.users) users->push_back(u.name);
  auto classes = std::make_shared<NameList>();
  for (const hearth::WorkClassConfig& c : o.scheduler.work_classes) {
    classes->push_back(c.name);
  }
  out.user_names = std::move(users);
  out.class_names = std::move(classes);
  return absl::OkStatus();
}

// The id a name resolves to; NULL is the first configured entry.
template <typename Id, typename Find>
absl::StatusOr<Id> Lookup(const char* name, Find find) {
  if (name == nullptr) return Id(0);
  // Configured names are at most kMaxNameBytes long; reading a caller's
  // string stops one byte past that.
  const size_t length = strnlen(name, hearth::kMaxNameBytes + 1);
  if (length > hearth::kMaxNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("name is longer than ", hearth::kMaxNameBytes, " bytes"));
  }
  return find(std::string_view(name, length));
}

// A request's SLO override in seconds: 0 is the class's target, INFINITY
// none; the scheduler judges the rest (positive, at most kMaxSloTarget)
// once it is a duration. NaN and magnitudes beyond any clock are refused
// here, where absl would saturate them to infinite.
absl::StatusOr<std::optional<absl::Duration>> SloOverride(double seconds, const char* field) {
  if (seconds == 0) return std::nullopt;
  if (std::isinf(seconds)) {
    return seconds > 0 ? absl::InfiniteDuration() : -absl::InfiniteDuration();
  }
  if (std::isnan(seconds) || std::fabs(seconds) > hearth::capi::kMaxAbsSeconds) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, " is ", seconds,
        "; must be 0 for the class's target, INFINITY for none, or seconds in (0, 365 days]"));
  }
  return absl::Seconds(seconds);
}

absl::StatusOr<hearth::RequestSpec> SpecFrom(const hearth::Scheduler& s,
                                             const hearth_request& r) {
  hearth::RequestSpec spec;
  HEARTH_ASSIGN_OR_RETURN(spec.user, Lookup<hearth::UserId>(r.user, [&](auto n) {
                            return s.FindUser(n);
                          }));
  HEARTH_ASSIGN_OR_RETURN(spec.work_class,
                          Lookup<hearth::WorkClassId>(r.work_class, [&](auto n) {
                            return s.FindWorkClass(n);
                          }));
  HEARTH_ASSIGN_OR_RETURN(spec.model, Lookup<hearth::ModelId>(r.model, [&](auto n) {
                            return s.FindModel(n);
                          }));
  if (r.prompt_token_ids == nullptr && r.num_prompt_token_ids != 0) {
    return absl::InvalidArgumentError(
        "hearth_request.prompt_token_ids is NULL but num_prompt_token_ids is not 0");
  }
  // Submit checks the count against prompt_tokens; this only keeps the copy
  // below from trusting an absurd length.
  if (r.num_prompt_token_ids > static_cast<size_t>(INT32_MAX)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "hearth_request.num_prompt_token_ids is ", r.num_prompt_token_ids,
        "; must be at most 2^31 - 1"));
  }
  spec.prompt_tokens = r.prompt_tokens == 0 && r.num_prompt_token_ids > 0
                           ? static_cast<int32_t>(r.num_prompt_token_ids)
                           : r.prompt_tokens;
  if (r.num_prompt_token_ids > 0) {
    spec.prompt_token_ids.assign(r.prompt_token_ids,
                                 r.prompt_token_ids + r.num_prompt_token_ids);
  }
  spec.max_new_tokens = r.max_new_tokens;
  spec.priority = r.priority;
  if (r.label != nullptr) {
    // One byte past the scheduler's own limit is enough for it to refuse.
    const size_t limit = static_cast<size_t>(s.options().max_label_bytes) + 1;
    spec.label.assign(r.label, strnlen(r.label, limit));
  }
  HEARTH_ASSIGN_OR_RETURN(spec.arrival_time,
                          hearth::capi::TimeFromSeconds(
                              r.arrival_time_s, "hearth_request.arrival_time_s",
                              hearth::capi::Infinity::kPast));
  HEARTH_ASSIGN_OR_RETURN(spec.deadline,
                          hearth::capi::TimeFromSeconds(
                              r.deadline_s, "hearth_request.deadline_s",
                              hearth::capi::Infinity::kFuture));
  if (r.parent != HEARTH_NO_REQUEST) spec.parent = hearth::RequestId(r.parent);
  HEARTH_ASSIGN_OR_RETURN(spec.ttft_slo, SloOverride(r.ttft_slo_s, "hearth_request.ttft_slo_s"));
  HEARTH_ASSIGN_OR_RETURN(spec.tpot_slo, SloOverride(r.tpot_slo_s, "hearth_request.tpot_slo_s"));
  spec.handle = r.handle;
  // One byte past the longest name is enough for Submit to refuse it.
  constexpr size_t kScopeLimit = hearth::kMaxCacheScopeBytes + 1;
  if (r.cache_scope != nullptr) {
    spec.cache_scope.name.assign(r.cache_scope, strnlen(r.cache_scope, kScopeLimit));
  }
  if (r.shared_prefix_scope != nullptr) {
    spec.cache_scope.shared_prefix_scope.assign(
        r.shared_prefix_scope, strnlen(r.shared_prefix_scope, kScopeLimit));
  }
  spec.cache_scope.shared_prefix_tokens = r.shared_prefix_tokens;
  spec.cache_scope.opt_out = r.cache_opt_out != 0;
  spec.hold = r.hold != 0;
  // Checked here: a cast would truncate 256 to 0.
  if (r.kind != HEARTH_KIND_GENERATE && r.kind != HEARTH_KIND_EMBED) {
    return absl::InvalidArgumentError(absl::StrCat(
        "hearth_request.kind is ", r.kind,
        "; must be HEARTH_KIND_GENERATE (0) or HEARTH_KIND_EMBED (1)"));
  }
  if (r.pooling != HEARTH_POOLING_LAST && r.pooling != HEARTH_POOLING_MEAN) {
    return absl::InvalidArgumentError(absl::StrCat(
        "hearth_request.pooling is ", r.pooling,
        "; must be HEARTH_POOLING_LAST (0) or HEARTH_POOLING_MEAN (1)"));
  }
  spec.kind = r.kind == HEARTH_KIND_EMBED ? hearth::RequestKind::kEmbed
                                          : hearth::RequestKind::kGenerate;
  spec.pooling = r.pooling == HEARTH_POOLING_MEAN ? hearth::Pooling::kMean : hearth::Pooling::kLast;
  // 0 (a zeroed struct) is one sample; the scheduler checks the rest.
  spec.num_samples = r.num_samples == 0 ? 1 : r.num_samples;
  if (r.num_encoder_spans > 0) {
    if (r.encoder_spans == nullptr || r.num_encoder_spans > hearth::kMaxEncoderSpans) {
      return absl::InvalidArgumentError(absl::StrCat(
          "hearth_request.num_encoder_spans is ", r.num_encoder_spans,
          r.encoder_spans == nullptr ? " with encoder_spans NULL" : "",
          "; give at most ", hearth::kMaxEncoderSpans, " spans in encoder_spans"));
    }
    spec.encoder_spans.reserve(r.num_encoder_spans);
    for (size_t i = 0; i < r.num_encoder_spans; ++i) {
      const hearth_encoder_span& e = r.encoder_spans[i];
      spec.encoder_spans.push_back({e.position, e.length, e.content_hash});
    }
  }
  return spec;
}

}  // namespace

extern "C" {

hearth_status hearth_scheduler_create(const hearth_options* options,
                                      hearth_scheduler** out,
                                      hearth_error** error) {
  return Guard(error, "hearth_scheduler_create", [&] {
    HEARTH_C_REQUIRE(options, "hearth_scheduler_create", error);
    HEARTH_C_REQUIRE(out, "hearth_scheduler_create", error);
    *out = nullptr;
    auto scheduler = std::make_unique<hearth_scheduler>();
    const hearth_status status = FromStatus(Create(*options, *scheduler), error);
    if (status == HEARTH_OK) *out = scheduler.release();
    return status;
  });
}

void hearth_scheduler_free(hearth_scheduler* scheduler) { delete scheduler; }

hearth_request hearth_request_default(void) {
  hearth_request r;
  std::memset(&r, 0, sizeof(r));
  r.arrival_time_s = -INFINITY;
  r.deadline_s = INFINITY;
  r.parent = HEARTH_NO_REQUEST;
  return r;
}

hearth_status hearth_scheduler_submit(hearth_scheduler* scheduler,
                                      const hearth_request* request,
                                      uint64_t* out_id, hearth_error** error) {
  return Guard(error, "hearth_scheduler_submit", [&] {
    HEARTH_C_REQUIRE(scheduler, "hearth_scheduler_submit", error);
    HEARTH_C_REQUIRE(request, "hearth_scheduler_submit", error);
    HEARTH_C_REQUIRE(out_id, "hearth_scheduler_submit", error);
    absl::StatusOr<hearth::RequestSpec> spec = SpecFrom(*scheduler->scheduler, *request);
    if (!spec.ok()) return FromStatus(spec.status(), error);
    absl::StatusOr<hearth::RequestId> id = scheduler->scheduler->Submit(*spec);
    if (!id.ok()) return FromStatus(id.status(), error);
    *out_id = id->value();
    return HEARTH_OK;
  });
}

hearth_status hearth_scheduler_cancel(hearth_scheduler* scheduler, uint64_t id,
                                      hearth_error** error) {
  return Guard(error, "hearth_scheduler_cancel", [&] {
    HEARTH_C_REQUIRE(scheduler, "hearth_scheduler_cancel", error);
    return FromStatus(scheduler->scheduler->Cancel(hearth::RequestId(id)), error);
  });
}

hearth_status hearth_scheduler_cancel_reason(hearth_scheduler* scheduler, uint64_t id,
                                             const char* reason, hearth_error** error) {
  return Guard(error, "hearth_scheduler_cancel_reason", [&] {
    HEARTH_C_REQUIRE(scheduler, "hearth_scheduler_cancel_reason", error);
    // Bounded like a label: the reason is text for a result message.
    const size_t limit = static_cast<size_t>(scheduler->scheduler->options().max_label_bytes);
    const std::string_view why =
        reason == nullptr ? std::string_view() : std::string_view(reason, strnlen(reason, limit));
    return FromStatus(scheduler->scheduler->Cancel(hearth::RequestId(id), why), error);
  });
}

hearth_status hearth_scheduler_release(hearth_scheduler* scheduler, uint64_t id,
                                       hearth_error** error) {
  return Guard(error, "hearth_scheduler_release", [&] {
    HEARTH_C_REQUIRE(scheduler, "hearth_scheduler_release", error);
    return FromStatus(scheduler->scheduler->Release(hearth::RequestId(id)), error);
  });
}

hearth_status hearth_scheduler_set_priority(hearth_scheduler* scheduler, uint64_t id,
                                            int32_t priority, hearth_error** error) {
  return Guard(error, "hearth_scheduler_set_priority", [&] {
    HEARTH_C_REQUIRE(scheduler, "hearth_scheduler_set_priority", error);
    return FromStatus(scheduler->scheduler->SetPriority(hearth::RequestId(id), priority),
                      error);
  });
}

hearth_status hearth_scheduler_set_work_class(hearth_scheduler* scheduler, uint64_t id,
                                              const char* work_class, hearth_error** error) {
  return Guard(error, "hearth_scheduler_set_work_class", [&] {
    HEARTH_C_REQUIRE(scheduler, "hearth_scheduler_set_work_class", error);
    const hearth::Scheduler& s = *scheduler->scheduler;
    absl::StatusOr<hearth::WorkClassId> cls = Lookup<hearth::WorkClassId>(
        work_class, [&](auto n) { return s.FindWorkClass(n); });
    if (!cls.ok()) return FromStatus(cls.status(), error);
    return FromStatus(scheduler->scheduler->SetWorkClass(hearth::RequestId(id), *cls), error);
  });
}

hearth_status hearth_scheduler_add_model(hearth_scheduler* scheduler, const char* model_json,
                                         uint32_t* model_out, hearth_error** error) {
  return Guard(error, "hearth_scheduler_add_model", [&] {
    HEARTH_C_REQUIRE(scheduler, "hearth_scheduler_add_model", error);
    HEARTH_C_REQUIRE(model_json, "hearth_scheduler_add_model", error);
    // Read up to the JSON limit plus one byte, so an unterminated buffer is
    // found without reading on for ever.
    const std::string_view text(
        model_json, strnlen(model_json, hearth::capi::kMaxOptionsJsonBytes + 1));
    hearth::ModelConfig model;
    if (absl::Status s = hearth::capi::ApplyModelJson(text, model); !s.ok()) {
      return FromStatus(s, error);
    }
    absl::StatusOr<hearth::ModelId> id = scheduler->scheduler->AddModel(std::move(model));
    if (!id.ok()) return FromStatus(id.status(), error);
    if (model_out != nullptr) *model_out = id->value();
    return HEARTH_OK;
  });
}

hearth_status hearth_scheduler_remove_model(hearth_scheduler* scheduler, const char* model,
                                            hearth_error** error) {
  return Guard(error, "hearth_scheduler_remove_model", [&] {
    HEARTH_C_REQUIRE(scheduler, "hearth_scheduler_remove_model", error);
    HEARTH_C_REQUIRE(model, "hearth_scheduler_remove_model", error);
    const hearth::Scheduler& s = *scheduler->scheduler;
    absl::StatusOr<hearth::ModelId> id =
        Lookup<hearth::ModelId>(model, [&](auto n) { return s.FindModel(n); });
    if (!id.ok()) return FromStatus(id.status(), error);
    return FromStatus(scheduler->scheduler->RemoveModel(*id), error);
  });
}

double hearth_scheduler_next_event_time(const hearth_scheduler* scheduler) {
  if (scheduler == nullptr) return INFINITY;
  return hearth::capi::SecondsFromTime(scheduler->scheduler->NextEventTime());
}

int32_t hearth_scheduler_wait_for_work(hearth_scheduler* scheduler, double timeout_s) {
  if (scheduler == nullptr) return 0;
  absl::Duration timeout = absl::ZeroDuration();  // NaN and <= 0: no sleep
  if (timeout_s > hearth::capi::kMaxAbsSeconds) {
    timeout = absl::InfiniteDuration();
  } else if (timeout_s > 0) {
    timeout = absl::Seconds(timeout_s);
  }
  return scheduler->scheduler->WaitForWork(timeout) ? 1 : 0;
}

void hearth_scheduler_wake(hearth_scheduler* scheduler) {
  if (scheduler != nullptr) scheduler->scheduler->Wake();
}

}  // extern "C"
