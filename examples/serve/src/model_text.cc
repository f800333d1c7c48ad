#include "model_text.h"

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

namespace hearth::serve {
namespace {

std::string PlainTranscript(const std::vector<ChatMessage>& messages) {
  std::string out;
  for (const ChatMessage& m : messages) absl::StrAppend(&out, m.role, ": ", m.content, "\n");
  out += "assistant:";
  return out;
}

// ModelText::max_token_bytes(): the longest piece of `vocab`, or 0 when a
// text's bytes do not all land in tokens. BPE and SPM cover every byte
// (invalid UTF-8 becomes U+FFFD, three bytes, or byte tokens), unless the
// vocabulary lacks a byte's token: each single byte is tokenized to check.
int32_t MaxTokenBytes(const llama_vocab* vocab) {
  const enum llama_vocab_type type = llama_vocab_type(vocab);
  if (type != LLAMA_VOCAB_TYPE_BPE && type != LLAMA_VOCAB_TYPE_SPM) return 0;
  for (int b = 0; b < 256; ++b) {
    const char byte = static_cast<char>(b);
    llama_token out[8];
    if (llama_tokenize(vocab, &byte, 1, out, 8, /*add_special=*/false, /*parse_special=*/false) <
        1) {
      return 0;
    }
  }
  int32_t longest = 0;
  const int32_t n = llama_vocab_n_tokens(vocab);
  char buf[256];
  for (llama_token t = 0; t < n; ++t) {
    // special: control tokens are spelled out, as a templated text may hold them.
    const int32_t len = llama_token_to_piece(vocab, t, buf, sizeof(buf), /*lstrip=*/0,
                                             /*special=*/true);
    longest = std::max(longest, len < 0 ? -len : len);
  }
  return longest;
}

}  // namespace

ModelText::ModelText(const llama_model* model)
    : model_(model),
      vocab_(llama_model_get_vocab(model)),
      template_(llama_model_chat_template(model, /*name=*/nullptr)),
      max_token_bytes_(MaxTokenBytes(vocab_)) {
  for (const char* role : {"user", "system"}) template_prefixes_.push_back(CommonBeginning(role));
}

std::vector<int32_t> ModelText::CommonBeginning(const char* role) const {
  // Two first messages with no character in common, so no token that
  // merges template text with the message survives.
  std::vector<std::vector<int32_t>> probes;
  for (const char* content : {"a", "Z"}) {
    std::vector<ChatMessage> chat = {ChatMessage{role, content}};
    if (std::string(role) == "system") chat.push_back(ChatMessage{"user", content});
    absl::StatusOr<std::string> rendered = RenderChat(chat);
    if (!rendered.ok()) return {};
    absl::StatusOr<std::vector<int32_t>> tokens = Tokenize(*rendered, /*templated=*/true);
    if (!tokens.ok()) return {};
    probes.push_back(*std::move(tokens));
  }
  size_t n = 0;
  while (n < probes[0].size() && n < probes[1].size() && probes[0][n] == probes[1][n]) ++n;
  probes[0].resize(n);
  return probes[0];
}

int32_t ModelText::TemplatePrefixLength(absl::Span<const int32_t> tokens) const {
  size_t best = 0;
  for (const std::vector<int32_t>& prefix : template_prefixes_) {
    size_t n = 0;
    while (n < prefix.size() && n < tokens.size() && prefix[n] == tokens[n]) ++n;
    best = std::max(best, n);
  }
  return static_cast<int32_t>(best);
}

int32_t ModelText::embedding_width() const { return llama_model_n_embd(model_); }

int32_t ModelText::vocab_size() const { return llama_vocab_n_tokens(vocab_); }

absl::StatusOr<std::string> ModelText::RenderChat(const std::vector<ChatMessage>& messages) const {
  if (template_ == nullptr) return PlainTranscript(messages);
  std::vector<llama_chat_message> chat;
  size_t bytes = 0;
  for (const ChatMessage& m : messages) {
    chat.push_back({m.role.c_str(), m.content.c_str()});
    bytes += m.role.size() + m.content.size();
  }
  std::string out(2 * bytes + 1024, '\0');
  int32_t n = llama_chat_apply_template(template_, chat.data(), chat.size(), /*add_ass=*/true,
                                        out.data(), static_cast<int32_t>(out.size()));
  if (n > static_cast<int32_t>(out.size())) {
    out.resize(static_cast<size_t>(n));
    n = llama_chat_apply_template(template_, chat.data(), chat.size(), true, out.data(), n);
  }
  // A template llama.cpp does not know (it parses no Jinja) returns < 0.
  if (n < 0) return PlainTranscript(messages);
  out.resize(static_cast<size_t>(n));
  return out;
}

absl::StatusOr<std::vector<int32_t>> ModelText::Tokenize(absl::string_view text,
                                                         bool templated) const {
  if (text.empty()) return absl::InvalidArgumentError("the prompt is empty");
  if (text.size() > (size_t{1} << 30)) return absl::InvalidArgumentError("the prompt is too long");
  const int32_t len = static_cast<int32_t>(text.size());
  // A first call with no room returns minus the count needed.
  const int32_t needed = -llama_tokenize(vocab_, text.data(), len, nullptr, 0,
                                         /*add_special=*/true, /*parse_special=*/templated);
  if (needed <= 0) return absl::InvalidArgumentError("the prompt gives no tokens");
  std::vector<int32_t> tokens(static_cast<size_t>(needed));
  const int32_t n = llama_tokenize(vocab_, text.data(), len, tokens.data(), needed, true, templated);
  if (n != needed) return absl::InternalError("llama_tokenize changed its answer");
  return tokens;
}

absl::StatusOr<std::vector<int32_t>> ModelText::TokenizeAtMost(absl::string_view text,
                                                               bool templated,
                                                               int32_t max_tokens) const {
  if (text.empty()) return absl::InvalidArgumentError("the prompt is empty");
  absl::StatusOr<std::vector<int32_t>> tokens =
      TokenizeUpTo(text, /*add_special=*/true, /*parse_special=*/templated, max_tokens);
  if (tokens.ok() && tokens->empty()) {
    return absl::InvalidArgumentError("the prompt gives no tokens");
  }
  return tokens;
}

absl::StatusOr<std::vector<int32_t>> ModelText::TokenizeUpTo(absl::string_view text,
                                                             bool add_special, bool parse_special,
                                                             int32_t max_tokens) const {
  if (text.size() > (size_t{1} << 30)) return absl::InvalidArgumentError("the prompt is too long");
  if (max_tokens < 1) return absl::InvalidArgumentError("max_tokens must be at least 1");
  const int32_t len = static_cast<int32_t>(text.size());
  // A byte gives at most three tokens (an invalid one becomes U+FFFD, an
  // escaped space three bytes), plus a space prefix, BOS and EOS: with room
  // for that many, or for one more than allowed, one call answers.
  const int64_t most = 3 * int64_t{len} + 8;
  std::vector<int32_t> tokens(
      static_cast<size_t>(std::min<int64_t>(most, int64_t{max_tokens} + 1)));
  auto tokenize = [&] {
    return llama_tokenize(vocab_, text.data(), len, tokens.data(),
                          static_cast<int32_t>(tokens.size()), add_special, parse_special);
  };
  int32_t n = tokenize();
  if (n == std::numeric_limits<int32_t>::min()) {
    return absl::OutOfRangeError("the prompt is more than 2^31 tokens");
  }
  if (n < 0 && -n <= max_tokens) {
    // More tokens than the bound above, yet within the limit.
    tokens.resize(static_cast<size_t>(-n));
    n = tokenize();
    if (n < 0) return absl::InternalError("llama_tokenize changed its answer");
  }
  if (n < 0 || n > max_tokens) {
    return absl::OutOfRangeError(absl::StrCat("the prompt is ", n < 0 ? -int64_t{n} : n, " tokens"));
  }
  tokens.resize(static_cast<size_t>(n));
  return tokens;
}

std::string ModelText::Piece(int32_t token, bool spell_control) const {
  char buf[256];
  const int32_t n = llama_token_to_piece(vocab_, token, buf, sizeof(buf), /*lstrip=*/0,
                                         /*special=*/spell_control);
  if (n >= 0) return std::string(buf, static_cast<size_t>(n));
  std::string big(static_cast<size_t>(-n), '\0');
  const int32_t m = llama_token_to_piece(vocab_, token, big.data(), -n, 0, spell_control);
  big.resize(m > 0 ? static_cast<size_t>(m) : 0);
  return big;
}

bool ModelText::IsEndOfGeneration(int32_t token) const { return llama_vocab_is_eog(vocab_, token); }

}  // namespace hearth::serve
