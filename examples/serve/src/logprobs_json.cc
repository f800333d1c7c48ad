#include "logprobs_json.h"

#include <string>

namespace hearth::serve {
namespace {

using Json = nlohmann::json;

// The token's UTF-8 bytes as integers: how a client rebuilds a character
// split over tokens (the `token` string itself may not be valid UTF-8).
Json Bytes(const std::string& token) {
  Json out = Json::array();
  for (char c : token) out.push_back(static_cast<unsigned char>(c));
  return out;
}

}  // namespace

Json ChatLogprobs(const std::vector<TokenLogprob>& entries) {
  Json content = Json::array();
  for (const TokenLogprob& e : entries) {
    Json top = Json::array();
    for (const TopLogprob& t : e.top) {
      top.push_back({{"token", t.token}, {"logprob", t.logprob}, {"bytes", Bytes(t.token)}});
    }
    content.push_back({{"token", e.token},
                       {"logprob", e.logprob},
                       {"bytes", Bytes(e.token)},
                       {"top_logprobs", std::move(top)}});
  }
  return {{"content", std::move(content)}, {"refusal", nullptr}};
}

Json CompletionLogprobs(const std::vector<TokenLogprob>& entries, size_t first_offset) {
  Json tokens = Json::array();
  Json token_logprobs = Json::array();
  Json top_logprobs = Json::array();
  Json text_offset = Json::array();
  size_t offset = first_offset;
  for (const TokenLogprob& e : entries) {
    tokens.push_back(e.token);
    token_logprobs.push_back(e.logprob);
    Json top = Json::object();
    for (const TopLogprob& t : e.top) top[t.token] = t.logprob;
    // OpenAI always lists the sampled token too.
    top[e.token] = e.logprob;
    top_logprobs.push_back(std::move(top));
    text_offset.push_back(offset);
    offset += e.token.size();
  }
  return {{"tokens", std::move(tokens)},
          {"token_logprobs", std::move(token_logprobs)},
          {"top_logprobs", std::move(top_logprobs)},
          {"text_offset", std::move(text_offset)}};
}

}  // namespace hearth::serve
