#include "hearth/sim/model_catalog.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/catalog_lookup.h"
#include "sim/quote.h"

namespace hearth {
namespace {

ModelSpec Make(std::string name, int64_t params, int32_t layers,
               int32_t hidden, int32_t heads, int32_t kv_heads,
               int32_t head_dim, int32_t context, int32_t vocab,
               bool generative = true) {
  ModelSpec m;
  m.name = std::move(name);
  m.params = params;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.head_dim = head_dim;
  m.context_length = context;
  m.vocab_size = vocab;
  m.generative = generative;
  return m;
}

std::vector<ModelSpec> BuildCatalog() {
  return {
      // huggingface.co/meta-llama/Llama-3.1-8B config.json: 32 layers, hidden
      // 4096, 32 heads, 8 KV heads (head 128), max_position_embeddings
      // 131072, vocab 128256; 8.03B parameters (model card).
      Make("Llama-3.1-8B", 8'030'261'248, 32, 4096, 32, 8, 128, 131072,
           128256),
      // huggingface.co/Qwen/Qwen2.5-7B config.json: 28 layers, hidden 3584,
      // 28 heads, 4 KV heads (head 128), max_position_embeddings 131072,
      // vocab 152064; 7.61B parameters (model card).
      Make("Qwen2.5-7B", 7'615'616'512, 28, 3584, 28, 4, 128, 131072, 152064),
      // huggingface.co/meta-llama/Llama-3.2-3B config.json: 28 layers, hidden
      // 3072, 24 heads, 8 KV heads (head 128), max_position_embeddings
      // 131072, vocab 128256; 3.21B parameters (model card).
      Make("Llama-3.2-3B", 3'212'749'824, 28, 3072, 24, 8, 128, 131072,
           128256),
      // huggingface.co/mistralai/Mistral-7B-v0.3 config.json: 32 layers,
      // hidden 4096, 32 heads, 8 KV heads (head 128), max_position_embeddings
      // 32768, vocab 32768; 7.25B parameters (model card).
      Make("Mistral-7B", 7'248'023'552, 32, 4096, 32, 8, 128, 32768, 32768),
      // huggingface.co/meta-llama/Llama-2-7b-hf config.json: 32 layers, hidden
      // 4096, 32 heads, 32 KV heads (head 128, no GQA: four times Llama-3's
      // KV per token), max_position_embeddings 4096, vocab 32000; 6.74B
      // parameters (model card). The VTC paper's model.
      Make("Llama-2-7B", 6'738'415'616, 32, 4096, 32, 32, 128, 4096, 32000),
      // huggingface.co/BAAI/bge-small-en-v1.5 config.json: BERT encoder, 12
      // layers, hidden 384, 12 heads (head 32), max_position_embeddings 512,
      // vocab 30522; 33.4M parameters (model card). Encoder only: it keeps
      // no KV cache between steps, but the figures let the roofline cost its
      // forward pass.
      Make("bge-small-en-v1.5", 33'360'000, 12, 384, 12, 12, 32, 512, 30522,
           /*generative=*/false),
  };
}

}  // namespace

const std::vector<ModelSpec>& ModelCatalog() {
  static const std::vector<ModelSpec>* const kCatalog =
      new std::vector<ModelSpec>(BuildCatalog());
  return *kCatalog;
}

absl::StatusOr<ModelSpec> FindModelSpec(std::string_view name) {
  for (const ModelSpec& m : ModelCatalog()) {
    if (internal::CatalogKey(m.name) == internal::CatalogKey(name)) return m;
  }
  std::vector<std::string> names;
  for (const ModelSpec& m : ModelCatalog()) names.push_back(m.name);
  return absl::NotFoundError(absl::StrCat("unknown model ", internal::Quote(name),
                                          "; known: ",
                                          absl::StrJoin(names, ", ")));
}

}  // namespace hearth
