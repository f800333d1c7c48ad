#include "sim/flat_json.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace hearth::internal {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  absl::StatusOr<std::vector<JsonField>> Object() {
    std::vector<JsonField> out;
    Skip();
    if (!Eat('{')) return Error("expected '{'");
    Skip();
    if (Eat('}')) return Finish(std::move(out));
    for (;;) {
      JsonField f;
      Skip();
      if (!String(&f.key)) return Error("expected a string key");
      Skip();
      if (!Eat(':')) return Error("expected ':'");
      Skip();
      if (Peek() == '"') {
        f.is_string = true;
        if (!String(&f.text)) return Error("bad string");
      } else if (Peek() == '{' || Peek() == '[') {
        return Error(absl::StrCat("nested value for key '", f.key, "'"));
      } else {
        const size_t start = i_;
        while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' &&
               s_[i_] != ' ' && s_[i_] != '\t') {
          ++i_;
        }
        f.text = std::string(s_.substr(start, i_ - start));
        if (f.text != "true" && f.text != "false" && f.text != "null") {
          char* end = nullptr;
          f.number = std::strtod(f.text.c_str(), &end);
          if (f.text.empty() || end != f.text.c_str() + f.text.size()) {
            return Error(absl::StrCat("bad value '", f.text, "'"));
          }
        }
      }
      out.push_back(std::move(f));
      Skip();
      if (Eat(',')) continue;
      if (Eat('}')) return Finish(std::move(out));
      return Error("expected ',' or '}'");
    }
  }

 private:
  absl::StatusOr<std::vector<JsonField>> Finish(std::vector<JsonField> out) {
    Skip();
    if (i_ != s_.size()) return Error("trailing characters after the object");
    return out;
  }
  absl::Status Error(std::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON: ", std::string(what), " at byte ", i_));
  }
  char Peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool Eat(char c) {
    if (Peek() != c) return false;
    ++i_;
    return true;
  }
  void Skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  static void Utf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xc0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xe0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      *out += static_cast<char>(0xf0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  bool Hex4(uint32_t* v) {
    if (i_ + 4 > s_.size()) return false;
    *v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[i_++];
      *v <<= 4;
      if (c >= '0' && c <= '9') *v |= c - '0';
      else if (c >= 'a' && c <= 'f') *v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') *v |= c - 'A' + 10;
      else return false;
    }
    return true;
  }
  bool String(std::string* out) {
    if (!Eat('"')) return false;
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (i_ >= s_.size()) return false;
      const char e = s_[i_++];
      switch (e) {
        case '"': *out += '"'; break;
        case '\\': *out += '\\'; break;
        case '/': *out += '/'; break;
        case 'b': *out += '\b'; break;
        case 'f': *out += '\f'; break;
        case 'n': *out += '\n'; break;
        case 'r': *out += '\r'; break;
        case 't': *out += '\t'; break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xd800 && cp < 0xdc00 && i_ + 6 <= s_.size() &&
              s_[i_] == '\\' && s_[i_ + 1] == 'u') {
            i_ += 2;
            uint32_t lo;
            if (!Hex4(&lo)) return false;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          }
          Utf8(cp, out);
          break;
        }
        default: return false;
      }
    }
    return false;
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

absl::StatusOr<std::vector<JsonField>> ParseFlatJsonObject(std::string_view s) {
  return Parser(s).Object();
}

}  // namespace hearth::internal
