// A one-line progress bar on stderr, shown only when stderr is a terminal
// and the run has lasted more than a second (short runs stay silent).

#ifndef HEARTH_EXAMPLES_SIMULATOR_PROGRESS_BAR_H_
#define HEARTH_EXAMPLES_SIMULATOR_PROGRESS_BAR_H_

#include <string>

#include "absl/time/time.h"

namespace hearth_cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  ~ProgressBar();
  // `fraction` in [0, 1].
  void Update(double fraction);

 private:
  std::string label_;
  absl::Time start_;
  bool tty_;
  bool shown_ = false;
};

}  // namespace hearth_cli

#endif  // HEARTH_EXAMPLES_SIMULATOR_PROGRESS_BAR_H_
