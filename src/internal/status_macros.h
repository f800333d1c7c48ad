// File: src/internal/status_macros.h
//
// The two-macro shim for early returns (the pinned Abseil has no
// RETURN_IF_ERROR). Not part of the public API.

#ifndef HEARTH_INTERNAL_STATUS_MACROS_H_
#define HEARTH_INTERNAL_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define HEARTH_RETURN_IF_ERROR(expr)                  \
  do {                                                \
    ::absl::Status hearth_status_ = (expr);           \
    if (!hearth_status_.ok()) return hearth_status_;  \
  } while (0)

#define HEARTH_CONCAT_INNER_(a, b) a##b
#define HEARTH_CONCAT_(a, b) HEARTH_CONCAT_INNER_(a, b)
#define HEARTH_ASSIGN_OR_RETURN(lhs, expr) \
  HEARTH_ASSIGN_OR_RETURN_IMPL_(HEARTH_CONCAT_(hearth_statusor_, __LINE__), lhs, expr)
#define HEARTH_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return std::move(tmp).status();      \
  lhs = std::move(tmp).value()

#endif  // HEARTH_INTERNAL_STATUS_MACROS_H_
