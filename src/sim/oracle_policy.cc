#include "hearth/sim/oracle_policy.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace hearth {
namespace {

constexpr std::string_view kSrpt = "oracle_srpt";
constexpr std::string_view kSrptPreemptive = "oracle_srpt_preemptive";

// A request's place in the order: fewer output tokens left first, then
// earlier arrival.
struct Rank {
  int64_t remaining = 0;
  uint64_t arrival_seq = 0;
  RequestId id;
  friend bool operator<(const Rank& a, const Rank& b) {
    return std::tie(a.remaining, a.arrival_seq, a.id) <
           std::tie(b.remaining, b.arrival_seq, b.id);
  }
};

class OracleSrpt final : public Policy {
 public:
  OracleSrpt(const TrueOutputLengths& lengths, bool preemptive)
      : lengths_(lengths), preemptive_(preemptive) {}

  std::string_view name() const override { return preemptive_ ? kSrptPreemptive : kSrpt; }

  void OnArrival(const RequestView& r, absl::Time) override { Wait(r); }
  void OnAdmitted(const RequestView& r, absl::Time) override {
    auto it = live_.find(r.id);
    if (it == live_.end()) return;
    waiting_.erase(it->second.rank);
    it->second.running = true;
  }
  void OnPreempted(const RequestView& r, absl::Time) override { Wait(r); }
  void OnRemoved(const RequestView& r, absl::Time) override {
    auto it = live_.find(r.id);
    if (it == live_.end()) return;
    if (!it->second.running) waiting_.erase(it->second.rank);
    live_.erase(it);
  }
  void OnServed(absl::Span<const ServedTokens> served, absl::Time) override {
    for (const ServedTokens& s : served) {
      auto it = live_.find(s.id);
      if (it == live_.end() || !it->second.running) continue;
      it->second.rank.remaining = std::max<int64_t>(0, it->second.rank.remaining - s.decode_tokens);
    }
  }

  void BeginAdmission(absl::Time) override { declined_.clear(); }
  RequestId NextAdmission() override {
    // Declines per step are bounded (SchedulerOptions::max_admission_declines).
    for (const Rank& r : waiting_) {
      if (!declined_.contains(r.id)) return r.id;
    }
    return RequestId();
  }
  void Decline(RequestId id) override { declined_.insert(id); }
  void EndAdmission() override { declined_.clear(); }

  RequestId PickVictim(RequestId beneficiary, bool beneficiary_running) override {
    RequestId out[1];
    return VictimCandidates(beneficiary, beneficiary_running, out) > 0 ? out[0] : RequestId();
  }

  // The running requests with more output left than the beneficiary, most
  // first. A scan of the running set: the set is at most max_running and
  // this is a simulator baseline, not a policy for an engine.
  size_t VictimCandidates(RequestId beneficiary, bool beneficiary_running,
                          absl::Span<RequestId> out) override {
    if (!beneficiary_running && !preemptive_) return 0;
    auto b = live_.find(beneficiary);
    if (b == live_.end() || out.empty()) return 0;
    candidates_.clear();
    for (const auto& [id, entry] : live_) {
      if (entry.running && id != beneficiary && b->second.rank < entry.rank) {
        candidates_.push_back(entry.rank);
      }
    }
    const size_t n = std::min(out.size(), candidates_.size());
    std::partial_sort(candidates_.begin(), candidates_.begin() + n, candidates_.end(),
                      [](const Rank& x, const Rank& y) { return y < x; });
    for (size_t i = 0; i < n; ++i) out[i] = candidates_[i].id;
    return n;
  }

 private:
  struct Entry {
    Rank rank;
    bool running = false;
  };

  void Wait(const RequestView& r) {
    const int32_t total = std::min(lengths_.Get(r.id, r.max_new_tokens), r.max_new_tokens);
    Entry& e = live_[r.id];
    e.rank = Rank{std::max<int64_t>(0, int64_t{total} - r.output_tokens), r.arrival_seq, r.id};
    e.running = false;
    waiting_.insert(e.rank);
  }

  const TrueOutputLengths& lengths_;
  const bool preemptive_;
  absl::flat_hash_map<RequestId, Entry> live_;
  std::set<Rank> waiting_;
  absl::flat_hash_set<RequestId> declined_;
  std::vector<Rank> candidates_;
};

}  // namespace

std::unique_ptr<Policy> NewOracleSrptPolicy(const TrueOutputLengths& lengths, bool preemptive) {
  return std::make_unique<OracleSrpt>(lengths, preemptive);
}

std::vector<std::string_view> OraclePolicyNames() { return {kSrpt, kSrptPreemptive}; }

bool IsOraclePolicy(std::string_view name) { return name == kSrpt || name == kSrptPreemptive; }

absl::StatusOr<OraclePolicyFactory> MakeOraclePolicyFactory(std::string_view name) {
  if (!IsOraclePolicy(name)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown oracle policy \"", std::string(name),
                                                   "\"; known: ", std::string(kSrpt), ", ",
                                                   std::string(kSrptPreemptive)));
  }
  const bool preemptive = name == kSrptPreemptive;
  return OraclePolicyFactory(
      [preemptive](const SchedulerOptions&, const TrueOutputLengths& lengths) {
        return NewOracleSrptPolicy(lengths, preemptive);
      });
}

}  // namespace hearth
