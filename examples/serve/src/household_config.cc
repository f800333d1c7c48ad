#include "household_config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hearth/scheduler/option_fields.h"
#include "hearth/common/names.h"
#include "request_credentials.h"
#include "toml++/toml.h"

namespace hearth::serve {
namespace {

// "h.toml:12: member[0].weight": the file, the line when toml++ knows it,
// and the key as the file spells it, so a refusal points at the line.
std::string Where(absl::string_view origin, const toml::source_region& at, absl::string_view key) {
  std::string out(origin);
  if (at.begin.line > 0) absl::StrAppend(&out, ":", at.begin.line);
  return absl::StrCat(out, ": ", key);
}

// Keys of the options schema that this file once spelled otherwise: refused
// naming the new key, so an old file fails loudly instead of losing a
// target (both spellings accepted would be two spellings again).
constexpr std::pair<std::string_view, std::string_view> kRenamed[] = {
    {"slo_ttft_s", "ttft_slo_s"}, {"slo_tpot_s", "tpot_slo_s"}};

// [scheduler] fields hearth-serve sizes from the llama.cpp context or sets
// itself: a file value would be overwritten, so it is refused naming what
// sets it.
constexpr std::pair<std::string_view, std::string_view> kServeOwned[] = {
    {"max_batched_tokens", "is llama.cpp's n_batch; set --n_batch"},
    {"max_running", "is the sequences running at once, --n_seq_max; set that"},
    {"kv.num_device_blocks", "is sized from the context; set --n_ctx (and --kv_layout)"},
    {"kv.num_host_blocks", "is sized from the swap space; set --swap_space_mib"},
    {"kv.enable_prefix_caching", "follows --prefix_cache_sequences (0: off)"},
    {"preemption_mode", "follows --swap_space_mib (swap when above 0)"},
    {"kv.prefix_hash_key", "is drawn at random at every start, so no member can predict "
                           "another's block hashes"}};

// A TOML value as the options schema takes it: integers stay integers (an
// integer field never casts a float such as 1e22, undefined out of range),
// and strings stay strings ("off" is a duration's InfiniteDuration to
// SetOptionField), as in the scenario TOML.
std::optional<OptionValue> SchemaValue(const toml::node& n) {
  if (const auto* i = n.as_integer()) return OptionValue(i->get());
  if (const auto* d = n.as_floating_point()) return OptionValue(d->get());
  if (const auto* b = n.as_boolean()) return OptionValue(b->get());
  if (const auto* s = n.as_string()) return OptionValue(s->get());
  return std::nullopt;
}

// Reads fields of one table, remembering which were read so that unknown
// keys can be reported. Keys may be dotted ("kv.block_size"): a nested
// table's key, which TOML writes either way.
class TableReader {
 public:
  TableReader(const toml::table& table, absl::string_view origin, std::string path)
      : table_(table), origin_(origin), path_(std::move(path)) {}

  absl::StatusOr<std::optional<std::string>> String(absl::string_view key) {
    const toml::node* node = Find(key);
    if (node == nullptr) return std::optional<std::string>();
    if (!node->is_string()) return Error(*node, key, "must be a string");
    return std::optional<std::string>(std::string(*node->value<std::string_view>()));
  }
  absl::StatusOr<std::optional<std::vector<std::string>>> StringList(absl::string_view key) {
    const toml::node* node = Find(key);
    if (node == nullptr) return std::optional<std::vector<std::string>>();
    const toml::array* array = node->as_array();
    std::vector<std::string> out;
    for (size_t i = 0; array != nullptr && i < array->size(); ++i) {
      std::optional<std::string_view> v = (*array)[i].value<std::string_view>();
      if (!v) break;
      out.emplace_back(*v);
    }
    if (array == nullptr || out.size() != array->size()) {
      return Error(*node, key, "must be an array of strings");
    }
    return std::optional<std::vector<std::string>>(std::move(out));
  }
  // A name the scheduler, the pages and the metrics will carry: required,
  // and held to the library's rule (hearth::ValidateName) here, so that a
  // household the file accepts is one the scheduler accepts too.
  absl::StatusOr<std::string> Name(absl::string_view key) {
    absl::StatusOr<std::optional<std::string>> name = String(key);
    if (!name.ok()) return name.status();
    if (absl::Status s = Required(key, name->has_value() && !(*name)->empty()); !s.ok()) return s;
    const std::string where = Where(origin_, table_.source(), absl::StrCat(path_, ".", key));
    if (absl::Status s = ValidateName(**name, where); !s.ok()) return s;
    return **std::move(name);
  }
  // Every field of the schema's `scope` present in the table, set on
  // `target` by SetOptionField: the schema's key, range and refusal
  // ("is 0; must be ..."), prefixed with where the key is. `set` (may be
  // null) collects the paths set.
  template <typename Target>
  absl::Status SchemaFields(OptionScope scope, Target& target, std::vector<std::string>* set) {
    for (const OptionFieldInfo& f : OptionFields(scope)) {
      if (f.path == "name") continue;  // Name(): required, and checked here
      const std::string key = OptionKey(f);
      const toml::node* node = Find(key);
      if (node == nullptr) continue;
      if (absl::Status s = Owned(*node, f); !s.ok()) return s;
      const std::optional<OptionValue> v = SchemaValue(*node);
      if (!v) {
        const std::string_view words = OptionTypeInWords(f.type);
        return Error(*node, key,
                     absl::StrCat("must be ", absl::string_view(words.data(), words.size())));
      }
      if (absl::Status s = SetOptionField(target, f, *v); !s.ok()) {
        // The schema words infinity as C++ does; this file writes "off".
        const bool off = f.type == OptionType::kDuration &&
                         f.allowed.find("InfiniteDuration") != std::string_view::npos;
        return Error(*node, key,
                     absl::StrCat(s.message(), off ? " (here \"off\")" : ""));
      }
      if (set != nullptr) set->emplace_back(f.path);
    }
    return absl::OkStatus();
  }
  absl::Status Required(absl::string_view key, bool present) {
    if (present) return absl::OkStatus();
    return Error(table_, key, "is missing; it is required");
  }
  absl::Status NoUnknownKeys() const { return NoUnknownKeys(table_, ""); }
  const toml::table& table() const { return table_; }
  absl::Status Error(const toml::node& at, absl::string_view key, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(Where(origin_, at.source(), absl::StrCat(path_, ".", key)), " ", what));
  }

 private:
  const toml::node* Find(absl::string_view key) {
    read_.insert(std::string(key));
    const toml::table* t = &table_;
    const size_t dot = key.find('.');
    if (dot != absl::string_view::npos) {
      const toml::node* outer = table_.get(std::string_view(key.data(), dot));
      t = outer != nullptr ? outer->as_table() : nullptr;
      key.remove_prefix(dot + 1);
    }
    return t != nullptr ? t->get(std::string_view(key.data(), key.size())) : nullptr;
  }
  // Unknown keys of `t`, itself at `prefix` ("" or "kv.") of this table.
  absl::Status NoUnknownKeys(const toml::table& t, const std::string& prefix) const {
    for (const auto& [k, node] : t) {
      const std::string key = absl::StrCat(prefix, std::string(k.str()));
      if (read_.contains(key)) continue;
      if (node.is_table() && prefix.empty()) {
        if (absl::Status s = NoUnknownKeys(*node.as_table(), key + "."); !s.ok()) return s;
        continue;
      }
      for (const auto& [old_key, new_key] : kRenamed) {
        if (key == old_key) {
          return Error(node, key, absl::StrCat("is the old spelling; write ",
                                               absl::string_view(new_key.data(), new_key.size()),
                                               " (the options schema's key)"));
        }
      }
      return Error(node, key, "is not a known key");
    }
    return absl::OkStatus();
  }
  absl::Status Owned(const toml::node& at, const OptionFieldInfo& f) const {
    if (path_ != "scheduler") return absl::OkStatus();
    for (const auto& [path, why] : kServeOwned) {
      if (f.path == path) {
        return Error(at, OptionKey(f),
                     absl::StrCat(absl::string_view(why.data(), why.size()), ", not the file"));
      }
    }
    return absl::OkStatus();
  }

  const toml::table& table_;
  absl::string_view origin_;
  std::string path_;
  absl::flat_hash_set<std::string> read_;
};

absl::Status ParseMember(TableReader& r, UserConfig& m) {
  absl::StatusOr<std::string> name = r.Name("name");
  if (!name.ok()) return name.status();
  m.name = *std::move(name);
  if (absl::Status s = r.SchemaFields(OptionScope::kUser, m, nullptr); !s.ok()) return s;
  return r.NoUnknownKeys();
}

// The metrics' targets of a class: the scheduler's own, so that a target is
// written once (WorkClassConfig) and judged as it is served.
SloTarget ClassSlo(const WorkClassConfig& c) {
  return SloTarget{.ttft = c.ttft_slo, .tpot = c.tpot_slo, .e2e = c.e2e_slo};
}

// A [[class]] table replaces the default classes; its SLO targets are the
// scheduler's (WorkClassConfig) and the metrics' (SloTarget) alike.
absl::Status ParseClass(TableReader& r, WorkClassConfig& c, SloTarget& slo) {
  absl::StatusOr<std::string> name = r.Name("name");
  if (!name.ok()) return name.status();
  c = WorkClassConfig{};
  c.name = *std::move(name);
  if (absl::Status s = r.SchemaFields(OptionScope::kWorkClass, c, nullptr); !s.ok()) return s;
  slo = ClassSlo(c);
  return r.NoUnknownKeys();
}

absl::Status ParseKey(TableReader& r, ApiKeyConfig& k) {
  absl::StatusOr<std::optional<std::string>> role = r.String("role");
  if (!role.ok()) return role.status();
  const std::string role_name = role->value_or("member");
  if (role_name == "admin") {
    k.role = KeyRole::kAdmin;
  } else if (role_name == "metrics") {
    k.role = KeyRole::kMetrics;
  } else if (role_name != "member") {
    return r.Error(r.table(), "role", absl::StrCat("is \"", role_name,
                                                   "\"; must be \"member\", \"admin\" or \"metrics\""));
  }
  for (auto [field, out] : {std::pair{"key", &k.key}, std::pair{"member", &k.member},
                            std::pair{"default_class", &k.default_class}}) {
    absl::StatusOr<std::optional<std::string>> v = r.String(field);
    if (!v.ok()) return v.status();
    const absl::string_view f(field);
    // Only a member key must belong to someone: an admin or scrape key may
    // read pages without making calls.
    const bool needed = f == "key" || (f == "member" && k.role == KeyRole::kMember);
    if (absl::Status s = r.Required(field, !needed || (v->has_value() && !(*v)->empty()));
        !s.ok()) {
      return s;
    }
    if (v->has_value()) *out = **v;
  }
  if (k.default_class.empty()) k.default_class = "chat";
  absl::StatusOr<std::optional<std::vector<std::string>>> allowed = r.StringList("allowed_classes");
  if (!allowed.ok()) return allowed.status();
  if (allowed->has_value()) {
    if ((*allowed)->empty()) {
      return r.Error(r.table(), "allowed_classes",
                     "is empty; list at least the key's default_class");
    }
    k.allowed_classes = **std::move(allowed);
  }
  if (!IsToken68(k.key) || k.key.size() > 4096) {
    return r.Error(r.table(), "key",
                   "is not a token68 of at most 4096 bytes (letters, digits, -._~+/ then '=' "
                   "padding), so no Authorization header could carry it");
  }
  return r.NoUnknownKeys();
}

absl::Status ParseAlias(TableReader& r, ModelAliasConfig& a) {
  // The alias is echoed in every answer's "model" field.
  for (auto [field, out] : {std::pair{"model", &a.model}, std::pair{"class", &a.work_class}}) {
    absl::StatusOr<std::string> v = r.Name(field);
    if (!v.ok()) return v.status();
    *out = *std::move(v);
  }
  return r.NoUnknownKeys();
}

// Calls `parse` on every table of the array `name` (absent: none).
template <typename Parse>
absl::Status ForEachTable(const toml::table& root, absl::string_view origin, absl::string_view name,
                          Parse parse) {
  const toml::node* node = root.get(std::string_view(name.data(), name.size()));
  if (node == nullptr) return absl::OkStatus();
  const toml::array* array = node->as_array();
  if (array == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": ", name, " must be an array of tables ([[", name, "]])"));
  }
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::table* table = (*array)[i].as_table();
    const std::string path = absl::StrCat(name, "[", i, "]");
    if (table == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(Where(origin, (*array)[i].source(), path), " must be a table"));
    }
    TableReader reader(*table, origin, path);
    if (absl::Status s = parse(reader); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// [scheduler]: SchedulerOptions fields over the library's defaults, by the
// schema's keys; hearth-serve's flags then apply by the rule in
// household_config.h.
absl::Status ParseScheduler(const toml::table& root, absl::string_view origin, HouseholdConfig& c) {
  const toml::node* node = root.get("scheduler");
  if (node == nullptr) return absl::OkStatus();
  if (!node->is_table()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Where(origin, node->source(), "scheduler"), " must be a table ([scheduler])"));
  }
  TableReader r(*node->as_table(), origin, "scheduler");
  if (absl::Status s = r.SchemaFields(OptionScope::kOptions, c.scheduler, &c.scheduler_fields);
      !s.ok()) {
    return s;
  }
  return r.NoUnknownKeys();
}

absl::Status CheckReferences(const HouseholdConfig& c, absl::string_view origin) {
  absl::flat_hash_set<std::string> members, classes, keys, aliases;
  for (const UserConfig& m : c.members) {
    if (!members.insert(m.name).second) {
      return absl::InvalidArgumentError(absl::StrCat(origin, ": member \"", m.name, "\" twice"));
    }
  }
  for (const WorkClassConfig& w : c.classes) {
    if (!classes.insert(w.name).second) {
      return absl::InvalidArgumentError(absl::StrCat(origin, ": class \"", w.name, "\" twice"));
    }
  }
  for (size_t i = 0; i < c.keys.size(); ++i) {
    const ApiKeyConfig& k = c.keys[i];
    const std::string path = absl::StrCat(origin, ": key[", i, "]");
    if (!keys.insert(k.key).second) return absl::InvalidArgumentError(path + ".key is used twice");
    if (!k.member.empty() && !members.contains(k.member)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".member \"", k.member,
                                                     "\" is not a [[member]]"));
    }
    if (!classes.contains(k.default_class)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".default_class \"", k.default_class,
                                                     "\" is not a class"));
    }
    for (size_t j = 0; j < k.allowed_classes.size(); ++j) {
      if (!classes.contains(k.allowed_classes[j])) {
        return absl::InvalidArgumentError(absl::StrCat(path, ".allowed_classes[", j, "] \"",
                                                       k.allowed_classes[j], "\" is not a class"));
      }
    }
    if (!k.allowed_classes.empty() &&
        std::find(k.allowed_classes.begin(), k.allowed_classes.end(), k.default_class) ==
            k.allowed_classes.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ".allowed_classes [", absl::StrJoin(k.allowed_classes, ", "),
          "] leaves out its default_class \"", k.default_class, "\"; list it too"));
    }
  }
  for (size_t i = 0; i < c.aliases.size(); ++i) {
    const ModelAliasConfig& a = c.aliases[i];
    const std::string path = absl::StrCat(origin, ": alias[", i, "]");
    if (!aliases.insert(a.model).second) return absl::InvalidArgumentError(path + ".model twice");
    if (!classes.contains(a.work_class)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".class \"", a.work_class,
                                                     "\" is not a class"));
    }
  }
  if (c.members.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": no [[member]]; list at least one"));
  }
  if (c.keys.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": no [[key]]; nobody could call"));
  }
  return absl::OkStatus();
}

}  // namespace

void DefaultClasses(std::vector<WorkClassConfig>* classes, std::vector<SloTarget>* slos) {
  *classes = HouseholdWorkClasses();
  // Document summaries: long prompts nobody watches; they run on what voice,
  // chat and agents leave, a few at a time.
  WorkClassConfig documents;
  documents.name = "documents";
  documents.priority = 1;
  documents.max_running = 4;
  classes->insert(classes->begin() + 3, documents);
  slos->clear();
  for (WorkClassConfig& c : *classes) {
    c.max_retries = 0;
    SloTarget& slo = slos->emplace_back(ClassSlo(c));
    // Report only: the background classes have no scheduler target (one
    // would switch the SLO-aware class level on for them and rank their
    // work by deadline), yet /status and /metrics judge them by a minute.
    if (slo.ttft == absl::InfiniteDuration()) slo.ttft = absl::Seconds(60);
  }
}

HouseholdConfig OpenHousehold() {
  HouseholdConfig c;
  UserConfig member;
  member.name = "household";
  c.members = {member};
  DefaultClasses(&c.classes, &c.slos);
  c.keys_required = false;
  return c;
}

absl::StatusOr<HouseholdConfig> ParseHouseholdToml(absl::string_view text,
                                                   absl::string_view origin) {
  toml::table root;
  try {
    root = toml::parse(std::string_view(text.data(), text.size()), std::string_view(origin.data(), origin.size()));
  } catch (const toml::parse_error& e) {
    std::ostringstream where;
    where << e.source().begin;
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": ", where.str(), ": ", std::string(e.description())));
  }
  for (const auto& [key, node] : root) {
    const std::string k(key.str());
    if (k != "member" && k != "key" && k != "alias" && k != "class" && k != "scheduler") {
      return absl::InvalidArgumentError(absl::StrCat(
          Where(origin, node.source(), absl::StrCat("top-level \"", k, "\"")),
          " is unknown; allowed: [[member]], [[key]], [[alias]], [[class]], [scheduler]"));
    }
  }
  HouseholdConfig c;
  absl::Status s = ParseScheduler(root, origin, c);
  if (s.ok()) {
    s = ForEachTable(root, origin, "member",
                     [&](TableReader& r) { return ParseMember(r, c.members.emplace_back()); });
  }
  if (s.ok()) {
    s = ForEachTable(root, origin, "class", [&](TableReader& r) {
      c.slos.emplace_back();
      return ParseClass(r, c.classes.emplace_back(), c.slos.back());
    });
  }
  if (s.ok()) {
    s = ForEachTable(root, origin, "key",
                     [&](TableReader& r) { return ParseKey(r, c.keys.emplace_back()); });
  }
  if (s.ok()) {
    s = ForEachTable(root, origin, "alias",
                     [&](TableReader& r) { return ParseAlias(r, c.aliases.emplace_back()); });
  }
  if (!s.ok()) return s;
  if (c.classes.empty()) DefaultClasses(&c.classes, &c.slos);
  if (absl::Status refs = CheckReferences(c, origin); !refs.ok()) return refs;
  return c;
}

std::vector<bool> AllowedClasses(const HouseholdConfig& config, const ApiKeyConfig& key) {
  std::vector<bool> out(config.classes.size(), false);
  int32_t default_priority = 0;
  for (const WorkClassConfig& c : config.classes) {
    if (c.name == key.default_class) default_priority = c.priority;
  }
  for (size_t i = 0; i < config.classes.size(); ++i) {
    const WorkClassConfig& c = config.classes[i];
    out[i] = key.allowed_classes.empty()
                 ? c.name == key.default_class || c.priority < default_priority
                 : std::find(key.allowed_classes.begin(), key.allowed_classes.end(), c.name) !=
                       key.allowed_classes.end();
  }
  return out;
}

absl::StatusOr<HouseholdConfig> LoadHouseholdConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read household file ", path));
  std::ostringstream text;
  text << in.rdbuf();
  return ParseHouseholdToml(text.str(), path);
}

}  // namespace hearth::serve
