#include "logprobs_field.h"

#include "absl/strings/str_cat.h"
#include "json_fields.h"

namespace hearth::serve {
namespace {

using Json = nlohmann::json;

// An integer field in [0, max]; absent or null leaves `out` empty.
absl::Status ReadCount(const Json& body, const char* field, int32_t max,
                       std::optional<int32_t>& out) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  // is_number_integer: 2.0 and 1e1 are not counts; the range check comes
  // before the narrowing.
  if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > max) {
    return BadField(field, absl::StrCat("must be an integer in [0, ", max, "]"));
  }
  out = static_cast<int32_t>(it->get<int64_t>());
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadChatLogprobs(const Json& body, std::optional<int32_t>& out) {
  bool wanted = false;
  if (auto it = body.find("logprobs"); it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) {
      return BadField("logprobs", "must be true or false (the count is 'top_logprobs')");
    }
    wanted = it->get<bool>();
  }
  std::optional<int32_t> top;
  if (absl::Status s = ReadCount(body, "top_logprobs", kMaxChatTopLogprobs, top); !s.ok()) {
    return s;
  }
  if (!wanted) {
    // OpenAI's rule: alternatives only with the log probabilities they list.
    if (top.value_or(0) > 0) return BadField("top_logprobs", "needs \"logprobs\": true");
    return absl::OkStatus();
  }
  out = top.value_or(0);
  return absl::OkStatus();
}

absl::Status ReadCompletionLogprobs(const Json& body, std::optional<int32_t>& out) {
  if (auto it = body.find("top_logprobs");
      it != body.end() && !it->is_null() && !(it->is_number_integer() && *it == 0)) {
    return BadField("top_logprobs",
                    absl::StrCat("is a chat field (0 or absent here); /v1/completions takes "
                                 "'logprobs', an integer in [0, ", kMaxCompletionLogprobs, "]"));
  }
  // false is what some clients send for "none"; true names no count.
  if (auto it = body.find("logprobs"); it != body.end() && it->is_boolean() && !it->get<bool>()) {
    return absl::OkStatus();
  }
  return ReadCount(body, "logprobs", kMaxCompletionLogprobs, out);
}

}  // namespace hearth::serve
