// File: hearth/sim/servegen_trace.h
//
// Arrivals sampled from Alibaba ServeGen per-client statistics (Xiang et al.,
// arXiv:2505.09999; ../shared/traces/servegen). ServeGen publishes no request
// log: each client file `chunk-<id>-trace.csv` (no header) holds one row per
// 600 s window: `time_s,rate,cv,pattern,shape,scale` — the client's request
// rate in the window and a fitted inter-arrival distribution (Gamma or
// Weibull, empty when idle). As ServeGen's own generator does, arrivals in a
// window are drawn from that distribution rescaled so its mean is 1/rate.
//
// Lengths: by default from the configured distributions, the same for every
// client. With lengths_from_datasets, each client draws from its own
// chunk-<id>-dataset.json (servegen_dataset.h) for the trace time of the
// request, falling back to the configured distributions before its first
// window with data. (The m-large copy in ../shared/traces ships no dataset
// files.) Each chosen client
// becomes one simulated user (a tenant), with a work class of its own.
//
// Example:
//   hearth::ServeGenOptions o;
//   o.directory = "traces/servegen/language_m-large";
//   o.clients = {{.client_id = 61, .user = 0}, {.client_id = 142, .user = 1}};
//   o.start = absl::Hours(20);  o.duration = absl::Hours(1);
//   o.rate_scale = 0.05;        // a home GPU, not a production fleet
//   absl::StatusOr<hearth::Workload> w = hearth::LoadServeGen(o);

#ifndef HEARTH_SIM_SERVEGEN_TRACE_H_
#define HEARTH_SIM_SERVEGEN_TRACE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hearth/sim/length_distribution.h"
#include "hearth/sim/servegen_dataset.h"
#include "hearth/sim/workload.h"

namespace hearth {

enum class ArrivalPattern { kIdle, kGamma, kWeibull };

struct ServeGenWindow {
  double start_s = 0;
  double rate = 0;  // requests per second
  double cv = 0;
  ArrivalPattern pattern = ArrivalPattern::kIdle;
  double shape = 0;
  double scale = 0;
};

// Parses one client file; errors name the file and line.
absl::StatusOr<std::vector<ServeGenWindow>> ParseServeGenClient(
    std::string_view text, const std::string& name);

struct ServeGenClient {
  int32_t client_id = 0;
  uint32_t user = 0;
  uint32_t work_class = 0;
};

struct ServeGenOptions {
  // Folder holding chunk-<id>-trace.csv files.
  std::string directory;
  // Non-empty.
  std::vector<ServeGenClient> clients;
  // Trace time where the replay starts (m-large covers 14 days from 0) and
  // how long it lasts. duration > 0.
  absl::Duration start = absl::ZeroDuration();
  absl::Duration duration = absl::Hours(1);
  // Multiplies every rate (> 0).
  double rate_scale = 1.0;
  LengthDistribution prompt = LengthDistribution::LogNormal(800, 1.0, 16, 16000);
  LengthDistribution output = LengthDistribution::LogNormal(200, 0.9, 4, 2000);
  // Per-client length distributions from chunk-<id>-dataset.json, read from
  // dataset_directory (empty: `directory`); every chosen client needs one.
  bool lengths_from_datasets = false;
  std::string dataset_directory;
  uint64_t seed = 1;
  // Most arrivals sampled in all (>= 1). Checked against the expected count
  // before sampling, so a huge rate or duration fails fast with
  // ResourceExhausted instead of filling memory.
  int64_t request_cap = kDefaultRequestCap;
};

absl::StatusOr<Workload> LoadServeGen(const ServeGenOptions& options);

// Samples arrivals (offsets from `start`) of one client; exposed for tests.
// ResourceExhausted when more than `request_cap` arrivals are expected or
// drawn; InvalidArgument when a window's fit gives no usable gap (windows
// from ParseServeGenClient always do).
absl::StatusOr<std::vector<absl::Duration>> SampleServeGenArrivals(
    const std::vector<ServeGenWindow>& windows, absl::Duration start,
    absl::Duration duration, double rate_scale, uint64_t seed,
    int64_t request_cap = kDefaultRequestCap);

}  // namespace hearth

#endif  // HEARTH_SIM_SERVEGEN_TRACE_H_
