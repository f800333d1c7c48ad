// File: tests/testing/request_builder.h
//
// The one way tests write a RequestSpec: named fields with C++20 designated
// initializers, so that a call site never depends on a parameter order.
//
// Example:
//   using testing::Spec;
//   h->Submit(Spec({.prompt = 32, .max_new = 8}));
//   h->Submit(Spec({.user = 1, .work_class = kVoice, .prompt = 100, .max_new = 20}));
//   h->Submit(Spec({.user = 1, .parent = first}));
//
// Why designated initializers rather than a fluent builder: the call reads
// as the fields it sets, with no extra vocabulary, and the compiler rejects
// a misspelt or misordered field (designators must follow the declaration
// order below, which is RequestSpec's own). Fields a test rarely sets
// (deadline, label, SLO overrides, token ids) are set on the returned spec.

#ifndef HEARTH_TESTS_TESTING_REQUEST_BUILDER_H_
#define HEARTH_TESTS_TESTING_REQUEST_BUILDER_H_

#include <cstdint>

#include "hearth/common/ids.h"
#include "hearth/request/request_spec.h"

namespace hearth::testing {

// RequestSpec's commonly set fields, in its order, ids as bare numbers.
struct SpecFields {
  uint32_t user = 0;
  uint32_t work_class = 0;
  uint32_t model = 0;
  // RequestSpec::prompt_tokens.
  int32_t prompt = 8;
  // RequestSpec::max_new_tokens.
  int32_t max_new = 4;
  int32_t priority = 0;
  RequestId parent;
};

inline RequestSpec Spec(const SpecFields& f) {
  RequestSpec spec;
  spec.user = UserId(f.user);
  spec.work_class = WorkClassId(f.work_class);
  spec.model = ModelId(f.model);
  spec.prompt_tokens = f.prompt;
  spec.max_new_tokens = f.max_new;
  spec.priority = f.priority;
  spec.parent = f.parent;
  return spec;
}

}  // namespace hearth::testing

#endif  // HEARTH_TESTS_TESTING_REQUEST_BUILDER_H_
