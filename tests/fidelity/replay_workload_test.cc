#include "bench/fidelity/replay_workload.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include "hearth/sim/request_jsonl.h"

namespace hearth::fidelity {
namespace {

TEST_CASE("The replay list is deterministic, sorted and within its ranges", "[fidelity]") {
  auto a = MakeReplayWorkload({});
  auto b = MakeReplayWorkload({});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(a->size() == b->size());
  int voice = 0, agent = 0;
  for (size_t i = 0; i < a->size(); ++i) {
    const ReplayRequest& r = (*a)[i];
    CHECK(r.arrival_s == (*b)[i].arrival_s);
    CHECK(r.prompt_tokens == (*b)[i].prompt_tokens);
    CHECK(r.arrival_s >= 0);
    CHECK(r.arrival_s < 24);
    CHECK(r.prompt_tokens >= 16);
    CHECK(r.prompt_tokens <= 420);
    CHECK(r.max_new_tokens >= 6);
    CHECK(r.max_new_tokens <= 64);
    if (i > 0) CHECK((*a)[i - 1].arrival_s <= r.arrival_s);
    voice += r.work_class == "voice";
    agent += r.work_class == "agent";
  }
  CHECK(voice >= 10);   // 24 s at one question per 1.2 s on average
  CHECK(agent == 24);   // three bursts of eight
  auto other = MakeReplayWorkload({.seed = 2});
  REQUIRE(other.ok());
  bool differs = other->size() != a->size();
  for (size_t i = 0; !differs && i < a->size(); ++i) {
    differs = (*other)[i].arrival_s != (*a)[i].arrival_s ||
              (*other)[i].prompt_tokens != (*a)[i].prompt_tokens;
  }
  CHECK(differs);
}

TEST_CASE("Replay options are validated", "[fidelity]") {
  CHECK(MakeReplayWorkload({.horizon_s = 0}).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(MakeReplayWorkload({.load = -1}).status().code() == absl::StatusCode::kInvalidArgument);
  auto nan = MakeReplayWorkload({.horizon_s = std::nan("")});
  REQUIRE(!nan.ok());
  CHECK(nan.status().message().find("horizon_s") != std::string::npos);
}

TEST_CASE("The replay list reads back through the simulator's JSONL reader", "[fidelity]") {
  auto list = MakeReplayWorkload({.horizon_s = 6});
  REQUIRE(list.ok());
  std::vector<int32_t> outputs;
  for (const ReplayRequest& r : *list) outputs.push_back(r.max_new_tokens);
  auto text = FormatRequestJsonl(*list, outputs);
  REQUIRE(text.ok());
  RequestJsonlOptions o;
  o.user_names = ReplayUsers();
  o.class_names = ReplayClasses();
  auto w = ParseRequestJsonl(*text, "replay.jsonl", o);
  REQUIRE(w.ok());
  REQUIRE(w->requests.size() == list->size());
  for (size_t i = 0; i < list->size(); ++i) {
    CHECK(w->requests[i].prompt_tokens == (*list)[i].prompt_tokens);
    CHECK(w->requests[i].output_tokens == outputs[i]);
    CHECK(o.user_names[w->requests[i].user] == (*list)[i].user);
  }
  CHECK(!FormatRequestJsonl(*list, std::vector<int32_t>{1}).ok());
}

}  // namespace
}  // namespace hearth::fidelity
