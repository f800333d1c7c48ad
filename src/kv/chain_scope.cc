#include "kv/chain_scope.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "kv/prefix_cache.h"

namespace hearth::internal {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 (overlong
// forms, surrogates and code points past U+10FFFF are invalid).
size_t Utf8Length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return n;
}

// "" when `name` is an acceptable scope name, else what is wrong with it.
std::string NameProblem(std::string_view name) {
  if (name.size() > kMaxCacheScopeBytes) {
    return absl::StrCat("is ", name.size(), " bytes; at most ", kMaxCacheScopeBytes,
                        " (kMaxCacheScopeBytes)");
  }
  for (size_t i = 0; i < name.size();) {
    if (name[i] == '\0') return absl::StrCat("has a NUL byte at offset ", i, "; names may not");
    const size_t n = Utf8Length(name, i);
    if (n == 0) {
      return absl::StrCat("is not valid UTF-8 (byte 0x",
                          absl::Hex(static_cast<unsigned char>(name[i]), absl::kZeroPad2),
                          " at offset ", i, "); names must be UTF-8");
    }
    i += n;
  }
  return "";
}

absl::Status Bad(const char* field, const std::string& problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("RequestSpec.cache_scope.", field, " ", problem));
}

}  // namespace

ChainScope ResolveChainScope(const RequestSpec& spec, uint64_t key, int32_t block_size) {
  const CacheScope& c = spec.cache_scope;
  ChainScope out;
  out.cached = !c.opt_out;
  out.computes_every_position =
      spec.kind == RequestKind::kEmbed && spec.pooling == Pooling::kMean;
  out.own_scope = c.name.empty() ? PrefixCache::MemberScope(key, spec.user)
                                 : PrefixCache::NamedScope(key, c.name);
  // Only the blocks wholly inside the shared prefix are shared; the one that
  // extends past it holds the request's own tokens.
  const int32_t shared_blocks = c.shared_prefix_tokens / block_size;
  const uint64_t root = PrefixCache::RootHash(spec.model);
  if (shared_blocks > 0) {
    out.first_parent =
        PrefixCache::EnterScope(root, PrefixCache::NamedScope(key, c.shared_prefix_scope));
    out.own_from = shared_blocks;
  } else {
    out.first_parent = PrefixCache::EnterScope(root, out.own_scope);
  }
  const int32_t tail = spec.prompt_tokens / block_size;
  if (spec.prompt_tokens % block_size != 0) {
    const uint64_t salt =
        SpanSalt(spec.encoder_spans, int64_t{tail} * block_size, block_size);
    if (salt != 0) {
      out.tail_block = tail;
      out.tail_salt = salt;
    }
  }
  return out;
}

uint64_t SpanSalt(absl::Span<const EncoderSpan> spans, int64_t block_start, int32_t block_size) {
  const int64_t block_end = block_start + block_size;
  uint64_t salt = 0;
  for (const EncoderSpan& e : spans) {
    if (e.position >= block_end) break;
    if (int64_t{e.position} + e.length <= block_start) continue;
    // Where the span starts relative to the block, and how long it is, so a
    // block reached through different spans of one image differs too.
    const TokenId words[4] = {
        static_cast<TokenId>(e.content_hash), static_cast<TokenId>(e.content_hash >> 32),
        static_cast<TokenId>(e.position - block_start), static_cast<TokenId>(e.length)};
    salt = PrefixCache::HashBlock(salt == 0 ? PrefixCache::kRootHash : salt, words);
  }
  return salt;
}

uint64_t EncoderCacheKey(const ChainScope& scope, const EncoderSpan& span, int32_t block_size,
                         uint64_t request_nonce) {
  const uint64_t where =
      !scope.cached ? PrefixCache::EnterScope(PrefixCache::kRootHash, request_nonce)
      : scope.own_from > 0 && span.position + span.length <= scope.own_from * block_size
          ? scope.first_parent
          : PrefixCache::EnterScope(scope.first_parent, scope.own_scope);
  const TokenId words[3] = {static_cast<TokenId>(span.content_hash),
                            static_cast<TokenId>(span.content_hash >> 32),
                            static_cast<TokenId>(span.length)};
  return PrefixCache::HashBlock(where, words);
}

absl::Status ValidateCacheScope(const RequestSpec& spec) {
  const CacheScope& c = spec.cache_scope;
  if (std::string p = NameProblem(c.name); !p.empty()) return Bad("name", p);
  if (std::string p = NameProblem(c.shared_prefix_scope); !p.empty()) {
    return Bad("shared_prefix_scope", p);
  }
  if (c.shared_prefix_tokens < 0 || c.shared_prefix_tokens > spec.prompt_tokens) {
    return Bad("shared_prefix_tokens",
               absl::StrCat("is ", c.shared_prefix_tokens, "; must be in [0, prompt_tokens = ",
                            spec.prompt_tokens, "]"));
  }
  if (c.shared_prefix_tokens > 0 && c.shared_prefix_scope.empty()) {
    return Bad("shared_prefix_scope",
               absl::StrCat("is empty but shared_prefix_tokens is ", c.shared_prefix_tokens,
                            "; name the scope the shared prefix is cached in"));
  }
  if (c.shared_prefix_tokens == 0 && !c.shared_prefix_scope.empty()) {
    // Valid UTF-8 by now; the cut backs off to a character boundary.
    const std::string_view v = c.shared_prefix_scope;
    size_t cut = std::min<size_t>(v.size(), 64);
    while (cut < v.size() && cut > 0 && (static_cast<unsigned char>(v[cut]) & 0xC0) == 0x80) --cut;
    return Bad("shared_prefix_scope",
               absl::StrCat("is \"", std::string(v.substr(0, cut)), cut < v.size() ? "...\"" : "\"",
                            " but shared_prefix_tokens is 0; set both or neither"));
  }
  if (c.opt_out && (!c.name.empty() || c.shared_prefix_tokens != 0)) {
    return Bad("opt_out",
               "is true with a scope name or a shared prefix; a request that opts out of "
               "the cache has no scope");
  }
  return absl::OkStatus();
}

}  // namespace hearth::internal
