// serve_request_fuzzer: what one HTTP call to hearth-serve carries, read by
// the server's own parsers (one target for all the readers keeps the CI fuzz
// stage's time in check). The input's first byte picks the reader:
//   'c' a /v1/chat/completions body       (the rest of the input)
//   'p' a /v1/completions body            (the rest)
//   'd' a /v1/hearth/documents call: its Content-Type on the first line,
//       its query string ("k=v&k=v") on the second, the body after
//   'h' header values, one per line: Authorization, X-Api-Key,
//       X-Hearth-Class, then the body's "model"
//   't' a /tokenize body and the same bytes as a /detokenize body
//   'o' a --cors_origins list on the first line, Origin header values
//       (one per line) after it
//   'a' an Ollama /api/chat body          (the rest)
//   'g' an Ollama /api/generate body      (the rest)
//   'e' a /v1/embeddings body             (the rest)
//   'm' an Ollama /api/embed body, and the same bytes as /api/embeddings
// (any other byte: the reader of byte % 8, in that order). Checks:
//   bodies     ParseChatRequest / ParseCompletionRequest answer a request or
//              InvalidArgument with a message, never throw; an accepted
//              request holds every documented limit, re-validates (written
//              back as JSON it parses to the same request), and the byte
//              bound before tokenisation refuses it exactly when its bytes
//              exceed MaxPromptBytes, saying that number;
//   documents  ParseDocumentRequest answers; an accepted one holds its
//              limits, a text body is kept byte for byte, a JSON one
//              re-validates; its plain text is tidy (no leading or trailing
//              whitespace, no run but " ", "\n", "\n\n"), never longer than
//              the input, and tidying it again changes nothing (text and
//              markdown); its chunks are non-empty, lose and add nothing but
//              whitespace, hold at most chunk_tokens words each, and cut
//              between UTF-8 characters;
//   headers    HouseholdDirectory::Authenticate answers a caller only for a
//              configured key that appears verbatim in what was presented
//              (for a Basic credential, in its base64-decoded "user:key"),
//              with that key's member and class; a refusal is
//              Unauthenticated with a message that quotes no key; every
//              configured key sent as "Bearer <key>", "Basic
//              base64(user:key)" or X-Api-Key is its member; ResolveClass
//              either applies the alias and the class
//              header or refuses with NotFound / InvalidArgument /
//              PermissionDenied;
//   Ollama     ParseOllamaChatRequest / ParseOllamaGenerateRequest (and
//              ParseOllamaShowRequest, on the same bytes) answer
//              or refuse with InvalidArgument and a message; an accepted
//              body holds the same limits as an OpenAI one, its model is
//              the one sent less a ":latest" tag, it is load_only exactly when it has
//              nothing to generate from, and written back as an Ollama
//              body it parses to the same request;
//   tokenize   ParseTokenizeRequest / ParseDetokenizeRequest answer or
//              refuse with InvalidArgument and a message; accepted ids lie
//              in [0, vocab) and number at most the bound; an accepted
//              body written back parses to the same request;
//   CORS       CorsPolicy::Parse accepts or refuses with InvalidArgument;
//              an allowed origin is echoed only for exactly one Origin
//              value that is well-formed and listed (case aside), never
//              "*", and is one of the configured origins; no CORS header
//              at all while CORS is off.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "document_request.h"
#include "embedding_request.h"
#include "document_text.h"
#include "household_config.h"
#include "household_directory.h"
#include "nlohmann/json.hpp"
#include "cors_policy.h"
#include "grammar_field.h"
#include "logit_bias_field.h"
#include "logprobs_field.h"
#include "ollama_request.h"
#include "openai_request.h"
#include "prompt_bound.h"
#include "tokenize_request.h"
#include "tests/fuzz/fuzz_check.h"

namespace hearth::serve::fuzz {
namespace {

using Json = nlohmann::json;
using hearth::fuzz::Note;
using hearth::fuzz::Require;

// The budget the byte bound is checked against: the tiny model's (its
// longest token is "</s>") in the tests' context.
constexpr int32_t kContext = 8192;
constexpr int32_t kMaxTokenBytes = 4;

void RequireRefusal(const absl::Status& s, absl::StatusCode code, absl::string_view what) {
  Require(s.code() == code, absl::StrCat(what, " refused with ", s.ToString(), "; expected ",
                                         absl::StatusCodeToString(code)));
  Require(!s.message().empty(), absl::StrCat(what, " refused without a message"));
}

// ---- Request bodies -------------------------------------------------------

// The model, stream flag and text of `r`, as both APIs spell them (the
// prompt of a chat: none).
Json TextJson(const GenerationRequest& r, const std::string& model) {
  Json j = {{"model", model}, {"stream", r.stream}};
  if (r.chat) {
    j["messages"] = Json::array();
    for (const ChatMessage& m : r.messages) {
      j["messages"].push_back({{"role", m.role}, {"content", m.content}});
    }
  } else {
    j["prompt"] = r.prompt;
  }
  return j;
}

// The sampling fields as OpenAI's body (top level) and Ollama's options
// name them.
Json SamplingJson(const SamplingParams& p) {
  Json j = {{"temperature", p.temperature}, {"top_p", p.top_p}, {"top_k", p.top_k},
            {"min_p", p.min_p}, {"repeat_penalty", p.repeat_penalty},
            {"presence_penalty", p.presence_penalty}, {"frequency_penalty", p.frequency_penalty}};
  if (p.seed) j["seed"] = *p.seed;
  return j;
}

Json ToJson(const GenerationRequest& r) {
  Json j = TextJson(r, r.model);
  if (r.max_tokens) j["max_tokens"] = *r.max_tokens;
  if (!r.stop.empty()) j["stop"] = r.stop;
  if (r.n != 1) j["n"] = r.n;
  if (r.include_usage) j["stream_options"] = {{"include_usage", true}};
  j.update(SamplingJson(r.sampling));
  if (!r.sampling.logit_bias.empty()) {
    j["logit_bias"] = Json::object();
    for (const TokenBias& b : r.sampling.logit_bias) j["logit_bias"][std::to_string(b.token)] = b.bias;
  }
  // A json_object grammar is written back as its response_format, any other
  // as the GBNF field; a schema as the field it came by.
  if (r.grammar_field == "response_format") {
    j["response_format"] = {{"type", "json_object"}};
  } else if (!r.grammar.empty()) {
    j["grammar"] = r.grammar;
  }
  if (!r.json_schema.empty()) {
    const Json schema = Json::parse(r.json_schema);
    if (r.grammar_field == "response_format.json_schema.schema") {
      j["response_format"] = {{"type", "json_schema"},
                              {"json_schema", {{"name", "x"}, {"schema", schema}}}};
    } else if (r.grammar_field == "response_format.schema") {
      j["response_format"] = {{"type", "json_object"}, {"schema", schema}};
    } else {
      j["json_schema"] = schema;
    }
  }
  if (r.logprobs && r.chat) {
    j["logprobs"] = true;
    j["top_logprobs"] = *r.logprobs;
  } else if (r.logprobs) {
    j["logprobs"] = *r.logprobs;
  }
  return j;
}

bool SameBias(const std::vector<TokenBias>& a, const std::vector<TokenBias>& b) {
  if (a.size() != b.size()) return false;
  for (const TokenBias& x : a) {
    bool found = false;
    for (const TokenBias& y : b) found = found || (x.token == y.token && x.bias == y.bias);
    if (!found) return false;
  }
  return true;
}

bool Same(const GenerationRequest& a, const GenerationRequest& b) {
  if (a.messages.size() != b.messages.size()) return false;
  for (size_t i = 0; i < a.messages.size(); ++i) {
    if (a.messages[i].role != b.messages[i].role ||
        a.messages[i].content != b.messages[i].content) {
      return false;
    }
  }
  return a.chat == b.chat && a.model == b.model && a.prompt == b.prompt && a.n == b.n &&
         a.max_tokens == b.max_tokens && a.stop == b.stop && a.stream == b.stream &&
         a.include_usage == b.include_usage && a.sampling.temperature == b.sampling.temperature &&
         a.sampling.top_p == b.sampling.top_p && a.sampling.seed == b.sampling.seed &&
         a.sampling.top_k == b.sampling.top_k && a.sampling.min_p == b.sampling.min_p &&
         a.sampling.repeat_penalty == b.sampling.repeat_penalty &&
         a.sampling.presence_penalty == b.sampling.presence_penalty &&
         a.sampling.frequency_penalty == b.sampling.frequency_penalty &&
         SameBias(a.sampling.logit_bias, b.sampling.logit_bias) && a.grammar == b.grammar &&
         a.grammar_field == b.grammar_field && a.logprobs == b.logprobs &&
         // Written back through nlohmann::json, a schema's keys come sorted.
         (a.json_schema.empty() ? b.json_schema.empty()
                                : Json::parse(a.json_schema) == Json::parse(b.json_schema));
}

void CheckSampling(const GenerationRequest& r);

void CheckLimits(const GenerationRequest& r, bool chat) {
  Require(r.chat == chat, "a request parsed as the other kind");
  Require(!r.model.empty(), "an accepted request without a model");
  if (chat) {
    Require(!r.messages.empty() && r.messages.size() <= kMaxMessages,
            absl::StrCat("an accepted chat with ", r.messages.size(), " messages"));
    for (const ChatMessage& m : r.messages) {
      Require(m.role == "system" || m.role == "user" || m.role == "assistant" || m.role == "tool",
              absl::StrCat("an accepted chat with the role \"", m.role, "\""));
    }
    Require(r.prompt.empty(), "a chat with a prompt");
  } else {
    Require(!r.prompt.empty() && r.messages.empty(), "a completion without its prompt");
  }
  CheckSampling(r);
}

// The limits every accepted request holds, whichever API it came by.
void CheckSampling(const GenerationRequest& r) {
  Require(!r.max_tokens || (*r.max_tokens >= 1 && *r.max_tokens <= (1 << 30)),
          "max_tokens out of [1, 2^30]");
  Require(r.sampling.temperature >= 0 && r.sampling.temperature <= 2,
          absl::StrCat("temperature ", r.sampling.temperature, " accepted"));
  Require(r.sampling.top_p > 0 && r.sampling.top_p <= 1,
          absl::StrCat("top_p ", r.sampling.top_p, " accepted"));
  // The ranges openai_request.cc documents; the sampler chain is built from
  // these without further checks.
  Require(r.sampling.top_k >= 0 && r.sampling.top_k <= (1 << 20),
          absl::StrCat("top_k ", r.sampling.top_k, " accepted"));
  Require(r.sampling.min_p >= 0 && r.sampling.min_p <= 1,
          absl::StrCat("min_p ", r.sampling.min_p, " accepted"));
  Require(r.sampling.repeat_penalty > 0 && r.sampling.repeat_penalty <= 10,
          absl::StrCat("repeat_penalty ", r.sampling.repeat_penalty, " accepted"));
  Require(r.sampling.presence_penalty >= -2 && r.sampling.presence_penalty <= 2 &&
              r.sampling.frequency_penalty >= -2 && r.sampling.frequency_penalty <= 2,
          "a penalty out of [-2, 2] accepted");
  Require(r.stop.size() <= kMaxStopStrings, "too many stop strings accepted");
  Require(r.n >= 1 && r.n <= kMaxChoices, "a choice count out of [1, 8] accepted");
  Require(r.sampling.logit_bias.size() <= kMaxLogitBiasEntries, "too many logit_bias entries");
  for (const TokenBias& b : r.sampling.logit_bias) {
    Require(b.token >= 0 && b.bias >= -100 && b.bias <= 100, "a logit_bias entry out of range");
  }
  Require(r.grammar.size() <= kMaxGrammarBytes, "an oversized grammar accepted");
  Require(r.json_schema.size() <= kMaxSchemaBytes, "an oversized schema accepted");
  Require(r.grammar.empty() || r.json_schema.empty(), "a grammar and a schema both accepted");
  Require((r.grammar.empty() && r.json_schema.empty()) == r.grammar_field.empty(),
          "a grammar or schema without its field, or a field without either");
  Require(!r.logprobs || (*r.logprobs >= 0 &&
                          *r.logprobs <= (r.chat ? kMaxChatTopLogprobs : kMaxCompletionLogprobs)),
          "a logprobs count out of range");
  for (const std::string& s : r.stop) {
    Require(!s.empty() && s.size() <= kMaxStopBytes, "a stop string out of 1..256 bytes");
  }
}

// The byte bound refuses exactly what its arithmetic says, and says it.
void CheckByteBound(const GenerationRequest& r) {
  int64_t bytes = static_cast<int64_t>(r.prompt.size());
  for (const ChatMessage& m : r.messages) bytes += static_cast<int64_t>(m.content.size());
  const PromptBudget budget{kContext, kMaxTokenBytes, r.max_tokens};
  const int64_t most = MaxPromptBytes(budget);
  const absl::Status s = CheckPromptBytes(bytes, budget);
  Require(s.ok() == (bytes <= most), absl::StrCat("the byte bound answered ", s.ToString(),
                                                 " for ", bytes, " bytes against ", most));
  if (!s.ok()) {
    Require(s.code() == absl::StatusCode::kOutOfRange, "the byte bound's refusal is not a 413");
    Require(absl::StrContains(s.message(), absl::StrCat("at most ", most, " bytes")),
            absl::StrCat("the byte bound's refusal does not state the limit: ", s.message()));
    Require(MinTokensForBytes(bytes, kMaxTokenBytes) + (r.max_tokens ? *r.max_tokens : 1) >
                kContext,
            "the byte bound refused a prompt that might fit");
  }
}

void FuzzBody(absl::string_view body, bool chat) {
  absl::StatusOr<GenerationRequest> r = chat ? ParseChatRequest(body) : ParseCompletionRequest(body);
  Note(chat ? "ParseChatRequest" : "ParseCompletionRequest", r.status());
  if (!r.ok()) {
    RequireRefusal(r.status(), absl::StatusCode::kInvalidArgument, "a body");
    return;
  }
  CheckLimits(*r, chat);
  CheckByteBound(*r);
  const std::string again = ToJson(*r).dump(-1, ' ', false, Json::error_handler_t::strict);
  absl::StatusOr<GenerationRequest> r2 = chat ? ParseChatRequest(again) : ParseCompletionRequest(again);
  Require(r2.ok(), absl::StrCat("an accepted request, written back, is refused: ",
                                r2.status().ToString(), "\n", again));
  Require(Same(*r, *r2), absl::StrCat("an accepted request, written back, reads otherwise: ", again));
}

// ---- Ollama's /api/chat and /api/generate ---------------------------------

// The request as Ollama's /api/chat body (generate's non-raw bodies are
// chats too) or raw /api/generate body.
Json ToOllamaJson(const OllamaRequest& o) {
  const GenerationRequest& r = o.generation;
  Json j = TextJson(r, o.model_shown);
  if (!r.chat) j["raw"] = true;
  Json options = SamplingJson(r.sampling);
  if (r.max_tokens) options["num_predict"] = *r.max_tokens;
  if (r.until_context) options["num_predict"] = -1;
  if (!r.stop.empty()) options["stop"] = r.stop;
  j["options"] = options;
  if (r.grammar_field == "format") {
    j["format"] = r.json_schema.empty() ? Json("json") : Json::parse(r.json_schema);
  }
  return j;
}

void FuzzOllama(absl::string_view body, bool chat) {
  absl::StatusOr<std::string> shown = ParseOllamaShowRequest(body);
  Note("ParseOllamaShowRequest", shown.status());
  if (!shown.ok()) {
    RequireRefusal(shown.status(), absl::StatusCode::kInvalidArgument, "an /api/show body");
  } else {
    Require(!shown->empty(), "/api/show accepted an empty model");
  }
  absl::StatusOr<OllamaRequest> o =
      chat ? ParseOllamaChatRequest(body, kContext) : ParseOllamaGenerateRequest(body, kContext);
  Note(chat ? "ParseOllamaChatRequest" : "ParseOllamaGenerateRequest", o.status());
  if (!o.ok()) {
    RequireRefusal(o.status(), absl::StatusCode::kInvalidArgument, "an Ollama body");
    return;
  }
  const GenerationRequest& r = o->generation;
  CheckSampling(r);
  Require(!(r.max_tokens && r.until_context), "num_predict read as both a count and unbounded");
  Require((r.grammar.empty() || r.grammar == kJsonObjectGrammar) &&
              (r.grammar_field.empty() || r.grammar_field == "format"),
          "an Ollama body read with a grammar other than format json's or format's schema");
  Require(!r.logprobs && r.sampling.logit_bias.empty(), "an Ollama body read with logprobs or bias");
  Require(!r.model.empty() &&
              (o->model_shown == r.model || o->model_shown == absl::StrCat(r.model, ":latest")),
          absl::StrCat("model \"", o->model_shown, "\" read as \"", r.model, "\""));
  Require(r.chat || chat == false, "an /api/chat body read as raw");
  Require(r.messages.size() <= kMaxMessages, "more messages accepted than the bound");
  Require(o->load_only == (r.messages.empty() && r.prompt.empty()),
          "load_only is not \"nothing to generate from\"");
  if (!o->load_only) CheckByteBound(r);
  const std::string again = ToOllamaJson(*o).dump(-1, ' ', false, Json::error_handler_t::strict);
  // A generate body written back is a chat (its system and prompt are
  // messages by now) unless raw.
  absl::StatusOr<OllamaRequest> o2 = r.chat ? ParseOllamaChatRequest(again, kContext)
                                            : ParseOllamaGenerateRequest(again, kContext);
  Require(o2.ok(), absl::StrCat("an accepted Ollama body, written back, is refused: ",
                                o2.status().ToString(), "\n", again));
  Require(o2->load_only == o->load_only && o2->model_shown == o->model_shown &&
              o2->generation.until_context == r.until_context && Same(r, o2->generation),
          absl::StrCat("an accepted Ollama body, written back, reads otherwise: ", again));
}

// ---- Documents -------------------------------------------------------------

bool IsUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

std::string WithoutWhitespace(absl::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != ' ' && c != '\n') out += c;
  }
  return out;
}

int64_t Words(absl::string_view s) {
  return static_cast<int64_t>(
      std::vector<absl::string_view>(absl::StrSplit(s, absl::ByAnyChar(" \n"), absl::SkipEmpty()))
          .size());
}

void CheckTidy(absl::string_view plain, absl::string_view input) {
  Require(plain.size() <= input.size(),
          absl::StrCat("plain text of ", plain.size(), " bytes from ", input.size()));
  if (plain.empty()) return;
  const auto space = [](char c) { return c == ' ' || c == '\n'; };
  Require(!space(plain.front()) && !space(plain.back()), "plain text starts or ends with whitespace");
  for (char c : plain) {
    Require(c != '\t' && c != '\r' && c != '\f' && c != '\v', "a tab or CR left in plain text");
  }
  Require(!absl::StrContains(plain, "  ") && !absl::StrContains(plain, " \n") &&
              !absl::StrContains(plain, "\n ") && !absl::StrContains(plain, "\n\n\n"),
          "a whitespace run in plain text other than \" \", \"\\n\" or \"\\n\\n\"");
}

void CheckChunks(absl::string_view plain, int32_t max) {
  // Words: what the unit tests count; a cut inside a word never happens.
  const std::vector<std::string> by_words = SplitIntoChunks(plain, max, Words);
  for (const std::string& c : by_words) {
    Require(!c.empty(), "an empty chunk");
    Require(Words(c) <= max, absl::StrCat("a chunk of ", Words(c), " words for ", max));
  }
  Require(WithoutWhitespace(absl::StrJoin(by_words, "")) == WithoutWhitespace(plain),
          "chunks (words) lost or added text");
  // Bytes: long words are cut, between UTF-8 characters.
  const auto bytes = [](absl::string_view s) { return static_cast<int64_t>(s.size()); };
  const std::vector<std::string> by_bytes = SplitIntoChunks(plain, max, bytes);
  const bool utf8 = IsUtf8(plain);
  for (const std::string& c : by_bytes) {
    Require(!c.empty(), "an empty chunk");
    Require(!utf8 || IsUtf8(c), "a chunk cut inside a UTF-8 character");
  }
  Require(WithoutWhitespace(absl::StrJoin(by_bytes, "")) == WithoutWhitespace(plain),
          "chunks (bytes) lost or added text");
}

DocumentRequest Reparsed(const DocumentRequest& r) {
  Json j = {{"text", r.text}, {"model", r.model}, {"chunk_tokens", r.chunk_tokens},
            {"max_tokens", r.max_tokens}, {"instruction", r.instruction},
            {"temperature", r.sampling.temperature}};
  j["format"] = r.format == DocumentFormat::kHtml       ? "html"
                : r.format == DocumentFormat::kMarkdown ? "markdown"
                                                        : "text";
  if (r.sampling.seed) j["seed"] = *r.sampling.seed;
  absl::StatusOr<DocumentRequest> again =
      ParseDocumentRequest("application/json", j.dump(-1, ' ', false, Json::error_handler_t::replace), {});
  Require(again.ok(), absl::StrCat("an accepted document, written back, is refused: ",
                                   again.status().ToString()));
  return *again;
}

void FuzzDocument(absl::string_view rest) {
  const size_t first = rest.find('\n');
  const absl::string_view content_type = rest.substr(0, std::min(first, rest.size()));
  rest = first == absl::string_view::npos ? absl::string_view() : rest.substr(first + 1);
  const size_t second = rest.find('\n');
  const absl::string_view query_text = rest.substr(0, std::min(second, rest.size()));
  const absl::string_view body =
      second == absl::string_view::npos ? absl::string_view() : rest.substr(second + 1);
  QueryParams query;
  for (absl::string_view pair : absl::StrSplit(query_text, '&', absl::SkipEmpty())) {
    std::vector<std::string> kv = absl::StrSplit(pair, absl::MaxSplits('=', 1));
    query.emplace_back(kv[0], kv.size() > 1 ? kv[1] : "");
  }
  absl::StatusOr<DocumentRequest> r = ParseDocumentRequest(content_type, body, query);
  Note("ParseDocumentRequest", r.status());
  if (!r.ok()) {
    RequireRefusal(r.status(), absl::StatusCode::kInvalidArgument, "a document");
    return;
  }
  Require(r->chunk_tokens >= kMinChunkTokens && r->chunk_tokens <= kMaxChunkTokens,
          "chunk_tokens out of range");
  Require(r->max_tokens >= 1 && r->max_tokens <= kMaxSummaryTokens, "max_tokens out of range");
  Require(r->instruction.size() <= kMaxInstructionBytes && r->model.size() <= 256,
          "instruction or model over its limit");
  Require(r->sampling.temperature >= 0 && r->sampling.temperature <= 2, "temperature out of [0, 2]");
  Require(!absl::StripAsciiWhitespace(r->text).empty(), "a document with no text accepted");
  std::string type = absl::AsciiStrToLower(content_type);
  if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(type), "text/")) {
    Require(r->text == body, "a text body not kept byte for byte");
  } else {
    const DocumentRequest again = Reparsed(*r);
    Require(again.text == r->text && again.model == r->model && again.format == r->format &&
                again.chunk_tokens == r->chunk_tokens && again.max_tokens == r->max_tokens &&
                again.instruction == r->instruction &&
                again.sampling.temperature == r->sampling.temperature &&
                again.sampling.seed == r->sampling.seed,
            "an accepted document, written back, reads otherwise");
  }
  const std::string plain = PlainDocumentText(r->format, r->text);
  CheckTidy(plain, r->text);
  if (r->format != DocumentFormat::kHtml) {
    Require(PlainDocumentText(r->format, plain) == plain, "tidying plain text changed it");
  }
  // Small chunks exercise the cuts; chunk_tokens itself is checked above.
  CheckChunks(plain, 1 + r->chunk_tokens % 24);
}

// ---- Header values ---------------------------------------------------------

// Keys long and odd enough that no message quotes one by chance.
constexpr char kHousehold[] = R"(
[[member]]
name = "ana"
[[member]]
name = "ben"
[[key]]
key = "sk-ana-laptop-7f3a90"
member = "ana"
default_class = "chat"
[[key]]
key = "sk-ben-phone-91cc2e"
member = "ben"
default_class = "voice"
[[key]]
key = "sk-ben-agent-b3d0c4"
member = "ben"
default_class = "agent"
[[alias]]
model = "tiny-voice"
class = "voice"
)";
constexpr char kModel[] = "tiny";

struct Household {
  HouseholdConfig config;
  std::vector<std::string> classes;
  HouseholdDirectory directory;
};

const Household& TheHousehold() {
  static const Household* h = [] {
    absl::StatusOr<HouseholdConfig> config = ParseHouseholdToml(kHousehold, "fuzz-household.toml");
    Require(config.ok(), absl::StrCat("the fuzzer's household: ", config.status().ToString()));
    std::vector<std::string> classes;
    for (const WorkClassConfig& c : config->classes) classes.push_back(c.name);
    return new Household{*config, classes, HouseholdDirectory(*config, kModel)};
  }();
  return *h;
}

// The header parser under test: the one line to change when the
// Authorization reader is replaced.
absl::StatusOr<Caller> Authenticate(const HouseholdDirectory& directory,
                                    absl::string_view authorization, absl::string_view api_key) {
  return directory.Authenticate(authorization, api_key);
}

void CheckCaller(const Household& h, const Caller& caller, const ApiKeyConfig& key) {
  Require(caller.member == key.member, absl::StrCat("key ", key.key, " is member ", caller.member));
  Require(caller.user.value() < h.config.members.size() &&
              h.config.members[caller.user.value()].name == key.member,
          "a caller's user id is not its member's");
  Require(caller.work_class.value() < h.classes.size() &&
              h.classes[caller.work_class.value()] == key.default_class,
          "a caller's class is not its key's default");
}

// What an Authorization value carries in the clear: the value itself and,
// for the Basic scheme, its token base64-decoded ("user:key").
std::vector<std::string> PresentedTexts(absl::string_view authorization) {
  std::vector<std::string> out = {std::string(authorization)};
  absl::string_view v = absl::StripAsciiWhitespace(authorization);
  if (v.size() > 6 && absl::EqualsIgnoreCase(v.substr(0, 5), "basic") &&
      (v[5] == ' ' || v[5] == '\t')) {
    std::string decoded;
    if (absl::Base64Unescape(absl::StripAsciiWhitespace(v.substr(6)), &decoded)) {
      out.push_back(std::move(decoded));
    }
  }
  return out;
}

void FuzzHeaders(absl::string_view rest) {
  const Household& h = TheHousehold();
  std::vector<absl::string_view> f = absl::StrSplit(rest, absl::MaxSplits('\n', 3));
  f.resize(4);
  const absl::string_view authorization = f[0], api_key = f[1], class_header = f[2], model = f[3];
  absl::StatusOr<Caller> caller = Authenticate(h.directory, authorization, api_key);
  Note("Authenticate", caller.status());
  if (!caller.ok()) {
    RequireRefusal(caller.status(), absl::StatusCode::kUnauthenticated, "a credential");
    for (const ApiKeyConfig& k : h.config.keys) {
      Require(!absl::StrContains(caller.status().message(), k.key), "a refusal quotes a key");
    }
  } else {
    const ApiKeyConfig* used = nullptr;
    const std::vector<std::string> presented = PresentedTexts(authorization);
    for (const ApiKeyConfig& k : h.config.keys) {
      const bool shown = absl::StrContains(api_key, k.key) ||
                         std::any_of(presented.begin(), presented.end(),
                                     [&k](const std::string& p) { return absl::StrContains(p, k.key); });
      if (k.member == caller->member && k.default_class == h.classes[caller->work_class.value()] &&
          shown) {
        used = &k;
      }
    }
    Require(used != nullptr, "a caller authenticated without presenting a configured key");
    CheckCaller(h, *caller, *used);
    Caller resolved = *caller;
    const absl::Status s = h.directory.ResolveClass(model, class_header, resolved);
    Note("ResolveClass", s);
    const bool alias = model == "tiny-voice";
    if (s.ok()) {
      Require(model == kModel || alias, "ResolveClass accepted an unknown model");
      const std::string& got = h.classes[resolved.work_class.value()];
      Require(class_header.empty() ? got == (alias ? "voice" : used->default_class)
                                   : got == class_header,
              absl::StrCat("ResolveClass gave class ", got));
      Require(resolved.user == caller->user, "ResolveClass changed the member");
    } else {
      Require(s.code() == absl::StatusCode::kNotFound || s.code() == absl::StatusCode::kInvalidArgument ||
                  s.code() == absl::StatusCode::kPermissionDenied,
              absl::StrCat("ResolveClass refused with ", s.ToString()));
      Require(!s.message().empty(), "ResolveClass refused without a message");
      Require(s.code() != absl::StatusCode::kNotFound || (model != kModel && !alias),
              "ResolveClass did not find the served model");
    }
  }
  // Every configured key works as its header spells it.
  const ApiKeyConfig& key = h.config.keys[rest.size() % h.config.keys.size()];
  for (const auto& [auth, x_api] :
       {std::pair{absl::StrCat("Bearer ", key.key), std::string()},
        std::pair{absl::StrCat("Basic ", absl::Base64Escape(absl::StrCat("anyone:", key.key))),
                  std::string()},
        std::pair{std::string(), key.key}}) {
    absl::StatusOr<Caller> c = Authenticate(h.directory, auth, x_api);
    Require(c.ok(), absl::StrCat("a configured key is refused: ", c.status().ToString()));
    CheckCaller(h, *c, key);
  }
}

// ---- /tokenize and /detokenize --------------------------------------------

constexpr int32_t kVocab = 32000;
constexpr size_t kMaxDetokenize = 64;

void FuzzTokenize(absl::string_view body) {
  absl::StatusOr<TokenizeRequest> t = ParseTokenizeRequest(body);
  Note("ParseTokenizeRequest", t.status());
  if (!t.ok()) {
    RequireRefusal(t.status(), absl::StatusCode::kInvalidArgument, "a tokenize body");
  } else {
    const Json j = {{"content", t->content},
                    {"add_special", t->add_special},
                    {"parse_special", t->parse_special},
                    {"with_pieces", t->with_pieces}};
    absl::StatusOr<TokenizeRequest> again =
        ParseTokenizeRequest(j.dump(-1, ' ', false, Json::error_handler_t::replace));
    Require(again.ok(), "an accepted tokenize body, written back, is refused");
    // Invalid UTF-8 in content is replaced when written back, so compare
    // the flags always and the text only when it survived the dump.
    Require(again->add_special == t->add_special && again->parse_special == t->parse_special &&
                again->with_pieces == t->with_pieces,
            "an accepted tokenize body, written back, reads otherwise");
  }
  absl::StatusOr<DetokenizeRequest> d = ParseDetokenizeRequest(body, kVocab, kMaxDetokenize);
  Note("ParseDetokenizeRequest", d.status());
  if (!d.ok()) {
    RequireRefusal(d.status(), absl::StatusCode::kInvalidArgument, "a detokenize body");
    return;
  }
  Require(d->tokens.size() <= kMaxDetokenize, "more ids accepted than the bound");
  for (int32_t id : d->tokens) {
    Require(id >= 0 && id < kVocab, absl::StrCat("token id ", id, " accepted"));
  }
  absl::StatusOr<DetokenizeRequest> again =
      ParseDetokenizeRequest(Json{{"tokens", d->tokens}}.dump(), kVocab, kMaxDetokenize);
  Require(again.ok() && again->tokens == d->tokens,
          "an accepted detokenize body, written back, reads otherwise");
}

// ---- embeddings ------------------------------------------------------------

// OpenAI's body (`ollama` false) or Ollama's /api/embed and /api/embeddings:
// an accepted body holds 1 to kMaxEmbeddingInputs inputs, none empty, ids
// non-negative, and reads the same once written back.
void FuzzEmbeddings(absl::string_view body, bool ollama) {
  absl::StatusOr<EmbeddingRequest> r =
      ollama ? ParseOllamaEmbedRequest(body, kContext) : ParseEmbeddingRequest(body);
  Note(ollama ? "ParseOllamaEmbedRequest" : "ParseEmbeddingRequest", r.status());
  if (ollama) {
    absl::StatusOr<EmbeddingRequest> legacy = ParseOllamaEmbeddingsRequest(body, kContext);
    Note("ParseOllamaEmbeddingsRequest", legacy.status());
    if (!legacy.ok()) {
      RequireRefusal(legacy.status(), absl::StatusCode::kInvalidArgument, "an /api/embeddings body");
    } else {
      Require(legacy->texts.size() == 1 && !legacy->texts[0].empty(),
              "/api/embeddings accepted other than one text");
    }
  }
  if (!r.ok()) {
    RequireRefusal(r.status(), absl::StatusCode::kInvalidArgument, "an embeddings body");
    return;
  }
  Require(r->size() >= 1 && r->size() <= kMaxEmbeddingInputs, "an input count out of bounds");
  Require(r->texts.empty() != r->token_inputs.empty(), "texts and token ids mixed");
  for (const std::string& t : r->texts) Require(!t.empty(), "an empty text accepted");
  for (const std::vector<int32_t>& ids : r->token_inputs) {
    Require(!ids.empty(), "an empty token list accepted");
    for (int32_t id : ids) Require(id >= 0, "a negative token id accepted");
  }
  Require(!r->dimensions || *r->dimensions >= 1, "dimensions below 1 accepted");
  if (ollama) return;
  Json j = {{"model", r->model}, {"encoding_format", r->base64 ? "base64" : "float"}};
  if (!r->texts.empty()) {
    j["input"] = r->texts;
  } else {
    j["input"] = r->token_inputs;
  }
  if (r->dimensions) j["dimensions"] = *r->dimensions;
  const std::string again_text = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  absl::StatusOr<EmbeddingRequest> again = ParseEmbeddingRequest(again_text);
  Require(again.ok() && again->size() == r->size() && again->base64 == r->base64 &&
              again->token_inputs == r->token_inputs,
          "an accepted embeddings body, written back, reads otherwise");
}

// ---- CORS ------------------------------------------------------------------

void FuzzCors(absl::string_view rest) {
  const size_t first = rest.find('\n');
  const absl::string_view list = rest.substr(0, std::min(first, rest.size()));
  std::vector<absl::string_view> origins;
  if (first != absl::string_view::npos) {
    origins = absl::StrSplit(rest.substr(first + 1), '\n');
  }
  for (const bool keys : {true, false}) {
    absl::StatusOr<CorsPolicy> cors = CorsPolicy::Parse(list, keys);
    Note("CorsPolicy::Parse", cors.status());
    if (!cors.ok()) {
      RequireRefusal(cors.status(), absl::StatusCode::kInvalidArgument, "an origin list");
      continue;
    }
    const std::optional<std::string> allowed = cors->AllowedOrigin(origins);
    const CorsPolicy::Headers headers = cors->ResponseHeaders(origins);
    if (!cors->enabled()) {
      Require(!allowed.has_value() && headers.empty(), "CORS headers while CORS is off");
      continue;
    }
    if (!allowed.has_value()) continue;
    Require(origins.size() == 1, "an origin allowed for several Origin values");
    Require(*allowed != "*" && IsOriginSyntax(*allowed), "an allowed origin that is no origin");
    Require(absl::EqualsIgnoreCase(*allowed, absl::StripAsciiWhitespace(origins[0])),
            "the allowed origin is not the one the request sent");
    if (keys) {
      bool listed = false;
      for (absl::string_view entry : absl::StrSplit(list, ',')) {
        listed = listed ||
                 absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(entry), *allowed);
      }
      Require(listed, "an origin allowed that the list does not name");
    }
  }
}

}  // namespace
}  // namespace hearth::serve::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const absl::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  namespace f = hearth::serve::fuzz;
  switch (data[0]) {
    case 'c': f::FuzzBody(rest, /*chat=*/true); break;
    case 'p': f::FuzzBody(rest, /*chat=*/false); break;
    case 'd': f::FuzzDocument(rest); break;
    case 'h': f::FuzzHeaders(rest); break;
    case 't': f::FuzzTokenize(rest); break;
    case 'o': f::FuzzCors(rest); break;
    case 'a': f::FuzzOllama(rest, /*chat=*/true); break;
    case 'g': f::FuzzOllama(rest, /*chat=*/false); break;
    case 'e': f::FuzzEmbeddings(rest, /*ollama=*/false); break;
    case 'm': f::FuzzEmbeddings(rest, /*ollama=*/true); break;
    default:
      switch (data[0] % 8) {
        case 0: f::FuzzBody(rest, true); break;
        case 1: f::FuzzBody(rest, false); break;
        case 2: f::FuzzDocument(rest); break;
        case 3: f::FuzzHeaders(rest); break;
        case 4: f::FuzzTokenize(rest); break;
        case 5: f::FuzzCors(rest); break;
        case 6: f::FuzzOllama(rest, true); break;
        default: f::FuzzOllama(rest, false); break;
      }
  }
  return 0;
}
