// The C API's static strings: version, status and phase names.

#include <cstdlib>

#include "capi/c_status.h"
#include "hearth/c/hearth.h"
#include "hearth/version.h"

extern "C" {

const char* hearth_version(void) {
  // hearth::Version() is this same literal, compiled into the library.
  return HEARTH_VERSION_STRING;
}

const char* hearth_status_name(hearth_status code) {
  static const char* const kNames[] = {
      "OK",        "CANCELLED",          "UNKNOWN",           "INVALID_ARGUMENT",
      "DEADLINE_EXCEEDED", "NOT_FOUND",  "ALREADY_EXISTS",    "PERMISSION_DENIED",
      "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
      "UNIMPLEMENTED", "INTERNAL",       "UNAVAILABLE",       "DATA_LOSS",
      "UNAUTHENTICATED"};
  const int raw = hearth::capi::RawEnum(code);
  return raw >= 0 && raw <= 16 ? kNames[raw] : "UNKNOWN_CODE";
}

const char* hearth_phase_name(hearth_phase phase) {
  static const char* const kNames[] = {"queued",   "preparing", "waiting",
                                       "running",  "swapped",   "finished",
                                       "cancelled", "rejected", "timed_out",
                                       "failed",   "held"};
  const int raw = hearth::capi::RawEnum(phase);
  return raw >= 0 && raw <= 10 ? kNames[raw] : "unknown";
}

void hearth_string_free(char* text) { std::free(text); }

}  // extern "C"
