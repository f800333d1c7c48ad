// Catalogue surface: known holes, inputs the documented contract rejects
// (or bounds) that the library still crashes on, misbehaves on or accepts.
// Their test case is hidden ([.known_holes]) until the core closes them;
// each row states the expectation the contract implies, and a comment what
// the library does today.

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/scheduler/bad_input_catalogue.h"

namespace hearth::catalogue {

std::vector<BadInputRow> KnownHoleRows() { return {}; }

}  // namespace hearth::catalogue
