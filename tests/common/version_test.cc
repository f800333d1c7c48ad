#include "hearth/version.h"

#include <string>

#include <catch2/catch.hpp>

namespace hearth {
namespace {

TEST_CASE("Version() is the version the headers were generated with", "[version]") {
  CHECK(Version() == HEARTH_VERSION_STRING);
  CHECK(std::string(Version()) == std::to_string(HEARTH_VERSION_MAJOR) + "." +
                                      std::to_string(HEARTH_VERSION_MINOR) + "." +
                                      std::to_string(HEARTH_VERSION_PATCH));
}

}  // namespace
}  // namespace hearth
