#include "ollama_request.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "grammar_field.h"
#include "json_fields.h"
#include "nlohmann/json.hpp"
#include "sampling_fields.h"
#include "unsupported_fields.h"

namespace hearth::serve {
namespace {

using Json = nlohmann::json;
using namespace neutral;  // NOLINT: the tables below read as lists of values.

bool IsTrue(const Json& v) { return v.is_boolean() && v.get<bool>(); }
bool IsOne(const Json& v) { return v.is_number() && v.get<double>() == 1; }
bool IsInteger(const Json& v) { return v.is_number_integer(); }
bool IsMirostatTau(const Json& v) { return v.is_number() && v.get<double>() == 5.0; }
bool IsMirostatEta(const Json& v) { return v.is_number() && v.get<double>() == 0.1; }

constexpr const char* kLoadOption =
    "is a model-load setting, fixed when this server starts (its flags), not per request";

// Ollama's fields of either body that ask for what this server does not do.
constexpr UnsupportedField kBodyFields[] = {
    {"tools", IsEmpty, "is not supported (an empty array or absent)"},
    {"think", IsFalse,
     "must be false or absent: thinking is not asked for, nor separated from the answer"},
    {"logprobs", IsFalse, "is not supported (false or absent)"},
    {"top_logprobs", IsZero, "is not supported (0 or absent)"},
    // /api/generate's.
    {"images", IsEmpty, "is not supported (an empty array or absent): text only"},
    {"template", IsEmpty, "is not supported (\"\" or absent): the model's own template is used"},
    {"suffix", IsEmpty, "is not supported (\"\" or absent): no fill-in-the-middle"},
    {"context", IsEmpty,
     "is not supported (an empty array or absent): send the conversation to /api/chat"},
};

// A message's fields beyond role and content.
constexpr UnsupportedField kMessageFields[] = {
    {"images", IsEmpty, "is not supported (an empty array or absent): text only"},
    {"tool_calls", IsEmpty, "is not supported (an empty array or absent): no tools"},
    {"tool_name", IsEmpty, "is not supported (\"\" or absent): no tools"},
    {"thinking", IsEmpty, "is not supported (\"\" or absent)"},
};

static_assert(kPenaltyLastN == 64, "the repeat_last_n message below says 64");

// Ollama's options this server does not implement; each neutral value
// changes nothing here. (num_ctx, which depends on the server, is checked
// apart.)
constexpr UnsupportedField kOptionFields[] = {
    {"repeat_last_n", IsPenaltyWindow,
     "must be 64 or absent: penalties look at the answer's last 64 tokens"},
    {"typical_p", IsOne, "is not supported (1 or absent)"},
    {"tfs_z", IsOne, "is not supported (1 or absent)"},
    {"mirostat", IsZero, "is not supported (0 or absent)"},
    {"mirostat_tau", IsMirostatTau, "is not supported (5, Ollama's default, or absent)"},
    {"mirostat_eta", IsMirostatEta, "is not supported (0.1, Ollama's default, or absent)"},
    // The penalties treat a newline as any other token.
    {"penalize_newline", IsTrue, "must be true or absent: newlines are penalised like any token"},
    // Only matters when a context fills and is shifted; here a prompt that
    // does not fit is refused and an answer stops at the context's end.
    {"num_keep", IsInteger, "must be an integer or absent (no context is ever shifted here)"},
    {"num_batch", OnlyAbsent, kLoadOption},
    {"num_gpu", OnlyAbsent, kLoadOption},
    {"main_gpu", OnlyAbsent, kLoadOption},
    {"num_thread", OnlyAbsent, kLoadOption},
    {"use_mmap", OnlyAbsent, kLoadOption},
    {"use_mlock", OnlyAbsent, kLoadOption},
    {"low_vram", OnlyAbsent, kLoadOption},
    {"f16_kv", OnlyAbsent, kLoadOption},
    {"logits_all", OnlyAbsent, kLoadOption},
    {"vocab_only", OnlyAbsent, kLoadOption},
    {"numa", OnlyAbsent, kLoadOption},
};

// The options read into the request (ReadOptions).
constexpr const char* kImplementedOptions[] = {
    "temperature", "top_p",          "top_k",          "min_p",           "seed",
    "num_predict", "stop",           "repeat_penalty", "presence_penalty", "frequency_penalty",
    "num_ctx"};

bool Known(const std::string& name) {
  for (const char* o : kImplementedOptions) {
    if (name == o) return true;
  }
  for (const UnsupportedField& u : kOptionFields) {
    if (name == u.field) return true;
  }
  return false;
}

// An option name repeated in an error: at most this many bytes of it.
constexpr size_t kMaxEchoedName = 64;

absl::Status ReadNumPredict(const Json& options, GenerationRequest& r) {
  auto it = options.find("num_predict");
  if (it == options.end() || it->is_null()) return absl::OkStatus();
  const bool integer = it->is_number_integer();
  const int64_t n = integer ? it->get<int64_t>() : 0;
  if (integer && (n == -1 || n == -2)) {
    r.until_context = true;
  } else if (integer && n >= 1 && n <= (1 << 30)) {
    r.max_tokens = static_cast<int32_t>(n);
  } else {
    return BadField("options.num_predict",
                    "must be an integer in [1, 2^30], or -1 or -2 (as many as the context leaves)");
  }
  return absl::OkStatus();
}

absl::Status ReadOptions(const Json& body, int32_t context_length, GenerationRequest& r) {
  auto it = body.find("options");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object()) return BadField("options", "must be an object");
  const Json& options = *it;
  for (const auto& [name, value] : options.items()) {
    if (Known(name)) continue;
    const std::string shown =
        name.size() <= kMaxEchoedName ? name : absl::StrCat(name.substr(0, kMaxEchoedName), "...");
    return BadField(absl::StrCat("options.", shown),
                    absl::StrCat("is not an option this server knows; it implements ",
                                 absl::StrJoin(kImplementedOptions, ", ")));
  }
  if (absl::Status s = RejectFields(options, kOptionFields, "options."); !s.ok()) return s;
  if (auto ctx = options.find("num_ctx"); ctx != options.end() && !ctx->is_null() &&
                                          !(ctx->is_number_integer() &&
                                            ctx->get<int64_t>() == context_length)) {
    return BadField("options.num_ctx",
                    absl::StrCat("must be ", context_length,
                                 " (this server's context, fixed when it starts) or absent"));
  }
  if (absl::Status s = ReadSamplingFields(options, "options.", r.sampling); !s.ok()) return s;
  // Ollama's seed -1 (any negative) is its default: a seed drawn per request.
  if (auto seed = options.find("seed");
      seed != options.end() && seed->is_number_integer() && seed->get<int64_t>() < 0) {
    r.sampling.seed.reset();
  }
  if (absl::Status s = ReadNumPredict(options, r); !s.ok()) return s;
  return ReadStopField(options, "options.", r.stop);
}

// keep_alive: how long Ollama keeps the model loaded after the call. This
// server keeps its one model for its whole life, which any duration (or a
// negative one, Ollama's "forever") allows; 0 asks for an unload it does
// not do.
absl::Status ReadKeepAlive(const Json& body) {
  auto it = body.find("keep_alive");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  absl::Duration d;
  const bool valid = it->is_number() ? std::isfinite(it->get<double>())
                     : it->is_string()
                         ? absl::ParseDuration(it->get_ref<const std::string&>(), &d)
                         : false;
  if (!valid) {
    return BadField("keep_alive",
                    "must be a number of seconds or a duration such as \"5m\" (negative: forever)");
  }
  const bool zero = it->is_number() ? it->get<double>() == 0 : d == absl::ZeroDuration();
  if (zero) {
    return BadField("keep_alive",
                    "must not be 0: this server keeps its one model loaded (any other duration, "
                    "or absent)");
  }
  return absl::OkStatus();
}

// format: "json", one JSON object (as response_format json_object); an
// object, a JSON schema (as response_format json_schema: grammar_field.h).
absl::Status ReadFormat(const Json& body, GenerationRequest& r) {
  auto it = body.find("format");
  if (it == body.end() || it->is_null() || *it == "") return absl::OkStatus();
  if (it->is_object()) return ReadJsonSchema(*it, "format", r);
  if (*it != "json") {
    return BadField("format", "must be \"json\", a JSON schema (an object), \"\" or absent");
  }
  r.grammar = kJsonObjectGrammar;
  r.grammar_field = "format";
  return absl::OkStatus();
}

// The model `field` names, without a ":latest" tag.
absl::StatusOr<std::string> ReadModel(const Json& j, const char* field) {
  auto model = j.find(field);
  absl::string_view bare = model != j.end() && model->is_string()
                               ? absl::string_view(model->get_ref<const std::string&>())
                               : absl::string_view();
  absl::ConsumeSuffix(&bare, ":latest");
  if (bare.empty()) {
    return BadField(field, "is required: a non-empty name (GET /api/tags lists them)");
  }
  return std::string(bare);
}

// model, stream, options and the fields every body may carry.
absl::Status ReadCommon(const Json& j, int32_t context_length, OllamaRequest& r) {
  absl::StatusOr<std::string> bare = ReadModel(j, "model");
  if (!bare.ok()) return bare.status();
  r.model_shown = j["model"].get<std::string>();
  r.generation.model = *std::move(bare);
  if (absl::Status s = RejectFields(j, kBodyFields); !s.ok()) return s;
  if (absl::Status s = ReadKeepAlive(j); !s.ok()) return s;
  if (absl::Status s = ReadFormat(j, r.generation); !s.ok()) return s;
  r.generation.stream = true;
  if (auto it = j.find("stream"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return BadField("stream", "must be true or false");
    r.generation.stream = it->get<bool>();
  }
  return ReadOptions(j, context_length, r.generation);
}

// A string field, "" when absent or null.
absl::StatusOr<std::string> ReadText(const Json& j, const std::string& field) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::string();
  if (!it->is_string()) return BadField(field, "must be a string");
  return it->get<std::string>();
}

absl::Status ReadMessages(const Json& j, GenerationRequest& r) {
  auto it = j.find("messages");
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_array() || it->size() > kMaxMessages) {
    return BadField("messages", absl::StrCat("must be an array of at most ", kMaxMessages,
                                             " {role, content} objects"));
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& m = (*it)[i];
    const std::string at = absl::StrCat("messages[", i, "]");
    auto role = m.is_object() ? m.find("role") : m.end();
    static constexpr absl::string_view kRoles[] = {"system", "user", "assistant", "tool"};
    if (!m.is_object() || role == m.end() || !role->is_string() ||
        std::find(std::begin(kRoles), std::end(kRoles), role->get<std::string>()) ==
            std::end(kRoles)) {
      return BadField(absl::StrCat(at, ".role"), "must be one of system, user, assistant, tool");
    }
    if (absl::Status s = RejectFields(m, kMessageFields, absl::StrCat(at, ".")); !s.ok()) return s;
    absl::StatusOr<std::string> content = ReadText(m, "content");
    if (!content.ok()) return BadField(absl::StrCat(at, ".content"), "must be a string");
    r.messages.push_back({role->get<std::string>(), *std::move(content)});
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<OllamaRequest> ParseOllamaChatRequest(absl::string_view body,
                                                     int32_t context_length) {
  absl::StatusOr<Json> j = ParseJsonObject(body);
  if (!j.ok()) return j.status();
  OllamaRequest r;
  r.generation.chat = true;
  if (absl::Status s = ReadCommon(*j, context_length, r); !s.ok()) return s;
  KeepSchemaOrder(body, r.generation);
  if (absl::Status s = ReadMessages(*j, r.generation); !s.ok()) return s;
  r.load_only = r.generation.messages.empty();
  return r;
}

absl::StatusOr<OllamaRequest> ParseOllamaGenerateRequest(absl::string_view body,
                                                         int32_t context_length) {
  absl::StatusOr<Json> j = ParseJsonObject(body);
  if (!j.ok()) return j.status();
  OllamaRequest r;
  if (absl::Status s = ReadCommon(*j, context_length, r); !s.ok()) return s;
  KeepSchemaOrder(body, r.generation);
  absl::StatusOr<std::string> prompt = ReadText(*j, "prompt");
  if (!prompt.ok()) return prompt.status();
  absl::StatusOr<std::string> system = ReadText(*j, "system");
  if (!system.ok()) return system.status();
  bool raw = false;
  if (auto it = j->find("raw"); it != j->end() && !it->is_null()) {
    if (!it->is_boolean()) return BadField("raw", "must be true or false");
    raw = it->get<bool>();
  }
  if (raw && !system->empty()) {
    return BadField("system", "must be absent with raw: true, which sends the prompt as is");
  }
  r.load_only = prompt->empty() && system->empty();
  GenerationRequest& g = r.generation;
  g.chat = !raw;
  if (raw) {
    g.prompt = *std::move(prompt);
    return r;
  }
  if (!system->empty()) g.messages.push_back({"system", *std::move(system)});
  if (!prompt->empty()) g.messages.push_back({"user", *std::move(prompt)});
  return r;
}

namespace {

// Ollama's embed bodies: model, the input field, keep_alive, and options
// that ask for the server's own context or nothing (sampling options mean
// nothing to an embedding, so any other is refused rather than ignored).
absl::StatusOr<EmbeddingRequest> ReadEmbedBody(absl::string_view body, const char* input_field,
                                               absl::Span<const absl::string_view> fields,
                                               int32_t context_length, bool truncate) {
  absl::StatusOr<Json> j = ParseJsonObject(body);
  if (!j.ok()) return j.status();
  EmbeddingRequest r;
  r.truncate = truncate;
  absl::StatusOr<std::string> bare = ReadModel(*j, "model");
  if (!bare.ok()) return bare.status();
  r.model = *std::move(bare);
  if (absl::Status s = RejectOtherFields(*j, fields, ""); !s.ok()) return s;
  if (absl::Status s = ReadKeepAlive(*j); !s.ok()) return s;
  auto input = j->find(input_field);
  if (input == j->end()) return BadField(input_field, "is required");
  if (absl::Status s = ReadEmbeddingInput(*input, input_field, /*token_arrays=*/false, r);
      !s.ok()) {
    return s;
  }
  if (auto it = j->find("options"); it != j->end() && !it->is_null()) {
    if (!it->is_object()) return BadField("options", "must be an object");
    static constexpr absl::string_view kEmbedOptions[] = {"num_ctx"};
    if (absl::Status s = RejectOtherFields(*it, kEmbedOptions, "options."); !s.ok()) return s;
    if (auto n = it->find("num_ctx"); n != it->end() && !n->is_null() && *n != context_length) {
      return BadField("options.num_ctx",
                      absl::StrCat("must be this server's context, ", context_length, ", or absent"));
    }
  }
  if (auto it = j->find("truncate"); it != j->end() && !it->is_null()) {
    if (!it->is_boolean()) return BadField("truncate", "must be true or false");
    r.truncate = it->get<bool>();
  }
  if (auto it = j->find("dimensions"); it != j->end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1) {
      return BadField("dimensions", "must be a positive integer");
    }
    r.dimensions = it->get<int64_t>();
  }
  return r;
}

}  // namespace

absl::StatusOr<EmbeddingRequest> ParseOllamaEmbedRequest(absl::string_view body,
                                                         int32_t context_length) {
  static constexpr absl::string_view kFields[] = {"model",   "input",     "truncate",
                                                  "options", "keep_alive", "dimensions"};
  // Ollama truncates unless told not to.
  return ReadEmbedBody(body, "input", kFields, context_length, /*truncate=*/true);
}

absl::StatusOr<EmbeddingRequest> ParseOllamaEmbeddingsRequest(absl::string_view body,
                                                              int32_t context_length) {
  static constexpr absl::string_view kFields[] = {"model", "prompt", "options", "keep_alive"};
  absl::StatusOr<EmbeddingRequest> r =
      ReadEmbedBody(body, "prompt", kFields, context_length, /*truncate=*/false);
  if (r.ok() && r->texts.size() != 1) return BadField("prompt", "must be one string");
  return r;
}

absl::StatusOr<std::string> ParseOllamaShowRequest(absl::string_view body) {
  absl::StatusOr<Json> j = ParseJsonObject(body);
  if (!j.ok()) return j.status();
  return ReadModel(*j, j->contains("model") || !j->contains("name") ? "model" : "name");
}

}  // namespace hearth::serve
