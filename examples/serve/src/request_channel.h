// File: examples/serve/src/request_channel.h
//
// `RequestChannel` carries one request's output from the engine thread to
// the HTTP thread answering it: text as it becomes final (with the
// logprobs of the tokens it completes, when they were asked for), then how
// the request ended. The engine never waits on it; the HTTP side waits with a
// timeout, so that it can write keep-alives and notice a client that left.
//
// Thread-safety: Push/End from the engine thread, Wait from one HTTP thread.
//
// Example:
//   std::string text;
//   while (!channel->Wait(absl::Milliseconds(250), &text)) { Send(text); text.clear(); }
//   const RequestEnd& end = channel->end();

#ifndef HEARTH_SERVE_REQUEST_CHANNEL_H_
#define HEARTH_SERVE_REQUEST_CHANNEL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "token_logprobs.h"

namespace hearth::serve {

struct RequestEnd {
  // OK when the request finished; then finish_reason is "stop" or "length".
  // Otherwise why it did not: Cancelled, DeadlineExceeded (queue timeout),
  // InvalidArgument (rejected at intake), Internal (engine failure).
  absl::Status status;
  std::string finish_reason;
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
  // Prompt tokens found in the prefix cache (RequestResult::
  // cached_prompt_tokens): the member's own earlier blocks and the chat
  // template's shared prefix only, never another member's.
  int32_t cached_prompt_tokens = 0;
  // The engine's clock (wall time, as absl::Now()): the request first
  // admitted (its prefill began), its first token, its end. InfiniteFuture
  // for what never happened (a request ended while queued has no token).
  absl::Time first_admitted = absl::InfiniteFuture();
  absl::Time first_token = absl::InfiniteFuture();
  absl::Time ended = absl::InfiniteFuture();
  // An embedding that finished: its pooled vector (ServeEngine::
  // SubmitEmbedding); empty for a generation.
  std::vector<float> embedding;
};

class RequestChannel {
 public:
  // Engine thread: `text` became final, completing the tokens `logprobs`
  // describe (empty when none were asked for).
  void Push(absl::string_view text, std::vector<TokenLogprob> logprobs = {})
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    text_.append(text.data(), text.size());
    for (TokenLogprob& l : logprobs) logprobs_.push_back(std::move(l));
  }
  // Engine thread, once: the request ended (after its last Push).
  void End(RequestEnd end) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    end_ = std::move(end);
    ended_ = true;
  }
  // Waits up to `timeout` for text or the end; appends the text that came
  // to `*text` and its logprobs to `*logprobs` (when not null). Returns
  // whether the request has ended (all its text is then in `*text`).
  bool Wait(absl::Duration timeout, std::string* text,
            std::vector<TokenLogprob>* logprobs = nullptr) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(this, &RequestChannel::Ready), timeout);
    text->append(text_);
    text_.clear();
    if (logprobs != nullptr) {
      for (TokenLogprob& l : logprobs_) logprobs->push_back(std::move(l));
    }
    logprobs_.clear();
    return ended_;
  }
  // REQUIRES: Wait returned true.
  RequestEnd end() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return end_;
  }

 private:
  bool Ready() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return ended_ || !text_.empty() || !logprobs_.empty();
  }

  mutable absl::Mutex mu_;
  std::string text_ ABSL_GUARDED_BY(mu_);
  std::vector<TokenLogprob> logprobs_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  RequestEnd end_ ABSL_GUARDED_BY(mu_);
};

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_REQUEST_CHANNEL_H_
