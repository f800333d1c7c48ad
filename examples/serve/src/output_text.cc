#include "output_text.h"

#include <algorithm>

namespace hearth::serve {
namespace {

// Bytes at the end of `s` that start a UTF-8 character not yet complete.
size_t IncompleteUtf8Tail(absl::string_view s) {
  const size_t n = s.size();
  for (size_t back = 1; back <= std::min<size_t>(3, n); ++back) {
    const unsigned char c = static_cast<unsigned char>(s[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    return len > back ? back : 0;
  }
  return 0;
}

}  // namespace

size_t OutputText::HoldBack() const {
  size_t hold = IncompleteUtf8Tail(held_);
  const absl::string_view text(held_);
  for (const std::string& stop : stop_) {
    // The longest proper prefix of `stop` that ends the text.
    for (size_t len = std::min(stop.size() - 1, text.size()); len > hold; --len) {
      if (text.substr(text.size() - len) == absl::string_view(stop).substr(0, len)) {
        hold = len;
        break;
      }
    }
  }
  return hold;
}

std::string OutputText::Append(absl::string_view piece) {
  if (stopped_) return "";
  held_.append(piece.data(), piece.size());
  size_t first_stop = std::string::npos;
  for (const std::string& stop : stop_) first_stop = std::min(first_stop, held_.find(stop));
  if (first_stop != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, first_stop);
    held_.clear();
    return out;
  }
  const size_t keep = HoldBack();
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string OutputText::Flush() {
  if (stopped_) return "";
  std::string out;
  out.swap(held_);
  return out;
}

}  // namespace hearth::serve
