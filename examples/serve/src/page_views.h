// File: examples/serve/src/page_views.h
//
// What each key sees of the server's pages (the trust boundary of DESIGN.md
// section 7: a member never reads another member's activity):
//
//   role     /v1/hearth/status, dashboard        /metrics
//   admin    everything                          everything
//   member   the household's totals (classes,    the household's totals and
//            KV, queues, jobs), its own entry    its own per-user series
//            among the members, its own running  only
//            requests only
//   metrics  nothing (403)                       everything (a scrape key)
//
// Running requests are listed by the ids their clients were shown
// (public_request_ids.h), never by the scheduler's sequential ids.
//
// Thread-safety: plain functions.

#ifndef HEARTH_SERVE_PAGE_VIEWS_H_
#define HEARTH_SERVE_PAGE_VIEWS_H_

#include "absl/status/status.h"
#include "engine_snapshot.h"
#include "hearth/metrics/metrics_report.h"
#include "household_directory.h"
#include "nlohmann/json.hpp"
#include "public_request_ids.h"

namespace hearth::serve {

// PermissionDenied unless `caller` may read the status page and dashboard.
absl::Status MayReadStatus(const Caller& caller);
// PermissionDenied unless `caller` may make calls or list models (a
// member's key, or an admin key that belongs to a member).
absl::Status MayCall(const Caller& caller);

// The status JSON as `caller` may see it, with a "viewer" object naming the
// caller's member and role.
nlohmann::json StatusView(const Caller& caller, const EngineSnapshot& snapshot,
                          int32_t live_requests, const PublicRequestIds& ids);

// The metrics report as `caller` may see it: per-user groups cut to the
// caller's own unless it is an admin or metrics key.
MetricsReport MetricsView(const Caller& caller, const MetricsReport& report);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_PAGE_VIEWS_H_
