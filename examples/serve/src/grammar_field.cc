#include "grammar_field.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "json_fields.h"

namespace hearth::serve {
namespace {

using Json = nlohmann::json;

absl::Status ReadGbnf(const Json& body, GenerationRequest& r) {
  auto it = body.find("grammar");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_string()) return BadField("grammar", "must be a string (GBNF) or absent");
  const std::string& gbnf = it->get_ref<const std::string&>();
  if (gbnf.size() > kMaxGrammarBytes) {
    return BadField("grammar", absl::StrCat("is ", gbnf.size(), " bytes; at most ",
                                            kMaxGrammarBytes, " are allowed"));
  }
  // llama.cpp reads the grammar as a C string: a NUL would silently cut it.
  if (gbnf.find('\0') != std::string::npos) return BadField("grammar", "must not contain NUL");
  if (GrammarNesting(gbnf) > kMaxGrammarNesting) {
    return BadField("grammar", absl::StrCat("nests parentheses more than ", kMaxGrammarNesting,
                                            " deep"));
  }
  if (gbnf.empty()) return absl::OkStatus();
  r.grammar = gbnf;
  r.grammar_field = "grammar";
  return absl::OkStatus();
}

absl::Status ReadResponseFormat(const Json& body, GenerationRequest& r) {
  auto it = body.find("response_format");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  auto type = it->is_object() ? it->find("type") : it->end();
  if (!it->is_object() || type == it->end() || !type->is_string()) {
    return BadField("response_format",
                    "must be an object {\"type\": \"text\"} or {\"type\": \"json_object\"}, or "
                    "absent");
  }
  if (*type == "text") return absl::OkStatus();
  if (*type == "json_schema") {
    return BadField("response_format",
                    "type \"json_schema\" is not supported (this build has no schema-to-grammar "
                    "converter); use {\"type\": \"json_object\"}, a GBNF 'grammar', or leave it "
                    "absent");
  }
  if (*type != "json_object") {
    return BadField("response_format",
                    "type must be \"text\" or \"json_object\" (or response_format absent)");
  }
  if (!r.grammar.empty()) {
    return BadField("response_format", "json_object cannot be combined with 'grammar'");
  }
  r.grammar = kJsonObjectGrammar;
  r.grammar_field = "response_format";
  return absl::OkStatus();
}

}  // namespace

const char kJsonObjectGrammar[] = R"gbnf(root ::= object
value ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws (member ("," ws member)*)? "}" ws
member ::= string ":" ws value
array ::= "[" ws (value ("," ws value)*)? "]" ws
string ::= "\"" (plain | "\\" (["\\/bfnrt] | "u" hex hex hex hex))* "\"" ws
plain ::= [^"\\\x00-\x1F\x7F]
hex ::= [0-9a-fA-F]
number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)? ws
ws ::= [ \t\n]{0,8}
)gbnf";

int GrammarNesting(absl::string_view gbnf) {
  int depth = 0;
  int deepest = 0;
  for (size_t i = 0; i < gbnf.size(); ++i) {
    const char c = gbnf[i];
    if (c == '"' || c == '[') {
      // A literal or class ends at its unescaped closing mark.
      const char close = c == '"' ? '"' : ']';
      for (++i; i < gbnf.size() && gbnf[i] != close; ++i) {
        if (gbnf[i] == '\\') ++i;
      }
    } else if (c == '#') {
      while (i < gbnf.size() && gbnf[i] != '\n' && gbnf[i] != '\r') ++i;
    } else if (c == '(') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ')') {
      depth = std::max(0, depth - 1);
    }
  }
  return deepest;
}

absl::Status ReadGrammar(const Json& body, GenerationRequest& r) {
  if (absl::Status s = ReadGbnf(body, r); !s.ok()) return s;
  return ReadResponseFormat(body, r);
}

}  // namespace hearth::serve
