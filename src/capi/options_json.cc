#include "capi/options_json.h"

#include <algorithm>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "capi/c_status.h"
#include "capi/json_fields.h"
#include "capi/policy_json.h"
#include "hearth/policy/policy_registry.h"
#include "internal/status_macros.h"
#include "scheduler/options_schema.h"

namespace hearth::capi {
namespace {

using nlohmann::json;

// Deepest bracket nesting of `text`, strings skipped. The parser would
// manage deeper documents; this bounds what a hostile caller can make it
// build before any key is checked.
int NestingDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// A key seen twice in one object, with its path ("users[1].name").
struct DuplicateKey {
  std::string path;
};

// nlohmann keeps the last of repeated keys; options are refused instead,
// so that what the host wrote twice is never silently one of the two. The
// parser's callback follows where it is (objects' current keys, arrays'
// indices) and throws DuplicateKey.
json ParseRefusingDuplicates(std::string_view text) {
  struct Frame {
    bool array = false;
    size_t index = 0;
    std::string key;
    absl::flat_hash_set<std::string> keys;
  };
  std::vector<Frame> frames;
  // The path of key `last` of the innermost object.
  auto path_to = [&frames](std::string_view last) {
    std::string path;
    for (size_t i = 0; i < frames.size(); ++i) {
      const Frame& f = frames[i];
      const bool innermost = i + 1 == frames.size();
      if (f.array) {
        absl::StrAppend(&path, "[", f.index, "]");
      } else {
        const std::string_view key = innermost ? last : std::string_view(f.key);
        absl::StrAppend(&path, path.empty() ? "" : ".", AbslView(key.substr(0, 64)));
      }
    }
    return path;
  };
  // After a value (a scalar, an object or an array) ends: the next element
  // of an array is the next index.
  auto value_ended = [&frames] {
    if (!frames.empty() && frames.back().array) ++frames.back().index;
  };
  json::parser_callback_t callback = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        frames.emplace_back().array = event == json::parse_event_t::array_start;
        break;
      case json::parse_event_t::key: {
        Frame& f = frames.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) throw DuplicateKey{path_to(f.key)};
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames.pop_back();
        value_ended();
        break;
      case json::parse_event_t::value:
        value_ended();
        break;
    }
    return true;
  };
  return json::parse(text.begin(), text.end(), callback);
}

// A table field's key: its last path segment, seconds for a Duration.
template <typename T>
std::string KeyOf(std::string_view segment) {
  std::string key(segment);
  if constexpr (std::is_same_v<T, absl::Duration>) key += "_s";
  return key;
}

absl::Status ReadValue(const JsonFields& f, const std::string& key, int32_t* v) {
  return f.Read(key, v);
}
absl::Status ReadValue(const JsonFields& f, const std::string& key, int64_t* v) {
  return f.Read(key, v);
}
// Any 64-bit pattern is a key (KvCacheConfig::prefix_hash_key); JSON carries
// it as a signed integer, a negative one standing for its two's complement.
absl::Status ReadValue(const JsonFields& f, const std::string& key, uint64_t* v) {
  auto bits = static_cast<int64_t>(*v);
  HEARTH_RETURN_IF_ERROR(f.Read(key, &bits));
  *v = static_cast<uint64_t>(bits);
  return absl::OkStatus();
}
absl::Status ReadValue(const JsonFields& f, const std::string& key, double* v) {
  return f.Read(key, v);
}
absl::Status ReadValue(const JsonFields& f, const std::string& key, bool* v) {
  return f.Read(key, v);
}
absl::Status ReadValue(const JsonFields& f, const std::string& key, absl::Duration* v) {
  return f.ReadSeconds(key, v);
}
// Every string field of the options is a name, or names a model.
absl::Status ReadValue(const JsonFields& f, const std::string& key, std::string* v) {
  return f.ReadName(key, v);
}
absl::Status ReadValue(const JsonFields& f, const std::string& key, PreemptionMode* v) {
  std::string mode;
  HEARTH_RETURN_IF_ERROR(f.Read(key, &mode));
  if (mode == "recompute") {
    *v = PreemptionMode::kRecompute;
  } else if (mode == "swap") {
    *v = PreemptionMode::kSwap;
  } else if (f.Find(key) != nullptr) {
    return JsonFieldError(f.PathOf(key), "must be \"recompute\" or \"swap\"");
  }
  return absl::OkStatus();
}

// Reads the fields a visitor of options_schema.h walks from the object
// `f`: "kv.block_size" from f's "kv" object, key "block_size".
class TableReader {
 public:
  explicit TableReader(const JsonFields& f) : f_(f) {}

  template <typename T>
  void operator()(const internal::OptionField& field, T& value) {
    if (!status_.ok()) return;
    const size_t dot = field.path.find('.');
    if (dot == std::string_view::npos) {
      status_ = ReadValue(f_, KeyOf<T>(field.path), &value);
      return;
    }
    const std::string object(field.path.substr(0, dot));
    const json* nested = f_.Find(object);
    if (nested == nullptr) return;
    if (!nested->is_object()) {
      status_ = JsonFieldError(f_.PathOf(object),
                               absl::StrCat("is ", nested->type_name(), "; must be an object"));
      return;
    }
    status_ = ReadValue(JsonFields(*nested, f_.PathOf(object)), KeyOf<T>(field.path.substr(dot + 1)),
                        &value);
  }

  absl::Status status() const { return status_; }

 private:
  const JsonFields& f_;
  absl::Status status_;
};

// The keys a visitor's fields take in an object (top-level segments, with
// nested objects' names once) and, in `nested`, each nested object's.
class KeyLister {
 public:
  template <typename T>
  void operator()(const internal::OptionField& field, const T&) {
    const size_t dot = field.path.find('.');
    if (dot == std::string_view::npos) {
      Add(&keys_, KeyOf<T>(field.path));
      return;
    }
    const std::string object(field.path.substr(0, dot));
    Add(&keys_, object);
    Add(&nested_[object], KeyOf<T>(field.path.substr(dot + 1)));
  }

  std::vector<std::string>& keys() { return keys_; }
  const std::map<std::string, std::vector<std::string>>& nested() const { return nested_; }

 private:
  static void Add(std::vector<std::string>* list, std::string key) {
    if (std::find(list->begin(), list->end(), key) == list->end()) list->push_back(std::move(key));
  }
  std::vector<std::string> keys_;
  std::map<std::string, std::vector<std::string>> nested_;
};

// Checks `f`'s keys against a visitor's (and `extra`), nested objects'
// too, then reads every field.
template <typename Config, typename Visit>
absl::Status ReadTable(const JsonFields& f, Config& config, Visit visit,
                       std::initializer_list<std::string_view> extra = {}) {
  KeyLister lister;
  visit(config, lister);
  for (std::string_view k : extra) lister.keys().emplace_back(k);
  HEARTH_RETURN_IF_ERROR(f.CheckKeys(lister.keys()));
  for (const auto& [object, keys] : lister.nested()) {
    const json* nested = f.Find(object);
    if (nested != nullptr) HEARTH_RETURN_IF_ERROR(JsonFields(*nested, f.PathOf(object)).CheckKeys(keys));
  }
  TableReader reader(f);
  visit(config, reader);
  return reader.status();
}

absl::Status ReadModel(const JsonFields& f, ModelConfig& m) {
  return ReadTable(f, m, [](auto& c, auto& v) { internal::VisitModelFields(c, v); });
}

absl::Status ReadUser(const JsonFields& f, UserConfig& u) {
  return ReadTable(f, u, [](auto& c, auto& v) { internal::VisitUserFields(c, v); });
}

absl::Status ReadWorkClass(const JsonFields& f, WorkClassConfig& c) {
  return ReadTable(f, c, [](auto& x, auto& v) { internal::VisitWorkClassFields(x, v); });
}

// A list of objects replacing `out` whole, each read by `read_one`.
template <typename Config, typename ReadOne>
absl::Status ReadList(const JsonFields& parent, std::string_view key,
                      std::vector<Config>& out, ReadOne read_one) {
  const json* list = parent.Find(key);
  if (list == nullptr) return absl::OkStatus();
  const std::string path = parent.PathOf(key);
  if (!list->is_array()) {
    return JsonFieldError(path, absl::StrCat("is ", list->type_name(),
                                             "; must be an array of objects"));
  }
  std::vector<Config> read;
  for (size_t i = 0; i < list->size(); ++i) {
    Config& config = read.emplace_back();
    HEARTH_RETURN_IF_ERROR(
        read_one(JsonFields((*list)[i], absl::StrCat(path, "[", i, "]")), config));
  }
  out = std::move(read);
  return absl::OkStatus();
}

absl::Status ReadWorkClasses(const JsonFields& top, SchedulerOptions& o) {
  const json* classes = top.Find("work_classes");
  if (classes != nullptr && classes->is_string()) {
    if (*classes != "household") {
      return JsonFieldError("work_classes",
                            "must be \"household\" or an array of objects");
    }
    o.work_classes = HouseholdWorkClasses();
    return absl::OkStatus();
  }
  return ReadList(top, "work_classes", o.work_classes, ReadWorkClass);
}

absl::Status ReadMetrics(const JsonFields& top, hearth_options& o) {
  const json* object = top.Find("metrics");
  if (object == nullptr) return absl::OkStatus();
  JsonFields f(*object, "metrics");
  HEARTH_RETURN_IF_ERROR(
      f.CheckKeys({"enabled", "prefill_weight", "decode_weight", "max_gap_users"}));
  HEARTH_RETURN_IF_ERROR(f.Read("enabled", &o.metrics_enabled));
  HEARTH_RETURN_IF_ERROR(f.Read("prefill_weight", &o.metrics_prefill_weight));
  HEARTH_RETURN_IF_ERROR(f.Read("decode_weight", &o.metrics_decode_weight));
  int32_t gap_users = o.metrics_max_gap_users;
  HEARTH_RETURN_IF_ERROR(f.Read("max_gap_users", &gap_users));
  o.metrics_max_gap_users = gap_users;
  return absl::OkStatus();
}

absl::Status ReadPolicy(const JsonFields& top, hearth_options& o) {
  std::string name = o.policy;
  HEARTH_RETURN_IF_ERROR(top.Read("policy", &name));
  HEARTH_RETURN_IF_ERROR(CheckPolicyName(name));
  o.policy = std::move(name);
  return ReadPolicyConfig(top, o.policy_config);
}

}  // namespace

absl::Status CheckPolicyName(std::string_view name) {
  for (std::string_view known : KnownPolicyNames()) {
    if (known == name) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("policy \"", AbslView(name.substr(0, 64)), "\" is unknown; known: ",
                   JoinNames(KnownPolicyNames())));
}

namespace {

// `text` parsed as one JSON document of `what`, within the size and depth
// bounds, duplicate keys refused.
absl::StatusOr<json> ParseBounded(std::string_view text, std::string_view what) {
  if (text.size() > kMaxOptionsJsonBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        AbslView(what), ": ", text.size(), " bytes; at most ", kMaxOptionsJsonBytes));
  }
  if (const int depth = NestingDepth(text); depth > kMaxOptionsJsonDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        AbslView(what), ": nested ", depth, " deep; at most ", kMaxOptionsJsonDepth));
  }
  try {
    return ParseRefusingDuplicates(text);
  } catch (const DuplicateKey& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        AbslView(what), ": key \"", e.path, "\" appears twice; each key may appear once per object"));
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(AbslView(what), ": ", e.what()));
  }
}

}  // namespace

absl::Status ApplyModelJson(std::string_view text, ModelConfig& model) {
  HEARTH_ASSIGN_OR_RETURN(const json document, ParseBounded(text, "model JSON"));
  if (!document.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("model JSON is ", document.type_name(),
                                                   "; must be an object like an options "
                                                   "\"models\" entry"));
  }
  return ReadModel(JsonFields(document, ""), model);
}

absl::Status ApplyOptionsJson(std::string_view text, hearth_options& options) {
  HEARTH_ASSIGN_OR_RETURN(const json document, ParseBounded(text, "options JSON"));
  JsonFields top(document, "");
  SchedulerOptions& o = options.scheduler;
  // Every field of the options' table, the registries, and what only the C
  // API has (the policy by name and its settings, the collector's).
  HEARTH_RETURN_IF_ERROR(ReadTable(
      top, o, [](auto& c, auto& v) { internal::VisitOptionFields(c, v); },
      {"models", "users", "work_classes", "policy", "vtc", "priority", "mlfq", "household",
       "workflow_head_start_s", "metrics"}));
  HEARTH_RETURN_IF_ERROR(ReadList(top, "models", o.models, ReadModel));
  HEARTH_RETURN_IF_ERROR(ReadList(top, "users", o.users, ReadUser));
  HEARTH_RETURN_IF_ERROR(ReadWorkClasses(top, o));
  HEARTH_RETURN_IF_ERROR(ReadPolicy(top, options));
  return ReadMetrics(top, options);
}

}  // namespace hearth::capi
