// A strict parser for one flat JSON object per line (JSONL traces): string,
// number, true/false/null values; nested objects or arrays are errors.
// Strings are decoded (escapes, \uXXXX with surrogate pairs to UTF-8).

#ifndef HEARTH_SRC_SIM_FLAT_JSON_H_
#define HEARTH_SRC_SIM_FLAT_JSON_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace hearth::internal {

struct JsonField {
  std::string key;
  bool is_string = false;
  std::string text;   // decoded string, or the number's literal
  double number = 0;  // when a number
};

// InvalidArgument describing the first problem and its byte offset.
absl::StatusOr<std::vector<JsonField>> ParseFlatJsonObject(std::string_view s);

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_FLAT_JSON_H_
