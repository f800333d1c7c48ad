#include "hearth_llama_cpp/tiny_gguf.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ggml.h"
#include "gguf.h"

namespace hearth::llama_cpp {
namespace {

struct GgufDeleter {
  void operator()(gguf_context* ctx) const { gguf_free(ctx); }
};
struct GgmlDeleter {
  void operator()(ggml_context* ctx) const { ggml_free(ctx); }
};

absl::Status Validate(const TinyModelSpec& s) {
  if (s.n_layer < 1 || s.n_layer > 64) {
    return absl::InvalidArgumentError(absl::StrCat("n_layer is ", s.n_layer, "; allowed: [1, 64]"));
  }
  if (s.n_head < 1 || s.n_head_kv < 1 || s.n_head % s.n_head_kv != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "n_head (", s.n_head, ") must be a positive multiple of n_head_kv (", s.n_head_kv, ")"));
  }
  if (s.n_embd < 1 || s.n_embd % s.n_head != 0 || (s.n_embd / s.n_head) % 2 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "n_embd (", s.n_embd, ") must be a positive multiple of n_head (", s.n_head,
        ") with an even head size"));
  }
  if (s.n_ff < 1) return absl::InvalidArgumentError("n_ff must be >= 1");
  if (s.n_ctx_train < 2) return absl::InvalidArgumentError("n_ctx_train must be >= 2");
  return absl::OkStatus();
}

// GPT-2's printable alphabet for bytes: printable Latin-1 bytes stand for
// themselves, the others are shifted to U+0100 and up, so every byte is one
// visible code point and BPE never sees a raw control byte.
std::string ByteSpelling(int byte) {
  const bool printable = (byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) ||
                         (byte >= 174 && byte <= 255);
  int code_point = byte;
  if (!printable) {
    int shifted = 0;
    for (int b = 0; b < byte; ++b) {
      const bool p = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      if (!p) ++shifted;
    }
    code_point = 256 + shifted;
  }
  std::string utf8;
  if (code_point < 0x80) {
    utf8.push_back(static_cast<char>(code_point));
  } else {
    utf8.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    utf8.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
  return utf8;
}

// Uniform in [-1, 1) from the top 53 bits: the same on every platform,
// unlike std::uniform_real_distribution.
float UnitUniform(std::mt19937_64& rng) {
  return static_cast<float>(static_cast<double>(rng() >> 11) * 0x1.0p-52 - 1.0);
}

class TensorWriter {
 public:
  TensorWriter(ggml_context* ggml, gguf_context* gguf, uint64_t seed)
      : ggml_(ggml), gguf_(gguf), rng_(seed) {}

  // Weights with standard deviation `stddev` (uniform noise, scaled).
  float* Random(const std::string& name, int64_t ne0, int64_t ne1, float stddev) {
    ggml_tensor* t = Add(name, ne0, ne1);
    float* data = static_cast<float*>(t->data);
    const float scale = stddev * std::sqrt(3.0f);
    for (int64_t i = 0; i < ne0 * ne1; ++i) data[i] = scale * UnitUniform(rng_);
    return data;
  }
  void Ones(const std::string& name, int64_t ne0) {
    ggml_tensor* t = Add(name, ne0, 1);
    float* data = static_cast<float*>(t->data);
    for (int64_t i = 0; i < ne0; ++i) data[i] = 1.0f;
  }

 private:
  ggml_tensor* Add(const std::string& name, int64_t ne0, int64_t ne1) {
    ggml_tensor* t = ne1 == 1 ? ggml_new_tensor_1d(ggml_, GGML_TYPE_F32, ne0)
                              : ggml_new_tensor_2d(ggml_, GGML_TYPE_F32, ne0, ne1);
    ggml_set_name(t, name.c_str());
    gguf_add_tensor(gguf_, t);
    return t;
  }

  ggml_context* ggml_;
  gguf_context* gguf_;
  std::mt19937_64 rng_;
};

void WriteMetadata(const TinyModelSpec& s, gguf_context* g) {
  gguf_set_val_str(g, "general.architecture", "llama");
  gguf_set_val_str(g, "general.name", "hearth-tiny-llama");
  gguf_set_val_u32(g, "llama.context_length", static_cast<uint32_t>(s.n_ctx_train));
  gguf_set_val_u32(g, "llama.embedding_length", static_cast<uint32_t>(s.n_embd));
  gguf_set_val_u32(g, "llama.block_count", static_cast<uint32_t>(s.n_layer));
  gguf_set_val_u32(g, "llama.feed_forward_length", static_cast<uint32_t>(s.n_ff));
  gguf_set_val_u32(g, "llama.attention.head_count", static_cast<uint32_t>(s.n_head));
  gguf_set_val_u32(g, "llama.attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  gguf_set_val_u32(g, "llama.rope.dimension_count", static_cast<uint32_t>(s.n_embd / s.n_head));
  gguf_set_val_f32(g, "llama.rope.freq_base", 10000.0f);
  gguf_set_val_f32(g, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
  gguf_set_val_u32(g, "llama.vocab_size", static_cast<uint32_t>(kTinyVocabSize));
  gguf_set_val_u32(g, "general.file_type", 0);  // all F32

  std::vector<std::string> texts;
  std::vector<int32_t> types;
  for (int b = 0; b < 256; ++b) {
    texts.push_back(ByteSpelling(b));
    types.push_back(1);  // LLAMA_TOKEN_TYPE_NORMAL
  }
  texts.push_back("<s>");
  texts.push_back("</s>");
  types.push_back(3);  // LLAMA_TOKEN_TYPE_CONTROL
  types.push_back(3);
  std::vector<const char*> ptrs;
  for (const std::string& t : texts) ptrs.push_back(t.c_str());
  gguf_set_val_str(g, "tokenizer.ggml.model", "gpt2");
  gguf_set_val_str(g, "tokenizer.ggml.pre", "default");
  gguf_set_arr_str(g, "tokenizer.ggml.tokens", ptrs.data(), ptrs.size());
  gguf_set_arr_data(g, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types.data(), types.size());
  // BPE needs the key; with no merges every byte stays its own token.
  gguf_set_arr_str(g, "tokenizer.ggml.merges", ptrs.data(), 0);
  gguf_set_val_u32(g, "tokenizer.ggml.bos_token_id", kTinyBosToken);
  gguf_set_val_u32(g, "tokenizer.ggml.eos_token_id", kTinyEosToken);
  gguf_set_val_bool(g, "tokenizer.ggml.add_bos_token", false);
  gguf_set_val_bool(g, "tokenizer.ggml.add_eos_token", false);
}

void WriteTensors(const TinyModelSpec& s, TensorWriter& w) {
  const int64_t d = s.n_embd;
  const int64_t d_kv = d / s.n_head * s.n_head_kv;
  const float in_std = 1.0f / std::sqrt(static_cast<float>(d));
  const float ff_std = 1.0f / std::sqrt(static_cast<float>(s.n_ff));
  w.Random("token_embd.weight", d, kTinyVocabSize, 1.0f);
  w.Ones("output_norm.weight", d);
  // Larger than 1/sqrt(d) so top logits are well separated (fewer near-ties
  // for the equivalence tests to skip).
  float* output = w.Random("output.weight", d, kTinyVocabSize, 3.0f * in_std);
  if (s.suppress_control_tokens) {
    // Row t (ne0 = d floats) produces token t's logit.
    std::fill(output + int64_t{kTinyBosToken} * d, output + int64_t{kTinyVocabSize} * d, 0.0f);
  }
  for (int32_t i = 0; i < s.n_layer; ++i) {
    const std::string p = absl::StrFormat("blk.%d.", i);
    w.Ones(p + "attn_norm.weight", d);
    w.Random(p + "attn_q.weight", d, d, in_std);
    w.Random(p + "attn_k.weight", d, d_kv, in_std);
    w.Random(p + "attn_v.weight", d, d_kv, in_std);
    w.Random(p + "attn_output.weight", d, d, in_std);
    w.Ones(p + "ffn_norm.weight", d);
    w.Random(p + "ffn_gate.weight", d, s.n_ff, in_std);
    w.Random(p + "ffn_up.weight", d, s.n_ff, in_std);
    w.Random(p + "ffn_down.weight", s.n_ff, d, ff_std);
  }
}

}  // namespace

absl::Status WriteTinyLlamaGguf(const TinyModelSpec& spec, const std::string& path) {
  if (absl::Status s = Validate(spec); !s.ok()) return s;
  const int64_t d = spec.n_embd;
  const int64_t d_kv = d / spec.n_head * spec.n_head_kv;
  const int64_t floats =
      2 * d * kTinyVocabSize + d +
      spec.n_layer * (2 * d + 2 * d * d + 2 * d * d_kv + 3 * d * spec.n_ff);
  const int64_t n_tensors = 3 + 9 * static_cast<int64_t>(spec.n_layer);
  ggml_init_params params{};
  params.mem_size = static_cast<size_t>(floats) * sizeof(float) +
                    static_cast<size_t>(n_tensors) * (ggml_tensor_overhead() + 64);
  params.mem_buffer = nullptr;
  params.no_alloc = false;
  std::unique_ptr<ggml_context, GgmlDeleter> ggml(ggml_init(params));
  std::unique_ptr<gguf_context, GgufDeleter> gguf(gguf_init_empty());
  if (ggml == nullptr || gguf == nullptr) {
    return absl::InternalError("ggml could not allocate the tiny model's tensors");
  }
  WriteMetadata(spec, gguf.get());
  TensorWriter writer(ggml.get(), gguf.get(), spec.seed);
  WriteTensors(spec, writer);
  if (!gguf_write_to_file(gguf.get(), path.c_str(), /*only_meta=*/false)) {
    return absl::InternalError(absl::StrCat("could not write GGUF file '", path, "'"));
  }
  return absl::OkStatus();
}

std::vector<int32_t> ByteTokens(std::string_view text) {
  std::vector<int32_t> tokens;
  tokens.reserve(text.size());
  for (char c : text) tokens.push_back(static_cast<unsigned char>(c));
  return tokens;
}

std::string ByteText(absl::Span<const int32_t> tokens) {
  std::string text;
  for (int32_t t : tokens) {
    if (t >= 0 && t < 256) text.push_back(static_cast<char>(t));
  }
  return text;
}

}  // namespace hearth::llama_cpp
