#include "openai_request.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "grammar_field.h"
#include "json_fields.h"
#include "logit_bias_field.h"
#include "logprobs_field.h"
#include "nlohmann/json.hpp"
#include "sampling_fields.h"
#include "unsupported_fields.h"

namespace hearth::serve {
namespace {

using Json = nlohmann::json;

// The fields each endpoint reads; with unsupported_fields.h's tables, every
// field a body may hold (any other is refused by RejectUnknownFields).
// tests/serve/openai_fields_test.py reads these tables and checks that each
// field either changes the answer or is refused.
constexpr absl::string_view kChatFields[] = {
    "model", "max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k", "min_p",
    "repeat_penalty", "presence_penalty", "frequency_penalty", "seed", "logit_bias", "grammar",
    "response_format", "json_schema", "stream", "stream_options", "stop", "messages", "logprobs",
    "top_logprobs", "n"};
constexpr absl::string_view kCompletionFields[] = {
    "model", "max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k", "min_p",
    "repeat_penalty", "presence_penalty", "frequency_penalty", "seed", "logit_bias", "grammar",
    "response_format", "json_schema", "stream", "stream_options", "stop", "prompt", "logprobs",
    // Read to refuse it with a pointer to 'logprobs' (logprobs_field.h).
    "top_logprobs", "n"};

absl::Status ReadCommon(const Json& j, GenerationRequest& r) {
  auto model = j.find("model");
  if (model == j.end() || !model->is_string() || model->get_ref<const std::string&>().empty()) {
    return BadField("model", "is required: a non-empty string (GET /v1/models lists them)");
  }
  r.model = model->get<std::string>();
  if (absl::Status s = RejectUnsupportedFields(j); !s.ok()) return s;
  for (const char* field : {"max_tokens", "max_completion_tokens"}) {
    auto it = j.find(field);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > (1 << 30)) {
      return BadField(field, "must be an integer in [1, 2^30]");
    }
    r.max_tokens = static_cast<int32_t>(it->get<int64_t>());
  }
  if (auto it = j.find("n"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1 ||
        it->get<int64_t>() > kMaxChoices) {
      return BadField("n", absl::StrCat("must be an integer in [1, ", kMaxChoices, "]"));
    }
    r.n = static_cast<int32_t>(it->get<int64_t>());
  }
  if (absl::Status s = ReadSamplingFields(j, "", r.sampling); !s.ok()) return s;
  if (absl::Status s = ReadLogitBias(j, r.sampling.logit_bias); !s.ok()) return s;
  if (absl::Status s = ReadGrammar(j, r); !s.ok()) return s;
  if (auto it = j.find("stream"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return BadField("stream", "must be true or false");
    r.stream = it->get<bool>();
  }
  if (auto it = j.find("stream_options"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) return BadField("stream_options", "must be an object");
    auto usage = it->find("include_usage");
    if (usage != it->end() && !usage->is_boolean()) {
      return BadField("stream_options.include_usage", "must be true or false");
    }
    r.include_usage = usage != it->end() && usage->get<bool>();
  }
  return ReadStopField(j, "", r.stop);
}

// Message content: a string, or an array of {"type": "text", "text": ...}
// parts (what newer clients send), concatenated.
absl::StatusOr<std::string> ReadContent(const Json& content, size_t index) {
  const std::string field = absl::StrCat("messages[", index, "].content");
  if (content.is_null()) return std::string();
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) return BadField(field, "must be a string or an array of text parts");
  std::string text;
  for (const Json& part : content) {
    auto type = part.is_object() ? part.find("type") : part.end();
    if (!part.is_object() || type == part.end() || *type != "text" || !part.contains("text") ||
        !part["text"].is_string()) {
      return BadField(field, "parts must be {\"type\": \"text\", \"text\": \"...\"} (text only)");
    }
    text += part["text"].get<std::string>();
  }
  return text;
}

absl::Status ReadMessages(const Json& j, GenerationRequest& r) {
  auto it = j.find("messages");
  if (it == j.end() || !it->is_array() || it->empty() || it->size() > kMaxMessages) {
    return BadField("messages", absl::StrCat("is required: an array of 1 to ", kMaxMessages,
                                        " {role, content} objects"));
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& m = (*it)[i];
    auto role = m.is_object() ? m.find("role") : m.end();
    static constexpr absl::string_view kRoles[] = {"system", "developer", "user", "assistant",
                                                  "tool"};
    if (!m.is_object() || role == m.end() || !role->is_string() ||
        std::find(std::begin(kRoles), std::end(kRoles), role->get<std::string>()) ==
            std::end(kRoles)) {
      return BadField(absl::StrCat("messages[", i, "].role"),
                 "must be one of system, developer, user, assistant, tool");
    }
    // A message's other fields (name, tool_calls, ...) would change what the
    // model is shown; none is implemented, so none is dropped unseen.
    static constexpr absl::string_view kMessageFields[] = {"role", "content"};
    const std::string at = absl::StrCat("messages[", i, "].");
    if (absl::Status s = RejectOtherFields(m, kMessageFields, at); !s.ok()) return s;
    absl::StatusOr<std::string> content =
        ReadContent(m.contains("content") ? m["content"] : Json(), i);
    if (!content.ok()) return content.status();
    // "developer" is OpenAI's newer name for "system"; templates know the latter.
    std::string name = role->get<std::string>();
    r.messages.push_back({name == "developer" ? "system" : name, *std::move(content)});
  }
  return absl::OkStatus();
}

absl::Status ReadPrompt(const Json& j, GenerationRequest& r) {
  auto it = j.find("prompt");
  if (it != j.end() && it->is_array() && it->size() == 1 && (*it)[0].is_string()) {
    r.prompt = (*it)[0].get<std::string>();
  } else if (it != j.end() && it->is_string()) {
    r.prompt = it->get<std::string>();
  } else {
    return BadField("prompt", "is required: a string (or an array of one string)");
  }
  if (r.prompt.empty()) return BadField("prompt", "must not be empty");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GenerationRequest> ParseChatRequest(absl::string_view body) {
  absl::StatusOr<Json> j = ParseJsonObject(body);
  if (!j.ok()) return j.status();
  GenerationRequest r;
  r.chat = true;
  if (absl::Status s = ReadCommon(*j, r); !s.ok()) return s;
  if (absl::Status s = ReadChatLogprobs(*j, r.logprobs); !s.ok()) return s;
  if (absl::Status s = ReadMessages(*j, r); !s.ok()) return s;
  if (absl::Status s = RejectUnknownFields(*j, kChatFields); !s.ok()) return s;
  KeepSchemaOrder(body, r);
  return r;
}

absl::StatusOr<GenerationRequest> ParseCompletionRequest(absl::string_view body) {
  absl::StatusOr<Json> j = ParseJsonObject(body);
  if (!j.ok()) return j.status();
  GenerationRequest r;
  if (absl::Status s = ReadCommon(*j, r); !s.ok()) return s;
  if (absl::Status s = ReadCompletionLogprobs(*j, r.logprobs); !s.ok()) return s;
  if (absl::Status s = ReadPrompt(*j, r); !s.ok()) return s;
  if (absl::Status s = RejectUnknownFields(*j, kCompletionFields); !s.ok()) return s;
  KeepSchemaOrder(body, r);
  return r;
}

}  // namespace hearth::serve
