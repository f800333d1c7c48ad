#include "tests/testing/cache_scope_audit.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace hearth::testing {

void CacheScopeAudit::Record(RequestId id, const RequestSpec& spec) {
  const CacheScope& c = spec.cache_scope;
  Entry e;
  e.tokens = spec.prompt_token_ids;
  e.opt_out = c.opt_out;
  e.mean_pool = spec.kind == RequestKind::kEmbed && spec.pooling == Pooling::kMean;
  // A name is one scope whether it holds a whole request or a prefix.
  e.own_scope = c.name.empty() ? absl::StrCat("member ", spec.user.value())
                               : absl::StrCat("name '", c.name, "'");
  e.own_from = c.shared_prefix_tokens / block_size_;
  e.first_scope = e.own_from > 0 ? absl::StrCat("name '", c.shared_prefix_scope, "'")
                                 : e.own_scope;
  entries_[id] = std::move(e);
}

bool CacheScopeAudit::SameBlock(const Entry& a, const Entry& b,
                                const std::vector<TokenId>& b_tokens, int32_t k) const {
  const auto end = static_cast<size_t>(k + 1) * static_cast<size_t>(block_size_);
  if (a.opt_out || b.opt_out || a.tokens.size() < end || b_tokens.size() < end) return false;
  if (!std::equal(a.tokens.begin(), a.tokens.begin() + static_cast<ptrdiff_t>(end),
                  b_tokens.begin())) {
    return false;
  }
  if (a.first_scope != b.first_scope) return false;
  // Past a shared prefix, where the own scope entered and which it is.
  const bool a_own = a.own_from > 0 && k >= a.own_from;
  const bool b_own = b.own_from > 0 && k >= b.own_from;
  if (a_own != b_own) return false;
  return !a_own || (a.own_from == b.own_from && a.own_scope == b.own_scope);
}

absl::Status CacheScopeAudit::Check(
    const absl::flat_hash_map<RequestId, RequestResult>& results,
    const std::function<TokenId(RequestId, int32_t)>& token_at) const {
  absl::flat_hash_map<RequestId, std::vector<TokenId>> all_tokens;
  for (const auto& [id, e] : entries_) {
    std::vector<TokenId>& t = all_tokens[id];
    t = e.tokens;
    auto r = results.find(id);
    if (r == results.end() || e.tokens.empty()) continue;
    const auto prompt = static_cast<int32_t>(e.tokens.size());
    for (int32_t k = 0; k < r->second.output_tokens; ++k) t.push_back(token_at(id, prompt + k));
  }
  for (const auto& [id, r] : results) {
    auto it = entries_.find(id);
    if (it == entries_.end() || r.cached_prompt_tokens == 0) continue;
    const Entry& mine = it->second;
    if (!prefix_caching_ || mine.opt_out || mine.mean_pool || mine.tokens.empty()) {
      return absl::InternalError(absl::StrCat(
          "request ", id.ToString(), " reports ", r.cached_prompt_tokens,
          " cached prompt tokens but could reuse none (prefix caching ",
          prefix_caching_ ? "on" : "off", ", opt_out ", mine.opt_out, ", mean pooling ",
          mine.mean_pool, ")"));
    }
    const int32_t k = r.cached_prompt_tokens / block_size_ - 1;
    if (k < 0) continue;
    bool found = false;
    for (const auto& [other, theirs] : entries_) {
      // Any other request may have computed the block first (admission
      // order is the policy's); its own only before a preemption or retry.
      const bool before = other != id || r.preemptions + r.retries > 0;
      if (before && SameBlock(mine, theirs, all_tokens.at(other), k)) {
        found = true;
        break;
      }
    }
    if (!found) {
      return absl::InternalError(absl::StrCat(
          "request ", id.ToString(), " (", mine.first_scope, ", then ", mine.own_scope,
          " from block ", mine.own_from, ") reports ", r.cached_prompt_tokens,
          " cached prompt tokens, but no other request of its scopes has block ", k,
          " with its tokens: a hit crossed scopes"));
    }
  }
  return absl::OkStatus();
}

}  // namespace hearth::testing
