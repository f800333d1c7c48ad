// Lines of a text trace with the numbers their error messages need, and the
// "file:line: what" error every trace reader returns.

#ifndef HEARTH_SRC_SIM_TRACE_LINES_H_
#define HEARTH_SRC_SIM_TRACE_LINES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace hearth::internal {

struct TraceLine {
  int64_t number = 0;  // from 1
  absl::string_view text;
};

// Every line of `text` without its "\n" or "\r\n"; nothing for the empty
// piece after a final newline. The views point into `text`.
std::vector<TraceLine> SplitTraceLines(std::string_view text);

inline absl::Status RowError(const std::string& file, int64_t line,
                             absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(file, ":", line, ": ", what));
}

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_TRACE_LINES_H_
