// Catalogue surface: the metrics sinks' options (MetricsCollector,
// TimelineRecorder), which a host hands to SchedulerOptions::metrics_sink.

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/metrics/metrics_collector.h"
#include "hearth/metrics/timeline_recorder.h"
#include "tests/scheduler/bad_input_catalogue.h"

namespace hearth::catalogue {
namespace {

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

BadInputRow CollectorRow(std::string name, std::function<void(MetricsOptions&)> apply,
                         std::string message_has) {
  auto run = [apply = std::move(apply)] {
    MetricsOptions m;
    apply(m);
    return MetricsCollector::Create(std::move(m)).status();
  };
  return {"metrics: collector with " + name, std::move(run), kInvalid, std::move(message_has)};
}

BadInputRow TimelineRow(std::string name, std::function<void(TimelineOptions&)> apply,
                        std::string message_has) {
  auto run = [apply = std::move(apply)] {
    TimelineOptions t;
    apply(t);
    return TimelineRecorder::Create(std::move(t)).status();
  };
  return {"metrics: timeline with " + name, std::move(run), kInvalid, std::move(message_has)};
}

}  // namespace

std::vector<BadInputRow> MetricsRows() {
  using M = MetricsOptions&;
  using T = TimelineOptions&;
  return {
      CollectorRow("no users", [](M m) { m.user_names.clear(); }, "user_names must not be empty"),
      CollectorRow("no classes", [](M m) { m.class_names.clear(); }, "class_names must not be empty"),
      CollectorRow("an empty user name", [](M m) { m.user_names = {"a", ""}; },
                   "MetricsOptions.user_names[1] is \"\" (0 bytes); it is empty"),
      CollectorRow("a repeated class name", [](M m) { m.class_names = {"chat", "chat"}; },
                   "class_names[1] is \"chat\", which is used twice"),
      CollectorRow("a user name that is not UTF-8", [](M m) { m.user_names = {"a\xff"}; },
                   "user_names[0] is \"a\\xff\" (2 bytes); byte 1 is not valid UTF-8"),
      CollectorRow("a class name with a NUL",
                   [](M m) { m.class_names = {std::string("a\0b", 3)}; },
                   "class_names[0] is \"a\\x00\\x62\" (3 bytes); byte 1 is the control character U+0000"),
      CollectorRow("a user named _other", [](M m) { m.user_names = {"a", "_other"}; },
                   "user_names[1] is \"_other\", which is reserved"),
      CollectorRow("more weights than users", [](M m) { m.user_weights = {1, 1}; },
                   "user_weights has 2 entries"),
      CollectorRow("a user weight of 0", [](M m) { m.user_weights = {0}; }, "got 0"),
      CollectorRow("a NaN user weight", [](M m) { m.user_weights = {kNaN}; },
                   "user_weights must be finite and > 0"),
      CollectorRow("an infinite user weight", [](M m) { m.user_weights = {kInf}; },
                   "user_weights must be finite"),
      CollectorRow("more SLOs than classes", [](M m) { m.class_slos.resize(3); },
                   "class_slos has 3 entries"),
      CollectorRow("a negative prefill weight", [](M m) { m.prefill_weight = -1; },
                   "prefill_weight and decode_weight"),
      CollectorRow("a NaN decode weight", [](M m) { m.decode_weight = kNaN; }, "must be >= 0"),
      CollectorRow("both token weights 0", [](M m) { m.prefill_weight = m.decode_weight = 0; },
                   "not both 0"),
      CollectorRow("max_gap_users -1", [](M m) { m.max_gap_users = -1; }, "max_gap_users"),
      CollectorRow("a negative series interval",
                   [](M m) { m.series_interval = -absl::Seconds(1); }, "series_interval"),
      TimelineRow("no users", [](T t) { t.user_names.clear(); }, "must not be empty"),
      TimelineRow("no classes", [](T t) { t.class_names.clear(); }, "must not be empty"),
      TimelineRow("max_events 0", [](T t) { t.max_events = 0; }, "max_events must be >= 1"),
  };
}

TEST_CASE("Bad input: metrics sinks refuse inconsistent options", "[scheduler][bad_input]") {
  RunRows(MetricsRows());
}

}  // namespace hearth::catalogue
