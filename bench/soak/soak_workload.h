// File: bench/soak/soak_workload.h
//
// The soak's requests: four users, the household's five work classes, a mix
// of short, medium and long prompts and outputs; some prompts carry token ids
// that start with one of a few shared "system prompts" (so the prefix cache
// hits and copy-on-write happens), agent calls name a recent call of the same
// user as their parent, some requests have deadlines, and a few specs are
// deliberately invalid (Submit must reject them with InvalidArgument).

#ifndef HEARTH_BENCH_SOAK_SOAK_WORKLOAD_H_
#define HEARTH_BENCH_SOAK_SOAK_WORKLOAD_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "bench/common/seeded_random.h"
#include "hearth/request/request_spec.h"

namespace hearth::bench {

class SoakWorkload {
 public:
  // `invalid_rate`: the share of specs that are invalid on purpose.
  SoakWorkload(uint64_t seed, double invalid_rate);

  // The next spec, for a submission at simulated time `now`. Sets
  // *deliberately_invalid when Submit must reject it.
  RequestSpec Next(absl::Time now, bool* deliberately_invalid);

  // Tells the workload Submit accepted `spec` as `id`, so later agent calls
  // of the same user may name it as their parent.
  void Accepted(const RequestSpec& spec, RequestId id);

  static constexpr int kUsers = 4;
  static constexpr int kClasses = 5;
  static constexpr int32_t kVocab = 32000;
  static constexpr int32_t kContext = 4096;

 private:
  void MakeInvalid(RequestSpec& spec);

  SeededRandom random_;
  double invalid_rate_;
  // Shared prompt prefixes, several blocks long.
  std::vector<std::vector<TokenId>> system_prompts_;
  // Each user's latest accepted agent call, the parent of their next one.
  std::array<RequestId, kUsers> last_agent_call_{};
};

}  // namespace hearth::bench

#endif  // HEARTH_BENCH_SOAK_SOAK_WORKLOAD_H_
