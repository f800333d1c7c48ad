// Unit tests of InteractiveBacklog: the demand the engine reports to the
// job queues each iteration.

#ifdef HEARTH_SERVE_FOUND

#include <catch2/catch.hpp>

#include "interactive_backlog.h"

namespace hearth::serve {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1000);

TEST_CASE("interactive backlog: counts interactive requests until their first token", "[serve]") {
  // voice (0.5 s), chat (2 s) interactive; documents (class 2) not.
  InteractiveBacklog b({absl::Milliseconds(500), absl::Seconds(2), absl::Seconds(60)},
                       {true, true, false});
  CHECK(b.Demand(kT0).interactive_backlog == 0);
  CHECK(b.Demand(kT0).slo_slack == 1.0);
  b.Waiting(RequestId(1), WorkClassId(1), kT0);
  b.Waiting(RequestId(2), WorkClassId(2), kT0);  // documents: ignored
  b.Waiting(RequestId(3), WorkClassId(0), kT0 + absl::Milliseconds(100));
  b.Waiting(RequestId(3), WorkClassId(0), kT0);  // twice: ignored
  b.Waiting(RequestId(4), WorkClassId(9), kT0);  // unknown class: ignored
  InteractiveDemand d = b.Demand(kT0 + absl::Milliseconds(350));
  CHECK(d.interactive_backlog == 2);
  // voice waited 250 ms of 500 ms: the tightest slack, 0.5; chat has 0.825.
  CHECK(d.slo_slack == Approx(0.5));
  b.Answered(RequestId(3));
  b.Answered(RequestId(3));  // no-op
  d = b.Demand(kT0 + absl::Milliseconds(350));
  CHECK(d.interactive_backlog == 1);
  CHECK(d.slo_slack == Approx(1 - 0.35 / 2));
  // Far past the target the slack stays within InteractiveDemand's bounds.
  CHECK(b.Demand(kT0 + absl::Hours(1000000)).slo_slack >= -1e6);
  b.Answered(RequestId(1));
  CHECK(b.Demand(kT0).interactive_backlog == 0);
  CHECK(b.size() == 0);
}

TEST_CASE("interactive backlog: a class without a TTFT target adds backlog, not slack", "[serve]") {
  InteractiveBacklog b({absl::InfiniteDuration()}, {true});
  b.Waiting(RequestId(1), WorkClassId(0), kT0);
  const InteractiveDemand d = b.Demand(kT0 + absl::Hours(1));
  CHECK(d.interactive_backlog == 1);
  CHECK(d.slo_slack == 1.0);
}

}  // namespace
}  // namespace hearth::serve

#endif  // HEARTH_SERVE_FOUND
