// File: examples/serve/src/document_request.h
//
// Parses and validates a POST /v1/hearth/documents call: a document to be
// parsed, cut into chunks of about `chunk_tokens` tokens, each chunk
// summarised by the model in the `documents` work class.
//
// Two shapes of body:
//   Content-Type: application/json
//     {"model": "tiny",              optional; default the served model
//      "text": "...",                required, the document
//      "format": "text",             "text" | "markdown" | "html"
//      "chunk_tokens": 256,          [16, 8192]
//      "max_tokens": 64,             per chunk summary, [1, 4096]
//      "instruction": "...",         optional, at most 4096 bytes
//      "temperature": 0, "seed": 7}  as in /v1/completions; greedy default
//   Content-Type: text/plain, text/markdown or text/html
//     the body is the document (its format from the type); the options
//     above, but text and instruction, may be given in the query string
//     (?chunk_tokens=128&max_tokens=32).
// Unknown JSON fields and query parameters are errors, so a typo cannot
// silently change a limit.
//
// Every error is InvalidArgument naming the field and what is allowed.
// Never throws.
//
// Example:
//   absl::StatusOr<DocumentRequest> r =
//       ParseDocumentRequest("text/plain", "The boiler ...", {{"max_tokens", "32"}});

#ifndef HEARTH_SERVE_DOCUMENT_REQUEST_H_
#define HEARTH_SERVE_DOCUMENT_REQUEST_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "openai_request.h"

namespace hearth::serve {

enum class DocumentFormat { kText, kMarkdown, kHtml };

inline constexpr int32_t kMinChunkTokens = 16;
inline constexpr int32_t kMaxChunkTokens = 8192;
inline constexpr int32_t kMaxSummaryTokens = 4096;
inline constexpr size_t kMaxInstructionBytes = 4096;

inline constexpr char kDefaultDocumentInstruction[] =
    "Summarise this part of a document in a few sentences.";

struct DocumentRequest {
  // Empty: the served model.
  std::string model;
  std::string text;
  DocumentFormat format = DocumentFormat::kText;
  int32_t chunk_tokens = 256;
  int32_t max_tokens = 64;
  std::string instruction = kDefaultDocumentInstruction;
  // Greedy unless asked: a summary should not change from run to run.
  SamplingParams sampling = [] {
    SamplingParams greedy;
    greedy.temperature = 0;
    return greedy;
  }();
};

using QueryParams = std::vector<std::pair<std::string, std::string>>;

absl::StatusOr<DocumentRequest> ParseDocumentRequest(absl::string_view content_type,
                                                     absl::string_view body,
                                                     const QueryParams& query);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_DOCUMENT_REQUEST_H_
