#include "random_hex.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"

namespace hearth::serve {

std::string RandomHex(size_t bytes) {
  unsigned char buffer[64];
  bytes = std::min(bytes, sizeof(buffer));
  size_t got = 0;
  while (got < bytes) {
    const ssize_t n = getrandom(buffer + got, bytes - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (errno != EINTR) {
      std::abort();
    }
  }
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(buffer), bytes));
}

}  // namespace hearth::serve
