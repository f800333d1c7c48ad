#include "document_chunk_job.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "document_text.h"
#include "job_call.h"
#include "serve_job_queues.h"

namespace hearth::serve {
namespace {

struct ChunkInput {
  std::string text;
  DocumentFormat format = DocumentFormat::kText;
  int32_t chunk_tokens = 0;
  int32_t max_tokens = 0;
  std::string instruction;
  int32_t context_length = 0;
};

absl::StatusOr<ChunkPrompt> PromptFor(const ModelText& model, const ChunkInput& in,
                                      const std::string& chunk, size_t index) {
  absl::StatusOr<std::vector<int32_t>> tokens = model.Tokenize(
      absl::StrCat(in.instruction, "\n\n", chunk, "\n\nSummary:"), /*templated=*/false);
  if (!tokens.ok()) return tokens.status();
  const int64_t total = static_cast<int64_t>(tokens->size()) + in.max_tokens;
  if (total > in.context_length) {
    return absl::OutOfRangeError(absl::StrCat(
        "chunk ", index, "'s prompt is ", tokens->size(), " tokens; with max_tokens (",
        in.max_tokens, ") that exceeds this server's context of ", in.context_length,
        " tokens: lower chunk_tokens or max_tokens"));
  }
  return ChunkPrompt{*std::move(tokens), static_cast<int64_t>(chunk.size())};
}

absl::StatusOr<std::vector<ChunkPrompt>> ChunkDocument(const ModelText& model,
                                                       const ChunkInput& in,
                                                       const JobContext* job) {
  const std::string plain = PlainDocumentText(in.format, in.text);
  if (plain.empty()) {
    return absl::InvalidArgumentError("'text' has no readable text once parsed");
  }
  const TokenCounter count = [&model](absl::string_view s) -> int64_t {
    absl::StatusOr<std::vector<int32_t>> t = model.Tokenize(s, /*templated=*/false);
    // Tokenize adds BOS where the model asks for it; a piece joined into a
    // chunk does not carry one.
    return t.ok() ? std::max<int64_t>(0, static_cast<int64_t>(t->size()) - 1) : 0;
  };
  const std::vector<std::string> chunks = SplitIntoChunks(plain, in.chunk_tokens, count);
  if (chunks.size() > kMaxDocumentChunks) {
    return absl::OutOfRangeError(absl::StrCat(
        "the document gives ", chunks.size(), " chunks of about ", in.chunk_tokens,
        " tokens; at most ", kMaxDocumentChunks, ": raise chunk_tokens or send less"));
  }
  std::vector<ChunkPrompt> prompts;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (job != nullptr && job->stop_requested()) return absl::CancelledError("chunking stopped");
    absl::StatusOr<ChunkPrompt> p = PromptFor(model, in, chunks[i], i);
    if (!p.ok()) return p.status();
    prompts.push_back(*std::move(p));
  }
  return prompts;
}

}  // namespace

absl::StatusOr<std::vector<ChunkPrompt>> ChunkDocumentOnQueue(const ServeContext& ctx,
                                                              DocumentRequest& request,
                                                              MemberTurns::Turn turn) {
  // Shared with the job, which may outlive this call (job_call.h).
  auto in = std::make_shared<ChunkInput>();
  in->text = std::move(request.text);
  in->format = request.format;
  in->chunk_tokens = request.chunk_tokens;
  in->max_tokens = request.max_tokens;
  in->instruction = request.instruction;
  in->context_length = ctx.engine->context_length();
  const ModelText* model = ctx.text;
  if (ctx.jobs == nullptr) return ChunkDocument(*model, *in, nullptr);
  JobSpec spec;
  spec.queue = kDocumentsQueue;
  spec.queue_timeout = ctx.limits.document_job_timeout;
  spec.label = absl::StrCat("parse and chunk a document of ", in->text.size(), " bytes");
  return CallOnQueue<std::vector<ChunkPrompt>>(
      *ctx.jobs, spec,
      [model, in, turn = std::move(turn)](const JobContext& job) {
        return ChunkDocument(*model, *in, &job);
      });
}

}  // namespace hearth::serve
