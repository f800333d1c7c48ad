// File: hearth_llama_cpp/tiny_gguf.h
//
// Writes a tiny llama-architecture GGUF with seeded random weights, so the
// integration and its tests run real llama.cpp forward passes without
// downloading a model. The file is written with ggml's own GGUF writer
// (gguf_* from libggml-base) and loads with llama_model_load_from_file().
//
// The vocabulary is byte level: token i (0..255) is byte i, spelled with
// GPT-2's byte-to-unicode alphabet and no merges, so llama.cpp's BPE
// tokenizer maps any valid UTF-8 text to one token per byte and detokenizing
// returns the text exactly (invalid UTF-8 becomes U+FFFD in llama.cpp's
// tokenizer first). Two control tokens follow: BOS (256) and EOS (257). Greedy
// decoding from random weights ends at EOS now and then, which exercises the
// engine's end-of-sequence path.
//
// Same spec (seed included) -> byte-identical file.
//
// Example:
//   hearth::llama_cpp::TinyModelSpec spec;
//   spec.seed = 7;
//   if (absl::Status s = hearth::llama_cpp::WriteTinyLlamaGguf(spec, "/tmp/tiny.gguf"); !s.ok()) return s;
//   std::vector<int32_t> ids = hearth::llama_cpp::ByteTokens("hello");

#ifndef HEARTH_LLAMA_CPP_TINY_GGUF_H_
#define HEARTH_LLAMA_CPP_TINY_GGUF_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace hearth::llama_cpp {

inline constexpr int32_t kTinyVocabSize = 258;
inline constexpr int32_t kTinyBosToken = 256;
inline constexpr int32_t kTinyEosToken = 257;

struct TinyModelSpec {
  // Transformer blocks. Must be in [1, 64].
  int32_t n_layer = 2;
  // Model width. Must be a positive multiple of n_head, with an even head
  // size (RoPE rotates pairs).
  int32_t n_embd = 64;
  // Attention heads; n_head_kv must divide it (grouped-query attention).
  int32_t n_head = 4;
  int32_t n_head_kv = 2;
  // Feed-forward width. Must be >= 1.
  int32_t n_ff = 128;
  // Trained context length written into the file; contexts may not exceed it.
  int32_t n_ctx_train = 8192;
  // Seeds every weight.
  uint64_t seed = 1;
  // Zeroes the output rows of BOS and EOS so their logit is 0 while byte
  // tokens' logits spread around it: greedy decoding then practically never
  // ends early (for measurements that need a fixed number of sequences).
  bool suppress_control_tokens = false;
};

// WriteTinyLlamaGguf()
//
// Writes the model described by `spec` to `path` (F32 weights). InvalidArgument
// names a bad field; Internal when the file cannot be written.
absl::Status WriteTinyLlamaGguf(const TinyModelSpec& spec, const std::string& path);

// The tiny vocabulary's tokens for `text`: one per byte, id = byte value.
std::vector<int32_t> ByteTokens(std::string_view text);

// The text of byte tokens (ids 0..255); control tokens are skipped.
std::string ByteText(absl::Span<const int32_t> tokens);

}  // namespace hearth::llama_cpp

#endif  // HEARTH_LLAMA_CPP_TINY_GGUF_H_
