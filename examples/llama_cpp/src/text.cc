#include "hearth_llama_cpp/text.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hearth::llama_cpp {

absl::StatusOr<std::vector<int32_t>> Tokenize(const llama_model* model, std::string_view text) {
  if (model == nullptr) return absl::InvalidArgumentError("model is null");
  if (text.empty()) return absl::InvalidArgumentError("cannot tokenize empty text");
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const int32_t len = static_cast<int32_t>(text.size());
  // First call with no room returns minus the count needed.
  const int32_t needed = -llama_tokenize(vocab, text.data(), len, nullptr, 0,
                                         /*add_special=*/true, /*parse_special=*/false);
  if (needed <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("text of ", text.size(), " bytes gave no tokens"));
  }
  std::vector<int32_t> tokens(static_cast<size_t>(needed));
  const int32_t n = llama_tokenize(vocab, text.data(), len, tokens.data(), needed,
                                   /*add_special=*/true, /*parse_special=*/false);
  if (n != needed) return absl::InternalError("llama_tokenize changed its answer");
  return tokens;
}

std::string Detokenize(const llama_model* model, absl::Span<const int32_t> tokens) {
  if (model == nullptr || tokens.empty()) return "";
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const int32_t n = static_cast<int32_t>(tokens.size());
  std::string text(tokens.size() * 8 + 16, '\0');
  int32_t written = llama_detokenize(vocab, tokens.data(), n, text.data(),
                                     static_cast<int32_t>(text.size()),
                                     /*remove_special=*/true, /*unparse_special=*/false);
  if (written < 0) {
    text.resize(static_cast<size_t>(-written));
    written = llama_detokenize(vocab, tokens.data(), n, text.data(),
                               static_cast<int32_t>(text.size()), true, false);
  }
  text.resize(written > 0 ? static_cast<size_t>(written) : 0);
  return text;
}

}  // namespace hearth::llama_cpp
