// Line and field helpers for the trace readers: strict integer and number
// parsing (the whole field must be consumed) and a line splitter that tracks
// line numbers for error messages.

#ifndef HEARTH_SRC_SIM_TEXT_LINES_H_
#define HEARTH_SRC_SIM_TEXT_LINES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hearth::internal {

class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  // Next line without its "\n" or "\r\n"; false at the end.
  bool Next(std::string_view* line) {
    if (pos_ >= text_.size()) return false;
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    *line = text_.substr(pos_, end - pos_);
    if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
    pos_ = end + 1;
    ++line_no_;
    return true;
  }
  int64_t line_no() const { return line_no_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int64_t line_no_ = 0;
};

std::vector<std::string_view> SplitFields(std::string_view line, char sep);
std::optional<int64_t> ParseInt(std::string_view s);
std::optional<double> ParseNumber(std::string_view s);
// "YYYY-MM-DD HH:MM:SS[.fraction]" (UTC) to nanoseconds since the Unix epoch.
std::optional<int64_t> ParseDateTimeNanos(std::string_view s);

inline absl::Status RowError(const std::string& file, int64_t line,
                             std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(file, ":", line, ": ", std::string(what)));
}

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_TEXT_LINES_H_
