// The exactly-once promise of Scheduler (scheduler.h): every id Submit
// returned ends exactly once, no id ends twice, no unknown id ends. The
// ledger records what was accepted and checks each result as it arrives.

#ifndef HEARTH_TESTS_FUZZ_RESULT_LEDGER_H_
#define HEARTH_TESTS_FUZZ_RESULT_LEDGER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hearth/common/ids.h"
#include "hearth/request/request_state.h"
#include "tests/fuzz/fuzz_check.h"

namespace hearth::fuzz {

class ResultLedger {
 public:
  void Accepted(RequestId id) {
    Require(id.valid(), "Submit returned an invalid id");
    if (live_.contains(id.value()) || ended_.contains(id.value())) {
      Fail(absl::StrCat("Submit returned id ", id.ToString(), " a second time"));
    }
    live_.insert(id.value());
    accepted_.push_back(id);
  }

  void Ended(const RequestResult& r) {
    const uint64_t id = r.id.value();
    if (ended_.contains(id)) Fail(absl::StrCat("request ", r.id.ToString(), " ended twice"));
    if (!live_.contains(id)) {
      Fail(absl::StrCat("a result for id ", r.id.ToString(), " that Submit never returned"));
    }
    if (!IsTerminal(r.phase)) {
      Fail(absl::StrCat("request ", r.id.ToString(), " reported in a non-terminal phase"));
    }
    live_.erase(id);
    ended_.insert(id);
  }

  bool all_ended() const { return live_.empty(); }
  size_t live() const { return live_.size(); }
  bool ended(RequestId id) const { return ended_.contains(id.value()); }
  const std::vector<RequestId>& accepted() const { return accepted_; }
  std::vector<RequestId> live_ids() const {
    std::vector<RequestId> out;
    for (RequestId id : accepted_) {
      if (live_.contains(id.value())) out.push_back(id);
    }
    return out;
  }

 private:
  static bool IsTerminal(RequestPhase p) {
    return p != RequestPhase::kQueued && p != RequestPhase::kPreparing &&
           p != RequestPhase::kWaiting && p != RequestPhase::kRunning &&
           p != RequestPhase::kSwapped;
  }

  std::vector<RequestId> accepted_;
  absl::flat_hash_set<uint64_t> live_;
  absl::flat_hash_set<uint64_t> ended_;
};

}  // namespace hearth::fuzz

#endif  // HEARTH_TESTS_FUZZ_RESULT_LEDGER_H_
