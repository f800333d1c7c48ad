// Unit tests of CallOnQueue: a value back from a real JobPool, and each way
// a job can end mapped to the status the HTTP answer uses.

#ifdef HEARTH_SERVE_FOUND

#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "job_call.h"
#include "serve_job_queues.h"

namespace hearth::serve {
namespace {

std::unique_ptr<JobPool> Pool() {
  JobPoolOptions o = ServeJobQueues(2, 8);
  o.queues[0].max_queued = 1;
  auto pool = JobPool::Create(o);
  REQUIRE(pool.ok());
  return *std::move(pool);
}

TEST_CASE("CallOnQueue: the function's value and error come back", "[serve][threads]") {
  std::unique_ptr<JobPool> pool = Pool();
  JobSpec spec;
  spec.queue = kInteractiveQueue;
  auto value = CallOnQueue<std::unique_ptr<std::string>>(
      *pool, spec, [](const JobContext&) -> absl::StatusOr<std::unique_ptr<std::string>> {
        return std::make_unique<std::string>("tokens");
      });
  REQUIRE(value.ok());
  CHECK(**value == "tokens");
  auto failed = CallOnQueue<int>(*pool, spec, [](const JobContext&) -> absl::StatusOr<int> {
    return absl::InvalidArgumentError("no tokens");
  });
  CHECK(failed.status() == absl::InvalidArgumentError("no tokens"));
  CHECK(pool->Stats().queues[0].ended_as(JobEnd::kDone) == 1);
}

TEST_CASE("CallOnQueue: refusals and ends that are not done map to HTTP statuses", "[serve][threads]") {
  std::unique_ptr<JobPool> pool = Pool();
  JobSpec spec;
  spec.queue = "no_such_queue";
  auto unknown = CallOnQueue<int>(*pool, spec, [](const JobContext&) { return absl::StatusOr<int>(1); });
  CHECK(unknown.status().code() == absl::StatusCode::kInternal);

  spec.queue = kDocumentsQueue;
  spec.run_timeout = absl::Milliseconds(20);
  spec.max_retries = 0;
  auto slow = CallOnQueue<int>(*pool, spec, [](const JobContext& c) -> absl::StatusOr<int> {
    while (!c.stop_requested()) absl::SleepFor(absl::Milliseconds(1));
    return 1;
  });
  CHECK(slow.status().code() == absl::StatusCode::kDeadlineExceeded);

  pool->Shutdown();
  spec.run_timeout.reset();
  auto after = CallOnQueue<int>(*pool, spec, [](const JobContext&) { return absl::StatusOr<int>(1); });
  CHECK(after.status().code() == absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace hearth::serve

#endif  // HEARTH_SERVE_FOUND
