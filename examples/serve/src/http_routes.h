// File: examples/serve/src/http_routes.h
//
// hearth-serve's HTTP surface on a cpp-httplib server:
//   POST /v1/chat/completions, POST /v1/completions,
//        /v1/embeddings (501)                         (generation_routes.cc)
//   POST /v1/hearth/documents                         (document_routes.cc)
//   POST /tokenize, /detokenize                       (tokenize_routes.cc)
//   POST /api/chat, /api/generate, /api/show, /api/embed(dings) (501);
//   GET  /api/tags, /api/ps, /api/version: Ollama's  (ollama_routes.cc)
//   OPTIONS, CORS preflights (--cors_origins)        (cors_routes.cc)
//   GET  /v1/models, /v1/models/{id}, /props, /healthz, /health, /metrics,
//        /v1/hearth/status, /                         (info_routes.cc)
// and OpenAI-shaped JSON for every error httplib answers itself (unknown
// path 404, body over the limit 413, ...), Ollama-shaped under /api/. The routes run on a
// GuardedServer (guarded_server.h): by the time a handler runs, the
// request's key was checked (request_gate.h: every route but /healthz and
// /health needs one) and its header values are the raw bytes sent (raw_head.h).
//
// Thread-safety: handlers run on httplib's worker threads and share only
// the ServeContext, whose parts are thread-safe.

#ifndef HEARTH_SERVE_HTTP_ROUTES_H_
#define HEARTH_SERVE_HTTP_ROUTES_H_

#include "httplib.h"
#include "openai_response.h"
#include "serve_context.h"

namespace hearth::serve {

void InstallGenerationRoutes(httplib::Server& server, const ServeContext& ctx);
void InstallDocumentRoutes(httplib::Server& server, const ServeContext& ctx);
void InstallTokenizeRoutes(httplib::Server& server, const ServeContext& ctx);
void InstallInfoRoutes(httplib::Server& server, const ServeContext& ctx);
void InstallOllamaRoutes(httplib::Server& server, const ServeContext& ctx);
void InstallErrorHandler(httplib::Server& server);

// Writes `error` as the response (status, Retry-After, JSON body).
void ReplyError(httplib::Response& res, const HttpError& error);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_HTTP_ROUTES_H_
