#include "bench/fidelity/fidelity_stats.h"

#include <catch2/catch.hpp>

namespace hearth::fidelity {
namespace {

TEST_CASE("Quantile interpolates between order statistics", "[fidelity]") {
  const std::vector<double> v = {4, 1, 3, 2, 5};
  CHECK(Quantile(v, 0.5) == Approx(3));
  CHECK(Quantile(v, 0.0) == Approx(1));
  CHECK(Quantile(v, 1.0) == Approx(5));
  CHECK(Quantile(v, 0.9) == Approx(4.6));
  CHECK(Quantile(std::vector<double>{1, 2}, 0.5) == Approx(1.5));
  CHECK(Quantile({}, 0.5) == 0);
}

TEST_CASE("Summarize reports median, p90, mean and max", "[fidelity]") {
  std::vector<double> v;
  for (int i = 1; i <= 10; ++i) v.push_back(i / 100.0);
  const ErrorSummary s = Summarize(v);
  CHECK(s.count == 10);
  CHECK(s.median == Approx(0.055));
  CHECK(s.p90 == Approx(0.091));
  CHECK(s.mean == Approx(0.055));
  CHECK(s.max == Approx(0.10));
  CHECK(Summarize({}).count == 0);
}

TEST_CASE("RelativeErrors divides by the measured value and validates", "[fidelity]") {
  auto e = RelativeErrors(std::vector<double>{1.1, 0.5}, std::vector<double>{1.0, 1.0});
  REQUIRE(e.ok());
  CHECK((*e)[0] == Approx(0.1));
  CHECK((*e)[1] == Approx(0.5));
  CHECK(RelativeErrors(std::vector<double>{1}, std::vector<double>{1, 2}).status().code() ==
        absl::StatusCode::kInvalidArgument);
  auto zero = RelativeErrors(std::vector<double>{1}, std::vector<double>{0});
  REQUIRE(zero.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(zero.status().message().find("measured[0] is 0") != std::string::npos);
}

TEST_CASE("SpreadOf is the p10-p90 band relative to the median", "[fidelity]") {
  std::vector<double> v;
  for (int i = 0; i <= 10; ++i) v.push_back(10 + i);  // 10..20, median 15
  const Spread s = SpreadOf(v);
  CHECK(s.median == Approx(15));
  CHECK(s.p10 == Approx(11));
  CHECK(s.p90 == Approx(19));
  CHECK(s.relative == Approx(8.0 / 15));
}

TEST_CASE("IsHeldOut holds out about a quarter of any long stretch", "[fidelity]") {
  for (size_t begin : {0, 100, 1000}) {
    int held = 0;
    for (size_t i = begin; i < begin + 400; ++i) held += IsHeldOut(i);
    CHECK(held > 60);
    CHECK(held < 140);
  }
}

TEST_CASE("CompareRequests pairs by index, whatever the order", "[fidelity]") {
  const std::vector<RequestLatency> real = {{0, "voice", 1.0, 2.0}, {1, "chat", 2.0, 4.0}};
  const std::vector<RequestLatency> sim = {{1, "chat", 2.2, 4.0}, {0, "voice", 0.9, 2.4}};
  auto c = CompareRequests(real, sim);
  REQUIRE(c.ok());
  CHECK(c->requests == 2);
  CHECK(c->ttft.median == Approx(0.1));
  CHECK(c->ttft.max == Approx(0.1));
  CHECK(c->e2e.max == Approx(0.2));
  CHECK(c->e2e.median == Approx(0.1));
}

TEST_CASE("CompareRequests refuses unpaired, doubled or zero-latency requests", "[fidelity]") {
  const std::vector<RequestLatency> real = {{0, "voice", 1.0, 2.0}, {1, "chat", 2.0, 4.0}};
  CHECK(!CompareRequests(real, std::vector<RequestLatency>{{0, "voice", 1, 2}}).ok());
  CHECK(!CompareRequests(real, std::vector<RequestLatency>{{0, "voice", 1, 2}, {0, "voice", 1, 2}}).ok());
  CHECK(!CompareRequests(real, std::vector<RequestLatency>{{0, "voice", 1, 2}, {5, "chat", 1, 2}}).ok());
  const std::vector<RequestLatency> zero = {{0, "voice", 0.0, 2.0}};
  CHECK(CompareRequests(zero, zero).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("ClassTtftQuantile looks at one class only", "[fidelity]") {
  const std::vector<RequestLatency> run = {
      {0, "voice", 1.0, 1}, {1, "voice", 3.0, 3}, {2, "agent", 100.0, 100}};
  CHECK(ClassTtftQuantile(run, "voice", 0.5) == Approx(2.0));
  CHECK(ClassTtftQuantile(run, "chat", 0.9) == 0);
}

TEST_CASE("OrderOf names the lower value, with a tie band", "[fidelity]") {
  CHECK(OrderOf(1.0, 2.0, 0.05) == Order::kFirstBetter);
  CHECK(OrderOf(2.0, 1.0, 0.05) == Order::kSecondBetter);
  CHECK(OrderOf(1.0, 1.04, 0.05) == Order::kTie);
  CHECK(OrderOf(0, 0, 0.05) == Order::kTie);
  CHECK(std::string(OrderName(Order::kTie)) == "tie");
}

}  // namespace
}  // namespace hearth::fidelity
