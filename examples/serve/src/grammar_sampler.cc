#include "grammar_sampler.h"

#include <string>

#include "json_fields.h"

namespace hearth::serve {

absl::StatusOr<CompiledGrammar> CompileGrammar(const llama_vocab* vocab, const std::string& gbnf,
                                               absl::string_view field) {
  // llama.cpp answers a grammar it cannot build with null (after printing
  // why to stderr); it never throws across its C API.
  llama_sampler* grammar = llama_sampler_init_grammar(vocab, gbnf.c_str(), "root");
  if (grammar == nullptr) {
    return BadField(field,
                    "is not a grammar llama.cpp can use: GBNF with a 'root' rule, every rule "
                    "defined, no left recursion (see llama.cpp's grammars/README.md)");
  }
  return CompiledGrammar(grammar, [](const llama_sampler* g) {
    llama_sampler_free(const_cast<llama_sampler*>(g));
  });
}

}  // namespace hearth::serve
