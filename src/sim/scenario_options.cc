#include "sim/scenario_options.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "internal/status_macros.h"

namespace hearth::internal {
namespace {

constexpr OptionScope ScopeOf(const SchedulerOptions&) { return OptionScope::kOptions; }
constexpr OptionScope ScopeOf(const ModelConfig&) { return OptionScope::kModel; }
constexpr OptionScope ScopeOf(const UserConfig&) { return OptionScope::kUser; }
constexpr OptionScope ScopeOf(const WorkClassConfig&) { return OptionScope::kWorkClass; }

void AddOnce(std::vector<std::string>* keys, std::string key) {
  if (std::find(keys->begin(), keys->end(), key) == keys->end()) keys->push_back(std::move(key));
}

// A TOML value as the schema takes it: integers as int64_t, floats as
// double (so `inf` is InfiniteDuration for a duration), strings as strings
// ("off" is a duration's InfiniteDuration to SetOptionField).
absl::StatusOr<OptionValue> ValueOf(const toml::node& n, const OptionFieldInfo& f) {
  if (const auto* i = n.as_integer()) return OptionValue(i->get());
  if (const auto* d = n.as_floating_point()) return OptionValue(d->get());
  if (const auto* b = n.as_boolean()) return OptionValue(b->get());
  if (const auto* s = n.as_string()) return OptionValue(s->get());
  const std::string_view words = OptionTypeInWords(f.type);
  return absl::InvalidArgumentError(absl::StrCat("is a ", n.is_table() ? "table" : "array",
                                                 "; must be ",
                                                 absl::string_view(words.data(), words.size())));
}

// The node of `key` ("kv.block_size") under `t`, or null.
const toml::node* Find(const toml::table& t, std::string_view key) {
  const size_t dot = key.find('.');
  if (dot == std::string_view::npos) return t.get(key);
  const toml::node* nested = t.get(key.substr(0, dot));
  const toml::table* table = nested != nullptr ? nested->as_table() : nullptr;
  return table != nullptr ? table->get(key.substr(dot + 1)) : nullptr;
}

template <typename Target>
absl::Status ReadFields(const ScenarioReader& r, const toml::table& t, const std::string& path,
                        Target& target, std::initializer_list<std::string_view> extra) {
  const OptionScope scope = ScopeOf(target);
  const std::vector<std::string> keys = OptionTableKeys(scope, "", extra);
  HEARTH_RETURN_IF_ERROR(CheckKeys(t, std::vector<std::string_view>(keys.begin(), keys.end()),
                                   r.file(), path));
  for (const std::string& key : keys) {
    const toml::node* n = t.get(key);
    const std::vector<std::string> inner = OptionTableKeys(scope, key);
    if (n == nullptr || inner.empty()) continue;
    if (!n->is_table()) return r.Error(*n, JoinKey(path, key), "must be a table");
    {
      HEARTH_RETURN_IF_ERROR(CheckKeys(*n->as_table(),
                                       std::vector<std::string_view>(inner.begin(), inner.end()),
                                       r.file(), JoinKey(path, key)));
    }
  }
  for (const OptionFieldInfo& f : OptionFields(scope)) {
    const std::string key = OptionKey(f);
    const toml::node* n = Find(t, key);
    if (n == nullptr) continue;
    absl::StatusOr<OptionValue> v = ValueOf(*n, f);
    absl::Status set = v.ok() ? SetOptionField(target, f, *v) : v.status();
    if (!set.ok()) return r.Error(*n, JoinKey(path, key), set.message());
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> OptionTableKeys(OptionScope scope, std::string_view nested,
                                         std::initializer_list<std::string_view> extra) {
  std::vector<std::string> keys;
  for (const OptionFieldInfo& f : OptionFields(scope)) {
    const std::string key = OptionKey(f);
    const size_t dot = key.find('.');
    if (nested.empty()) {
      AddOnce(&keys, key.substr(0, dot));
    } else if (dot != std::string::npos && std::string_view(key).substr(0, dot) == nested) {
      AddOnce(&keys, key.substr(dot + 1));
    }
  }
  if (nested.empty()) {
    for (std::string_view e : extra) AddOnce(&keys, std::string(e));
  }
  return keys;
}

absl::Status ReadOptionTable(const ScenarioReader& r, const toml::table& t,
                             const std::string& path, SchedulerOptions& target,
                             std::initializer_list<std::string_view> extra) {
  return ReadFields(r, t, path, target, extra);
}
absl::Status ReadOptionTable(const ScenarioReader& r, const toml::table& t,
                             const std::string& path, ModelConfig& target,
                             std::initializer_list<std::string_view> extra) {
  return ReadFields(r, t, path, target, extra);
}
absl::Status ReadOptionTable(const ScenarioReader& r, const toml::table& t,
                             const std::string& path, UserConfig& target,
                             std::initializer_list<std::string_view> extra) {
  return ReadFields(r, t, path, target, extra);
}
absl::Status ReadOptionTable(const ScenarioReader& r, const toml::table& t,
                             const std::string& path, WorkClassConfig& target,
                             std::initializer_list<std::string_view> extra) {
  return ReadFields(r, t, path, target, extra);
}

std::string ScenarioKeyOfField(std::string_view field) {
  // A registry entry: "<array>[i].<path>", the scenario's "<table>[i].<key>".
  struct Registry {
    std::string_view array, table;
    OptionScope scope;
  };
  for (const Registry& reg : {Registry{"work_classes", "classes", OptionScope::kWorkClass},
                              Registry{"users", "users", OptionScope::kUser},
                              Registry{"models", "model", OptionScope::kModel}}) {
    if (field.substr(0, reg.array.size()) != reg.array) continue;
    const std::string_view rest = field.substr(reg.array.size());
    const size_t close = rest.find("].");
    const std::string entry =
        reg.scope == OptionScope::kModel || close == std::string_view::npos
            ? std::string(reg.table)
            : absl::StrCat(std::string(reg.table), std::string(rest.substr(0, close + 1)));
    if (close == std::string_view::npos) {
      return reg.scope == OptionScope::kModel ? "model.name" : entry;
    }
    for (const OptionFieldInfo& f : OptionFields(reg.scope)) {
      if (rest.substr(close + 2) == f.path) return absl::StrCat(entry, ".", OptionKey(f));
    }
    return entry;
  }
  for (const OptionFieldInfo& f : OptionFields(OptionScope::kOptions)) {
    if (field == f.path) return absl::StrCat("scheduler.", OptionKey(f));
  }
  return "";
}

}  // namespace hearth::internal
