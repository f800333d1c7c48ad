// household_config_fuzzer: the household TOML hearth-serve reads at start
// (examples/serve/src/household_config.h). Checks:
//   - ParseHouseholdToml answers a household or InvalidArgument whose
//     message names the file, never throws;
//   - an accepted household is whole: members, keys and classes present,
//     names unique and non-empty, every value in its documented range, one
//     SLO per class, every key's member and class and every alias's class
//     defined;
//   - every key works: sent as X-Api-Key, and as "Bearer <key>" when it is
//     visible ASCII, it authenticates as its member with its default class;
//     an alias selects its class;
//   - the scheduler takes it: Scheduler::Create on the household's members
//     and classes under the household policy, as hearth-serve starts (class
//     KV budgets held to the cache's size, which the file cannot know).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "hearth/policy/policy_registry.h"
#include "hearth/scheduler/scheduler.h"
#include "household_config.h"
#include "household_directory.h"
#include "tests/fuzz/fuzz_check.h"

namespace hearth::serve::fuzz {
namespace {

using hearth::fuzz::Note;
using hearth::fuzz::Require;

constexpr char kOrigin[] = "fuzz-household.toml";
constexpr char kModel[] = "tiny";

template <typename T, typename Name>
void RequireUniqueNames(const std::vector<T>& items, Name name, absl::string_view what) {
  absl::flat_hash_set<std::string> seen;
  for (const T& item : items) {
    const std::string& n = name(item);
    Require(!n.empty(), absl::StrCat("an accepted ", what, " with an empty name"));
    Require(seen.insert(n).second, absl::StrCat("an accepted ", what, " named twice: ", n));
  }
}

size_t ClassIndex(const HouseholdConfig& c, absl::string_view name) {
  for (size_t i = 0; i < c.classes.size(); ++i) {
    if (c.classes[i].name == name) return i;
  }
  hearth::fuzz::Fail(absl::StrCat("an accepted household names the class \"", name,
                                  "\", which it does not define"));
}

size_t MemberIndex(const HouseholdConfig& c, absl::string_view name) {
  for (size_t i = 0; i < c.members.size(); ++i) {
    if (c.members[i].name == name) return i;
  }
  hearth::fuzz::Fail(absl::StrCat("an accepted key belongs to \"", name, "\", no member"));
}

void CheckWhole(const HouseholdConfig& c) {
  Require(c.keys_required, "a household file that needs no keys");
  Require(!c.members.empty() && !c.keys.empty() && !c.classes.empty(),
          "an accepted household without members, keys or classes");
  Require(c.slos.size() == c.classes.size(), "not one SLO per class");
  RequireUniqueNames(c.members, [](const UserConfig& m) -> const std::string& { return m.name; },
                     "member");
  RequireUniqueNames(c.classes,
                     [](const WorkClassConfig& w) -> const std::string& { return w.name; }, "class");
  RequireUniqueNames(c.keys, [](const ApiKeyConfig& k) -> const std::string& { return k.key; },
                     "key");
  RequireUniqueNames(c.aliases,
                     [](const ModelAliasConfig& a) -> const std::string& { return a.model; },
                     "alias");
  for (const UserConfig& m : c.members) {
    Require(std::isfinite(m.weight) && m.weight > 0 && m.weight <= 1e9, "a member weight out of range");
    Require(m.token_quota >= 0 && m.max_queued_requests >= 0, "a negative member limit");
    Require(m.quota_window > absl::ZeroDuration() && m.quota_window < absl::InfiniteDuration(),
            "a quota window out of range");
  }
  for (const ApiKeyConfig& k : c.keys) {
    if (!k.member.empty()) MemberIndex(c, k.member);
    ClassIndex(c, k.default_class);
  }
  for (const ModelAliasConfig& a : c.aliases) ClassIndex(c, a.work_class);
}

bool VisibleAscii(absl::string_view s) {
  for (char ch : s) {
    if (ch <= 0x20 || ch >= 0x7f) return false;
  }
  return !s.empty();
}

void CheckKeysWork(const HouseholdConfig& c) {
  HouseholdDirectory directory(c, kModel);
  for (const ApiKeyConfig& k : c.keys) {
    if (k.member.empty()) continue;  // a key of no member makes no calls
    std::vector<std::pair<std::string, std::string>> ways = {{"", k.key}};
    if (VisibleAscii(k.key)) ways.emplace_back(absl::StrCat("Bearer ", k.key), "");
    for (const auto& [authorization, api_key] : ways) {
      absl::StatusOr<Caller> caller = directory.Authenticate(authorization, api_key);
      Require(caller.ok(), absl::StrCat("key[", &k - c.keys.data(), "] of an accepted household is ",
                                        "refused: ", caller.status().ToString()));
      Require(caller->member == k.member && caller->user.value() == MemberIndex(c, k.member) &&
                  caller->work_class.value() == ClassIndex(c, k.default_class),
              "a key authenticates as another member or class");
    }
  }
  // An alias selects its class for a caller allowed it (the first member
  // key whose default is that class).
  for (const ModelAliasConfig& a : c.aliases) {
    for (const ApiKeyConfig& k : c.keys) {
      if (k.member.empty() || k.default_class != a.work_class) continue;
      absl::StatusOr<Caller> caller = directory.Authenticate("", k.key);
      Require(caller.ok(), "a key refused");
      const absl::Status s = directory.ResolveClass(a.model, "", *caller);
      Require(s.ok() && caller->work_class.value() == ClassIndex(c, a.work_class),
              absl::StrCat("alias \"", a.model, "\" does not select its class: ", s.ToString()));
      break;
    }
  }
}

// As hearth-serve starts (serve_main.cc, serve_engine.cc): the file's
// [scheduler] fields, its members and classes, the household policy, a
// context's worth of KV.
void CheckSchedulerTakesIt(const HouseholdConfig& c) {
  SchedulerOptions o = c.scheduler;
  o.users = c.members;
  o.work_classes = c.classes;
  o.kv.block_size = 16;
  o.kv.num_device_blocks = 512;
  // The watermark is held below the same cache for the same reason.
  o.kv.watermark_blocks = std::min(o.kv.watermark_blocks, o.kv.num_device_blocks - 1);
  // A class's KV budget is checked against the cache the server finds at
  // start (--n_ctx / --block_size), which the file cannot know: the
  // scheduler refuses a larger one naming both; here it is held to this
  // cache's size.
  for (WorkClassConfig& w : o.work_classes) {
    w.kv_block_budget = std::min(w.kv_block_budget, o.kv.num_device_blocks);
  }
  o.kv.num_host_blocks = 0;
  o.kv.enable_prefix_caching = false;
  o.preemption_mode = PreemptionMode::kRecompute;
  o.max_batched_tokens = 512;
  o.max_running = 64;
  ModelConfig m;
  m.name = kModel;
  m.context_length = o.kv.num_device_blocks * o.kv.block_size;
  m.vocab_size = 258;
  m.kv_bytes_per_token = 2048;
  o.models = {m};
  absl::StatusOr<PolicyFactory> policy = MakePolicyFactory("household", {});
  Require(policy.ok(), "the household policy is not registered");
  o.policy_factory = *policy;
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(o);
  Require(s.ok(), absl::StrCat("an accepted household is refused by the scheduler: ",
                               s.status().ToString()));
}

}  // namespace
}  // namespace hearth::serve::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace f = hearth::serve::fuzz;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<hearth::serve::HouseholdConfig> c =
      hearth::serve::ParseHouseholdToml(text, f::kOrigin);
  hearth::fuzz::Note("ParseHouseholdToml", c.status());
  if (!c.ok()) {
    hearth::fuzz::Require(c.status().code() == absl::StatusCode::kInvalidArgument,
                          absl::StrCat("refused with ", c.status().ToString()));
    hearth::fuzz::Require(absl::StartsWith(c.status().message(), f::kOrigin),
                          absl::StrCat("a refusal that does not name the file: ",
                                       c.status().message()));
    return 0;
  }
  f::CheckWhole(*c);
  f::CheckKeysWork(*c);
  f::CheckSchedulerTakesIt(*c);
  return 0;
}
