// File: examples/serve/src/random_hex.h
//
// Unguessable ids for what the server shows clients (public request ids,
// x-request-id): bytes from the kernel's CSPRNG (getrandom), as lowercase
// hex, so that no id tells anything about another one. Aborts only where
// the kernel has no getrandom (before Linux 3.17): there is then no
// unguessable id to give.
//
// Thread-safety: any thread.
//
// Example:
//   std::string id = RandomHex(12);  // 24 hex digits

#ifndef HEARTH_SERVE_RANDOM_HEX_H_
#define HEARTH_SERVE_RANDOM_HEX_H_

#include <cstddef>
#include <string>

namespace hearth::serve {

// REQUIRES: bytes <= 64. Returns 2 * bytes hex digits.
std::string RandomHex(size_t bytes);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_RANDOM_HEX_H_
