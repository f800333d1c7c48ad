// Renders the Prometheus text of a realistic run for prometheus_scrape_check.py
// to parse: three members and four household classes on a small KV pool (so
// requests wait, are preempted by swap and hit shared prefixes), engine
// failures and retries, a cancel, and a request rejected for an arrival stamp
// too far ahead. The scrape is taken mid-run, as a server's would be, so the
// gauges are non-zero.
//
// Usage: hearth_prometheus_scrape OUT_DIR
// Writes OUT_DIR/plain.prom (defaults) and OUT_DIR/router.prom (router names,
// per-user histograms, two user series plus _other).

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "hearth/hearth.h"
#include "hearth/metrics/metrics.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

SchedulerOptions Options() {
  SchedulerOptions o;
  o.users = {{.name = "alice"}, {.name = "bob"}, {.name = "carol \"c\""}, {.name = "dave"}};
  o.work_classes = HouseholdWorkClasses();
  o.kv.num_device_blocks = 48;
  o.kv.num_host_blocks = 32;
  o.preemption_mode = PreemptionMode::kSwap;
  return o;
}

RequestSpec Spec(int i, absl::Time now) {
  RequestSpec spec;
  spec.user = UserId(static_cast<uint32_t>(i % 4));
  spec.work_class = WorkClassId(static_cast<uint32_t>(i % 4));
  // A shared 48-token system prompt, then the request's own text.
  const int32_t own = 8 + (i * 37) % 90;
  for (int32_t t = 0; t < 48 + own; ++t) {
    spec.prompt_token_ids.push_back(t < 48 ? t : 100 + i * 7 + t);
  }
  spec.prompt_tokens = static_cast<int32_t>(spec.prompt_token_ids.size());
  spec.max_new_tokens = 4 + (i * 13) % 60;
  if (i == 7) spec.arrival_time = now + absl::Seconds(600);  // rejected at intake
  // Household classes have TTFT targets only; some requests bring a TPOT
  // target of their own.
  if (i % 3 == 0) spec.tpot_slo = absl::Milliseconds(50);
  return spec;
}

absl::Status Write(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return out ? absl::OkStatus() : absl::InternalError(absl::StrCat("cannot write ", path));
}

absl::Status Run(const std::string& dir) {
  SchedulerOptions options = Options();
  ManualClock clock;
  MetricsOptions mo = MetricsOptionsFor(options);
  mo.clock = &clock;
  auto collector = MetricsCollector::Create(mo);
  if (!collector.ok()) return collector.status();
  options.metrics_sink = collector->get();
  auto h = testing::SchedulerHarness::Create(options, /*seed=*/7);
  if (!h.ok()) return h.status();
  (*h)->executor().set_failure_rate(0.01);
  RequestId to_cancel;
  for (int step = 0; step < 90; ++step) {
    if (step < 80) {
      auto id = (*h)->Submit(Spec(step, (*h)->now()));
      if (!id.ok()) return id.status();
      if (step == 10) to_cancel = *id;
    }
    if (step == 14) {
      if (absl::Status s = (*h)->scheduler().Cancel(to_cancel); !s.ok()) return s;
    }
    clock.Set((*h)->now() + absl::Milliseconds(10));  // the step's end
    if (absl::Status s = (*h)->Step(); !s.ok()) return s;
  }
  PrometheusOptions plain;
  plain.gauges = EngineGaugesFrom((*h)->scheduler());
  const MetricsReport report = (*collector)->Report();
  if (absl::Status s = Write(dir + "/plain.prom", PrometheusText(report, plain)); !s.ok()) {
    return s;
  }
  PrometheusOptions router = plain;
  router.router_names = true;
  router.model_name = "household-8b";
  router.max_user_series = 2;
  router.user_histograms = true;
  return Write(dir + "/router.prom", PrometheusText(report, router));
}

}  // namespace
}  // namespace hearth

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const absl::Status s = hearth::Run(argv[1]);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
