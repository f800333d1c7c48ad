// File: examples/serve/src/model_facts.h
//
// What is true of the served model file, for the routes that describe a
// model (Ollama's /api/tags, /api/show and /api/ps): its architecture,
// parameter count, quantization and trained context from the GGUF (read
// through llama.cpp), its file's size and modification time. Read once at
// start; immutable after.
//
// Thread-safety: a plain struct, read-only once filled.
//
// Example:
//   ModelFacts facts = ReadModelFacts(model, FileFacts(path));

#ifndef HEARTH_SERVE_MODEL_FACTS_H_
#define HEARTH_SERVE_MODEL_FACTS_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "llama.h"

namespace hearth::serve {

struct ModelFacts {
  // general.architecture ("llama", "qwen2"); "" when the file names none.
  std::string architecture;
  uint64_t parameters = 0;
  // llama.cpp's name of the file type ("Q4_K_M", "F16"); "" when unknown.
  std::string quantization;
  // The GGUF file's bytes and modification time.
  int64_t file_bytes = 0;
  absl::Time modified = absl::UnixEpoch();
  // 16 hex digits derived from the file's path, size and time: changes
  // when the file does. An identity, not a hash of the content (hashing
  // gigabytes at every start would delay serving).
  std::string identity;
  int32_t trained_context = 0;
};

// The file's size, time and identity. `path` must exist.
ModelFacts FileFacts(const std::string& path);

// `file` (FileFacts) completed with what the loaded `model` says.
ModelFacts ReadModelFacts(const llama_model* model, ModelFacts file);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_MODEL_FACTS_H_
