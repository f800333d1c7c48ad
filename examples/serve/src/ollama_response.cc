#include "ollama_response.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "openai_request.h"

namespace hearth::serve {

using Json = nlohmann::json;

namespace {

using Record = nlohmann::ordered_json;

// model, created_at and the text.
Record Opening(const OllamaShape& shape, absl::string_view text) {
  Record j = {{"model", shape.model}, {"created_at", Rfc3339(absl::Now())}};
  if (shape.chat) {
    j["message"] = {{"role", "assistant"}, {"content", std::string(text)}};
  } else {
    j["response"] = std::string(text);
  }
  return j;
}

// done and done_reason: a chat's reason comes first (Ollama's
// ChatResponse), a generation's after (its GenerateResponse).
void PutDone(const OllamaShape& shape, absl::string_view reason, Record& j) {
  if (shape.chat) j["done_reason"] = std::string(reason);
  j["done"] = true;
  if (!shape.chat) j["done_reason"] = std::string(reason);
}

// Nanoseconds from `from` to `to`; 0 when either never happened or they
// are out of order.
int64_t Nanos(absl::Time from, absl::Time to) {
  if (from == absl::InfiniteFuture() || to == absl::InfiniteFuture() || to < from) return 0;
  return absl::ToInt64Nanoseconds(to - from);
}

// "494.0M", "7.6B": Ollama's spelling of a parameter count.
std::string ParameterSize(uint64_t n) {
  if (n >= 1'000'000'000) return absl::StrFormat("%.1fB", n / 1e9);
  if (n >= 1'000'000) return absl::StrFormat("%.1fM", n / 1e6);
  if (n >= 1'000) return absl::StrFormat("%.1fK", n / 1e3);
  return absl::StrCat(n);
}

Json Details(const ModelFacts& f) {
  Json d = {{"parent_model", ""}, {"format", "gguf"}, {"family", f.architecture},
            {"parameter_size", ParameterSize(f.parameters)}};
  d["families"] = f.architecture.empty() ? Json(nullptr) : Json::array({f.architecture});
  if (!f.quantization.empty()) d["quantization_level"] = f.quantization;
  return d;
}

}  // namespace

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ", t, absl::UTCTimeZone());
}

Record OllamaChunk(const OllamaShape& shape, absl::string_view text) {
  Record j = Opening(shape, text);
  j["done"] = false;
  return j;
}

Record OllamaFinal(const OllamaShape& shape, absl::string_view text, const RequestEnd& end) {
  Record j = Opening(shape, text);
  PutDone(shape, end.finish_reason, j);
  const absl::Time first_token = std::min(end.first_token, end.ended);
  j["total_duration"] = Nanos(shape.received, end.ended);
  j["load_duration"] = 0;
  j["prompt_eval_count"] = end.prompt_tokens;
  j["prompt_eval_duration"] = Nanos(end.first_admitted, first_token);
  j["eval_count"] = end.completion_tokens;
  j["eval_duration"] = Nanos(first_token, end.ended);
  return j;
}

Record OllamaLoaded(const OllamaShape& shape) {
  Record j = Opening(shape, "");
  PutDone(shape, "load", j);
  return j;
}

std::string NdjsonLine(const Record& j) { return DumpOrdered(j) + "\n"; }

Json OllamaTag(const OllamaModel& m) {
  return {{"name", m.name},
          {"model", m.name},
          {"modified_at", Rfc3339(m.facts->modified)},
          {"size", m.facts->file_bytes},
          {"digest", m.facts->identity},
          {"details", Details(*m.facts)}};
}

Json OllamaRunning(const OllamaModel& m) {
  return {{"name", m.name},
          {"model", m.name},
          {"size", m.facts->file_bytes},
          {"digest", m.facts->identity},
          {"details", Details(*m.facts)},
          {"context_length", m.context_length}};
}

Json OllamaShow(const OllamaModel& m, int32_t default_max_tokens,
                absl::string_view chat_template) {
  const ModelFacts& f = *m.facts;
  Json info = {{"general.architecture", f.architecture},
               {"general.parameter_count", f.parameters}};
  if (!f.architecture.empty()) {
    info[absl::StrCat(f.architecture, ".context_length")] = f.trained_context;
  }
  if (!chat_template.empty()) info["tokenizer.chat_template"] = std::string(chat_template);
  return {{"parameters", absl::StrCat("num_ctx ", m.context_length, "\nnum_predict ",
                                      default_max_tokens, "\nrepeat_last_n ", kPenaltyLastN)},
          {"details", Details(f)},
          {"model_info", info},
          {"capabilities", Json::array({"completion", "embedding"})},
          {"modified_at", Rfc3339(f.modified)}};
}

Json OllamaErrorBody(const HttpError& error) {
  if (auto e = error.body.find("error"); e != error.body.end() && e->is_string()) {
    return error.body;  // already Ollama's
  }
  const Json* message = nullptr;
  if (auto e = error.body.find("error"); e != error.body.end() && e->is_object()) {
    if (auto m = e->find("message"); m != e->end()) message = &*m;
  }
  return {{"error", message != nullptr ? *message : Json("error")}};
}

HttpError OllamaErrorFor(const absl::Status& status, int retry_after_s) {
  HttpError e = ErrorFor(status, retry_after_s);
  e.body = OllamaErrorBody(e);
  return e;
}

bool IsOllamaPath(absl::string_view path) { return absl::StartsWith(path, "/api/"); }

}  // namespace hearth::serve
