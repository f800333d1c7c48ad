// File: src/metrics/slo_attainment.h
//
// The one definition of a request's TTFT and TPOT and of whether it met a
// target, shared by MetricsCollector's per-target counts (GroupReport::
// ttft_slo, tpot_slo) and its class SLO judgement (slo_met, which the
// simulator reports). Not part of the public API.

#ifndef HEARTH_METRICS_SLO_ATTAINMENT_H_
#define HEARTH_METRICS_SLO_ATTAINMENT_H_

#include <cstdint>

#include "absl/time/time.h"
#include "hearth/request/request_state.h"

namespace hearth::metrics_internal {

// What the collector saw of one request by its end.
struct EndedRequest {
  RequestPhase phase = RequestPhase::kFinished;
  absl::Time arrival;
  // InfiniteFuture: no token was produced.
  absl::Time first_token = absl::InfiniteFuture();
  absl::Time last_token = absl::InfiniteFuture();
  absl::Time end = absl::InfiniteFuture();
  // Tokens produced over the request's life, retried attempts included.
  int64_t produced = 0;

  bool has_first_token() const { return first_token != absl::InfiniteFuture(); }
  // First token - arrival; without a token, end - arrival (the longest it
  // can have been, and the wait a request that finished empty saw).
  absl::Duration Ttft() const;
  // (last token - first token) / (produced - 1): the mean of the request's
  // inter-token gaps, as vLLM's and Sarathi-Serve's benchmarks define TPOT;
  // zero with fewer than two tokens (no gap to be slow).
  absl::Duration Tpot() const;
};

enum class Verdict : uint8_t { kNotJudged, kMet, kMissed };

// Judgements against one target (InfiniteDuration: none, never judged). A
// finished request is judged by its figures. One that ended otherwise:
//   cancelled (the client's choice): judged by what happened before the
//     cancel -- TTFT by its first token, or missed if the cancel came after
//     the TTFT deadline; TPOT by its gaps so far when it had two tokens;
//     otherwise not judged.
//   timed out, rejected, failed (the house did not deliver): TTFT by its
//     first token if it had one, else missed; TPOT missed.
Verdict JudgeTtft(const EndedRequest& r, absl::Duration target);
Verdict JudgeTpot(const EndedRequest& r, absl::Duration target);

}  // namespace hearth::metrics_internal

#endif  // HEARTH_METRICS_SLO_ATTAINMENT_H_
