// Inputs of the trace-reader fuzzers: an optional control line, then the
// file's text. The control line (the bytes before the first newline) feeds a
// FuzzedDataProvider that picks the reader's options; the rest is the file.
// An empty first line means default options, so a seed is written by hand
// as "\n" followed by a real file's rows.

#ifndef HEARTH_TESTS_FUZZ_CONTROL_LINE_H_
#define HEARTH_TESTS_FUZZ_CONTROL_LINE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace hearth::fuzz {

struct ControlledInput {
  std::string_view control;
  std::string_view text;
};

inline ControlledInput SplitControlLine(const uint8_t* data, size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t newline = all.find('\n');
  if (newline == std::string_view::npos) return {all, {}};
  return {all.substr(0, newline), all.substr(newline + 1)};
}

}  // namespace hearth::fuzz

#endif  // HEARTH_TESTS_FUZZ_CONTROL_LINE_H_
