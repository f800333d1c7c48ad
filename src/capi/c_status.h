// Errors across the C boundary: the hearth_error object, the mapping from
// absl::Status, and the guard that keeps C++ exceptions from reaching C.

#ifndef HEARTH_SRC_CAPI_C_STATUS_H_
#define HEARTH_SRC_CAPI_C_STATUS_H_

#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "hearth/c/hearth.h"

struct hearth_error {
  hearth_status code = HEARTH_UNKNOWN;
  std::string message;
};

namespace hearth::capi {

// Returns `code`; when `error` is non-null, replaces *error with a new error
// carrying `message` (an allocation failure leaves *error null or its
// message empty). Never throws.
hearth_status Fail(hearth_error** error, hearth_status code,
                   absl::string_view message) noexcept;

// HEARTH_OK for an OK status, else Fail() with its code and message.
hearth_status FromStatus(const absl::Status& status, hearth_error** error);

// INVALID_ARGUMENT "<function>: <argument> is NULL". Never throws.
hearth_status NullArgument(hearth_error** error, absl::string_view function,
                           absl::string_view argument) noexcept;

// The pinned Abseil's string_view is its own type, not std::string_view;
// this is the one spelling of the conversion (for StrCat and messages).
inline absl::string_view AbslView(std::string_view text) {
  return absl::string_view(text.data(), text.size());
}

// The integer a C caller passed as an enum argument. C allows any int in an
// enum-typed argument; C++ does not (loading an out-of-range value is
// undefined, and UBSan says so), so the C API reads the bits, never the enum.
template <typename Enum>
int RawEnum(const Enum& value) {
  static_assert(sizeof(Enum) == sizeof(int), "C enums are int-sized here");
  int raw;
  std::memcpy(&raw, &value, sizeof raw);
  return raw;
}

// Runs `body` (returning hearth_status) and turns any exception into an
// error: nothing may unwind into a C caller. bad_alloc is RESOURCE_EXHAUSTED,
// anything else INTERNAL. Fail() itself never throws, so neither does this.
template <typename Body>
hearth_status Guard(hearth_error** error, absl::string_view function,
                    Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(error, HEARTH_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::exception& e) {
    return Fail(error, HEARTH_INTERNAL, e.what());
  } catch (...) {
    return Fail(error, HEARTH_INTERNAL, "internal error");
  }
}

}  // namespace hearth::capi

// Returns INVALID_ARGUMENT from the enclosing function when `pointer` is null.
#define HEARTH_C_REQUIRE(pointer, function, error)                   \
  do {                                                               \
    if ((pointer) == nullptr) {                                      \
      return ::hearth::capi::NullArgument((error), (function), #pointer); \
    }                                                                \
  } while (false)

#endif  // HEARTH_SRC_CAPI_C_STATUS_H_
