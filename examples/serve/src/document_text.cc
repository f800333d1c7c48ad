#include "document_text.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace hearth::serve {
namespace {

// ---- HTML to text -------------------------------------------------------

bool IsBlockTag(absl::string_view name) {
  static constexpr absl::string_view kBlocks[] = {
      "p", "div", "li", "ul", "ol", "tr", "table", "section", "article", "header", "footer",
      "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "title", "main", "nav"};
  return std::find(std::begin(kBlocks), std::end(kBlocks), name) != std::end(kBlocks);
}

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Decodes the entity at the start of `s` ("&amp;..."); returns the bytes it
// used, 0 when it is not one (the '&' is then kept as text). Reads at most
// the 11 bytes of the longest ("&#x10FFFF;" and its ';'), so a page of '&'
// costs linear time, not a search of the rest for each.
size_t DecodeEntity(absl::string_view s, std::string& out) {
  const size_t end = s.substr(0, 11).find(';');
  if (end == absl::string_view::npos) return 0;
  const absl::string_view name = s.substr(1, end - 1);
  static constexpr std::pair<absl::string_view, absl::string_view> kNamed[] = {
      {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}, {"nbsp", " "}};
  for (const auto& [n, text] : kNamed) {
    if (name == n) {
      out.append(text.data(), text.size());
      return end + 1;
    }
  }
  uint32_t cp = 0;
  if (absl::StartsWith(name, "#x") || absl::StartsWith(name, "#X")) {
    if (!absl::SimpleHexAtoi(name.substr(2), &cp)) return 0;
  } else if (absl::StartsWith(name, "#")) {
    if (!absl::SimpleAtoi(name.substr(1), &cp)) return 0;
  } else {
    return 0;
  }
  AppendUtf8(cp, out);
  return end + 1;
}

// The first "</name" in `s` at or after `from`, in any case; npos if none.
// Reads from `from` to the match only: a page of many <script> elements
// costs linear time.
size_t FindClosingTag(absl::string_view s, absl::string_view name, size_t from) {
  for (size_t at = s.find("</", from); at != absl::string_view::npos; at = s.find("</", at + 2)) {
    if (absl::EqualsIgnoreCase(s.substr(at + 2, name.size()), name)) return at;
  }
  return absl::string_view::npos;
}

// Handles the tag at the start of `s` (s[0] == '<'); returns the bytes
// used (the rest of the text when the tag never closes).
size_t HandleTag(absl::string_view s, std::string& out) {
  if (absl::StartsWith(s, "<!--")) {
    const size_t end = s.find("-->");
    return end == absl::string_view::npos ? s.size() : end + 3;
  }
  const size_t close = s.find('>');
  if (close == absl::string_view::npos) return s.size();
  absl::string_view inner = s.substr(1, close - 1);
  absl::ConsumePrefix(&inner, "/");
  const size_t name_end = std::min(inner.find_first_of(" \t\r\n/"), inner.size());
  const std::string name = absl::AsciiStrToLower(inner.substr(0, name_end));
  if ((name == "script" || name == "style") && s[1] != '/') {
    // Skips to the closing tag: code and styles are not the document.
    const size_t end = FindClosingTag(s, name, close);
    if (end == absl::string_view::npos) return s.size();
    const size_t end_close = s.find('>', end);
    return end_close == absl::string_view::npos ? s.size() : end_close + 1;
  }
  if (name == "br") out += '\n';
  if (IsBlockTag(name)) out += "\n\n";
  return close + 1;
}

std::string HtmlToText(absl::string_view html) {
  std::string out;
  out.reserve(html.size());
  size_t i = 0;
  while (i < html.size()) {
    const char c = html[i];
    if (c == '<') {
      i += HandleTag(html.substr(i), out);
    } else if (c == '&') {
      const size_t used = DecodeEntity(html.substr(i), out);
      if (used == 0) out += '&';
      i += std::max<size_t>(used, 1);
    } else {
      // In HTML a newline is only a space.
      out += (c == '\n' || c == '\r') ? ' ' : c;
      ++i;
    }
  }
  return out;
}

// ---- Tidying ----------------------------------------------------------

std::string Tidy(absl::string_view text) {
  std::string out;
  int pending_newlines = 0;
  bool pending_space = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\r') {
      if (i + 1 < text.size() && text[i + 1] == '\n') continue;
      ++pending_newlines;
    } else if (c == '\n') {
      ++pending_newlines;
    } else if (c == ' ' || c == '\t' || c == '\f' || c == '\v') {
      pending_space = true;
    } else {
      if (!out.empty()) {
        if (pending_newlines >= 2) {
          out += "\n\n";
        } else if (pending_newlines == 1) {
          out += '\n';
        } else if (pending_space) {
          out += ' ';
        }
      }
      pending_newlines = 0;
      pending_space = false;
      out += c;
    }
  }
  return out;
}

// ---- Chunking ---------------------------------------------------------

struct Piece {
  std::string text;
  // What joins it to the piece before: "\n\n", " " or "" (a cut word).
  absl::string_view separator;
  int64_t tokens = 0;
};

// The cut nearest the middle of `s`: a space if there is one, else a UTF-8
// character boundary. Returns 0 when `s` cannot be cut (one character).
size_t MiddleCut(absl::string_view s, bool* at_space) {
  const size_t mid = s.size() / 2;
  const size_t before = s.rfind(' ', mid);
  const size_t after = s.find(' ', mid);
  size_t best = absl::string_view::npos;
  if (before != absl::string_view::npos && before > 0) best = before;
  if (after != absl::string_view::npos && after + 1 < s.size() &&
      (best == absl::string_view::npos || after - mid < mid - best)) {
    best = after;
  }
  *at_space = best != absl::string_view::npos;
  if (*at_space) return best;
  size_t cut = mid;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

// Appends `s` as pieces of at most `max` tokens each, halving where needed.
void AddPieces(absl::string_view s, absl::string_view separator, int32_t max,
               const TokenCounter& count, std::vector<Piece>& out) {
  const int64_t tokens = count(s);
  bool at_space = false;
  const size_t cut = tokens > max ? MiddleCut(s, &at_space) : 0;
  if (cut == 0) {
    out.push_back({std::string(s), separator, tokens});
    return;
  }
  AddPieces(s.substr(0, cut), separator, max, count, out);
  AddPieces(s.substr(cut + (at_space ? 1 : 0)), at_space ? " " : "", max, count, out);
}

// A paragraph too long for one chunk, cut at its line breaks and sentence
// ends first.
void AddSentences(absl::string_view paragraph, int32_t max, const TokenCounter& count,
                  std::vector<Piece>& out) {
  absl::string_view separator = "\n\n";
  size_t start = 0;
  for (size_t i = 0; i < paragraph.size(); ++i) {
    const char c = paragraph[i];
    const bool line = c == '\n';
    const bool sentence = (c == '.' || c == '?' || c == '!') && i + 1 < paragraph.size() &&
                          paragraph[i + 1] == ' ';
    if (!line && !sentence) continue;
    const size_t stop = line ? i : i + 1;  // the full stop stays with its sentence
    if (stop > start) {
      AddPieces(paragraph.substr(start, stop - start), separator, max, count, out);
      separator = line ? "\n" : " ";
    }
    start = line ? i + 1 : i + 2;
    i = start - 1;
  }
  if (start < paragraph.size()) AddPieces(paragraph.substr(start), separator, max, count, out);
}

}  // namespace

std::string PlainDocumentText(DocumentFormat format, absl::string_view text) {
  return format == DocumentFormat::kHtml ? Tidy(HtmlToText(text)) : Tidy(text);
}

std::vector<std::string> SplitIntoChunks(absl::string_view text, int32_t max_tokens,
                                         const TokenCounter& count_tokens) {
  const int32_t max = std::max(1, max_tokens);
  std::vector<Piece> pieces;
  for (absl::string_view paragraph : absl::StrSplit(text, "\n\n", absl::SkipWhitespace())) {
    const int64_t tokens = count_tokens(paragraph);
    if (tokens <= max) {
      pieces.push_back({std::string(paragraph), "\n\n", tokens});
    } else {
      AddSentences(paragraph, max, count_tokens, pieces);
    }
  }
  std::vector<std::string> chunks;
  int64_t tokens = 0;
  for (Piece& p : pieces) {
    if (p.text.empty()) continue;
    if (!chunks.empty() && tokens + p.tokens <= max) {
      chunks.back().append(p.separator.data(), p.separator.size());
      chunks.back() += p.text;
      tokens += p.tokens;
    } else {
      chunks.push_back(std::move(p.text));
      tokens = p.tokens;
    }
  }
  return chunks;
}

}  // namespace hearth::serve
