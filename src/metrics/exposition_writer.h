// File: src/metrics/exposition_writer.h
//
// Low-level writer of the Prometheus text exposition format (version 0.0.4):
// family headers, samples, histograms, and the escaping and number formats
// the format requires. It knows nothing about Hearth's metrics; prometheus.cc
// decides what to write. Not part of the public API.

#ifndef HEARTH_METRICS_EXPOSITION_WRITER_H_
#define HEARTH_METRICS_EXPOSITION_WRITER_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "hearth/metrics/latency_histogram.h"

namespace hearth::metrics_internal {

// Whether `name` matches [a-zA-Z_:][a-zA-Z0-9_:]*.
bool ValidMetricName(absl::string_view name);

// `key="value"` with the value escaped (backslash, double quote), for a
// label list; bytes that are not UTF-8 and control characters (newline
// included, hearth/common/names.h lists them) become U+FFFD, so the
// exposition stays valid whatever the value.
// Label names are the caller's constants.
std::string Label(absl::string_view key, absl::string_view value);
// Joins two label lists, either possibly empty.
std::string JoinLabels(absl::string_view a, absl::string_view b);

// Shortest text that reads back as the same double; +Inf, -Inf and NaN as the
// format spells them.
std::string FormatValue(double v);

class ExpositionWriter {
 public:
  // # HELP and # TYPE lines; `type` is counter, gauge or histogram.
  void Family(absl::string_view name, absl::string_view type,
              absl::string_view help);
  // name{labels} value; `labels` as built by Label/JoinLabels, or empty.
  void Sample(absl::string_view name, absl::string_view labels, double value);
  void Sample(absl::string_view name, absl::string_view labels, uint64_t value);
  // The _bucket lines (cumulative, le ascending, ending at +Inf), _sum and
  // _count of one histogram series.
  void Histogram(absl::string_view name, absl::string_view labels,
                 const LatencyHistogram& h);

  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace hearth::metrics_internal

#endif  // HEARTH_METRICS_EXPOSITION_WRITER_H_
