#include "embedding_request.h"

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "json_fields.h"
#include "unsupported_fields.h"

namespace hearth::serve {
namespace {

using Json = nlohmann::json;

// What the endpoint reads, and OpenAI's informational `user`; every other
// field (a generation's among them) is refused by name.
constexpr absl::string_view kEmbeddingFields[] = {"model", "input", "encoding_format",
                                                  "dimensions", "user"};

// One input's token ids: integers a token id can hold (the vocabulary is
// checked once the call is prepared).
absl::StatusOr<std::vector<int32_t>> TokenIds(const Json& ids, const std::string& field) {
  std::vector<int32_t> out;
  if (ids.empty()) return BadField(field, "must not be empty");
  out.reserve(ids.size());
  for (const Json& t : ids) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 ||
        t.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return BadField(field, "must hold token ids: integers in [0, 2^31)");
    }
    out.push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  return out;
}

}  // namespace

absl::Status ReadEmbeddingInput(const Json& input, absl::string_view field, bool token_arrays,
                                EmbeddingRequest& r) {
  const std::string name(field);
  const std::string forms = token_arrays
                                ? "a string, an array of strings, an array of token ids or an "
                                  "array of such arrays"
                                : "a string or an array of strings";
  if (input.is_string()) {
    if (input.get_ref<const std::string&>().empty()) return BadField(name, "must not be empty");
    r.texts.push_back(input.get<std::string>());
    return absl::OkStatus();
  }
  if (!input.is_array() || input.empty()) {
    return BadField(name, absl::StrCat("is required: ", forms, ", not empty"));
  }
  if (input.size() > kMaxEmbeddingInputs) {
    return BadField(name, absl::StrCat("holds ", input.size(), " inputs; at most ",
                                       kMaxEmbeddingInputs, " per call"));
  }
  if (token_arrays && input[0].is_number_integer()) {
    absl::StatusOr<std::vector<int32_t>> ids = TokenIds(input, name);
    if (!ids.ok()) return ids.status();
    r.token_inputs.push_back(*std::move(ids));
    return absl::OkStatus();
  }
  for (size_t i = 0; i < input.size(); ++i) {
    const Json& one = input[i];
    const std::string at = absl::StrCat(name, "[", i, "]");
    if (one.is_string() && r.token_inputs.empty()) {
      if (one.get_ref<const std::string&>().empty()) return BadField(at, "must not be empty");
      r.texts.push_back(one.get<std::string>());
    } else if (token_arrays && one.is_array() && r.texts.empty()) {
      absl::StatusOr<std::vector<int32_t>> ids = TokenIds(one, at);
      if (!ids.ok()) return ids.status();
      r.token_inputs.push_back(*std::move(ids));
    } else {
      return BadField(at, absl::StrCat("must be like the others: ", forms));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<EmbeddingRequest> ParseEmbeddingRequest(absl::string_view body) {
  absl::StatusOr<Json> j = ParseJsonObject(body);
  if (!j.ok()) return j.status();
  EmbeddingRequest r;
  auto model = j->find("model");
  if (model == j->end() || !model->is_string() || model->get_ref<const std::string&>().empty()) {
    return BadField("model", "is required: a non-empty string (GET /v1/models lists them)");
  }
  r.model = model->get<std::string>();
  auto input = j->find("input");
  if (input == j->end()) return BadField("input", "is required");
  if (absl::Status s = ReadEmbeddingInput(*input, "input", /*token_arrays=*/true, r); !s.ok()) {
    return s;
  }
  if (auto it = j->find("encoding_format"); it != j->end() && !it->is_null()) {
    if (*it != "float" && *it != "base64") {
      return BadField("encoding_format", "must be \"float\" or \"base64\"");
    }
    r.base64 = *it == "base64";
  }
  if (auto it = j->find("dimensions"); it != j->end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1) {
      return BadField("dimensions", "must be a positive integer");
    }
    r.dimensions = it->get<int64_t>();
  }
  if (absl::Status s = RejectOtherFields(*j, kEmbeddingFields, ""); !s.ok()) return s;
  return r;
}

}  // namespace hearth::serve
