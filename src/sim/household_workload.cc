#include "hearth/sim/household_workload.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "internal/status_macros.h"
#include "sim/length_sampling.h"
#include "sim/quote.h"
#include "sim/request_cap.h"
#include "sim/sim_random.h"

namespace hearth {
namespace {

absl::Status Validate(const HouseholdOptions& o) {
  if (o.members.empty() || o.classes.empty()) {
    return absl::InvalidArgumentError(
        "household: members and classes must not be empty");
  }
  if (!o.diurnal.empty() && o.diurnal.size() != 24) {
    return absl::InvalidArgumentError(absl::StrCat(
        "household: diurnal needs 24 hourly values; got ", o.diurnal.size()));
  }
  for (double d : o.diurnal) {
    if (!(d >= 0) || !std::isfinite(d)) {
      return absl::InvalidArgumentError("household: diurnal values must be >= 0");
    }
  }
  if (!(o.load_scale >= 0) || o.duration <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "household: load_scale must be >= 0 and duration > 0");
  }
  for (const HouseholdMember& m : o.members) {
    if (!(m.activity >= 0)) {
      return absl::InvalidArgumentError("household: member activity must be >= 0");
    }
  }
  for (const HouseholdClassLoad& c : o.classes) {
    const std::string what = absl::StrCat("household class ", internal::Quote(c.name));
    if (!(c.sessions_per_hour >= 0) || c.calls_min < 1 ||
        c.calls_max < c.calls_min || c.max_prompt_tokens < 1 ||
        c.active_from_hour < 0 || c.active_from_hour > 23 ||
        c.active_to_hour < 0 || c.active_to_hour > 23) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": needs sessions_per_hour >= 0, 1 <= calls_min <= calls_max, "
                "max_prompt_tokens >= 1, hours in [0, 23]"));
    }
    HEARTH_RETURN_IF_ERROR(
        ValidateLengthDistribution(c.prompt, (what + " prompt").c_str()));
    HEARTH_RETURN_IF_ERROR(
        ValidateLengthDistribution(c.output, (what + " output").c_str()));
    HEARTH_RETURN_IF_ERROR(ValidateLengthDistribution(
        c.think_seconds, (what + " think_seconds").c_str()));
  }
  return absl::OkStatus();
}

bool Active(const HouseholdClassLoad& c, int hour) {
  if (c.active_from_hour == c.active_to_hour) return true;
  if (c.active_from_hour < c.active_to_hour) {
    return hour >= c.active_from_hour && hour < c.active_to_hour;
  }
  return hour >= c.active_from_hour || hour < c.active_to_hour;
}

// Rate multiplier of class `c` at `t` seconds since the simulated start.
double Shape(const HouseholdOptions& o, const std::vector<double>& curve,
             const HouseholdClassLoad& c, double t) {
  const double tod = std::fmod(absl::ToDoubleSeconds(o.start_time_of_day) + t, 86400.0);
  const int hour = static_cast<int>(tod / 3600) % 24;
  if (!Active(c, hour)) return 0;
  return c.follow_diurnal ? curve[hour] : 1.0;
}

bool Generates(const HouseholdClassLoad& c, uint32_t user) {
  return c.members.empty() ||
         std::find(c.members.begin(), c.members.end(), user) != c.members.end();
}

void EmitSession(const HouseholdClassLoad& c, uint32_t user, double start,
                 internal::SimRandom& rng, Workload& w, int64_t session) {
  const int32_t calls =
      static_cast<int32_t>(rng.UniformInt(c.calls_min, c.calls_max));
  int32_t history = 0;
  // The session's photo, once shown: kept in the history it travels in.
  std::vector<EncoderSpan> spans;
  for (int32_t k = 0; k < calls; ++k) {
    SimRequest r;
    r.user = user;
    r.work_class = c.work_class;
    const int32_t photo = k == 0 ? c.photo_tokens : 0;
    const int32_t fresh = internal::SampleLength(c.prompt, rng) + photo;
    r.output_tokens = internal::SampleLength(c.output, rng);
    int64_t prompt = int64_t{history} + fresh;
    if (prompt > c.max_prompt_tokens) {
      // Too long: the client drops the history and starts afresh.
      prompt = std::min<int64_t>(fresh, c.max_prompt_tokens);
      history = 0;
      spans.clear();
    }
    if (photo > 0 && history + photo <= prompt) {
      spans.push_back({history, photo,
                       (static_cast<uint64_t>(session) << 20) ^ (uint64_t{user} << 8) ^ 0x9f0u});
    }
    r.encoder_spans = spans;
    r.prompt_tokens = static_cast<int32_t>(prompt);
    r.label = absl::StrCat(c.name, ":", session, ".", k);
    r.kind = c.kind;
    r.pooling = c.pooling;
    if (k == 0 || c.burst) {
      r.arrival = absl::Nanoseconds(std::llround(start * 1e9));
    } else {
      r.parent = static_cast<int32_t>(w.requests.size() - 1);
      r.think_time = absl::Seconds(internal::SampleLength(c.think_seconds, rng));
      r.shared_prefix_tokens = std::min(history, r.prompt_tokens);
    }
    history = c.carry_history ? r.prompt_tokens + r.output_tokens : 0;
    if (!c.carry_history) spans.clear();
    w.requests.push_back(std::move(r));
  }
}

}  // namespace

std::vector<double> DefaultDiurnalCurve() {
  //        0    1    2    3    4    5    6    7    8    9   10   11
  return {0.15, 0.08, 0.05, 0.05, 0.05, 0.08, 0.3, 0.7, 0.8, 0.5, 0.4, 0.45,
          0.6,  0.5,  0.4,  0.45, 0.55, 0.7, 0.85, 0.95, 1.0, 0.95, 0.7, 0.35};
  //       12   13   14   15   16   17   18    19   20   21    22   23
}

double ExpectedCallsPerSecond(const HouseholdOptions& o) {
  const std::vector<double> curve = o.diurnal.empty() ? DefaultDiurnalCurve() : o.diurnal;
  const double span = absl::ToDoubleSeconds(o.duration);
  double calls = 0;
  for (const HouseholdClassLoad& c : o.classes) {
    double shape = 0;  // integral of the multiplier over the span, in seconds
    for (double t = 0; t < span; t += 60) shape += Shape(o, curve, c, t) * std::min(60.0, span - t);
    for (const HouseholdMember& m : o.members) {
      if (!Generates(c, m.user)) continue;
      calls += c.sessions_per_hour / 3600 * m.activity * o.load_scale * shape *
               (c.calls_min + c.calls_max) / 2.0;
    }
  }
  return calls / span;
}

namespace {

absl::Status CapError(const HouseholdOptions& o, double calls) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "household: about ", calls, " calls expected (load_scale x duration_s), over the "
      "request_cap of ", o.request_cap, " (", internal::RequestCapMemoryText(o.request_cap),
      "); lower duration_s, load or load_scale, or raise request_cap"));
}

}  // namespace

absl::StatusOr<Workload> GenerateHousehold(const HouseholdOptions& o) {
  HEARTH_RETURN_IF_ERROR(Validate(o));
  if (o.request_cap < 1) {
    return absl::InvalidArgumentError("household: request_cap must be >= 1");
  }
  const double expected = ExpectedCallsPerSecond(o) * absl::ToDoubleSeconds(o.duration);
  if (!(expected <= static_cast<double>(o.request_cap))) return CapError(o, expected);
  const std::vector<double> curve = o.diurnal.empty() ? DefaultDiurnalCurve() : o.diurnal;
  const double peak = *std::max_element(curve.begin(), curve.end());
  const double span = absl::ToDoubleSeconds(o.duration);
  Workload w;
  int64_t session = 0;
  for (size_t ci = 0; ci < o.classes.size(); ++ci) {
    const HouseholdClassLoad& c = o.classes[ci];
    const double shape_max = c.follow_diurnal ? peak : 1.0;
    for (const HouseholdMember& m : o.members) {
      if (!Generates(c, m.user)) continue;
      const double max_rate =
          c.sessions_per_hour / 3600 * m.activity * o.load_scale * shape_max;
      if (max_rate <= 0) continue;
      // One stream per (class, member) so adding a member or class leaves
      // the others' arrivals unchanged.
      internal::SimRandom rng(o.seed * 0x100000001b3ull + ci * 7919 + m.user);
      // Thinning (Lewis and Shedler): candidates at the peak rate, kept with
      // probability rate(t) / peak.
      for (double t = rng.Exponential(1 / max_rate); t < span;
           t += rng.Exponential(1 / max_rate)) {
        if (rng.Uniform() * shape_max >= Shape(o, curve, c, t)) continue;
        EmitSession(c, m.user, t, rng, w, session++);
        // The expectation can undershoot a draw; the cap still holds.
        if (static_cast<int64_t>(w.requests.size()) > o.request_cap) {
          return CapError(o, expected);
        }
      }
    }
  }
  return w;
}

HouseholdOptions DefaultHousehold(int num_members, uint32_t voice, uint32_t chat,
                                  uint32_t documents, uint32_t agent,
                                  uint32_t batch) {
  HouseholdOptions o;
  for (int i = 0; i < num_members; ++i) {
    o.members.push_back({static_cast<uint32_t>(i), 1.0});
  }
  using L = LengthDistribution;
  if (voice != kNoClass) {
    HouseholdClassLoad c;
    c.name = "voice";
    c.work_class = voice;
    c.sessions_per_hour = 6;
    c.calls_min = 1;
    c.calls_max = 5;
    c.prompt = L::LogNormal(60, 0.5, 8, 400);
    c.output = L::LogNormal(40, 0.5, 4, 200);
    c.think_seconds = L::Uniform(2, 8);
    o.classes.push_back(c);
  }
  if (chat != kNoClass) {
    HouseholdClassLoad c;
    c.name = "chat";
    c.work_class = chat;
    c.sessions_per_hour = 3;
    c.calls_min = 1;
    c.calls_max = 8;
    c.prompt = L::LogNormal(250, 0.8, 16, 4000);
    c.output = L::LogNormal(250, 0.7, 16, 2000);
    c.think_seconds = L::LogNormal(30, 0.6, 5, 300);
    c.max_prompt_tokens = 16000;
    o.classes.push_back(c);
  }
  if (documents != kNoClass) {
    HouseholdClassLoad c;
    c.name = "documents";
    c.work_class = documents;
    c.sessions_per_hour = 0.4;
    c.prompt = L::Uniform(8000, 32000);
    c.output = L::LogNormal(400, 0.4, 100, 1200);
    c.carry_history = false;
    o.classes.push_back(c);
  }
  if (agent != kNoClass) {
    HouseholdClassLoad c;
    c.name = "agent";
    c.work_class = agent;
    c.sessions_per_hour = 0.6;
    c.calls_min = 3;
    c.calls_max = 12;
    c.prompt = L::LogNormal(600, 0.7, 100, 4000);
    c.output = L::LogNormal(150, 0.6, 16, 800);
    c.think_seconds = L::Uniform(1, 10);
    c.max_prompt_tokens = 24000;
    o.classes.push_back(c);
  }
  if (batch != kNoClass) {
    HouseholdClassLoad c;
    c.name = "nightly";
    c.work_class = batch;
    c.members = {0};
    c.sessions_per_hour = 20;
    c.calls_min = 5;
    c.calls_max = 20;
    c.prompt = L::Uniform(512, 4096);
    c.output = L::LogNormal(64, 0.5, 1, 512);
    c.think_seconds = L::Fixed(1);
    c.carry_history = false;
    c.active_from_hour = 1;
    c.active_to_hour = 5;
    c.follow_diurnal = false;
    o.classes.push_back(c);
  }
  return o;
}

HouseholdClassLoad EmbeddingJob(uint32_t work_class) {
  using L = LengthDistribution;
  HouseholdClassLoad c;
  c.name = "embedding";
  c.work_class = work_class;
  c.members = {0};
  c.sessions_per_hour = 6;
  c.calls_min = 20;
  c.calls_max = 80;
  c.prompt = L::Uniform(256, 1024);
  c.output = L::Fixed(1);
  c.carry_history = false;
  c.burst = true;
  c.follow_diurnal = false;
  c.kind = RequestKind::kEmbed;
  c.pooling = Pooling::kMean;
  return c;
}

HouseholdClassLoad PhotoAnalysis(uint32_t work_class) {
  using L = LengthDistribution;
  HouseholdClassLoad c;
  c.name = "photo";
  c.work_class = work_class;
  c.sessions_per_hour = 1.5;
  c.calls_min = 1;
  c.calls_max = 3;
  c.prompt = L::Uniform(12, 60);
  c.output = L::LogNormal(120, 0.5, 16, 400);
  c.think_seconds = L::Uniform(5, 20);
  c.photo_tokens = 576;
  return c;
}

}  // namespace hearth
