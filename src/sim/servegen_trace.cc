#include "hearth/sim/servegen_trace.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "internal/status_macros.h"
#include "sim/length_sampling.h"
#include "sim/quote.h"
#include "sim/request_cap.h"
#include "sim/sim_random.h"
#include "sim/toml_util.h"
#include "sim/trace_lines.h"

namespace hearth {

using internal::RowError;

namespace {

// Below this shape Weibull's mean, scale * tgamma(1 + 1/shape), overflows a
// double (tgamma overflows past 171.6).
constexpr double kMinWeibullShape = 1.0 / 170;

// Mean of the fitted inter-arrival distribution; its samples are rescaled by
// 1 / (rate * mean) to give the window's rate, as ServeGen does.
double FittedMean(const ServeGenWindow& w) {
  switch (w.pattern) {
    case ArrivalPattern::kGamma: return w.shape * w.scale;
    case ArrivalPattern::kWeibull: return w.scale * std::tgamma(1 + 1 / w.shape);
    case ArrivalPattern::kIdle: break;
  }
  return 1;
}

// The fit's parameters give a finite, positive mean, so the rescaled gaps
// are finite and the sampling loop advances.
absl::Status CheckFit(const ServeGenWindow& w) {
  if (w.pattern == ArrivalPattern::kWeibull && w.shape < kMinWeibullShape) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Weibull shape ", w.shape, " must be in [", kMinWeibullShape,
        ", inf): below it the mean scale * tgamma(1 + 1/shape) overflows"));
  }
  const double mean = FittedMean(w);
  if (!(std::isfinite(mean) && mean > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape ", w.shape, " and scale ", w.scale,
        " give an inter-arrival mean of ", mean, "; it must be finite and > 0"));
  }
  return absl::OkStatus();
}

// The window on one row: time_s,rate,cv,pattern,shape,scale.
absl::StatusOr<ServeGenWindow> ParseWindow(absl::string_view line,
                                           const std::string& name, int64_t n) {
  const std::vector<absl::string_view> f = absl::StrSplit(line, ',');
  if (f.size() != 6) {
    return RowError(name, n, absl::StrCat("expected 6 fields (time_s,rate,cv,"
                                          "pattern,shape,scale), found ",
                                          f.size()));
  }
  ServeGenWindow w;
  const char* names[] = {"time_s", "rate", "cv", "", "shape", "scale"};
  double* slots[] = {&w.start_s, &w.rate, &w.cv, nullptr, &w.shape, &w.scale};
  for (int i = 0; i < 6; ++i) {
    if (slots[i] == nullptr) continue;
    double v = 0;
    if (!absl::SimpleAtod(f[i], &v) || !std::isfinite(v) || v < 0) {
      return RowError(name, n, absl::StrCat(names[i], " ", internal::Quote(f[i]),
                                            " must be a finite number >= 0"));
    }
    *slots[i] = v;
  }
  if (f[3] == "Gamma") {
    w.pattern = ArrivalPattern::kGamma;
  } else if (f[3] == "Weibull") {
    w.pattern = ArrivalPattern::kWeibull;
  } else if (!f[3].empty()) {
    return RowError(name, n, absl::StrCat("pattern ", internal::Quote(f[3]),
                                          " must be Gamma, Weibull or empty"));
  }
  // Arrivals become int64 nanoseconds after the replay's start: 1e9 s keeps
  // them within range (and is some 31 years of trace).
  if (w.start_s > 1e9) {
    return RowError(name, n, absl::StrCat("time_s ", internal::Quote(f[0]), " must be at most 1e9"));
  }
  if (w.pattern != ArrivalPattern::kIdle && (w.shape <= 0 || w.scale <= 0)) {
    return RowError(name, n, "shape and scale must be > 0 with a pattern");
  }
  if (absl::Status st = CheckFit(w); !st.ok()) return RowError(name, n, st.message());
  return w;
}

// The part of a window the sampler walks: from the window's start (draws
// before the replay's start are discarded) to the next window, the replay's
// end, or 600 s for the last window.
struct Span {
  const ServeGenWindow* window;
  double end;
  double rate;
};

std::vector<Span> SpansToSample(const std::vector<ServeGenWindow>& windows,
                                double from, double to, double rate_scale) {
  std::vector<Span> out;
  for (size_t i = 0; i < windows.size(); ++i) {
    const ServeGenWindow& w = windows[i];
    const double end = i + 1 < windows.size() ? windows[i + 1].start_s : w.start_s + 600;
    const double rate = w.rate * rate_scale;
    if (end <= from || w.start_s >= to || rate <= 0) continue;
    out.push_back({&w, std::min(end, to), rate});
  }
  return out;
}

double ExpectedDraws(const std::vector<Span>& spans) {
  double n = 0;
  for (const Span& s : spans) n += s.rate * (s.end - s.window->start_s);
  return n;
}

absl::Status CheckExpected(double expected, int64_t request_cap) {
  if (expected <= static_cast<double>(request_cap)) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "servegen: about ", expected, " arrivals expected (rate x rate_scale x duration_s), "
      "over the request_cap of ", request_cap, " (", internal::RequestCapMemoryText(request_cap),
      "); lower duration_s, rate_scale or the clients' rates, or raise request_cap"));
}

absl::Status DrawCapError(int64_t request_cap) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "servegen: drew more than request_cap = ", request_cap,
      " arrival gaps (a fit whose gaps are mostly 0, or a rate near the cap); "
      "lower duration_s or rate_scale, or raise request_cap"));
}

double DrawGap(const ServeGenWindow& w, double rate, double k, internal::SimRandom& rng) {
  switch (w.pattern) {
    case ArrivalPattern::kGamma: return rng.Gamma(w.shape, w.scale) * k;
    case ArrivalPattern::kWeibull: return rng.Weibull(w.shape, w.scale) * k;
    case ArrivalPattern::kIdle: break;
  }
  return rng.Exponential(1 / rate);
}

}  // namespace

absl::StatusOr<std::vector<ServeGenWindow>> ParseServeGenClient(
    std::string_view text, const std::string& name) {
  std::vector<ServeGenWindow> out;
  for (const internal::TraceLine& line : internal::SplitTraceLines(text)) {
    if (line.text.empty()) continue;
    HEARTH_ASSIGN_OR_RETURN(ServeGenWindow w, ParseWindow(line.text, name, line.number));
    if (!out.empty() && w.start_s <= out.back().start_s) {
      return RowError(name, line.number, "time_s must increase from row to row");
    }
    out.push_back(w);
  }
  return out;
}

absl::StatusOr<std::vector<absl::Duration>> SampleServeGenArrivals(
    const std::vector<ServeGenWindow>& windows, absl::Duration start,
    absl::Duration duration, double rate_scale, uint64_t seed,
    int64_t request_cap) {
  const double from = absl::ToDoubleSeconds(start);
  const std::vector<Span> spans =
      SpansToSample(windows, from, from + absl::ToDoubleSeconds(duration), rate_scale);
  for (const Span& s : spans) HEARTH_RETURN_IF_ERROR(CheckFit(*s.window));
  HEARTH_RETURN_IF_ERROR(CheckExpected(ExpectedDraws(spans), request_cap));
  std::vector<absl::Duration> out;
  internal::SimRandom rng(seed);
  int64_t draws = 0;
  for (const Span& s : spans) {
    const double k = (1 / s.rate) / FittedMean(*s.window);
    for (double t = s.window->start_s;;) {
      // Bounds the loop even when gaps come out 0 (a heavy-tailed fit).
      if (++draws > request_cap) return DrawCapError(request_cap);
      const double gap = DrawGap(*s.window, s.rate, k, rng);
      if (std::isnan(gap) || gap < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "servegen window at time_s ", s.window->start_s, " drew the arrival gap ", gap,
            "; gaps must be >= 0 (check its rate, shape and scale)"));
      }
      t += gap;
      if (t >= s.end) break;
      if (t >= from) out.push_back(absl::Nanoseconds(std::llround((t - from) * 1e9)));
    }
  }
  return out;
}

namespace {

struct ClientWindows {
  std::vector<ServeGenWindow> windows;
  // Empty without lengths_from_datasets.
  std::vector<ServeGenLengthWindow> lengths;
  uint64_t seed = 0;
};

absl::StatusOr<std::vector<ServeGenLengthWindow>> ReadDataset(const ServeGenOptions& o,
                                                              int32_t client_id) {
  const std::string& dir = o.dataset_directory.empty() ? o.directory : o.dataset_directory;
  const std::string file = absl::StrCat(dir, "/chunk-", client_id, "-dataset.json");
  HEARTH_ASSIGN_OR_RETURN(std::string text, internal::ReadFileToString(file));
  return ParseServeGenDataset(text, file);
}

// A request's lengths: its client's window for trace time `t_s` when there
// is one, else the configured distributions.
void DrawLengths(const ServeGenOptions& o, const ClientWindows& client, double t_s,
                 internal::SimRandom& rng, SimRequest& r) {
  if (const ServeGenLengthWindow* w = ServeGenWindowAt(client.lengths, t_s)) {
    r.prompt_tokens = w->input.At(rng.Uniform());
    r.output_tokens = w->output.At(rng.Uniform());
    return;
  }
  r.prompt_tokens = internal::SampleLength(o.prompt, rng);
  r.output_tokens = internal::SampleLength(o.output, rng);
}

// Every client's windows, after checking that their expected arrivals
// together stay within the cap (before any memory is spent on them).
absl::StatusOr<std::vector<ClientWindows>> ReadClients(const ServeGenOptions& o) {
  std::vector<ClientWindows> out;
  double expected = 0;
  const double from = absl::ToDoubleSeconds(o.start);
  const double to = from + absl::ToDoubleSeconds(o.duration);
  for (const ServeGenClient& c : o.clients) {
    const std::string file = absl::StrCat(o.directory, "/chunk-", c.client_id, "-trace.csv");
    HEARTH_ASSIGN_OR_RETURN(std::string text, internal::ReadFileToString(file));
    ClientWindows cw;
    HEARTH_ASSIGN_OR_RETURN(cw.windows, ParseServeGenClient(text, file));
    if (o.lengths_from_datasets) {
      HEARTH_ASSIGN_OR_RETURN(cw.lengths, ReadDataset(o, c.client_id));
    }
    cw.seed = o.seed * 1000003 + static_cast<uint64_t>(c.client_id);
    expected += ExpectedDraws(SpansToSample(cw.windows, from, to, o.rate_scale));
    out.push_back(std::move(cw));
  }
  HEARTH_RETURN_IF_ERROR(CheckExpected(expected, o.request_cap));
  return out;
}

}  // namespace

absl::StatusOr<Workload> LoadServeGen(const ServeGenOptions& o) {
  if (o.clients.empty()) {
    return absl::InvalidArgumentError("servegen: clients must not be empty");
  }
  if (!(o.rate_scale > 0) || o.duration <= absl::ZeroDuration() ||
      o.start < absl::ZeroDuration() || o.request_cap < 1) {
    return absl::InvalidArgumentError(
        "servegen: rate_scale, duration and request_cap must be > 0, start >= 0");
  }
  HEARTH_RETURN_IF_ERROR(ValidateLengthDistribution(o.prompt, "servegen prompt"));
  HEARTH_RETURN_IF_ERROR(ValidateLengthDistribution(o.output, "servegen output"));
  HEARTH_ASSIGN_OR_RETURN(std::vector<ClientWindows> clients, ReadClients(o));
  struct Item {
    absl::Duration at;
    size_t client;
  };
  std::vector<Item> items;
  for (size_t c = 0; c < clients.size(); ++c) {
    const int64_t left = o.request_cap - static_cast<int64_t>(items.size());
    HEARTH_ASSIGN_OR_RETURN(
        std::vector<absl::Duration> arrivals,
        SampleServeGenArrivals(clients[c].windows, o.start, o.duration, o.rate_scale,
                               clients[c].seed, std::max<int64_t>(left, 1)));
    for (absl::Duration at : arrivals) items.push_back({at, c});
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.at < b.at; });
  internal::SimRandom rng(o.seed ^ 0xabcdefull);
  Workload w;
  w.requests.reserve(items.size());
  for (const Item& it : items) {
    const ServeGenClient& c = o.clients[it.client];
    SimRequest r;
    r.arrival = it.at;
    r.user = c.user;
    r.work_class = c.work_class;
    DrawLengths(o, clients[it.client], absl::ToDoubleSeconds(o.start + it.at), rng, r);
    r.label = absl::StrCat("servegen:", c.client_id);
    w.requests.push_back(std::move(r));
  }
  return w;
}

}  // namespace hearth
