#include "tokenize_request.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "json_fields.h"
#include "nlohmann/json.hpp"

namespace hearth::serve {
namespace {

using Json = nlohmann::json;

// `out` keeps its default when the field is absent or null.
absl::Status ReadBool(const Json& j, const char* field, bool& out) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_boolean()) return BadField(field, "must be true or false");
  out = it->get<bool>();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TokenizeRequest> ParseTokenizeRequest(absl::string_view body) {
  absl::StatusOr<Json> j = ParseJsonObject(body);
  if (!j.ok()) return j.status();
  TokenizeRequest r;
  auto content = j->find("content");
  if (content == j->end() || !content->is_string()) {
    return BadField("content", "is required: the text to tokenize, one string");
  }
  r.content = content->get<std::string>();
  for (auto [field, out] : {std::pair<const char*, bool*>{"add_special", &r.add_special},
                            {"parse_special", &r.parse_special},
                            {"with_pieces", &r.with_pieces}}) {
    if (absl::Status s = ReadBool(*j, field, *out); !s.ok()) return s;
  }
  return r;
}

absl::StatusOr<DetokenizeRequest> ParseDetokenizeRequest(absl::string_view body,
                                                         int32_t vocab_size, size_t max_tokens) {
  absl::StatusOr<Json> j = ParseJsonObject(body);
  if (!j.ok()) return j.status();
  auto tokens = j->find("tokens");
  if (tokens == j->end() || !tokens->is_array()) {
    return BadField("tokens", "is required: an array of token ids");
  }
  if (tokens->size() > max_tokens) {
    return BadField("tokens", absl::StrCat("holds ", tokens->size(), " ids; at most ", max_tokens,
                                      " (this server's context) are accepted"));
  }
  DetokenizeRequest r;
  r.tokens.reserve(tokens->size());
  for (size_t i = 0; i < tokens->size(); ++i) {
    const Json& t = (*tokens)[i];
    // 3.0 and "3" are not ids; an unsigned is compared unsigned, since
    // one above INT64_MAX would wrap as int64_t.
    bool in_vocab = false;
    if (t.is_number_unsigned()) {
      in_vocab = t.get<uint64_t>() < static_cast<uint64_t>(std::max(0, vocab_size));
    } else if (t.is_number_integer()) {
      in_vocab = t.get<int64_t>() >= 0 && t.get<int64_t>() < vocab_size;
    }
    if (!in_vocab) {
      return BadField("tokens", absl::StrCat("[", i, "] is not a token id: each must be an integer "
                                        "in [0, ", vocab_size, ")"));
    }
    r.tokens.push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  return r;
}

}  // namespace hearth::serve
