// The library's own copy of the version string: compiled into libhearth, so
// that it reports what was linked even when a consumer's headers differ.

#include "hearth/version.h"

namespace hearth {

std::string_view Version() { return HEARTH_VERSION_STRING; }

}  // namespace hearth
