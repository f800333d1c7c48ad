// CheapestVictim, the default price rule of Policy::ChooseVictim, as
// properties over random candidate lists and prices.

#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/container/flat_hash_map.h"
#include "hearth/policy/preemption_costs.h"

namespace hearth {
namespace {

class TablePrices final : public PreemptionCosts {
 public:
  PreemptionPrice Price(RequestId id) const override {
    auto it = prices.find(id);
    return it == prices.end() ? PreemptionPrice{} : it->second;
  }
  absl::flat_hash_map<RequestId, PreemptionPrice> prices;
};

double PerBlock(const PreemptionPrice& p) { return p.waste_tokens / std::max(p.freed_blocks, 1); }

TEST_CASE("CheapestVictim: allowed, covering first, cheapest per block, first of ties",
          "[policy][preemption][property]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    TablePrices costs;
    std::vector<RequestId> ids;
    const int n = static_cast<int>(rng() % 6);
    for (int i = 0; i < n; ++i) {
      const RequestId id(static_cast<uint64_t>(rng() % 8 + 1));
      ids.push_back(id);
      PreemptionPrice p;
      p.allowed = rng() % 4 != 0;
      p.freed_blocks = static_cast<int32_t>(rng() % 5);
      p.waste_tokens = static_cast<double>(rng() % 4) * 16;
      costs.prices.try_emplace(id, p);
    }
    const int32_t need = static_cast<int32_t>(rng() % 4 + 1);
    const RequestId got = CheapestVictim(ids, need, costs);
    bool any_allowed = false, any_covers = false;
    for (RequestId id : ids) {
      const PreemptionPrice& p = costs.prices.at(id);
      any_allowed |= p.allowed;
      any_covers |= p.allowed && p.freed_blocks >= need;
    }
    REQUIRE(got.valid() == any_allowed);
    if (!got.valid()) continue;
    const PreemptionPrice& g = costs.prices.at(got);
    CHECK(g.allowed);
    CHECK((g.freed_blocks >= need) == any_covers);
    size_t first = 0;
    while (ids[first] != got) ++first;
    for (size_t i = 0; i < ids.size(); ++i) {
      const PreemptionPrice& p = costs.prices.at(ids[i]);
      if (!p.allowed || (p.freed_blocks >= need) != any_covers) continue;
      // Nothing in the same cover class is cheaper, nor equally cheap earlier.
      CHECK(PerBlock(p) >= PerBlock(g));
      if (i < first) CHECK(PerBlock(p) > PerBlock(g));
    }
  }
}

TEST_CASE("CheapestVictim of no candidates is none", "[policy][preemption]") {
  TablePrices costs;
  CHECK_FALSE(CheapestVictim({}, 1, costs).valid());
  const RequestId unknown(5);
  CHECK_FALSE(CheapestVictim(absl::MakeConstSpan(&unknown, 1), 1, costs).valid());
}

}  // namespace
}  // namespace hearth
