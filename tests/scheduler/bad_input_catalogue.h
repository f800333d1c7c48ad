// File: tests/scheduler/bad_input_catalogue.h
//
// The bad-input catalogue (issue 15): one row per hostile input to the public
// API, with the status code the API documents for it and a piece of text its
// message must contain (the field, or what is allowed), so that a generic
// error does not pass for the right one. Each surface keeps its table in its
// own bad_input_<surface>_test.cc; bad_input_catalogue_test.cc runs the
// checks that span them.

#ifndef HEARTH_TESTS_SCHEDULER_BAD_INPUT_CATALOGUE_H_
#define HEARTH_TESTS_SCHEDULER_BAD_INPUT_CATALOGUE_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hearth/scheduler/scheduler.h"
#include "tests/testing/request_builder.h"

namespace hearth::catalogue {

inline constexpr int32_t kInt32Max = std::numeric_limits<int32_t>::max();
inline constexpr int32_t kInt32Min = std::numeric_limits<int32_t>::min();
inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

struct BadInputRow {
  std::string name;
  // Applies the hostile input and returns the API's answer. Rows on a live
  // scheduler also require, inside, that it is still sound afterwards.
  std::function<absl::Status()> run;
  absl::StatusCode code;
  std::string message_has;
};

// One table per surface.
std::vector<BadInputRow> OptionsRows();
std::vector<BadInputRow> SubmitRows();
std::vector<BadInputRow> CallOrderRows();
std::vector<BadInputRow> OutcomeRows();
std::vector<BadInputRow> KvRows();
std::vector<BadInputRow> ExecRows();
std::vector<BadInputRow> PolicyRows();
std::vector<BadInputRow> MetricsRows();

// Runs each row in a section named after it.
void RunRows(const std::vector<BadInputRow>& rows);

// What the live rows start from: two users, two classes, one model with a
// vocabulary, a small cache (fast under ASan).
SchedulerOptions BaseOptions();

// A scheduler that rows drive by hand, with its own clock.
class LiveScheduler {
 public:
  // REQUIREs that `options` are accepted.
  explicit LiveScheduler(SchedulerOptions options);

  Scheduler& scheduler() { return *scheduler_; }
  Scheduler* operator->() { return scheduler_.get(); }

  // The time the next Plan() uses; each Plan() first moves it on by 1 ms.
  absl::Time now = absl::UnixEpoch();

  // REQUIRE the submission is accepted.
  RequestId Submit(const RequestSpec& spec);
  // Submits a valid request: user 0, model 0, class 0, 4 prompt tokens, 2 new.
  RequestId Submit() { return Submit(testing::Spec({.prompt = 4, .max_new = 2})); }
  // REQUIREs an accepted plan; it stays readable through plan() until the
  // next Plan().
  const StepPlan& Plan();
  const StepPlan& plan() const { return *plan_; }
  // The outcome an honest engine reports for `plan`: every sampled token is
  // 0 (inside any vocabulary), nothing finishes early, nothing fails.
  static StepOutcome HonestOutcome(const StepPlan& plan);
  // Plan, then Complete(HonestOutcome), REQUIRing both to succeed.
  void Step();
  // Steps until the plan schedules `id` (REQUIRing that it does within a
  // few steps); the plan stays outstanding.
  const StepPlan& PlanUntilScheduled(RequestId id);
  std::vector<RequestResult>& results() { return results_; }

  // The scheduler survived the row: its invariants hold; an outstanding
  // plan is answered honestly; every live request ends; and one quota
  // window later a fresh request of user 0 is served to kFinished.
  void RequireStillServes();

 private:
  void Drain();

  std::unique_ptr<Scheduler> scheduler_;
  const StepPlan* plan_ = nullptr;
  std::vector<RequestResult> results_;
};

// A row on a live scheduler built from BaseOptions() changed by `configure`
// (may be null): `misuse` brings it into the state the row needs and
// returns the answer to the hostile call; RequireStillServes() follows.
BadInputRow LiveRow(std::string name, std::function<void(SchedulerOptions&)> configure,
                    std::function<absl::Status(LiveScheduler&)> misuse,
                    absl::StatusCode code, std::string message_has);

}  // namespace hearth::catalogue

#endif  // HEARTH_TESTS_SCHEDULER_BAD_INPUT_CATALOGUE_H_
