// Unit tests of GET /props' body (props_json.h): llama-server's field names,
// the defaults a request without each field really gets.

#ifdef HEARTH_SERVE_FOUND

#include <catch2/catch.hpp>

#include "openai_request.h"
#include "props_json.h"

namespace hearth::serve {
namespace {

TEST_CASE("props: llama-server's shape with hearth-serve's defaults", "[serve]") {
  ServeProps in;
  in.model_path = "/models/q.gguf";
  in.model_alias = "q";
  in.chat_template = "{{ messages }}";
  in.n_ctx = 4096;
  in.total_slots = 8;
  in.default_max_tokens = 100;
  const nlohmann::json p = PropsJson(in);
  CHECK(p["default_generation_settings"]["n_ctx"] == 4096);
  CHECK(p["total_slots"] == 8);
  CHECK(p["model_path"] == "/models/q.gguf");
  CHECK(p["model_alias"] == "q");
  CHECK(p["chat_template"] == "{{ messages }}");
  const nlohmann::json& params = p["default_generation_settings"]["params"];
  const SamplingParams d;
  CHECK(params["n_predict"] == 100);
  CHECK(params["temperature"] == d.temperature);
  CHECK(params["top_p"] == d.top_p);
  CHECK(params["top_k"] == d.top_k);
  CHECK(params["min_p"] == d.min_p);
  CHECK(params["repeat_last_n"] == kPenaltyLastN);
  CHECK(params["seed"] == 4294967295u);
  CHECK(p["build_info"].get<std::string>().rfind("hearth-serve ", 0) == 0);
  // Nothing per request or per member.
  for (const char* absent : {"slots", "is_processing", "prompt", "next_token"}) {
    CHECK(!p.contains(absent));
    CHECK(!p["default_generation_settings"].contains(absent));
  }
}

}  // namespace
}  // namespace hearth::serve

#endif  // HEARTH_SERVE_FOUND
