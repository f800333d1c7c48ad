// File: hearth/sim/roofline_cost_model.h
//
// `RooflineCostModel` prices an iteration from a GpuSpec and a ModelSpec:
//
//   flops = sum over sequences of 2 * params * tokens            (GEMMs)
//         + 4 * layers * heads * head_dim * (tokens * context
//                                            + tokens * (tokens + 1) / 2)
//                                                  (QK^T and PV, causal)
//   bytes = weight bytes (read once per iteration)
//         + sum over sequences of kv_bytes_per_token * (context + tokens)
//                                                  (KV read and written)
//   time  = overhead + max(flops / (bf16_flops * compute_efficiency),
//                          bytes / (bandwidth * bandwidth_efficiency))
//         + host copies / host_link_bandwidth + 2 * device copies / bandwidth
//
// So a decode step is bound by bytes moved (weights plus KV) and a long
// prefill by FLOPs, as in the roofline analyses of Splitwise and DistServe.
// With efficiencies of 1 and no overhead, one decode step of an 8B BF16 model
// on an H200 costs about weights / bandwidth = 16.06 GB / 4.8 TB/s = 3.3 ms.
//
// Example:
//   auto model = hearth::RooflineCostModel::Create(
//       *hearth::FindGpu("H200"), *hearth::FindModelSpec("Llama-3.1-8B"), {});

#ifndef HEARTH_SIM_ROOFLINE_COST_MODEL_H_
#define HEARTH_SIM_ROOFLINE_COST_MODEL_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hearth/sim/cost_model.h"
#include "hearth/sim/gpu_catalog.h"
#include "hearth/sim/model_catalog.h"

namespace hearth {

struct RooflineOptions {
  // Fractions of peak reached by real kernels. Each in (0, 1]. 1 is the pure
  // roofline; engines typically reach ~0.5-0.7 of FLOPs and ~0.7-0.9 of
  // bandwidth.
  double compute_efficiency = 1.0;
  double bandwidth_efficiency = 1.0;
  // Fixed cost of every non-empty iteration (launches, sampling, scheduling).
  // Must be >= 0.
  absl::Duration step_overhead = absl::ZeroDuration();
  // Host<->device copy bandwidth for swaps, bytes per second; must be > 0.
  // 25 GB/s is PCIe 4.0 x16 in practice (32 GB/s raw).
  double host_link_bandwidth = 25e9;
  // Parameters of the vision encoder that computes photos' positions
  // (StepWork::encoder_tokens): each encoded position costs 2 x this many
  // FLOPs, and a step that encodes reads the encoder's weights too (in the
  // model's dtype). 3.04e8 is CLIP ViT-L/14 at 336 px, LLaVA-1.5's encoder
  // (576 positions a photo). Must be >= 0.
  double encoder_params = 3.04e8;
};

class RooflineCostModel : public StepCostModel {
 public:
  // InvalidArgument when a figure is non-positive or an option is out of
  // range.
  static absl::StatusOr<std::unique_ptr<RooflineCostModel>> Create(
      const GpuSpec& gpu, const ModelSpec& model,
      const RooflineOptions& options);

  absl::Duration StepTime(const StepWork& work) const override;
  std::string Describe() const override;

  // The two sides of the roofline for `work`, before efficiencies.
  double Flops(const StepWork& work) const;
  double Bytes(const StepWork& work) const;

  const GpuSpec& gpu() const { return gpu_; }
  const ModelSpec& model() const { return model_; }

 private:
  RooflineCostModel(GpuSpec gpu, ModelSpec model, RooflineOptions options);
  GpuSpec gpu_;
  ModelSpec model_;
  RooflineOptions options_;
};

}  // namespace hearth

#endif  // HEARTH_SIM_ROOFLINE_COST_MODEL_H_
