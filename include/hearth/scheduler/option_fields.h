// File: hearth/scheduler/option_fields.h
//
// The settable fields of SchedulerOptions and of its registries' entries
// (ModelConfig, UserConfig, WorkClassConfig) as data: each field's path, its
// type, what Scheduler::Create allows and a line of documentation. Every
// front end that reads options from text -- the C API's options JSON, the
// simulator's scenario TOML, hearth-serve's household TOML -- walks this
// list, so each field has one spelling (OptionKey()), one range and one
// text, and a field added to the options is settable everywhere at once.
//
// A front end reads a value in its own syntax, converts it to an
// OptionValue and calls SetOptionField(); a refusal says "is <value>;
// <allowed>", which the front end prefixes with the key as its caller
// wrote it ("scenario.toml:12:1: scheduler.kv.block_size is 0; must be in
// [1, 4096]"). Rules that relate two fields (a watermark below the pool)
// are left to Scheduler::Create, whose messages name the field's path.
//
// Thread-safety: plain functions over plain values.
//
// Example:
//   hearth::SchedulerOptions o;
//   for (const hearth::OptionFieldInfo& f : hearth::OptionFields(hearth::OptionScope::kOptions)) {
//     if (f.path == "max_batched_tokens") {
//       absl::Status s = hearth::SetOptionField(o, f, int64_t{4096});
//     }
//   }

#ifndef HEARTH_SCHEDULER_OPTION_FIELDS_H_
#define HEARTH_SCHEDULER_OPTION_FIELDS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hearth/scheduler/scheduler_options.h"

namespace hearth {

// Which struct a field belongs to: SchedulerOptions itself (nested structs'
// fields as "kv.block_size"), or one entry of a registry.
enum class OptionScope { kOptions, kModel, kUser, kWorkClass };

enum class OptionType {
  kInt32,
  kInt64,
  // Any 64-bit pattern (KvCacheConfig::prefix_hash_key).
  kUint64,
  kDouble,
  kBool,
  // Text front ends write seconds, key suffixed "_s" (OptionKey()).
  kDuration,
  kString,
  // "recompute" or "swap" (PreemptionMode).
  kPreemptionMode,
};

struct OptionFieldInfo {
  OptionScope scope = OptionScope::kOptions;
  // Relative to the scope's struct: "kv.block_size", "weight".
  std::string_view path;
  OptionType type = OptionType::kInt32;
  // What Scheduler::Create allows ("must be in [1, 4096]"); for a rule that
  // relates it to other fields, that rule in words.
  std::string_view allowed;
  // What the field changes, in one or two sentences.
  std::string_view doc;
  // True when `allowed` relates the field to others or names: Create, not
  // SetOptionField, judges it.
  bool checked_by_create = false;
};

// A value as a front end read it. Integer fields take int64_t (and a
// kUint64 field a negative one as its two's complement); double fields an
// int64_t or a double; durations an absl::Duration, or seconds as an
// int64_t or a double (rounded to the nanosecond; infinity is
// InfiniteDuration) or the string "off" (InfiniteDuration); names and
// PreemptionMode a string.
using OptionValue = std::variant<int64_t, double, bool, absl::Duration, std::string>;

// Every field of `scope`, in declaration order.
const std::vector<OptionFieldInfo>& OptionFields(OptionScope scope);

// The one spelling of a field's key in every text front end: its path, plus
// "_s" for a duration, which is written in seconds ("queue_timeout_s",
// "step_time_model.fixed_s").
std::string OptionKey(const OptionFieldInfo& field);

// What a value of `type` must be, in the words SetOptionField's refusals
// use ("a number of seconds or \"off\""), for a front end to say the same
// of a value it cannot convert at all (a TOML table where a number goes).
std::string_view OptionTypeInWords(OptionType type);

// SetOptionField()
//
// Sets `field` of `target` (the struct of field.scope) to `value`.
// InvalidArgument "is <value>; <allowed>" when the value is outside the
// field's range (NaN included), "must be <type>" when it is of another
// type; `target` is then unchanged.
absl::Status SetOptionField(SchedulerOptions& target, const OptionFieldInfo& field,
                            const OptionValue& value);
absl::Status SetOptionField(ModelConfig& target, const OptionFieldInfo& field,
                            const OptionValue& value);
absl::Status SetOptionField(UserConfig& target, const OptionFieldInfo& field,
                            const OptionValue& value);
absl::Status SetOptionField(WorkClassConfig& target, const OptionFieldInfo& field,
                            const OptionValue& value);

// The value of `field` in `source`: int64_t for integers (kUint64's bits
// as a signed value), and a string for PreemptionMode.
OptionValue GetOptionField(const SchedulerOptions& source, const OptionFieldInfo& field);
OptionValue GetOptionField(const ModelConfig& source, const OptionFieldInfo& field);
OptionValue GetOptionField(const UserConfig& source, const OptionFieldInfo& field);
OptionValue GetOptionField(const WorkClassConfig& source, const OptionFieldInfo& field);

// `value` as a text front end writes it: durations in seconds ("0.5",
// "off" for InfiniteDuration), strings quoted.
std::string OptionValueText(const OptionValue& value);

}  // namespace hearth

#endif  // HEARTH_SCHEDULER_OPTION_FIELDS_H_
