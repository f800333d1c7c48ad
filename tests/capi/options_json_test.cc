// The C API's options JSON against the options table (src/scheduler/
// options_schema.h): every field of SchedulerOptions can be set from JSON,
// by its path, and a key written twice is refused with its path.

#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "capi/c_handles.h"
#include "capi/options_json.h"
#include "hearth/c/hearth.h"
#include "tests/testing/option_fields.h"

namespace hearth {
namespace {

using testing::FieldRef;
using W = FieldRef::Where;

template <typename T>
nlohmann::json JsonValue(const T& v) {
  if constexpr (std::is_same_v<T, absl::Duration>) {
    return absl::ToDoubleSeconds(v);
  } else if constexpr (std::is_same_v<T, PreemptionMode>) {
    return v == PreemptionMode::kSwap ? "swap" : "recompute";
  } else {
    return v;
  }
}

// {"kv": {"block_size": v}}, {"users": [{"weight": v}]}, ...: field `path`
// set to `value`, a Duration's key with "_s", in seconds.
template <typename T>
nlohmann::json JsonSetting(W where, std::string_view path, const T& value) {
  std::string key(path), object;
  if (const size_t dot = key.find('.'); dot != std::string::npos) {
    object = key.substr(0, dot);
    key = key.substr(dot + 1);
  }
  if constexpr (std::is_same_v<T, absl::Duration>) key += "_s";
  nlohmann::json inner = {{key, JsonValue(value)}};
  // Not `inner = {{object, inner}}`: built with Clang, that assignment from a
  // list naming its own target leaks the old tree (LeakSanitizer).
  if (!object.empty()) inner = nlohmann::json{{object, nlohmann::json(std::move(inner))}};
  switch (where) {
    case W::kOptions: return inner;
    case W::kModel: return {{"models", {inner}}};
    case W::kUser: return {{"users", {inner}}};
    case W::kWorkClass: return {{"work_classes", {inner}}};
  }
  return inner;
}

TEST_CASE("Options JSON sets every field of the options table", "[capi][options]") {
  const SchedulerOptions defaults;
  const std::vector<std::string> before = testing::Snapshot(defaults);
  SchedulerOptions probe;
  size_t index = 0;
  testing::VisitAllFields(probe, [&](W where, const internal::OptionField& f, const auto& value) {
    const size_t me = index++;
    const auto changed = testing::Different(value);
    const std::string text = JsonSetting(where, f.path, changed).dump();
    INFO(text);
    hearth_options options;
    const absl::Status s = capi::ApplyOptionsJson(text, options);
    REQUIRE(s.ok());
    const std::vector<std::string> after = testing::Snapshot(options.scheduler);
    for (size_t j = 0; j < before.size(); ++j) {
      CHECK(after[j] == (j == me ? testing::Repr(changed) : before[j]));
    }
  });
  // The fields the JSON could not set before it read them from the table.
  for (const char* key : {R"({"kv": {"growth_headroom_tokens": 9}})",
                          R"({"swap_block_cost_tokens": 0.5})",
                          R"({"max_admission_waste_per_block": 4})",
                          R"({"max_preemptions_per_request": 5})",
                          R"({"step_time_model": {"fixed_s": 0.002, "per_token_s": 1e-5}})"}) {
    INFO(key);
    hearth_options options;
    CHECK(capi::ApplyOptionsJson(key, options).ok());
  }
}

std::string Refusal(const std::string& text) {
  hearth_options options;
  return std::string(capi::ApplyOptionsJson(text, options).message());
}

TEST_CASE("Options JSON refuses a key written twice, naming its path", "[capi][options]") {
  CHECK(Refusal(R"({"max_running": 8, "max_running": 16})") ==
        "options JSON: key \"max_running\" appears twice; each key may appear once per object");
  CHECK_THAT(Refusal(R"({"kv": {"block_size": 8, "num_device_blocks": 9, "block_size": 8}})"),
             Catch::Contains("key \"kv.block_size\" appears twice"));
  CHECK_THAT(Refusal(R"({"users": [{"name": "a"}, {"name": "b", "weight": 1, "name": "c"}]})"),
             Catch::Contains("key \"users[1].name\" appears twice"));
  CHECK_THAT(Refusal(R"({"x": [[], [{}], [1, {"k": 1, "k": 2}]]})"),
             Catch::Contains("key \"x[2][1].k\" appears twice"));
  CHECK_THAT(Refusal(R"({"users": [], "models": [], "users": []})"),
             Catch::Contains("key \"users\" appears twice"));
  // The same key in different objects is not a repeat.
  CHECK(Refusal(R"({"users": [{"name": "a"}, {"name": "b"}], "kv": {"block_size": 8}})").empty());
  // Keys are quoted bounded.
  const std::string huge(100000, 'k');
  CHECK(Refusal("{\"" + huge + "\": 1, \"" + huge + "\": 2}").size() < 300);
}

TEST_CASE("Options JSON refusals quote the value exactly", "[capi][options]") {
  hearth_options* o = nullptr;
  REQUIRE(hearth_options_from_json(R"({"reserved_pending_share": 1.0000001})", &o, nullptr) ==
          HEARTH_OK);
  hearth_scheduler* s = nullptr;
  hearth_error* e = nullptr;
  CHECK(hearth_scheduler_create(o, &s, &e) == HEARTH_INVALID_ARGUMENT);
  CHECK(std::string(hearth_error_message(e)) ==
        "SchedulerOptions.reserved_pending_share is 1.0000001; must be in [0, 1]");
  hearth_error_free(e);
  hearth_options_free(o);
}

}  // namespace
}  // namespace hearth
