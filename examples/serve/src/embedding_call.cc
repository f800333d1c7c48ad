#include "embedding_call.h"

#include <bit>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "json_fields.h"
#include "member_job.h"
#include "prompt_bound.h"
#include "request_channel.h"

namespace hearth::serve {
namespace {

// The work class: as a generation's, but the household's "embedding"
// class for a call that names the served model and no class.
absl::Status ResolveEmbeddingClass(const ServeContext& ctx, const CallHeaders& headers,
                                   const std::string& model, Caller& caller) {
  std::string header = headers.hearth_class;
  if (header.empty() && model == ctx.directory->model_name()) {
    const std::vector<WorkClassConfig>& classes = ctx.household->classes;
    for (size_t c = 0; c < classes.size() && c < caller.allowed_classes.size(); ++c) {
      if (classes[c].name == "embedding" && caller.allowed_classes[c]) header = "embedding";
    }
  }
  return ctx.directory->ResolveClass(model, header, caller);
}

// Each input's token ids, within the context (cut to it with `truncate`),
// each id in the vocabulary. Texts are tokenized in the member's turn on
// the interactive queue, as a chat's prompt is.
absl::StatusOr<std::vector<std::vector<int32_t>>> InputTokens(const ServeContext& ctx,
                                                             EmbeddingRequest& request,
                                                             MemberTurns::Turn turn) {
  const int32_t context = ctx.engine->context_length();
  const bool truncate = request.truncate;
  if (request.texts.empty()) {
    const int32_t vocab = ctx.text->vocab_size();
    for (size_t i = 0; i < request.token_inputs.size(); ++i) {
      std::vector<int32_t>& ids = request.token_inputs[i];
      for (int32_t t : ids) {
        if (t >= vocab) {
          return absl::InvalidArgumentError(absl::StrCat(
              "input[", i, "] holds token ", t, "; this model's ids are in [0, ", vocab, ")"));
        }
      }
      if (static_cast<int64_t>(ids.size()) > context) {
        if (!truncate) {
          return absl::OutOfRangeError(absl::StrCat("input[", i, "] is ", ids.size(),
                                                    " tokens; this server's context is ", context));
        }
        ids.resize(static_cast<size_t>(context));
      }
    }
    return std::move(request.token_inputs);
  }
  const ModelText* text = ctx.text;
  auto tokenize = [text, context, truncate, texts = std::move(request.texts)]()
      -> absl::StatusOr<std::vector<std::vector<int32_t>>> {
    std::vector<std::vector<int32_t>> out;
    out.reserve(texts.size());
    const PromptBudget budget{context, text->max_token_bytes(), std::nullopt};
    for (size_t i = 0; i < texts.size(); ++i) {
      const std::string at = texts.size() == 1 ? "the input" : absl::StrCat("input[", i, "]");
      if (!truncate) {
        if (absl::Status s = CheckPromptBytes(texts[i].size(), budget); !s.ok()) {
          return absl::Status(s.code(), absl::StrCat(at, ": ", s.message()));
        }
      }
      absl::StatusOr<std::vector<int32_t>> ids =
          truncate ? text->Tokenize(texts[i], /*templated=*/false)
                   : text->TokenizeAtMost(texts[i], /*templated=*/false, context);
      if (!ids.ok()) return absl::Status(ids.status().code(), absl::StrCat(at, ": ", ids.status().message()));
      if (static_cast<int64_t>(ids->size()) > context) ids->resize(static_cast<size_t>(context));
      out.push_back(*std::move(ids));
    }
    return out;
  };
  return CallInMemberTurn<std::vector<std::vector<int32_t>>>(ctx, std::move(turn),
                                                             "tokenize inputs to embed",
                                                             std::move(tokenize));
}

}  // namespace

absl::StatusOr<EmbeddingAnswer> RunEmbeddings(const ServeContext& ctx, const CallHeaders& headers,
                                              AdmittedCall call, EmbeddingRequest request,
                                              int* retry_after_s) {
  *retry_after_s = 0;
  Caller& caller = call.caller;
  if (absl::Status s = ResolveEmbeddingClass(ctx, headers, request.model, caller); !s.ok()) {
    return s;
  }
  const int32_t width = ctx.text->embedding_width();
  if (request.dimensions && *request.dimensions != width) {
    return BadField("dimensions",
                    absl::StrCat("is ", *request.dimensions, "; this model's embeddings have ",
                                 width, " (they are not shortened: leave it out or send ", width,
                                 ")"));
  }
  absl::StatusOr<std::vector<std::vector<int32_t>>> inputs =
      InputTokens(ctx, request, std::move(call.turn));
  if (!inputs.ok()) return inputs.status();

  std::vector<Submission> submitted;
  submitted.reserve(inputs->size());
  auto cancel_all = [&](bool disconnected) {
    for (const Submission& s : submitted) ctx.engine->Cancel(s.id, disconnected);
  };
  EmbeddingAnswer answer;
  for (std::vector<int32_t>& ids : *inputs) {
    answer.prompt_tokens += static_cast<int64_t>(ids.size());
    absl::StatusOr<Submission> s = ctx.engine->SubmitEmbedding(
        {.user = caller.user, .work_class = caller.work_class, .prompt = std::move(ids)});
    if (!s.ok()) {
      cancel_all(/*disconnected=*/false);
      if (s.status().code() == absl::StatusCode::kResourceExhausted) {
        *retry_after_s = RetryAfterSeconds(ctx, caller.user, s.status());
      }
      return s.status();
    }
    submitted.push_back(*std::move(s));
  }
  answer.shown_id = ctx.ids != nullptr ? ctx.ids->Issue(submitted.front().id, caller.user) : "";
  const Connection* conn = ctx.connections == nullptr ? nullptr : ctx.connections->Current();
  std::string no_text;
  for (const Submission& s : submitted) {
    while (!s.channel->Wait(ctx.limits.keepalive_every, &no_text)) {
      if (conn != nullptr && conn->PeerGone()) {
        cancel_all(/*disconnected=*/true);
        return absl::CancelledError("the client left before its embeddings were computed");
      }
    }
    RequestEnd end = s.channel->end();
    if (!end.status.ok()) {
      cancel_all(/*disconnected=*/false);
      return end.status;
    }
    answer.vectors.push_back(std::move(end.embedding));
  }
  return answer;
}

std::string Base64Floats(const std::vector<float>& v) {
  static_assert(std::endian::native == std::endian::little,
                "OpenAI's base64 embeddings are little-endian float32");
  std::string bytes(v.size() * sizeof(float), '\0');
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  return absl::Base64Escape(bytes);
}

}  // namespace hearth::serve
