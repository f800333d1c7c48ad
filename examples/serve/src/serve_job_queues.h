// File: examples/serve/src/serve_job_queues.h
//
// The server's CPU and storage job queues: the household's four
// (hearth::HouseholdJobQueues) under the names the server submits to.
//   interactive  chat templating and tokenisation, someone is waiting
//   documents    parsing and chunking posted documents; gives cores back
//                while voice and chat wait for the GPU
//   library      unused by the server itself (scans, backups a household
//                tool may add); paused at the household's peak
//   model_load   reading model files, one at a time (I/O depth one)
//
// Thread-safety: plain values.

#ifndef HEARTH_SERVE_SERVE_JOB_QUEUES_H_
#define HEARTH_SERVE_SERVE_JOB_QUEUES_H_

#include "hearth/jobs/job_options.h"

namespace hearth::serve {

inline constexpr char kInteractiveQueue[] = "interactive";
inline constexpr char kDocumentsQueue[] = "documents";
inline constexpr char kModelLoadQueue[] = "model_load";

// HouseholdJobQueues(cores), with the give-back rule fed by the engine
// (ServeEngineOptions::on_interactive_demand): full pressure at
// `backlog_for_full_pressure` interactive requests waiting for their first
// token, or when the oldest of them has used its class's TTFT target.
JobPoolOptions ServeJobQueues(int cores, int backlog_for_full_pressure);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_SERVE_JOB_QUEUES_H_
