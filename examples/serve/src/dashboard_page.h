// File: examples/serve/src/dashboard_page.h
//
// The household dashboard served at "/": one self-contained HTML page
// (styles and script inline, no external assets) that polls
// /v1/hearth/status once a second and draws who is using the GPU, each
// class's queue and its SLO, KV use and the running sequences. The page's
// source is examples/serve/dashboard.html, embedded at build time.

#ifndef HEARTH_SERVE_DASHBOARD_PAGE_H_
#define HEARTH_SERVE_DASHBOARD_PAGE_H_

#include "absl/strings/string_view.h"

namespace hearth::serve {

absl::string_view DashboardHtml();

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_DASHBOARD_PAGE_H_
