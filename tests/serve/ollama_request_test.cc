// Unit tests of Ollama's /api/chat and /api/generate bodies
// (ollama_request.h): each option maps onto the sampling field the OpenAI
// routes use, Ollama's defaults (stream true, seed -1, num_predict -1) mean
// what they mean there, and each hostile or unimplemented field is
// InvalidArgument naming it, never silently dropped.

#ifdef HEARTH_SERVE_FOUND

#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "error_param.h"
#include "grammar_field.h"
#include "ollama_request.h"

namespace hearth::serve {
namespace {

constexpr int32_t kContext = 8192;

absl::StatusOr<OllamaRequest> Chat(const std::string& body) {
  return ParseOllamaChatRequest(body, kContext);
}
absl::StatusOr<OllamaRequest> Generate(const std::string& body) {
  return ParseOllamaGenerateRequest(body, kContext);
}

// A chat body with `extra` (", ..." fields) added.
std::string ChatWith(const std::string& extra) {
  return absl::StrCat(R"({"model": "tiny", "messages": [{"role": "user", "content": "hi"}])",
                      extra, "}");
}
std::string WithOptions(const std::string& options) {
  return ChatWith(absl::StrCat(R"(, "options": {)", options, "}"));
}

// InvalidArgument whose param is `field`, named in the message.
bool RefusesField(const absl::Status& s, const std::string& field) {
  return s.code() == absl::StatusCode::kInvalidArgument && ParamOf(s) == field &&
         s.message().find("'" + field + "'") != absl::string_view::npos;
}

TEST_CASE("ollama chat: Ollama's defaults", "[serve]") {
  absl::StatusOr<OllamaRequest> r = Chat(ChatWith(""));
  REQUIRE(r.ok());
  CHECK(r->generation.chat);
  CHECK(r->generation.stream);
  CHECK(r->generation.model == "tiny");
  CHECK(r->model_shown == "tiny");
  CHECK(!r->load_only);
  REQUIRE(r->generation.messages.size() == 1);
  CHECK(r->generation.messages[0].role == "user");
  CHECK(r->generation.messages[0].content == "hi");
  CHECK(!r->generation.max_tokens);
  CHECK(!r->generation.until_context);
  CHECK(!r->generation.sampling.seed);
  CHECK(r->generation.sampling.temperature == 1.0);
}

TEST_CASE("ollama chat: the options map onto the sampling fields", "[serve]") {
  absl::StatusOr<OllamaRequest> r = Chat(WithOptions(
      R"("temperature": 0.5, "top_p": 0.9, "top_k": 40, "min_p": 0.05, "seed": 42,
         "num_predict": 12, "stop": ["\n\n", "END"], "repeat_penalty": 1.1,
         "presence_penalty": 0.5, "frequency_penalty": -0.5, "num_ctx": 8192,
         "repeat_last_n": 64, "typical_p": 1, "mirostat": 0, "num_keep": 4,
         "penalize_newline": true)"));
  REQUIRE(r.ok());
  const SamplingParams& p = r->generation.sampling;
  CHECK(p.temperature == 0.5);
  CHECK(p.top_p == 0.9);
  CHECK(p.top_k == 40);
  CHECK(p.min_p == 0.05);
  CHECK(p.seed == 42u);
  CHECK(p.repeat_penalty == 1.1);
  CHECK(p.presence_penalty == 0.5);
  CHECK(p.frequency_penalty == -0.5);
  CHECK(r->generation.max_tokens == 12);
  CHECK(r->generation.stop == std::vector<std::string>{"\n\n", "END"});
}

TEST_CASE("ollama chat: Ollama's special values", "[serve]") {
  for (const char* n : {"-1", "-2"}) {
    absl::StatusOr<OllamaRequest> r = Chat(WithOptions(absl::StrCat(R"("num_predict": )", n)));
    REQUIRE(r.ok());
    CHECK(r->generation.until_context);
    CHECK(!r->generation.max_tokens);
  }
  absl::StatusOr<OllamaRequest> r = Chat(WithOptions(R"("seed": -1)"));
  REQUIRE(r.ok());
  CHECK(!r->generation.sampling.seed);
  r = Chat(ChatWith(R"(, "stream": false, "model": "tiny:latest")"));
  REQUIRE(r.ok());
  CHECK(!r->generation.stream);
  CHECK(r->generation.model == "tiny");
  CHECK(r->model_shown == "tiny:latest");
  for (const char* keep : {"\"5m\"", "300", "-1", "\"-1s\"", "\"1h30m\""}) {
    INFO(keep);
    CHECK(Chat(ChatWith(absl::StrCat(R"(, "keep_alive": )", keep))).ok());
  }
  CHECK(Chat(ChatWith(R"(, "format": "", "tools": [], "think": false, "options": null)")).ok());
}

TEST_CASE("ollama chat: no messages asks for the model to load", "[serve]") {
  for (const char* body : {R"({"model": "tiny"})", R"({"model": "tiny", "messages": []})",
                           R"({"model": "tiny", "messages": null})"}) {
    INFO(body);
    absl::StatusOr<OllamaRequest> r = Chat(body);
    REQUIRE(r.ok());
    CHECK(r->load_only);
  }
}

TEST_CASE("ollama chat: wrong types and ranges are refused naming the field", "[serve]") {
  const std::pair<const char*, const char*> cases[] = {
      {R"("temperature": "0.5")", "options.temperature"},
      {R"("temperature": 1e400)", ""},  // nlohmann refuses the overflow as JSON
      {R"("temperature": -0.1)", "options.temperature"},
      {R"("temperature": 3)", "options.temperature"},
      {R"("top_p": 0)", "options.top_p"},
      {R"("top_k": 1.5)", "options.top_k"},
      {R"("top_k": 18446744073709551615)", "options.top_k"},
      {R"("top_k": -1)", "options.top_k"},
      {R"("min_p": "NaN")", "options.min_p"},
      {R"("seed": "7")", "options.seed"},
      {R"("seed": 1.5)", "options.seed"},
      {R"("num_predict": 0)", "options.num_predict"},
      {R"("num_predict": -3)", "options.num_predict"},
      {R"("num_predict": 1e12)", "options.num_predict"},
      {R"("num_predict": 9223372036854775807)", "options.num_predict"},
      {R"("num_predict": "12")", "options.num_predict"},
      {R"("stop": [1])", "options.stop"},
      {R"("stop": [""])", "options.stop"},
      {R"("stop": ["a", "b", "c", "d", "e"])", "options.stop"},
      {R"("repeat_penalty": 0)", "options.repeat_penalty"},
      {R"("presence_penalty": 2.5)", "options.presence_penalty"},
      {R"("frequency_penalty": -Infinity)", ""},
  };
  for (const auto& [options, field] : cases) {
    INFO(options);
    const absl::Status s = Chat(WithOptions(options)).status();
    if (*field == '\0') {
      CHECK(s.code() == absl::StatusCode::kInvalidArgument);  // not JSON
    } else {
      CHECK(RefusesField(s, field));
    }
  }
  CHECK(RefusesField(Chat(ChatWith(R"(, "options": [1])")).status(), "options"));
  CHECK(RefusesField(Chat(ChatWith(R"(, "stream": "yes")")).status(), "stream"));
  CHECK(RefusesField(Chat(R"({"messages": []})").status(), "model"));
  CHECK(RefusesField(Chat(R"({"model": 7})").status(), "model"));
  CHECK(RefusesField(Chat(R"({"model": ""})").status(), "model"));
  CHECK(RefusesField(Chat(R"({"model": ":latest"})").status(), "model"));
  CHECK(RefusesField(Chat(R"({"model": "tiny", "messages": {"role": "user"}})").status(),
                     "messages"));
  CHECK(RefusesField(Chat(R"({"model": "tiny", "messages": [7]})").status(), "messages[0].role"));
  CHECK(RefusesField(
      Chat(R"({"model": "tiny", "messages": [{"role": "developer", "content": "x"}]})").status(),
      "messages[0].role"));
  CHECK(RefusesField(
      Chat(R"({"model": "tiny", "messages": [{"role": "user", "content": ["x"]}]})").status(),
      "messages[0].content"));
  CHECK(Chat("[1]").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(Chat("{").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(Chat("").status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("ollama chat: format json asks for one JSON object", "[serve]") {
  auto json = Chat(ChatWith(R"(, "format": "json")"));
  REQUIRE(json.ok());
  CHECK(json->generation.grammar == kJsonObjectGrammar);
  CHECK(json->generation.grammar_field == "format");
  auto plain = Chat(ChatWith(R"(, "format": "")"));
  REQUIRE(plain.ok());
  CHECK(plain->generation.grammar.empty());
  CHECK(RefusesField(Chat(ChatWith(R"(, "format": "yaml")")).status(), "format"));
}

TEST_CASE("ollama chat: format as a JSON schema asks for an answer that follows it", "[serve]") {
  auto schema = Chat(ChatWith(R"(, "format": {"type": "object", "required": ["a"]})"));
  REQUIRE(schema.ok());
  CHECK(schema->generation.grammar.empty());
  CHECK(schema->generation.json_schema == R"({"type":"object","required":["a"]})");
  CHECK(schema->generation.grammar_field == "format");
  std::string deep = "{}";
  for (int i = 0; i < kMaxSchemaDepth; ++i) deep = absl::StrCat(R"({"items": )", deep, "}");
  CHECK(RefusesField(Chat(ChatWith(absl::StrCat(R"(, "format": )", deep))).status(), "format"));
  CHECK(RefusesField(Chat(ChatWith(R"(, "format": ["json"])")).status(), "format"));
}

TEST_CASE("ollama chat: unimplemented fields are refused unless neutral", "[serve]") {
  const std::pair<const char*, const char*> body_cases[] = {
      {R"("format": 5)", "format"},
      {R"("tools": [{"type": "function"}])", "tools"},
      {R"("think": true)", "think"},
      {R"("think": "high")", "think"},
      {R"("logprobs": true)", "logprobs"},
      {R"("keep_alive": 0)", "keep_alive"},
      {R"("keep_alive": "0s")", "keep_alive"},
      {R"("keep_alive": "soon")", "keep_alive"},
      {R"("keep_alive": [])", "keep_alive"},
  };
  for (const auto& [extra, field] : body_cases) {
    INFO(extra);
    CHECK(RefusesField(Chat(ChatWith(absl::StrCat(", ", extra))).status(), field));
  }
  const std::pair<const char*, const char*> option_cases[] = {
      {R"("num_ctx": 2048)", "options.num_ctx"},
      {R"("num_ctx": "8192")", "options.num_ctx"},
      {R"("mirostat": 2)", "options.mirostat"},
      {R"("typical_p": 0.5)", "options.typical_p"},
      {R"("repeat_last_n": 256)", "options.repeat_last_n"},
      {R"("penalize_newline": false)", "options.penalize_newline"},
      {R"("num_gpu": 99)", "options.num_gpu"},
      {R"("num_thread": 8)", "options.num_thread"},
      {R"("use_mmap": false)", "options.use_mmap"},
      {R"("num_keep": "4")", "options.num_keep"},
      {R"("temprature": 0.5)", "options.temprature"},
  };
  for (const auto& [options, field] : option_cases) {
    INFO(options);
    CHECK(RefusesField(Chat(WithOptions(options)).status(), field));
  }
  const absl::Status unknown = Chat(WithOptions(R"("temprature": 0.5)")).status();
  CHECK(unknown.message().find("temperature") != absl::string_view::npos);
  // A long unknown name is not echoed whole.
  const std::string long_name(100000, 'x');
  const absl::Status huge = Chat(WithOptions(absl::StrCat("\"", long_name, "\": 1"))).status();
  CHECK(huge.code() == absl::StatusCode::kInvalidArgument);
  CHECK(huge.message().size() < 400);
  CHECK(RefusesField(Chat(R"({"model": "tiny", "messages": [{"role": "user", "content": "x",
                                                           "images": ["aGk="]}]})")
                         .status(),
                     "messages[0].images"));
  CHECK(RefusesField(Chat(R"({"model": "tiny", "messages": [{"role": "assistant", "content": "",
                                                           "tool_calls": [{}]}]})")
                         .status(),
                     "messages[0].tool_calls"));
  CHECK(Chat(R"({"model": "tiny", "messages": [{"role": "user", "content": "x", "images": []}]})")
            .ok());
}

TEST_CASE("ollama generate: prompt, system and raw", "[serve]") {
  absl::StatusOr<OllamaRequest> r =
      Generate(R"({"model": "tiny", "prompt": "Why?", "system": "Be brief.", "stream": false})");
  REQUIRE(r.ok());
  CHECK(r->generation.chat);
  CHECK(!r->generation.stream);
  REQUIRE(r->generation.messages.size() == 2);
  CHECK(r->generation.messages[0].role == "system");
  CHECK(r->generation.messages[0].content == "Be brief.");
  CHECK(r->generation.messages[1].role == "user");
  CHECK(r->generation.messages[1].content == "Why?");
  r = Generate(R"({"model": "tiny", "prompt": "The house", "raw": true})");
  REQUIRE(r.ok());
  CHECK(!r->generation.chat);
  CHECK(r->generation.prompt == "The house");
  CHECK(r->generation.messages.empty());
  for (const char* body : {R"({"model": "tiny"})", R"({"model": "tiny", "prompt": ""})",
                           R"({"model": "tiny", "prompt": null, "raw": true})"}) {
    INFO(body);
    r = Generate(body);
    REQUIRE(r.ok());
    CHECK(r->load_only);
  }
  r = Generate(R"({"model": "tiny", "system": "Be brief."})");
  REQUIRE(r.ok());
  CHECK(!r->load_only);
}

TEST_CASE("ollama generate: hostile fields are refused naming them", "[serve]") {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"model": "tiny", "prompt": 7})", "prompt"},
      {R"({"model": "tiny", "prompt": ["x"]})", "prompt"},
      {R"({"model": "tiny", "prompt": "x", "system": {}})", "system"},
      {R"({"model": "tiny", "prompt": "x", "raw": "true"})", "raw"},
      {R"({"model": "tiny", "prompt": "x", "raw": true, "system": "s"})", "system"},
      {R"({"model": "tiny", "prompt": "x", "images": ["aGk="]})", "images"},
      {R"({"model": "tiny", "prompt": "x", "template": "{{ .Prompt }}"})", "template"},
      {R"({"model": "tiny", "prompt": "x", "suffix": "end"})", "suffix"},
      {R"({"model": "tiny", "prompt": "x", "context": [1, 2, 3]})", "context"},
      {R"({"model": "tiny", "prompt": "x", "options": {"num_predict": true}})",
       "options.num_predict"},
  };
  for (const auto& [body, field] : cases) {
    INFO(body);
    CHECK(RefusesField(Generate(body).status(), field));
  }
}

TEST_CASE("ollama show: the model, or the older name", "[serve]") {
  CHECK(ParseOllamaShowRequest(R"({"model": "tiny:latest", "verbose": true})").value() == "tiny");
  CHECK(ParseOllamaShowRequest(R"({"name": "tiny"})").value() == "tiny");
  CHECK(RefusesField(ParseOllamaShowRequest("{}").status(), "model"));
  CHECK(RefusesField(ParseOllamaShowRequest(R"({"model": 7, "name": "tiny"})").status(), "model"));
  CHECK(RefusesField(ParseOllamaShowRequest(R"({"name": ""})").status(), "name"));
  CHECK(ParseOllamaShowRequest("[]").status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hearth::serve

#endif  // HEARTH_SERVE_FOUND
