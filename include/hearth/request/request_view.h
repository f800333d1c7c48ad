// File: hearth/request/request_view.h
//
// `RequestView` is a read-only snapshot of a live request's progress, as the
// scheduler hands it to policies and hosts. It is a value: copying it is cheap
// and it never dangles, but it does not update after the call that produced it.

#ifndef HEARTH_REQUEST_REQUEST_VIEW_H_
#define HEARTH_REQUEST_REQUEST_VIEW_H_

#include <cstdint>

#include "absl/time/time.h"
#include "hearth/common/ids.h"
#include "hearth/request/request_spec.h"
#include "hearth/request/request_state.h"

namespace hearth {

struct RequestView {
  RequestId id;
  UserId user;
  WorkClassId work_class;
  // RequestSpec::model: the model or adapter the request needs, so a
  // policy can group requests by adapter.
  ModelId model;
  RequestId parent;
  // The agent workflow this request is a call of (see RequestSpec::parent):
  // the id of the workflow's first call (the request itself when it starts
  // one), when that first call arrived, and how many calls precede this one
  // on its parent chain. Arrival-ordered policy leaves rank a call up to
  // PolicyTreeConfig::workflow_head_start before its own arrival, never
  // before its workflow's, so a workflow's next call does not queue behind
  // work that came while its parent ran.
  RequestId workflow;
  uint64_t workflow_arrival_seq = 0;
  absl::Time workflow_arrival_time = absl::InfinitePast();
  int32_t workflow_depth = 0;
  // RequestSpec::priority as submitted. Policies that rank by priority add
  // the work class's priority (WorkClassConfig::priority) themselves, in 64
  // bits, so that the sum of two large values cannot overflow.
  int32_t priority = 0;
  RequestPhase phase = RequestPhase::kQueued;

  int32_t prompt_tokens = 0;
  int32_t max_new_tokens = 0;
  // RequestSpec::predicted_output as submitted (expected_tokens 0: none).
  OutputLengthPrediction predicted_output;
  // Tokens generated so far (kept across recompute preemptions).
  int32_t output_tokens = 0;
  // Positions whose KV is in the cache: the prefix already computed.
  int32_t computed_tokens = 0;
  // Device blocks currently held (0 when waiting or swapped).
  int32_t device_blocks = 0;
  int32_t preemptions = 0;

  // Monotonic per-scheduler arrival order; ties in time break by it.
  uint64_t arrival_seq = 0;
  absl::Time arrival_time = absl::InfinitePast();
  absl::Time deadline = absl::InfiniteFuture();

  // The request's effective SLO targets: RequestSpec::ttft_slo / tpot_slo
  // when the request set them, else its class's (WorkClassConfig).
  // InfiniteDuration: no target (also in the bare view GetRequest gives of
  // a request no Plan has taken in yet).
  absl::Duration ttft_slo = absl::InfiniteDuration();
  absl::Duration tpot_slo = absl::InfiniteDuration();
  // arrival_time + ttft_slo: the first token is on time if it exists by
  // then. InfiniteFuture without a TTFT target.
  absl::Time ttft_deadline = absl::InfiniteFuture();
  // When the request produced its first token (a retry keeps it);
  // InfiniteFuture until then.
  absl::Time first_token_time = absl::InfiniteFuture();

  // RequestView::TtftSlack()
  //
  // How long the request may still wait for its first token at `now` and
  // meet its TTFT target: ttft_deadline - now while it has no first token.
  // Positive: time to spare; zero: due now (a token at `now` is still on
  // time); negative: late by that much, the target already missed. For a
  // request with a first token (running or not) the TTFT is decided and for
  // one without a target there is nothing to meet: both return
  // InfiniteDuration. Policies read it to serve just in time.
  absl::Duration TtftSlack(absl::Time now) const {
    if (first_token_time != absl::InfiniteFuture()) return absl::InfiniteDuration();
    return ttft_deadline - now;
  }

  // Total sequence length so far: prompt plus generated tokens.
  int32_t length() const { return prompt_tokens + output_tokens; }
  // True in the decode phase: everything but the last sampled token has its KV,
  // so the next step feeds exactly that token and samples the next one.
  bool decoding() const {
    return output_tokens > 0 && computed_tokens == length() - 1;
  }
};

}  // namespace hearth

#endif  // HEARTH_REQUEST_REQUEST_VIEW_H_
