#include "openai_response.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "error_param.h"

namespace hearth::serve {

using Json = nlohmann::json;

Json Usage(int32_t prompt_tokens, int32_t completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

Json Usage(int32_t prompt_tokens, int32_t completion_tokens, int32_t cached_prompt_tokens) {
  Json j = Usage(prompt_tokens, completion_tokens);
  j["prompt_tokens_details"] = {{"cached_tokens", cached_prompt_tokens}};
  return j;
}

namespace {

Json Envelope(const ResponseShape& shape, bool chunk) {
  const char* object = shape.chat ? (chunk ? "chat.completion.chunk" : "chat.completion")
                                  : "text_completion";
  return {{"id", shape.id}, {"object", object}, {"created", shape.created}, {"model", shape.model}};
}

Json FinishValue(std::optional<absl::string_view> reason) {
  return reason ? Json(std::string(*reason)) : Json(nullptr);
}

}  // namespace

Json Completion(const ResponseShape& shape, const std::vector<CompletionChoice>& choices,
                const Json& usage) {
  Json j = Envelope(shape, /*chunk=*/false);
  Json list = Json::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    const CompletionChoice& c = choices[i];
    Json choice = {{"index", i}, {"finish_reason", std::string(c.finish_reason)}};
    if (shape.chat) {
      choice["message"] = {{"role", "assistant"}, {"content", std::string(c.text)}};
    } else {
      choice["text"] = std::string(c.text);
    }
    choice["logprobs"] = c.logprobs;
    list.push_back(std::move(choice));
  }
  j["choices"] = std::move(list);
  j["usage"] = usage;
  return j;
}

Json Completion(const ResponseShape& shape, absl::string_view text, absl::string_view finish_reason,
                const Json& usage, const Json& logprobs) {
  return Completion(shape, {{text, finish_reason, logprobs}}, usage);
}

Json Chunk(const ResponseShape& shape, absl::string_view text,
           std::optional<absl::string_view> finish_reason, bool first, const Json& logprobs,
           int index) {
  Json j = Envelope(shape, /*chunk=*/true);
  Json choice = {{"index", index}, {"finish_reason", FinishValue(finish_reason)}};
  if (shape.chat) {
    Json delta = Json::object();
    if (first) delta["role"] = "assistant";
    if (!text.empty() || first) delta["content"] = std::string(text);
    choice["delta"] = delta;
  } else {
    choice["text"] = std::string(text);
  }
  choice["logprobs"] = logprobs;
  j["choices"] = Json::array({choice});
  return j;
}

Json UsageChunk(const ResponseShape& shape, const Json& usage) {
  Json j = Envelope(shape, /*chunk=*/true);
  j["choices"] = Json::array();
  j["usage"] = usage;
  return j;
}

std::string Dump(const Json& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

std::string DumpOrdered(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string SseEvent(const Json& j) { return "data: " + Dump(j) + "\n\n"; }

HttpError ErrorFor(const absl::Status& status, int retry_after_s) {
  HttpError e;
  std::string type = "server_error";
  Json code = nullptr;
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      e.status = 400;
      type = "invalid_request_error";
      break;
    case absl::StatusCode::kUnauthenticated:
      e.status = 401;
      type = "invalid_request_error";
      code = "invalid_api_key";
      // RFC 9110: a 401 names the scheme that would be accepted.
      e.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"hearth-serve\"");
      break;
    case absl::StatusCode::kPermissionDenied:
      e.status = 403;
      type = "invalid_request_error";
      code = "permission_denied";
      break;
    case absl::StatusCode::kNotFound:
      e.status = 404;
      type = "invalid_request_error";
      code = "model_not_found";
      break;
    case absl::StatusCode::kOutOfRange:
      e.status = 413;
      type = "invalid_request_error";
      code = "context_length_exceeded";
      break;
    case absl::StatusCode::kResourceExhausted:
      e.status = 429;
      type = "rate_limit_exceeded";
      code = "rate_limit_exceeded";
      e.retry_after_s = retry_after_s > 0 ? retry_after_s : 1;
      break;
    case absl::StatusCode::kUnavailable:
      e.status = 503;
      type = "server_error";
      e.retry_after_s = retry_after_s > 0 ? retry_after_s : 5;
      break;
    case absl::StatusCode::kDeadlineExceeded:
      e.status = 504;
      type = "timeout";
      break;
    case absl::StatusCode::kCancelled:
      e.status = 499;
      type = "cancelled";
      break;
    // A route or kind of request this server does not serve: llama-server's
    // status and type for it, so that its clients tell it from a failure.
    case absl::StatusCode::kUnimplemented:
      e.status = 501;
      type = "not_supported_error";
      code = "not_supported";
      break;
    default:
      e.status = 500;
      break;
  }
  std::string message(status.message());
  const std::optional<std::string> param = ParamOf(status);
  if (e.status == 429 && retry_after_s > kMaxRetryAfterS) {
    // Retry-After stops at kMaxRetryAfterS: the message keeps the true wait.
    absl::StrAppend(&message, "; it renews in ", retry_after_s, " s");
  }
  e.body = {{"error",
             {{"message", message},
              {"type", type},
              {"param", param ? Json(*param) : Json(nullptr)},
              {"code", code}}}};
  return e;
}

HttpError HttpErrorOf(int http_status, absl::string_view message, absl::string_view code) {
  HttpError e;
  e.status = http_status;
  e.body = {{"error",
             {{"message", std::string(message)},
              {"type", "invalid_request_error"},
              {"param", nullptr},
              {"code", code.empty() ? Json(nullptr) : Json(std::string(code))}}}};
  return e;
}

std::vector<std::pair<std::string, std::string>> ErrorHeaders(const HttpError& error) {
  std::vector<std::pair<std::string, std::string>> out;
  if (error.retry_after_s > 0) {
    out.emplace_back("Retry-After", std::to_string(std::min(error.retry_after_s, kMaxRetryAfterS)));
    // Clients that obey Retry-After (the OpenAI SDKs) would otherwise sleep
    // inside a call for up to the quota window, or retry far too early.
    if (error.retry_after_s > kMaxRetryAfterS) out.emplace_back("x-should-retry", "false");
  }
  out.insert(out.end(), error.headers.begin(), error.headers.end());
  return out;
}

}  // namespace hearth::serve
