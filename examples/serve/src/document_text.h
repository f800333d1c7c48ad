// File: examples/serve/src/document_text.h
//
// A posted document as the model will read it: its plain text
// (PlainDocumentText: HTML tags dropped, entities decoded, whitespace
// tidied) cut into chunks of about a given number of tokens
// (SplitIntoChunks). Chunks end at paragraph breaks where they can, then at
// sentence ends, then between words; a single word longer than a chunk is
// cut between UTF-8 characters. Nothing of the text is lost or repeated:
// joining the chunks with single spaces or newlines gives the text back,
// whitespace aside.
//
// Both run on the documents job queue (document_routes.cc), never on an
// HTTP thread.
//
// Thread-safety: pure functions.
//
// Example:
//   std::string text = PlainDocumentText(DocumentFormat::kHtml, "<p>Boiler &amp; pipes</p>");
//   std::vector<std::string> chunks = SplitIntoChunks(text, 256, count_tokens);

#ifndef HEARTH_SERVE_DOCUMENT_TEXT_H_
#define HEARTH_SERVE_DOCUMENT_TEXT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "document_request.h"

namespace hearth::serve {

// Paragraphs separated by one blank line, runs of spaces and tabs as one
// space, no leading or trailing whitespace. HTML: <script> and <style>
// contents dropped, block tags (p, div, br, li, h1-h6, tr, ...) as
// paragraph or line breaks, other tags removed, the common entities and
// numeric references decoded. Markdown is kept as written: models read it.
std::string PlainDocumentText(DocumentFormat format, absl::string_view text);

// Tokens in a piece of text (the model's tokenizer, or a stand-in in tests).
using TokenCounter = std::function<int64_t(absl::string_view)>;

// Chunks of at most about `max_tokens` tokens each (counts of adjacent
// pieces are summed, so a chunk may come out a token or two over), in
// order, none empty. REQUIRES: max_tokens >= 1.
std::vector<std::string> SplitIntoChunks(absl::string_view text, int32_t max_tokens,
                                         const TokenCounter& count_tokens);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_DOCUMENT_TEXT_H_
