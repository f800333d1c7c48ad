// hearth_scheduler_stats, _metrics and _prometheus_text: what the engine
// thread reads about the scheduler and its built-in metrics collector.

#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "capi/c_handles.h"
#include "capi/c_status.h"
#include "hearth/metrics/engine_gauges.h"
#include "hearth/metrics/prometheus.h"

using hearth::capi::Fail;
using hearth::capi::Guard;

namespace {

// Terminal events wait in the collector for the step that carried their last
// token; between steps nothing is in flight, so they may be applied then.
hearth::MetricsReport ReportOf(hearth_scheduler& s) {
  // Callers check CollectorOff first.
  if (!s.scheduler->plan_outstanding()) s.collector->Flush();
  return s.collector->Report();
}

void CopyGroup(const hearth::GroupReport& g, hearth_metrics& out) {
  out.arrived = g.arrived;
  out.finished = g.finished;
  out.cancelled = g.cancelled;
  out.rejected = g.rejected;
  out.timed_out = g.timed_out;
  out.failed = g.failed;
  out.prefill_tokens = g.prefill_tokens;
  out.output_tokens = g.output_tokens;
  out.weighted_service = g.weighted_service;
  out.normalized_service = g.normalized_service;
  out.ttft_mean_s = g.ttft.mean;
  out.ttft_p99_s = g.ttft.p99;
  out.queue_wait_mean_s = g.queue_wait.mean;
  out.e2e_mean_s = g.e2e.mean;
}

const hearth::GroupReport* FindGroup(const std::vector<hearth::GroupReport>& groups,
                                     std::string_view name) {
  for (const hearth::GroupReport& g : groups) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

void CopyStats(const hearth::SchedulerStats& s, hearth_stats* out) {
    *out = hearth_stats{};
    out->steps = s.steps;
    out->queued = s.queued;
    out->waiting = s.waiting;
    out->preparing = s.preparing;
    out->running = s.running;
    out->swapped = s.swapped;
    out->free_device_blocks = s.free_device_blocks;
    out->cached_device_blocks = s.cached_device_blocks;
    out->kv_block_limit = s.kv_block_limit;
    out->free_host_blocks = s.free_host_blocks;
    out->resident_weight_bytes = s.resident_weight_bytes;
    out->prefix_hit_tokens = s.prefix_hit_tokens;
    out->preemptions = s.preemptions;
    out->finished = s.finished;
    out->engine_out_of_kv_preemptions = s.engine_out_of_kv_preemptions;
    out->retries = s.retries;
}

// FAILED_PRECONDITION when the options left the collector out.
hearth_status CollectorOff(const hearth_scheduler& s, const char* function,
                           hearth_error** error) {
  if (s.collector != nullptr) return HEARTH_OK;
  return Fail(error, HEARTH_FAILED_PRECONDITION,
              absl::StrCat(function, ": metrics are off (options \"metrics\": {\"enabled\": "
                                     "false} or hearth_options_set_metrics(options, 0))"));
}

}  // namespace

extern "C" {

hearth_status hearth_scheduler_stats(const hearth_scheduler* scheduler,
                                     hearth_stats* out, hearth_error** error) {
  return Guard(error, "hearth_scheduler_stats", [&] {
    HEARTH_C_REQUIRE(scheduler, "hearth_scheduler_stats", error);
    HEARTH_C_REQUIRE(out, "hearth_scheduler_stats", error);
    CopyStats(scheduler->scheduler->stats(), out);
    return HEARTH_OK;
  });
}

hearth_status hearth_scheduler_published_stats(const hearth_scheduler* scheduler,
                                               hearth_stats* out, hearth_error** error) {
  return Guard(error, "hearth_scheduler_published_stats", [&] {
    HEARTH_C_REQUIRE(scheduler, "hearth_scheduler_published_stats", error);
    HEARTH_C_REQUIRE(out, "hearth_scheduler_published_stats", error);
    CopyStats(scheduler->scheduler->PublishedStats(), out);
    return HEARTH_OK;
  });
}

hearth_status hearth_scheduler_metrics(hearth_scheduler* scheduler,
                                       const char* group, hearth_metrics* out,
                                       hearth_error** error) {
  return Guard(error, "hearth_scheduler_metrics", [&] {
    HEARTH_C_REQUIRE(scheduler, "hearth_scheduler_metrics", error);
    HEARTH_C_REQUIRE(out, "hearth_scheduler_metrics", error);
    if (hearth_status off = CollectorOff(*scheduler, "hearth_scheduler_metrics", error)) {
      return off;
    }
    const hearth::MetricsReport report = ReportOf(*scheduler);
    *out = hearth_metrics{};
    if (group == nullptr) {
      CopyGroup(report.total, *out);
      out->jain_index = report.jain_index;
      out->max_backlogged_service_gap = report.max_backlogged_service_gap;
      out->steps = report.steps;
      return HEARTH_OK;
    }
    const std::string_view name(group, strnlen(group, 1 << 16));
    const hearth::GroupReport* found = nullptr;
    if (name.substr(0, 5) == "user:") found = FindGroup(report.users, name.substr(5));
    if (name.substr(0, 6) == "class:") found = FindGroup(report.classes, name.substr(6));
    if (found == nullptr) {
      return Fail(error, HEARTH_NOT_FOUND,
                  absl::StrCat("hearth_scheduler_metrics: group \"",
                               hearth::capi::AbslView(name.substr(0, 64)),
                               "\" is not \"user:<name>\" or \"class:<name>\" of a "
                               "configured user or class"));
    }
    CopyGroup(*found, *out);
    return HEARTH_OK;
  });
}

hearth_status hearth_scheduler_prometheus_text(hearth_scheduler* scheduler,
                                               int32_t router_names,
                                               const char* model_name,
                                               char** out_text,
                                               size_t* out_length,
                                               hearth_error** error) {
  return Guard(error, "hearth_scheduler_prometheus_text", [&] {
    HEARTH_C_REQUIRE(scheduler, "hearth_scheduler_prometheus_text", error);
    HEARTH_C_REQUIRE(out_text, "hearth_scheduler_prometheus_text", error);
    *out_text = nullptr;
    if (hearth_status off = CollectorOff(*scheduler, "hearth_scheduler_prometheus_text", error)) {
      return off;
    }
    hearth::PrometheusOptions po;
    po.gauges = hearth::EngineGaugesFrom(*scheduler->scheduler);
    po.router_names = router_names != 0;
    if (model_name != nullptr) po.model_name.assign(model_name, strnlen(model_name, 256));
    const std::string text = hearth::PrometheusText(ReportOf(*scheduler), po);
    // malloc, so that the caller's hearth_string_free (free) matches.
    char* copy = static_cast<char*>(std::malloc(text.size() + 1));
    if (copy == nullptr) {
      return Fail(error, HEARTH_RESOURCE_EXHAUSTED,
                  "hearth_scheduler_prometheus_text: out of memory");
    }
    std::memcpy(copy, text.c_str(), text.size() + 1);
    *out_text = copy;
    if (out_length != nullptr) *out_length = text.size();
    return HEARTH_OK;
  });
}

}  // extern "C"
