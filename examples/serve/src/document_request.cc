#include "document_request.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace hearth::serve {
namespace {

using Json = nlohmann::json;

absl::Status Bad(absl::string_view field, absl::string_view allowed) {
  return absl::InvalidArgumentError(absl::StrCat("'", field, "' ", allowed));
}

absl::Status CheckInt(absl::string_view field, int64_t value, int32_t lo, int32_t hi,
                      int32_t& out) {
  if (value < lo || value > hi) {
    return Bad(field, absl::StrCat("is ", value, "; must be an integer in [", lo, ", ", hi, "]"));
  }
  out = static_cast<int32_t>(value);
  return absl::OkStatus();
}

absl::StatusOr<DocumentFormat> FormatNamed(absl::string_view name) {
  if (name == "text") return DocumentFormat::kText;
  if (name == "markdown") return DocumentFormat::kMarkdown;
  if (name == "html") return DocumentFormat::kHtml;
  return Bad("format", absl::StrCat("is \"", name, "\"; must be \"text\", \"markdown\" or \"html\""));
}

// The media type without parameters ("text/html; charset=utf-8" -> "text/html").
std::string MediaType(absl::string_view content_type) {
  std::string type(absl::StripAsciiWhitespace(
      content_type.substr(0, std::min(content_type.find(';'), content_type.size()))));
  absl::AsciiStrToLower(&type);
  return type;
}

absl::Status ReadJsonInt(const Json& j, const char* field, int32_t lo, int32_t hi, int32_t& out) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_number_integer()) {
    return Bad(field, absl::StrCat("must be an integer in [", lo, ", ", hi, "]"));
  }
  return CheckInt(field, it->get<int64_t>(), lo, hi, out);
}

absl::Status ReadJsonString(const Json& j, const char* field, size_t max_bytes, std::string& out) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_string() || it->get_ref<const std::string&>().size() > max_bytes) {
    return Bad(field, absl::StrCat("must be a string of at most ", max_bytes, " bytes"));
  }
  out = it->get<std::string>();
  return absl::OkStatus();
}

absl::Status ReadSampling(const Json& j, SamplingParams& s) {
  if (auto it = j.find("temperature"); it != j.end() && !it->is_null()) {
    if (!it->is_number() || !(it->get<double>() >= 0 && it->get<double>() <= 2)) {
      return Bad("temperature", "must be a number in [0, 2]");
    }
    s.temperature = it->get<double>();
  }
  if (auto it = j.find("seed"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer()) return Bad("seed", "must be an integer");
    s.seed = static_cast<uint32_t>(it->get<int64_t>());
  }
  return absl::OkStatus();
}

absl::StatusOr<DocumentRequest> FromJson(absl::string_view body) {
  Json j = Json::parse(body, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError("the body is not valid JSON");
  if (!j.is_object()) return absl::InvalidArgumentError("the body must be a JSON object");
  static constexpr const char* kFields[] = {"model", "text", "format", "chunk_tokens", "max_tokens",
                                            "instruction", "temperature", "seed"};
  for (const auto& [key, value] : j.items()) {
    if (std::find(std::begin(kFields), std::end(kFields), key) == std::end(kFields)) {
      return Bad(key, "is not a field of a document request (model, text, format, chunk_tokens, "
                      "max_tokens, instruction, temperature, seed)");
    }
  }
  DocumentRequest r;
  auto text = j.find("text");
  if (text == j.end() || !text->is_string()) return Bad("text", "is required: the document, a string");
  r.text = text->get<std::string>();
  absl::Status s = ReadJsonString(j, "model", 256, r.model);
  if (s.ok()) s = ReadJsonString(j, "instruction", kMaxInstructionBytes, r.instruction);
  std::string format = "text";
  if (s.ok()) s = ReadJsonString(j, "format", 16, format);
  if (!s.ok()) return s;
  absl::StatusOr<DocumentFormat> f = FormatNamed(format);
  if (!f.ok()) return f.status();
  r.format = *f;
  s = ReadJsonInt(j, "chunk_tokens", kMinChunkTokens, kMaxChunkTokens, r.chunk_tokens);
  if (s.ok()) s = ReadJsonInt(j, "max_tokens", 1, kMaxSummaryTokens, r.max_tokens);
  if (s.ok()) s = ReadSampling(j, r.sampling);
  if (!s.ok()) return s;
  return r;
}

absl::Status ApplyQuery(const QueryParams& query, DocumentRequest& r) {
  for (const auto& [key, value] : query) {
    int64_t n = 0;
    if (key == "model") {
      if (value.size() > 256) return Bad("model", "must be at most 256 bytes");
      r.model = value;
    } else if (key == "chunk_tokens" || key == "max_tokens") {
      const bool chunk = key == "chunk_tokens";
      const int32_t lo = chunk ? kMinChunkTokens : 1;
      const int32_t hi = chunk ? kMaxChunkTokens : kMaxSummaryTokens;
      if (!absl::SimpleAtoi(value, &n)) {
        return Bad(key, absl::StrCat("is \"", value, "\"; must be an integer in [", lo, ", ", hi, "]"));
      }
      if (absl::Status s = CheckInt(key, n, lo, hi, chunk ? r.chunk_tokens : r.max_tokens); !s.ok()) {
        return s;
      }
    } else {
      return Bad(key, "is not a query parameter of a document request (model, chunk_tokens, "
                      "max_tokens)");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DocumentRequest> ParseDocumentRequest(absl::string_view content_type,
                                                     absl::string_view body,
                                                     const QueryParams& query) {
  const std::string type = MediaType(content_type);
  absl::StatusOr<DocumentRequest> r;
  if (type == "application/json" || type.empty()) {
    if (!query.empty()) {
      return absl::InvalidArgumentError(
          "query parameters are for text/* bodies; a JSON body carries its options itself");
    }
    r = FromJson(body);
  } else if (type == "text/plain" || type == "text/markdown" || type == "text/html") {
    r = DocumentRequest();
    r->text = std::string(body);
    r->format = type == "text/html"       ? DocumentFormat::kHtml
                : type == "text/markdown" ? DocumentFormat::kMarkdown
                                          : DocumentFormat::kText;
    if (absl::Status s = ApplyQuery(query, *r); !s.ok()) return s;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "Content-Type \"", content_type, "\" is not accepted; send application/json, text/plain, "
        "text/markdown or text/html"));
  }
  if (r.ok() && absl::StripAsciiWhitespace(r->text).empty()) {
    return Bad("text", "is empty; the document must have some text");
  }
  return r;
}

}  // namespace hearth::serve
