#include "props_json.h"

#include "absl/strings/str_cat.h"
#include "hearth/version.h"
#include "openai_request.h"

namespace hearth::serve {
namespace {

// llama.cpp's LLAMA_DEFAULT_SEED, which llama-server reports for "a seed
// drawn per request": what a request without `seed` gets here too.
constexpr uint32_t kRandomSeed = 0xFFFFFFFF;

nlohmann::json DefaultParams(const ServeProps& props) {
  const SamplingParams d;
  return {{"n_predict", props.default_max_tokens},
          {"max_tokens", props.default_max_tokens},
          {"temperature", d.temperature},
          {"top_k", d.top_k},
          {"top_p", d.top_p},
          {"min_p", d.min_p},
          {"repeat_last_n", kPenaltyLastN},
          {"repeat_penalty", d.repeat_penalty},
          {"presence_penalty", d.presence_penalty},
          {"frequency_penalty", d.frequency_penalty},
          {"seed", kRandomSeed},
          {"n_probs", 0},
          {"stop", nlohmann::json::array()},
          {"stream", false}};
}

}  // namespace

nlohmann::json PropsJson(const ServeProps& props) {
  return {{"default_generation_settings",
           {{"n_ctx", props.n_ctx}, {"speculative", false}, {"params", DefaultParams(props)}}},
          {"total_slots", props.total_slots},
          {"model_path", props.model_path},
          {"model_alias", props.model_alias},
          {"chat_template", props.chat_template},
          {"modalities", {{"vision", false}, {"audio", false}}},
          {"build_info", absl::StrCat("hearth-serve ", HEARTH_VERSION_STRING)}};
}

}  // namespace hearth::serve
