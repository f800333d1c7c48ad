// File: examples/serve/src/logprob_trail.h
//
// `LogprobTrail` holds a request's token logprobs until the text they
// stand for is sent (output_text.h holds back text that could begin a stop
// string or ends mid-character), so that every chunk's logprobs describe
// exactly the tokens whose text that chunk completes, and an answer cut at
// a stop string lists the tokens its text contains -- the one the stop
// string begins in included, none after it.
//
// Thread-safety: one thread at a time (the engine thread).
//
// Example:
//   trail.Add(entry);                        // entry.token: the token's bytes
//   std::vector<TokenLogprob> done = trail.TakeSent(bytes_sent_so_far);

#ifndef HEARTH_SERVE_LOGPROB_TRAIL_H_
#define HEARTH_SERVE_LOGPROB_TRAIL_H_

#include <cstddef>
#include <deque>
#include <vector>

#include "token_logprobs.h"

namespace hearth::serve {

class LogprobTrail {
 public:
  // The next generated token; its bytes follow the previous token's.
  void Add(TokenLogprob entry);
  // The held entries whose bytes all lie within the answer's first `sent`.
  std::vector<TokenLogprob> TakeSent(size_t sent);
  // The answer ended at a stop string after `length` bytes: the held
  // entries that begin before that; the rest are dropped.
  std::vector<TokenLogprob> TakeUntil(size_t length);
  // Everything held (the answer ended without a stop string).
  std::vector<TokenLogprob> TakeAll() { return TakeSent(generated_); }

 private:
  struct Held {
    size_t begin = 0;
    size_t end = 0;
    TokenLogprob entry;
  };
  std::deque<Held> held_;
  size_t generated_ = 0;
};

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_LOGPROB_TRAIL_H_
