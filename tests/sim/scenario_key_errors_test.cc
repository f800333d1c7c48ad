// Errors the library raises about a scenario's settings after the TOML has
// been read (the scheduler's option checks, a policy's configuration, a
// cost profile) carry the file:line: key of the setting that caused them.

#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_replace.h"

#include "hearth/sim/scenario_config.h"

namespace hearth {
namespace {

// Lines 1-8 here; `engine` goes on line 9 on, `tail` after the workload.
std::string ScenarioText(const std::string& engine, const std::string& tail) {
  return "name = \"k\"\n"
         "policies = [\"priority\"]\n"
         "[gpu]\n"
         "name = \"RTX 4090\"\n"
         "[model]\n"
         "name = \"Llama-3.2-3B\"\n"
         "[scheduler]\n"
         "kv.num_device_blocks = 100\n" +
         engine +
         "[[users]]\n"
         "name = \"alice\"\n"
         "[[classes]]\n"
         "name = \"chat\"\n"
         "[workload]\n"
         "kind = \"household\"\n"
         "classes = { chat = \"chat\" }\n" +
         tail;
}

std::string ParseError(const std::string& engine, const std::string& tail) {
  absl::StatusOr<Scenario> s = ParseScenario(ScenarioText(engine, tail), "k.toml", ".");
  REQUIRE_FALSE(s.ok());
  return std::string(s.status().message());
}

TEST_CASE("the scenario itself parses", "[sim]") {
  CHECK(ParseScenario(ScenarioText("", ""), "k.toml", ".").ok());
}

TEST_CASE("scheduler option errors name the scenario key", "[sim]") {
  CHECK_THAT(ParseError("preemption_mode = \"swap\"\n", ""),
             Catch::StartsWith("k.toml:9: scheduler.preemption_mode: SchedulerOptions.preemption_mode "
                               "is kSwap"));
  CHECK_THAT(ParseError("kv.watermark_blocks = 100\n", ""),
             Catch::StartsWith("k.toml:9: scheduler.kv.watermark_blocks: "
                               "SchedulerOptions.kv.watermark_blocks is 100"));
  const std::string short_context = absl::StrReplaceAll(
      ScenarioText("", ""), {{"Llama-3.2-3B\"\n", "Llama-3.2-3B\"\ncontext_length = 1\n"}});
  CHECK_THAT(std::string(ParseScenario(short_context, "k.toml", ".").status().message()),
             Catch::StartsWith("k.toml:7: model.context_length: is 1; must be in [2, 2^30]"));
  // A class budget beyond the engine's cache: the reader cannot know the
  // cache's size when it reads the class.
  CHECK_THAT(ParseError("", "[[classes]]\nname = \"docs\"\nkv_block_budget = 500\n"),
             Catch::StartsWith("k.toml:18: classes[1].kv_block_budget: "
                               "SchedulerOptions.work_classes[1].kv_block_budget is 500"));
}

// A scenario with `users` and `classes` in place of the single alice/chat.
std::string NamesError(const std::string& user, const std::string& cls) {
  std::string text = ScenarioText("", "");
  text.replace(text.find("name = \"alice\""), 14, "name = " + user);
  text.replace(text.find("name = \"chat\""), 13, "name = " + cls);
  text.replace(text.find("chat = \"chat\""), 13, "chat = " + cls);
  absl::StatusOr<Scenario> s = ParseScenario(text, "k.toml", ".");
  return s.ok() ? "" : std::string(s.status().message());
}

TEST_CASE("user and class names follow the name rule", "[sim]") {
  // TOML escapes reach any code point: NUL, ESC, U+2028.
  CHECK_THAT(NamesError(R"("a\u0000b")", R"("chat")"),
             Catch::StartsWith("k.toml:10: users[0].name: the name is \"a\\x00\\x62\" (3 bytes); "
                               "byte 1 is the control character U+0000"));
  CHECK_THAT(NamesError(R"("_other")", R"("chat")"),
             Catch::Contains("users[0].name: \"_other\" is reserved"));
  CHECK_THAT(NamesError(R"("alice")", R"("\u001b[31m")"),
             Catch::Contains("classes[0].name: the name is \"\\x1b[31m\""));
  CHECK_THAT(NamesError('"' + std::string(257, 'u') + '"', R"("chat")"),
             Catch::Contains("it is longer than 256 bytes"));
  CHECK(NamesError(R"("carol \"c\" \u00e9")", R"("\u5bb6")") == "");
}

TEST_CASE("policy configuration errors name the scenario key", "[sim]") {
  // Each quota alone is valid; the policy rejects two for one level.
  CHECK_THAT(ParseError("", "[policy]\nquotas = [{ priority = 1, max_share = 0.5 }, "
                            "{ priority = 1, max_share = 0.2 }]\n"),
             Catch::StartsWith("k.toml:17: policy.quotas: policy priority: "
                               "PriorityQuotaOptions::quotas"));
  // A zero interval is caught by the reader, which says how to write none.
  CHECK_THAT(ParseError("", "[policy]\naging_s = 0\n"),
             Catch::StartsWith("k.toml:17: policy.aging_s: must be a number of seconds in "
                               "[0, 1e9] above 0, or \"off\" for none; got 0"));
  CHECK_THAT(ParseError("", "[policy]\nquota_window_s = 0\n"),
             Catch::StartsWith("k.toml:17: policy.quota_window_s: must be a number of seconds "
                               "in [0, 1e9] above 0; got 0"));
}

TEST_CASE("a cost profile that cannot be read names cost.profile", "[sim]") {
  CHECK_THAT(ParseError("", "[cost]\nkind = \"fitted\"\nprofile = \"/nonexistent/p.toml\"\n"),
             Catch::StartsWith("k.toml:18: cost.profile: ") &&
                 Catch::Contains("/nonexistent/p.toml"));
}

}  // namespace
}  // namespace hearth
