// File: examples/serve/src/parent_header.h
//
// The X-Hearth-Parent header: the id of the request whose answer triggered
// this call (an agent's next step), so the scheduler keeps the workflow
// together. Accepted spellings: "chatcmpl-<n>", "cmpl-<n>" or "<n>", n a
// valid request id; empty (no header) is no parent.
//
// Thread-safety: pure function.
//
// Example:
//   absl::StatusOr<RequestId> parent = ParseParentHeader("chatcmpl-12");  // RequestId(12)

#ifndef HEARTH_SERVE_PARENT_HEADER_H_
#define HEARTH_SERVE_PARENT_HEADER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hearth/common/ids.h"

namespace hearth::serve {

// RequestId() (invalid: none) for "", the id for an accepted spelling,
// InvalidArgument quoting the header otherwise.
absl::StatusOr<RequestId> ParseParentHeader(absl::string_view text);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_PARENT_HEADER_H_
