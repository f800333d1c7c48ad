// File: hearth_llama_cpp/text.h
//
// Text <-> token ids through the model's own llama.cpp vocabulary, so the
// example works the same with the tiny byte-level model and a real GGUF.
//
// Example:
//   absl::StatusOr<std::vector<int32_t>> ids = Tokenize(model, "hello");
//   std::string text = Detokenize(model, *ids);

#ifndef HEARTH_LLAMA_CPP_TEXT_H_
#define HEARTH_LLAMA_CPP_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "llama.h"

namespace hearth::llama_cpp {

// Tokenizes `text` (adding BOS/EOS only where the model asks for them).
// InvalidArgument for empty text or text that yields no tokens.
absl::StatusOr<std::vector<int32_t>> Tokenize(const llama_model* model, std::string_view text);

// The text of `tokens`; control tokens (BOS, EOS) are left out.
std::string Detokenize(const llama_model* model, absl::Span<const int32_t> tokens);

}  // namespace hearth::llama_cpp

#endif  // HEARTH_LLAMA_CPP_TEXT_H_
