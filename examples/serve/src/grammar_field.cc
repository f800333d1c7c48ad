#include "grammar_field.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "json_fields.h"
#include "unsupported_fields.h"

namespace hearth::serve {
namespace {

using Json = nlohmann::json;

absl::Status ReadGbnf(const Json& body, GenerationRequest& r) {
  auto it = body.find("grammar");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_string()) return BadField("grammar", "must be a string (GBNF) or absent");
  const std::string& gbnf = it->get_ref<const std::string&>();
  if (absl::Status s = CheckGrammarText(gbnf, "grammar"); !s.ok()) return s;
  if (gbnf.empty()) return absl::OkStatus();
  r.grammar = gbnf;
  r.grammar_field = "grammar";
  return absl::OkStatus();
}

// One constraint per request: a second one asked is refused, naming it.
absl::Status CheckAlone(const GenerationRequest& r, absl::string_view field) {
  if (r.grammar.empty() && r.json_schema.empty()) return absl::OkStatus();
  return BadField(field, absl::StrCat("cannot be combined with '", r.grammar_field,
                                      "': one grammar or schema per request"));
}

// Every node of a schema within the bounds of grammar_field.h; `properties`
// counts the "properties" keys seen so far. Recursion stops at the bound.
absl::Status CheckSchemaNode(const Json& node, int depth, absl::string_view field,
                             size_t& properties) {
  if (!node.is_structured()) return absl::OkStatus();
  if (depth > kMaxSchemaDepth) {
    return BadField(field, absl::StrCat("nests objects and arrays more than ", kMaxSchemaDepth,
                                        " deep; at most ", kMaxSchemaDepth, " are allowed"));
  }
  for (const auto& item : node.items()) {
    const Json& child = item.value();
    if (node.is_object()) {
      const size_t key = item.key().size();
      const size_t ref = item.key() == "$ref" && child.is_string()
                             ? child.get_ref<const std::string&>().size() : 0;
      if (std::max(key, ref) > kMaxSchemaKeyBytes) {
        return BadField(field, absl::StrCat("holds a key or $ref of ", std::max(key, ref),
                                            " bytes; at most ", kMaxSchemaKeyBytes,
                                            " are allowed"));
      }
      if (item.key() == "properties" && child.is_object()) properties += child.size();
      if (properties > kMaxSchemaProperties) {
        return BadField(field, absl::StrCat("has more than ", kMaxSchemaProperties,
                                            " properties; at most ", kMaxSchemaProperties,
                                            " (in all its objects) are allowed"));
      }
    }
    if (absl::Status s = CheckSchemaNode(child, depth + 1, field, properties); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// OpenAI's json_schema object: name (required, as at OpenAI), strict
// (every answer follows the grammar, so true and false are both met),
// schema (required); description is not shown to the model, so refused.
absl::Status ReadResponseSchema(const Json& format, GenerationRequest& r) {
  static constexpr absl::string_view kFormatFields[] = {"type", "json_schema"};
  if (absl::Status s = RejectOtherFields(format, kFormatFields, "response_format."); !s.ok()) {
    return s;
  }
  auto js = format.find("json_schema");
  if (js == format.end() || !js->is_object()) {
    return BadField("response_format.json_schema",
                    "is required with type \"json_schema\": an object {\"name\", \"schema\", "
                    "\"strict\"}");
  }
  static constexpr absl::string_view kSchemaFields[] = {"name", "schema", "strict"};
  if (absl::Status s = RejectOtherFields(*js, kSchemaFields, "response_format.json_schema.");
      !s.ok()) {
    return s;
  }
  auto name = js->find("name");
  const bool name_ok =
      name != js->end() && name->is_string() && !name->get_ref<const std::string&>().empty() &&
      name->get_ref<const std::string&>().size() <= 64 &&
      absl::c_all_of(name->get_ref<const std::string&>(),
                     [](char c) { return absl::ascii_isalnum(c) || c == '_' || c == '-'; });
  if (!name_ok) {
    return BadField("response_format.json_schema.name",
                    "is required: 1 to 64 characters of a-z, A-Z, 0-9, '_' and '-'");
  }
  auto strict = js->find("strict");
  if (strict != js->end() && !strict->is_null() && !strict->is_boolean()) {
    return BadField("response_format.json_schema.strict", "must be true, false or absent");
  }
  auto schema = js->find("schema");
  if (schema == js->end() || schema->is_null()) {
    return BadField("response_format.json_schema.schema", "is required: a JSON schema object");
  }
  return ReadJsonSchema(*schema, "response_format.json_schema.schema", r);
}

// text; json_object (llama-server's `schema` beside it: a schema); json_schema.
absl::Status ReadResponseFormat(const Json& body, GenerationRequest& r) {
  auto it = body.find("response_format");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  auto type = it->is_object() ? it->find("type") : it->end();
  if (!it->is_object() || type == it->end() || !type->is_string() ||
      (*type != "text" && *type != "json_object" && *type != "json_schema")) {
    return BadField("response_format",
                    "must be an object whose type is \"text\", \"json_object\" or "
                    "\"json_schema\", or absent");
  }
  if (*type == "json_schema") {
    if (absl::Status s = CheckAlone(r, "response_format"); !s.ok()) return s;
    return ReadResponseSchema(*it, r);
  }
  static constexpr absl::string_view kTextFields[] = {"type"};
  static constexpr absl::string_view kObjectFields[] = {"type", "schema"};
  if (absl::Status s = RejectOtherFields(*it, *type == "text" ? absl::MakeSpan(kTextFields)
                                                              : absl::MakeSpan(kObjectFields),
                                         "response_format.");
      !s.ok()) {
    return s;
  }
  if (*type == "text") return absl::OkStatus();
  if (absl::Status s = CheckAlone(r, "response_format"); !s.ok()) return s;
  if (auto schema = it->find("schema"); schema != it->end() && !schema->is_null()) {
    return ReadJsonSchema(*schema, "response_format.schema", r);
  }
  r.grammar = kJsonObjectGrammar;
  r.grammar_field = "response_format";
  return absl::OkStatus();
}

// llama-server's top-level `json_schema`: a schema.
absl::Status ReadTopLevelSchema(const Json& body, GenerationRequest& r) {
  auto it = body.find("json_schema");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (absl::Status s = CheckAlone(r, "json_schema"); !s.ok()) return s;
  return ReadJsonSchema(*it, "json_schema", r);
}

// The repetition that opens at gbnf[i] == '{': its counts into `shape`;
// returns the index of its last character (its '}' when well formed).
size_t ScanRepetition(absl::string_view gbnf, size_t i, GrammarShape& shape) {
  auto skip_spaces = [&] {
    while (i < gbnf.size() && (gbnf[i] == ' ' || gbnf[i] == '\t')) ++i;
  };
  auto number = [&]() -> std::optional<int64_t> {
    skip_spaces();
    if (i >= gbnf.size() || !absl::ascii_isdigit(gbnf[i])) return std::nullopt;
    int64_t n = 0;
    for (; i < gbnf.size() && absl::ascii_isdigit(gbnf[i]); ++i) {
      n = std::min<int64_t>(n * 10 + (gbnf[i] - '0'), int64_t{1} << 31);
    }
    skip_spaces();
    return n;
  };
  ++i;
  const std::optional<int64_t> low = number();
  std::optional<int64_t> high = low;
  if (i < gbnf.size() && gbnf[i] == ',') {
    ++i;
    high = number();
  }
  shape.largest_repetition =
      std::max({shape.largest_repetition, low.value_or(0), high.value_or(0)});
  if (low && high && *high < *low) shape.inverted_repetition = true;
  return i < gbnf.size() && gbnf[i] == '}' ? i : i - 1;
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

GrammarShape ScanGrammar(absl::string_view gbnf) {
  GrammarShape shape;
  int depth = 0;
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
      shape.nesting = std::max(shape.nesting, ++depth);
    } else if (c == ')') {
      depth = std::max(0, depth - 1);
    } else if (c == '{') {
      // The loop's ++i steps past the repetition's last character.
      i = ScanRepetition(gbnf, i, shape);
    }
  }
  return shape;
}

absl::Status CheckGrammarText(absl::string_view gbnf, absl::string_view field, size_t max_bytes) {
  if (gbnf.size() > max_bytes) {
    return BadField(field, absl::StrCat("is ", gbnf.size(), " bytes of grammar; at most ",
                                        max_bytes, " are allowed"));
  }
  // llama.cpp reads the grammar as a C string: a NUL would silently cut it.
  if (gbnf.find('\0') != absl::string_view::npos) return BadField(field, "must not contain NUL");
  const GrammarShape shape = ScanGrammar(gbnf);
  if (shape.nesting > kMaxGrammarNesting) {
    return BadField(field, absl::StrCat("nests parentheses more than ", kMaxGrammarNesting,
                                        " deep"));
  }
  if (shape.inverted_repetition) {
    return BadField(field, "has a repetition {m,n} with n < m (a schema's minLength above "
                           "maxLength, or minItems above maxItems)");
  }
  if (shape.largest_repetition > kMaxGrammarRepetition) {
    return BadField(field, absl::StrCat("repeats an item up to ", shape.largest_repetition,
                                        " times ({m,n}, a schema's maxLength or maxItems); at "
                                        "most ", kMaxGrammarRepetition, " are allowed"));
  }
  return absl::OkStatus();
}

absl::Status ReadJsonSchema(const Json& schema, absl::string_view field, GenerationRequest& r) {
  if (!schema.is_object()) return BadField(field, "must be a JSON schema: an object");
  size_t properties = 0;
  if (absl::Status s = CheckSchemaNode(schema, 1, field, properties); !s.ok()) return s;
  std::string text = schema.dump();
  if (text.size() > kMaxSchemaBytes) {
    return BadField(field, absl::StrCat("is ", text.size(), " bytes as JSON; at most ",
                                        kMaxSchemaBytes, " are allowed"));
  }
  r.json_schema = std::move(text);
  r.grammar_field = std::string(field);
  return absl::OkStatus();
}

void KeepSchemaOrder(absl::string_view body, GenerationRequest& r) {
  if (r.json_schema.empty()) return;
  using OrderedJson = nlohmann::ordered_json;
  const OrderedJson j = OrderedJson::parse(body, /*cb=*/nullptr, /*allow_exceptions=*/false);
  const OrderedJson* at = &j;
  for (absl::string_view key : absl::StrSplit(r.grammar_field, '.')) {
    // Not found cannot happen (the same body was just read); the sorted
    // text then stays.
    if (!at->is_object()) return;
    auto it = at->find(std::string(key));
    if (it == at->end()) return;
    at = &*it;
  }
  r.json_schema = at->dump();
}

absl::Status ReadGrammar(const Json& body, GenerationRequest& r) {
  if (absl::Status s = ReadGbnf(body, r); !s.ok()) return s;
  if (absl::Status s = ReadResponseFormat(body, r); !s.ok()) return s;
  return ReadTopLevelSchema(body, r);
}

}  // namespace hearth::serve
