// Unit tests of /tokenize and /detokenize's bodies (tokenize_request.h)
// and answers (tokenize_response.h): each hostile field is InvalidArgument
// naming it, ids outside the vocabulary or past the count never reach the
// model, and pieces that are not UTF-8 come back as their bytes.

#ifdef HEARTH_SERVE_FOUND

#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "error_param.h"
#include "tokenize_request.h"
#include "tokenize_response.h"

namespace hearth::serve {
namespace {

// InvalidArgument whose param is `field`.
bool RefusesField(const absl::Status& s, const std::string& field) {
  return s.code() == absl::StatusCode::kInvalidArgument && ParamOf(s) == field &&
         s.message().find("'" + field + "'") != absl::string_view::npos;
}

TEST_CASE("tokenize request: llama-server's fields and defaults", "[serve]") {
  absl::StatusOr<TokenizeRequest> r = ParseTokenizeRequest(R"({"content": "Hi <s>"})");
  REQUIRE(r.ok());
  CHECK(r->content == "Hi <s>");
  CHECK(!r->add_special);
  CHECK(r->parse_special);
  CHECK(!r->with_pieces);
  r = ParseTokenizeRequest(
      R"({"content": "", "add_special": true, "parse_special": false, "with_pieces": true,
          "extra": 1})");
  REQUIRE(r.ok());
  CHECK(r->content.empty());
  CHECK(r->add_special);
  CHECK(!r->parse_special);
  CHECK(r->with_pieces);
  CHECK(ParseTokenizeRequest(R"({"content": "x", "with_pieces": null})").ok());
}

TEST_CASE("tokenize request: wrong types are refused naming the field", "[serve]") {
  CHECK(RefusesField(ParseTokenizeRequest("{}").status(), "content"));
  CHECK(RefusesField(ParseTokenizeRequest(R"({"content": ["a", 12]})").status(), "content"));
  CHECK(RefusesField(ParseTokenizeRequest(R"({"content": 12})").status(), "content"));
  CHECK(RefusesField(ParseTokenizeRequest(R"({"content": null})").status(), "content"));
  for (const char* field : {"add_special", "parse_special", "with_pieces"}) {
    for (const char* value : {"1", "\"true\"", "[]"}) {
      INFO(field << " = " << value);
      CHECK(RefusesField(
          ParseTokenizeRequest(absl::StrCat(R"({"content": "x", ")", field, "\": ", value, "}"))
              .status(),
          field));
    }
  }
  CHECK(ParseTokenizeRequest("[1]").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(ParseTokenizeRequest("{").status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("detokenize request: only integer ids of the vocabulary, at most the count", "[serve]") {
  absl::StatusOr<DetokenizeRequest> r =
      ParseDetokenizeRequest(R"({"tokens": [0, 5, 259]})", 260, 8);
  REQUIRE(r.ok());
  CHECK(r->tokens == std::vector<int32_t>{0, 5, 259});
  CHECK(ParseDetokenizeRequest(R"({"tokens": []})", 260, 8).ok());
  for (const char* tokens : {"260", "-1", "1.0", "1.5", "\"3\"", "null", "true", "[1]",
                             "18446744073709551615", "9223372036854775808",
                             "-9223372036854775808", "1e3"}) {
    INFO("tokens: [" << tokens << "]");
    absl::Status s =
        ParseDetokenizeRequest(absl::StrCat(R"({"tokens": [1, )", tokens, "]}"), 260, 8).status();
    CHECK(RefusesField(s, "tokens"));
    CHECK(s.message().find("[1]") != absl::string_view::npos);
  }
  absl::Status many = ParseDetokenizeRequest(R"({"tokens": [1,1,1,1,1,1,1,1,1]})", 260, 8).status();
  CHECK(RefusesField(many, "tokens"));
  CHECK(many.message().find("at most 8") != absl::string_view::npos);
  for (const char* body :
       {"{}", R"({"tokens": 3})", R"({"tokens": "1 2"})", R"({"tokens": null})"}) {
    CHECK(RefusesField(ParseDetokenizeRequest(body, 260, 8).status(), "tokens"));
  }
  CHECK(RefusesField(ParseDetokenizeRequest(R"({"tokens": [0]})", 0, 8).status(), "tokens"));
}

TEST_CASE("tokenize response: ids, pieces as text or as bytes, and content", "[serve]") {
  const PieceOf piece = [](int32_t t) {
    switch (t) {
      case 1: return std::string("<s>");
      case 2: return std::string("\xe2\x82");
      case 3: return std::string("\xac");
      default: return std::string("h");
    }
  };
  CHECK(TokenizeResponse({1, 4}, false, piece) == nlohmann::json::parse(R"({"tokens": [1, 4]})"));
  CHECK(TokenizeResponse({}, true, piece) == nlohmann::json::parse(R"({"tokens": []})"));
  CHECK(TokenizeResponse({1, 2, 3}, true, piece) ==
        nlohmann::json::parse(R"({"tokens": [{"id": 1, "piece": "<s>"},
                                             {"id": 2, "piece": [226, 130]},
                                             {"id": 3, "piece": [172]}]})"));
  CHECK(DetokenizeResponse({1, 4, 2, 3}, piece) ==
        nlohmann::json{{"content", "<s>h\xe2\x82\xac"}});
}

TEST_CASE("tokenize response: UTF-8 as RFC 3629 has it", "[serve]") {
  CHECK(IsValidUtf8(""));
  CHECK(IsValidUtf8("plain"));
  CHECK(IsValidUtf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
  CHECK(IsValidUtf8("\xf4\x8f\xbf\xbf"));  // U+10FFFF
  CHECK(!IsValidUtf8("\xff"));
  CHECK(!IsValidUtf8("\xc0\xaf"));          // overlong "/"
  CHECK(!IsValidUtf8("\xe0\x80\xaf"));      // overlong
  CHECK(!IsValidUtf8("\xed\xa0\x80"));      // a surrogate
  CHECK(!IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  CHECK(!IsValidUtf8("\xe2\x82"));          // cut short
  CHECK(!IsValidUtf8("\xe2\x28\xa1"));      // not a continuation
}

}  // namespace
}  // namespace hearth::serve

#endif  // HEARTH_SERVE_FOUND
