#include "capi/c_status.h"

#include <memory>

#include "absl/strings/str_cat.h"

namespace hearth::capi {

hearth_status Fail(hearth_error** error, hearth_status code,
                   absl::string_view message) noexcept {
  if (error == nullptr) return code;
  hearth_error_free(*error);
  *error = nullptr;
  // The error is the report of a failure; failing to allocate it must not
  // turn into a second one, so it is dropped (the code still says what).
  auto made = std::unique_ptr<hearth_error>(new (std::nothrow) hearth_error);
  if (made == nullptr) return code;
  try {
    made->code = code;
    made->message = std::string(message);
  } catch (...) {
    made->message.clear();
  }
  *error = made.release();
  return code;
}

hearth_status FromStatus(const absl::Status& status, hearth_error** error) {
  if (status.ok()) return HEARTH_OK;
  // absl::StatusCode and hearth_status share their numbers (the header's
  // contract); anything outside 1..16 is reported as UNKNOWN.
  const int raw = static_cast<int>(status.code());
  const hearth_status code = raw >= 1 && raw <= 16
                                 ? static_cast<hearth_status>(raw)
                                 : HEARTH_UNKNOWN;
  return Fail(error, code, status.message());
}

hearth_status NullArgument(hearth_error** error, absl::string_view function,
                           absl::string_view argument) noexcept {
  try {
    return Fail(error, HEARTH_INVALID_ARGUMENT,
                absl::StrCat(function, ": ", argument, " is NULL"));
  } catch (...) {  // out of memory for the message: the code still says it
    return Fail(error, HEARTH_INVALID_ARGUMENT, "");
  }
}

}  // namespace hearth::capi

extern "C" {

hearth_status hearth_error_code(const hearth_error* error) {
  return error == nullptr ? HEARTH_INVALID_ARGUMENT : error->code;
}

const char* hearth_error_message(const hearth_error* error) {
  return error == nullptr ? "" : error->message.c_str();
}

void hearth_error_free(hearth_error* error) { delete error; }

}  // extern "C"

// The header promises absl::StatusCode's numbers.
static_assert(HEARTH_INVALID_ARGUMENT == static_cast<int>(absl::StatusCode::kInvalidArgument));
static_assert(HEARTH_NOT_FOUND == static_cast<int>(absl::StatusCode::kNotFound));
static_assert(HEARTH_RESOURCE_EXHAUSTED ==
              static_cast<int>(absl::StatusCode::kResourceExhausted));
static_assert(HEARTH_FAILED_PRECONDITION ==
              static_cast<int>(absl::StatusCode::kFailedPrecondition));
static_assert(HEARTH_UNAUTHENTICATED == static_cast<int>(absl::StatusCode::kUnauthenticated));
