// Validation and derived sizes of TransformerConfig.

#include "hearth/exec/transformer_config.h"

#include "absl/strings/str_format.h"

namespace hearth {

int64_t DTypeBytes(DType dtype) { return dtype == DType::kFloat32 ? 4 : 2; }

TransformerConfig Llama31_8BShape() {
  TransformerConfig c;
  c.num_layers = 32;
  c.hidden_size = 4096;
  c.num_heads = 32;
  c.num_kv_heads = 8;
  c.mlp_hidden = 14336;
  c.vocab_size = 128256;
  c.rope_theta = 500000.0f;
  c.rms_eps = 1e-5f;
  c.dtype = DType::kBFloat16;
  return c;
}

absl::Status ValidateTransformerConfig(const TransformerConfig& c) {
  auto bad = [](const char* field, int64_t value, const char* allowed) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TransformerConfig.%s = %d is invalid: %s", field, value, allowed));
  };
  if (c.num_layers < 1 || c.num_layers > 256) {
    return bad("num_layers", c.num_layers, "must be in [1, 256]");
  }
  if (c.num_heads < 1 || c.num_heads > 1024) {
    return bad("num_heads", c.num_heads, "must be in [1, 1024]");
  }
  if (c.hidden_size < 2 || c.hidden_size > (1 << 16) ||
      c.hidden_size % c.num_heads != 0) {
    return bad("hidden_size", c.hidden_size,
               "must be in [2, 65536] and a multiple of num_heads");
  }
  if (c.head_dim() % 2 != 0 || c.head_dim() > 256) {
    return bad("hidden_size", c.hidden_size,
               "hidden_size / num_heads (head_dim) must be even and <= 256");
  }
  if (c.num_kv_heads < 1 || c.num_heads % c.num_kv_heads != 0) {
    return bad("num_kv_heads", c.num_kv_heads,
               "must be >= 1 and divide num_heads");
  }
  if (c.mlp_hidden < 1 || c.mlp_hidden > (1 << 18)) {
    return bad("mlp_hidden", c.mlp_hidden, "must be in [1, 262144]");
  }
  if (c.vocab_size < 2 || c.vocab_size > (1 << 22)) {
    return bad("vocab_size", c.vocab_size, "must be in [2, 4194304]");
  }
  if (!(c.rope_theta > 1.0f)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TransformerConfig.rope_theta = %g is invalid: must be > 1",
        c.rope_theta));
  }
  if (!(c.rms_eps > 0.0f)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TransformerConfig.rms_eps = %g is invalid: must be > 0", c.rms_eps));
  }
  return absl::OkStatus();
}

int64_t KvBytesPerToken(const TransformerConfig& c) {
  return int64_t{2} * c.num_layers * c.num_kv_heads * c.head_dim() *
         DTypeBytes(c.dtype);
}

int64_t ParameterCount(const TransformerConfig& c) {
  const int64_t d = c.hidden_size;
  const int64_t qkv = d * (c.num_heads + 2 * c.num_kv_heads) * c.head_dim();
  const int64_t per_layer = 2 * d + qkv + int64_t{c.num_heads} * c.head_dim() * d +
                            3 * d * c.mlp_hidden;
  return 2 * int64_t{c.vocab_size} * d + d + c.num_layers * per_layer;
}

}  // namespace hearth
