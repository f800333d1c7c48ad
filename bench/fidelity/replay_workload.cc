#include "bench/fidelity/replay_workload.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hearth::fidelity {
namespace {

// splitmix64: tiny, portable, and good enough to spread arrivals.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double Uniform() { return double(Next() >> 11) * 0x1.0p-53; }  // [0, 1)
  int32_t Between(int32_t lo, int32_t hi) {  // [lo, hi]
    return lo + static_cast<int32_t>(Next() % uint64_t(hi - lo + 1));
  }
  double Exponential(double mean) { return -mean * std::log(1.0 - Uniform()); }

 private:
  uint64_t state_;
};

struct Member {
  const char* user;
  const char* work_class;
  double mean_gap_s;  // Poisson arrivals; 0: bursts instead
  int32_t prompt_lo, prompt_hi, out_lo, out_hi;
};

constexpr Member kMembers[] = {
    {"mom", "voice", 1.2, 16, 40, 6, 12},
    {"dad", "chat", 2.5, 48, 120, 16, 32},
    {"grandma", "chat", 6.0, 280, 420, 24, 40},
    {"kid", "agent", 0, 120, 200, 32, 64},
};
constexpr int kBurstSize = 8;
// Three fan-outs, a third of the horizon apart: with two, whether any voice
// question landed in a burst was luck of the seed (seed 2 had none, and the
// policies tied in the simulator for want of contention, not of a difference).
constexpr int kBursts = 3;

}  // namespace

std::vector<std::string> ReplayUsers() { return {"mom", "dad", "grandma", "kid"}; }
std::vector<std::string> ReplayClasses() { return {"voice", "chat", "agent"}; }

absl::StatusOr<std::vector<ReplayRequest>> MakeReplayWorkload(const ReplayWorkloadOptions& o) {
  if (!(o.horizon_s > 0 && o.horizon_s <= 3600)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReplayWorkloadOptions.horizon_s is %g; must be in (0, 3600]", o.horizon_s));
  }
  if (!(o.load > 0 && o.load <= 100)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ReplayWorkloadOptions.load is %g; must be in (0, 100]", o.load));
  }
  Rng rng(o.seed);
  std::vector<ReplayRequest> out;
  for (const Member& m : kMembers) {
    auto add = [&](double at) {
      out.push_back({m.user, m.work_class, at, rng.Between(m.prompt_lo, m.prompt_hi),
                     rng.Between(m.out_lo, m.out_hi)});
    };
    if (m.mean_gap_s > 0) {
      for (double t = rng.Exponential(m.mean_gap_s / o.load); t < o.horizon_s;
           t += rng.Exponential(m.mean_gap_s / o.load)) {
        add(t);
      }
      continue;
    }
    const int burst = std::max(1, static_cast<int>(std::lround(kBurstSize * o.load)));
    for (int b = 0; b < kBursts; ++b) {
      const double start = o.horizon_s * b / kBursts;
      // A few milliseconds apart: an agent fanning out its tool calls.
      for (int k = 0; k < burst; ++k) add(start + 0.002 * k);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const ReplayRequest& a, const ReplayRequest& b) {
    return a.arrival_s < b.arrival_s;
  });
  return out;
}

absl::StatusOr<std::string> FormatRequestJsonl(absl::Span<const ReplayRequest> requests,
                                               absl::Span<const int32_t> output_tokens) {
  if (requests.size() != output_tokens.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "FormatRequestJsonl: %d requests but %d output lengths", requests.size(),
        output_tokens.size()));
  }
  std::string text;
  for (size_t i = 0; i < requests.size(); ++i) {
    const ReplayRequest& r = requests[i];
    absl::StrAppend(&text, absl::StrFormat(
        "{\"id\": \"r%d\", \"user\": \"%s\", \"class\": \"%s\", \"arrival_s\": %.6f, "
        "\"prompt_tokens\": %d, \"output_tokens\": %d, \"max_new_tokens\": %d}\n",
        i, r.user, r.work_class, r.arrival_s, r.prompt_tokens, output_tokens[i],
        r.max_new_tokens));
  }
  return text;
}

}  // namespace hearth::fidelity
