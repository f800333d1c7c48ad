// GET routes that describe the server: the models, health, Prometheus
// metrics (the scheduler's, the server's and the job queues'), the status
// JSON and the dashboard page; and the error handler that gives httplib's
// own errors an OpenAI-shaped body.

#include <string>

#include "absl/strings/str_cat.h"
#include "dashboard_page.h"
#include "hearth/jobs/jobs_prometheus.h"
#include "hearth/metrics/prometheus.h"
#include "http_routes.h"
#include "jobs_status_json.h"
#include "status_json.h"

namespace hearth::serve {
namespace {

std::string ServerMetrics(const ServeContext& ctx, const EngineSnapshot& s) {
  return absl::StrCat(
      "# HELP hearth_serve_live_requests Requests accepted over HTTP and not yet ended.\n"
      "# TYPE hearth_serve_live_requests gauge\n"
      "hearth_serve_live_requests ", ctx.engine->live(), "\n",
      "# HELP hearth_serve_disconnect_cancels_total Requests cancelled because the client left.\n"
      "# TYPE hearth_serve_disconnect_cancels_total counter\n"
      "hearth_serve_disconnect_cancels_total ", s.disconnect_cancels, "\n",
      "# HELP hearth_serve_draining 1 once SIGTERM closed intake.\n"
      "# TYPE hearth_serve_draining gauge\n"
      "hearth_serve_draining ", ctx.engine->intake_closed() ? 1 : 0, "\n");
}

}  // namespace

void InstallInfoRoutes(httplib::Server& server, const ServeContext& ctx) {
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(DashboardHtml()), "text/html; charset=utf-8");
  });
  server.Get("/healthz", [&ctx](const httplib::Request&, httplib::Response& res) {
    const bool draining = ctx.engine->intake_closed();
    res.status = draining ? 503 : 200;
    res.set_content(draining ? R"({"status":"draining"})" : R"({"status":"ok"})",
                    "application/json");
  });
  server.Get("/metrics", [&ctx](const httplib::Request&, httplib::Response& res) {
    std::shared_ptr<const EngineSnapshot> s = ctx.engine->snapshot();
    PrometheusOptions po;
    po.gauges = s->gauges;
    po.router_names = true;
    po.model_name = s->model;
    std::string body = PrometheusText(s->report, po) + ServerMetrics(ctx, *s);
    if (ctx.jobs != nullptr) body += JobsPrometheusText(ctx.jobs->Stats());
    res.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
  });
  server.Get("/v1/hearth/status", [&ctx](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    nlohmann::json status = StatusJson(*ctx.engine->snapshot(), ctx.engine->live());
    if (ctx.jobs != nullptr) status["jobs"] = JobsStatusJson(ctx.jobs->Stats());
    res.set_content(Dump(status), "application/json");
  });
  server.Get("/v1/models", [&ctx](const httplib::Request& req, httplib::Response& res) {
    absl::StatusOr<Caller> caller = ctx.directory->Authenticate(
        req.get_header_value("Authorization"), req.get_header_value("X-Api-Key"));
    if (!caller.ok()) return ReplyError(res, ErrorFor(caller.status()));
    nlohmann::json data = nlohmann::json::array();
    for (const std::string& name : ctx.directory->ModelNames()) {
      data.push_back({{"id", name}, {"object", "model"}, {"created", 0}, {"owned_by", "hearth"}});
    }
    res.set_content(Dump({{"object", "list"}, {"data", data}}), "application/json");
  });
}

void InstallErrorHandler(httplib::Server& server) {
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    absl::Status status;
    switch (res.status) {
      case 404:
        status = absl::NotFoundError(absl::StrCat("no route ", req.method, " ", req.path));
        break;
      case 413:
        status = absl::OutOfRangeError("the request body is larger than this server accepts");
        break;
      case 400:
        status = absl::InvalidArgumentError("malformed HTTP request");
        break;
      default:
        status = absl::UnknownError(absl::StrCat("HTTP ", res.status));
        break;
    }
    HttpError e = ErrorFor(status);
    if (res.status == 413) e.body["error"]["code"] = "request_too_large";
    if (res.status == 404) e.body["error"]["code"] = nullptr;
    res.set_content(Dump(e.body), "application/json");
    return httplib::Server::HandlerResponse::Handled;
  }));
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res,
                                  std::exception_ptr) {
    HttpError e = ErrorFor(absl::InternalError("the server failed on this request"));
    res.status = e.status;
    res.set_content(Dump(e.body), "application/json");
  });
}

}  // namespace hearth::serve
