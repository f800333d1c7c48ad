// File: examples/serve/src/output_text.h
//
// `OutputText` turns a request's generated pieces into the text a client may
// be sent so far: it finds stop strings (the text ends before the first one,
// which is never sent) and holds back what could still become a stop string
// or is an incomplete UTF-8 sequence, so that a stream never shows a client
// text that the final answer would not contain.
//
// Thread-safety: one thread at a time (the engine thread).
//
// Example:
//   OutputText text({"\n\n"});
//   std::string sent = text.Append("Hello\n");   // "Hello" (the "\n" held)
//   sent += text.Append("\nmore");                // "" and stopped() is true

#ifndef HEARTH_SERVE_OUTPUT_TEXT_H_
#define HEARTH_SERVE_OUTPUT_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"
#include <string_view>
#include <vector>

namespace hearth::serve {

class OutputText {
 public:
  explicit OutputText(std::vector<std::string> stop) : stop_(std::move(stop)) {}

  // Adds a piece; returns the text that became safe to send. After a stop
  // string has been found, returns "" and ignores further pieces.
  std::string Append(absl::string_view piece);
  // The held-back rest, once generation has ended without a stop string.
  std::string Flush();
  bool stopped() const { return stopped_; }

 private:
  // Bytes at the end of held_ that could begin a stop string or finish a
  // UTF-8 character.
  size_t HoldBack() const;

  std::vector<std::string> stop_;
  // Generated text not yet sent (everything sent is final).
  std::string held_;
  bool stopped_ = false;
};

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_OUTPUT_TEXT_H_
