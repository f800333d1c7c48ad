#include "hearth/sim/roofline_cost_model.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hearth {

absl::StatusOr<std::unique_ptr<RooflineCostModel>> RooflineCostModel::Create(
    const GpuSpec& gpu, const ModelSpec& model,
    const RooflineOptions& options) {
  if (!(gpu.memory_bandwidth > 0) || !(gpu.bf16_flops > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GPU '", gpu.name, "' needs memory_bandwidth > 0 and bf16_flops > 0"));
  }
  if (model.params <= 0 || model.layers <= 0 || model.heads <= 0 ||
      model.kv_heads <= 0 || model.head_dim <= 0 || model.dtype_bytes <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", model.name,
        "' needs params, layers, heads, kv_heads, head_dim and dtype_bytes > 0"));
  }
  auto in_unit = [](double v) { return v > 0 && v <= 1; };
  if (!in_unit(options.compute_efficiency) ||
      !in_unit(options.bandwidth_efficiency)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RooflineOptions efficiencies must lie in (0, 1]; got compute ",
        options.compute_efficiency, ", bandwidth ",
        options.bandwidth_efficiency));
  }
  if (options.step_overhead < absl::ZeroDuration() ||
      options.step_overhead == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        "RooflineOptions.step_overhead must be finite and >= 0");
  }
  if (!(options.encoder_params >= 0) || !std::isfinite(options.encoder_params)) {
    return absl::InvalidArgumentError("RooflineOptions.encoder_params must be finite and >= 0");
  }
  if (!(options.host_link_bandwidth > 0)) {
    return absl::InvalidArgumentError(
        "RooflineOptions.host_link_bandwidth must be > 0");
  }
  return std::unique_ptr<RooflineCostModel>(
      new RooflineCostModel(gpu, model, options));
}

RooflineCostModel::RooflineCostModel(GpuSpec gpu, ModelSpec model,
                                     RooflineOptions options)
    : gpu_(std::move(gpu)), model_(std::move(model)), options_(options) {}

double RooflineCostModel::Flops(const StepWork& work) const {
  const double gemm = 2.0 * static_cast<double>(model_.params);
  const double attn = 4.0 * model_.layers * model_.heads * model_.head_dim;
  double flops = 0;
  for (const SequenceWork& s : work.sequences) {
    const double n = s.tokens;
    flops += gemm * n + attn * (n * s.context + n * (n + 1) / 2);
  }
  return flops + 2.0 * options_.encoder_params * work.encoder_tokens;
}

double RooflineCostModel::Bytes(const StepWork& work) const {
  if (work.sequences.empty()) return 0;
  const double kv = static_cast<double>(model_.KvBytesPerToken());
  double bytes = static_cast<double>(model_.WeightBytes());
  for (const SequenceWork& s : work.sequences) {
    bytes += kv * (static_cast<double>(s.context) + s.tokens);
  }
  if (work.encoder_tokens > 0) bytes += options_.encoder_params * model_.dtype_bytes;
  return bytes;
}

absl::Duration RooflineCostModel::StepTime(const StepWork& work) const {
  double seconds = 0;
  if (!work.sequences.empty()) {
    const double compute =
        Flops(work) / (gpu_.bf16_flops * options_.compute_efficiency);
    const double memory =
        Bytes(work) / (gpu_.memory_bandwidth * options_.bandwidth_efficiency);
    seconds = std::max(compute, memory) +
              absl::ToDoubleSeconds(options_.step_overhead);
  }
  seconds += static_cast<double>(work.host_copy_bytes) /
             options_.host_link_bandwidth;
  seconds += 2.0 * static_cast<double>(work.device_copy_bytes) /
             gpu_.memory_bandwidth;
  // Whole nanoseconds keep simulated clocks exact and reproducible.
  return absl::Nanoseconds(std::llround(seconds * 1e9));
}

std::string RooflineCostModel::Describe() const {
  return absl::StrFormat(
      "roofline %s / %s (compute eff %.2f, bandwidth eff %.2f, overhead %s)",
      gpu_.name, model_.name, options_.compute_efficiency,
      options_.bandwidth_efficiency,
      absl::FormatDuration(options_.step_overhead));
}

}  // namespace hearth
