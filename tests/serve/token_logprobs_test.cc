// Unit tests of the logprob arithmetic (log-softmax of raw logits, the
// likeliest alternatives) and of LogprobTrail, which sends each token's
// logprobs with the chunk that completes its text.

#ifdef HEARTH_SERVE_FOUND

#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "logprob_trail.h"
#include "token_logprobs.h"

namespace hearth::serve {
namespace {

TEST_CASE("logprobs: log-softmax of the raw logits, top n likeliest first", "[serve]") {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f};
  std::vector<int32_t> scratch;
  LogprobIds ids;
  LogprobsAt(logits, 1, 3, scratch, ids);
  const double norm = std::log(std::exp(1.0) + 2 * std::exp(3.0) + std::exp(2.0));
  CHECK(ids.logprob == Approx(3.0 - norm));
  REQUIRE(ids.top.size() == 3);
  CHECK(ids.top[0].first == 1);  // ties: the lower id first
  CHECK(ids.top[1].first == 3);
  CHECK(ids.top[2].first == 2);
  double mass = 0;
  for (size_t t = 0; t < logits.size(); ++t) {
    LogprobsAt(logits, static_cast<int32_t>(t), 0, scratch, ids);
    CHECK(ids.logprob <= 0);
    CHECK(ids.top.empty());
    mass += std::exp(ids.logprob);
  }
  CHECK(mass == Approx(1.0));
}

TEST_CASE("logprobs: hostile logits stay in [floor, 0]", "[serve]") {
  std::vector<int32_t> scratch;
  LogprobIds ids;
  const std::vector<float> odd = {NAN, INFINITY, -INFINITY, 1e30f, -1e30f};
  for (int32_t t = 0; t < 5; ++t) {
    LogprobsAt(odd, t, 20, scratch, ids);
    CHECK(ids.logprob <= 0);
    CHECK(ids.logprob >= kLogprobFloor);
    CHECK(ids.top.size() == 5);
  }
  const std::vector<float> none = {NAN, -INFINITY};
  LogprobsAt(none, 0, 1, scratch, ids);
  CHECK(ids.logprob == kLogprobFloor);
}

TokenLogprob Entry(const char* text) { return TokenLogprob{text, -1.0f, {}}; }

TEST_CASE("logprob trail: entries go out with the text that completes them", "[serve]") {
  LogprobTrail trail;
  trail.Add(Entry("ab"));
  trail.Add(Entry("c"));
  trail.Add(Entry("de"));
  CHECK(trail.TakeSent(1).empty());
  CHECK(trail.TakeSent(3).size() == 2);
  CHECK(trail.TakeSent(4).empty());
  CHECK(trail.TakeAll().size() == 1);
}

TEST_CASE("logprob trail: a stop string keeps the token it begins in, none after",
          "[serve]") {
  LogprobTrail trail;
  trail.Add(Entry("ab"));
  trail.Add(Entry("cd"));
  trail.Add(Entry("ef"));
  const std::vector<TokenLogprob> kept = trail.TakeUntil(3);
  REQUIRE(kept.size() == 2);
  CHECK(kept[1].token == "cd");
  CHECK(trail.TakeAll().empty());
}

}  // namespace
}  // namespace hearth::serve

#endif  // HEARTH_SERVE_FOUND
