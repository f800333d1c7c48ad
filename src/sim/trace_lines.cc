#include "sim/trace_lines.h"

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace hearth::internal {

std::vector<TraceLine> SplitTraceLines(std::string_view whole) {
  std::vector<TraceLine> out;
  absl::string_view text(whole.data(), whole.size());
  if (text.empty()) return out;
  if (text.back() == '\n') text.remove_suffix(1);
  int64_t number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    out.push_back({++number, absl::StripSuffix(line, "\r")});
  }
  return out;
}

}  // namespace hearth::internal
