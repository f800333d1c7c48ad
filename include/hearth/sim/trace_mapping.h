// File: hearth/sim/trace_mapping.h
//
// Public traces carry no household: no users, no work classes. A
// `TraceMapping` says how trace rows become simulated requests: which users
// they are spread over (round robin, or at random by share), which work class
// each row gets (first matching rule on prompt and output length), and which
// part of the trace is replayed how fast.
//
// Example (short prompts are voice, the rest chat, spread over 3 users):
//   hearth::TraceMapping m;
//   m.users = {0, 1, 2};
//   // Class indices of HouseholdWorkClasses(): voice is 0, chat 1.
//   m.class_rules = {{.max_prompt_tokens = 256, .work_class = 0}};
//   m.default_class = 1;

#ifndef HEARTH_SIM_TRACE_MAPPING_H_
#define HEARTH_SIM_TRACE_MAPPING_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace hearth {

struct ClassRule {
  // A row matches when prompt <= max_prompt_tokens and output <=
  // max_output_tokens.
  int32_t max_prompt_tokens = std::numeric_limits<int32_t>::max();
  int32_t max_output_tokens = std::numeric_limits<int32_t>::max();
  uint32_t work_class = 0;
};

enum class UserAssignment {
  // Row i goes to users[i % users.size()].
  kRoundRobin,
  // Each row draws a user with probability proportional to user_shares.
  kRandom,
};

// TraceMapping::time_scale's range: a millionth of the recorded speed up to
// a million times it.
inline constexpr double kMinTimeScale = 1e-6;
inline constexpr double kMaxTimeScale = 1e6;

struct TraceMapping {
  // Candidate users (indices into the simulation's users). Non-empty.
  std::vector<uint32_t> users = {0};
  // For kRandom: one share > 0 per entry of `users`; empty means equal.
  std::vector<double> user_shares;
  UserAssignment assignment = UserAssignment::kRoundRobin;
  // First match wins; rows matching none get default_class.
  std::vector<ClassRule> class_rules;
  uint32_t default_class = 0;
  // Replay speed: arrival offsets are divided by it (2 = twice the rate).
  // Must be in [kMinTimeScale, kMaxTimeScale].
  double time_scale = 1.0;
  // Replay only rows whose offset from the trace start lies in [skip, skip +
  // duration); a replayed row arrives at (offset - skip) / time_scale.
  absl::Duration skip = absl::ZeroDuration();
  absl::Duration duration = absl::InfiniteDuration();
  // Stop after this many rows (0: no limit). Must be >= 0.
  int64_t max_requests = 0;
  uint64_t seed = 1;
};

absl::Status ValidateTraceMapping(const TraceMapping& m);

// Applies a mapping row by row; deterministic for a given seed.
class TraceRowMapper {
 public:
  // REQUIRES: ValidateTraceMapping(m).ok().
  explicit TraceRowMapper(const TraceMapping& m);
  uint32_t NextUser();
  uint32_t ClassFor(int32_t prompt_tokens, int32_t output_tokens) const;
  // Whether `offset` (since the trace start) is replayed, and when.
  bool InWindow(absl::Duration offset) const;
  absl::Duration ArrivalFor(absl::Duration offset) const;

 private:
  const TraceMapping& m_;
  uint64_t row_ = 0;
  uint64_t rng_;
  std::vector<double> cumulative_;
};

}  // namespace hearth

#endif  // HEARTH_SIM_TRACE_MAPPING_H_
