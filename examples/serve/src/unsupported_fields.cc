#include "unsupported_fields.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "json_fields.h"
#include "openai_request.h"

namespace hearth::serve {

using Json = nlohmann::json;

namespace neutral {
namespace {
bool IsNumber(const Json& v, double neutral) {
  return v.is_number() && v.get<double>() == neutral;
}
}  // namespace

bool IsZero(const Json& v) { return IsNumber(v, 0); }
bool IsPenaltyWindow(const Json& v) { return IsNumber(v, kPenaltyLastN); }
bool OnlyAbsent(const Json&) { return false; }
bool IsFalse(const Json& v) { return v.is_boolean() && !v.get<bool>(); }
// nlohmann's empty() is false for every string, "" included.
bool IsEmpty(const Json& v) {
  return v.is_string() ? v.get_ref<const std::string&>().empty()
                       : (v.is_array() || v.is_object()) && v.empty();
}
}  // namespace neutral

namespace {

using namespace neutral;  // NOLINT: the table below reads as a list of values.

bool IsOne(const Json& v) { return v.is_number_integer() && v.get<int64_t>() == 1; }
bool IsNoneOrAuto(const Json& v) { return v == "none" || v == "auto"; }
bool IsTextOnly(const Json& v) { return v == Json::array({"text"}); }

static_assert(kPenaltyLastN == 64, "the penalty_last_n messages below say 64");

// OpenAI's fields first, then llama-server's sampling extensions, which
// clients written for llama.cpp send.
constexpr UnsupportedField kUnsupported[] = {
    {"best_of", IsOne, "must be 1; keeping the best of several samples is not supported (n "
                       "returns them all)"},
    {"echo", IsFalse, "is not supported (false or absent)"},
    {"tools", IsEmpty, "is not supported (an empty array or absent)"},
    {"functions", IsEmpty, "is not supported (an empty array or absent)"},
    {"tool_choice", IsNoneOrAuto, "must be \"none\" or \"auto\" (or absent): no tools"},
    {"function_call", IsNoneOrAuto, "must be \"none\" or \"auto\" (or absent): no functions"},
    {"suffix", IsEmpty, "is not supported (an empty string or absent)"},
    {"modalities", IsTextOnly, "must be [\"text\"] or absent: only text is generated"},
    {"audio", OnlyAbsent, "is not supported (absent): only text is generated"},
    {"prediction", OnlyAbsent, "is not supported (absent)"},
    {"reasoning_effort", OnlyAbsent, "is not supported (absent)"},
    {"web_search_options", OnlyAbsent, "is not supported (absent)"},
    {"typical_p", [](const Json& v) { return v.is_number() && v.get<double>() == 1; },
     "is not supported (1 or absent)"},
    {"mirostat", IsZero, "is not supported (0 or absent)"},
    {"dynatemp_range", IsZero, "is not supported (0 or absent)"},
    {"xtc_probability", IsZero, "is not supported (0 or absent)"},
    {"dry_multiplier", IsZero, "is not supported (0 or absent)"},
    {"top_n_sigma", [](const Json& v) { return v.is_number() && v.get<double>() <= 0; },
     "is not supported (-1 or absent)"},
    {"n_probs", IsZero, "is not supported (0 or absent); use logprobs"},
    {"ignore_eos", IsFalse, "is not supported (false or absent)"},
    {"n_predict", OnlyAbsent, "is not supported (absent); use max_tokens"},
    {"store", IsFalse, "is not supported (false or absent): completions are not stored"},
    {"service_tier", [](const Json& v) { return v == "auto" || v == "default"; },
     "must be \"auto\" or \"default\" (or absent): one tier is served"},
    // Only meaningful with tools, which are refused above.
    {"parallel_tool_calls", [](const Json& v) { return v.is_boolean(); },
     "must be true or false (or absent); no tools are called"},
    {"repeat_last_n", IsPenaltyWindow,
     "must be 64 or absent: penalties look at the answer's last 64 tokens"},
    {"penalty_last_n", IsPenaltyWindow,
     "must be 64 or absent: penalties look at the answer's last 64 tokens"},
};

}  // namespace

absl::Status RejectFields(const Json& object, absl::Span<const UnsupportedField> fields,
                          absl::string_view prefix) {
  for (const UnsupportedField& u : fields) {
    auto it = object.find(u.field);
    if (it == object.end() || it->is_null() || u.neutral(*it)) continue;
    return BadField(absl::StrCat(prefix, u.field), u.allowed);
  }
  return absl::OkStatus();
}

absl::Status RejectUnsupportedFields(const Json& body) { return RejectFields(body, kUnsupported); }

namespace {

// Longer names are not repeated: every field of the API is far shorter.
constexpr size_t kMaxEchoedFieldName = 64;

bool Listed(absl::string_view name, absl::Span<const absl::string_view> read) {
  for (absl::string_view r : read) {
    if (r == name) return true;
  }
  for (absl::string_view r : kInformationalFields) {
    if (r == name) return true;
  }
  for (const UnsupportedField& u : kUnsupported) {
    if (name == u.field) return true;
  }
  return false;
}

bool Printable(absl::string_view name) {
  if (name.empty() || name.size() > kMaxEchoedFieldName) return false;
  for (char c : name) {
    if (c < 0x21 || c > 0x7e || c == '\'' || c == '"' || c == '\\') return false;
  }
  return true;
}

// The first non-null field of `object` that `listed` refuses, named after
// `prefix`.
template <typename Pred>
absl::Status RejectOthers(const Json& object, absl::string_view prefix, const Pred& listed) {
  static constexpr absl::string_view kWhy =
      "is not a field this endpoint implements; hearth-serve refuses a field it does not "
      "implement rather than ignore it";
  for (const auto& item : object.items()) {
    // null asks for nothing, as it does for every field the parsers read.
    if (item.value().is_null() || listed(item.key())) continue;
    const std::string& name = item.key();
    if (Printable(name)) return BadField(absl::StrCat(prefix, name), kWhy);
    return absl::InvalidArgumentError(absl::StrCat("a field named by ", name.size(),
                                                   " bytes (not repeated here) ", kWhy));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RejectUnknownFields(const Json& body, absl::Span<const absl::string_view> read) {
  return RejectOthers(body, "", [read](absl::string_view name) { return Listed(name, read); });
}

absl::Status RejectOtherFields(const Json& object, absl::Span<const absl::string_view> read,
                               absl::string_view prefix) {
  return RejectOthers(object, prefix, [read](absl::string_view name) {
    return std::find(read.begin(), read.end(), name) != read.end();
  });
}

}  // namespace hearth::serve
