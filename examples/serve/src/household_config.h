// File: examples/serve/src/household_config.h
//
// The household a hearth-serve instance serves, read from a TOML file:
// members (share weights, token quotas, queue limits), API keys (each
// belongs to one member, names the work class its calls default to and
// the classes it may use, and has a role that says which pages it reads),
// model aliases (a model name that selects a work class, e.g.
// "hearth-voice") and, optionally, the work classes with their SLOs.
//
// The members', the classes' and the [scheduler] table's keys are the
// options schema's (hearth/scheduler/option_fields.h), with its ranges: the
// same spelling as in the scenario TOML and the C API's JSON (a field's
// path, "_s" for seconds, "off" for a duration's InfiniteDuration).
//
//   [[member]]                   # UserConfig
//   name = "ana"
//   weight = 2.0                 # share weight, (0, 1e9]
//   token_quota = 200000         # prompt + max tokens per window; 0 = none
//   quota_window_s = 86400
//   max_queued_requests = 64     # unfinished requests at once; 0 = none
//
//   [[key]]
//   key = "sk-ana-phone"         # a token68: letters, digits, -._~+/ then '='s
//   member = "ana"               # optional for role "admin" and "metrics"
//   default_class = "voice"      # default "chat"
//   allowed_classes = ["voice", "chat"]   # default: default_class and every
//                                # class of lower priority than it
//   role = "member"              # "member": calls, and its own requests on
//                                # the pages; "admin": also every member's;
//                                # "metrics": scrapes /metrics, nothing else
//
//   [[alias]]
//   model = "hearth-voice"
//   class = "voice"
//
//   [[class]]                    # WorkClassConfig; optional: replaces the
//   name = "voice"               # default classes
//   priority = 4
//   max_running = 8
//   max_retries = 0
//   queue_timeout_s = 10         # "off": wait forever
//   ttft_slo_s = 0.5             # the scheduler's targets and the metrics'
//   tpot_slo_s = "off"
//   e2e_slo_s = "off"
//
//   [scheduler]                  # SchedulerOptions, over the library's defaults
//   max_admission_declines = 4
//   kv.block_size = 32           # or a [scheduler.kv] table
//
// [scheduler] refuses the fields hearth-serve sizes from the llama.cpp
// context or draws itself (max_batched_tokens, max_running,
// kv.num_device_blocks, kv.num_host_blocks, kv.enable_prefix_caching,
// preemption_mode, kv.prefix_hash_key), naming the flag that sets them.
// kv.block_size and max_prefill_chunk_tokens also have flags (--block_size,
// --prefill_chunk): a flag given on the command line wins over the file,
// the file wins over a flag left at its default (serve_main.cc).
//
// Every error names the file, the line, the table, the index and the key,
// and what is allowed. Unknown keys are errors, so a typo cannot silently
// change a limit; a key's old spelling (slo_ttft_s, slo_tpot_s) is refused
// naming the new one.
//
// Thread-safety: plain values.

#ifndef HEARTH_SERVE_HOUSEHOLD_CONFIG_H_
#define HEARTH_SERVE_HOUSEHOLD_CONFIG_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "hearth/metrics/metrics_collector.h"
#include "hearth/scheduler/scheduler_options.h"

namespace hearth::serve {

// What a key may read and do beyond its member's calls (see the file
// comment).
enum class KeyRole { kMember, kAdmin, kMetrics };

struct ApiKeyConfig {
  std::string key;
  // Empty only for an admin or metrics key that makes no calls.
  std::string member;
  std::string default_class;
  // Empty: the default (default_class and the classes of lower priority).
  std::vector<std::string> allowed_classes;
  KeyRole role = KeyRole::kMember;
};

struct ModelAliasConfig {
  std::string model;
  std::string work_class;
};

struct HouseholdConfig {
  // Scheduler users, one per member, in file order.
  std::vector<UserConfig> members;
  std::vector<ApiKeyConfig> keys;
  std::vector<ModelAliasConfig> aliases;
  // Work classes and the metrics' SLO targets, index for index: a class's
  // own targets (ttft_slo, tpot_slo, e2e_slo), except the default
  // background classes' report-only TTFT target (DefaultClasses).
  std::vector<WorkClassConfig> classes;
  std::vector<SloTarget> slos;
  // [scheduler]: the library's defaults with the file's fields set
  // (registries, sizes and policy are set by hearth-serve), and the schema
  // paths of the fields the file set ("kv.block_size"), in schema order.
  SchedulerOptions scheduler;
  std::vector<std::string> scheduler_fields;
  // When false (no file given) calls need no key and belong to the single
  // member "household".
  bool keys_required = true;
};

// The classes used when the file has no [[class]] table: Hearth's household
// classes plus "documents" (long background summaries). The metrics'
// targets are the classes' own (voice 0.5 s, chat 2 s, agent 5 s TTFT);
// embedding, maintenance and documents have no scheduler target, so that
// the policy keeps serving them by priority and share, and are judged on
// /status and /metrics by a report-only 60 s TTFT. Retries are off: a
// retried request restarts its generation, and a stream that already sent
// tokens cannot take them back.
void DefaultClasses(std::vector<WorkClassConfig>* classes, std::vector<SloTarget>* slos);

// One member, no keys, default classes.
HouseholdConfig OpenHousehold();

// ParseHouseholdToml()
//
// InvalidArgument naming `origin` and the field for malformed TOML, unknown
// or mistyped keys, out-of-range values, duplicate names or keys, a key
// that is not a token68 (an Authorization header could not carry it), keys
// or aliases naming an unknown member or class, and allowed_classes that
// name an unknown class or leave out the key's default_class. Errors never
// quote a key.
absl::StatusOr<HouseholdConfig> ParseHouseholdToml(absl::string_view text,
                                                   absl::string_view origin);

// Reads and parses `path` (NotFound when it cannot be read).
absl::StatusOr<HouseholdConfig> LoadHouseholdConfig(const std::string& path);

// The classes `key` may use, index for index over `config.classes`: its
// allowed_classes, or by default its default class and every class of
// strictly lower priority. REQUIRES: `key` passed ParseHouseholdToml.
std::vector<bool> AllowedClasses(const HouseholdConfig& config, const ApiKeyConfig& key);

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_HOUSEHOLD_CONFIG_H_
