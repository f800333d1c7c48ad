// Unit tests of the cheap bound before tokenisation (prompt_bound.h) and of
// the tokenizer calls behind it (ModelText on the tiny model): the bound
// never refuses a prompt that fits, it refuses what cannot fit with a
// message stating the limit, and tokenizing stops counting past the limit
// without changing what fits.

#ifdef HEARTH_SERVE_FOUND

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <limits>
#include <random>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "hearth_llama_cpp/llama_runtime.h"
#include "hearth_llama_cpp/tiny_gguf.h"
#include "model_text.h"
#include "prompt_bound.h"

namespace hearth::serve {
namespace {

TEST_CASE("prompt bound: bytes to the fewest tokens, and the most bytes that fit", "[serve]") {
  CHECK(MinTokensForBytes(0, 4) == 0);
  CHECK(MinTokensForBytes(1, 4) == 1);
  CHECK(MinTokensForBytes(8, 4) == 2);
  CHECK(MinTokensForBytes(9, 4) == 3);
  CHECK(MinTokensForBytes(9, 0) == 0);
  CHECK(MinTokensForBytes(-5, 4) == 0);
  CHECK(MinTokensForBytes(std::numeric_limits<int64_t>::max(), 1) ==
        std::numeric_limits<int64_t>::max());
  CHECK(MaxPromptBytes({8192, 4, std::nullopt}) == 8191 * 4);
  CHECK(MaxPromptBytes({8192, 4, 192}) == 8000 * 4);
  CHECK(MaxPromptBytes({8192, 4, 9000}) == 0);
  CHECK(MaxPromptBytes({8192, 0, 192}) == std::numeric_limits<int64_t>::max());
  CHECK(MaxPromptBytes({std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::max(),
                        std::nullopt}) > 0);
}

TEST_CASE("prompt bound: a prompt whose bytes cannot fit is OutOfRange naming the limit", "[serve]") {
  const PromptBudget budget{8192, 4, std::nullopt};
  CHECK(CheckPromptBytes(8191 * 4, budget).ok());
  absl::Status s = CheckPromptBytes(8191 * 4 + 1, budget);
  CHECK(s.code() == absl::StatusCode::kOutOfRange);
  CHECK(s.message() ==
        "the prompt is 32765 bytes, so at least 8192 tokens (no token of this model stands for "
        "more than 4 bytes); with at least one token of answer that exceeds this server's context "
        "of 8192 tokens: at most 32764 bytes of prompt can fit");
  s = CheckPromptBytes(1 << 20, {8192, 4, 100});
  CHECK(s.code() == absl::StatusCode::kOutOfRange);
  CHECK(s.message().find("with max_tokens (100)") != absl::string_view::npos);
  CHECK(s.message().find("at most 32368 bytes") != absl::string_view::npos);
  // Without a bound every size passes: the tokenizer's count decides.
  CHECK(CheckPromptBytes(int64_t{1} << 40, {8192, 0, std::nullopt}).ok());
}

// The tiny model (one token per byte, plus "<s>" and "</s>"), in llama.cpp.
class TinyText {
 public:
  TinyText() {
    llama_cpp::SetLlamaLogging(false);
    REQUIRE(llama_cpp::LoadLlamaBackends("").ok());
    const std::string path = (std::filesystem::temp_directory_path() /
                              absl::StrCat("hearth_serve_prompt_bound_", getpid(), ".gguf"))
                                 .string();
    REQUIRE(llama_cpp::WriteTinyLlamaGguf({}, path).ok());
    absl::StatusOr<llama_cpp::ModelPtr> model = llama_cpp::LoadModel(path);
    std::remove(path.c_str());
    REQUIRE(model.ok());
    model_ = *std::move(model);
    text_ = std::make_unique<ModelText>(model_.get());
  }
  const ModelText& text() const { return *text_; }

 private:
  llama_cpp::ModelPtr model_;
  std::unique_ptr<ModelText> text_;
};

// Random bytes, with the control tokens' spellings, spaces and invalid
// UTF-8 among them.
std::string RandomText(std::mt19937& rng, size_t max_bytes) {
  static const char* kPieces[] = {"<s>", "</s>", " ", "  ", "\n", "\xff", "\xe2\x82", "\xe2\x82\xac",
                                  "a", "hello", "\0"};
  std::string out;
  const size_t target = rng() % (max_bytes + 1);
  while (out.size() < target) {
    if (rng() % 3 == 0) {
      out.push_back(static_cast<char>(rng() % 256));
    } else {
      const char* p = kPieces[rng() % (sizeof(kPieces) / sizeof(kPieces[0]))];
      out += *p == '\0' ? std::string(1, '\0') : std::string(p);
    }
  }
  return out;
}

TEST_CASE("model text: TokenizeUpTo as /tokenize asks, special tokens on request", "[serve]") {
  TinyText tiny;
  const ModelText& text = tiny.text();
  absl::StatusOr<std::vector<int32_t>> none = text.TokenizeUpTo("", false, true, 8);
  REQUIRE(none.ok());
  CHECK(none->empty());
  absl::StatusOr<std::vector<int32_t>> plain = text.TokenizeUpTo("ab<s>", false, false, 64);
  absl::StatusOr<std::vector<int32_t>> special = text.TokenizeUpTo("ab<s>", false, true, 64);
  absl::StatusOr<std::vector<int32_t>> with_bos = text.TokenizeUpTo("ab<s>", true, true, 64);
  REQUIRE((plain.ok() && special.ok() && with_bos.ok()));
  // "<s>" spelled out is three byte tokens as text, one control token when parsed.
  CHECK(plain->size() == special->size() + 2);
  CHECK(with_bos->size() >= special->size());
  std::string spelled;
  for (int32_t t : *special) spelled += text.Piece(t, /*spell_control=*/true);
  CHECK(spelled.find("ab") != std::string::npos);
  CHECK(spelled.find("<s>") != std::string::npos);
  CHECK(text.TokenizeUpTo("abcdef", false, false, 3).status().code() ==
        absl::StatusCode::kOutOfRange);
  // The generation path still refuses what gives no tokens.
  CHECK(text.TokenizeAtMost("", false, 8).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("prompt bound: on the tiny model it never refuses a prompt that fits", "[serve]") {
  TinyText tiny;
  const ModelText& text = tiny.text();
  // 256 byte tokens of one byte, "<s>" and "</s>" spelled out.
  REQUIRE(text.max_token_bytes() == 4);
  // (llama.cpp's BPE pre-tokenizer takes about 2 us a byte: sizes stay small.)
  std::mt19937 rng(11);
  for (int i = 0; i < 80; ++i) {
    const std::string s = RandomText(rng, 200);
    if (s.empty()) continue;
    for (bool templated : {false, true}) {
      absl::StatusOr<std::vector<int32_t>> all = text.Tokenize(s, templated);
      REQUIRE(all.ok());
      const int64_t tokens = static_cast<int64_t>(all->size());
      INFO("text of " << s.size() << " bytes, " << tokens << " tokens, templated " << templated);
      // The bound itself: no text gives fewer tokens than its bytes prove.
      REQUIRE(tokens >= MinTokensForBytes(static_cast<int64_t>(s.size()), text.max_token_bytes()));
      // So a budget the text fits is never refused on its bytes.
      const int32_t context = static_cast<int32_t>(tokens) + 1 + static_cast<int32_t>(rng() % 3);
      REQUIRE(CheckPromptBytes(static_cast<int64_t>(s.size()),
                               {context, text.max_token_bytes(), std::nullopt})
                  .ok());
    }
  }
}

TEST_CASE("TokenizeAtMost: the same tokens within the limit, the exact count past it", "[serve]") {
  TinyText tiny;
  const ModelText& text = tiny.text();
  std::mt19937 rng(5);
  for (int i = 0; i < 80; ++i) {
    const std::string s = RandomText(rng, 200);
    if (s.empty()) continue;
    const bool templated = rng() % 2 == 0;
    absl::StatusOr<std::vector<int32_t>> all = text.Tokenize(s, templated);
    REQUIRE(all.ok());
    const int32_t n = static_cast<int32_t>(all->size());
    const int32_t limit = 1 + static_cast<int32_t>(rng() % (2 * n + 2));
    absl::StatusOr<std::vector<int32_t>> capped = text.TokenizeAtMost(s, templated, limit);
    if (n <= limit) {
      REQUIRE(capped.ok());
      CHECK(*capped == *all);
    } else {
      REQUIRE(capped.status().code() == absl::StatusCode::kOutOfRange);
      CHECK(capped.status().message() == absl::StrCat("the prompt is ", n, " tokens"));
    }
  }
  CHECK(text.TokenizeAtMost("", false, 10).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(text.TokenizeAtMost("hi", false, 0).status().code() == absl::StatusCode::kInvalidArgument);
  // A text far past a small limit: one call, the count exact.
  const std::string big(1 << 16, 'x');
  CHECK(text.TokenizeAtMost(big, false, 100).status().message() == "the prompt is 65536 tokens");
}

}  // namespace
}  // namespace hearth::serve

#endif  // HEARTH_SERVE_FOUND
