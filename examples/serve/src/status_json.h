// File: examples/serve/src/status_json.h
//
// The JSON of GET /v1/hearth/status (what the dashboard draws): per class
// its queue (waiting, oldest wait), running sequences and its SLO
// attainment and TTFT against target; per member its weight, what it holds
// now (running, waiting, KV blocks) and its share of the service so far;
// the running sequences; KV use. Durations in seconds; a target that is not
// set is null.
//
// Thread-safety: a plain function of an immutable snapshot.

#ifndef HEARTH_SERVE_STATUS_JSON_H_
#define HEARTH_SERVE_STATUS_JSON_H_

#include "engine_snapshot.h"
#include "nlohmann/json.hpp"

namespace hearth::serve {

nlohmann::json StatusJson(const EngineSnapshot& snapshot, int32_t live_requests);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_STATUS_JSON_H_
