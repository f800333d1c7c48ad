// Properties of the Virtual Token Counter, driven through the real core by
// PolicyDriver.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "hearth/policy/policy_tree.h"
#include "hearth/policy/vtc.h"
#include "tests/testing/policy_driver.h"

namespace hearth {
namespace {

using testing_policy::DriverOptions;
using testing_policy::MakeArrivalOrder;
using testing_policy::PolicyDriver;

PolicyFactory MakeVtc(const VtcOptions& options) {
  absl::StatusOr<PolicyFactory> factory = VtcPolicyFactory(options);
  REQUIRE(factory.ok());
  return *factory;
}

double Service(const PolicyDriver& d, uint32_t user, const VtcOptions& o) {
  auto get = [user](const std::map<uint32_t, int64_t>& m) {
    auto it = m.find(user);
    return it == m.end() ? 0.0 : static_cast<double>(it->second);
  };
  return o.prompt_token_weight * get(d.prefill_by_user()) +
         o.decode_token_weight * get(d.decode_by_user());
}

struct SizeRange {
  int32_t prompt_lo, prompt_hi, output_lo, output_hi;
};

// Queues `count` requests per user at step 0 with sizes drawn from each
// user's range; returns the longest prompt.
int32_t Backlog(PolicyDriver& d, const std::vector<SizeRange>& ranges,
                int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  int32_t longest = 0;
  for (int i = 0; i < count; ++i) {
    for (uint32_t u = 0; u < ranges.size(); ++u) {
      const SizeRange& r = ranges[u];
      int32_t prompt =
          std::uniform_int_distribution<int32_t>(r.prompt_lo, r.prompt_hi)(rng);
      int32_t output =
          std::uniform_int_distribution<int32_t>(r.output_lo, r.output_hi)(rng);
      longest = std::max(longest, prompt);
      d.AddAt(0, {.user = u, .prompt = prompt, .max_new = output});
    }
  }
  return longest;
}

// Runs until some user stops being backlogged; returns the largest service
// difference between any two users seen at any step.
double MaxDifferenceWhileBacklogged(PolicyDriver& d, uint32_t users,
                                    const VtcOptions& o, int64_t max_steps) {
  double worst = 0;
  for (int64_t s = 0; s < max_steps; ++s) {
    d.Step();
    bool all_backlogged = true;
    for (uint32_t u = 0; u < users; ++u) {
      all_backlogged = all_backlogged && d.waiting_of_user(u) > 0;
    }
    if (!all_backlogged) break;
    double lo = Service(d, 0, o), hi = lo;
    for (uint32_t u = 1; u < users; ++u) {
      lo = std::min(lo, Service(d, u, o));
      hi = std::max(hi, Service(d, u, o));
    }
    worst = std::max(worst, hi - lo);
  }
  return worst;
}

TEST_CASE("vtc: two backlogged users stay within the service bound",
          "[policy][vtc]") {
  uint64_t seed = GENERATE(1, 2, 3);
  VtcOptions o;
  DriverOptions d_options;
  d_options.max_running = 8;
  d_options.token_budget = 256;
  d_options.max_chunk = 128;
  d_options.kv_capacity_tokens = 1024;
  d_options.seed = seed;
  std::vector<SizeRange> ranges = {{16, 128, 8, 64}, {200, 400, 100, 300}};

  PolicyDriver d(MakeVtc(o), d_options);
  int32_t longest = Backlog(d, ranges, 150, seed);
  // The paper's bound; M is the most tokens a running batch holds (its KV).
  double bound = 2 * std::max(o.prompt_token_weight * longest,
                              o.decode_token_weight * d_options.kv_capacity_tokens);
  double worst = MaxDifferenceWhileBacklogged(d, 2, o, 20000);
  INFO("seed " << seed << " worst " << worst << " bound " << bound);
  CHECK(worst <= bound);
  CHECK(d.step() > 500);  // the users really were backlogged for long
  CHECK(d.errors().empty());

  // Tighter than the theorem in practice (kept as a regression guard).
  CHECK(worst <= bound / 2);

  // Control: arrival order lets the big-request user pull far ahead.
  PolicyDriver control(MakeArrivalOrder(), d_options);
  Backlog(control, ranges, 150, seed);
  CHECK(MaxDifferenceWhileBacklogged(control, 2, o, 20000) > bound);
}

TEST_CASE("vtc: eight backlogged users stay within the service bound",
          "[policy][vtc]") {
  uint64_t seed = GENERATE(7, 8);
  VtcOptions o;
  o.prompt_token_weight = GENERATE(1.0, 0.5);
  DriverOptions d_options;
  d_options.max_running = 16;
  d_options.token_budget = 512;
  d_options.max_chunk = 256;
  d_options.kv_capacity_tokens = 2048;
  d_options.seed = seed;
  std::vector<SizeRange> ranges;
  for (int32_t u = 0; u < 8; ++u) {
    ranges.push_back({8 + 40 * u, 40 + 60 * u, 4 + 20 * u, 16 + 40 * u});
  }
  PolicyDriver d(MakeVtc(o), d_options);
  int32_t longest = Backlog(d, ranges, 60, seed);
  double bound = 2 * std::max(o.prompt_token_weight * longest,
                              o.decode_token_weight * d_options.kv_capacity_tokens);
  double worst = MaxDifferenceWhileBacklogged(d, 8, o, 20000);
  INFO("seed " << seed << " worst " << worst << " bound " << bound);
  CHECK(worst <= bound);
  CHECK(d.step() > 200);
  CHECK(d.errors().empty());
}

TEST_CASE("vtc: a returning idle user gets no catch-up burst (lift)",
          "[policy][vtc]") {
  uint64_t seed = GENERATE(11, 12);
  VtcOptions o;
  DriverOptions d_options;
  d_options.max_running = 8;
  d_options.token_budget = 256;
  d_options.max_chunk = 128;
  d_options.kv_capacity_tokens = 1024;
  d_options.seed = seed;
  PolicyDriver d(MakeVtc(o), d_options);
  std::vector<SizeRange> ranges = {{32, 96, 16, 64}, {32, 96, 16, 64}};
  int32_t longest = Backlog(d, ranges, 400, seed);
  // User 2 is served once early, then idles while 0 and 1 pile up service.
  d.AddAt(0, {.user = 2, .prompt = 64, .max_new = 32});
  const int64_t kReturn = 1500;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 200; ++i) {
    // Output before prompt, as the old positional call evaluated them (see
    // policy_contract_test.cc).
    const int32_t output = std::uniform_int_distribution<int32_t>(16, 64)(rng);
    const int32_t prompt = std::uniform_int_distribution<int32_t>(32, 96)(rng);
    d.AddAt(kReturn, {.user = 2, .prompt = prompt, .max_new = output});
  }
  d.Run(kReturn);
  REQUIRE(d.waiting_of_user(0) > 0);
  REQUIRE(d.waiting_of_user(1) > 0);
  double base[3];
  for (uint32_t u = 0; u < 3; ++u) base[u] = Service(d, u, o);
  double bound = 2 * std::max(o.prompt_token_weight * longest,
                              o.decode_token_weight * d_options.kv_capacity_tokens);
  double worst_burst = 0;
  for (int i = 0; i < 2000; ++i) {
    d.Step();
    if (d.waiting_of_user(0) == 0 || d.waiting_of_user(1) == 0 ||
        d.waiting_of_user(2) == 0) {
      break;
    }
    double returning = Service(d, 2, o) - base[2];
    double others = std::min(Service(d, 0, o) - base[0],
                             Service(d, 1, o) - base[1]);
    worst_burst = std::max(worst_burst, returning - others);
  }
  INFO("worst burst " << worst_burst << " bound " << bound);
  CHECK(worst_burst <= bound);
  CHECK(d.errors().empty());
}

// The weights come from VtcOptions, from the scheduler's UserConfig, or from
// both, where VtcOptions wins.
enum class WeightSource { kVtcOptions, kSchedulerOptions, kBoth };

TEST_CASE("vtc: weights 1:2:3:4 give shares within 5%", "[policy][vtc]") {
  uint64_t seed = GENERATE(21, 22);
  const WeightSource source = GENERATE(WeightSource::kVtcOptions,
                                       WeightSource::kSchedulerOptions,
                                       WeightSource::kBoth);
  const std::vector<double> want_weights = {1, 2, 3, 4};
  VtcOptions o;
  SchedulerOptions scheduler;
  if (source != WeightSource::kVtcOptions) {
    const std::vector<double> users = source == WeightSource::kBoth
                                          ? std::vector<double>{4, 3, 2, 1}
                                          : want_weights;
    scheduler.users.clear();
    for (double w : users) {
      scheduler.users.push_back({.name = absl::StrCat("u", w), .weight = w});
    }
  }
  if (source != WeightSource::kSchedulerOptions) o.user_weights = want_weights;
  absl::StatusOr<PolicyFactory> factory = VtcPolicyFactory(o);
  REQUIRE(factory.ok());
  DriverOptions d_options;
  d_options.max_running = 8;
  d_options.token_budget = 256;
  d_options.max_chunk = 128;
  d_options.seed = seed;
  PolicyDriver d(*factory, d_options, scheduler);
  std::vector<SizeRange> same(4, SizeRange{32, 256, 16, 128});
  Backlog(d, same, 500, seed);
  for (int i = 0; i < 6000; ++i) {
    d.Step();
    bool all = true;
    for (uint32_t u = 0; u < 4; ++u) all = all && d.waiting_of_user(u) > 0;
    REQUIRE(all);
  }
  double total = 0;
  for (uint32_t u = 0; u < 4; ++u) total += Service(d, u, o);
  for (uint32_t u = 0; u < 4; ++u) {
    double share = Service(d, u, o) / total;
    double want = want_weights[u] / 10.0;
    INFO("user " << u << " share " << share << " want " << want);
    CHECK(std::abs(share / want - 1) <= 0.05);
  }
  CHECK(d.errors().empty());
}

TEST_CASE("vtc: a running beneficiary takes victims from the most-served user",
          "[policy][vtc]") {
  VtcOptions o;
  DriverOptions d_options;
  d_options.max_running = 4;
  d_options.token_budget = 64;
  d_options.max_chunk = 64;
  PolicyDriver d(MakeVtc(o), d_options);
  Policy& p = d.policy();
  // All arrive together; user 0's long first prompt (one output token)
  // makes its counter the larger, and its second request holds little.
  RequestId x = d.AddAt(0, {.user = 0, .prompt = 600, .max_new = 1});
  RequestId a = d.AddAt(0, {.user = 0, .prompt = 16, .max_new = 500});
  RequestId b = d.AddAt(0, {.user = 1, .prompt = 16, .max_new = 500});
  d.Run(30);
  REQUIRE(d.request(x).view.phase == RequestPhase::kFinished);
  REQUIRE(d.request(a).view.phase == RequestPhase::kRunning);
  REQUIRE(d.request(b).view.phase == RequestPhase::kRunning);
  // User 0 leads by more than `a` costs: it yields to user 1, never the
  // reverse.
  CHECK(p.PickVictim(d.core_id(b), true) == d.core_id(a));
  CHECK_FALSE(p.PickVictim(d.core_id(a), true).valid());
  // Admission does not preempt unless asked to.
  CHECK_FALSE(p.PickVictim(RequestId(999), false).valid());
}

TEST_CASE("vtc: no victim whose eviction costs more than its user's lead",
          "[policy][vtc]") {
  DriverOptions d_options;
  d_options.max_running = 4;
  d_options.token_budget = 64;
  d_options.max_chunk = 64;
  PolicyDriver d(MakeVtc(VtcOptions{}), d_options);
  Policy& p = d.policy();
  // User 0's counter is larger only by about its one request's prompt,
  // which evicting that request would throw away (and recompute).
  RequestId a = d.AddAt(0, {.user = 0, .prompt = 300, .max_new = 500});
  RequestId b = d.AddAt(0, {.user = 1, .prompt = 16, .max_new = 500});
  d.Run(12);
  REQUIRE(d.request(a).view.phase == RequestPhase::kRunning);
  REQUIRE(d.request(b).view.phase == RequestPhase::kRunning);
  CHECK_FALSE(p.PickVictim(d.core_id(b), true).valid());
  CHECK_FALSE(p.PickVictim(d.core_id(a), true).valid());
}

TEST_CASE("vtc: a lifted user that is running is also re-ranked as a victim",
          "[policy][vtc]") {
  std::unique_ptr<Policy> p = MakeVtc(VtcOptions{})(SchedulerOptions{});
  const absl::Time t = absl::UnixEpoch();
  uint64_t seq = 0;
  auto view = [&](uint64_t id, uint32_t user) {
    RequestView v;
    v.id = RequestId(id);
    v.user = UserId(user);
    v.prompt_tokens = 10;
    v.max_new_tokens = 100;
    v.arrival_seq = seq++;
    v.arrival_time = t;
    return v;
  };
  auto run = [&](const RequestView& v) {
    p->OnArrival(v, t);
    p->OnAdmitted(v, t);
  };
  // Users 0, 1 and 2 each run one request; user 1 has been served far more
  // and also has one waiting.
  RequestView c1 = view(1, 2), b1 = view(2, 1), a1 = view(3, 0);
  run(c1);
  run(b1);
  run(a1);
  std::vector<ServedTokens> served = {{c1.id, c1.user, c1.work_class, 10, 0},
                                      {b1.id, b1.user, b1.work_class, 10, 0},
                                      {a1.id, a1.user, a1.work_class, 10, 0}};
  p->OnServed(served, t);
  served = {{b1.id, b1.user, b1.work_class, 0, 1}};
  for (int i = 0; i < 50; ++i) p->OnServed(served, t);
  p->OnArrival(view(4, 1), t);
  // User 2 becomes backlogged while running: the lift raises its counter to
  // user 1's (the least-served backlogged user), so user 2 now ties for
  // most served and, created first, is the victim for user 0's growth.
  p->OnArrival(view(5, 2), t);
  CHECK(p->PickVictim(a1.id, true) == c1.id);
}

TEST_CASE("vtc: options are validated", "[policy][vtc]") {
  VtcOptions o;
  CHECK(ValidateVtcOptions(o).ok());
  o.user_weights = {1.0, 0.0};
  absl::Status bad = ValidateVtcOptions(o);
  CHECK(bad.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(bad.message()).find("user_weights[1]") != std::string::npos);
  o.user_weights = {};
  o.prompt_token_weight = 0;
  o.decode_token_weight = 0;
  CHECK_FALSE(VtcPolicyFactory(o).ok());
  o.decode_token_weight = -1;
  CHECK_FALSE(ValidateVtcOptions(o).ok());
}

}  // namespace
}  // namespace hearth
