#include "cors_routes.h"

#include "raw_head.h"

namespace hearth::serve {

void InstallCors(GuardedServer& server, const CorsPolicy& cors) {
  if (!cors.enabled()) return;
  server.set_response_headers([&cors](const httplib::Request& req, httplib::Response& res) {
    for (const auto& [name, value] : cors.ResponseHeaders(RawHeaderValues(req.headers, "Origin"))) {
      res.set_header(name, value);
    }
  });
  server.Options(R"(/.*)", [&cors](const httplib::Request& req, httplib::Response& res) {
    res.status = 204;
    for (const auto& [name, value] :
         cors.PreflightHeaders(RawHeaderValues(req.headers, "Origin"))) {
      res.set_header(name, value);
    }
  });
}

}  // namespace hearth::serve
