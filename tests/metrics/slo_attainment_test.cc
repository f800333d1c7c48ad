// The one definition of TTFT/TPOT attainment (src/metrics/slo_attainment.h):
// which requests are judged, and how, for every way a request can end.

#include "metrics/slo_attainment.h"

#include <catch2/catch.hpp>

namespace hearth {
namespace {

using metrics_internal::EndedRequest;
using metrics_internal::JudgeTpot;
using metrics_internal::JudgeTtft;
using metrics_internal::Verdict;

absl::Time Ms(int64_t ms) { return absl::UnixEpoch() + absl::Milliseconds(ms); }

// Arrives at 0; `tokens` tokens 10 ms apart from `first_ms` (none: no token);
// ends at `end_ms`.
EndedRequest Request(RequestPhase phase, int64_t tokens, int64_t first_ms, int64_t end_ms) {
  EndedRequest r;
  r.phase = phase;
  r.arrival = Ms(0);
  if (tokens > 0) {
    r.first_token = Ms(first_ms);
    r.last_token = Ms(first_ms + 10 * (tokens - 1));
  }
  r.produced = tokens;
  r.end = Ms(end_ms);
  return r;
}

constexpr RequestPhase kAllEnds[] = {RequestPhase::kFinished, RequestPhase::kCancelled,
                                     RequestPhase::kTimedOut, RequestPhase::kRejected,
                                     RequestPhase::kFailed};

TEST_CASE("without a target nothing is judged", "[metrics][slo]") {
  for (RequestPhase phase : kAllEnds) {
    for (int64_t tokens : {0, 1, 5}) {
      const EndedRequest r = Request(phase, tokens, 30, 200);
      CHECK(JudgeTtft(r, absl::InfiniteDuration()) == Verdict::kNotJudged);
      CHECK(JudgeTpot(r, absl::InfiniteDuration()) == Verdict::kNotJudged);
    }
  }
}

TEST_CASE("TTFT is first token - arrival, met up to and at the target", "[metrics][slo]") {
  for (int64_t first : {0, 29, 30, 31, 500}) {
    CAPTURE(first);
    const EndedRequest r = Request(RequestPhase::kFinished, 3, first, first + 20);
    CHECK(r.Ttft() == absl::Milliseconds(first));
    const Verdict want = first <= 30 ? Verdict::kMet : Verdict::kMissed;
    CHECK(JudgeTtft(r, absl::Milliseconds(30)) == want);
    // However the request ended, a first token decides its TTFT.
    for (RequestPhase phase : kAllEnds) {
      CHECK(JudgeTtft(Request(phase, 3, first, 900), absl::Milliseconds(30)) == want);
    }
  }
}

TEST_CASE("TPOT is the mean gap after the first token", "[metrics][slo]") {
  // 5 tokens, 10 ms apart: 40 ms over 4 gaps.
  const EndedRequest r = Request(RequestPhase::kFinished, 5, 100, 140);
  CHECK(r.Tpot() == absl::Milliseconds(10));
  CHECK(JudgeTpot(r, absl::Milliseconds(10)) == Verdict::kMet);
  CHECK(JudgeTpot(r, absl::Milliseconds(9)) == Verdict::kMissed);
  // A finished request with one token has no gap to be slow in.
  CHECK(JudgeTpot(Request(RequestPhase::kFinished, 1, 100, 100), absl::Microseconds(1)) ==
        Verdict::kMet);
}

TEST_CASE("a cancel is judged by what came before it", "[metrics][slo]") {
  const absl::Duration target = absl::Milliseconds(50);
  // No token yet: not judged while the deadline had not passed, missed after.
  CHECK(JudgeTtft(Request(RequestPhase::kCancelled, 0, 0, 50), target) == Verdict::kNotJudged);
  CHECK(JudgeTtft(Request(RequestPhase::kCancelled, 0, 0, 51), target) == Verdict::kMissed);
  // TPOT needs two tokens to have a gap.
  CHECK(JudgeTpot(Request(RequestPhase::kCancelled, 1, 10, 500), absl::Milliseconds(1)) ==
        Verdict::kNotJudged);
  CHECK(JudgeTpot(Request(RequestPhase::kCancelled, 3, 10, 500), absl::Milliseconds(10)) ==
        Verdict::kMet);
  CHECK(JudgeTpot(Request(RequestPhase::kCancelled, 3, 10, 500), absl::Milliseconds(9)) ==
        Verdict::kMissed);
}

TEST_CASE("timed out, rejected and failed requests miss what they did not deliver",
          "[metrics][slo]") {
  for (RequestPhase phase :
       {RequestPhase::kTimedOut, RequestPhase::kRejected, RequestPhase::kFailed}) {
    CAPTURE(static_cast<int>(phase));
    // Ended before its deadline, but without a token: missed all the same.
    CHECK(JudgeTtft(Request(phase, 0, 0, 1), absl::Seconds(10)) == Verdict::kMissed);
    // Its pace was fine, but the answer never came whole.
    CHECK(JudgeTpot(Request(phase, 4, 5, 100), absl::Seconds(10)) == Verdict::kMissed);
  }
}

}  // namespace
}  // namespace hearth
