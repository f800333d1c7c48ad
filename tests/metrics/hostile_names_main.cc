// Renders every Prometheus exposition Hearth has with hostile names, for
// hostile_names_check.py to parse with prometheus_client and check: valid
// UTF-8, every sample line read, no series twice.
//
//   scheduler.prom  a run whose users, classes and models carry every name
//                   Scheduler::Create accepts from a hostile list (quotes,
//                   backslashes, label injection, lookalikes of "_other",
//                   any script, 256 bytes) and whatever else it accepts of
//                   the invalid ones (refused: "_other", bytes that are not
//                   UTF-8, NUL, control characters, 257 bytes); more users
//                   than max_user_series, router names with a hostile
//                   model_name, per-user histograms.
//   report.prom     a MetricsReport built by hand, as a host may: repeated
//                   names, a user named "_other" beside the overflow series,
//                   bytes that are not UTF-8 and control characters.
//   jobs.prom       JobsPrometheusText of stats built by hand the same way.
//   capi.prom       hearth_scheduler_prometheus_text of a scheduler made
//                   from options JSON with hostile names (and, if the JSON
//                   accepts them, names that differ only after a NUL).
//
// Usage: hearth_hostile_names OUT_DIR

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hearth/c/hearth.h"
#include "hearth/hearth.h"
#include "hearth/metrics/metrics.h"
#include "hearth/jobs/jobs_prometheus.h"
#include "internal/status_macros.h"
#include "tests/testing/scheduler_harness.h"

namespace hearth {
namespace {

using namespace std::string_literals;

// Names a member may well choose, or an attacker try; all valid.
std::vector<std::string> ValidHostileNames() {
  return {"alice",
          "carol \"c\"",
          "back\\slash\\",
          "x\",user=\"y",
          "} 1 # HELP x",
          "_other ",
          "_Other",
          "_other\u200b",
          "__name__",
          "le",
          "NaN",
          "\u00e9",
          "e\u0301",
          "\U0001F469\u200D\U0001F469\u200D\U0001F467",
          "\u202Eevil",
          "\u5bb6\u65cf",
          std::string(256, 'x'),
          std::string(254, 'y') + "\u00e9",
          " ",
          "{}",
          "dave"};
}

// Names that must be refused; the run keeps whichever Create accepts.
std::vector<std::string> InvalidNames() {
  return {"_other",
          "a\xff\xfe",
          "a\0b"s,
          "tab\there",
          "cr\rhere",
          "nl\nhere",
          "\x1b[31mred",
          "\xc2\x85nel",
          "ls\u2028sep",
          std::string(257, 'z'),
          "\xc0\xaf",
          "\xed\xa0\x80"};
}

bool Accepted(const SchedulerOptions& base, const std::string& name) {
  SchedulerOptions o = base;
  o.users = {{.name = "someone"}, {.name = name}};
  o.work_classes = {{.name = "chat"}, {.name = name + "!"}};
  return Scheduler::Create(o).ok();
}

absl::Status Write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return out ? absl::OkStatus() : absl::InternalError(absl::StrCat("cannot write ", path));
}

absl::Status RenderScheduler(const std::string& dir) {
  SchedulerOptions o;
  o.kv.num_device_blocks = 256;
  std::vector<std::string> names = ValidHostileNames();
  for (const std::string& name : InvalidNames()) {
    if (Accepted(o, name)) names.push_back(name);
  }
  o.users.clear();
  for (const std::string& name : names) o.users.push_back({.name = name});
  o.work_classes.clear();
  for (size_t i = 0; i < 6; ++i) o.work_classes.push_back({.name = names[names.size() - 1 - i]});
  o.models = {{.name = names[1]}, {.name = names[3]}};
  ManualClock clock;
  MetricsOptions mo = MetricsOptionsFor(o);
  mo.clock = &clock;
  auto collector = MetricsCollector::Create(mo);
  if (!collector.ok()) return collector.status();
  o.metrics_sink = collector->get();
  auto h = testing::SchedulerHarness::Create(o, /*seed=*/3);
  if (!h.ok()) return h.status();
  for (int step = 0; step < 60; ++step) {
    RequestSpec spec;
    spec.user = UserId(static_cast<uint32_t>(step % o.users.size()));
    spec.work_class = WorkClassId(static_cast<uint32_t>(step % o.work_classes.size()));
    spec.model = ModelId(static_cast<uint32_t>(step % 2));
    spec.prompt_tokens = 10 + step % 30;
    spec.max_new_tokens = 3 + step % 7;
    if (auto id = (*h)->Submit(spec); !id.ok()) return id.status();
    clock.Set((*h)->now() + absl::Milliseconds(10));
    if (absl::Status s = (*h)->Step(); !s.ok()) return s;
  }
  PrometheusOptions po;
  po.gauges = EngineGaugesFrom((*h)->scheduler());
  po.router_names = true;
  po.model_name = "m\"o\\d\nel\xff\x01";
  po.user_histograms = true;
  po.max_user_series = 8;
  const MetricsReport report = (*collector)->Report();
  HEARTH_RETURN_IF_ERROR(Write(dir + "/scheduler.prom", PrometheusText(report, po)));
  po.max_user_series = 1000;
  return Write(dir + "/scheduler_all_users.prom", PrometheusText(report, po));
}

GroupReport Group(std::string name, uint64_t arrived) {
  GroupReport g;
  g.name = std::move(name);
  g.arrived = arrived;
  g.finished = arrived;
  g.histograms.ttft.Observe(0.05);
  return g;
}

absl::Status RenderReport(const std::string& dir) {
  MetricsReport r;
  uint64_t n = 1;
  for (std::string name : {"_other"s, "bob"s, "bob"s, "a\xff"s, "a\xfe"s, "a\0b"s, "a\x01"s,
                           "tab\t"s, "carol"s, "dave"s}) {
    r.users.push_back(Group(name, n));
    r.classes.push_back(Group(name, n));
    ++n;
  }
  PrometheusOptions po;
  po.user_histograms = true;
  po.max_user_series = 7;
  return Write(dir + "/report.prom", PrometheusText(r, po));
}

absl::Status RenderJobs(const std::string& dir) {
  JobPoolStats stats;
  uint64_t n = 1;
  for (std::string name : {"documents"s, "documents"s, "a\xff"s, "a\xfe"s, "a\0b"s,
                           "x\",queue=\"y"s, "nl\n"s}) {
    JobQueueStats q;
    q.name = name;
    q.submitted = n++;
    q.queue_wait.Observe(0.2);
    stats.queues.push_back(q);
  }
  return Write(dir + "/jobs.prom", JobsPrometheusText(stats));
}

// The options JSON's users, classes and models: hostile but valid names
// (JSON escapes), or also two that differ only after a NUL.
std::string OptionsJson(bool with_nul) {
  std::string users = R"({"name": "carol \"c\""}, {"name": "back\\slash"}, {"name": "\u00e9"},)"
                      R"( {"name": "x\",user=\"y"}, {"name": "\ud83d\ude00"})";
  if (with_nul) users += R"(, {"name": "a\u0000b"}, {"name": "a\u0000c"})";
  return absl::StrCat(R"({"users": [)", users,
                      R"(], "work_classes": [{"name": "}\"{"}, {"name": "voice"}],)"
                      R"( "models": [{"name": "m\\"}], "kv": {"num_device_blocks": 64}})");
}

absl::Status RenderCapi(const std::string& dir) {
  hearth_options* options = nullptr;
  hearth_error* error = nullptr;
  if (hearth_options_from_json(OptionsJson(true).c_str(), &options, &error) != HEARTH_OK) {
    hearth_error_free(error);
    error = nullptr;
    if (hearth_options_from_json(OptionsJson(false).c_str(), &options, &error) != HEARTH_OK) {
      const std::string why = hearth_error_message(error);
      hearth_error_free(error);
      return absl::InternalError(absl::StrCat("options JSON refused: ", why));
    }
  }
  hearth_scheduler* scheduler = nullptr;
  const hearth_status created = hearth_scheduler_create(options, &scheduler, &error);
  hearth_options_free(options);
  if (created != HEARTH_OK) {
    const std::string why = hearth_error_message(error);
    hearth_error_free(error);
    return absl::InternalError(absl::StrCat("create refused: ", why));
  }
  hearth_request r = hearth_request_default();
  r.prompt_tokens = 8;
  r.max_new_tokens = 2;
  uint64_t id = 0;
  for (const char* user : {"carol \"c\"", "x\",user=\"y"}) {
    r.user = user;
    if (hearth_scheduler_submit(scheduler, &r, &id, &error) != HEARTH_OK) {
      hearth_error_free(error);
      error = nullptr;
    }
  }
  // The plan takes them in: they count as arrived.
  const hearth_plan* plan = nullptr;
  if (hearth_scheduler_plan(scheduler, 1.0, &plan, &error) != HEARTH_OK) {
    hearth_error_free(error);
    error = nullptr;
  }
  char* text = nullptr;
  size_t length = 0;
  const hearth_status rendered =
      hearth_scheduler_prometheus_text(scheduler, 1, "m\"\xff", &text, &length, &error);
  hearth_scheduler_free(scheduler);
  if (rendered != HEARTH_OK) {
    hearth_error_free(error);
    return absl::InternalError("prometheus text refused");
  }
  const std::string body(text, length);
  hearth_string_free(text);
  return Write(dir + "/capi.prom", body);
}

absl::Status Run(const std::string& dir) {
  HEARTH_RETURN_IF_ERROR(RenderScheduler(dir));
  HEARTH_RETURN_IF_ERROR(RenderReport(dir));
  HEARTH_RETURN_IF_ERROR(RenderJobs(dir));
  return RenderCapi(dir);
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
