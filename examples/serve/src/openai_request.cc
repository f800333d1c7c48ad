#include "openai_request.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "json_fields.h"
#include "nlohmann/json.hpp"
#include "unsupported_fields.h"

namespace hearth::serve {
namespace {

using Json = nlohmann::json;

// A number field in [lo, hi]; `out` keeps its default when absent or null.
absl::Status ReadNumber(const Json& j, const char* field, double lo, double hi, double& out) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < lo ||
      it->get<double>() > hi) {
    return BadField(field, absl::StrCat("must be a number in [", lo, ", ", hi, "]"));
  }
  out = it->get<double>();
  return absl::OkStatus();
}

// The sampling fields beyond temperature and top_p, each in its documented
// range (openai_request.h).
absl::Status ReadPenaltiesAndCuts(const Json& j, SamplingParams& p) {
  if (auto it = j.find("top_k"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > (1 << 20)) {
      return BadField("top_k", "must be an integer in [0, 2^20] (0: no cut)");
    }
    p.top_k = static_cast<int32_t>(it->get<int64_t>());
  }
  if (absl::Status s = ReadNumber(j, "min_p", 0, 1, p.min_p); !s.ok()) return s;
  if (absl::Status s = ReadNumber(j, "repeat_penalty", 0, 10, p.repeat_penalty); !s.ok()) return s;
  if (p.repeat_penalty <= 0) return BadField("repeat_penalty", "must be in (0, 10] (1: none)");
  if (absl::Status s = ReadNumber(j, "presence_penalty", -2, 2, p.presence_penalty); !s.ok()) {
    return s;
  }
  return ReadNumber(j, "frequency_penalty", -2, 2, p.frequency_penalty);
}

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
  if (absl::Status s = ReadNumber(j, "temperature", 0, 2, r.sampling.temperature); !s.ok()) return s;
  if (absl::Status s = ReadNumber(j, "top_p", 0, 1, r.sampling.top_p); !s.ok()) return s;
  if (r.sampling.top_p <= 0) return BadField("top_p", "must be in (0, 1]");
  if (absl::Status s = ReadPenaltiesAndCuts(j, r.sampling); !s.ok()) return s;
  if (auto it = j.find("seed"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer()) return BadField("seed", "must be an integer");
    // Any integer is accepted, as OpenAI does; llama.cpp takes 32 bits.
    r.sampling.seed = static_cast<uint32_t>(it->get<int64_t>());
  }
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
  if (auto it = j.find("stop"); it != j.end() && !it->is_null()) {
    if (it->is_string()) {
      r.stop.push_back(it->get<std::string>());
    } else if (it->is_array() && it->size() <= kMaxStopStrings) {
      for (const Json& s : *it) {
        if (!s.is_string()) return BadField("stop", "must be a string or an array of strings");
        r.stop.push_back(s.get<std::string>());
      }
    } else {
      return BadField("stop", absl::StrCat("must be a string or an array of at most ",
                                      kMaxStopStrings, " strings"));
    }
    for (const std::string& s : r.stop) {
      if (s.empty() || s.size() > kMaxStopBytes) {
        return BadField("stop", absl::StrCat("strings must be 1 to ", kMaxStopBytes, " bytes"));
      }
    }
  }
  return absl::OkStatus();
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
  if (absl::Status s = ReadMessages(*j, r); !s.ok()) return s;
  return r;
}

absl::StatusOr<GenerationRequest> ParseCompletionRequest(absl::string_view body) {
  absl::StatusOr<Json> j = ParseJsonObject(body);
  if (!j.ok()) return j.status();
  GenerationRequest r;
  if (absl::Status s = ReadCommon(*j, r); !s.ok()) return s;
  if (absl::Status s = ReadPrompt(*j, r); !s.ok()) return s;
  return r;
}

}  // namespace hearth::serve
