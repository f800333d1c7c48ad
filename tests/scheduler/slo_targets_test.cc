// SLO targets in the core: a request's own TTFT/TPOT targets override its
// class's, are validated at Submit, show in RequestView with the TTFT
// deadline and slack, and are what MetricsCollector counts attainment by.

#include <map>
#include <memory>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "hearth/metrics/metrics_collector.h"
#include "hearth/policy/policy_registry.h"
#include "tests/testing/request_builder.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using testing::SchedulerHarness;
using testing::Spec;

constexpr uint32_t kVoice = 0, kChat = 1, kDocuments = 2;
constexpr absl::Duration kVoiceTtft = absl::Milliseconds(25);
constexpr absl::Duration kVoiceTpot = absl::Milliseconds(15);
constexpr absl::Duration kChatTtft = absl::Seconds(1);

SchedulerOptions Options(int32_t max_running) {
  SchedulerOptions o;
  o.users = {{.name = "alice"}, {.name = "bob"}};
  o.work_classes = {{.name = "voice", .ttft_slo = kVoiceTtft, .tpot_slo = kVoiceTpot},
                    {.name = "chat", .ttft_slo = kChatTtft},
                    {.name = "documents"}};
  o.max_running = max_running;
  o.policy_factory = *MakePolicyFactory("fifo", PolicyConfig{});
  return o;
}

std::unique_ptr<SchedulerHarness> Harness(SchedulerOptions o) {
  auto h = SchedulerHarness::Create(std::move(o));
  REQUIRE(h.ok());
  return std::move(*h);
}

TEST_CASE("Submit refuses SLO overrides that are neither in 0 < t <= kMaxSloTarget nor infinite",
          "[scheduler][slo]") {
  auto h = Harness(Options(4));
  const absl::Duration bad[] = {absl::ZeroDuration(), -absl::Nanoseconds(1), -absl::Seconds(5),
                                kMaxSloTarget + absl::Nanoseconds(1), absl::Hours(1e7),
                                -absl::InfiniteDuration()};
  for (const absl::Duration d : bad) {
    CAPTURE(absl::FormatDuration(d));
    RequestSpec ttft = Spec({.work_class = kVoice, .max_new = 3});
    ttft.ttft_slo = d;
    absl::StatusOr<RequestId> a = h->scheduler().Submit(ttft);
    REQUIRE(a.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(a.status().message()),
               Catch::Contains("RequestSpec.ttft_slo is") && Catch::Contains("must be positive"));
    RequestSpec tpot = Spec({.work_class = kVoice, .max_new = 3});
    tpot.tpot_slo = d;
    absl::StatusOr<RequestId> b = h->scheduler().Submit(tpot);
    REQUIRE(b.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(b.status().message()), Catch::Contains("RequestSpec.tpot_slo is"));
  }
  for (const absl::Duration d : {absl::Nanoseconds(1), kMaxSloTarget, absl::InfiniteDuration()}) {
    RequestSpec ok = Spec({.work_class = kVoice, .max_new = 3});
    ok.ttft_slo = d;
    ok.tpot_slo = d;
    CHECK(h->scheduler().Submit(ok).ok());
  }
}

TEST_CASE("Class SLO targets neither in 0 < t <= kMaxSloTarget nor infinite are refused",
          "[scheduler][slo]") {
  for (const absl::Duration d : {absl::ZeroDuration(), -absl::Seconds(1),
                                 kMaxSloTarget + absl::Seconds(1), -absl::InfiniteDuration()}) {
    SchedulerOptions o = Options(4);
    o.work_classes[1].tpot_slo = d;
    absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(o);
    REQUIRE(s.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(s.status().message()),
               Catch::Contains("work_classes[1].tpot_slo is") && Catch::Contains("365 days"));
  }
}

TEST_CASE("RequestView carries the effective targets, the TTFT deadline and slack",
          "[scheduler][slo]") {
  // One runs at a time, so everything behind the first waits for its token.
  auto h = Harness(Options(1));
  const absl::Time t0 = h->now();
  const RequestId first = *h->Submit(Spec({.user = 0, .work_class = kDocuments, .max_new = 50}));
  const RequestId voice = *h->Submit(Spec({.work_class = kVoice, .max_new = 3}));
  RequestSpec own = Spec({.work_class = kChat, .max_new = 3});
  own.ttft_slo = absl::Milliseconds(5);
  const RequestId chat_own = *h->Submit(own);
  RequestSpec none = Spec({.work_class = kVoice, .max_new = 3});
  none.ttft_slo = absl::InfiniteDuration();
  const RequestId voice_none = *h->Submit(none);
  REQUIRE(h->Step().ok());  // Takes all in at t0; `first` runs.

  const RequestView v = *h->scheduler().GetRequest(voice);
  CHECK(v.ttft_slo == kVoiceTtft);
  CHECK(v.tpot_slo == kVoiceTpot);
  CHECK(v.ttft_deadline == t0 + kVoiceTtft);
  CHECK(v.first_token_time == absl::InfiniteFuture());
  // Slack counts down with the clock and turns negative once late.
  for (int ms : {0, 10, 25, 40}) {
    CAPTURE(ms);
    CHECK(v.TtftSlack(t0 + absl::Milliseconds(ms)) == kVoiceTtft - absl::Milliseconds(ms));
  }
  CHECK(v.TtftSlack(t0 + absl::Milliseconds(40)) < absl::ZeroDuration());

  const RequestView c = *h->scheduler().GetRequest(chat_own);
  CHECK(c.ttft_slo == absl::Milliseconds(5));  // Its own beats chat's 1 s.
  CHECK(c.tpot_slo == absl::InfiniteDuration());  // Chat has no TPOT target.
  CHECK(c.ttft_deadline == t0 + absl::Milliseconds(5));

  const RequestView n = *h->scheduler().GetRequest(voice_none);
  CHECK(n.ttft_slo == absl::InfiniteDuration());  // Opted out of voice's.
  CHECK(n.tpot_slo == kVoiceTpot);
  CHECK(n.ttft_deadline == absl::InfiniteFuture());
  CHECK(n.TtftSlack(t0) == absl::InfiniteDuration());

  // The running request has its first token: its TTFT is decided.
  const RequestView f = *h->scheduler().GetRequest(first);
  CHECK(f.first_token_time == t0);
  CHECK(f.TtftSlack(t0 + absl::Seconds(100)) == absl::InfiniteDuration());
}

// The documented rule (metrics_report.h, GroupReport::ttft_slo), restated
// from a request's terminal result: +1 met, -1 missed, 0 not judged.
int TtftVerdict(const RequestResult& r, absl::Duration target) {
  if (target == absl::InfiniteDuration()) return 0;
  if (r.first_token_time != absl::InfiniteFuture()) {
    return r.first_token_time - r.arrival_time <= target ? 1 : -1;
  }
  const absl::Duration waited = r.end_time - r.arrival_time;
  if (r.phase == RequestPhase::kFinished) return waited <= target ? 1 : -1;
  if (r.phase == RequestPhase::kCancelled) return waited > target ? -1 : 0;
  return -1;
}

int TpotVerdict(const RequestResult& r, absl::Duration target) {
  if (target == absl::InfiniteDuration()) return 0;
  if (r.phase != RequestPhase::kFinished) return -1;  // No cancels here.
  // A finished request's end is its last token's step.
  const absl::Duration tpot = r.output_tokens < 2 ? absl::ZeroDuration()
                                                  : (r.end_time - r.first_token_time) /
                                                        (r.output_tokens - 1);
  return tpot <= target ? 1 : -1;
}

void Tally(int verdict, SloCount& c) {
  if (verdict > 0) ++c.met;
  if (verdict < 0) ++c.missed;
}

TEST_CASE("MetricsCollector counts each request against its own targets, per class and user",
          "[scheduler][slo][metrics]") {
  SchedulerOptions o = Options(2);
  auto collector = MetricsCollector::Create(MetricsOptionsFor(o));
  REQUIRE(collector.ok());
  o.metrics_sink = collector->get();
  auto h = Harness(o);

  // Two run at a time and each takes 3-6 steps of 10 ms: the first voice
  // requests make their 25 ms, later ones queue past it. Decodes take one
  // step each, so voice's 15 ms TPOT holds for everyone who runs.
  std::map<RequestId, std::pair<absl::Duration, absl::Duration>> targets;
  auto submit = [&](RequestSpec s, absl::Duration ttft, absl::Duration tpot) {
    absl::StatusOr<RequestId> id = h->Submit(s);
    REQUIRE(id.ok());
    targets[*id] = {ttft, tpot};
    return *id;
  };
  for (int i = 0; i < 6; ++i) {
    submit(Spec({.user = static_cast<uint32_t>(i % 2), .work_class = kVoice, .max_new = 3}),
           kVoiceTtft, kVoiceTpot);
    if (i % 3 == 0) {
      submit(Spec({.user = 1, .work_class = kChat, .max_new = 6}), kChatTtft,
             absl::InfiniteDuration());
    }
  }
  RequestSpec tight = Spec({.user = 0, .work_class = kChat, .max_new = 3});
  tight.ttft_slo = absl::Milliseconds(1);
  tight.tpot_slo = absl::Microseconds(1);
  submit(tight, absl::Milliseconds(1), absl::Microseconds(1));
  RequestSpec loose = Spec({.user = 1, .work_class = kDocuments, .max_new = 3});
  loose.ttft_slo = absl::Hours(1);
  submit(loose, absl::Hours(1), absl::InfiniteDuration());
  RequestSpec untargeted = Spec({.user = 0, .work_class = kVoice, .max_new = 3});
  untargeted.ttft_slo = absl::InfiniteDuration();
  untargeted.tpot_slo = absl::InfiniteDuration();
  submit(untargeted, absl::InfiniteDuration(), absl::InfiniteDuration());
  submit(Spec({.user = 0, .work_class = kDocuments, .max_new = 3}), absl::InfiniteDuration(),
         absl::InfiniteDuration());
  // Times out in the queue: misses both of voice's targets.
  RequestSpec impatient = Spec({.user = 1, .work_class = kVoice, .max_new = 3});
  impatient.deadline = h->now() + absl::Milliseconds(35);
  submit(impatient, kVoiceTtft, kVoiceTpot);
  REQUIRE(h->RunUntilIdle().ok());
  (*collector)->Flush();
  const MetricsReport report = (*collector)->Report();

  SloCount ttft_class[3], tpot_class[3], ttft_user[2], tpot_user[2];
  REQUIRE(h->results().size() == targets.size());
  for (const auto& [id, result] : h->results()) {
    const auto [ttft, tpot] = targets.at(id);
    const int t = TtftVerdict(result, ttft), p = TpotVerdict(result, tpot);
    Tally(t, ttft_class[result.work_class.value()]);
    Tally(p, tpot_class[result.work_class.value()]);
    Tally(t, ttft_user[result.user.value()]);
    Tally(p, tpot_user[result.user.value()]);
  }
  for (uint32_t c = 0; c < 3; ++c) {
    CAPTURE(c);
    CHECK(report.classes[c].ttft_slo.met == ttft_class[c].met);
    CHECK(report.classes[c].ttft_slo.missed == ttft_class[c].missed);
    CHECK(report.classes[c].tpot_slo.met == tpot_class[c].met);
    CHECK(report.classes[c].tpot_slo.missed == tpot_class[c].missed);
  }
  for (uint32_t u = 0; u < 2; ++u) {
    CAPTURE(u);
    CHECK(report.users[u].ttft_slo.met == ttft_user[u].met);
    CHECK(report.users[u].ttft_slo.missed == ttft_user[u].missed);
    CHECK(report.users[u].tpot_slo.met == tpot_user[u].met);
    CHECK(report.users[u].tpot_slo.missed == tpot_user[u].missed);
  }
  // The scenario exercises every outcome it was built for.
  const GroupReport& voice = report.classes[kVoice];
  CHECK(voice.ttft_slo.met > 0);
  CHECK(voice.ttft_slo.missed > 1);  // Queued past 25 ms, and the timeout.
  CHECK(voice.tpot_slo.missed == 1);  // Only the timed-out one.
  CHECK(voice.timed_out == 1);
  // Of voice's 8 requests one opted out of both targets.
  CHECK(voice.ttft_slo.judged() == 7);
  CHECK(report.classes[kChat].ttft_slo.missed >= 1);  // The 1 ms override.
  CHECK(report.classes[kChat].tpot_slo.judged() == 1);  // Only it has a TPOT target.
  CHECK(report.classes[kChat].tpot_slo.missed == 1);
  CHECK(report.classes[kDocuments].ttft_slo.judged() == 1);  // Its own 1 h target.
  CHECK(report.classes[kDocuments].ttft_slo.met == 1);
  CHECK(report.total.ttft_slo.judged() ==
        report.users[0].ttft_slo.judged() + report.users[1].ttft_slo.judged());
}

}  // namespace
}  // namespace hearth
