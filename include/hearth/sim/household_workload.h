// File: hearth/sim/household_workload.h
//
// A synthetic household: members (users) use the shared GPU for different
// kinds of work (classes), each with its own rate, lengths and shape:
//   voice        short prompt and answer, bursty: a few turns seconds apart;
//   chat         conversations whose turns resend the growing history;
//   documents    summaries of 8k-32k-token prompts;
//   agents       chains of calls, each prompt extending the last;
//   nightly      maintenance batch jobs in a time window;
//   embedding    the search index's passages (EmbeddingJob), any time;
//   photo        questions about a photo (PhotoAnalysis), in the evening.
// Sessions (chains of dependent calls) start as a non-homogeneous Poisson
// process: rate = sessions_per_hour x member activity x load_scale x the
// diurnal multiplier of the hour x the class's active window. Later calls of
// a session arrive `think` after the previous call ends and may share its
// prompt as a prefix (the history), so prefix caching and chains behave as
// they would at home.
//
// Deterministic: the same options (seed included) give the same workload.
//
// Example:
//   // Class indices of HouseholdWorkClasses(), which has no documents class.
//   hearth::HouseholdOptions o = hearth::DefaultHousehold(/*num_members=*/4,
//       /*voice=*/0, /*chat=*/1, /*documents=*/hearth::kNoClass, /*agent=*/2,
//       /*batch=*/4);
//   o.load_scale = 2.0;
//   absl::StatusOr<hearth::Workload> w = hearth::GenerateHousehold(o);

#ifndef HEARTH_SIM_HOUSEHOLD_WORKLOAD_H_
#define HEARTH_SIM_HOUSEHOLD_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hearth/sim/length_distribution.h"
#include "hearth/sim/workload.h"

namespace hearth {

struct HouseholdMember {
  uint32_t user = 0;
  // Multiplies every class rate of this member; >= 0.
  double activity = 1.0;
};

struct HouseholdClassLoad {
  std::string name;  // for labels
  uint32_t work_class = 0;
  // Members who generate this class (user indices); empty means everyone.
  std::vector<uint32_t> members;
  // Sessions per hour per member at activity 1 and diurnal multiplier 1.
  double sessions_per_hour = 1.0;
  // Calls per session, uniform in [min, max].
  int32_t calls_min = 1;
  int32_t calls_max = 1;
  // New prompt tokens of each call, and its output.
  LengthDistribution prompt = LengthDistribution::Fixed(100);
  LengthDistribution output = LengthDistribution::Fixed(100);
  // Seconds between a call's end and the next call of the session.
  LengthDistribution think_seconds = LengthDistribution::Fixed(5);
  // Whether later calls resend the previous prompt and answer as a prefix.
  bool carry_history = true;
  // Cap on a call's total prompt (history is cut from the front beyond it:
  // the call then shares nothing with its parent).
  int32_t max_prompt_tokens = 32768;
  // Active hours of day [from, to) (wrapping past midnight); from == to
  // means all day. Follows the diurnal curve when follow_diurnal.
  int32_t active_from_hour = 0;
  int32_t active_to_hour = 0;
  bool follow_diurnal = true;
  // The session's calls all arrive at its start, unchained (a batch job
  // submitting its whole run), instead of each after the previous one.
  bool burst = false;
  // Embeddings (RequestKind::kEmbed, `output` unused) or generations.
  RequestKind kind = RequestKind::kGenerate;
  Pooling pooling = Pooling::kLast;
  // > 0: each session's first call starts its new prompt with a photo of
  // this many encoder positions (an encoder span, content new to the
  // session); later calls carry it in their history, so they reuse its
  // blocks through the prefix cache instead of encoding it again.
  int32_t photo_tokens = 0;
};

struct HouseholdOptions {
  std::vector<HouseholdMember> members;
  std::vector<HouseholdClassLoad> classes;
  // Simulated span and the time of day it starts at.
  absl::Duration duration = absl::Hours(24);
  absl::Duration start_time_of_day = absl::ZeroDuration();
  // 24 hourly multipliers (>= 0); empty means DefaultDiurnalCurve().
  std::vector<double> diurnal;
  double load_scale = 1.0;
  uint64_t seed = 1;
  // Most calls generated (>= 1). The expected count is checked before
  // generating, so a huge load_scale or duration fails fast with
  // ResourceExhausted instead of filling memory.
  int64_t request_cap = kDefaultRequestCap;
};

// A home's day: quiet at night, a morning bump, an evening peak at 20:00.
std::vector<double> DefaultDiurnalCurve();

// Expected calls of the options per simulated second (for load calibration).
double ExpectedCallsPerSecond(const HouseholdOptions& options);

absl::StatusOr<Workload> GenerateHousehold(const HouseholdOptions& options);

// A ready-made household with the five class shapes above; class indices are
// the simulation's. Pass kNoClass for a class the scenario lacks.
inline constexpr uint32_t kNoClass = 0xffffffffu;
HouseholdOptions DefaultHousehold(int num_members, uint32_t voice, uint32_t chat,
                                  uint32_t documents, uint32_t agent,
                                  uint32_t batch);

// The household's search index job, as class `work_class`: a member's new
// files and photo captions embedded in passages of 256-1024 tokens (mean
// pooling), each run of 20-80 passages submitted at once, about 6 runs an
// hour at any time of day (not following the diurnal curve: indexing
// follows what was added). Members: the first.
HouseholdClassLoad EmbeddingJob(uint32_t work_class);

// Questions about a photo, as class `work_class`: a member shares a picture
// (576 encoder positions: LLaVA-1.5's CLIP ViT-L/14 at 336 px) with a short
// question, then asks 0-2 follow-ups about it; answers of ~120 tokens.
// About 1.5 sessions an hour per member, following the diurnal curve.
HouseholdClassLoad PhotoAnalysis(uint32_t work_class);

}  // namespace hearth

#endif  // HEARTH_SIM_HOUSEHOLD_WORKLOAD_H_
