#include "hearth/metrics/prometheus.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hearth/metrics/engine_gauges.h"

namespace hearth {
namespace {

// The value on the line `series value`, or nullopt when no line has exactly
// that series (name plus labels).
std::optional<std::string> ValueOf(const std::string& text, const std::string& series) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return line.substr(series.size() + 1);
    }
  }
  return std::nullopt;
}

int CountLinesStartingWith(const std::string& text, const std::string& start) {
  std::istringstream lines(text);
  int n = 0;
  for (std::string line; std::getline(lines, line);) n += line.rfind(start, 0) == 0 ? 1 : 0;
  return n;
}

GroupReport Group(std::string name, uint64_t arrived) {
  GroupReport g;
  g.name = std::move(name);
  g.arrived = arrived;
  return g;
}

MetricsReport TwoClasses() {
  MetricsReport r;
  r.classes = {Group("voice", 7), Group("chat", 5)};
  r.users = {Group("alice", 12)};
  GroupReport& voice = r.classes[0];
  voice.finished = 3;
  voice.cancelled = 1;
  voice.rejected = 2;
  voice.timed_out = 0;
  voice.failed = 1;
  voice.histograms.ttft.Observe(0.03);
  voice.histograms.ttft.Observe(0.5);
  voice.histograms.ttft.Observe(400);
  r.classes[1].failed = 4;
  r.total.prefix_queried_tokens = 400;
  r.total.prefix_hit_tokens = 100;
  return r;
}

EngineGauges SomeGauges() {
  EngineGauges g;
  g.queued = 1;
  g.waiting = 4;
  g.preparing = 2;
  g.held = 5;
  g.running = 8;
  g.swapped = 3;
  g.device_blocks_capacity = 1000;
  g.device_blocks_usable = 800;
  g.device_blocks_used = 600;
  g.device_blocks_cached = 150;
  g.host_blocks_capacity = 64;
  g.host_blocks_used = 16;
  g.resident_weight_bytes = int64_t{16} << 30;
  return g;
}

TEST_CASE("terminal states are counted apart, per class", "[metrics]") {
  const std::string text = PrometheusText(TwoClasses());
  auto ended = [&](const char* cls, const char* outcome) {
    return ValueOf(text, absl::StrCat("hearth_requests_ended_total{class=\"", cls,
                                      "\",outcome=\"", outcome, "\"}"));
  };
  CHECK(ended("voice", "finished") == "3");
  CHECK(ended("voice", "cancelled") == "1");
  CHECK(ended("voice", "rejected") == "2");
  CHECK(ended("voice", "timed_out") == "0");
  CHECK(ended("voice", "failed") == "1");
  CHECK(ended("chat", "failed") == "4");
  CHECK(ended("chat", "rejected") == "0");
  CHECK(CountLinesStartingWith(text, "hearth_requests_ended_total{") == 10);
  // Partitions only: no unlabelled total beside the class series.
  CHECK_FALSE(ValueOf(text, "hearth_requests_arrived_total").has_value());
  CHECK(ValueOf(text, "hearth_requests_arrived_total{class=\"chat\"}") == "5");
}

TEST_CASE("SLO attainment is exported per class and per user, by kind and met", "[metrics]") {
  MetricsReport r = TwoClasses();
  r.classes[0].ttft_slo = {.met = 5, .missed = 2};
  r.classes[0].tpot_slo = {.met = 4, .missed = 0};
  r.classes[1].ttft_slo = {.met = 0, .missed = 3};
  for (int u = 0; u < 3; ++u) {
    r.users.push_back(Group(absl::StrCat("u", u), 1));
    r.users.back().tpot_slo = {.met = 10, .missed = static_cast<uint64_t>(u)};
  }
  PrometheusOptions po;
  po.max_user_series = 2;  // alice and u0; u1 and u2 summed into _other
  const std::string text = PrometheusText(r, po);
  CHECK_THAT(text, Catch::Contains("# TYPE hearth_slo_requests_total counter\n"));
  CHECK_THAT(text, Catch::Contains("# TYPE hearth_user_slo_requests_total counter\n"));
  auto cls = [&](const char* c, const char* kind, const char* met) {
    return ValueOf(text, absl::StrCat("hearth_slo_requests_total{class=\"", c, "\",kind=\"",
                                      kind, "\",met=\"", met, "\"}"));
  };
  CHECK(cls("voice", "ttft", "true") == "5");
  CHECK(cls("voice", "ttft", "false") == "2");
  CHECK(cls("voice", "tpot", "true") == "4");
  CHECK(cls("voice", "tpot", "false") == "0");
  CHECK(cls("chat", "ttft", "false") == "3");
  CHECK(cls("chat", "tpot", "true") == "0");
  // Two kinds by two verdicts per class: bounded by configuration.
  CHECK(CountLinesStartingWith(text, "hearth_slo_requests_total{") == 8);
  auto user = [&](const char* u, const char* met) {
    return ValueOf(text, absl::StrCat("hearth_user_slo_requests_total{user=\"", u,
                                      "\",kind=\"tpot\",met=\"", met, "\"}"));
  };
  CHECK(user("u0", "true") == "10");
  CHECK(user("_other", "true") == "20");
  CHECK(user("_other", "false") == "3");
  CHECK_FALSE(user("u2", "true").has_value());
  CHECK(CountLinesStartingWith(text, "hearth_user_slo_requests_total{") == 12);
}

TEST_CASE("histograms are written cumulatively, ending at +Inf", "[metrics]") {
  const std::string text = PrometheusText(TwoClasses());
  CHECK_THAT(text, Catch::Contains("# TYPE hearth_ttft_seconds histogram\n"));
  const std::string bucket = "hearth_ttft_seconds_bucket{class=\"voice\",le=\"";
  CHECK(ValueOf(text, bucket + "0.02\"}") == "0");
  CHECK(ValueOf(text, bucket + "0.04\"}") == "1");
  CHECK(ValueOf(text, bucket + "0.5\"}") == "2");
  CHECK(ValueOf(text, bucket + "300\"}") == "2");
  CHECK(ValueOf(text, bucket + "+Inf\"}") == "3");
  CHECK(ValueOf(text, "hearth_ttft_seconds_count{class=\"voice\"}") == "3");
  CHECK(ValueOf(text, "hearth_ttft_seconds_sum{class=\"voice\"}") == "400.53");
  CHECK(CountLinesStartingWith(text, "hearth_ttft_seconds_bucket{class=\"chat\"") ==
        static_cast<int>(LatencyHistogram::kNumBounds + 1));
}

TEST_CASE("label values are escaped", "[metrics]") {
  MetricsReport r;
  // A report built by hand may hold what validated names never do: a
  // newline and other control characters, and bytes that are not UTF-8.
  r.classes = {Group("say \"hi\"\\now\nplease\x01\xff", 1)};
  const std::string text = PrometheusText(r);
  CHECK(ValueOf(text, "hearth_requests_arrived_total{class=\"say \\\"hi\\\"\\\\now"
                      "\xEF\xBF\xBDplease\xEF\xBF\xBD\xEF\xBF\xBD\"}") == "1");
  // Nothing but escaped newlines: every line is a comment or a sample.
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    CHECK((line.rfind("# ", 0) == 0 || line.rfind("hearth_", 0) == 0));
  }
}

TEST_CASE("per-user series are optional and capped", "[metrics]") {
  MetricsReport r;
  r.classes = {Group("chat", 210)};
  for (int u = 0; u < 20; ++u) {
    r.users.push_back(Group(absl::StrCat("u", u), static_cast<uint64_t>(u + 1)));
    r.users.back().histograms.itl.Observe(0.05);
  }
  SECTION("default: 16 users, the rest summed into _other, no user histograms") {
    const std::string text = PrometheusText(r);
    CHECK(CountLinesStartingWith(text, "hearth_user_requests_arrived_total{") == 17);
    CHECK(ValueOf(text, "hearth_user_requests_arrived_total{user=\"u15\"}") == "16");
    CHECK_FALSE(ValueOf(text, "hearth_user_requests_arrived_total{user=\"u16\"}"));
    // Users 16..19 arrived 17 + 18 + 19 + 20.
    CHECK(ValueOf(text, "hearth_user_requests_arrived_total{user=\"_other\"}") == "74");
    CHECK_THAT(text, !Catch::Contains("hearth_user_itl_seconds"));
  }
  SECTION("user histograms on, cap 2") {
    PrometheusOptions o;
    o.max_user_series = 2;
    o.user_histograms = true;
    const std::string text = PrometheusText(r, o);
    CHECK(CountLinesStartingWith(text, "hearth_user_requests_arrived_total{") == 3);
    CHECK(ValueOf(text, "hearth_user_itl_seconds_count{user=\"_other\"}") == "18");
    CHECK(ValueOf(text, "hearth_user_itl_seconds_count{user=\"u1\"}") == "1");
  }
  SECTION("off") {
    PrometheusOptions o;
    o.max_user_series = 0;
    o.user_histograms = true;
    CHECK_THAT(PrometheusText(r, o), !Catch::Contains("user="));
  }
}

// Every sample line's series (name and labels), in order.
std::vector<std::string> SeriesOf(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] != '#') out.push_back(line.substr(0, line.rfind(' ')));
  }
  return out;
}

TEST_CASE("no series is written twice, whatever names a report holds", "[metrics]") {
  // Validated names are unique and never "_other"; a report built by hand
  // may repeat a name, use "_other" beside the overflow series, or hold
  // bytes that come out alike once replaced.
  MetricsReport r;
  uint64_t total = 0;
  for (std::string name : {"alice", "_other", "bob", "bob", "a\xff", "a\xfe"}) {
    r.users.push_back(Group(name, ++total));
    r.classes.push_back(Group(name, total));
  }
  for (int u = 0; u < 20; ++u) r.users.push_back(Group(absl::StrCat("u", u), 100));
  PrometheusOptions o;
  o.max_user_series = 6;
  o.user_histograms = true;
  const std::string text = PrometheusText(r, o);
  std::vector<std::string> series = SeriesOf(text);
  const size_t lines = series.size();
  std::sort(series.begin(), series.end());
  series.erase(std::unique(series.begin(), series.end()), series.end());
  CHECK(series.size() == lines);
  // Summed, not dropped: the users beyond the cap with the user "_other".
  CHECK(ValueOf(text, "hearth_user_requests_arrived_total{user=\"_other\"}") ==
        std::to_string(2 + 20 * 100));
  CHECK(ValueOf(text, "hearth_user_requests_arrived_total{user=\"bob\"}") == "7");
  CHECK(ValueOf(text, "hearth_user_requests_arrived_total{user=\"a\xEF\xBF\xBD\"}") == "11");
  CHECK(ValueOf(text, "hearth_requests_arrived_total{class=\"bob\"}") == "7");
  CHECK(ValueOf(text, "hearth_requests_arrived_total{class=\"_other\"}") == "2");
}

TEST_CASE("gauges come from the snapshot, only when given", "[metrics]") {
  const MetricsReport r = TwoClasses();
  CHECK_THAT(PrometheusText(r), !Catch::Contains("hearth_requests{"));
  PrometheusOptions o;
  o.gauges = SomeGauges();
  const std::string text = PrometheusText(r, o);
  CHECK(ValueOf(text, "hearth_requests{phase=\"queued\"}") == "1");
  CHECK(ValueOf(text, "hearth_requests{phase=\"waiting\"}") == "4");
  CHECK(ValueOf(text, "hearth_requests{phase=\"preparing\"}") == "2");
  CHECK(ValueOf(text, "hearth_requests{phase=\"held\"}") == "5");
  CHECK(ValueOf(text, "hearth_requests{phase=\"running\"}") == "8");
  CHECK(ValueOf(text, "hearth_requests{phase=\"swapped\"}") == "3");
  CHECK(ValueOf(text, "hearth_kv_device_blocks{state=\"used\"}") == "600");
  CHECK(ValueOf(text, "hearth_kv_device_blocks{state=\"cached\"}") == "150");
  CHECK(ValueOf(text, "hearth_kv_device_blocks{state=\"free\"}") == "250");
  CHECK(ValueOf(text, "hearth_kv_device_blocks_usable") == "800");
  CHECK(ValueOf(text, "hearth_kv_usage_ratio") == "0.75");
  CHECK(ValueOf(text, "hearth_kv_host_blocks{state=\"used\"}") == "16");
  CHECK(ValueOf(text, "hearth_kv_host_blocks{state=\"free\"}") == "48");
  CHECK(ValueOf(text, "hearth_resident_weight_bytes") == "17179869184");
  CHECK(ValueOf(text, "hearth_prefix_cache_hit_ratio") == "0.25");
  CHECK_THAT(text, !Catch::Contains("vllm:"));
}

TEST_CASE("router names appear only when asked for, with vLLM's meaning",
          "[metrics]") {
  PrometheusOptions o;
  o.router_names = true;
  CHECK_THAT(PrometheusText(TwoClasses(), o), !Catch::Contains("vllm:"));  // no gauges
  o.gauges = SomeGauges();
  o.model_name = "llama \"3\"";
  const std::string text = PrometheusText(TwoClasses(), o);
  const std::string labels = "{model_name=\"llama \\\"3\\\"\"}";
  CHECK(ValueOf(text, "vllm:num_requests_waiting" + labels) == "15");  // 1 + 4 + 2 + 5 + 3
  CHECK(ValueOf(text, "vllm:num_requests_running" + labels) == "8");
  CHECK(ValueOf(text, "vllm:kv_cache_usage_perc" + labels) == "0.75");
  CHECK(ValueOf(text, "vllm:gpu_cache_usage_perc" + labels) == "0.75");
  CHECK_THAT(text, Catch::Contains("# TYPE vllm:kv_cache_usage_perc gauge\n"));
  CHECK_THAT(text, !Catch::Contains("vllm:lora_requests_info"));
}

TEST_CASE("EngineGauges reads a stats snapshot", "[metrics]") {
  // A pool of 10 device blocks: 1 held, 1 cached, 8 free; 1 of 4 host
  // blocks in use.
  SchedulerStats stats;
  stats.waiting = 2;
  stats.running = 1;
  stats.kv_block_limit = 8;
  stats.resident_weight_bytes = 5;
  stats.device_blocks = 10;
  stats.free_device_blocks = 8;
  stats.cached_device_blocks = 1;
  stats.host_blocks = 4;
  stats.free_host_blocks = 3;
  const EngineGauges g = EngineGaugesFrom(stats);
  CHECK(g.waiting == 2);
  CHECK(g.running == 1);
  CHECK(g.device_blocks_capacity == 10);
  CHECK(g.device_blocks_used == 1);
  CHECK(g.device_blocks_cached == 1);
  CHECK(g.device_blocks_usable == 8);
  CHECK(g.host_blocks_capacity == 4);
  CHECK(g.host_blocks_used == 1);
  CHECK(g.resident_weight_bytes == 5);
  CHECK(g.KvUsage() == Approx(1.0 / 8));
  EngineGauges none;
  CHECK(none.KvUsage() == 1.0);  // nothing usable: full, to a router
}

}  // namespace
}  // namespace hearth
