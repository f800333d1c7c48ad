#include "hearth/metrics/metrics_collector.h"

#include <catch2/catch.hpp>

#include "hearth/metrics/fairness.h"
#include "hearth/metrics/prometheus.h"
#include "tests/metrics/scenario.h"

namespace hearth {
namespace {

using testing_metrics::Driver;
using testing_metrics::PlayScenario;

MetricsOptions ScenarioOptions(const ManualClock* clock) {
  MetricsOptions o;
  o.user_names = {"alice", "bob"};
  o.user_weights = {1.0, 2.0};
  o.class_names = {"voice", "chat"};
  SloTarget voice;
  voice.ttft = absl::Seconds(3);
  voice.tpot = absl::Milliseconds(400);
  SloTarget chat;
  chat.e2e = absl::Seconds(3);
  o.class_slos = {voice, chat};
  o.clock = clock;
  o.series_interval = absl::Seconds(1);
  return o;
}

TEST_CASE("collector reproduces the hand-checked scenario", "[metrics]") {
  ManualClock clock;
  auto c = MetricsCollector::Create(ScenarioOptions(&clock));
  REQUIRE(c.ok());
  Driver d(&clock, c->get());
  PlayScenario(d);
  (*c)->Flush();
  const MetricsReport r = (*c)->Report();

  const GroupReport& alice = r.users[0];
  CHECK(alice.name == "alice");
  CHECK(alice.finished == 1);
  CHECK(alice.queue_wait.p50 == Approx(2.0));
  CHECK(alice.ttft.max == Approx(2.5));
  CHECK(alice.itl.count == 2);
  CHECK(alice.itl.mean == Approx(0.35));
  CHECK(alice.e2e.max == Approx(3.2));
  CHECK(alice.norm_latency.max == Approx(3.2 / 3));
  CHECK(alice.prefill_tokens == 4);
  CHECK(alice.decode_tokens == 2);
  CHECK(alice.output_tokens == 3);
  CHECK(alice.weighted_service == Approx(8.0));  // 4*1 + 2*2
  CHECK(alice.normalized_service == Approx(8.0));

  const GroupReport& bob = r.users[1];
  CHECK(bob.queue_wait.max == Approx(1.5));
  CHECK(bob.ttft.max == Approx(2.0));
  CHECK(bob.itl.max == Approx(1.6));  // 3.2 -> 4.8 across the preemption
  CHECK(bob.e2e.max == Approx(3.8));
  CHECK(bob.preemptions == 1);
  CHECK(bob.prefill_tokens == 17);  // 8 + 9 recomputed
  CHECK(bob.decode_tokens == 2);
  CHECK(bob.weighted_service == Approx(21.0));
  CHECK(bob.normalized_service == Approx(10.5));  // weight 2

  // Classes: voice met its SLO (TTFT 2.5 <= 3, TPOT 0.35 <= 0.4); chat missed
  // its 3 s end-to-end target (3.8 s).
  CHECK(r.classes[0].slo_met == 1);
  CHECK(r.classes[0].slo_attainment == Approx(1.0));
  CHECK(r.classes[1].slo_eligible == 1);
  CHECK(r.classes[1].slo_attainment == Approx(0.0));

  // Total ITL samples {0.5, 0.2, 0.2, 1.6}: nearest-rank p50 is the 2nd.
  CHECK(r.total.itl.count == 4);
  CHECK(r.total.itl.p50 == Approx(0.2));
  CHECK(r.total.itl.p90 == Approx(1.6));
  CHECK(r.total.itl.mean == Approx(0.625));
  CHECK(r.window_seconds == Approx(4.8));
  CHECK(r.output_tokens_per_s == Approx(6 / 4.8));
  CHECK(r.goodput_requests_per_s == Approx(1 / 4.8));
  CHECK(r.goodput_tokens_per_s == Approx(3 / 4.8));
  CHECK(r.steps == 6);
  CHECK(r.busy_seconds == Approx(0.5 + 0.5 + 0.2 + 0 + 0.5 + 0.3));
  // (8 + 10.5)^2 / (2 * (8^2 + 10.5^2))
  CHECK(r.jain_index == Approx(342.25 / 348.5));
  CHECK(r.max_backlogged_service_gap == Approx(0.0));

  const auto& series = (*c)->series();
  REQUIRE(series.size() == 3);
  CHECK(series[0].time_s == Approx(2.5));
  CHECK(series[1].time_s == Approx(3.0));
  CHECK(series[1].output_tokens == 3);
  CHECK(series[1].running == 2);
  CHECK(series[1].waiting == 0);
  CHECK(series[2].time_s == Approx(4.5));
  CHECK(series[2].user_service[1] == Approx((8 + 2 * 1 + 9) / 2.0));
}

TEST_CASE("without a clock token times fall back to the step start",
          "[metrics]") {
  ManualClock clock;
  MetricsOptions o = ScenarioOptions(&clock);
  o.clock = nullptr;
  auto c = MetricsCollector::Create(o);
  REQUIRE(c.ok());
  Driver d(&clock, c->get());
  PlayScenario(d);
  (*c)->Flush();
  CHECK((*c)->Report().users[0].ttft.max == Approx(2.0));
}

TEST_CASE("completed_at gives exact token times without a clock",
          "[metrics]") {
  ManualClock clock;
  MetricsOptions o = ScenarioOptions(&clock);
  o.clock = nullptr;
  auto c = MetricsCollector::Create(o);
  REQUIRE(c.ok());
  Driver d(&clock, c->get());
  d.set_stamp_outcome(true);
  PlayScenario(d);
  (*c)->Flush();
  const MetricsReport r = (*c)->Report();
  CHECK(r.users[0].ttft.max == Approx(2.5));
  CHECK(r.users[1].e2e.max == Approx(3.8));
}

TEST_CASE("collector validates its options", "[metrics]") {
  MetricsOptions o;
  o.user_names = {"a", "a"};
  CHECK(absl::IsInvalidArgument(MetricsCollector::Create(o).status()));
  o.user_names = {"a", "b"};
  o.user_weights = {1.0};
  CHECK(absl::IsInvalidArgument(MetricsCollector::Create(o).status()));
  o.user_weights = {1.0, 0.0};
  CHECK(absl::IsInvalidArgument(MetricsCollector::Create(o).status()));
  o.user_weights = {};
  o.prefill_weight = 0;
  o.decode_weight = 0;
  CHECK(absl::IsInvalidArgument(MetricsCollector::Create(o).status()));
}

TEST_CASE("timeouts and unknown ids are counted, not trusted", "[metrics]") {
  ManualClock clock;
  auto c = MetricsCollector::Create(ScenarioOptions(&clock));
  REQUIRE(c.ok());
  Driver d(&clock, c->get());
  d.Event(RequestEventKind::kArrive, 0.0, 7, 1, 0, 10);
  d.Event(RequestEventKind::kEnd, 5.0, 7, 1, 0, 10, RequestPhase::kTimedOut);
  d.Event(RequestEventKind::kArrive, 0.0, 8, 9, 0, 10);  // unknown user
  d.Step(5.0, 5.1, {{99, 0, 3, true}});                    // unknown id
  (*c)->Flush();
  const MetricsReport r = (*c)->Report();
  CHECK(r.users[1].timed_out == 1);
  CHECK(r.total.arrived == 1);
  CHECK(r.classes[0].slo_eligible == 1);
  CHECK(r.classes[0].slo_met == 0);
  CHECK(r.total.output_tokens == 0);
}

TEST_CASE("retries are counted and keep the first token's TTFT",
          "[metrics]") {
  ManualClock clock;
  auto c = MetricsCollector::Create(ScenarioOptions(&clock));
  REQUIRE(c.ok());
  Driver d(&clock, c->get());
  using K = RequestEventKind;
  d.Event(K::kArrive, 0.0, 5, 0, 0, 4);
  d.Event(K::kAdmit, 0.0, 5, 0, 0, 4);
  d.Step(0.0, 1.0, {{5, 0, 4, true}});  // token at 1.0: TTFT 1.0
  d.Event(K::kRetry, 1.0, 5, 0, 0, 4);
  d.Event(K::kAdmit, 2.0, 5, 0, 0, 4);
  d.Event(K::kEnd, 3.0, 5, 0, 0, 4);
  d.Step(2.0, 3.0, {{5, 0, 4, true}});  // starts over: prefill again
  (*c)->Flush();
  const MetricsReport r = (*c)->Report();
  CHECK(r.total.retries == 1);
  CHECK(r.users[0].retries == 1);
  CHECK(r.total.ttft.count == 1);
  CHECK(r.total.ttft.max == Approx(1.0));
  CHECK(r.total.itl.max == Approx(2.0));
  CHECK(r.total.prefill_tokens == 8);
  CHECK(r.total.queue_wait.count == 1);
  CHECK(r.total.finished == 1);
  CHECK_THAT(PrometheusText(r),
             Catch::Contains("hearth_retries_total{class=\"voice\"} 1\n"));
}

TEST_CASE("collector fills histograms that agree with its summaries",
          "[metrics]") {
  ManualClock clock;
  auto c = MetricsCollector::Create(ScenarioOptions(&clock));
  REQUIRE(c.ok());
  Driver d(&clock, c->get());
  PlayScenario(d);
  (*c)->Flush();
  const MetricsReport r = (*c)->Report();
  for (const GroupReport* g : {&r.users[0], &r.users[1], &r.classes[0],
                               &r.classes[1], &r.total}) {
    INFO(g->name);
    CHECK(g->histograms.queue_wait.count() == g->queue_wait.count);
    CHECK(g->histograms.ttft.count() == g->ttft.count);
    CHECK(g->histograms.itl.count() == g->itl.count);
    CHECK(g->histograms.e2e.count() == g->e2e.count);
    CHECK(g->histograms.itl.sum() == Approx(g->itl.mean * g->itl.count));
    CHECK(g->histograms.e2e.sum() == Approx(g->e2e.mean * g->e2e.count));
  }
  // Classes partition the requests: their buckets add up to the total's.
  LatencyHistograms sum = r.classes[0].histograms;
  sum.Merge(r.classes[1].histograms);
  for (size_t i = 0; i <= LatencyHistogram::kNumBounds; ++i) {
    CHECK(sum.itl.BucketCount(i) == r.total.histograms.itl.BucketCount(i));
  }
  // Bob's ITL gaps, 0.2 s and 1.6 s (across the preemption).
  CHECK(r.users[1].histograms.itl.CumulativeCount(10) == 1);  // le=0.2
  CHECK(r.users[1].histograms.itl.CumulativeCount(16) == 1);  // le=1.5 misses 1.6
  CHECK(r.users[1].histograms.itl.CumulativeCount(17) == 2);  // le=2
}

TEST_CASE("collector counts prefix-cache hits once, at first admission",
          "[metrics]") {
  auto c = MetricsCollector::Create(MetricsOptions{});
  REQUIRE(c.ok());
  auto event = [&](RequestEventKind kind, uint64_t id, int32_t prompt, int32_t cached) {
    RequestEvent e;
    e.kind = kind;
    e.time = testing_metrics::At(0);
    e.id = RequestId(id);
    e.user = UserId(0);
    e.work_class = WorkClassId(0);
    e.prompt_tokens = prompt;
    e.cached_tokens = cached;
    (*c)->OnRequestEvent(e);
  };
  using K = RequestEventKind;
  event(K::kArrive, 1, 100, 0);
  event(K::kAdmit, 1, 100, 64);
  event(K::kPreempt, 1, 100, 64);
  event(K::kAdmit, 1, 100, 100);  // readmission: not a new lookup
  event(K::kArrive, 2, 50, 0);
  event(K::kAdmit, 2, 50, 0);
  const MetricsReport r = (*c)->Report();
  CHECK(r.total.prefix_queried_tokens == 150);
  CHECK(r.total.prefix_hit_tokens == 64);
  CHECK(r.classes[0].prefix_hit_tokens == 64);
}

TEST_CASE("JainIndex matches its definition", "[metrics]") {
  CHECK(JainIndex(std::vector<double>{1, 1, 1, 1}) == Approx(1.0));
  CHECK(JainIndex(std::vector<double>{1, 0, 0, 0}) == Approx(0.25));
  CHECK(JainIndex(std::vector<double>{1, 2, 3}) == Approx(36.0 / 42.0));
  CHECK(JainIndex(std::vector<double>{}) == 1.0);
}

TEST_CASE("ServiceGapTracker measures per backlog period", "[metrics]") {
  ServiceGapTracker gap(3);
  bool both[] = {true, true, false};
  gap.Update(std::vector<double>{10, 0, 0}, both);
  gap.Update(std::vector<double>{10, 30, 0}, both);
  CHECK(gap.max_gap() == Approx(30.0));  // D went 10 -> -20
  bool only_first[] = {true, false, false};
  gap.Update(std::vector<double>{10, 30, 0}, only_first);
  gap.Update(std::vector<double>{50, 30, 0}, both);  // new period, D = 20
  gap.Update(std::vector<double>{50, 35, 0}, both);  // D = 15
  CHECK(gap.max_gap() == Approx(30.0));
  bool all[] = {true, true, true};
  gap.Update(std::vector<double>{50, 35, 0}, all);
  gap.Update(std::vector<double>{50, 35, 90}, all);  // pair (0,2): 50 -> -40
  CHECK(gap.max_gap() == Approx(90.0));
}

TEST_CASE("Prometheus text carries the scenario's aggregates", "[metrics]") {
  ManualClock clock;
  MetricsOptions o = ScenarioOptions(&clock);
  o.user_names = {"al\"ice", "bob"};
  auto c = MetricsCollector::Create(o);
  REQUIRE(c.ok());
  Driver d(&clock, c->get());
  PlayScenario(d);
  (*c)->Flush();
  const std::string text = PrometheusText((*c)->Report());
  CHECK_THAT(text, Catch::Contains("# TYPE hearth_ttft_seconds histogram\n"));
  // Voice's one TTFT is 2.5 s: in the le=2.5 bucket, not in le=2.
  CHECK_THAT(text,
             Catch::Contains("hearth_ttft_seconds_bucket{class=\"voice\",le=\"2\"} 0\n"));
  CHECK_THAT(text,
             Catch::Contains("hearth_ttft_seconds_bucket{class=\"voice\",le=\"2.5\"} 1\n"));
  CHECK_THAT(text, Catch::Contains(
                       "hearth_user_requests_ended_total{user=\"bob\",outcome=\"finished\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("user=\"al\\\"ice\""));
  CHECK_THAT(text, Catch::Contains("hearth_itl_seconds_count{class=\"chat\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("hearth_preemptions_total{class=\"chat\"} 1\n"));
  CHECK_THAT(PrometheusText((*c)->Report(), {.prefix = "9bad"}),
             Catch::StartsWith("# HELP hearth_"));
}

}  // namespace
}  // namespace hearth
