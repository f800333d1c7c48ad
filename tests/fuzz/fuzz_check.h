// How a fuzz target reports a broken promise: the message on stderr, then
// abort(), which libFuzzer records as a crash with the input that caused it.

#ifndef HEARTH_TESTS_FUZZ_FUZZ_CHECK_H_
#define HEARTH_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace hearth::fuzz {

[[noreturn]] inline void Fail(std::string_view what) {
  std::fprintf(stderr, "\nFUZZ CHECK FAILED: %.*s\n", static_cast<int>(what.size()),
               what.data());
  std::abort();
}

inline void Require(bool ok, std::string_view what) {
  if (!ok) Fail(what);
}

// With HEARTH_FUZZ_VERBOSE set, prints why an input was refused (to check
// that a seed gets as far as it should, or to read a reproducer's story).
inline void Note(std::string_view stage, const absl::Status& status) {
  static const bool verbose = std::getenv("HEARTH_FUZZ_VERBOSE") != nullptr;
  if (!verbose) return;
  const std::string text = status.ToString();
  std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(stage.size()), stage.data(),
               text.c_str());
}

}  // namespace hearth::fuzz

#endif  // HEARTH_TESTS_FUZZ_FUZZ_CHECK_H_
