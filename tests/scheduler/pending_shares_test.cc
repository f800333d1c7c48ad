// PendingShares on its own: the reserved part of the pending bounds is each
// member's whatever another member submits, the bounds are never crossed, and
// the books always balance (Audit), under random submissions and finishes.

#include "scheduler/pending_shares.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace hearth::internal {
namespace {

SchedulerOptions Household(int32_t max_requests, int64_t max_bytes, double reserved_share) {
  SchedulerOptions o;
  o.users = {{"ana", 1.0}, {"ben", 1.0}, {"cy", 2.0}};
  o.max_pending_requests = max_requests;
  o.max_pending_bytes = max_bytes;
  o.reserved_pending_share = reserved_share;
  return o;
}

TEST_CASE("PendingShares: a flood leaves every other member its reserved room", "[scheduler]") {
  // 100 requests, half reserved by weight 1:1:2: 12, 12 and 25 (floored).
  PendingShares shares(Household(100, int64_t{1} << 40, 0.5));
  int flooded = 0;
  while (shares.CanAddRequest(0).ok()) {
    shares.Add(0, 10);
    ++flooded;
  }
  // Ana takes the shared half and her own reservation, nothing more.
  CHECK(flooded == 100 - 12 - 25);
  const absl::Status refused = shares.CanAddRequest(0);
  CHECK(refused.code() == absl::StatusCode::kResourceExhausted);
  CHECK_THAT(std::string(refused.message()), Catch::Contains("ana"));
  CHECK_THAT(std::string(refused.message()), Catch::Contains("reserved_pending_share"));
  for (int i = 0; i < 12; ++i) {
    REQUIRE(shares.CanAddRequest(1).ok());
    shares.Add(1, 10);
  }
  CHECK_FALSE(shares.CanAddRequest(1).ok());
  for (int i = 0; i < 25; ++i) {
    REQUIRE(shares.CanAddRequest(2).ok());
    shares.Add(2, 10);
  }
  CHECK_FALSE(shares.CanAddRequest(2).ok());
  CHECK(shares.Audit().ok());
  // Once ana's requests finish, the shared room is anyone's again.
  for (int i = 0; i < flooded; ++i) shares.Remove(0, 10);
  CHECK(shares.CanAddRequest(1).ok());
  CHECK(shares.requests_of(0) == 0);
  CHECK(shares.Audit().ok());
}

TEST_CASE("PendingShares: the byte bound refuses by size, naming the whole bound when full",
          "[scheduler]") {
  PendingShares shares(Household(1000, 1000, 0.0));
  CHECK(shares.CanAddBytes(0, 1000).ok());
  CHECK_FALSE(shares.CanAddBytes(0, 1001).ok());
  shares.Add(0, 600);
  const absl::Status s = shares.CanAddBytes(1, 500);
  CHECK(s.code() == absl::StatusCode::kResourceExhausted);
  CHECK_THAT(std::string(s.message()), Catch::Contains("max_pending_bytes"));
  CHECK(shares.CanAddBytes(1, 400).ok());
  // A limit near INT64_MAX must not wrap when compared.
  PendingShares huge(Household(1000, INT64_MAX, 0.5));
  CHECK(huge.CanAddBytes(0, INT64_MAX / 4).ok());
  CHECK(huge.Audit().ok());
}

TEST_CASE("PendingShares: under random traffic, reservations hold and books balance",
          "[scheduler]") {
  const uint32_t seed = GENERATE(7u, 8u, 9u, 10u);
  CAPTURE(seed);
  std::mt19937 rng(seed);
  const SchedulerOptions options = Household(60, 6000, 0.6);
  PendingShares shares(options);
  // What each member holds, to finish requests it really has.
  std::vector<std::vector<int64_t>> held(3);
  std::vector<int64_t> bytes_held(3, 0);
  for (int op = 0; op < 5000; ++op) {
    const uint32_t user = rng() % 3;
    // Ana floods: most submissions are hers.
    const uint32_t who = rng() % 4 == 0 ? user : 0;
    if (rng() % 3 != 0) {
      const int64_t bytes = rng() % 200;
      if (shares.CanAddRequest(who).ok() && shares.CanAddBytes(who, bytes).ok()) {
        shares.Add(who, bytes);
        held[who].push_back(bytes);
        bytes_held[who] += bytes;
      }
    } else if (!held[user].empty()) {
      const size_t pick = rng() % held[user].size();
      shares.Remove(user, held[user][pick]);
      bytes_held[user] -= held[user][pick];
      held[user].erase(held[user].begin() + static_cast<std::ptrdiff_t>(pick));
    }
    REQUIRE(shares.Audit().ok());
    size_t total = 0;
    for (uint32_t u = 0; u < 3; ++u) {
      total += held[u].size();
      REQUIRE(shares.requests_of(u) == static_cast<int64_t>(held[u].size()));
    }
    REQUIRE(total <= 60);
    // Ben (weight 1 of 4: 9 of the 36 reserved requests) can always reach
    // his reservation with small requests, however much ana holds.
    if (held[1].size() < 9) {
      REQUIRE(shares.CanAddRequest(1).ok());
    }
  }
}

}  // namespace
}  // namespace hearth::internal
