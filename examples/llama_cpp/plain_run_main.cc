// hearth_llama_plain: llama.cpp alone, no Hearth. Writes the tiny random
// model (or takes --model=<real.gguf>), tokenizes a prompt with llama.cpp,
// generates greedily one sequence at a time and prints the text. This is the
// baseline the Hearth-scheduled engine is compared with.
//
//   hearth_llama_plain --prompt="The house is quiet." --max_new_tokens=24

#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "hearth_llama_cpp/greedy.h"
#include "hearth_llama_cpp/llama_runtime.h"
#include "hearth_llama_cpp/text.h"
#include "hearth_llama_cpp/tiny_gguf.h"

ABSL_FLAG(std::string, model, "", "GGUF model; empty writes and uses the tiny random model");
ABSL_FLAG(std::string, tiny_path, "/tmp/hearth_tiny_llama.gguf", "where the tiny model is written");
ABSL_FLAG(std::string, prompt, "The house is quiet.", "prompt text");
ABSL_FLAG(int32_t, max_new_tokens, 24, "tokens to generate");
ABSL_FLAG(std::string, backend_dir, "", "folder of ggml backend modules (default: found by CMake)");

namespace {

absl::Status Run() {
  namespace lc = hearth::llama_cpp;
  lc::SetLlamaLogging(false);
  if (absl::Status s = lc::LoadLlamaBackends(absl::GetFlag(FLAGS_backend_dir)); !s.ok()) return s;
  std::string path = absl::GetFlag(FLAGS_model);
  if (path.empty()) {
    path = absl::GetFlag(FLAGS_tiny_path);
    if (absl::Status s = lc::WriteTinyLlamaGguf(lc::TinyModelSpec{}, path); !s.ok()) return s;
  }
  absl::StatusOr<lc::ModelPtr> model = lc::LoadModel(path);
  if (!model.ok()) return model.status();
  lc::ContextOptions copts;
  copts.n_ctx = 1024;
  copts.n_seq_max = 1;
  absl::StatusOr<lc::ContextPtr> ctx = lc::CreateContext(model->get(), copts);
  if (!ctx.ok()) return ctx.status();
  absl::StatusOr<std::vector<int32_t>> prompt = lc::Tokenize(model->get(), absl::GetFlag(FLAGS_prompt));
  if (!prompt.ok()) return prompt.status();
  absl::StatusOr<lc::GreedyRun> run =
      lc::RunGreedyAlone(ctx->get(), *prompt, absl::GetFlag(FLAGS_max_new_tokens), {});
  if (!run.ok()) return run.status();
  std::printf("model: %s\nprompt (%zu tokens): %s\n", path.c_str(), prompt->size(),
              absl::GetFlag(FLAGS_prompt).c_str());
  std::printf("generated (%zu tokens%s): %s\n", run->tokens.size(),
              run->ended_by_eog ? ", ended by end-of-generation" : "",
              lc::Detokenize(model->get(), run->tokens).c_str());
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status status = Run();
  if (!status.ok()) {
    std::fprintf(stderr, "hearth_llama_plain: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
