// File: tests/exec/dense_reference.h
//
// An independent, unpaged implementation of the reference transformer for
// tests: contiguous per-layer K/V arrays, no block tables, one sequence at a
// time. Executors are checked against it, so a bug in paging (wrong block,
// wrong slot, a missed copy) shows up as different tokens.

#ifndef HEARTH_TESTS_EXEC_DENSE_REFERENCE_H_
#define HEARTH_TESTS_EXEC_DENSE_REFERENCE_H_

#include <cstdint>
#include <vector>

#include "hearth/common/ids.h"
#include "hearth/exec/transformer_config.h"

namespace hearth::testing {

struct DenseResult {
  // Greedy tokens after the prompt.
  std::vector<TokenId> tokens;
  // Logits that produced each token, vocab_size values per token.
  std::vector<std::vector<float>> logits;
};

// Runs `prompt` and generates `new_tokens` tokens greedily.
DenseResult DenseGreedy(const TransformerConfig& config,
                        const std::vector<TokenId>& prompt, int32_t new_tokens);

// The embedding of `prompt`: the final-normed hidden state of its last
// position (`mean` false) or the mean over all its positions, at unit
// length.
std::vector<float> DenseEmbedding(const TransformerConfig& config,
                                  const std::vector<TokenId>& prompt, bool mean);

}  // namespace hearth::testing

#endif  // HEARTH_TESTS_EXEC_DENSE_REFERENCE_H_
