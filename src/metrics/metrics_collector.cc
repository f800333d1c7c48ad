#include "hearth/metrics/metrics_collector.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hearth/common/names.h"
#include "metrics/slo_attainment.h"
#include "metrics/step_end.h"

namespace hearth {

struct MetricsCollector::Group {
  Group(std::string name, double weight, size_t cap, uint64_t seed)
      : queue_wait(cap, seed), ttft(cap, seed + 1), itl(cap, seed + 2),
        e2e(cap, seed + 3), norm(cap, seed + 4) {
    report.name = std::move(name);
    report.weight = weight;
  }
  // Counters and histograms live in `report`; sample series are summarised
  // on Report().
  GroupReport report;
  SampleSeries queue_wait, ttft, itl, e2e, norm;
};

struct MetricsCollector::Track {
  uint32_t user = 0;
  uint32_t cls = 0;
  int32_t prompt = 0;
  int32_t output = 0;
  // Tokens produced over its life (a retry resets `output`, not this).
  int64_t produced = 0;
  absl::Duration ttft_slo = absl::InfiniteDuration();
  absl::Duration tpot_slo = absl::InfiniteDuration();
  bool waiting = false;
  bool running = false;
  bool admitted_once = false;
  bool end_pending = false;
  RequestPhase end_phase = RequestPhase::kFinished;
  absl::Time arrival;
  absl::Time first_token = absl::InfiniteFuture();
  absl::Time last_token = absl::InfiniteFuture();
  absl::Time end_time = absl::InfiniteFuture();
};

using metrics_internal::StepEnd;

namespace {

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }

absl::Status CheckNames(const std::vector<std::string>& names,
                        const char* field) {
  if (names.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("MetricsOptions.", field, " must not be empty"));
  }
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& n = names[i];
    const std::string path = absl::StrCat("MetricsOptions.", field, "[", i, "]");
    if (absl::Status s = ValidateName(n, path); !s.ok()) return s;
    if (!seen.insert(n).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, " is \"", n, "\", which is used twice; names must be unique"));
    }
  }
  return absl::OkStatus();
}

absl::Status Validate(const MetricsOptions& o) {
  if (absl::Status s = CheckNames(o.user_names, "user_names"); !s.ok()) {
    return s;
  }
  for (size_t i = 0; i < o.user_names.size(); ++i) {
    if (o.user_names[i] == kOtherUsersName) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MetricsOptions.user_names[", i, "] is \"", kOtherUsersName,
          "\", which is reserved: Prometheus series sum the users beyond "
          "PrometheusOptions::max_user_series under it"));
    }
  }
  if (absl::Status s = CheckNames(o.class_names, "class_names"); !s.ok()) {
    return s;
  }
  if (!o.user_weights.empty() && o.user_weights.size() != o.user_names.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MetricsOptions.user_weights has ", o.user_weights.size(),
        " entries; must be empty or one per user (", o.user_names.size(), ")"));
  }
  for (double w : o.user_weights) {
    if (!(w > 0) || !std::isfinite(w)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MetricsOptions.user_weights must be finite and > 0; got ", w));
    }
  }
  if (!o.class_slos.empty() && o.class_slos.size() != o.class_names.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MetricsOptions.class_slos has ", o.class_slos.size(),
        " entries; must be empty or one per class (", o.class_names.size(),
        ")"));
  }
  if (!(o.prefill_weight >= 0) || !(o.decode_weight >= 0) ||
      o.prefill_weight + o.decode_weight <= 0) {
    return absl::InvalidArgumentError(
        "MetricsOptions.prefill_weight and decode_weight must be >= 0 and not "
        "both 0");
  }
  if (o.max_gap_users < 0) {
    return absl::InvalidArgumentError(
        "MetricsOptions.max_gap_users must be >= 0");
  }
  if (o.series_interval < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "MetricsOptions.series_interval must be >= 0");
  }
  // absl::Seconds(NaN) is infinite, so this also catches a NaN from config.
  if (o.publish_interval < absl::ZeroDuration() ||
      o.publish_interval == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MetricsOptions.publish_interval is ",
        absl::FormatDuration(o.publish_interval),
        "; must be finite and >= 0 (0 turns periodic publishing off)"));
  }
  return absl::OkStatus();
}

void Summarize(const SampleSeries& queue_wait, const SampleSeries& ttft,
               const SampleSeries& itl, const SampleSeries& e2e,
               const SampleSeries& norm, GroupReport& r) {
  r.queue_wait = queue_wait.Summarize();
  r.ttft = ttft.Summarize();
  r.itl = itl.Summarize();
  r.e2e = e2e.Summarize();
  r.norm_latency = norm.Summarize();
  r.slo_attainment = r.slo_eligible == 0
                         ? 1.0
                         : static_cast<double>(r.slo_met) / r.slo_eligible;
}

}  // namespace

MetricsOptions MetricsOptionsFor(const SchedulerOptions& options) {
  MetricsOptions mo;
  mo.user_names.clear();
  mo.class_names.clear();
  for (const UserConfig& u : options.users) {
    mo.user_names.push_back(u.name);
    mo.user_weights.push_back(u.weight);
  }
  for (const WorkClassConfig& c : options.work_classes) {
    mo.class_names.push_back(c.name);
    mo.class_slos.push_back({.ttft = c.ttft_slo, .tpot = c.tpot_slo, .e2e = c.e2e_slo});
  }
  return mo;
}

absl::StatusOr<std::unique_ptr<MetricsCollector>> MetricsCollector::Create(
    MetricsOptions options) {
  if (absl::Status s = Validate(options); !s.ok()) return s;
  return std::unique_ptr<MetricsCollector>(
      new MetricsCollector(std::move(options)));
}

MetricsCollector::MetricsCollector(MetricsOptions options)
    : options_(std::move(options)) {
  const size_t cap = options_.max_samples_per_series;
  uint64_t seed = 1;
  for (size_t u = 0; u < options_.user_names.size(); ++u, seed += 8) {
    double w = options_.user_weights.empty() ? 1.0 : options_.user_weights[u];
    users_.push_back(
        std::make_unique<Group>(options_.user_names[u], w, cap, seed));
  }
  for (size_t c = 0; c < options_.class_names.size(); ++c, seed += 8) {
    classes_.push_back(
        std::make_unique<Group>(options_.class_names[c], 1.0, cap, seed));
  }
  total_ = std::make_unique<Group>("all", 1.0, cap, seed);
  user_waiting_.assign(users_.size(), 0);
  user_service_.assign(users_.size(), 0.0);
  user_backlogged_ = std::make_unique<bool[]>(users_.size());
  if (static_cast<int>(users_.size()) <= options_.max_gap_users) {
    gap_ = std::make_unique<ServiceGapTracker>(static_cast<int>(users_.size()));
  }
  if (options_.publish_interval == absl::ZeroDuration()) {
    next_publish_ = absl::InfiniteFuture();
  }
  // Readers get the empty run's report, never null, until the first
  // publication.
  Publish();
}

MetricsCollector::~MetricsCollector() = default;

MetricsCollector::Group& MetricsCollector::UserGroup(const Track& t) {
  return *users_[t.user];
}
MetricsCollector::Group& MetricsCollector::ClassGroup(const Track& t) {
  return *classes_[t.cls];
}

void MetricsCollector::NoteTime(absl::Time t) {
  if (t < first_time_) {
    first_time_ = t;
    if (options_.series_interval > absl::ZeroDuration()) next_sample_ = t;
  }
  if (t > last_time_) last_time_ = t;
}

MetricsCollector::Track* MetricsCollector::FindOrCreate(const RequestEvent& e) {
  auto it = tracks_.find(e.id);
  if (it != tracks_.end()) return &it->second;
  // Unknown ids and ids outside the registries are ignored rather than
  // trusted: a sink must never crash its host.
  if (!e.user.valid() || e.user.value() >= users_.size() ||
      !e.work_class.valid() || e.work_class.value() >= classes_.size()) {
    return nullptr;
  }
  Track& t = tracks_[e.id];
  t.user = e.user.value();
  t.cls = e.work_class.value();
  t.prompt = e.prompt_tokens;
  t.arrival = e.time;
  t.ttft_slo = e.ttft_slo;
  t.tpot_slo = e.tpot_slo;
  for (Group* g : {&UserGroup(t), &ClassGroup(t), total_.get()}) {
    ++g->report.arrived;
  }
  NoteTime(e.time);
  SetWaiting(t, true);
  return &t;
}

void MetricsCollector::SetWaiting(Track& t, bool waiting) {
  if (t.waiting == waiting) return;
  t.waiting = waiting;
  const int32_t delta = waiting ? 1 : -1;
  user_waiting_[t.user] += delta;
  waiting_ += delta;
}

void MetricsCollector::OnRequestEvent(const RequestEvent& e) {
  Track* t = FindOrCreate(e);
  if (t == nullptr) return;
  NoteTime(e.time);
  switch (e.kind) {
    case RequestEventKind::kArrive:
    case RequestEventKind::kFirstToken:
      break;
    case RequestEventKind::kAdmit:
      if (!t->admitted_once) {
        t->admitted_once = true;
        const double wait = Seconds(e.time - t->arrival);
        const uint64_t prompt = static_cast<uint64_t>(std::max(e.prompt_tokens, 0));
        const uint64_t hit = static_cast<uint64_t>(
            std::clamp(e.cached_tokens, 0, std::max(e.prompt_tokens, 0)));
        for (Group* g : {&UserGroup(*t), &ClassGroup(*t), total_.get()}) {
          g->queue_wait.Add(wait);
          g->report.histograms.queue_wait.Observe(wait);
          g->report.prefix_queried_tokens += prompt;
          g->report.prefix_hit_tokens += hit;
        }
      }
      SetWaiting(*t, false);
      if (!t->running) ++running_;
      t->running = true;
      break;
    case RequestEventKind::kPreempt:
      for (Group* g : {&UserGroup(*t), &ClassGroup(*t), total_.get()}) {
        ++g->report.preemptions;
      }
      if (t->running) --running_;
      t->running = false;
      SetWaiting(*t, true);
      break;
    case RequestEventKind::kRetry:
      // The request starts over (progress reset). Its first token, if any,
      // stays its TTFT; the next token's gap spans the retry.
      for (Group* g : {&UserGroup(*t), &ClassGroup(*t), total_.get()}) {
        ++g->report.retries;
      }
      if (t->running) --running_;
      t->running = false;
      t->output = 0;
      SetWaiting(*t, true);
      break;
    case RequestEventKind::kEnd:
      if (!t->end_pending) pending_end_.push_back(e.id);
      t->end_pending = true;
      t->end_phase = e.phase;
      t->end_time = e.time;
      break;
  }
}

void MetricsCollector::RecordFirstOutput(Track& t, absl::Time end) {
  t.first_token = end;
  const double ttft = Seconds(end - t.arrival);
  for (Group* g : {&UserGroup(t), &ClassGroup(t), total_.get()}) {
    g->ttft.Add(ttft);
    g->report.histograms.ttft.Observe(ttft);
  }
}

void MetricsCollector::ApplyServed(Track& t, const ScheduledSequence& s,
                                   int32_t produced, absl::Time end) {
  const int64_t prefill = s.decode ? 0 : s.num_tokens;
  const int64_t dec = s.decode ? produced : 0;
  const double weighted =
      options_.prefill_weight * prefill + options_.decode_weight * dec;
  Group& user = UserGroup(t);
  for (Group* g : {&user, &ClassGroup(t), total_.get()}) {
    g->report.prefill_tokens += prefill;
    g->report.decode_tokens += dec;
    g->report.weighted_service += weighted;
  }
  user_service_[t.user] += weighted / user.report.weight;
  if (produced <= 0) return;
  int32_t gaps = produced;
  if (t.first_token == absl::InfiniteFuture()) {
    RecordFirstOutput(t, end);
    --gaps;
  }
  if (gaps > 0) {
    // Tokens of one speculative step share its gap: each is observed at
    // the step's gap over their number, as the mean a client sees.
    const double gap = Seconds(end - t.last_token) / gaps;
    for (Group* g : {&user, &ClassGroup(t), total_.get()}) {
      for (int32_t k = 0; k < gaps; ++k) {
        g->itl.Add(gap);
        g->report.histograms.itl.Observe(gap);
      }
    }
  }
  t.last_token = end;
  t.output += produced;
  t.produced += produced;
  for (Group* g : {&user, &ClassGroup(t), total_.get()}) {
    g->report.output_tokens += produced;
  }
}

void MetricsCollector::OnStep(const StepPlan& plan,
                              const StepOutcome& outcome) {
  const absl::Time end = StepEnd(plan, outcome, options_.clock, last_step_end_);
  ++steps_;
  // With overlapped planning a step is planned before the one before it
  // ended; its engine time starts where that one's stopped.
  busy_ += std::max(absl::ZeroDuration(), end - std::max(plan.now, last_step_end_));
  last_step_end_ = std::max(last_step_end_, end);
  for (size_t i = 0; i < plan.sequences.size(); ++i) {
    const ScheduledSequence& s = plan.sequences[i];
    // Overlapped planning: entries voided while outstanding computed nothing
    // that counts.
    if (!plan.voided.empty() && IsVoided(plan, s.id)) continue;
    auto it = tracks_.find(s.id);
    if (it == tracks_.end()) continue;
    int32_t produced = 0;
    bool pooled = false;
    if (i < outcome.sequences.size()) {
      const SequenceOutcome& o = outcome.sequences[i];
      const bool ran = o.id == s.id && o.error.empty() && !o.out_of_kv;
      if (ran && o.produced_token) {
        produced = 1 + std::clamp<int32_t>(o.accepted_drafts, 0, s.draft_tokens);
      }
      pooled = ran && s.pool;
    }
    ApplyServed(it->second, s, produced, end);
    // An embedding's vector is its only output: its TTFT, no token counted.
    if (pooled && it->second.first_token == absl::InfiniteFuture()) {
      RecordFirstOutput(it->second, end);
    }
  }
  for (const EncoderInput& in : plan.encoder_inputs) {
    if (!plan.voided.empty() && IsVoided(plan, in.id)) continue;
    auto it = tracks_.find(in.id);
    if (it == tracks_.end()) continue;
    for (Group* g : {&UserGroup(it->second), &ClassGroup(it->second), total_.get()}) {
      (in.encode ? g->report.encoder_tokens : g->report.encoder_cache_hit_tokens) += in.length;
    }
  }
  if (!plan.sequences.empty()) NoteTime(end);
  if (gap_ != nullptr) {
    // Only the gap tracker reads backlog flags (off for many tenants).
    for (size_t u = 0; u < users_.size(); ++u) {
      user_backlogged_[u] = user_waiting_[u] > 0;
    }
    gap_->Update(user_service_,
                 absl::MakeConstSpan(user_backlogged_.get(), users_.size()));
  }
  Flush();
  MaybeSample(end);
  MaybePublish(end);
}

void MetricsCollector::Flush() {
  for (RequestId id : pending_end_) {
    auto it = tracks_.find(id);
    if (it == tracks_.end()) continue;
    Finalize(it->second);
    tracks_.erase(it);
  }
  pending_end_.clear();
}

namespace {

void Count(metrics_internal::Verdict v, SloCount& c) {
  if (v == metrics_internal::Verdict::kMet) ++c.met;
  if (v == metrics_internal::Verdict::kMissed) ++c.missed;
}

}  // namespace

void MetricsCollector::Finalize(Track& t) {
  SetWaiting(t, false);
  if (t.running) --running_;
  t.running = false;
  Group* groups[] = {&UserGroup(t), &ClassGroup(t), total_.get()};
  const SloTarget slo = options_.class_slos.empty() ? SloTarget{}
                                                    : options_.class_slos[t.cls];
  metrics_internal::EndedRequest ended{.phase = t.end_phase,
                                       .arrival = t.arrival,
                                       .first_token = t.first_token,
                                       .last_token = t.last_token,
                                       .end = t.end_time,
                                       .produced = t.produced};
  bool met = false;
  if (t.end_phase == RequestPhase::kFinished) {
    const absl::Time last =
        t.output > 0 ? t.last_token : std::max(t.end_time, t.arrival);
    const absl::Duration e2e = last - t.arrival;
    const double norm = Seconds(e2e) / std::max(t.output, 1);
    for (Group* g : groups) {
      g->e2e.Add(Seconds(e2e));
      g->report.histograms.e2e.Observe(Seconds(e2e));
      g->norm.Add(norm);
    }
    met = ended.Ttft() <= slo.ttft && ended.Tpot() <= slo.tpot && e2e <= slo.e2e;
  }
  const metrics_internal::Verdict ttft = metrics_internal::JudgeTtft(ended, t.ttft_slo);
  const metrics_internal::Verdict tpot = metrics_internal::JudgeTpot(ended, t.tpot_slo);
  for (Group* g : groups) {
    GroupReport& r = g->report;
    switch (t.end_phase) {
      case RequestPhase::kFinished: ++r.finished; break;
      case RequestPhase::kTimedOut: ++r.timed_out; break;
      case RequestPhase::kCancelled: ++r.cancelled; break;
      case RequestPhase::kRejected: ++r.rejected; break;
      default: ++r.failed; break;
    }
    if (t.end_phase != RequestPhase::kCancelled) ++r.slo_eligible;
    if (met) ++r.slo_met;
    Count(ttft, r.ttft_slo);
    Count(tpot, r.tpot_slo);
  }
  if (met) {
    ++goodput_requests_;
    goodput_tokens_ += t.output;
  }
  NoteTime(t.output > 0 ? std::max(t.last_token, t.end_time) : t.end_time);
}

void MetricsCollector::MaybeSample(absl::Time end) {
  if (options_.series_interval <= absl::ZeroDuration() || end < next_sample_) {
    return;
  }
  SeriesPoint p;
  p.time_s = Seconds(end - first_time_);
  p.waiting = waiting_;
  p.running = running_;
  p.output_tokens = total_->report.output_tokens;
  p.prefill_tokens = total_->report.prefill_tokens;
  p.user_service = user_service_;
  series_.push_back(std::move(p));
  // Skip whole intervals that passed in one long step or an idle gap.
  absl::Duration rem;
  const int64_t skipped =
      absl::IDivDuration(end - next_sample_, options_.series_interval, &rem);
  next_sample_ += options_.series_interval * (skipped + 1);
}

absl::Span<const double> MetricsCollector::ClassTtftSamples(
    WorkClassId c) const {
  if (!c.valid() || c.value() >= classes_.size()) return {};
  return classes_[c.value()]->ttft.Sorted();
}

MetricsReport MetricsCollector::Report() const {
  MetricsReport r;
  std::vector<double> served;
  for (const auto& g : users_) {
    GroupReport gr = g->report;
    Summarize(g->queue_wait, g->ttft, g->itl, g->e2e, g->norm, gr);
    gr.normalized_service = gr.weighted_service / gr.weight;
    if (gr.arrived > 0) served.push_back(gr.normalized_service);
    r.users.push_back(std::move(gr));
  }
  for (const auto& g : classes_) {
    GroupReport gr = g->report;
    Summarize(g->queue_wait, g->ttft, g->itl, g->e2e, g->norm, gr);
    gr.normalized_service = gr.weighted_service;
    r.classes.push_back(std::move(gr));
  }
  r.total = total_->report;
  Summarize(total_->queue_wait, total_->ttft, total_->itl, total_->e2e,
            total_->norm, r.total);
  r.total.normalized_service = r.total.weighted_service;
  r.steps = steps_;
  r.busy_seconds = Seconds(busy_);
  if (last_time_ > first_time_) {
    r.window_seconds = Seconds(last_time_ - first_time_);
    r.output_tokens_per_s = r.total.output_tokens / r.window_seconds;
    r.prefill_tokens_per_s = r.total.prefill_tokens / r.window_seconds;
    r.finished_per_s = r.total.finished / r.window_seconds;
    r.goodput_requests_per_s = goodput_requests_ / r.window_seconds;
    r.goodput_tokens_per_s = goodput_tokens_ / r.window_seconds;
  }
  r.jain_index = JainIndex(served);
  r.max_backlogged_service_gap = gap_ != nullptr ? gap_->max_gap() : -1.0;
  return r;
}

}  // namespace hearth
