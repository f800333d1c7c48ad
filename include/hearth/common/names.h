// File: hearth/common/names.h
//
// What a configured name may be. Users, work classes and models (adapters
// included) are named by the host, and the names travel on into Prometheus
// label values, JSON (results, timelines, the C API) and error messages, so
// every way in holds them to one rule: SchedulerOptions validation
// (Scheduler::Create), the C API's setters and JSON options, and the
// simulator's scenario files. A name is
//   - 1 to kMaxNameBytes bytes of valid UTF-8 (RFC 3629: no overlong forms,
//     no surrogates, nothing above U+10FFFF), and
//   - free of control characters: C0 (U+0000 to U+001F), DEL (U+007F), C1
//     (U+0080 to U+009F), and the line and paragraph separators U+2028 and
//     U+2029.
// Anything else is allowed: spaces, quotes, backslashes, any script, emoji.
// Among users, kOtherUsersName is reserved (PrometheusText sums the users
// beyond PrometheusOptions::max_user_series under it).
//
// Thread-safety: pure functions.
//
// Example:
//   absl::Status s = hearth::ValidateName("a\xff", "members[0].name");
//   // INVALID_ARGUMENT: members[0].name is "a\xff" (2 bytes); byte 1 is not
//   // valid UTF-8; a name is 1 to 256 bytes of UTF-8 without control characters

#ifndef HEARTH_COMMON_NAMES_H_
#define HEARTH_COMMON_NAMES_H_

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"

namespace hearth {

inline constexpr size_t kMaxNameBytes = 256;

// The user label of Prometheus series summing the users beyond
// max_user_series; no user may be named so.
inline constexpr char kOtherUsersName[] = "_other";

// ValidateName()
//
// OK if `name` follows the rule above; otherwise InvalidArgument whose
// message starts with `field` (the caller's path for it, e.g.
// "SchedulerOptions.users[2].name"), quotes the start of the name with
// non-printable bytes hex-escaped, its length, and the first thing wrong.
absl::Status ValidateName(std::string_view name, std::string_view field);

}  // namespace hearth

#endif  // HEARTH_COMMON_NAMES_H_
