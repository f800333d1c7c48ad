#include "hearth/metrics/timeline_recorder.h"

#include <algorithm>

#include <catch2/catch.hpp>

#include "tests/metrics/scenario.h"

namespace hearth {
namespace {

using testing_metrics::Driver;
using testing_metrics::PlayScenario;

std::unique_ptr<TimelineRecorder> Make(const ManualClock* clock,
                                       size_t max_events = 1000) {
  TimelineOptions o;
  o.user_names = {"alice", "bob"};
  o.class_names = {"voice", "chat"};
  o.clock = clock;
  o.origin = testing_metrics::At(0);
  o.max_events = max_events;
  auto t = TimelineRecorder::Create(o);
  REQUIRE(t.ok());
  return std::move(*t);
}

TEST_CASE("timeline shows waits, chunks, decode runs and preemptions",
          "[metrics]") {
  ManualClock clock;
  auto t = Make(&clock);
  Driver d(&clock, t.get());
  PlayScenario(d);
  const std::string json = t->Json();
  CHECK_THAT(json, Catch::StartsWith("{\"displayTimeUnit\""));
  // r1 (alice = pid 1, lane 0): queued 0 -> 2 s, prefill 2.0 -> 2.5, one
  // decode run of 2 tokens 2.5 -> 3.2.
  CHECK_THAT(json, Catch::Contains(
      "\"pid\":1,\"tid\":0,\"ts\":0.000,\"dur\":2000000.000,\"name\":\"queued\""));
  CHECK_THAT(json, Catch::Contains(
      "\"pid\":1,\"tid\":0,\"ts\":2000000.000,\"dur\":500000.000,\"name\":\"prefill 0+4\""));
  CHECK_THAT(json, Catch::Contains(
      "\"ts\":2500000.000,\"dur\":700000.000,\"name\":\"decode x2\""));
  // r2 (bob = pid 2): preempted at 3.2, waits until 4.0, recomputes 0+9.
  CHECK_THAT(json, Catch::Contains(
      "\"pid\":2,\"tid\":0,\"ts\":3200000.000,\"name\":\"preempted (recompute)\""));
  CHECK_THAT(json, Catch::Contains(
      "\"ts\":3200000.000,\"dur\":800000.000,\"name\":\"waiting (preempted)\""));
  CHECK_THAT(json, Catch::Contains("\"name\":\"prefill 0+9\""));
  CHECK_THAT(json, Catch::Contains("\"name\":\"user bob\""));
  CHECK_THAT(json, Catch::Contains("\"name\":\"step 6\""));
  CHECK(std::count(json.begin(), json.end(), '{') ==
        std::count(json.begin(), json.end(), '}'));
  CHECK(!t->truncated());
}

TEST_CASE("timeline escapes the host's names", "[metrics]") {
  ManualClock clock;
  TimelineOptions o;
  o.user_names = {"al\"ice", "b\\ob\t"};
  o.class_names = {"voice\n", "chat\xff"};
  o.clock = &clock;
  o.origin = testing_metrics::At(0);
  auto t = TimelineRecorder::Create(o);
  REQUIRE(t.ok());
  Driver d(&clock, t->get());
  PlayScenario(d);
  const std::string json = (*t)->Json();
  CHECK_THAT(json, Catch::Contains(R"("name":"user al\"ice")"));
  CHECK_THAT(json, Catch::Contains(R"("name":"user b\\ob\t")"));
  CHECK_THAT(json, Catch::Contains(R"("class":"voice\n")"));
  // A byte that is not UTF-8 becomes U+FFFD.
  CHECK_THAT(json, Catch::Contains("\"class\":\"chat\xef\xbf\xbd\""));
}

TEST_CASE("timeline stops at max_events and says so", "[metrics]") {
  ManualClock clock;
  auto t = Make(&clock, 3);
  Driver d(&clock, t.get());
  PlayScenario(d);
  CHECK(t->truncated());
  CHECK(t->num_events() == 3);
  CHECK_THAT(t->Json(), Catch::Contains("\"truncated\":true"));
}

TEST_CASE("timeline validates its options", "[metrics]") {
  TimelineOptions o;
  o.max_events = 0;
  CHECK(absl::IsInvalidArgument(TimelineRecorder::Create(o).status()));
  o.max_events = 1;
  o.user_names.clear();
  CHECK(absl::IsInvalidArgument(TimelineRecorder::Create(o).status()));
}

}  // namespace
}  // namespace hearth
