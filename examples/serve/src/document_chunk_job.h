// File: examples/serve/src/document_chunk_job.h
//
// The CPU half of a document request, run on the background `documents`
// job queue: the document parsed to plain text (document_text.h), cut into
// chunks of about chunk_tokens tokens, and each chunk's summary prompt
// ("<instruction>\n\n<chunk>\n\nSummary:") tokenized, ready for the GPU's
// `documents` work class. The queue gives its cores back while voice and
// chat wait for the GPU, so a document flood cannot slow their
// tokenisation.
//
// Errors: InvalidArgument when nothing of the document is text; OutOfRange
// (413) for more than kMaxDocumentChunks chunks or a chunk prompt that
// leaves no room for its summary in the context; the job queue's own
// (job_call.h: 429 full, 504 waited too long, 503 shutting down).
//
// Thread-safety: any thread.

#ifndef HEARTH_SERVE_DOCUMENT_CHUNK_JOB_H_
#define HEARTH_SERVE_DOCUMENT_CHUNK_JOB_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "document_request.h"
#include "serve_context.h"

namespace hearth::serve {

// A document gives at most this many chunks (each one GPU request).
inline constexpr size_t kMaxDocumentChunks = 256;

struct ChunkPrompt {
  std::vector<int32_t> tokens;
  // Bytes of the document's plain text in this chunk.
  int64_t text_bytes = 0;
};

// Runs on ctx.jobs' documents queue (inline when ctx.jobs is null) and
// waits for it. `request.text` is moved from. The job holds `turn` (the
// member's, member_turns.h) until it returns.
absl::StatusOr<std::vector<ChunkPrompt>> ChunkDocumentOnQueue(const ServeContext& ctx,
                                                              DocumentRequest& request,
                                                              MemberTurns::Turn turn = {});

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_DOCUMENT_CHUNK_JOB_H_
