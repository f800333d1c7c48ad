// The engine never waits on a host thread that holds the inbox: these tests
// hold its locks from a second thread (as a host switched out mid-Submit
// would) and check that the engine's calls go on, settle later, and lose
// nothing.

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/time/time.h"
#include "scheduler/inbox.h"
#include "scheduler/submission_queues.h"
#include "tests/testing/request_builder.h"

namespace hearth::internal {

class SubmissionQueuesTestPeer {
 public:
  static std::mutex& UserLock(SubmissionQueues& q, uint32_t user) { return q.users_[user].mu; }
};

class InboxTestPeer {
 public:
  static std::mutex& Lock(Inbox& inbox) { return inbox.mu_; }
};

namespace {

using testing::Spec;

// Holds `mu` on its own thread from construction until Release().
class LockHolder {
 public:
  explicit LockHolder(std::mutex& mu) {
    std::promise<void> held;
    std::future<void> is_held = held.get_future();
    thread_ = std::thread([&mu, &held, this] {
      std::lock_guard<std::mutex> lock(mu);
      held.set_value();
      while (!release_.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    });
    is_held.wait();
  }
  ~LockHolder() { Release(); }
  void Release() {
    release_.store(true);
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> release_{false};
  std::thread thread_;
};

std::vector<uint64_t> Ids(const std::vector<Submission>& subs) {
  std::vector<uint64_t> ids;
  for (const Submission& s : subs) ids.push_back(s.id.value());
  return ids;
}

TEST_CASE("A user whose queue is locked skips its turn, the others are taken at once",
          "[inbox][threads]") {
  SubmissionQueues queues(2);
  for (uint64_t id = 1; id <= 3; ++id) queues.Push(0, Submission{.id = RequestId(id)});
  for (uint64_t id = 4; id <= 6; ++id) queues.Push(1, Submission{.id = RequestId(id)});
  std::vector<Submission> out;
  {
    LockHolder holder(SubmissionQueuesTestPeer::UserLock(queues, 0));
    queues.TakeTurns(10, &out);
    CHECK(Ids(out) == std::vector<uint64_t>{4, 5, 6});
    CHECK(queues.size() == 3);
  }
  out.clear();
  queues.TakeTurns(10, &out);
  CHECK(Ids(out) == std::vector<uint64_t>{1, 2, 3});
  CHECK(queues.size() == 0);
}

TEST_CASE("Submission queues: users share the budget, remainders rotate, cancels mark",
          "[inbox]") {
  SubmissionQueues queues(3);
  uint64_t next = 1;
  for (uint32_t u = 0; u < 3; ++u) {
    for (int i = 0; i < 10; ++i) queues.Push(u, Submission{.id = RequestId(next++)});
  }
  REQUIRE(queues.MarkCancelled(1, RequestId(15)));
  REQUIRE_FALSE(queues.MarkCancelled(1, RequestId(3)));  // Not user 1's.
  REQUIRE(queues.Contains(2, RequestId(21)));
  std::vector<Submission> out;
  queues.TakeTurns(7, &out);  // 2 each, then one more for the first in turn.
  std::vector<int> per_user(3, 0);
  for (const Submission& s : out) ++per_user[(s.id.value() - 1) / 10];
  CHECK(per_user == std::vector<int>{3, 2, 2});
  out.clear();
  queues.TakeTurns(7, &out);  // The remainder goes to the next user now.
  per_user.assign(3, 0);
  for (const Submission& s : out) ++per_user[(s.id.value() - 1) / 10];
  CHECK(per_user == std::vector<int>{2, 3, 2});
  out.clear();
  queues.TakeTurns(100, &out);
  REQUIRE(out.size() == 16);
  for (const Submission& s : out) CHECK(s.cancelled == (s.id.value() == 15));
  CHECK_FALSE(queues.MarkCancelled(1, RequestId(15)));  // Taken: too late to mark.
}

RequestResult Ended(RequestId id) {
  RequestResult r;
  r.id = id;
  r.prompt_tokens = 10;
  r.output_tokens = 5;
  return r;
}

TEST_CASE("Engine calls while a host holds the inbox settle later and lose nothing",
          "[inbox][threads]") {
  SchedulerOptions options;
  options.users = {{.name = "alice"}, {.name = "bob"}};
  ModelRegistry models(options.models);
  Inbox inbox(options, models);
  const RequestId a = *inbox.Submit(Spec({.user = 0, .prompt = 10, .max_new = 5}), {});
  const RequestId b = *inbox.Submit(Spec({.user = 1, .prompt = 10, .max_new = 5}), {});
  std::vector<Submission> subs;
  std::vector<RequestChange> changes;
  std::vector<Cancellation> cancels;
  std::vector<RequestResult> ended;
  std::vector<RequestResult> results;
  const absl::Time now = absl::UnixEpoch() + absl::Seconds(1);
  {
    LockHolder host(InboxTestPeer::Lock(inbox));
    // Intake does not need the held lock: both are taken in at once.
    inbox.Drain(now, &subs, &changes, &cancels);
    CHECK(Ids(subs) == std::vector<uint64_t>{a.value(), b.value()});
    ended.push_back(Ended(a));
    inbox.Finish(&ended);  // Deferred, not waited for.
    CHECK(ended.empty());
  }
  // Settled by whichever engine call next gets the lock; then the audit
  // balances (b live and taken in) and a's result is there.
  CHECK(inbox.Audit(/*taken_in=*/1).ok());
  CHECK(inbox.Cancel(b).ok());
  inbox.Drain(now, &subs, &changes, &cancels);
  CHECK(subs.empty());
  REQUIRE(cancels.size() == 1);
  CHECK(cancels[0].id == b);
  CHECK(inbox.DrainResults(&results) == 1);
  CHECK(results[0].id == a);
  CHECK(inbox.Audit(/*taken_in=*/1).ok());
}

TEST_CASE("After kMaxUnsettledCalls deferrals the engine waits for the lock once",
          "[inbox][threads]") {
  SchedulerOptions options;
  options.users = {{.name = "alice"}};
  ModelRegistry models(options.models);
  Inbox inbox(options, models);
  const RequestId a = *inbox.Submit(Spec({.user = 0, .prompt = 10, .max_new = 5}), {});
  std::vector<Submission> subs;
  std::vector<RequestChange> changes;
  std::vector<Cancellation> cancels;
  std::vector<RequestResult> ended;
  const absl::Time now = absl::UnixEpoch() + absl::Seconds(1);
  auto host = std::make_unique<LockHolder>(InboxTestPeer::Lock(inbox));
  inbox.Drain(now, &subs, &changes, &cancels);
  REQUIRE(subs.size() == 1);
  ended.push_back(Ended(a));
  inbox.Finish(&ended);
  // Drain and Finish above deferred twice; these bring it to the bound.
  for (int i = 2; i < Inbox::kMaxUnsettledCalls; ++i) inbox.Drain(now, &subs, &changes, &cancels);
  // The next call must wait: release the lock from here only after it began.
  std::atomic<bool> returned{false};
  std::thread engine([&] {
    inbox.Drain(now, &subs, &changes, &cancels);
    returned.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(returned.load());
  host->Release();
  engine.join();
  std::vector<RequestResult> results;
  CHECK(inbox.DrainResults(&results) == 1);
  CHECK(inbox.Audit(/*taken_in=*/0).ok());
  CHECK(inbox.Submit(Spec({.user = 0, .prompt = 10, .max_new = 5}), {}).ok());
}

}  // namespace
}  // namespace hearth::internal
