// File: examples/serve/src/job_call.h
//
// `CallOnQueue` runs a function on one of the server's job queues
// (hearth::JobPool) and waits for its value. HTTP threads hand their CPU
// work -- chat templating and tokenisation, document parsing and chunking --
// and main() its model load to the pool, whose limits, priorities and
// give-back rule decide when it runs; the caller blocks meanwhile (it is
// already a thread of its own, one per connection).
//
// How the job ended becomes the status the HTTP answer uses
// (openai_response.h):
//   done                        the function's value
//   failed                      the function's error (retried first if the
//                               queue allows and the error is retryable)
//   queue full                  ResourceExhausted (429)
//   timed out                   DeadlineExceeded (504)
//   rejected / pool shut down   Unavailable (503)
//   cancelled                   Cancelled
//
// The function, and everything it captures, is shared with the worker: a
// job that times out keeps running until it returns, possibly after the
// caller has gone, so `fn` must capture by value (or pointers to objects
// that outlive the pool).
//
// Thread-safety: any thread.
//
// Example:
//   JobSpec spec;
//   spec.queue = "interactive";
//   absl::StatusOr<int> n = CallOnQueue<int>(pool, spec,
//       [](const JobContext&) -> absl::StatusOr<int> { return 42; });

#ifndef HEARTH_SERVE_JOB_CALL_H_
#define HEARTH_SERVE_JOB_CALL_H_

#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "hearth/jobs/job_pool.h"

namespace hearth::serve {

namespace job_call_internal {

template <typename T>
struct CallState {
  absl::Mutex mu;
  bool ended ABSL_GUARDED_BY(mu) = false;
  JobResult result ABSL_GUARDED_BY(mu);
  // The last attempt's value.
  std::optional<absl::StatusOr<T>> value ABSL_GUARDED_BY(mu);
};

// The status a job that did not end kDone stands for.
absl::Status EndStatus(const JobResult& r);
// The status a refused Submit stands for.
absl::Status SubmitStatus(const JobSpec& spec, const absl::Status& refused);

}  // namespace job_call_internal

template <typename T>
absl::StatusOr<T> CallOnQueue(JobPool& pool, const JobSpec& spec,
                              std::function<absl::StatusOr<T>(const JobContext&)> fn) {
  auto state = std::make_shared<job_call_internal::CallState<T>>();
  JobWork work = [state, fn = std::move(fn)](const JobContext& c) -> absl::Status {
    absl::StatusOr<T> value = fn(c);
    absl::Status status = value.status();
    absl::MutexLock lock(&state->mu);
    state->value = std::move(value);
    return status;
  };
  JobEndCallback on_end = [state](const JobResult& r) {
    absl::MutexLock lock(&state->mu);
    state->result = r;
    state->ended = true;
  };
  absl::StatusOr<JobId> id = pool.Submit(spec, std::move(work), std::move(on_end));
  if (!id.ok()) return job_call_internal::SubmitStatus(spec, id.status());
  absl::MutexLock lock(&state->mu);
  state->mu.Await(absl::Condition(&state->ended));
  if (state->result.end != JobEnd::kDone) return job_call_internal::EndStatus(state->result);
  return *std::move(state->value);
}

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_JOB_CALL_H_
