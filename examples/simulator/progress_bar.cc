#include "progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "absl/time/clock.h"

namespace hearth_cli {

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), start_(absl::Now()), tty_(isatty(2) == 1) {}

ProgressBar::~ProgressBar() {
  if (shown_) std::fputs("\r\033[K", stderr);
}

void ProgressBar::Update(double fraction) {
  if (!tty_ || absl::Now() - start_ < absl::Seconds(1)) return;
  shown_ = true;
  constexpr int kWidth = 40;
  const int filled = static_cast<int>(std::clamp(fraction, 0.0, 1.0) * kWidth);
  std::string bar(filled, '#');
  bar.resize(kWidth, ' ');
  std::fprintf(stderr, "\r%-12s [%s] %3.0f%%  %.0f s", label_.c_str(), bar.c_str(),
               100 * std::clamp(fraction, 0.0, 1.0),
               absl::ToDoubleSeconds(absl::Now() - start_));
  std::fflush(stderr);
}

}  // namespace hearth_cli
