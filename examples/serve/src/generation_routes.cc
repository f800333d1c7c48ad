// POST /v1/chat/completions and /v1/completions: prepare, then submit and
// answer (generation_call.h) in OpenAI's shape: a whole completion, or
// server-sent events ending in "data: [DONE]", with SSE comments as the
// keep-alive; a failure after the 200 is an error event, as OpenAI sends.
// POST /v1/embeddings: the inputs embedded by the served model
// (embedding_call.h), unit-length vectors as llama-server returns them, as
// floats or base64 (encoding_format).

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "embedding_call.h"
#include "embedding_request.h"
#include "generation_call.h"
#include "http_routes.h"
#include "logprobs_json.h"
#include "prepare_generation.h"

namespace hearth::serve {
namespace {

class OpenAiFormat : public AnswerFormat {
 public:
  explicit OpenAiFormat(const PreparedGeneration& prepared)
      : include_usage_(prepared.request.include_usage),
        logprobs_(prepared.request.logprobs.has_value()),
        text_offsets_(static_cast<size_t>(std::max(prepared.request.n, 1)), 0) {
    shape_.chat = prepared.request.chat;
    shape_.created = absl::ToUnixSeconds(absl::Now());
    shape_.model = prepared.request.model;
  }

  void Begin(absl::string_view shown_id) override {
    shape_.id = absl::StrCat(shape_.chat ? "chatcmpl-" : "cmpl-", shown_id);
  }
  std::string StreamContentType() const override { return "text/event-stream"; }
  // Chat streams open each choice with the assistant's role.
  std::string Opening(int index) override {
    return shape_.chat
               ? SseEvent(Chunk(shape_, "", std::nullopt, /*first=*/true, nullptr, index))
               : "";
  }
  std::string Piece(absl::string_view text, const std::vector<TokenLogprob>& logprobs,
                    int index) override {
    return SseEvent(
        Chunk(shape_, text, std::nullopt, /*first=*/false, LogprobsOf(logprobs, index), index));
  }
  std::string ChoiceEnd(const RequestEnd& end, int index) override {
    if (!end.status.ok()) return "";
    return SseEvent(Chunk(shape_, "", absl::string_view(end.finish_reason), /*first=*/false,
                          nullptr, index));
  }
  std::string Tail(const RequestEnd& end) override {
    std::string out;
    if (end.status.ok()) {
      if (include_usage_) out += SseEvent(UsageChunk(shape_, UsageOf(end)));
    } else {
      out += SseEvent(ErrorFor(end.status).body);
    }
    return out + "data: [DONE]\n\n";
  }
  std::string KeepAlive() const override { return ": keep-alive\n\n"; }
  std::string Whole(const std::vector<ChoiceAnswer>& choices, const RequestEnd& end) override {
    std::vector<CompletionChoice> out;
    for (size_t k = 0; k < choices.size(); ++k) {
      const ChoiceAnswer& c = choices[k];
      out.push_back({c.text, c.end.finish_reason, LogprobsOf(c.logprobs, static_cast<int>(k))});
    }
    return Dump(Completion(shape_, out, UsageOf(end)));
  }
  HttpError Error(const absl::Status& status, int retry_after_s) const override {
    return ErrorFor(status, retry_after_s);
  }

 private:
  static nlohmann::json UsageOf(const RequestEnd& end) {
    return Usage(end.prompt_tokens, end.completion_tokens, end.cached_prompt_tokens);
  }

  // Choice `index`'s logprobs for `entries`, the tokens the text written
  // next completes; null when none were asked for. A completion's
  // text_offset continues from the choice's chunks before.
  nlohmann::json LogprobsOf(const std::vector<TokenLogprob>& entries, int index) {
    if (!logprobs_) return nullptr;
    size_t& offset = text_offsets_[static_cast<size_t>(index)];
    nlohmann::json j = shape_.chat ? ChatLogprobs(entries) : CompletionLogprobs(entries, offset);
    for (const TokenLogprob& e : entries) offset += e.token.size();
    return j;
  }

  ResponseShape shape_;
  const bool include_usage_;
  // The request asked for logprobs.
  const bool logprobs_;
  // Completions: per choice, bytes of answer text the logprobs written so
  // far cover.
  std::vector<size_t> text_offsets_;
};

void Generate(const ServeContext& ctx, const httplib::Request& req, httplib::Response& res,
              bool chat) {
  if (absl::Status may = MayGenerate(ctx, req); !may.ok()) return ReplyError(res, ErrorFor(may));
  absl::StatusOr<PreparedGeneration> prepared =
      PrepareGeneration(ctx, CallHeadersOf(req), req.body, chat);
  if (!prepared.ok()) return ReplyError(res, ErrorFor(prepared.status()));
  SubmitAndAnswer(ctx, std::move(prepared->job), prepared->request.stream,
                  std::make_shared<OpenAiFormat>(*prepared), res);
}

void Embeddings(const ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  // The key first, as everywhere: a stranger learns nothing of the server.
  CallHeaders headers;
  absl::StatusOr<AdmittedCall> call = AdmitRequest(ctx, req, &headers);
  if (!call.ok()) return ReplyError(res, ErrorFor(call.status()));
  absl::StatusOr<EmbeddingRequest> request = ParseEmbeddingRequest(req.body);
  if (!request.ok()) return ReplyError(res, ErrorFor(request.status()));
  const std::string model = request->model;
  const bool base64 = request->base64;
  int retry_after_s = 0;
  absl::StatusOr<EmbeddingAnswer> answer =
      RunEmbeddings(ctx, headers, *std::move(call), *std::move(request), &retry_after_s);
  if (!answer.ok()) return ReplyError(res, ErrorFor(answer.status(), retry_after_s));
  nlohmann::json data = nlohmann::json::array();
  for (size_t i = 0; i < answer->vectors.size(); ++i) {
    const std::vector<float>& v = answer->vectors[i];
    data.push_back({{"object", "embedding"},
                    {"index", i},
                    {"embedding", base64 ? nlohmann::json(Base64Floats(v)) : nlohmann::json(v)}});
  }
  res.set_header("X-Hearth-Request-Id", answer->shown_id);
  res.set_content(Dump({{"object", "list"},
                        {"data", std::move(data)},
                        {"model", model},
                        {"usage",
                         {{"prompt_tokens", answer->prompt_tokens},
                          {"total_tokens", answer->prompt_tokens}}}}),
                  "application/json");
}

}  // namespace

void ReplyError(httplib::Response& res, const HttpError& error) {
  res.status = error.status;
  for (const auto& [name, value] : ErrorHeaders(error)) res.set_header(name, value);
  res.set_content(Dump(error.body), "application/json");
}

void InstallGenerationRoutes(httplib::Server& server, const ServeContext& ctx) {
  server.Post("/v1/chat/completions", [&ctx](const httplib::Request& req, httplib::Response& res) {
    Generate(ctx, req, res, /*chat=*/true);
  });
  server.Post("/v1/completions", [&ctx](const httplib::Request& req, httplib::Response& res) {
    Generate(ctx, req, res, /*chat=*/false);
  });
  server.Post("/v1/embeddings", [&ctx](const httplib::Request& req, httplib::Response& res) {
    Embeddings(ctx, req, res);
  });
}

}  // namespace hearth::serve
