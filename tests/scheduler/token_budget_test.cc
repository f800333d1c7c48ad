// TokenBudget (src/scheduler/scheduler_state.h): what a step may batch, the
// background cap, and the TPOT allowance that sizes the next step.

#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "scheduler/scheduler_state.h"

namespace hearth::internal {
namespace {

std::vector<WorkClassConfig> Classes(absl::Duration chat_tpot) {
  return {{.name = "chat", .tpot_slo = chat_tpot}, {.name = "documents"}};
}

TEST_CASE("TokenBudget: the whole budget without a TPOT target", "[scheduler]") {
  TokenBudget b(StepTimeModel{}, Classes(absl::InfiniteDuration()));
  CHECK_FALSE(b.tracks_tpot());
  CHECK(b.tpot_of(0) == absl::InfiniteDuration());
  CHECK(b.tpot_of(7) == absl::InfiniteDuration());
  b.StartStep(/*decoding=*/3, 512, 16);
  CHECK(b.left() == 512);
  // No cap set: no request counts as background.
  CHECK_FALSE(b.Background(absl::InfiniteFuture()));
  CHECK_FALSE(b.BackgroundSpent());
}

TEST_CASE("TokenBudget: the background cap holds only while something decodes", "[scheduler]") {
  TokenBudget b(StepTimeModel{}, Classes(absl::Milliseconds(50)));
  CHECK(b.tracks_tpot());
  CHECK(b.tpot_of(0) == absl::Milliseconds(50));
  CHECK(b.tpot_of(1) == absl::InfiniteDuration());
  b.set_prefill_rules({.by_deadline = true, .background_tokens = 128});
  CHECK(b.Background(absl::InfiniteFuture()));
  CHECK_FALSE(b.Background(absl::UnixEpoch()));
  b.StartStep(/*decoding=*/0, 512, 16);
  CHECK(b.PrefillRoom(1000, 256, /*background=*/true) == 256);
  b.StartStep(/*decoding=*/2, 512, 16);
  CHECK(b.PrefillRoom(1000, 256, /*background=*/true) == 128);
  CHECK(b.PrefillRoom(1000, 256, /*background=*/false) == 256);
  b.Take(100, /*background_prefill=*/true);
  CHECK(b.left() == 412);
  CHECK(b.PrefillRoom(1000, 256, true) == 28);
  b.Take(28, true);
  CHECK(b.BackgroundSpent());
  b.GiveBack(28);
  CHECK(b.left() == 412);
}

TEST_CASE("TokenBudget: a negative background cap is none", "[scheduler]") {
  TokenBudget b(StepTimeModel{}, Classes(absl::InfiniteDuration()));
  b.set_prefill_rules({.background_tokens = -5});
  CHECK(b.prefill_rules().background_tokens == 0);
  CHECK_FALSE(b.Background(absl::InfiniteFuture()));
}

TEST_CASE("TokenBudget: room is within every bound, and taking it keeps left >= 0",
          "[scheduler][property]") {
  std::mt19937 rng(11);
  TokenBudget b(StepTimeModel{}, Classes(absl::InfiniteDuration()));
  b.set_prefill_rules({.background_tokens = 64});
  for (int trial = 0; trial < 200; ++trial) {
    const auto decoding = static_cast<int32_t>(rng() % 8);
    b.StartStep(decoding, 256, 16);
    REQUIRE(b.left() == 256);
    while (b.left() > 0) {
      const bool background = rng() % 2 == 0;
      const auto rest = static_cast<int32_t>(rng() % 300);
      const int32_t room = b.PrefillRoom(rest, 96, background);
      CHECK(room <= rest);
      CHECK(room <= 96);
      CHECK(room <= b.left());
      if (room <= 0) break;
      b.Take(room, background);
      CHECK(b.left() >= 0);
    }
  }
}

}  // namespace
}  // namespace hearth::internal
