// The options schema (hearth/scheduler/option_fields.h) walked against its
// front ends: every field of SchedulerOptions and of its registries'
// entries, set to a value other than its default through the C API's
// options JSON and through the scenario TOML, with the schema's one
// spelling (OptionKey()), reaches the same field with the same value.

#include <string>
#include <variant>

#include <catch2/catch.hpp>
#include <toml++/toml.h>

#include "absl/strings/str_cat.h"
#include "capi/c_handles.h"
#include "capi/options_json.h"
#include "hearth/scheduler/option_fields.h"
#include "tests/testing/option_fields.h"
#include "sim/scenario_options.h"

namespace hearth {
namespace {

using testing::Different;

// As JSON writes it: durations in seconds, strings quoted.
std::string JsonText(const OptionValue& v) {
  if (const auto* d = std::get_if<absl::Duration>(&v)) {
    return absl::StrCat(absl::ToInt64Seconds(*d));
  }
  return OptionValueText(v);
}

// {"kv": {"block_size": 7}} for "kv.block_size" at the top, or inside one
// entry of `registry` ("users").
std::string JsonFor(const OptionFieldInfo& f, const OptionValue& v, const std::string& registry) {
  const std::string key = OptionKey(f);
  const size_t dot = key.find('.');
  std::string member =
      dot == std::string::npos
          ? absl::StrCat("\"", key, "\": ", JsonText(v))
          : absl::StrCat("\"", key.substr(0, dot), "\": {\"", key.substr(dot + 1),
                         "\": ", JsonText(v), "}");
  if (registry.empty()) return absl::StrCat("{", member, "}");
  return absl::StrCat("{\"", registry, "\": [{", member, "}]}");
}

template <typename Target>
void WalkScope(OptionScope scope, const std::string& registry,
               Target& (*entry)(SchedulerOptions&)) {
  for (const OptionFieldInfo& f : OptionFields(scope)) {
    const std::string key = OptionKey(f);
    INFO(registry << (registry.empty() ? "" : ".") << key);
    SchedulerOptions defaults;
    const OptionValue want = Different(f, GetOptionField(entry(defaults), f));

    // Scenario TOML: `key = value` in the field's table.
    const std::string toml_text = absl::StrCat(key, " = ", OptionValueText(want), "\n");
    INFO(toml_text);
    const toml::table table = toml::parse(toml_text);
    internal::ScenarioReader reader("walk.toml", ".");
    SchedulerOptions from_toml;
    const absl::Status read = internal::ReadOptionTable(reader, table, "t", entry(from_toml));
    INFO(read.message());
    REQUIRE(read.ok());
    CHECK(GetOptionField(entry(from_toml), f) == want);

    // C JSON.
    const std::string json = JsonFor(f, want, registry);
    INFO(json);
    hearth_options from_json;
    const absl::Status applied = capi::ApplyOptionsJson(json, from_json);
    INFO(applied.message());
    REQUIRE(applied.ok());
    CHECK(GetOptionField(entry(from_json.scheduler), f) == want);
  }
}

SchedulerOptions& Self(SchedulerOptions& o) { return o; }
ModelConfig& Model(SchedulerOptions& o) { return o.models[0]; }
UserConfig& User(SchedulerOptions& o) { return o.users[0]; }
WorkClassConfig& Class(SchedulerOptions& o) { return o.work_classes[0]; }

TEST_CASE("every schema field is reachable from the C JSON and the scenario TOML, one spelling",
          "[sim][options]") {
  WalkScope(OptionScope::kOptions, "", Self);
  WalkScope(OptionScope::kModel, "models", Model);
  WalkScope(OptionScope::kUser, "users", User);
  WalkScope(OptionScope::kWorkClass, "work_classes", Class);
}

TEST_CASE("every schema field has documentation and a rule in words", "[sim][options]") {
  for (OptionScope scope : {OptionScope::kOptions, OptionScope::kModel, OptionScope::kUser,
                            OptionScope::kWorkClass}) {
    for (const OptionFieldInfo& f : OptionFields(scope)) {
      INFO(f.path);
      CHECK_FALSE(f.doc.empty());
      // Only fields any value of their type suits go without a rule.
      CHECK((!f.allowed.empty() || f.type == OptionType::kBool || f.path == "priority" ||
             f.path == "kv.prefix_hash_key"));
    }
  }
}

}  // namespace
}  // namespace hearth
