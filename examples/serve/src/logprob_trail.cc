#include "logprob_trail.h"

#include <utility>

namespace hearth::serve {

void LogprobTrail::Add(TokenLogprob entry) {
  const size_t begin = generated_;
  generated_ += entry.token.size();
  held_.push_back({begin, generated_, std::move(entry)});
}

std::vector<TokenLogprob> LogprobTrail::TakeSent(size_t sent) {
  std::vector<TokenLogprob> out;
  while (!held_.empty() && held_.front().end <= sent) {
    out.push_back(std::move(held_.front().entry));
    held_.pop_front();
  }
  return out;
}

std::vector<TokenLogprob> LogprobTrail::TakeUntil(size_t length) {
  std::vector<TokenLogprob> out;
  for (Held& h : held_) {
    if (h.begin >= length) break;
    out.push_back(std::move(h.entry));
  }
  held_.clear();
  return out;
}

}  // namespace hearth::serve
