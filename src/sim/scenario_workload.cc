// The [workload] section of a scenario, and building the workload from it.

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "hearth/sim/azure_trace.h"
#include "hearth/sim/scenario_config.h"
#include "internal/status_macros.h"
#include "sim/length_sampling.h"
#include "sim/request_cap.h"
#include "sim/scenario_reader.h"
#include "sim/sim_random.h"

namespace hearth {
namespace internal {
namespace {

constexpr const char* kPath = "workload";
// request_cap's upper bound: about 60 GB of requests.
constexpr int64_t kMaxRequestCap = 100'000'000;

absl::StatusOr<std::vector<uint32_t>> UserList(const ScenarioReader& r,
                                               const toml::table& w,
                                               const Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(std::vector<std::string> names, r.Strings(w, "users", kPath));
  std::vector<uint32_t> out;
  if (names.empty()) {
    for (size_t i = 0; i < s.scheduler.users.size(); ++i) out.push_back(i);
    return out;
  }
  for (const std::string& n : names) {
    HEARTH_ASSIGN_OR_RETURN(uint32_t u, r.Lookup(*w.get("users"), "workload.users", n,
                                                 UserNames(s), "user"));
    out.push_back(u);
  }
  return out;
}

absl::StatusOr<uint32_t> ClassAt(const ScenarioReader& r, const toml::table& t,
                                 std::string_view key, const std::string& path,
                                 const Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(std::string name, r.String(t, key, path, std::nullopt));
  return r.Lookup(*t.get(key), absl::StrCat(path, ".", std::string(key)), name,
                  ClassNames(s), "class");
}

absl::StatusOr<uint32_t> UserAt(const ScenarioReader& r, const toml::table& t,
                                std::string_view key, const std::string& path,
                                const Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(std::string name, r.String(t, key, path, std::nullopt));
  return r.Lookup(*t.get(key), absl::StrCat(path, ".", std::string(key)), name,
                  UserNames(s), "user");
}

absl::Status ParseHousehold(const ScenarioReader& r, const toml::table& w,
                            Scenario& s) {
  HouseholdOptions& h = s.workload.household;
  HEARTH_ASSIGN_OR_RETURN(h.duration, r.Seconds(w, "duration_s", kPath, absl::Hours(4)));
  HEARTH_ASSIGN_OR_RETURN(double start_hour, r.Number(w, "start_hour", kPath, 18, 0, 24));
  h.start_time_of_day = absl::Seconds(std::llround(start_hour * 3600));
  HEARTH_ASSIGN_OR_RETURN(s.workload.load, r.Number(w, "load", kPath, 0, 0, 100));
  HEARTH_ASSIGN_OR_RETURN(h.load_scale, r.Number(w, "load_scale", kPath, 1, 0, 1e6));
  HEARTH_ASSIGN_OR_RETURN(h.diurnal, r.Numbers(w, "diurnal", kPath));
  if (!h.diurnal.empty() && h.diurnal.size() != 24) {
    return r.Error(*w.get("diurnal"), "workload.diurnal", "needs 24 hourly values");
  }
  // Which scenario class plays each household role.
  HEARTH_ASSIGN_OR_RETURN(const toml::table* roles, r.Table(w, "classes", kPath));
  HEARTH_RETURN_IF_ERROR(CheckKeys(*roles,
                                   {"voice", "chat", "documents", "agent", "nightly", "embedding",
                                    "photo"},
                                   r.file(), "workload.classes"));
  uint32_t ids[5] = {kNoClass, kNoClass, kNoClass, kNoClass, kNoClass};
  const char* role_names[5] = {"voice", "chat", "documents", "agent", "nightly"};
  for (int i = 0; i < 5; ++i) {
    if (roles->get(role_names[i]) == nullptr) continue;
    HEARTH_ASSIGN_OR_RETURN(ids[i], ClassAt(r, *roles, role_names[i], "workload.classes", s));
  }
  // Only the default classes are taken; the members stay h's own.
  HouseholdOptions d = DefaultHousehold(static_cast<int>(h.members.size()), ids[0], ids[1],
                                        ids[2], ids[3], ids[4]);
  // The search index's embeddings (EmbeddingJob), beside the default roles.
  if (roles->get("embedding") != nullptr) {
    HEARTH_ASSIGN_OR_RETURN(uint32_t embedding,
                            ClassAt(r, *roles, "embedding", "workload.classes", s));
    d.classes.push_back(EmbeddingJob(embedding));
  }
  // Questions about photos (PhotoAnalysis): encoder work beside the text.
  if (roles->get("photo") != nullptr) {
    HEARTH_ASSIGN_OR_RETURN(uint32_t photo, ClassAt(r, *roles, "photo", "workload.classes", s));
    d.classes.push_back(PhotoAnalysis(photo));
  }
  if (d.classes.empty()) {
    return r.Error(w, "workload.classes", "map at least one household role to a class");
  }
  h.classes = d.classes;
  // Optional per-role overrides of the session rate.
  HEARTH_ASSIGN_OR_RETURN(const toml::table* rates, r.Table(w, "sessions_per_hour", kPath));
  HEARTH_RETURN_IF_ERROR(CheckKeys(*rates,
                                   {"voice", "chat", "documents", "agent", "nightly", "embedding",
                                    "photo"},
                                   r.file(), "workload.sessions_per_hour"));
  for (HouseholdClassLoad& c : h.classes) {
    if (rates->get(c.name) == nullptr) continue;
    HEARTH_ASSIGN_OR_RETURN(c.sessions_per_hour,
                            r.Number(*rates, c.name, "workload.sessions_per_hour", 0, 0, 1e6));
  }
  // The nightly and embedding jobs belong to the first user unless named.
  for (const char* role : {"nightly", "embedding"}) {
    const std::string key = absl::StrCat(role, "_user");
    if (w.get(key) == nullptr) continue;
    HEARTH_ASSIGN_OR_RETURN(uint32_t u, UserAt(r, w, key, kPath, s));
    for (HouseholdClassLoad& c : h.classes) {
      if (c.name == role) c.members = {u};
    }
  }
  return absl::OkStatus();
}

absl::Status ParseAzure(const ScenarioReader& r, const toml::table& w, Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(std::string file, r.String(w, "file", kPath, std::nullopt));
  s.workload.trace_path = r.Resolve(file);
  return ParseMapping(r, w, s);
}

}  // namespace

absl::Status ParseMapping(const ScenarioReader& r, const toml::table& w, Scenario& s) {
  TraceMapping& m = s.workload.mapping;
  HEARTH_ASSIGN_OR_RETURN(m.users, UserList(r, w, s));
  HEARTH_ASSIGN_OR_RETURN(m.user_shares, r.Numbers(w, "shares", kPath));
  HEARTH_ASSIGN_OR_RETURN(std::string assign, r.String(w, "assignment", kPath, "round_robin"));
  if (assign == "random") {
    m.assignment = UserAssignment::kRandom;
  } else if (assign != "round_robin") {
    return r.Error(*w.get("assignment"), "workload.assignment",
                   "must be \"round_robin\" or \"random\"");
  }
  HEARTH_ASSIGN_OR_RETURN(m.time_scale,
                          r.Number(w, "time_scale", kPath, 1, kMinTimeScale, kMaxTimeScale));
  HEARTH_ASSIGN_OR_RETURN(m.skip, r.Seconds(w, "skip_s", kPath, absl::ZeroDuration()));
  HEARTH_ASSIGN_OR_RETURN(m.duration,
                          r.Seconds(w, "duration_s", kPath, absl::InfiniteDuration()));
  if (m.duration <= absl::ZeroDuration()) {
    return r.Error(*w.get("duration_s"), "workload.duration_s", "must be > 0");
  }
  HEARTH_ASSIGN_OR_RETURN(m.max_requests, r.Int(w, "max_requests", kPath, 0, 0, INT64_MAX));
  HEARTH_ASSIGN_OR_RETURN(m.default_class, ClassAt(r, w, "default_class", kPath, s));
  HEARTH_ASSIGN_OR_RETURN(auto rules, r.Tables(w, "class_rules", kPath));
  for (size_t i = 0; i < rules.size(); ++i) {
    const std::string path = absl::StrCat("workload.class_rules[", i, "]");
    HEARTH_RETURN_IF_ERROR(CheckKeys(*rules[i], {"max_prompt", "max_output", "class"},
                                     r.file(), path));
    ClassRule rule;
    HEARTH_ASSIGN_OR_RETURN(int64_t mp, r.Int(*rules[i], "max_prompt", path, INT32_MAX, 1,
                                              INT32_MAX));
    HEARTH_ASSIGN_OR_RETURN(int64_t mo, r.Int(*rules[i], "max_output", path, INT32_MAX, 1,
                                              INT32_MAX));
    rule.max_prompt_tokens = static_cast<int32_t>(mp);
    rule.max_output_tokens = static_cast<int32_t>(mo);
    HEARTH_ASSIGN_OR_RETURN(rule.work_class, ClassAt(r, *rules[i], "class", path, s));
    m.class_rules.push_back(rule);
  }
  absl::Status v = ValidateTraceMapping(m);
  if (!v.ok()) return r.Error(w, "workload", v.message());
  return absl::OkStatus();
}

namespace {

absl::Status ParseServeGen(const ScenarioReader& r, const toml::table& w, Scenario& s) {
  ServeGenOptions& o = s.workload.servegen;
  HEARTH_ASSIGN_OR_RETURN(std::string dir, r.String(w, "directory", kPath, std::nullopt));
  o.directory = r.Resolve(dir);
  HEARTH_ASSIGN_OR_RETURN(o.start, r.Seconds(w, "start_s", kPath, absl::ZeroDuration()));
  HEARTH_ASSIGN_OR_RETURN(o.duration, r.Seconds(w, "duration_s", kPath, absl::Hours(1)));
  HEARTH_ASSIGN_OR_RETURN(o.rate_scale, r.Number(w, "rate_scale", kPath, 1, 1e-9, 1e6));
  HEARTH_ASSIGN_OR_RETURN(o.prompt, r.Length(w, "prompt", kPath, o.prompt));
  HEARTH_ASSIGN_OR_RETURN(o.output, r.Length(w, "output", kPath, o.output));
  HEARTH_ASSIGN_OR_RETURN(o.lengths_from_datasets,
                          r.Bool(w, "lengths_from_datasets", kPath, false));
  HEARTH_ASSIGN_OR_RETURN(std::string datasets, r.String(w, "dataset_directory", kPath, ""));
  if (!datasets.empty()) o.dataset_directory = r.Resolve(datasets);
  HEARTH_ASSIGN_OR_RETURN(auto clients, r.Tables(w, "clients", kPath));
  if (clients.empty()) return r.Error(w, "workload.clients", "list at least one client");
  for (size_t i = 0; i < clients.size(); ++i) {
    const std::string path = absl::StrCat("workload.clients[", i, "]");
    HEARTH_RETURN_IF_ERROR(CheckKeys(*clients[i], {"id", "user", "class"}, r.file(), path));
    ServeGenClient c;
    HEARTH_ASSIGN_OR_RETURN(int64_t id, r.Int(*clients[i], "id", path, std::nullopt, 0, 1 << 20));
    c.client_id = static_cast<int32_t>(id);
    HEARTH_ASSIGN_OR_RETURN(c.user, UserAt(r, *clients[i], "user", path, s));
    HEARTH_ASSIGN_OR_RETURN(c.work_class, ClassAt(r, *clients[i], "class", path, s));
    o.clients.push_back(c);
  }
  return absl::OkStatus();
}

absl::Status ParseAgent(const ScenarioReader& r, const toml::table& w, Scenario& s) {
  AgentTraceOptions& o = s.workload.agent;
  HEARTH_ASSIGN_OR_RETURN(std::vector<std::string> dirs, r.Strings(w, "directories", kPath));
  if (dirs.empty()) return r.Error(w, "workload.directories", "list at least one folder");
  for (const std::string& d : dirs) {
    absl::StatusOr<std::vector<std::string>> files = ListJsonlFiles(r.Resolve(d));
    if (!files.ok()) {
      return r.Error(*w.get("directories"), "workload.directories", files.status().message());
    }
    o.files.insert(o.files.end(), files->begin(), files->end());
  }
  HEARTH_ASSIGN_OR_RETURN(o.users, UserList(r, w, s));
  HEARTH_ASSIGN_OR_RETURN(o.work_class, ClassAt(r, w, "class", kPath, s));
  HEARTH_ASSIGN_OR_RETURN(o.bytes_per_token, r.Number(w, "bytes_per_token", kPath, 4, 0.1, 100));
  HEARTH_ASSIGN_OR_RETURN(o.think_scale, r.Number(w, "think_scale", kPath, 1, 0, 100));
  HEARTH_ASSIGN_OR_RETURN(o.max_think, r.Seconds(w, "max_think_s", kPath, absl::Seconds(120)));
  HEARTH_ASSIGN_OR_RETURN(o.session_spacing,
                          r.Seconds(w, "session_spacing_s", kPath, absl::ZeroDuration()));
  HEARTH_ASSIGN_OR_RETURN(int64_t mp, r.Int(w, "max_prompt_tokens", kPath, 0, 0, 1 << 24));
  o.max_prompt_tokens = static_cast<int32_t>(mp);
  HEARTH_ASSIGN_OR_RETURN(o.max_sessions, r.Int(w, "max_sessions", kPath, 0, 0, 1 << 20));
  return absl::OkStatus();
}

absl::Status ParseFloods(const ScenarioReader& r, const toml::table& w, Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(auto floods, r.Tables(w, "flood", kPath));
  for (size_t i = 0; i < floods.size(); ++i) {
    const std::string path = absl::StrCat("workload.flood[", i, "]");
    const toml::table& f = *floods[i];
    HEARTH_RETURN_IF_ERROR(CheckKeys(
        f, {"user", "class", "count", "start_s", "spacing_s", "prompt", "output"},
        r.file(), path));
    FloodSpec spec;
    HEARTH_ASSIGN_OR_RETURN(spec.user, UserAt(r, f, "user", path, s));
    HEARTH_ASSIGN_OR_RETURN(spec.work_class, ClassAt(r, f, "class", path, s));
    HEARTH_ASSIGN_OR_RETURN(int64_t count, r.Int(f, "count", path, std::nullopt, 1, 1 << 24));
    spec.count = static_cast<int32_t>(count);
    HEARTH_ASSIGN_OR_RETURN(spec.start, r.Seconds(f, "start_s", path, absl::ZeroDuration()));
    HEARTH_ASSIGN_OR_RETURN(spec.spacing, r.Seconds(f, "spacing_s", path, absl::ZeroDuration()));
    HEARTH_ASSIGN_OR_RETURN(spec.prompt, r.Length(f, "prompt", path, spec.prompt));
    HEARTH_ASSIGN_OR_RETURN(spec.output, r.Length(f, "output", path, spec.output));
    s.workload.floods.push_back(spec);
  }
  return absl::OkStatus();
}

// The key naming where a workload of `kind` comes from.
std::string_view SourceKey(std::string_view kind) {
  if (kind == "azure") return "file";
  if (kind == "servegen") return "directory";
  if (kind == "agent") return "directories";
  if (!TraceKindKeys(kind).empty()) return "file";
  return "";
}

absl::Status ParseLimits(const ScenarioReader& r, const toml::table& w,
                         std::string_view kind, Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(s.workload.request_cap,
                          r.Int(w, "request_cap", kPath, kDefaultRequestCap, 1, kMaxRequestCap));
  const std::string_view key = SourceKey(kind);
  const toml::node* at = w.get(key);
  s.workload.origin = TomlWhere(r.file(), (at != nullptr ? *at : w).source(),
                                key.empty() ? kPath : JoinKey(kPath, key));
  at = w.get("request_cap");
  s.workload.cap_origin = TomlWhere(r.file(), (at != nullptr ? *at : w).source(),
                                    "workload.request_cap");
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseWorkload(const ScenarioReader& r, const toml::table& root,
                           Scenario& s) {
  HEARTH_ASSIGN_OR_RETURN(const toml::table* w, r.Table(root, "workload", ""));
  HEARTH_ASSIGN_OR_RETURN(std::string kind, r.String(*w, "kind", kPath, std::nullopt));
  absl::Status st;
  if (kind == "household") {
    HEARTH_RETURN_IF_ERROR(CheckKeys(
        *w, {"kind", "duration_s", "start_hour", "load", "load_scale", "diurnal", "classes",
             "sessions_per_hour", "nightly_user", "embedding_user", "flood", "request_cap"},
            r.file(), kPath));
    s.workload.kind = WorkloadSpec::Kind::kHousehold;
    st = ParseHousehold(r, *w, s);
  } else if (kind == "azure") {
    HEARTH_RETURN_IF_ERROR(CheckKeys(
        *w, {"kind", "file", "users", "shares", "assignment", "time_scale", "skip_s",
             "duration_s", "max_requests", "default_class", "class_rules", "flood",
             "request_cap"},
        r.file(), kPath));
    s.workload.kind = WorkloadSpec::Kind::kAzure;
    st = ParseAzure(r, *w, s);
  } else if (kind == "servegen") {
    HEARTH_RETURN_IF_ERROR(CheckKeys(
        *w, {"kind", "directory", "start_s", "duration_s", "rate_scale", "prompt", "output",
             "lengths_from_datasets", "dataset_directory", "clients", "flood", "request_cap"},
        r.file(), kPath));
    s.workload.kind = WorkloadSpec::Kind::kServeGen;
    st = ParseServeGen(r, *w, s);
  } else if (kind == "agent") {
    HEARTH_RETURN_IF_ERROR(CheckKeys(
        *w, {"kind", "directories", "users", "class", "bytes_per_token", "think_scale",
             "max_think_s", "session_spacing_s", "max_prompt_tokens", "max_sessions", "flood",
             "request_cap"},
        r.file(), kPath));
    s.workload.kind = WorkloadSpec::Kind::kAgent;
    st = ParseAgent(r, *w, s);
  } else if (const std::vector<std::string_view> keys = TraceKindKeys(kind); !keys.empty()) {
    HEARTH_RETURN_IF_ERROR(CheckKeys(*w, keys, r.file(), kPath));
    st = ParseTraceKind(r, *w, kind, s);
  } else {
    return r.Error(*w->get("kind"), "workload.kind",
                   "must be \"household\", \"azure\", \"servegen\", \"agent\", "
                   "\"mooncake\", \"sharegpt\", \"burstgpt\" or \"jsonl\"");
  }
  HEARTH_RETURN_IF_ERROR(st);
  HEARTH_RETURN_IF_ERROR(ParseLimits(r, *w, kind, s));
  return ParseFloods(r, *w, s);
}

}  // namespace internal

namespace {

absl::Status AddFloods(const Scenario& s, Workload& w) {
  int64_t total = static_cast<int64_t>(w.requests.size());
  for (const FloodSpec& f : s.workload.floods) total += f.count;
  if (total > s.workload.request_cap) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the workload and its floods make ", total, " requests, over the request_cap of ",
        s.workload.request_cap, " (", internal::RequestCapMemoryText(s.workload.request_cap),
        "); lower the floods' count or raise request_cap"));
  }
  internal::SimRandom rng(s.seed ^ 0xf100dull);
  for (const FloodSpec& f : s.workload.floods) {
    for (int32_t i = 0; i < f.count; ++i) {
      SimRequest r;
      r.arrival = f.start + f.spacing * i;
      r.user = f.user;
      r.work_class = f.work_class;
      r.prompt_tokens = internal::SampleLength(f.prompt, rng);
      r.output_tokens = internal::SampleLength(f.output, rng);
      r.label = absl::StrCat("flood:", i);
      w.requests.push_back(std::move(r));
    }
  }
  return absl::OkStatus();
}

// Requests per second FIFO finishes while the household mix keeps it busy.
absl::StatusOr<double> MeasureCapacity(const Scenario& s) {
  HouseholdOptions h = s.workload.household;
  h.seed = s.seed;
  h.duration = absl::Minutes(10);
  h.diurnal.assign(24, 1.0);
  for (HouseholdClassLoad& c : h.classes) {
    c.active_from_hour = c.active_to_hour = 0;  // all classes, all the time
  }
  h.load_scale = 1.0;
  const double base = ExpectedCallsPerSecond(h);
  if (base <= 0) return absl::InvalidArgumentError("household offers no work");
  // Saturated means the backlog outlives the arrivals by a margin; if not,
  // offer twice as much and measure again.
  for (double calls_per_s = 10; calls_per_s <= 1000; calls_per_s *= 2) {
    h.load_scale = calls_per_s / base;
    HEARTH_ASSIGN_OR_RETURN(Workload w, GenerateHousehold(h));
    HEARTH_ASSIGN_OR_RETURN(SimulationOptions o, SimulationOptionsFor(s, "fifo"));
    o.record_timeline = false;
    o.class_timeouts.clear();
    HEARTH_ASSIGN_OR_RETURN(SimulationResult r, RunSimulation(w, o));
    if (r.report.total.finished == 0) {
      return absl::InternalError("capacity run finished nothing");
    }
    if (r.simulated_seconds > 1.2 * absl::ToDoubleSeconds(h.duration)) {
      return r.report.total.finished / r.simulated_seconds;
    }
  }
  return absl::InternalError("could not saturate the GPU to measure capacity");
}

}  // namespace

namespace {

absl::StatusOr<Workload> BuildRequests(const Scenario& s, WorkloadCalibration* calibration) {
  Workload w;
  const WorkloadSpec& spec = s.workload;
  switch (spec.kind) {
    case WorkloadSpec::Kind::kHousehold: {
      HouseholdOptions h = spec.household;
      h.seed = s.seed;
      h.request_cap = spec.request_cap;
      WorkloadCalibration c;
      if (spec.load > 0) {
        HEARTH_ASSIGN_OR_RETURN(c.capacity_per_s, MeasureCapacity(s));
        HouseholdOptions unit = h;
        unit.load_scale = 1.0;
        c.offered_per_s_at_unit_scale = ExpectedCallsPerSecond(unit);
        if (c.offered_per_s_at_unit_scale <= 0) {
          return absl::InvalidArgumentError("household offers no work");
        }
        h.load_scale = spec.load * c.capacity_per_s / c.offered_per_s_at_unit_scale;
      } else {
        HouseholdOptions unit = h;
        unit.load_scale = 1.0;
        c.offered_per_s_at_unit_scale = ExpectedCallsPerSecond(unit);
      }
      c.load_scale = h.load_scale;
      if (calibration != nullptr) *calibration = c;
      HEARTH_ASSIGN_OR_RETURN(w, GenerateHousehold(h));
      break;
    }
    case WorkloadSpec::Kind::kAzure: {
      TraceMapping mapping = spec.mapping;
      mapping.seed = s.seed;
      HEARTH_ASSIGN_OR_RETURN(w, LoadAzureTrace(spec.trace_path, mapping));
      break;
    }
    case WorkloadSpec::Kind::kServeGen: {
      ServeGenOptions servegen = spec.servegen;
      servegen.seed = s.seed;
      servegen.request_cap = spec.request_cap;
      HEARTH_ASSIGN_OR_RETURN(w, LoadServeGen(servegen));
      break;
    }
    case WorkloadSpec::Kind::kAgent: {
      HEARTH_ASSIGN_OR_RETURN(w, LoadAgentTraces(spec.agent));
      break;
    }
    case WorkloadSpec::Kind::kMooncake:
    case WorkloadSpec::Kind::kShareGpt:
    case WorkloadSpec::Kind::kBurstGpt:
    case WorkloadSpec::Kind::kRequestJsonl: {
      HEARTH_ASSIGN_OR_RETURN(w, internal::LoadTraceKind(s));
      break;
    }
  }
  HEARTH_RETURN_IF_ERROR(AddFloods(s, w));
  return w;
}

}  // namespace

absl::StatusOr<Workload> BuildWorkload(const Scenario& s, WorkloadCalibration* calibration) {
  absl::StatusOr<Workload> w = BuildRequests(s, calibration);
  if (w.ok()) return w;
  // The library's messages name its options; the prefix names the scenario
  // entry they came from.
  const std::string& where = absl::IsResourceExhausted(w.status()) ? s.workload.cap_origin
                                                                   : s.workload.origin;
  if (where.empty()) return w.status();
  return absl::Status(w.status().code(), absl::StrCat(where, ": ", w.status().message()));
}

}  // namespace hearth
