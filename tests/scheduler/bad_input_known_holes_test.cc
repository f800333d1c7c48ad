// Catalogue surface: known holes, inputs the documented contract rejects
// that the library still accepts (or crashes or misbehaves on). Their test
// case is hidden ([.known_holes], see bad_input_catalogue_test.cc) until the
// core closes them; each row states what the contract implies, and its
// comment what the library does today.

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/scheduler/bad_input_catalogue.h"

namespace hearth::catalogue {

std::vector<BadInputRow> KnownHoleRows() {
  return {
      // "The preloaded models must fit together": each model alone leaves
      // room for a block, but their sum wraps int64 in ValidateResidency
      // (signed overflow: UB, reported by UBSan). Today Create accepts it,
      // stats().resident_weight_bytes reads -130 and kv_block_limit 0.
      {"hole: preloaded weights whose sum wraps int64",
       [] {
         SchedulerOptions o;
         o.residency.device_memory_bytes = kInt64Max;
         o.models[0].kv_bytes_per_token = 1;
         o.models[0].weights_bytes = kInt64Max - 64;
         ModelConfig twin = o.models[0];
         twin.name = "twin";
         o.models.push_back(twin);
         return Scheduler::Create(o).status();
       },
       absl::StatusCode::kInvalidArgument, "models to preload weigh"},
  };
}

}  // namespace hearth::catalogue
