// The tiny GGUF writer and the plain llama.cpp baseline: the file is
// deterministic, llama.cpp loads it as a llama model, text round-trips through
// its byte-level vocabulary, and the one-sequence greedy run is repeatable.
#ifdef HEARTH_LLAMA_CPP_FOUND

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"
#include "hearth_llama_cpp/text.h"
#include "llama_test_env.h"

namespace hearth::llama_cpp {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          absl::StrCat("hearth_tiny_", getpid(), "_", name, ".gguf"))
      .string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_CASE("tiny GGUF: same spec gives the same bytes, another seed other weights", "[llama_cpp]") {
  TinyModelSpec spec;
  const std::string a = TempPath("a"), b = TempPath("b"), c = TempPath("c");
  REQUIRE(WriteTinyLlamaGguf(spec, a).ok());
  REQUIRE(WriteTinyLlamaGguf(spec, b).ok());
  spec.seed = 2;
  REQUIRE(WriteTinyLlamaGguf(spec, c).ok());
  const std::string bytes_a = ReadFile(a);
  CHECK(bytes_a.size() > 100000);
  CHECK(bytes_a == ReadFile(b));
  CHECK(bytes_a != ReadFile(c));
  CHECK(bytes_a.size() == ReadFile(c).size());
  for (const std::string& p : {a, b, c}) std::remove(p.c_str());
}

TEST_CASE("tiny GGUF: invalid specs are refused with the field named", "[llama_cpp]") {
  TinyModelSpec spec;
  spec.n_embd = 66;  // not a multiple of n_head = 4
  absl::Status s = WriteTinyLlamaGguf(spec, TempPath("bad"));
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find("n_embd") != std::string::npos);
  spec = TinyModelSpec{};
  spec.n_head_kv = 3;
  CHECK(WriteTinyLlamaGguf(spec, TempPath("bad")).code() == absl::StatusCode::kInvalidArgument);
  spec = TinyModelSpec{};
  spec.n_layer = 0;
  CHECK(WriteTinyLlamaGguf(spec, TempPath("bad")).code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("tiny GGUF: llama.cpp loads it and text round-trips byte for byte", "[llama_cpp]") {
  TinyModelSpec spec;
  spec.n_layer = 3;
  auto tiny = testing::TinyLlama::Create(spec);
  REQUIRE(tiny.ok());
  llama_model* model = (*tiny)->model();
  CHECK(llama_model_n_layer(model) == 3);
  CHECK(llama_model_n_embd(model) == spec.n_embd);
  const llama_vocab* vocab = llama_model_get_vocab(model);
  CHECK(llama_vocab_n_tokens(vocab) == kTinyVocabSize);
  CHECK(llama_vocab_eos(vocab) == kTinyEosToken);
  CHECK(llama_vocab_is_eog(vocab, kTinyEosToken));

  // Any valid UTF-8 (llama.cpp's tokenizer turns invalid bytes into U+FFFD).
  const std::string text = "Hello, world!\n\tThe k\xc3\xbc" "che is warm. \x01\x7f";
  absl::StatusOr<std::vector<int32_t>> ids = Tokenize(model, text);
  REQUIRE(ids.ok());
  CHECK(*ids == ByteTokens(text));
  CHECK(Detokenize(model, *ids) == text);
  CHECK(ByteText(*ids) == text);
  CHECK(Tokenize(model, "").status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("plain llama.cpp greedy run is repeatable and independent of prompt chunking",
          "[llama_cpp]") {
  auto tiny = testing::TinyLlama::Create();
  REQUIRE(tiny.ok());
  ContextOptions copts;
  copts.n_ctx = 512;
  copts.n_batch = 64;
  copts.n_seq_max = 1;
  auto ctx = (*tiny)->NewContext(copts);
  REQUIRE(ctx.ok());
  const std::vector<int32_t> prompt = ByteTokens("A quiet evening in a house with five people.");
  GreedyRunOptions keep;
  keep.keep_logits = true;
  auto first = RunGreedyAlone(ctx->get(), prompt, 20, keep);
  REQUIRE(first.ok());
  auto again = RunGreedyAlone(ctx->get(), prompt, 20, keep);
  REQUIRE(again.ok());
  CHECK(first->tokens == again->tokens);
  REQUIRE(first->logits.size() == first->tokens.size());
  CHECK(first->logits[0].size() == static_cast<size_t>(kTinyVocabSize));

  GreedyRunOptions chunked = keep;
  chunked.prompt_chunk = 7;
  auto by_chunks = RunGreedyAlone(ctx->get(), prompt, 20, chunked);
  REQUIRE(by_chunks.ok());
  REQUIRE(by_chunks->logits.size() == first->logits.size());
  for (size_t i = 0; i < first->logits.size(); ++i) {
    CHECK(testing::MaxAbsDiff(first->logits[i], by_chunks->logits[i]) < 1e-3f);
  }
  // The random model does not just repeat one token.
  std::vector<int32_t> distinct = first->tokens;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  CHECK(distinct.size() > 3);

  CHECK(RunGreedyAlone(ctx->get(), {}, 5, keep).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(RunGreedyAlone(ctx->get(), prompt, 600, keep).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hearth::llama_cpp

#endif  // HEARTH_LLAMA_CPP_FOUND
