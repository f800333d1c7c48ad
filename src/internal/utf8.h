// File: src/internal/utf8.h
//
// A strict UTF-8 decoder (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF), for checking names and for sanitising text that
// must be UTF-8 on the way out (Prometheus label values). Not part of the
// public API.

#ifndef HEARTH_INTERNAL_UTF8_H_
#define HEARTH_INTERNAL_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hearth::internal {

// The code point starting at text[*pos], advancing *pos past it; -1 (and
// *pos past the one offending byte) when the bytes there are not valid
// UTF-8. REQUIRES: *pos < text.size().
inline int32_t NextCodePoint(std::string_view text, size_t* pos) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = byte(*pos);
  if (lead < 0x80) {
    ++*pos;
    return lead;
  }
  int length = 0;
  int32_t cp = 0;
  int32_t min = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, cp = lead & 0x1F, min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, cp = lead & 0x0F, min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, cp = lead & 0x07, min = 0x10000;
  } else {
    ++*pos;
    return -1;
  }
  if (*pos + static_cast<size_t>(length) > text.size()) {
    ++*pos;
    return -1;
  }
  for (int i = 1; i < length; ++i) {
    const uint8_t next = byte(*pos + static_cast<size_t>(i));
    if ((next & 0xC0) != 0x80) {
      ++*pos;
      return -1;
    }
    cp = (cp << 6) | (next & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++*pos;
    return -1;
  }
  *pos += static_cast<size_t>(length);
  return cp;
}

// Characters a name may not hold: C0 controls and DEL, C1 controls, and the
// line and paragraph separators (U+2028, U+2029), which some readers take
// for line ends.
inline bool IsControlCodePoint(int32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029;
}

// Appends the UTF-8 encoding of code point `cp` (valid, not a surrogate).
inline void AppendCodePoint(int32_t cp, std::string* out) {
  const auto u = static_cast<uint32_t>(cp);
  if (u < 0x80) {
    out->push_back(static_cast<char>(u));
  } else if (u < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (u >> 6)));
    out->push_back(static_cast<char>(0x80 | (u & 0x3F)));
  } else if (u < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (u >> 12)));
    out->push_back(static_cast<char>(0x80 | ((u >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (u & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (u >> 18)));
    out->push_back(static_cast<char>(0x80 | ((u >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((u >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (u & 0x3F)));
  }
}

}  // namespace hearth::internal

#endif  // HEARTH_INTERNAL_UTF8_H_
