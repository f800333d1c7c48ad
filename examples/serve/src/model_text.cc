#include "model_text.h"

#include <algorithm>
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

}  // namespace

ModelText::ModelText(const llama_model* model)
    : model_(model),
      vocab_(llama_model_get_vocab(model)),
      template_(llama_model_chat_template(model, /*name=*/nullptr)) {
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

std::string ModelText::Piece(int32_t token) const {
  char buf[256];
  const int32_t n = llama_token_to_piece(vocab_, token, buf, sizeof(buf), /*lstrip=*/0,
                                         /*special=*/false);
  if (n >= 0) return std::string(buf, static_cast<size_t>(n));
  std::string big(static_cast<size_t>(-n), '\0');
  const int32_t m = llama_token_to_piece(vocab_, token, big.data(), -n, 0, false);
  big.resize(m > 0 ? static_cast<size_t>(m) : 0);
  return big;
}

bool ModelText::IsEndOfGeneration(int32_t token) const { return llama_vocab_is_eog(vocab_, token); }

}  // namespace hearth::serve
