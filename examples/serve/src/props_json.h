// File: examples/serve/src/props_json.h
//
// GET /props in llama-server's shape, with the fields that are true for
// hearth-serve: the defaults a request gets for each field it leaves out
// (SamplingParams' defaults, the server's max_tokens, the penalty window),
// the context one request may use, how many run at once, the model and its
// chat template, and the build. Nothing of any member's requests (no
// slots, no prompts, not even whether one is running): every member's key
// may read it.
//
// Thread-safety: a plain function.
//
// Example:
//   ServeProps props{.model_alias = "qwen", .n_ctx = 8192, .total_slots = 64};
//   std::string body = Dump(PropsJson(props));

#ifndef HEARTH_SERVE_PROPS_JSON_H_
#define HEARTH_SERVE_PROPS_JSON_H_

#include <cstdint>
#include <string>

#include "nlohmann/json.hpp"

namespace hearth::serve {

struct ServeProps {
  // --model as given; empty for the tiny test model (written, loaded and
  // deleted at start).
  std::string model_path;
  // The name clients use (GET /v1/models' first entry).
  std::string model_alias;
  // The GGUF's chat template; empty when it has none (a plain transcript
  // is used).
  std::string chat_template;
  // Tokens of prompt plus answer one request may use.
  int32_t n_ctx = 0;
  // Requests generating at once (--n_seq_max).
  int32_t total_slots = 0;
  // max_tokens when a request names none (clipped to the context left).
  int32_t default_max_tokens = 0;
};

nlohmann::json PropsJson(const ServeProps& props);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_PROPS_JSON_H_
