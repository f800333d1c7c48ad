#include "logit_bias_field.h"

#include <cmath>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "json_fields.h"

namespace hearth::serve {
namespace {

using Json = nlohmann::json;

constexpr const char* kField = "logit_bias";

// A token id spelled as a JSON key: 1 to 10 decimal digits (no sign, no
// spaces), within int32_t. Anything else is not an id.
bool ParseTokenId(const std::string& key, int32_t& id) {
  if (key.empty() || key.size() > 10) return false;
  for (char c : key) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(key, &id);
}

// A key shown in an error, cut short: the body is the client's, and an
// error must not echo a megabyte back.
std::string Shown(const std::string& key) {
  return key.size() <= 16 ? key : absl::StrCat(key.substr(0, 16), "...");
}

}  // namespace

absl::Status ReadLogitBias(const Json& body, std::vector<TokenBias>& out) {
  auto it = body.find(kField);
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object() || it->size() > kMaxLogitBiasEntries) {
    return BadField(kField, absl::StrCat("must be an object of at most ", kMaxLogitBiasEntries,
                                         " entries, token id (a decimal string) to a number in "
                                         "[-100, 100]"));
  }
  absl::flat_hash_set<int32_t> seen;
  for (auto entry = it->begin(); entry != it->end(); ++entry) {
    int32_t id = 0;
    if (!ParseTokenId(entry.key(), id)) {
      return BadField(kField, absl::StrCat("key \"", Shown(entry.key()),
                                           "\" is not a token id: keys are decimal token ids "
                                           "(\"42\"), not token text"));
    }
    // "7" and "007" are one token; which bias was meant is not knowable.
    if (!seen.insert(id).second) {
      return BadField(kField, absl::StrCat("names token ", id, " twice"));
    }
    const Json& value = entry.value();
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < -100 ||
        value.get<double>() > 100) {
      return BadField(kField, absl::StrCat("value for token ", id,
                                           " must be a number in [-100, 100] (-100 bans it)"));
    }
    out.push_back({id, static_cast<float>(value.get<double>())});
  }
  return absl::OkStatus();
}

absl::Status CheckLogitBiasTokens(absl::Span<const TokenBias> bias, int32_t n_vocab) {
  for (const TokenBias& b : bias) {
    if (b.token < 0 || b.token >= n_vocab) {
      return BadField(kField, absl::StrCat("names token ", b.token, "; this model's token ids are "
                                           "0 to ", n_vocab - 1));
    }
  }
  return absl::OkStatus();
}

}  // namespace hearth::serve
