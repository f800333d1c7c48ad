// GET routes that describe the server: the models (listed, or one by id as
// the OpenAI SDKs' models.retrieve asks), health (/healthz, and /health in
// llama-server's shape, which its clients and proxies probe), Prometheus
// metrics (the scheduler's, the server's and the job queues'), the status
// JSON, the server's properties (/props, llama-server's shape: props_json.h)
// and the dashboard page; and the error handler that gives httplib's
// own errors an OpenAI-shaped body (Ollama's under /api/). All but /healthz and /health need a key
// (the gate, request_gate.h), and show each key what page_views.h lets it
// see.

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dashboard_page.h"
#include "hearth/jobs/jobs_prometheus.h"
#include "hearth/metrics/prometheus.h"
#include "http_routes.h"
#include "jobs_status_json.h"
#include "ollama_response.h"
#include "page_views.h"
#include "request_gate.h"

namespace hearth::serve {
namespace {

std::string ConnectionMetrics(const ConnectionStats& c) {
  return absl::StrCat(
      "# HELP hearth_serve_connections Open HTTP connections; strangers have shown no valid key.\n"
      "# TYPE hearth_serve_connections gauge\n"
      "hearth_serve_connections{kind=\"member\"} ", c.open - c.strangers, "\n",
      "hearth_serve_connections{kind=\"stranger\"} ", c.strangers, "\n",
      "# HELP hearth_serve_connections_ended_early_total Connections refused at a cap, shed to make "
      "room, or cut at a head or body deadline.\n"
      "# TYPE hearth_serve_connections_ended_early_total counter\n"
      "hearth_serve_connections_ended_early_total{reason=\"refused\"} ", c.refused, "\n",
      "hearth_serve_connections_ended_early_total{reason=\"shed\"} ", c.shed, "\n",
      "hearth_serve_connections_ended_early_total{reason=\"head_timeout\"} ", c.head_timeouts, "\n",
      "hearth_serve_connections_ended_early_total{reason=\"body_timeout\"} ", c.body_timeouts,
      "\n");
}

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
      "hearth_serve_draining ", ctx.engine->intake_closed() ? 1 : 0, "\n",
      ctx.connections != nullptr ? ConnectionMetrics(ctx.connections->Stats()) : "");
}

// The caller, or the error already written to `res`.
std::optional<Caller> CallerOr(const ServeContext& ctx, const httplib::Request& req,
                               httplib::Response& res, absl::Status (*may)(const Caller&)) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx.directory, req);
  absl::Status allowed = caller.ok() ? may(*caller) : caller.status();
  if (!allowed.ok()) {
    ReplyError(res, ErrorFor(allowed));
    return std::nullopt;
  }
  return *std::move(caller);
}

absl::Status AnyKey(const Caller&) { return absl::OkStatus(); }

nlohmann::json ModelObject(const std::string& id) {
  return {{"id", id}, {"object", "model"}, {"created", 0}, {"owned_by", "hearth"}};
}

// An id longer than this is not repeated in the 404: every served name is
// far shorter, and the error stays small whatever the path held.
constexpr size_t kMaxEchoedModelId = 256;

void RetrieveModel(const ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  if (!CallerOr(ctx, req, res, MayCall)) return;
  const std::string id = req.matches[1].str();
  const std::vector<std::string> names = ctx.directory->ModelNames();
  if (std::find(names.begin(), names.end(), id) == names.end()) {
    const std::string shown = id.size() <= kMaxEchoedModelId
                                  ? absl::StrCat("\"", id, "\"")
                                  : absl::StrCat("of ", id.size(), " bytes");
    return ReplyError(res, ErrorFor(absl::NotFoundError(absl::StrCat(
                               "the model ", shown, " does not exist; served: ",
                               absl::StrJoin(names, ", ")))));
  }
  res.set_content(Dump(ModelObject(id)), "application/json");
}

}  // namespace

void InstallInfoRoutes(httplib::Server& server, const ServeContext& ctx) {
  server.Get("/", [&ctx](const httplib::Request& req, httplib::Response& res) {
    if (!CallerOr(ctx, req, res, MayReadStatus)) return;
    res.set_header("Cache-Control", "no-store");
    res.set_content(std::string(DashboardHtml()), "text/html; charset=utf-8");
  });
  server.Get("/healthz", [&ctx](const httplib::Request&, httplib::Response& res) {
    const bool draining = ctx.engine->intake_closed();
    res.status = draining ? 503 : 200;
    res.set_content(draining ? R"({"status":"draining"})" : R"({"status":"ok"})",
                    "application/json");
  });
  // llama-server's shape: {"status": "ok"} while serving, and an error
  // object with 503 when not (here: draining after SIGTERM).
  server.Get("/health", [&ctx](const httplib::Request&, httplib::Response& res) {
    if (ctx.engine->intake_closed()) {
      return ReplyError(res, ErrorFor(absl::UnavailableError("the server is shutting down")));
    }
    res.set_header("Cache-Control", "no-store");
    res.set_content(R"({"status":"ok"})", "application/json");
  });
  server.Get("/metrics", [&ctx](const httplib::Request& req, httplib::Response& res) {
    std::optional<Caller> caller = CallerOr(ctx, req, res, AnyKey);
    if (!caller) return;
    std::shared_ptr<const EngineSnapshot> s = ctx.engine->snapshot();
    PrometheusOptions po;
    po.gauges = s->gauges;
    po.router_names = true;
    po.model_name = s->model;
    std::string body = PrometheusText(MetricsView(*caller, s->report), po) + ServerMetrics(ctx, *s);
    if (ctx.jobs != nullptr) body += JobsPrometheusText(ctx.jobs->Stats());
    res.set_header("Cache-Control", "no-store");
    res.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
  });
  server.Get("/v1/hearth/status", [&ctx](const httplib::Request& req, httplib::Response& res) {
    std::optional<Caller> caller = CallerOr(ctx, req, res, MayReadStatus);
    if (!caller) return;
    res.set_header("Cache-Control", "no-store");
    nlohmann::json status =
        StatusView(*caller, *ctx.engine->snapshot(), ctx.engine->live(), *ctx.ids);
    if (ctx.jobs != nullptr) status["jobs"] = JobsStatusJson(ctx.jobs->Stats());
    res.set_content(Dump(status), "application/json");
  });
  server.Get("/v1/models", [&ctx](const httplib::Request& req, httplib::Response& res) {
    if (!CallerOr(ctx, req, res, MayCall)) return;
    nlohmann::json data = nlohmann::json::array();
    for (const std::string& name : ctx.directory->ModelNames()) {
      data.push_back(ModelObject(name));
    }
    res.set_content(Dump({{"object", "list"}, {"data", data}}), "application/json");
  });
  server.Get("/props", [&ctx](const httplib::Request& req, httplib::Response& res) {
    if (!CallerOr(ctx, req, res, MayCall)) return;
    ServeProps props = ctx.props != nullptr ? *ctx.props : ServeProps{};
    props.n_ctx = ctx.engine->context_length();
    res.set_content(Dump(PropsJson(props)), "application/json");
  });
  server.Get(R"(/v1/models/(.+))", [&ctx](const httplib::Request& req, httplib::Response& res) {
    RetrieveModel(ctx, req, res);
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
      case 414:
        // httplib's own limit on the request line (8 KiB in its build).
        status = absl::InvalidArgumentError("the request URI is longer than this server accepts");
        break;
      default:
        status = absl::UnknownError(absl::StrCat("HTTP ", res.status));
        break;
    }
    HttpError e = ErrorFor(status);
    if (res.status == 413) e.body["error"]["code"] = "request_too_large";
    if (res.status == 414) e.body["error"]["code"] = "uri_too_long";
    if (res.status == 404) e.body["error"]["code"] = nullptr;
    res.set_content(Dump(IsOllamaPath(req.path) ? OllamaErrorBody(e) : e.body), "application/json");
    return httplib::Server::HandlerResponse::Handled;
  }));
  server.set_exception_handler([](const httplib::Request& req, httplib::Response& res,
                                  std::exception_ptr) {
    HttpError e = ErrorFor(absl::InternalError("the server failed on this request"));
    res.status = e.status;
    res.set_content(Dump(IsOllamaPath(req.path) ? OllamaErrorBody(e) : e.body), "application/json");
  });
}

}  // namespace hearth::serve
