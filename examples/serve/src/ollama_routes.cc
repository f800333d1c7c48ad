// Ollama's API on the same scheduler as the OpenAI routes:
//   POST /api/chat, /api/generate   generation, NDJSON streams by default
//   GET  /api/tags, /api/ps, /api/version; POST /api/show
//   POST /api/embed, /api/embeddings (one input)
// Keyed like /v1/chat/completions (a member's key: MayGenerate / MayCall)
// and prepared the same way: the key, the member's turn, the body parsed
// in it (ollama_request.h), then the class, the bounds and the tokens
// (prepare_generation.h), submitted and answered by generation_call.h.
// Every error is Ollama's {"error": "..."} with the status the OpenAI
// routes give; after a stream began, a last NDJSON line {"error": ...}.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "embedding_call.h"
#include "generation_call.h"
#include "hearth/version.h"
#include "http_routes.h"
#include "ollama_request.h"
#include "ollama_response.h"
#include "page_views.h"
#include "prepare_generation.h"
#include "request_gate.h"

namespace hearth::serve {
namespace {

// NDJSON, as Ollama streams: no keep-alive record exists between lines
// (its clients parse every line), so a silent wait checks the connection.
class OllamaFormat : public AnswerFormat {
 public:
  explicit OllamaFormat(OllamaShape shape) : shape_(std::move(shape)) {}

  std::string StreamContentType() const override { return "application/x-ndjson"; }
  // Ollama's records carry no logprobs (ollama_request.h refuses them), and
  // its requests one choice.
  std::string Piece(absl::string_view text, const std::vector<TokenLogprob>&, int) override {
    return NdjsonLine(OllamaChunk(shape_, text));
  }
  std::string Tail(const RequestEnd& end) override {
    if (!end.status.ok()) return Dump(OllamaErrorFor(end.status).body) + "\n";
    return NdjsonLine(OllamaFinal(shape_, "", end));
  }
  std::string Whole(const std::vector<ChoiceAnswer>& choices, const RequestEnd& end) override {
    return DumpOrdered(OllamaFinal(shape_, choices.front().text, end));
  }
  HttpError Error(const absl::Status& status, int retry_after_s) const override {
    return OllamaErrorFor(status, retry_after_s);
  }

 private:
  const OllamaShape shape_;
};

void Reply(httplib::Response& res, const absl::Status& refusal) {
  ReplyError(res, OllamaErrorFor(refusal));
}

void Generate(const ServeContext& ctx, const httplib::Request& req, httplib::Response& res,
              bool chat) {
  const absl::Time received = absl::Now();
  CallHeaders headers;
  absl::StatusOr<AdmittedCall> call = AdmitRequest(ctx, req, &headers);
  if (!call.ok()) return Reply(res, call.status());
  const int32_t context = ctx.engine->context_length();
  absl::StatusOr<OllamaRequest> r = chat ? ParseOllamaChatRequest(req.body, context)
                                         : ParseOllamaGenerateRequest(req.body, context);
  if (!r.ok()) return Reply(res, r.status());
  OllamaShape shape{chat, r->model_shown, received};
  if (r->load_only) {
    // The one model is always loaded; the name and the class are still
    // checked as a generation's would be.
    Caller caller = call->caller;
    if (absl::Status s = ctx.directory->ResolveClass(r->generation.model, headers.hearth_class,
                                                     caller);
        !s.ok()) {
      return Reply(res, s);
    }
    return res.set_content(DumpOrdered(OllamaLoaded(shape)), "application/json");
  }
  absl::StatusOr<PreparedGeneration> prepared =
      PrepareRequest(ctx, headers, *std::move(call), std::move(r->generation));
  if (!prepared.ok()) return Reply(res, prepared.status());
  SubmitAndAnswer(ctx, std::move(prepared->job), prepared->request.stream,
                  std::make_shared<OllamaFormat>(std::move(shape)), res);
}

// Whether the caller may read the model routes (a member's key, as for
// /v1/models); else the refusal is written.
bool MayRead(const ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<Caller> caller = CallerOf(*ctx.directory, req);
  const absl::Status may = caller.ok() ? MayCall(*caller) : caller.status();
  if (!may.ok()) Reply(res, may);
  return may.ok();
}

OllamaModel ModelNamed(const ServeContext& ctx, std::string name) {
  static const ModelFacts kNone;
  return {std::move(name), ctx.model_facts != nullptr ? ctx.model_facts : &kNone,
          ctx.engine->context_length()};
}

void Show(const ServeContext& ctx, const httplib::Request& req, httplib::Response& res) {
  if (!MayRead(ctx, req, res)) return;
  absl::StatusOr<std::string> name = ParseOllamaShowRequest(req.body);
  if (!name.ok()) return Reply(res, name.status());
  const std::vector<std::string> names = ctx.directory->ModelNames();
  if (std::find(names.begin(), names.end(), *name) == names.end()) {
    // The name is not repeated: it may be anything the body held.
    return Reply(res, absl::NotFoundError(absl::StrCat(
                          "no such model; served: ", absl::StrJoin(names, ", "))));
  }
  const int32_t default_max_tokens =
      ctx.props != nullptr ? ctx.props->default_max_tokens : ctx.limits.default_max_tokens;
  res.set_content(Dump(OllamaShow(ModelNamed(ctx, *name), default_max_tokens,
                                  ctx.text != nullptr ? ctx.text->chat_template() : "")),
                  "application/json");
}

// /api/embed answers {"model", "embeddings": [[...]], ...}, the older
// /api/embeddings {"embedding": [...]}; both with unit-length vectors (Ollama
// leaves the older route's as pooled, which no client relies on).
void Embed(const ServeContext& ctx, const httplib::Request& req, httplib::Response& res,
           bool legacy) {
  const absl::Time received = absl::Now();
  CallHeaders headers;
  absl::StatusOr<AdmittedCall> call = AdmitRequest(ctx, req, &headers);
  if (!call.ok()) return Reply(res, call.status());
  const int32_t context = ctx.engine->context_length();
  absl::StatusOr<EmbeddingRequest> r = legacy ? ParseOllamaEmbeddingsRequest(req.body, context)
                                              : ParseOllamaEmbedRequest(req.body, context);
  if (!r.ok()) return Reply(res, r.status());
  const std::string model = r->model;
  int retry_after_s = 0;
  absl::StatusOr<EmbeddingAnswer> answer =
      RunEmbeddings(ctx, headers, *std::move(call), *std::move(r), &retry_after_s);
  if (!answer.ok()) return ReplyError(res, OllamaErrorFor(answer.status(), retry_after_s));
  res.set_header("X-Hearth-Request-Id", answer->shown_id);
  if (legacy) {
    return res.set_content(DumpOrdered({{"embedding", answer->vectors.front()}}),
                           "application/json");
  }
  nlohmann::ordered_json out;
  out["model"] = model;
  out["embeddings"] = answer->vectors;
  out["total_duration"] = absl::ToInt64Nanoseconds(absl::Now() - received);
  out["load_duration"] = 0;
  out["prompt_eval_count"] = answer->prompt_tokens;
  res.set_content(DumpOrdered(out), "application/json");
}

}  // namespace

void InstallOllamaRoutes(httplib::Server& server, const ServeContext& ctx) {
  server.Post("/api/chat", [&ctx](const httplib::Request& req, httplib::Response& res) {
    Generate(ctx, req, res, /*chat=*/true);
  });
  server.Post("/api/generate", [&ctx](const httplib::Request& req, httplib::Response& res) {
    Generate(ctx, req, res, /*chat=*/false);
  });
  server.Get("/api/tags", [&ctx](const httplib::Request& req, httplib::Response& res) {
    if (!MayRead(ctx, req, res)) return;
    nlohmann::json models = nlohmann::json::array();
    for (std::string& name : ctx.directory->ModelNames()) {
      models.push_back(OllamaTag(ModelNamed(ctx, std::move(name))));
    }
    res.set_content(Dump({{"models", models}}), "application/json");
  });
  // The served model is loaded for the server's life; its aliases are
  // names of it, not other loaded models.
  server.Get("/api/ps", [&ctx](const httplib::Request& req, httplib::Response& res) {
    if (!MayRead(ctx, req, res)) return;
    nlohmann::json models =
        nlohmann::json::array({OllamaRunning(ModelNamed(ctx, ctx.directory->model_name()))});
    res.set_content(Dump({{"models", models}}), "application/json");
  });
  server.Post("/api/show", [&ctx](const httplib::Request& req, httplib::Response& res) {
    Show(ctx, req, res);
  });
  // Hearth's version: this is not Ollama, and no Ollama version is implied.
  server.Get("/api/version", [&ctx](const httplib::Request& req, httplib::Response& res) {
    if (!MayRead(ctx, req, res)) return;
    res.set_content(Dump({{"version", std::string(Version())}}), "application/json");
  });
  server.Post("/api/embed", [&ctx](const httplib::Request& req, httplib::Response& res) {
    Embed(ctx, req, res, /*legacy=*/false);
  });
  server.Post("/api/embeddings", [&ctx](const httplib::Request& req, httplib::Response& res) {
    Embed(ctx, req, res, /*legacy=*/true);
  });
}

}  // namespace hearth::serve
