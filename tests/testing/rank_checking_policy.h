// File: tests/testing/rank_checking_policy.h
//
// A Policy decorator for property tests that checks, policy by policy, the
// rule "no policy evicts a request for one that ranks after it", using only
// the seam's own answers, so it holds every policy to its own order:
//   - a victim preempted for a waiting beneficiary must not be offered for
//     admission before that beneficiary, which is still waiting (the policy
//     would otherwise have evicted a request it ranks ahead);
//   - a request evicted for another may not, in the steps that follow until
//     either is served again, be the beneficiary that evicts it back (two
//     requests that each rank after the other have no consistent order);
//   - a victim is never the beneficiary itself and always a running request.
// The first violation is kept; everything else forwards to the wrapped
// policy unchanged.

#ifndef HEARTH_TESTS_TESTING_RANK_CHECKING_POLICY_H_
#define HEARTH_TESTS_TESTING_RANK_CHECKING_POLICY_H_

#include <memory>
#include <string>

#include "hearth/policy/policy.h"

namespace hearth::testing {

// Where the decorators of one run report; empty while no rule was broken.
struct RankViolations {
  std::string first;
  int64_t victims_checked = 0;
};

// Wraps the policies `inner` builds (null: FIFO) so that each reports to
// `violations`, which must outlive the schedulers built.
PolicyFactory RankCheckingFactory(PolicyFactory inner,
                                  std::shared_ptr<RankViolations> violations);

} // namespace hearth::testing

#endif // HEARTH_TESTS_TESTING_RANK_CHECKING_POLICY_H_
