// File: tests/testing/cache_scope_audit.h
//
// Checks, from the outside, that every prefix-cache hit a request reports
// came from its own cache scope (RequestSpec::cache_scope): the deepest
// block a result says was cached must be the same block, same tokens and
// same scopes entered at the same places, as one of another request (its
// prompt, or its prompt and generated tokens, whose blocks are cached too),
// or its own, computed before a preemption or retry. A hit on
// another member's or another name's block, or any hit for a request that
// opted out, is an error naming both.

#ifndef HEARTH_TESTS_TESTING_CACHE_SCOPE_AUDIT_H_
#define HEARTH_TESTS_TESTING_CACHE_SCOPE_AUDIT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "hearth/request/request_spec.h"
#include "hearth/request/request_state.h"

namespace hearth::testing {

class CacheScopeAudit {
 public:
  // `prefix_caching`: KvCacheConfig::enable_prefix_caching.
  CacheScopeAudit(int32_t block_size, bool prefix_caching)
      : block_size_(block_size), prefix_caching_(prefix_caching) {}

  // An accepted submission.
  void Record(RequestId id, const RequestSpec& spec);
  // Every result against the submissions recorded; `token_at(id, p)` is
  // the token request `id` generated at position p (past its prompt).
  absl::Status Check(const absl::flat_hash_map<RequestId, RequestResult>& results,
                     const std::function<TokenId(RequestId, int32_t)>& token_at) const;

 private:
  struct Entry {
    std::vector<TokenId> tokens;
    // Scope of the first block; the own scope entered at block own_from
    // (> 0) after a shared prefix.
    std::string first_scope, own_scope;
    int32_t own_from = 0;
    bool opt_out = false;
    // A mean-pooled embedding reuses nothing (but leaves its blocks).
    bool mean_pool = false;
  };
  // Whether block `k` of `a` and of `b` (`b_tokens`: its prompt and
  // generated tokens) are the same cached block.
  bool SameBlock(const Entry& a, const Entry& b, const std::vector<TokenId>& b_tokens,
                 int32_t k) const;

  int32_t block_size_;
  bool prefix_caching_;
  absl::flat_hash_map<RequestId, Entry> entries_;
};

}  // namespace hearth::testing

#endif  // HEARTH_TESTS_TESTING_CACHE_SCOPE_AUDIT_H_
