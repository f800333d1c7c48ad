// The bad-input catalogue's shared parts (see bad_input_catalogue.h): the
// row runner, the live scheduler rows drive, and the checks over all tables.

#include "tests/scheduler/bad_input_catalogue.h"

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/container/flat_hash_set.h"

namespace hearth::catalogue {

void RunRows(const std::vector<BadInputRow>& rows) {
  for (const BadInputRow& row : rows) {
    DYNAMIC_SECTION(row.name) {
      const absl::Status got = row.run();
      INFO("answer: " << got.ToString());
      CHECK(got.code() == row.code);
      CHECK_THAT(std::string(got.message()), Catch::Matchers::Contains(row.message_has));
    }
  }
}

SchedulerOptions BaseOptions() {
  SchedulerOptions o;
  o.models[0].vocab_size = 1000;
  o.models[0].context_length = 1024;
  o.users = {UserConfig{.name = "alice"}, UserConfig{.name = "bob"}};
  o.work_classes = {WorkClassConfig{.name = "chat"}, WorkClassConfig{.name = "batch"}};
  o.kv.num_device_blocks = 256;
  o.max_batched_tokens = 512;
  o.max_running = 16;
  return o;
}

LiveScheduler::LiveScheduler(SchedulerOptions options) {
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(std::move(options));
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  scheduler_ = *std::move(s);
}

RequestId LiveScheduler::Submit(const RequestSpec& spec) {
  absl::StatusOr<RequestId> id = scheduler_->Submit(spec);
  INFO(id.status().ToString());
  REQUIRE(id.ok());
  return *id;
}

const StepPlan& LiveScheduler::Plan() {
  now += absl::Milliseconds(1);
  absl::StatusOr<const StepPlan*> plan = scheduler_->Plan(now);
  INFO(plan.status().ToString());
  REQUIRE(plan.ok());
  plan_ = *plan;
  return *plan_;
}

StepOutcome LiveScheduler::HonestOutcome(const StepPlan& plan) {
  StepOutcome outcome;
  outcome.step = plan.step;
  for (const ScheduledSequence& s : plan.sequences) {
    SequenceOutcome& o = outcome.sequences.emplace_back();
    o.id = s.id;
    o.produced_token = s.sample;
  }
  return outcome;
}

void LiveScheduler::Step() {
  const StepPlan& plan = Plan();
  const absl::Status done = scheduler_->Complete(HonestOutcome(plan));
  INFO(done.ToString());
  REQUIRE(done.ok());
  Drain();
}

const StepPlan& LiveScheduler::PlanUntilScheduled(RequestId id) {
  for (int i = 0; i < 16; ++i) {
    const StepPlan& plan = Plan();
    for (const ScheduledSequence& s : plan.sequences) {
      if (s.id == id) return plan;
    }
    REQUIRE(scheduler_->Complete(HonestOutcome(plan)).ok());
    Drain();
  }
  FAIL("request " << id << " was not scheduled within 16 steps");
  return *plan_;
}

void LiveScheduler::Drain() { scheduler_->DrainResults(&results_); }

void LiveScheduler::RequireStillServes() {
  auto check_invariants = [&] {
    const absl::Status invariants = scheduler_->CheckInvariants();
    INFO(invariants.ToString());
    REQUIRE(invariants.ok());
  };
  check_invariants();
  if (scheduler_->plan_outstanding()) {
    const absl::Status done = scheduler_->Complete(HonestOutcome(*plan_));
    INFO("answering the outstanding plan honestly: " << done.ToString());
    REQUIRE(done.ok());
  }
  auto idle = [&] {
    const SchedulerStats s = scheduler_->stats();
    return s.queued + s.waiting + s.running + s.swapped + s.preparing == 0;
  };
  for (int i = 0; i < 200 && !idle(); ++i) Step();
  REQUIRE(idle());
  check_invariants();
  // A quota window on (the default is 24 h), so that a row that spent user
  // 0's quota does not stop the probe; the empty step carries the time into
  // the scheduler's intake.
  now += absl::Hours(25);
  Step();
  const RequestSpec probe_spec = testing::Spec({.prompt = 4, .max_new = 2});
  const RequestId probe = Submit(probe_spec);
  for (int i = 0; i < 50 && !idle(); ++i) Step();
  check_invariants();
  const RequestResult* result = nullptr;
  for (const RequestResult& r : results_) {
    if (r.id == probe) result = &r;
  }
  REQUIRE(result != nullptr);
  CHECK(result->phase == RequestPhase::kFinished);
  CHECK(result->output_tokens == probe_spec.max_new_tokens);
}

BadInputRow LiveRow(std::string name, std::function<void(SchedulerOptions&)> configure,
                    std::function<absl::Status(LiveScheduler&)> misuse,
                    absl::StatusCode code, std::string message_has) {
  auto run = [configure = std::move(configure), misuse = std::move(misuse)] {
    SchedulerOptions options = BaseOptions();
    if (configure) configure(options);
    LiveScheduler live(std::move(options));
    const absl::Status answer = misuse(live);
    live.RequireStillServes();
    return answer;
  };
  return {std::move(name), std::move(run), code, std::move(message_has)};
}

namespace {

struct Table {
  const char* surface;
  std::vector<BadInputRow> rows;
};

std::vector<Table> AllTables() {
  return {{"options", OptionsRows()},  {"submit", SubmitRows()}, {"call order", CallOrderRows()},
          {"outcomes", OutcomeRows()}, {"kv", KvRows()},         {"exec", ExecRows()},
          {"policy", PolicyRows()}, {"metrics", MetricsRows()}};
}

TEST_CASE("The catalogue holds at least 120 distinct documented errors", "[scheduler][bad_input]") {
  absl::flat_hash_set<std::string> names;
  size_t total = 0;
  for (const Table& table : AllTables()) {
    INFO(table.surface << ": " << table.rows.size() << " rows");
    CHECK_FALSE(table.rows.empty());
    for (const BadInputRow& row : table.rows) {
      INFO(row.name);
      // An OK expectation would let a silent acceptance pass as a row.
      CHECK(row.code != absl::StatusCode::kOk);
      CHECK_FALSE(row.message_has.empty());
      CHECK(names.insert(row.name).second);
    }
    total += table.rows.size();
  }
  CHECK(total >= 120);
}

}  // namespace
}  // namespace hearth::catalogue
