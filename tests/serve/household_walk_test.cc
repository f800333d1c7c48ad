// The options schema (hearth/scheduler/option_fields.h) walked against
// hearth-serve's household TOML, the sibling of tests/sim/option_walk_test.cc
// (the C JSON and the scenario TOML): every field of UserConfig
// ([[member]]), WorkClassConfig ([[class]]) and SchedulerOptions
// ([scheduler]), set to a value other than its default with the schema's
// one spelling (OptionKey()), reaches the same field with the same value;
// the [scheduler] fields hearth-serve sizes from the llama.cpp context are
// refused naming what sets them instead.

#ifdef HEARTH_SERVE_FOUND

#include <string>
#include <variant>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "hearth/scheduler/option_fields.h"
#include "tests/testing/option_fields.h"
#include "household_config.h"

namespace hearth::serve {
namespace {

using testing::Different;

// A household whose member, class and key agree with the field under test:
// `line` goes into the table `table` ("member", "class" or "scheduler"),
// and a name field's value names the member or class the key refers to.
std::string Household(const std::string& table, const OptionFieldInfo& f,
                      const OptionValue& want) {
  const bool named = f.path == "name";
  const std::string member = table == "member" && named ? std::get<std::string>(want) : "a";
  const std::string klass = table == "class" && named ? std::get<std::string>(want) : "chat";
  const std::string line = absl::StrCat(OptionKey(f), " = ", OptionValueText(want), "\n");
  std::string text = absl::StrCat("[[key]]\nkey = \"k\"\nmember = \"", member,
                                  "\"\ndefault_class = \"", klass, "\"\n");
  absl::StrAppend(&text, "[[member]]\n", table == "member" && named ? "" : "name = \"a\"\n",
                  table == "member" ? line : "");
  absl::StrAppend(&text, "[[class]]\n", table == "class" && named ? "" : "name = \"chat\"\n",
                  table == "class" ? line : "");
  if (table == "scheduler") absl::StrAppend(&text, "[scheduler]\n", line);
  return text;
}

// The fields hearth-serve sizes from the context or draws itself.
bool ServeOwned(const OptionFieldInfo& f) {
  for (std::string_view p : {"max_batched_tokens", "max_running", "kv.num_device_blocks",
                             "kv.num_host_blocks", "kv.enable_prefix_caching", "preemption_mode",
                             "kv.prefix_hash_key"}) {
    if (f.path == p) return true;
  }
  return false;
}

TEST_CASE("every schema field is reachable from the household TOML, one spelling",
          "[serve][options]") {
  size_t set = 0, owned = 0, total = 0;
  for (const auto& [scope, table] : {std::pair{OptionScope::kUser, "member"},
                                     std::pair{OptionScope::kWorkClass, "class"},
                                     std::pair{OptionScope::kOptions, "scheduler"}}) {
    total += OptionFields(scope).size();
    for (const OptionFieldInfo& f : OptionFields(scope)) {
      INFO(table << "." << OptionKey(f));
      SchedulerOptions defaults;
      const OptionValue want =
          scope == OptionScope::kUser        ? Different(f, GetOptionField(UserConfig{}, f))
          : scope == OptionScope::kWorkClass ? Different(f, GetOptionField(WorkClassConfig{}, f))
                                             : Different(f, GetOptionField(defaults, f));
      const std::string text = Household(table, f, want);
      INFO(text);
      auto r = ParseHouseholdToml(text, "walk.toml");
      if (scope == OptionScope::kOptions && ServeOwned(f)) {
        // Refused at its line, naming what sets it instead of the file.
        REQUIRE_FALSE(r.ok());
        const std::string message(r.status().message());
        INFO(message);
        CHECK(message.find(absl::StrCat("scheduler.", OptionKey(f))) != std::string::npos);
        CHECK(message.find("not the file") != std::string::npos);
        ++owned;
        continue;
      }
      INFO(r.status().message());
      REQUIRE(r.ok());
      if (scope == OptionScope::kUser) CHECK(GetOptionField(r->members[0], f) == want);
      if (scope == OptionScope::kWorkClass) CHECK(GetOptionField(r->classes[0], f) == want);
      if (scope == OptionScope::kOptions) {
        CHECK(GetOptionField(r->scheduler, f) == want);
        CHECK(r->scheduler_fields == std::vector<std::string>{std::string(f.path)});
      }
      ++set;
    }
  }
  CHECK(owned == 7);
  CHECK(set + owned == total);
}

TEST_CASE("a [[class]]'s SLO targets are the scheduler's and the metrics' alike",
          "[serve][options]") {
  auto r = ParseHouseholdToml(
      "[[member]]\nname = \"a\"\n[[key]]\nkey = \"k\"\nmember = \"a\"\n[[class]]\nname = "
      "\"chat\"\nttft_slo_s = 2\ntpot_slo_s = 0.1\ne2e_slo_s = \"off\"\n",
      "h.toml");
  REQUIRE(r.ok());
  CHECK(r->classes[0].ttft_slo == absl::Seconds(2));
  CHECK(r->slos[0].ttft == absl::Seconds(2));
  CHECK(r->classes[0].tpot_slo == absl::Milliseconds(100));
  CHECK(r->slos[0].tpot == absl::Milliseconds(100));
  CHECK(r->classes[0].e2e_slo == absl::InfiniteDuration());
}

}  // namespace
}  // namespace hearth::serve

#endif  // HEARTH_SERVE_FOUND
