#include "hearth/metrics/timeline_recorder.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "metrics/step_end.h"

namespace hearth {

struct TimelineRecorder::Track {
  uint32_t user = 0;
  uint32_t cls = 0;
  uint32_t lane = 0;
  int32_t prompt = 0;
  int32_t output = 0;
  // Waiting since `wait_start` when valid (queued or preempted).
  bool waiting = false;
  bool preempted_before = false;
  absl::Time wait_start;
  // An open run of consecutive decode steps.
  bool in_run = false;
  absl::Time run_start;
  absl::Time run_end;
  int32_t run_tokens = 0;
  uint64_t run_last_step = 0;
  bool end_pending = false;
  RequestPhase end_phase = RequestPhase::kFinished;
  absl::Time end_time;
};

using metrics_internal::StepEnd;

namespace {

// The trace is written event by event as steps end, so that a long run never
// holds its whole timeline in memory, with times in fixed-point
// microseconds (%.3f), which nlohmann's number printer cannot be told to
// use; nlohmann quotes every string.
//
// `s` as a JSON string, quotes included. Names are the host's; a byte that is
// not UTF-8 becomes U+FFFD rather than an invalid document.
std::string JsonString(std::string_view s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

absl::StatusOr<std::unique_ptr<TimelineRecorder>> TimelineRecorder::Create(
    TimelineOptions options) {
  if (options.user_names.empty() || options.class_names.empty()) {
    return absl::InvalidArgumentError(
        "TimelineOptions.user_names and class_names must not be empty");
  }
  if (options.max_events == 0) {
    return absl::InvalidArgumentError("TimelineOptions.max_events must be >= 1");
  }
  return std::unique_ptr<TimelineRecorder>(
      new TimelineRecorder(std::move(options)));
}

TimelineRecorder::TimelineRecorder(TimelineOptions options)
    : options_(std::move(options)),
      lanes_(options_.user_names.size()),
      max_lane_(options_.user_names.size(), 0) {
  // Class names are the host's and go into most events: escaped once here.
  class_json_.reserve(options_.class_names.size());
  for (const std::string& name : options_.class_names) class_json_.push_back(JsonString(name));
}

TimelineRecorder::~TimelineRecorder() = default;

double TimelineRecorder::Micros(absl::Time t) {
  if (options_.origin == absl::InfinitePast()) options_.origin = t;
  if (t > last_time_) last_time_ = t;
  return absl::ToDoubleMicroseconds(t - options_.origin);
}

void TimelineRecorder::Slice(uint32_t pid, uint32_t tid, std::string_view name,
                             absl::Time start, absl::Time end,
                             std::string_view args) {
  if (num_events_ >= options_.max_events) {
    truncated_ = true;
    return;
  }
  ++num_events_;
  const double ts = Micros(start);
  const double dur = std::max(0.0, Micros(end) - ts);
  absl::StrAppendFormat(&body_,
                        ",\n{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,"
                        "\"dur\":%.3f,\"name\":\"%s\",\"args\":{%s}}",
                        pid, tid, ts, dur, name, args);
}

void TimelineRecorder::Instant(uint32_t pid, uint32_t tid,
                               std::string_view name, absl::Time at) {
  if (num_events_ >= options_.max_events) {
    truncated_ = true;
    return;
  }
  ++num_events_;
  absl::StrAppendFormat(&body_,
                        ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":%u,\"tid\":%u,"
                        "\"ts\":%.3f,\"name\":\"%s\"}",
                        pid, tid, Micros(at), name);
}

std::string TimelineRecorder::Args(RequestId id, const Track& t) const {
  return absl::StrFormat("\"request\":%d,\"class\":%s,\"prompt\":%d",
                         id.value(), class_json_[t.cls],
                         t.prompt);
}

void TimelineRecorder::CloseWait(Track& t, absl::Time at) {
  if (!t.waiting) return;
  t.waiting = false;
  --waiting_;
  if (at <= t.wait_start) return;  // admitted on arrival: nothing to show
  Slice(t.user + 1, t.lane, t.preempted_before ? "waiting (preempted)" : "queued",
        t.wait_start, at, absl::StrCat("\"class\":",
                                       class_json_[t.cls]));
}

void TimelineRecorder::CloseDecodeRun(Track& t) {
  if (!t.in_run) return;
  t.in_run = false;
  Slice(t.user + 1, t.lane, absl::StrCat("decode x", t.run_tokens), t.run_start,
        t.run_end,
        absl::StrFormat("\"class\":%s,\"tokens\":%d",
                        class_json_[t.cls], t.run_tokens));
}

void TimelineRecorder::OnRequestEvent(const RequestEvent& e) {
  auto it = tracks_.find(e.id);
  if (it == tracks_.end()) {
    if (!e.user.valid() || e.user.value() >= lanes_.size() ||
        !e.work_class.valid() ||
        e.work_class.value() >= options_.class_names.size()) {
      return;
    }
    Track t;
    t.user = e.user.value();
    t.cls = e.work_class.value();
    t.prompt = e.prompt_tokens;
    std::vector<bool>& lanes = lanes_[t.user];
    auto free = std::find(lanes.begin(), lanes.end(), false);
    t.lane = static_cast<uint32_t>(free - lanes.begin());
    if (free == lanes.end()) lanes.push_back(true); else *free = true;
    max_lane_[t.user] = std::max(max_lane_[t.user], t.lane + 1);
    t.waiting = true;
    t.wait_start = e.time;
    ++waiting_;
    it = tracks_.emplace(e.id, t).first;
  }
  Track& t = it->second;
  switch (e.kind) {
    case RequestEventKind::kArrive:
    case RequestEventKind::kFirstToken:
      break;
    case RequestEventKind::kAdmit:
      CloseWait(t, e.time);
      ++running_;
      break;
    case RequestEventKind::kPreempt:
    case RequestEventKind::kRetry:
      CloseDecodeRun(t);
      --running_;
      Instant(t.user + 1, t.lane,
              e.kind == RequestEventKind::kRetry ? "retry after engine failure"
              : e.preemption_mode == PreemptionMode::kSwap
                  ? "preempted (swap)"
                  : "preempted (recompute)",
              e.time);
      if (e.kind == RequestEventKind::kRetry) t.output = 0;
      t.waiting = true;
      t.preempted_before = true;
      t.wait_start = e.time;
      ++waiting_;
      break;
    case RequestEventKind::kEnd:
      if (!t.end_pending) pending_end_.push_back(e.id);
      t.end_pending = true;
      t.end_phase = e.phase;
      t.end_time = e.time;
      break;
  }
}

void TimelineRecorder::OnStep(const StepPlan& plan, const StepOutcome& outcome) {
  ++step_;
  const absl::Time end = StepEnd(plan, outcome, options_.clock, last_step_end_);
  last_step_end_ = end;
  if (!plan.sequences.empty()) {
    Slice(0, 0, absl::StrCat("step ", plan.step), plan.now, end,
          absl::StrFormat("\"sequences\":%d,\"tokens\":%d,\"decodes\":%d",
                          plan.sequences.size(), plan.num_batched_tokens,
                          plan.num_decodes));
  }
  for (size_t i = 0; i < plan.sequences.size(); ++i) {
    const ScheduledSequence& s = plan.sequences[i];
    auto it = tracks_.find(s.id);
    if (it == tracks_.end()) continue;
    Track& t = it->second;
    if (s.decode) {
      if (!t.in_run || t.run_last_step + 1 != step_) {
        CloseDecodeRun(t);
        t.in_run = true;
        t.run_start = plan.now;
        t.run_tokens = 0;
        open_runs_.push_back(s.id);
      }
      t.run_end = end;
      t.run_last_step = step_;
      ++t.run_tokens;
    } else {
      CloseDecodeRun(t);
      Slice(t.user + 1, t.lane,
            absl::StrFormat("prefill %d+%d", s.start_position, s.num_tokens),
            plan.now, end, Args(s.id, t));
    }
    if (i < outcome.sequences.size() && outcome.sequences[i].produced_token) {
      ++t.output;
    }
  }
  // Runs not extended this step are over.
  size_t kept = 0;
  for (RequestId id : open_runs_) {
    auto it = tracks_.find(id);
    if (it == tracks_.end() || !it->second.in_run) continue;
    if (it->second.run_last_step != step_) {
      CloseDecodeRun(it->second);
      continue;
    }
    open_runs_[kept++] = id;
  }
  open_runs_.resize(kept);
  for (RequestId id : pending_end_) {
    auto it = tracks_.find(id);
    if (it != tracks_.end()) End(id, it->second);
  }
  pending_end_.clear();
  if (waiting_ != last_waiting_ || running_ != last_running_) {
    last_waiting_ = waiting_;
    last_running_ = running_;
    if (num_events_ < options_.max_events) {
      ++num_events_;
      absl::StrAppendFormat(&body_,
                            ",\n{\"ph\":\"C\",\"pid\":0,\"ts\":%.3f,\"name\":"
                            "\"requests\",\"args\":{\"waiting\":%d,"
                            "\"running\":%d}}",
                            Micros(end), waiting_, running_);
    } else {
      truncated_ = true;
    }
  }
}

void TimelineRecorder::End(RequestId id, Track& t) {
  const bool was_running = !t.waiting;
  CloseDecodeRun(t);
  CloseWait(t, t.end_time);
  if (t.end_phase != RequestPhase::kFinished || t.output == 0) {
    Instant(t.user + 1, t.lane, absl::StrCat("end: ", std::string(PhaseName(t.end_phase))),
            t.end_time);
  }
  // A request that was admitted and has not been preempted since is running.
  if (was_running) running_ = std::max(0, running_ - 1);
  lanes_[t.user][t.lane] = false;
  tracks_.erase(id);
}

std::string TimelineRecorder::Json() {
  std::vector<RequestId> ids;
  for (const auto& [id, t] : tracks_) {
    if (t.end_pending) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  for (RequestId id : ids) End(id, tracks_.at(id));
  pending_end_.clear();
  // Close open runs and waits at the last time seen, in id order so the
  // output is deterministic.
  ids.clear();
  for (const auto& [id, t] : tracks_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (RequestId id : ids) {
    Track& t = tracks_.at(id);
    CloseDecodeRun(t);
    if (t.waiting) {
      CloseWait(t, last_time_);
      t.waiting = true;  // still waiting; it may be admitted later
      t.wait_start = last_time_;
      ++waiting_;
    }
  }
  std::string out = "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"truncated\":";
  absl::StrAppend(&out, truncated_ ? "true" : "false", "},\"traceEvents\":[\n");
  absl::StrAppend(&out,
                  "{\"ph\":\"M\",\"pid\":0,\"name\":\"process_name\","
                  "\"args\":{\"name\":\"engine\"}}");
  for (size_t u = 0; u < lanes_.size(); ++u) {
    absl::StrAppendFormat(&out,
                          ",\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\","
                          "\"args\":{\"name\":%s}}",
                          u + 1, JsonString(absl::StrCat("user ", options_.user_names[u])));
    absl::StrAppendFormat(&out,
                          ",\n{\"ph\":\"M\",\"pid\":%d,\"name\":"
                          "\"process_sort_index\",\"args\":{\"sort_index\":%d}}",
                          u + 1, u + 1);
    for (uint32_t lane = 0; lane < max_lane_[u]; ++lane) {
      absl::StrAppendFormat(&out,
                            ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":"
                            "\"thread_name\",\"args\":{\"name\":\"lane %d\"}}",
                            u + 1, lane, lane);
    }
  }
  absl::StrAppend(&out, body_, "\n]}\n");
  return out;
}

}  // namespace hearth
