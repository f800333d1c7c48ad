// Unit tests of the request fields that shape an answer beyond sampling:
// logprobs / top_logprobs, logit_bias, grammar and response_format. Each
// hostile value is InvalidArgument naming its field, never a crash and
// never a silent default.

#ifdef HEARTH_SERVE_FOUND

#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"

#include "error_param.h"
#include "grammar_field.h"
#include "logit_bias_field.h"
#include "openai_request.h"

namespace hearth::serve {
namespace {

absl::StatusOr<GenerationRequest> Chat(const std::string& fields) {
  return ParseChatRequest(absl::StrCat(
      R"({"model": "m", "messages": [{"role": "user", "content": "x"}], )", fields, "}"));
}

absl::StatusOr<GenerationRequest> Completion(const std::string& fields) {
  return ParseCompletionRequest(absl::StrCat(R"({"model": "m", "prompt": "x", )", fields, "}"));
}

// InvalidArgument, with `field` quoted in the message and as the param.
void CheckRefused(const absl::StatusOr<GenerationRequest>& r, const std::string& field) {
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(r.status().message()).find(absl::StrCat("'", field, "'")) !=
        std::string::npos);
  CHECK(ParamOf(r.status()) == std::optional<std::string>(field));
  CHECK(r.status().message().size() < 300);
}

TEST_CASE("chat logprobs: true with 0..20 alternatives", "[serve]") {
  CHECK_FALSE(Chat(R"("user": "x")")->logprobs.has_value());
  CHECK_FALSE(Chat(R"("logprobs": false, "top_logprobs": 0)")->logprobs.has_value());
  CHECK(Chat(R"("logprobs": true)")->logprobs == 0);
  CHECK(Chat(R"("logprobs": true, "top_logprobs": 20)")->logprobs == 20);
  CHECK(Chat(R"("logprobs": null, "top_logprobs": null)")->logprobs == std::nullopt);
  const char* bad[][2] = {
      {R"("logprobs": 1)", "logprobs"},
      {R"("logprobs": "true")", "logprobs"},
      {R"("logprobs": true, "top_logprobs": 21)", "top_logprobs"},
      {R"("logprobs": true, "top_logprobs": -1)", "top_logprobs"},
      {R"("logprobs": true, "top_logprobs": 2.5)", "top_logprobs"},
      {R"("logprobs": true, "top_logprobs": 1e300)", "top_logprobs"},
      {R"("logprobs": true, "top_logprobs": 18446744073709551615)", "top_logprobs"},
      {R"("logprobs": true, "top_logprobs": "3")", "top_logprobs"},
      {R"("top_logprobs": 3)", "top_logprobs"},
      {R"("logprobs": false, "top_logprobs": 3)", "top_logprobs"},
  };
  for (const auto& [fields, field] : bad) {
    INFO(fields);
    CheckRefused(Chat(fields), field);
  }
}

TEST_CASE("completion logprobs: an integer 0..5", "[serve]") {
  CHECK_FALSE(Completion(R"("user": "x")")->logprobs.has_value());
  CHECK_FALSE(Completion(R"("logprobs": null)")->logprobs.has_value());
  CHECK_FALSE(Completion(R"("logprobs": false)")->logprobs.has_value());
  CHECK(Completion(R"("logprobs": 0)")->logprobs == 0);
  CHECK(Completion(R"("logprobs": 5)")->logprobs == 5);
  const char* bad[][2] = {
      {R"("logprobs": 6)", "logprobs"},
      {R"("logprobs": -1)", "logprobs"},
      {R"("logprobs": true)", "logprobs"},
      {R"("logprobs": 1.5)", "logprobs"},
      {R"("logprobs": -9223372036854775808)", "logprobs"},
      {R"("logprobs": [1])", "logprobs"},
      {R"("top_logprobs": 2)", "top_logprobs"},
      {R"("top_logprobs": "x")", "top_logprobs"},
  };
  for (const auto& [fields, field] : bad) {
    INFO(fields);
    CheckRefused(Completion(fields), field);
  }
}

TEST_CASE("logit_bias: token id strings to [-100, 100]", "[serve]") {
  auto r = Chat(R"("logit_bias": {"42": -100, "7": 2.5, "0": 100})");
  REQUIRE(r.ok());
  REQUIRE(r->sampling.logit_bias.size() == 3);
  CHECK(Chat(R"("logit_bias": {})")->sampling.logit_bias.empty());
  CHECK(Completion(R"("logit_bias": {"257": -100})")->sampling.logit_bias.size() == 1);
  std::string many = R"("logit_bias": {)";
  for (size_t i = 0; i <= kMaxLogitBiasEntries; ++i) absl::StrAppend(&many, i ? "," : "", "\"", i, "\": 1");
  many += "}";
  const std::string bad[] = {
      R"("logit_bias": [])",
      R"("logit_bias": [[42, -100]])",
      R"("logit_bias": "42")",
      R"("logit_bias": {"hello": -100})",
      R"("logit_bias": {"-1": 5})",
      R"("logit_bias": {"+1": 5})",
      R"("logit_bias": {" 1": 5})",
      R"("logit_bias": {"": 5})",
      R"("logit_bias": {"1.0": 5})",
      R"("logit_bias": {"99999999999": 5})",
      R"("logit_bias": {"2147483648": 5})",
      R"("logit_bias": {"7": 5, "007": 1})",
      R"("logit_bias": {"1": 100.5})",
      R"("logit_bias": {"1": -101})",
      R"("logit_bias": {"1": "5"})",
      R"("logit_bias": {"1": null})",
      absl::StrCat(R"("logit_bias": {")", std::string(100000, '1'), R"(": 1})"),
      many,
  };
  for (const std::string& fields : bad) {
    INFO(fields.substr(0, 80));
    CheckRefused(Chat(fields), "logit_bias");
  }
}

TEST_CASE("logit_bias ids are checked against the vocabulary", "[serve]") {
  const std::vector<TokenBias> ok = {{0, 1}, {257, -100}};
  CHECK(CheckLogitBiasTokens(ok, 258).ok());
  const std::vector<TokenBias> past = {{258, 1}};
  const absl::Status s = CheckLogitBiasTokens(past, 258);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(ParamOf(s) == std::optional<std::string>("logit_bias"));
  CHECK(std::string(s.message()).find("0 to 257") != std::string::npos);
  const std::vector<TokenBias> negative = {{-5, 1}};
  CHECK_FALSE(CheckLogitBiasTokens(negative, 258).ok());
}

TEST_CASE("grammar: a bounded GBNF string", "[serve]") {
  auto r = Chat(R"("grammar": "root ::= \"yes\" | \"no\"")");
  REQUIRE(r.ok());
  CHECK(r->grammar == R"(root ::= "yes" | "no")");
  CHECK(r->grammar_field == "grammar");
  CHECK(Chat(R"("grammar": "")")->grammar.empty());
  CHECK(Chat(R"("grammar": null)")->grammar.empty());
  // Whether it parses is the compiler's question (grammar_sampler.h).
  CHECK(Completion(R"("grammar": "not gbnf at all")")->grammar == "not gbnf at all");
  const std::string deep = std::string(kMaxGrammarNesting + 1, '(') + "\\\"a\\\"" +
                           std::string(kMaxGrammarNesting + 1, ')');
  const std::string bad[] = {
      R"("grammar": 5)",
      R"("grammar": ["root ::= \"a\""])",
      R"("grammar": {"root": "a"})",
      R"("grammar": "root ::= \"a\u0000\"")",
      absl::StrCat(R"("grammar": ")", std::string(kMaxGrammarBytes + 1, 'x'), "\""),
      absl::StrCat(R"("grammar": "root ::= )", deep, "\""),
  };
  for (const std::string& fields : bad) {
    INFO(fields.substr(0, 80));
    CheckRefused(Chat(fields), "grammar");
  }
}

TEST_CASE("grammar nesting counts parentheses outside literals, classes and comments",
          "[serve]") {
  CHECK(GrammarNesting(R"g(root ::= "a")g") == 0);
  CHECK(GrammarNesting(R"g(root ::= ("a" ("b")))g") == 2);
  CHECK(GrammarNesting(R"g(root ::= "((((" [(((] # ((((()g") == 0);
  CHECK(GrammarNesting(R"g(root ::= "\"(" ("x"))g") == 1);
  CHECK(GrammarNesting(R"g(root ::= ")))" (((("x"))))g") == 4);
  CHECK(GrammarNesting(std::string(100000, '(')) == 100000);
  CHECK(GrammarNesting("\"unterminated ((((") == 0);
}

TEST_CASE("response_format: text and json_object pass, malformed ones are refused", "[serve]") {
  CHECK(Chat(R"("response_format": {"type": "text"})")->grammar.empty());
  auto r = Chat(R"("response_format": {"type": "json_object"})");
  REQUIRE(r.ok());
  CHECK(r->grammar == kJsonObjectGrammar);
  CHECK(r->grammar_field == "response_format");
  CHECK(Completion(R"("response_format": {"type": "json_object"})")->grammar ==
        kJsonObjectGrammar);
  const char* bad[] = {
      R"("response_format": "json_object")",
      R"("response_format": {})",
      R"("response_format": {"type": 5})",
      R"("response_format": {"type": "yaml"})",
      R"("response_format": {"type": "json_object"}, "grammar": "root ::= \"a\"")",
  };
  for (const char* fields : bad) {
    INFO(fields);
    CheckRefused(Chat(fields), "response_format");
  }
}

}  // namespace
}  // namespace hearth::serve

#endif  // HEARTH_SERVE_FOUND
