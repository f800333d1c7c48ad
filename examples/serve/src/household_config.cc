#include "household_config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hearth/common/names.h"
#include "request_credentials.h"
#include "toml++/toml.h"

namespace hearth::serve {
namespace {

// Reads fields of one table, remembering which were read so that unknown
// keys can be reported.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string path) : table_(table), path_(std::move(path)) {}

  absl::StatusOr<std::optional<std::string>> String(absl::string_view key) {
    const toml::node* node = Find(key);
    if (node == nullptr) return std::optional<std::string>();
    if (!node->is_string()) return Wrong(key, "a string");
    return std::optional<std::string>(std::string(*node->value<std::string_view>()));
  }
  absl::StatusOr<std::optional<double>> Number(absl::string_view key, double lo, double hi) {
    const toml::node* node = Find(key);
    if (node == nullptr) return std::optional<double>();
    std::optional<double> v = node->value<double>();
    if (!node->is_number() || !v || !std::isfinite(*v) || *v < lo || *v > hi) {
      return Wrong(key, absl::StrCat("a number in [", lo, ", ", hi, "]"));
    }
    return v;
  }
  absl::StatusOr<std::optional<int64_t>> Integer(absl::string_view key, int64_t lo, int64_t hi) {
    const toml::node* node = Find(key);
    if (node == nullptr) return std::optional<int64_t>();
    // Only an integer is read as one: toml++ would cast a float such as
    // 1e22 to int64_t, which is undefined behaviour out of range.
    std::optional<int64_t> v = node->is_integer() ? node->value<int64_t>() : std::nullopt;
    if (!node->is_integer() || !v || *v < lo || *v > hi) {
      return Wrong(key, absl::StrCat("an integer in [", lo, ", ", hi, "]"));
    }
    return v;
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
    if (array == nullptr || out.size() != array->size()) return Wrong(key, "an array of strings");
    return std::optional<std::vector<std::string>>(std::move(out));
  }
  absl::StatusOr<std::optional<bool>> Bool(absl::string_view key) {
    const toml::node* node = Find(key);
    if (node == nullptr) return std::optional<bool>();
    if (!node->is_boolean()) return Wrong(key, "true or false");
    return node->value<bool>();
  }
  // A name the scheduler, the pages and the metrics will carry: required,
  // and held to the library's rule (hearth::ValidateName) here, so that a
  // household the file accepts is one the scheduler accepts too.
  absl::StatusOr<std::string> Name(absl::string_view key) {
    absl::StatusOr<std::optional<std::string>> name = String(key);
    if (!name.ok()) return name.status();
    if (absl::Status s = Required(key, name->has_value() && !(*name)->empty()); !s.ok()) return s;
    if (absl::Status s = ValidateName(**name, absl::StrCat(path_, ".", key)); !s.ok()) return s;
    return **std::move(name);
  }
  absl::Status Required(absl::string_view key, bool present) {
    if (present) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(path_, ".", key, " is missing; it is required"));
  }
  absl::Status NoUnknownKeys() const {
    for (const auto& [key, node] : table_) {
      if (!read_.contains(std::string(key.str()))) {
        return absl::InvalidArgumentError(
            absl::StrCat(path_, ".", std::string(key.str()), " is not a known key"));
      }
    }
    return absl::OkStatus();
  }
  const std::string& path() const { return path_; }

 private:
  const toml::node* Find(absl::string_view key) {
    read_.insert(std::string(key));
    return table_.get(std::string_view(key.data(), key.size()));
  }
  absl::Status Wrong(absl::string_view key, absl::string_view allowed) const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ".", key, " must be ", allowed));
  }

  const toml::table& table_;
  std::string path_;
  absl::flat_hash_set<std::string> read_;
};

// Applies `parsed` to `out` when present, returning the error otherwise.
template <typename T, typename U>
absl::Status Assign(absl::StatusOr<std::optional<T>> parsed, U& out) {
  if (!parsed.ok()) return parsed.status();
  if (parsed->has_value()) out = static_cast<U>(**parsed);
  return absl::OkStatus();
}

absl::Status ParseMember(TableReader& r, UserConfig& m) {
  absl::StatusOr<std::string> name = r.Name("name");
  if (!name.ok()) return name.status();
  m.name = *std::move(name);
  double window_s = 86400;
  for (absl::Status s : {Assign(r.Number("weight", 1e-9, 1e9), m.weight),
                         Assign(r.Integer("token_quota", 0, int64_t{1} << 50), m.token_quota),
                         Assign(r.Number("quota_window_s", 1, 1e9), window_s),
                         Assign(r.Integer("max_queued_requests", 0, 1 << 20),
                                m.max_queued_requests)}) {
    if (!s.ok()) return s;
  }
  m.quota_window = absl::Seconds(window_s);
  return r.NoUnknownKeys();
}

absl::Status ParseClass(TableReader& r, WorkClassConfig& c, SloTarget& slo) {
  absl::StatusOr<std::string> name = r.Name("name");
  if (!name.ok()) return name.status();
  c = WorkClassConfig{};
  c.name = *std::move(name);
  double timeout_s = 0, ttft_s = 0, tpot_s = 0;
  for (absl::Status s : {Assign(r.Integer("priority", -1000, 1000), c.priority),
                         Assign(r.Integer("max_running", 0, 1 << 20), c.max_running),
                         Assign(r.Integer("kv_block_budget", 0, 1 << 24), c.kv_block_budget),
                         Assign(r.Bool("borrow"), c.borrow),
                         Assign(r.Number("weight", 1e-9, 1e9), c.weight),
                         Assign(r.Number("queue_timeout_s", 0, 1e9), timeout_s),
                         Assign(r.Number("slo_ttft_s", 0, 1e9), ttft_s),
                         Assign(r.Number("slo_tpot_s", 0, 1e9), tpot_s)}) {
    if (!s.ok()) return s;
  }
  c.queue_timeout = timeout_s > 0 ? absl::Seconds(timeout_s) : absl::InfiniteDuration();
  slo.ttft = ttft_s > 0 ? absl::Seconds(ttft_s) : absl::InfiniteDuration();
  slo.tpot = tpot_s > 0 ? absl::Seconds(tpot_s) : absl::InfiniteDuration();
  // The scheduler's targets too: its policy (the SLO-aware class level,
  // TPOT step budgets) reads WorkClassConfig, never the metrics' SloTarget.
  c.ttft_slo = slo.ttft;
  c.tpot_slo = slo.tpot;
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
    return absl::InvalidArgumentError(absl::StrCat(
        r.path(), ".role is \"", role_name, "\"; must be \"member\", \"admin\" or \"metrics\""));
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
      return absl::InvalidArgumentError(absl::StrCat(
          r.path(), ".allowed_classes is empty; list at least the key's default_class"));
    }
    k.allowed_classes = **std::move(allowed);
  }
  if (!IsToken68(k.key) || k.key.size() > 4096) {
    return absl::InvalidArgumentError(absl::StrCat(
        r.path(), ".key is not a token68 of at most 4096 bytes (letters, digits, -._~+/ then "
        "'=' padding), so no Authorization header could carry it"));
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
    const std::string path = absl::StrCat(origin, ": ", name, "[", i, "]");
    if (table == nullptr) return absl::InvalidArgumentError(absl::StrCat(path, " must be a table"));
    TableReader reader(*table, path);
    if (absl::Status s = parse(reader); !s.ok()) return s;
  }
  return absl::OkStatus();
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
  slos->assign(classes->size(), SloTarget{});
  for (size_t i = 0; i < classes->size(); ++i) {
    WorkClassConfig& c = (*classes)[i];
    c.max_retries = 0;
    const std::string& n = c.name;
    const double ttft_s = n == "voice" ? 0.5 : n == "chat" ? 2 : n == "agent" ? 5 : 60;
    (*slos)[i].ttft = absl::Seconds(ttft_s);
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
    if (k != "member" && k != "key" && k != "alias" && k != "class") {
      return absl::InvalidArgumentError(absl::StrCat(
          origin, ": top-level \"", k, "\" is unknown; allowed: [[member]], [[key]], [[alias]], "
          "[[class]]"));
    }
  }
  HouseholdConfig c;
  absl::Status s = ForEachTable(root, origin, "member", [&](TableReader& r) {
    return ParseMember(r, c.members.emplace_back());
  });
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
