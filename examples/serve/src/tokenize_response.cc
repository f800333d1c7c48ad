#include "tokenize_response.h"

namespace hearth::serve {

bool IsValidUtf8(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    size_t extra = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (text.size() - i <= extra) return false;
    for (size_t k = 1; k <= extra; ++k) {
      const unsigned char cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    const bool overlong = (extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000);
    if (overlong || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return false;
    i += extra + 1;
  }
  return true;
}

nlohmann::json TokenizeResponse(const std::vector<int32_t>& tokens, bool with_pieces,
                                const PieceOf& piece) {
  nlohmann::json out = nlohmann::json::array();
  for (int32_t t : tokens) {
    if (!with_pieces) {
      out.push_back(t);
      continue;
    }
    const std::string bytes = piece(t);
    nlohmann::json shown = nlohmann::json::array();
    if (IsValidUtf8(bytes)) {
      shown = bytes;
    } else {
      for (unsigned char b : bytes) shown.push_back(static_cast<int>(b));
    }
    out.push_back({{"id", t}, {"piece", std::move(shown)}});
  }
  return {{"tokens", std::move(out)}};
}

nlohmann::json DetokenizeResponse(const std::vector<int32_t>& tokens, const PieceOf& piece) {
  std::string content;
  for (int32_t t : tokens) content += piece(t);
  return {{"content", std::move(content)}};
}

}  // namespace hearth::serve
