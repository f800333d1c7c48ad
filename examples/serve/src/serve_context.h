// File: examples/serve/src/serve_context.h
//
// What the HTTP handlers share: the engine, the job queues (templating,
// tokenisation and document parsing run there, not on the HTTP thread), the
// model's text functions, the household directory, the public request ids,
// the connection register, the server's limits and what GET /props shows. Owned by main(), which
// outlives the HTTP server.

#ifndef HEARTH_SERVE_SERVE_CONTEXT_H_
#define HEARTH_SERVE_SERVE_CONTEXT_H_

#include <cstdint>

#include "absl/time/time.h"
#include "connection_guard.h"
#include "hearth/jobs/job_pool.h"
#include "household_config.h"
#include "household_directory.h"
#include "member_turns.h"
#include "model_facts.h"
#include "model_text.h"
#include "props_json.h"
#include "public_request_ids.h"
#include "serve_engine.h"

namespace hearth::serve {

struct ServeLimits {
  // max_tokens when a request names none (clipped to the context left).
  int32_t default_max_tokens = 256;
  // Streams write an SSE comment this often while no token comes; a
  // non-streamed answer, sent whole with its true status once it is known,
  // checks this often meanwhile whether its client left (and cancels).
  absl::Duration keepalive_every = absl::Milliseconds(250);
  // Longest wait for a job queue before the call ends 504: templating and
  // tokenisation (interactive queue), parsing and chunking a document
  // (documents queue, which gives its cores back at the household's peak).
  absl::Duration interactive_job_timeout = absl::Seconds(30);
  absl::Duration document_job_timeout = absl::Minutes(5);
};

struct ServeContext {
  ServeEngine* engine = nullptr;
  JobPool* jobs = nullptr;
  const ModelText* text = nullptr;
  const HouseholdDirectory* directory = nullptr;
  const HouseholdConfig* household = nullptr;
  PublicRequestIds* ids = nullptr;
  // May be null (no disconnect checks, no connection metrics).
  const ConnectionGuard* connections = nullptr;
  ServeLimits limits;
  // Each member's turns for preparing generations and documents (parsing,
  // templating, tokenising, chunking); null: unbounded.
  MemberTurns* generation_turns = nullptr;
  MemberTurns* document_turns = nullptr;
  // May be null (GET /props then shows only what the engine knows).
  const ServeProps* props = nullptr;
  // May be null (Ollama's model routes then show no file facts).
  const ModelFacts* model_facts = nullptr;
};

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_SERVE_CONTEXT_H_
