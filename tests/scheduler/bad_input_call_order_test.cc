// Catalogue surface: the iteration contract's call order (Plan, Complete),
// Cancel, GetRequest and the Find* lookups, with ids never issued, stale
// ids and names nobody configured.

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/scheduler/bad_input_catalogue.h"

namespace hearth::catalogue {
namespace {

using testing::Spec;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;
constexpr auto kPrecondition = absl::StatusCode::kFailedPrecondition;
constexpr auto kNotFound = absl::StatusCode::kNotFound;

BadInputRow Row(std::string name, std::function<absl::Status(LiveScheduler&)> misuse,
                absl::StatusCode code, std::string message_has) {
  return LiveRow(std::move(name), nullptr, std::move(misuse), code, std::move(message_has));
}

// Runs `id` until it has ended and its result was drained.
void RunToEnd(LiveScheduler& live, RequestId id) {
  for (int i = 0; i < 20; ++i) {
    for (const RequestResult& r : live.results()) {
      if (r.id == id) return;
    }
    live.Step();
  }
  FAIL("request " << id << " did not end within 20 steps");
}

std::vector<BadInputRow> PlanCompleteRows() {
  using L = LiveScheduler&;
  return {
      Row("order: Complete before any Plan",
          [](L live) { return live->Complete(StepOutcome{}); }, kPrecondition,
          "no plan is outstanding"),
      Row("order: Complete twice",
          [](L live) {
            live.Submit();
            const StepPlan& plan = live.Plan();
            const StepOutcome outcome = LiveScheduler::HonestOutcome(plan);
            REQUIRE(live->Complete(outcome).ok());
            return live->Complete(outcome);
          },
          kPrecondition, "call Plan() before Complete()"),
      Row("order: Plan twice without Complete",
          [](L live) {
            live.Submit();
            live.Plan();
            return live->Plan(live.now + absl::Seconds(1)).status();
          },
          kPrecondition, "still outstanding"),
      Row("order: an empty plan is outstanding too",
          [](L live) {
            live.Plan();
            return live->Plan(live.now + absl::Seconds(1)).status();
          },
          kPrecondition, "step 1 is still outstanding"),
      Row("order: Plan with time going backwards",
          [](L live) {
            live.Step();
            return live->Plan(live.now - absl::Nanoseconds(1)).status();
          },
          kInvalid, "time must not go backwards"),
      Row("order: Plan at InfiniteFuture",
          [](L live) { return live->Plan(absl::InfiniteFuture()).status(); }, kInvalid,
          "finite time"),
      Row("order: the first Plan at InfinitePast",
          [](L live) { return live->Plan(absl::InfinitePast()).status(); }, kInvalid,
          "finite time"),
      Row("order: Plan at InfinitePast after a step",
          [](L live) {
            live.Step();
            return live->Plan(absl::InfinitePast()).status();
          },
          kInvalid, "before the previous step's time"),
  };
}

std::vector<BadInputRow> CancelRows() {
  using L = LiveScheduler&;
  return {
      Row("cancel: an id never issued", [](L live) { return live->Cancel(RequestId(777)); },
          kNotFound, "request 777 is unknown"),
      Row("cancel: the invalid id", [](L live) { return live->Cancel(RequestId()); }, kNotFound,
          "<invalid>"),
      Row("cancel: twice while queued",
          [](L live) {
            const RequestId id = live.Submit();
            REQUIRE(live->Cancel(id).ok());
            return live->Cancel(id);
          },
          kNotFound, "already being cancelled"),
      Row("cancel: twice while running",
          [](L live) {
            const RequestId id = live.Submit(Spec({.prompt = 4, .max_new = 8}));
            live.PlanUntilScheduled(id);
            REQUIRE(live->Cancel(id).ok());
            return live->Cancel(id);
          },
          kNotFound, "already being cancelled"),
      Row("cancel: a finished request",
          [](L live) {
            const RequestId id = live.Submit();
            RunToEnd(live, id);
            return live->Cancel(id);
          },
          kNotFound, "already ended"),
      Row("cancel: a request whose cancel was applied",
          [](L live) {
            const RequestId id = live.Submit();
            REQUIRE(live->Cancel(id).ok());
            live.Step();
            return live->Cancel(id);
          },
          kNotFound, "already ended"),
  };
}

std::vector<BadInputRow> LookupRows() {
  using L = LiveScheduler&;
  return {
      Row("lookup: GetRequest of an id never issued",
          [](L live) { return live->GetRequest(RequestId(42)).status(); }, kNotFound,
          "request 42 is unknown"),
      Row("lookup: GetRequest of the invalid id",
          [](L live) { return live->GetRequest(RequestId()).status(); }, kNotFound, "<invalid>"),
      Row("lookup: GetRequest of a finished request",
          [](L live) {
            const RequestId id = live.Submit();
            RunToEnd(live, id);
            return live->GetRequest(id).status();
          },
          kNotFound, "already ended"),
      Row("lookup: GetRequest of a cancelled request",
          [](L live) {
            const RequestId id = live.Submit();
            REQUIRE(live->Cancel(id).ok());
            live.Step();
            return live->GetRequest(id).status();
          },
          kNotFound, "DrainResults"),
      Row("lookup: FindUser of an empty name",
          [](L live) { return live->FindUser("").status(); }, kNotFound, "configured: alice, bob"),
      Row("lookup: FindUser in the wrong case",
          [](L live) { return live->FindUser("Alice").status(); }, kNotFound, "no user named"),
      Row("lookup: FindUser with a trailing NUL",
          [](L live) { return live->FindUser(std::string_view("alice\0", 6)).status(); },
          kNotFound, "alice, bob"),
      Row("lookup: FindUser of a 100,000-character name",
          [](L live) { return live->FindUser(std::string(100000, 'x')).status(); }, kNotFound,
          "configured: alice, bob"),
      Row("lookup: FindWorkClass of an unknown name",
          [](L live) { return live->FindWorkClass("voice").status(); }, kNotFound,
          "configured: chat, batch"),
      Row("lookup: FindModel of an empty name",
          [](L live) { return live->FindModel("").status(); }, kNotFound, "no model named"),
  };
}

}  // namespace

std::vector<BadInputRow> CallOrderRows() {
  std::vector<BadInputRow> rows;
  for (auto part : {PlanCompleteRows, CancelRows, LookupRows}) {
    for (BadInputRow& row : part()) rows.push_back(std::move(row));
  }
  return rows;
}

TEST_CASE("Bad input: call-order misuse, stale ids and unknown names are refused",
          "[scheduler][bad_input]") {
  RunRows(CallOrderRows());
}

// Not a row: a null vector is a documented no-op, not an error. Was: a
// segfault.
TEST_CASE("Bad input: DrainResults with a null vector moves nothing and keeps the results",
          "[scheduler][bad_input]") {
  LiveScheduler live(BaseOptions());
  const RequestId id = live.Submit();
  REQUIRE(live->Cancel(id).ok());
  const StepPlan& plan = live.Plan();
  REQUIRE(live->Complete(LiveScheduler::HonestOutcome(plan)).ok());
  CHECK(live->DrainResults(nullptr) == 0);
  std::vector<RequestResult> results;
  CHECK(live->DrainResults(&results) == 1);
  CHECK(results.at(0).id == id);
  CHECK(results.at(0).phase == RequestPhase::kCancelled);
}

}  // namespace hearth::catalogue
