#include "model_facts.h"

#include <sys/stat.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hearth::serve {
namespace {

// llama.cpp's file types by the names quantizers use.
const char* FileTypeName(llama_ftype type) {
  switch (type) {
    case LLAMA_FTYPE_ALL_F32: return "F32";
    case LLAMA_FTYPE_MOSTLY_F16: return "F16";
    case LLAMA_FTYPE_MOSTLY_BF16: return "BF16";
    case LLAMA_FTYPE_MOSTLY_Q4_0: return "Q4_0";
    case LLAMA_FTYPE_MOSTLY_Q4_1: return "Q4_1";
    case LLAMA_FTYPE_MOSTLY_Q5_0: return "Q5_0";
    case LLAMA_FTYPE_MOSTLY_Q5_1: return "Q5_1";
    case LLAMA_FTYPE_MOSTLY_Q8_0: return "Q8_0";
    case LLAMA_FTYPE_MOSTLY_Q2_K: return "Q2_K";
    case LLAMA_FTYPE_MOSTLY_Q3_K_S: return "Q3_K_S";
    case LLAMA_FTYPE_MOSTLY_Q3_K_M: return "Q3_K_M";
    case LLAMA_FTYPE_MOSTLY_Q3_K_L: return "Q3_K_L";
    case LLAMA_FTYPE_MOSTLY_Q4_K_S: return "Q4_K_S";
    case LLAMA_FTYPE_MOSTLY_Q4_K_M: return "Q4_K_M";
    case LLAMA_FTYPE_MOSTLY_Q5_K_S: return "Q5_K_S";
    case LLAMA_FTYPE_MOSTLY_Q5_K_M: return "Q5_K_M";
    case LLAMA_FTYPE_MOSTLY_Q6_K: return "Q6_K";
    case LLAMA_FTYPE_MOSTLY_IQ4_NL: return "IQ4_NL";
    case LLAMA_FTYPE_MOSTLY_IQ4_XS: return "IQ4_XS";
    default: return "";
  }
}

// FNV-1a, 64 bits: stable across runs and builds, unlike absl::Hash.
uint64_t Fnv1a(absl::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace

ModelFacts FileFacts(const std::string& path) {
  ModelFacts f;
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    f.file_bytes = static_cast<int64_t>(st.st_size);
    f.modified = absl::TimeFromTimespec(st.st_mtim);
  }
  f.identity = absl::StrFormat(
      "%016x", Fnv1a(absl::StrCat(path, "\n", f.file_bytes, "\n", absl::ToUnixNanos(f.modified))));
  return f;
}

ModelFacts ReadModelFacts(const llama_model* model, ModelFacts f) {
  char arch[128] = {0};
  if (llama_model_meta_val_str(model, "general.architecture", arch, sizeof(arch)) > 0) {
    f.architecture = arch;
  }
  f.parameters = llama_model_n_params(model);
  f.quantization = FileTypeName(llama_model_ftype(model));
  f.trained_context = llama_model_n_ctx_train(model);
  return f;
}

}  // namespace hearth::serve
