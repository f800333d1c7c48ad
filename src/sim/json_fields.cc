#include "sim/json_fields.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "sim/quote.h"

namespace hearth::internal {
namespace {

// nlohmann's message without its "[json.exception.parse_error.101] " tag,
// clipped: it echoes the token it stopped at, which can be a whole line.
std::string ParseErrorText(const Json::exception& e) {
  const std::string_view what = e.what();
  const size_t tag_end = what.find("] ");
  return Clip(tag_end == std::string_view::npos ? what : what.substr(tag_end + 2),
              2 * kMaxQuotedChars);
}

// Why `line` is not one JSON value: a stream read stops at the end of the
// first value, which tells trailing text from a syntax error.
absl::Status DescribeSyntaxError(absl::string_view line) {
  std::istringstream in{std::string(line)};
  Json value;
  try {
    in >> value;
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("JSON: ", ParseErrorText(e)));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("JSON: trailing characters after the ", value.type_name(), " at byte ",
                   static_cast<std::streamoff>(in.tellg())));
}

// A field's name and value for messages: "input_length '-5'".
std::string Field(absl::string_view key, const Json& v) {
  return absl::StrCat(key, " ", Quote(v.dump(-1, ' ', false, Json::error_handler_t::replace)));
}

const Json* Find(const Json& object, absl::string_view key) {
  const auto it = object.find(std::string(key));
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

}  // namespace

absl::StatusOr<Json> ParseJsonObjectLine(absl::string_view line) {
  Json object = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) return DescribeSyntaxError(line);
  if (!object.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON: expected an object, found ", object.type_name()));
  }
  return object;
}

absl::StatusOr<Json> ParseJsonDocument(std::string_view text, const std::string& name) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // e.byte counts from 1; the line is the one that byte is on.
    const size_t at = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    const int64_t line = 1 + std::count(text.begin(), text.begin() + at, '\n');
    return absl::InvalidArgumentError(
        absl::StrCat(name, ":", line, ": JSON: ", ParseErrorText(e)));
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": JSON: ", ParseErrorText(e)));
  }
}

std::vector<JsonMemberPosition> TopLevelMembers(std::string_view text) {
  std::vector<JsonMemberPosition> out;
  int64_t line = 1;
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  // At depth 1, after the opening bracket or a comma: the next token starts
  // a member (an object's key, or an array's element).
  bool member_next = false;
  bool in_key = false;
  bool top_is_object = false;
  for (const char c : text) {
    if (c == '\n') ++line;
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        in_key = false;
        continue;
      }
      if (in_key) out.back().key.push_back(c);
      continue;
    }
    const bool blank = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (depth == 1 && member_next && !blank && c != ',' && c != ']' && c != '}') {
      out.push_back({line, ""});
      member_next = false;
      in_key = top_is_object && c == '"';
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth == 1) {
        member_next = true;
        top_is_object = c == '{';
      }
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 1) {
      member_next = true;
    }
  }
  return out;
}

absl::StatusOr<std::optional<int64_t>> OptionalInt(const Json& object, absl::string_view key,
                                                   int64_t lo, int64_t hi) {
  const Json* v = Find(object, key);
  if (v == nullptr) return std::nullopt;
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat(Field(key, *v), " must be an integer in [", lo, ", ", hi, "]"));
  };
  if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(hi) || (lo > 0 && u < static_cast<uint64_t>(lo))) return bad();
    return static_cast<int64_t>(u);
  }
  if (v->is_number_integer()) {
    const int64_t i = v->get<int64_t>();
    if (i < lo || i > hi) return bad();
    return i;
  }
  if (v->is_number_float()) {
    // Within the range checked in doubles first, so the cast is defined.
    const double d = v->get<double>();
    if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) || std::trunc(d) != d) {
      return bad();
    }
    return static_cast<int64_t>(d);
  }
  return bad();
}

absl::StatusOr<std::optional<double>> OptionalNumber(const Json& object, absl::string_view key,
                                                     double lo, double hi) {
  const Json* v = Find(object, key);
  if (v == nullptr) return std::nullopt;
  if (v->is_number()) {
    const double d = v->get<double>();
    if (std::isfinite(d) && d >= lo && d <= hi) return d;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(Field(key, *v), " must be a number in [", lo, ", ", hi, "]"));
}

absl::StatusOr<std::optional<std::string>> OptionalString(const Json& object,
                                                          absl::string_view key) {
  const Json* v = Find(object, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(Field(key, *v), " must be a string"));
  }
  return v->get<std::string>();
}

absl::StatusOr<int64_t> RequiredInt(const Json& object, absl::string_view key, int64_t lo,
                                    int64_t hi) {
  absl::StatusOr<std::optional<int64_t>> v = OptionalInt(object, key, lo, hi);
  if (!v.ok()) return v.status();
  if (!v->has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(key, " is missing"));
  }
  return **v;
}

absl::StatusOr<double> RequiredNumber(const Json& object, absl::string_view key, double lo,
                                      double hi) {
  absl::StatusOr<std::optional<double>> v = OptionalNumber(object, key, lo, hi);
  if (!v.ok()) return v.status();
  if (!v->has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(key, " is missing"));
  }
  return **v;
}

absl::StatusOr<std::vector<uint64_t>> HashList(const Json& object, absl::string_view key,
                                               size_t max_size) {
  std::vector<uint64_t> out;
  const Json* v = Find(object, key);
  if (v == nullptr) return out;
  if (!v->is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(Field(key, *v), " must be a list of integers"));
  }
  if (v->size() > max_size) {
    return absl::InvalidArgumentError(
        absl::StrCat(key, " has ", v->size(), " entries; at most ", max_size));
  }
  for (size_t i = 0; i < v->size(); ++i) {
    const Json& e = (*v)[i];
    if (e.is_number_unsigned()) {
      out.push_back(e.get<uint64_t>());
    } else if (e.is_number_integer() && e.get<int64_t>() >= 0) {
      out.push_back(static_cast<uint64_t>(e.get<int64_t>()));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          Field(absl::StrCat(key, "[", i, "]"), e), " must be an integer in [0, 2^64)"));
    }
  }
  return out;
}

}  // namespace hearth::internal
