// File: examples/serve/src/grammar_sampler.h
//
// Compiles a request's GBNF grammar (grammar_field.h) into llama.cpp's
// grammar sampler for the served vocabulary, once, in the member's CPU
// turn before the request is queued (prepare_generation.h): a grammar that
// does not compile is InvalidArgument naming the field that carried it,
// and the engine thread only clones the compiled one (token_sampler.h).
//
// Thread-safety: any thread; llama.cpp reads the vocabulary only.
//
// Example:
//   absl::StatusOr<CompiledGrammar> g = CompileGrammar(vocab, R"(root ::= "yes" | "no")", "grammar");
//   TokenSampler sampler(params, g->get(), seed, n_vocab);

#ifndef HEARTH_SERVE_GRAMMAR_SAMPLER_H_
#define HEARTH_SERVE_GRAMMAR_SAMPLER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llama.h"

namespace hearth::serve {

// Shared, so that a GenerationJob stays copyable; freed with
// llama_sampler_free by whichever holder is last.
using CompiledGrammar = std::shared_ptr<const llama_sampler>;

// REQUIRES: `gbnf` passed ReadGrammar's checks (bounded, no NUL, shallow).
// InvalidArgument (param `field`) when llama.cpp cannot build it: a syntax
// error, an undefined rule, no `root` rule, left recursion.
absl::StatusOr<CompiledGrammar> CompileGrammar(const llama_vocab* vocab, const std::string& gbnf,
                                               absl::string_view field);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_GRAMMAR_SAMPLER_H_
