#include "hearth/sim/servegen_trace.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "internal/status_macros.h"
#include "sim/length_sampling.h"
#include "sim/sim_random.h"
#include "sim/toml_util.h"
#include "sim/trace_lines.h"

namespace hearth {

using internal::RowError;

namespace {

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
      return RowError(name, n, absl::StrCat(names[i], " '", std::string(f[i]),
                                            "' must be a finite number >= 0"));
    }
    *slots[i] = v;
  }
  if (f[3] == "Gamma") {
    w.pattern = ArrivalPattern::kGamma;
  } else if (f[3] == "Weibull") {
    w.pattern = ArrivalPattern::kWeibull;
  } else if (!f[3].empty()) {
    return RowError(name, n, absl::StrCat("pattern '", std::string(f[3]),
                                          "' must be Gamma, Weibull or empty"));
  }
  if (w.pattern != ArrivalPattern::kIdle && (w.shape <= 0 || w.scale <= 0)) {
    return RowError(name, n, "shape and scale must be > 0 with a pattern");
  }
  return w;
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

std::vector<absl::Duration> SampleServeGenArrivals(
    const std::vector<ServeGenWindow>& windows, absl::Duration start,
    absl::Duration duration, double rate_scale, uint64_t seed) {
  std::vector<absl::Duration> out;
  internal::SimRandom rng(seed);
  const double from = absl::ToDoubleSeconds(start);
  const double to = from + absl::ToDoubleSeconds(duration);
  for (size_t i = 0; i < windows.size(); ++i) {
    const ServeGenWindow& w = windows[i];
    const double end = i + 1 < windows.size() ? windows[i + 1].start_s
                                              : w.start_s + 600;
    const double rate = w.rate * rate_scale;
    if (end <= from || w.start_s >= to || rate <= 0) continue;
    // Mean of the fitted inter-arrival distribution, to rescale it to 1/rate
    // as ServeGen does.
    double mean = 1;
    if (w.pattern == ArrivalPattern::kGamma) mean = w.shape * w.scale;
    if (w.pattern == ArrivalPattern::kWeibull) {
      mean = w.scale * std::tgamma(1 + 1 / w.shape);
    }
    const double k = (1 / rate) / mean;
    for (double t = w.start_s;;) {
      double gap = 0;
      switch (w.pattern) {
        case ArrivalPattern::kGamma: gap = rng.Gamma(w.shape, w.scale) * k; break;
        case ArrivalPattern::kWeibull: gap = rng.Weibull(w.shape, w.scale) * k; break;
        case ArrivalPattern::kIdle: gap = rng.Exponential(1 / rate); break;
      }
      t += gap;
      if (t >= end || t >= to) break;
      if (t >= from) out.push_back(absl::Nanoseconds(std::llround((t - from) * 1e9)));
    }
  }
  return out;
}

absl::StatusOr<Workload> LoadServeGen(const ServeGenOptions& o) {
  if (o.clients.empty()) {
    return absl::InvalidArgumentError("servegen: clients must not be empty");
  }
  if (!(o.rate_scale > 0) || o.duration <= absl::ZeroDuration() ||
      o.start < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "servegen: rate_scale and duration must be > 0, start >= 0");
  }
  HEARTH_RETURN_IF_ERROR(ValidateLengthDistribution(o.prompt, "servegen prompt"));
  HEARTH_RETURN_IF_ERROR(ValidateLengthDistribution(o.output, "servegen output"));
  struct Item {
    absl::Duration at;
    size_t client;
  };
  std::vector<Item> items;
  for (size_t c = 0; c < o.clients.size(); ++c) {
    const std::string file = absl::StrCat(o.directory, "/chunk-",
                                          o.clients[c].client_id, "-trace.csv");
    HEARTH_ASSIGN_OR_RETURN(std::string text, internal::ReadFileToString(file));
    HEARTH_ASSIGN_OR_RETURN(std::vector<ServeGenWindow> windows,
                            ParseServeGenClient(text, file));
    for (absl::Duration at : SampleServeGenArrivals(
             windows, o.start, o.duration, o.rate_scale,
             o.seed * 1000003 + static_cast<uint64_t>(o.clients[c].client_id))) {
      items.push_back({at, c});
    }
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
    r.prompt_tokens = internal::SampleLength(o.prompt, rng);
    r.output_tokens = internal::SampleLength(o.output, rng);
    r.label = absl::StrCat("servegen:", c.client_id);
    w.requests.push_back(std::move(r));
  }
  return w;
}

}  // namespace hearth
