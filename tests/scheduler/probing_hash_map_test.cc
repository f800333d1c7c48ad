#include "internal/probing_hash_map.h"

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/common/ids.h"

namespace hearth::internal {
namespace {

using Map = ProbingHashMap<uint64_t, int64_t>;

// The table agrees with an ordered model: same size, same lookups, and
// iteration visits exactly the model's entries.
void CheckAgainst(const Map& map, const std::map<uint64_t, int64_t>& model, uint64_t key_range) {
  REQUIRE(map.size() == model.size());
  for (uint64_t k = 0; k < key_range; ++k) {
    const int64_t* v = map.find(k);
    auto it = model.find(k);
    REQUIRE((v != nullptr) == (it != model.end()));
    if (v != nullptr) REQUIRE(*v == it->second);
  }
  std::map<uint64_t, int64_t> seen;
  for (const auto& [k, v] : map) REQUIRE(seen.emplace(k, v).second);
  REQUIRE(seen == model);
}

TEST_CASE("ProbingHashMap matches a model under random inserts, overwrites and erases",
          "[probing_hash_map]") {
  // Few keys against a small table: long probe runs, wrap-around at the
  // table's end and erases in the middle of runs happen on every seed.
  for (uint64_t key_range : {8u, 40u, 300u, 5000u}) {
    for (uint32_t seed = 1; seed <= 5; ++seed) {
      std::mt19937_64 rng(seed * 7919 + key_range);
      Map map;
      std::map<uint64_t, int64_t> model;
      for (int step = 0; step < 20000; ++step) {
        const uint64_t k = rng() % key_range;
        const auto v = static_cast<int64_t>(rng());
        switch (rng() % 4) {
          case 0: {
            auto [p, inserted] = map.try_emplace(k, v);
            auto [it, model_inserted] = model.try_emplace(k, v);
            REQUIRE(inserted == model_inserted);
            REQUIRE(*p == it->second);
            break;
          }
          case 1:
            map.insert_or_assign(k, v);
            model[k] = v;
            break;
          default:
            REQUIRE(map.erase(k) == (model.erase(k) == 1));
        }
        if (step % 997 == 0) CheckAgainst(map, model, key_range);
      }
      CheckAgainst(map, model, key_range);
    }
  }
}

TEST_CASE("ProbingHashMap: reserve keeps entries, erase of an absent key is a no-op",
          "[probing_hash_map]") {
  ProbingHashMap<RequestId, uint32_t> map;
  for (uint32_t i = 1; i <= 1000; ++i) map.try_emplace(RequestId(i), i * 3);
  map.reserve(100000);
  REQUIRE(map.size() == 1000);
  for (uint32_t i = 1; i <= 1000; ++i) REQUIRE(*map.find(RequestId(i)) == i * 3);
  REQUIRE_FALSE(map.erase(RequestId(5000)));
  REQUIRE(map.erase(RequestId(1)));
  REQUIRE_FALSE(map.contains(RequestId(1)));
  REQUIRE(map.size() == 999);
}

TEST_CASE("ProbingHashMap under sliding churn (sequential ids, random ends) stays exact",
          "[probing_hash_map]") {
  // The scheduler's pattern: ids issued in order, ended out of order, a
  // bounded number live.
  std::mt19937_64 rng(11);
  ProbingHashMap<RequestId, uint64_t> map;
  map.reserve(512);
  std::vector<uint64_t> live;
  uint64_t next = 1;
  for (int step = 0; step < 200000; ++step) {
    if (live.size() < 512 && rng() % 2 == 0) {
      REQUIRE(map.try_emplace(RequestId(next), next).second);
      live.push_back(next++);
    } else if (!live.empty()) {
      const size_t k = rng() % live.size();
      REQUIRE(map.erase(RequestId(live[k])));
      live[k] = live.back();
      live.pop_back();
    }
  }
  REQUIRE(map.size() == live.size());
  for (uint64_t id : live) REQUIRE(*map.find(RequestId(id)) == id);
}

}  // namespace
}  // namespace hearth::internal
