// MetricsCollector's published report: when the engine thread publishes it,
// and that other threads may read it while the engine keeps stepping.

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hearth/metrics/metrics_collector.h"
#include "tests/metrics/scenario.h"

namespace hearth {
namespace {

using testing_metrics::At;
using testing_metrics::Driver;

// A step that ends at `end_ms` (token time) and serves nothing.
void IdleStep(MetricsCollector& c, int64_t start_ms, int64_t end_ms) {
  StepPlan plan;
  plan.now = absl::UnixEpoch() + absl::Milliseconds(start_ms);
  StepOutcome outcome;
  outcome.completed_at = absl::UnixEpoch() + absl::Milliseconds(end_ms);
  c.OnStep(plan, outcome);
}

MetricsOptions TwoUsers() {
  MetricsOptions o;
  o.user_names = {"alice", "bob"};
  o.class_names = {"voice", "chat"};
  return o;
}

TEST_CASE("published report before the first step is the empty run's",
          "[metrics]") {
  auto c = MetricsCollector::Create(TwoUsers());
  REQUIRE(c.ok());
  std::shared_ptr<const MetricsReport> r = (*c)->PublishedReport();
  REQUIRE(r != nullptr);
  REQUIRE(r->users.size() == 2);
  CHECK(r->users[1].name == "bob");
  CHECK(r->classes[0].name == "voice");
  CHECK(r->total.arrived == 0);
  CHECK(r->steps == 0);
}

TEST_CASE("periodic publication happens at most once per publish_interval",
          "[metrics]") {
  MetricsOptions o = TwoUsers();
  o.publish_interval = absl::Seconds(1);
  auto c = MetricsCollector::Create(o);
  REQUIRE(c.ok());
  MetricsCollector& collector = **c;

  // Steps of 300 ms; a publication is seen as a new pointer.
  std::shared_ptr<const MetricsReport> last = collector.PublishedReport();
  std::vector<int64_t> published_at_ms;
  for (int64_t k = 1; k <= 20; ++k) {
    IdleStep(collector, (k - 1) * 300, k * 300);
    if (k == 7) {
      // An explicit publication shows up at once and leaves the schedule be.
      collector.Publish();
      CHECK(collector.PublishedReport()->steps == 7);
      last = collector.PublishedReport();
    }
    std::shared_ptr<const MetricsReport> now = collector.PublishedReport();
    if (now == last) continue;
    published_at_ms.push_back(k * 300);
    CHECK(now->steps == static_cast<uint64_t>(k));  // as of that step
    last = now;
  }
  // The first step publishes, then the first step ending >= 1 s after the
  // last periodic publication: 0.3, 1.5, 2.7, 3.9, 5.1 s.
  CHECK(published_at_ms == std::vector<int64_t>{300, 1500, 2700, 3900, 5100});
}

TEST_CASE("publish_interval zero publishes only on Publish", "[metrics]") {
  ManualClock clock;
  MetricsOptions o = TwoUsers();
  o.clock = &clock;
  auto c = MetricsCollector::Create(o);
  REQUIRE(c.ok());
  Driver d(&clock, c->get());
  const std::shared_ptr<const MetricsReport> initial = (*c)->PublishedReport();
  using K = RequestEventKind;
  d.Event(K::kArrive, 0.0, 1, 0, 0, 4);
  d.Event(K::kAdmit, 0.0, 1, 0, 0, 4);
  d.Step(0.0, 0.5, {{1, 0, 4, true}});
  d.Event(K::kEnd, 1.0, 1, 0, 0, 4);
  d.Step(0.5, 1.0, {{1, 4, 1, true}});
  CHECK((*c)->PublishedReport() == initial);

  (*c)->Flush();
  (*c)->Publish();
  std::shared_ptr<const MetricsReport> r = (*c)->PublishedReport();
  const MetricsReport fresh = (*c)->Report();
  CHECK(r->total.finished == 1);
  CHECK(r->total.output_tokens == 2);
  CHECK(r->users[0].finished == fresh.users[0].finished);
  CHECK(r->steps == fresh.steps);
  // The earlier report a reader held is unchanged.
  CHECK(initial->total.finished == 0);
}

TEST_CASE("a reader thread sees monotone published reports while the engine "
          "steps",
          "[metrics][threads]") {
  ManualClock clock;
  MetricsOptions o = TwoUsers();
  o.clock = &clock;
  o.publish_interval = absl::Milliseconds(500);
  auto c = MetricsCollector::Create(o);
  REQUIRE(c.ok());
  MetricsCollector& collector = **c;
  constexpr int kRequests = 300;

  std::atomic<bool> reader_started{false};
  std::atomic<bool> engine_done{false};
  // Checked on the reader, reported after the join (Catch2 is not
  // thread-safe).
  int64_t reads = 0;
  std::string broken;
  std::thread reader([&] {
    std::shared_ptr<const MetricsReport> prev = collector.PublishedReport();
    reader_started = true;
    while (broken.empty()) {
      const bool last_round = engine_done.load();
      std::shared_ptr<const MetricsReport> r = collector.PublishedReport();
      ++reads;
      uint64_t users_finished = 0;
      for (const GroupReport& u : r->users) users_finished += u.finished;
      if (r->total.finished < prev->total.finished ||
          r->total.arrived < prev->total.arrived ||
          r->total.output_tokens < prev->total.output_tokens ||
          r->steps < prev->steps) {
        broken = "a count decreased between two reads";
      } else if (users_finished != r->total.finished ||
                 r->total.finished > r->total.arrived) {
        broken = "a report's groups disagree with its total";
      }
      prev = std::move(r);
      if (last_round) break;
    }
  });

  while (!reader_started) std::this_thread::yield();
  Driver d(&clock, &collector);
  using K = RequestEventKind;
  for (int i = 0; i < kRequests; ++i) {
    const uint64_t id = static_cast<uint64_t>(i) + 1;
    const uint32_t who = static_cast<uint32_t>(i % 2);
    const double t = 0.2 * i;
    d.Event(K::kArrive, t, id, who, who, 4);
    d.Event(K::kAdmit, t, id, who, who, 4);
    d.Step(t, t + 0.1, {{id, 0, 4, true}});
    d.Event(K::kEnd, t + 0.2, id, who, who, 4);
    d.Step(t + 0.1, t + 0.2, {{id, 4, 1, true}});
  }
  collector.Flush();
  collector.Publish();
  engine_done = true;
  reader.join();

  INFO("reads: " << reads);
  CHECK(broken.empty());
  CHECK(reads > 0);
  const std::shared_ptr<const MetricsReport> last = collector.PublishedReport();
  CHECK(last->total.finished == kRequests);
  CHECK(last->total.output_tokens == 2 * kRequests);
  CHECK(last->steps == 2 * kRequests);
}

TEST_CASE("collector validates publish_interval", "[metrics]") {
  MetricsOptions o;
  auto message = [&](absl::Duration interval) {
    o.publish_interval = interval;
    absl::Status s = MetricsCollector::Create(o).status();
    CHECK(absl::IsInvalidArgument(s));
    return std::string(s.message());
  };
  const std::string rule =
      "; must be finite and >= 0 (0 turns periodic publishing off)";
  CHECK(message(absl::Seconds(-1)) ==
        "MetricsOptions.publish_interval is -1s" + rule);
  CHECK(message(absl::InfiniteDuration()) ==
        "MetricsOptions.publish_interval is inf" + rule);
  CHECK(message(-absl::InfiniteDuration()) ==
        "MetricsOptions.publish_interval is -inf" + rule);
  // absl::Seconds() of a NaN (a bad config value) is infinite.
  CHECK(message(absl::Seconds(std::numeric_limits<double>::quiet_NaN())) ==
        "MetricsOptions.publish_interval is inf" + rule);

  o.publish_interval = absl::ZeroDuration();
  CHECK(MetricsCollector::Create(o).ok());
  o.publish_interval = absl::Milliseconds(250);
  CHECK(MetricsCollector::Create(o).ok());
}

}  // namespace
}  // namespace hearth
