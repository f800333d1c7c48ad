// An error slot for the C API's tests: pass &e where a hearth_error** goes;
// whatever it holds is freed at scope end.

#ifndef HEARTH_TESTS_CAPI_ERROR_SLOT_H_
#define HEARTH_TESTS_CAPI_ERROR_SLOT_H_

#include <string>

#include "hearth/c/hearth.h"

namespace hearth::capi_test {

struct Error {
  hearth_error* error = nullptr;
  ~Error() { hearth_error_free(error); }
  hearth_error** operator&() { return &error; }
  std::string message() const { return hearth_error_message(error); }
};

}  // namespace hearth::capi_test

#endif  // HEARTH_TESTS_CAPI_ERROR_SLOT_H_
