// File: examples/serve/src/model_text.h
//
// Text in and out of the served model through llama.cpp's vocabulary: chat
// messages rendered with the model's own chat template
// (llama_chat_apply_template with the template stored in the GGUF), prompts
// tokenized, generated tokens turned back into text pieces.
//
// A GGUF without a chat template, or with one llama.cpp does not recognise,
// gets a plain transcript ("system: ...\nuser: ...\nassistant:"), which any
// base model continues sensibly.
//
// Thread-safety: const methods only; llama.cpp's vocabulary calls are
// read-only, so any thread may use one ModelText.
//
// Example:
//   ModelText text(model);
//   absl::StatusOr<std::string> prompt = text.RenderChat(messages);
//   absl::StatusOr<std::vector<int32_t>> ids = text.Tokenize(*prompt, /*templated=*/true);
//   if (text.max_token_bytes() > 0) ... // prompt_bound.h: a byte count that cannot fit

#ifndef HEARTH_SERVE_MODEL_TEXT_H_
#define HEARTH_SERVE_MODEL_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "absl/status/statusor.h"
#include "llama.h"
#include "openai_request.h"

namespace hearth::serve {

class ModelText {
 public:
  // `model` is not owned and must outlive this object.
  explicit ModelText(const llama_model* model);

  // The prompt for `messages`, ending where the assistant's answer begins.
  absl::StatusOr<std::string> RenderChat(const std::vector<ChatMessage>& messages) const;
  // Token ids of `text`, with BOS/EOS where the model asks for them.
  // `templated` text may contain the template's special tokens (parsed as
  // such); plain completion prompts may not (taken as text).
  // InvalidArgument when the text gives no tokens.
  absl::StatusOr<std::vector<int32_t>> Tokenize(absl::string_view text, bool templated) const;
  // Tokenize, in one pass of the tokenizer, for a text that must give at
  // most `max_tokens` tokens: OutOfRange "the prompt is N tokens" (N exact)
  // when it gives more. Allocates for min(max_tokens, what the text can
  // give), not for the whole text.
  absl::StatusOr<std::vector<int32_t>> TokenizeAtMost(absl::string_view text, bool templated,
                                                      int32_t max_tokens) const;
  // TokenizeAtMost as llama-server's /tokenize asks: BOS/EOS only with
  // `add_special`, special tokens' spelling parsed only with
  // `parse_special`, and an empty text (or one giving no tokens) is none.
  absl::StatusOr<std::vector<int32_t>> TokenizeUpTo(absl::string_view text, bool add_special,
                                                    bool parse_special, int32_t max_tokens) const;
  // The most bytes of text one token stands for (control tokens' spelling
  // included), when this vocabulary puts every byte of a text into some
  // token (BPE and SPM, checked at construction for each single byte);
  // then a text of B bytes gives at least ceil(B / max_token_bytes())
  // tokens. 0 when no such bound holds (WPM, UGM, ... may drop or merge
  // text into an unknown token).
  int32_t max_token_bytes() const { return max_token_bytes_; }
  // The bytes of one generated token; control tokens give "", or their
  // spelling ("<|im_end|>") with `spell_control` (what /detokenize shows).
  // REQUIRES: 0 <= token < vocab_size().
  std::string Piece(int32_t token, bool spell_control = false) const;
  bool IsEndOfGeneration(int32_t token) const;
  bool has_template() const { return template_ != nullptr; }
  // The GGUF's chat template text; "" when it has none.
  std::string chat_template() const { return template_ != nullptr ? template_ : ""; }
  int32_t vocab_size() const;
  // Floats in one of the model's embeddings (its n_embd).
  int32_t embedding_width() const;
  // The vocabulary, for what compiles against it (grammar_sampler.h).
  const llama_vocab* vocab() const { return vocab_; }

  // How many of a templated chat prompt's leading `tokens` equal the chat
  // template's fixed beginning: what every member's chat starts with
  // (special tokens, a default system prompt, the first role's header),
  // found once by rendering two chats that differ only in their first
  // message and keeping the tokens they share (for a chat opening with a
  // user message and for one opening with a system message). Only these
  // tokens may be cached in a scope all members share: they say nothing
  // about anyone's conversation.
  int32_t TemplatePrefixLength(absl::Span<const int32_t> tokens) const;

 private:
  // The common tokens of two chats whose first message, of `role`, differs.
  std::vector<int32_t> CommonBeginning(const char* role) const;

  const llama_model* model_;
  const llama_vocab* vocab_;
  const char* template_;
  // The template's fixed beginnings (see TemplatePrefixLength).
  std::vector<std::vector<int32_t>> template_prefixes_;
  int32_t max_token_bytes_ = 0;
};

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_MODEL_TEXT_H_
