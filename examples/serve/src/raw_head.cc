#include "raw_head.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace hearth::serve {
namespace {

bool IsTchar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         absl::string_view("!#$%&'*+-.^_`|~").find(c) != absl::string_view::npos;
}

// A field value's bytes: VCHAR, obs-text, SP and HTAB (RFC 9110 5.5).
bool IsValueByte(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return u == '\t' || (u >= 0x20 && u != 0x7f);
}

absl::Status BadLine(size_t line, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("request header line ", line, " ", why));
}

}  // namespace

absl::StatusOr<httplib::Headers> ParseRawHeaderFields(absl::string_view head) {
  httplib::Headers out;
  size_t pos = 0;
  for (size_t line_no = 0;; ++line_no) {
    const size_t lf = head.find('\n', pos);
    if (lf == absl::string_view::npos) return BadLine(line_no, "does not end the head");
    if (lf == pos || head[lf - 1] != '\r') return BadLine(line_no, "ends in a bare LF, not CRLF");
    const absl::string_view line = head.substr(pos, lf - 1 - pos);
    pos = lf + 1;
    if (line.find('\r') != absl::string_view::npos) return BadLine(line_no, "holds a bare CR");
    if (line_no == 0) continue;  // the request line, which httplib parsed
    if (line.empty()) return out;
    if (line.front() == ' ' || line.front() == '\t') {
      return BadLine(line_no, "is folded onto the previous one (obs-fold)");
    }
    size_t colon = 0;
    while (colon < line.size() && IsTchar(line[colon])) ++colon;
    if (colon == 0 || colon == line.size() || line[colon] != ':') {
      return BadLine(line_no, "is not \"<name>: <value>\" (a field name is a token right "
                              "before the colon)");
    }
    absl::string_view value = line.substr(colon + 1);
    for (char c : value) {
      if (!IsValueByte(c)) return BadLine(line_no, "has a control byte in its value");
    }
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    out.emplace(std::string(line.substr(0, colon)), std::string(value));
  }
}

std::vector<absl::string_view> RawHeaderValues(const httplib::Headers& headers,
                                               const std::string& name) {
  std::vector<absl::string_view> out;
  auto [begin, end] = headers.equal_range(name);
  for (auto it = begin; it != end; ++it) out.emplace_back(it->second);
  return out;
}

std::string RawHeader(const httplib::Request& req, const std::string& name) {
  auto it = req.headers.find(name);
  return it == req.headers.end() ? std::string() : it->second;
}

}  // namespace hearth::serve
