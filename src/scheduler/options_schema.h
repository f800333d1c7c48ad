// File: src/scheduler/options_schema.h
//
// The one table of SchedulerOptions' settable fields: each field's path
// ("kv.block_size"), its type and the rule Scheduler::Create holds it to.
// ValidateOptions checks every field by it, and the C API's options JSON
// reads every field through it (a Duration's key is its path plus "_s",
// in seconds), so a field added here is validated and settable from JSON at
// once; tests/scheduler/options_schema_test.cc fails for a field of the
// structs that is missing here. Rules that relate two fields (a watermark
// below the pool, max_running within max_batched_tokens, weights that fit
// the device memory) are kRelated here and checked in options_validation.cc.
// Not part of the public API.
//
// Each entry also carries a line of documentation (OptionField::doc), which
// hearth/scheduler/option_fields.h publishes and the front ends' key tables
// are generated from.
//
// Visiting: VisitOptionFields(o, v) calls v(field, value) for every field,
// with `value` a reference into `o` (const when `o` is) of type int32_t,
// int64_t, uint64_t, double, bool, absl::Duration, std::string or PreemptionMode. The
// registries' entries are visited by VisitModelFields, VisitUserFields and
// VisitWorkClassFields, with paths relative to the entry ("weight").

#ifndef HEARTH_SCHEDULER_OPTIONS_SCHEMA_H_
#define HEARTH_SCHEDULER_OPTIONS_SCHEMA_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hearth/scheduler/scheduler_options.h"

namespace hearth::internal {

enum class DurationRule {
  kAny,
  // > 0; InfiniteDuration allowed.
  kPositive,
  // > 0 and finite.
  kPositiveFinite,
  // >= 0 and finite.
  kNonNegativeFinite,
  // >= 0; InfiniteDuration allowed.
  kNonNegative,
  // > 0 and at most kMaxSloTarget, or InfiniteDuration.
  kSloTarget,
};

struct OptionField {
  // Relative to the struct visited; nested structs' fields as "kv.block_size".
  std::string_view path;
  // kRelated: the rule relates this field to another; options_validation.cc
  // checks it. kName: a name (hearth/common/names.h), checked with the list.
  enum class Check { kTable, kRelated, kName } check = Check::kTable;
  // Integers and doubles: the closed range [lo, hi], or open at an end.
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;
  DurationRule duration = DurationRule::kAny;
  // What is allowed, as the message says it after "; ". For kRelated and
  // kName fields, the rule in words (the documentation's; options_validation.cc
  // words its own messages).
  std::string_view allowed;
  // What the field changes (hearth/scheduler/option_fields.h, and the
  // front ends' generated key documentation).
  std::string_view doc;

  constexpr OptionField Doc(std::string_view text) const {
    OptionField f = *this;
    f.doc = text;
    return f;
  }
};

inline constexpr double kInt32Max = std::numeric_limits<int32_t>::max();
inline constexpr double kInt64Max = 9.2233720368547758e18;

// [lo, hi] of an integer field, and what the message says.
constexpr OptionField Ints(std::string_view path, double lo, double hi,
                           std::string_view allowed) {
  OptionField f;
  f.path = path;
  f.lo = lo;
  f.hi = hi;
  f.allowed = allowed;
  return f;
}
// [lo, hi], or (lo, hi] with lo_open.
constexpr OptionField Doubles(std::string_view path, double lo, bool lo_open, double hi,
                              std::string_view allowed) {
  OptionField f = Ints(path, lo, hi, allowed);
  f.lo_open = lo_open;
  return f;
}
constexpr OptionField Durations(std::string_view path, DurationRule rule,
                                std::string_view allowed) {
  OptionField f;
  f.path = path;
  f.duration = rule;
  f.allowed = allowed;
  return f;
}
constexpr OptionField Related(std::string_view path, std::string_view allowed) {
  OptionField f;
  f.path = path;
  f.check = OptionField::Check::kRelated;
  f.allowed = allowed;
  return f;
}
inline constexpr std::string_view kNameAllowed =
    "must be a valid name (1 to 256 bytes of UTF-8, no control characters), unique in its list";
constexpr OptionField Name(std::string_view path) {
  OptionField f;
  f.path = path;
  f.check = OptionField::Check::kName;
  f.allowed = kNameAllowed;
  return f;
}
// No rule: any value of its type.
constexpr OptionField Any(std::string_view path) {
  OptionField f;
  f.path = path;
  return f;
}

inline constexpr std::string_view kSloTargetAllowed =
    "must be positive and at most kMaxSloTarget (365 days), or InfiniteDuration for no target";

template <typename Model, typename Visitor>
void VisitModelFields(Model& m, Visitor&& v) {
  v(Name("name").Doc("The model's name; requests name it (RequestSpec::model)."), m.name);
  v(Ints("context_length", 2, 1 << 30, "must be in [2, 2^30]")
        .Doc("Longest sequence, prompt plus generated tokens."),
    m.context_length);
  v(Ints("vocab_size", 0, kInt32Max, "must be >= 0 (0: unchecked)")
        .Doc("When > 0, submitted token ids must lie in [0, vocab_size)."),
    m.vocab_size);
  v(Ints("kv_bytes_per_token", 0, static_cast<double>(int64_t{1} << 40), "must be in [0, 2^40]")
        .Doc("KV bytes per token (layers x kv heads x head dim x 2 x dtype bytes); required "
             "with residency."),
    m.kv_bytes_per_token);
  v(Related("weights_bytes", "must be >= 0 and fit residency.device_memory_bytes")
        .Doc("Device bytes of the weights while resident (residency only)."),
    m.weights_bytes);
  v(Any("preload").Doc("Resident from the start (residency only)."), m.preload);
  v(Durations("keep_alive", DurationRule::kPositive,
              "must be positive (InfiniteDuration: only when memory is needed)")
        .Doc("Unloaded once idle this long (residency only); \"off\": only when memory is "
             "needed."),
    m.keep_alive);
  v(Related("base_model", "must be empty or name another model, itself a base model")
        .Doc("Non-empty: this entry is an adapter of that base model, sharing its KV layout."),
    m.base_model);
}

template <typename User, typename Visitor>
void VisitUserFields(User& u, Visitor&& v) {
  v(Name("name").Doc("The member's name; not \"_other\" (the metrics' series of the rest)."),
    u.name);
  v(Doubles("weight", 0, /*lo_open=*/true, 1e9, "must be in (0, 1e9]")
        .Doc("Fair-share weight for fairness policies."),
    u.weight);
  v(Ints("max_queued_requests", 0, kInt32Max, "must be >= 0 (0: no limit)")
        .Doc("Unfinished requests this user may have at once; 0: no limit of its own."),
    u.max_queued_requests);
  v(Ints("token_quota", 0, kInt64Max, "must be >= 0 (0: no quota)")
        .Doc("Prompt plus max new tokens this user may submit per quota window; 0: no quota."),
    u.token_quota);
  v(Durations("quota_window", DurationRule::kPositiveFinite, "must be positive and finite")
        .Doc("Length of a token-quota window, aligned to the Unix epoch."),
    u.quota_window);
}

template <typename Class, typename Visitor>
void VisitWorkClassFields(Class& c, Visitor&& v) {
  v(Name("name").Doc("The class's name; requests name it by its index (WorkClassId)."), c.name);
  v(Any("priority").Doc("Higher is more urgent."), c.priority);
  v(Ints("max_running", 0, kInt32Max, "must be >= 0 (0: no cap)")
        .Doc("Running sequences of the class beyond which it only borrows; 0: no cap."),
    c.max_running);
  v(Related("kv_block_budget", "must be in [0, kv.num_device_blocks] (0: none)")
        .Doc("KV blocks of the class beyond which it only borrows; 0: no budget."),
    c.kv_block_budget);
  v(Any("borrow").Doc("May run beyond max_running and kv_block_budget on idle capacity, "
                      "preempted first when that capacity is reclaimed."),
    c.borrow);
  v(Durations("queue_timeout", DurationRule::kPositive,
              "must be positive (InfiniteDuration: wait forever)")
        .Doc("Wait for first admission before a request times out; \"off\": forever."),
    c.queue_timeout);
  v(Ints("max_retries", 0, 100, "must be in [0, 100]")
        .Doc("Engine failures retried from scratch before the request fails."),
    c.max_retries);
  v(Doubles("weight", 0, /*lo_open=*/true, 1e9, "must be in (0, 1e9]")
        .Doc("Share weight between classes for class-sharing policy trees."),
    c.weight);
  v(Durations("ttft_slo", DurationRule::kSloTarget, kSloTargetAllowed)
        .Doc("Time-to-first-token target from arrival: the SLO-aware class level serves by it, "
             "metrics judge attainment by it; \"off\": none."),
    c.ttft_slo);
  v(Durations("tpot_slo", DurationRule::kSloTarget, kSloTargetAllowed)
        .Doc("Time-per-output-token target: step budgets are cut to keep the tightest running "
             "one; \"off\": none."),
    c.tpot_slo);
  v(Durations("e2e_slo", DurationRule::kSloTarget, kSloTargetAllowed)
        .Doc("Completion target of a class without a TTFT target (background work); "
             "\"off\": none."),
    c.e2e_slo);
}

static_assert(kMaxDraftTokens == 8, "max_draft_tokens' message says 8");

// The KvCacheConfig fields of VisitOptionFields.
template <typename Options, typename Visitor>
void VisitKvFields(Options& o, Visitor&& v) {
  v(Ints("kv.block_size", 1, 4096, "must be in [1, 4096]").Doc("Tokens per KV block."),
    o.kv.block_size);
  v(Ints("kv.num_device_blocks", 1, 1 << 24, "must be in [1, 2^24]")
        .Doc("Device KV blocks."),
    o.kv.num_device_blocks);
  v(Ints("kv.num_host_blocks", 0, 1 << 24, "must be in [0, 2^24]")
        .Doc("Host blocks for swap preemption; 0: recompute only."),
    o.kv.num_host_blocks);
  v(Related("kv.watermark_blocks", "must be in [0, kv.num_device_blocks)")
        .Doc("Blocks kept free at admission so running sequences can grow."),
    o.kv.watermark_blocks);
  v(Ints("kv.growth_headroom_tokens", 0, 1 << 20, "must be in [0, 2^20]")
        .Doc("Tokens of growth kept free per decoding sequence at admission, beside the "
             "watermark; 0: the watermark alone."),
    o.kv.growth_headroom_tokens);
  v(Any("kv.enable_prefix_caching")
        .Doc("Reuse KV of identical full prompt blocks within a request's cache scope."),
    o.kv.enable_prefix_caching);
  v(Any("kv.prefix_hash_key")
        .Doc("Secret mixed into every scope's first block hash (any 64-bit value; negative "
             "integers stand for their two's complement)."),
    o.kv.prefix_hash_key);
}

// The ResidencyConfig fields of VisitOptionFields.
template <typename Options, typename Visitor>
void VisitResidencyFields(Options& o, Visitor&& v) {
  v(Ints("residency.device_memory_bytes", 0, kInt64Max, "must be >= 0 (0: disabled)")
        .Doc("Device memory for weights plus KV; 0: residency off, every model resident."),
    o.residency.device_memory_bytes);
  v(Ints("residency.max_concurrent_loads", 1, kInt32Max, "must be >= 1")
        .Doc("Model loads in one step."),
    o.residency.max_concurrent_loads);
  v(Ints("residency.max_resident_adapters", 0, kInt32Max, "must be >= 0 (0: no limit)")
        .Doc("Adapters resident at once; 0: no limit but memory."),
    o.residency.max_resident_adapters);
  v(Ints("residency.max_adapters_per_step", 0, kInt32Max, "must be >= 0 (0: no limit)")
        .Doc("Distinct adapters among the running requests; 0: no limit."),
    o.residency.max_adapters_per_step);
}

// The preemption and step-time fields of VisitOptionFields.
template <typename Options, typename Visitor>
void VisitPreemptionFields(Options& o, Visitor&& v) {
  v(Related("preemption_mode", "must be \"recompute\" or \"swap\" (swap needs kv.num_host_blocks)")
        .Doc("How a preempted sequence gives its blocks back."),
    o.preemption_mode);
  v(Doubles("swap_block_cost_tokens", 0, false, std::numeric_limits<double>::max(),
            "must be >= 0 and finite")
        .Doc("Cost of moving one block to the host and back, in prefill tokens; prices swap "
             "against recompute."),
    o.swap_block_cost_tokens);
  v(Doubles("max_admission_waste_per_block", 0, false, std::numeric_limits<double>::max(),
            "must be >= 0 and finite (0: no preemption for admission)")
        .Doc("A waiting request may evict a running one only if the recompute thrown away is "
             "at most this many blocks per block it needs."),
    o.max_admission_waste_per_block);
  v(Durations("step_time_model.fixed", DurationRule::kNonNegativeFinite,
              "must be >= 0 and finite")
        .Doc("TPOT budget's step time model: the fixed part of a step."),
    o.step_time_model.fixed);
  v(Durations("step_time_model.per_token", DurationRule::kNonNegativeFinite,
              "must be >= 0 and finite")
        .Doc("TPOT budget's step time model: time per batched token; 0: fitted online from "
             "the steps seen."),
    o.step_time_model.per_token);
  v(Ints("max_preemptions_per_request", 1, kInt32Max, "must be >= 1")
        .Doc("After this many preemptions a request is no longer offered as a victim."),
    o.max_preemptions_per_request);
  v(Ints("max_out_of_kv_reports", 1, 1000000, "must be in [1, 1000000]")
        .Doc("Engine out-of-KV reports for one request before it fails."),
    o.max_out_of_kv_reports);
  v(Ints("max_draft_tokens", 0, kMaxDraftTokens,
         "must be in [0, 8] (0: no speculative decoding)")
        .Doc("Draft tokens a speculative step may verify per sequence."),
    o.max_draft_tokens);
  v(Any("overlap_planning")
        .Doc("Plan step N+1 before step N completes, decode tokens as placeholders."),
    o.overlap_planning);
}

// The intake and budget fields of VisitOptionFields.
template <typename Options, typename Visitor>
void VisitIntakeFields(Options& o, Visitor&& v) {
  v(Ints("max_pending_requests", 1, kInt32Max, "must be >= 1")
        .Doc("Unfinished requests, all users together."),
    o.max_pending_requests);
  v(Ints("max_pending_bytes", 1, kInt64Max, "must be >= 1")
        .Doc("Bytes of token ids and labels the unfinished requests hold."),
    o.max_pending_bytes);
  v(Doubles("reserved_pending_share", 0, false, 1, "must be in [0, 1]")
        .Doc("Part of both pending limits reserved for the users by weight."),
    o.reserved_pending_share);
  v(Ints("max_intake_per_plan", 1, 1 << 20, "must be in [1, 2^20]")
        .Doc("Submissions one step takes in, users taking turns."),
    o.max_intake_per_plan);
  v(Ints("max_label_bytes", 0, 1 << 24, "must be in [0, 2^24]").Doc("Longest request label."),
    o.max_label_bytes);
  v(Durations("max_arrival_lead", DurationRule::kNonNegativeFinite, "must be >= 0 and finite")
        .Doc("Arrival stamps further ahead of the step are rejected."),
    o.max_arrival_lead);
  v(Durations("workflow_retention", DurationRule::kNonNegative,
              "must be >= 0 (0: only live parents are joined)")
        .Doc("How long an ended call is remembered as an agent workflow's parent."),
    o.workflow_retention);
  v(Ints("max_batched_tokens", 1, 1 << 24, "must be in [1, 2^24]")
        .Doc("Token budget of one step."),
    o.max_batched_tokens);
  v(Related("max_running", "must be in [1, min(2^20, max_batched_tokens)]")
        .Doc("Sequences in one step."),
    o.max_running);
  v(Ints("max_prefill_chunk_tokens", 0, kInt32Max, "must be >= 0 (0: max_batched_tokens)")
        .Doc("Largest prefill chunk per sequence and step; 0: max_batched_tokens."),
    o.max_prefill_chunk_tokens);
  v(Ints("max_encoder_tokens_per_step", 0, 1 << 24, "must be in [0, 2^24] (0: max_batched_tokens)")
        .Doc("Encoder span positions one step may encode; 0: max_batched_tokens."),
    o.max_encoder_tokens_per_step);
  v(Ints("encoder_cache_tokens", 0, 1 << 24,
         "must be in [0, 2^24] (0: the encoder's budget per step)")
        .Doc("Encoder output the engine keeps, in span positions; 0: the budget per step."),
    o.encoder_cache_tokens);
  v(Ints("max_admission_declines", 0, kInt32Max, "must be >= 0")
        .Doc("Candidates declined in one step before admission stops for the step."),
    o.max_admission_declines);
}

// Every field of SchedulerOptions but the registries (visited per entry,
// above) and what only a C++ host can pass (policy_factory, on_result,
// metrics_sink), in declaration order.
template <typename Options, typename Visitor>
void VisitOptionFields(Options& o, Visitor&& v) {
  VisitKvFields(o, v);
  VisitResidencyFields(o, v);
  VisitPreemptionFields(o, v);
  VisitIntakeFields(o, v);
}

// The shortest text that reads back as `v` ("1.0000001", not "1"), as a
// rejected value is quoted.
std::string ExactDouble(double v);

// OK if `value` keeps `field`'s rule (kRelated and kName fields always);
// otherwise InvalidArgument "<prefix><path> is <value>; <allowed>".
absl::Status CheckField(const OptionField& field, std::string_view prefix, int64_t value);
absl::Status CheckField(const OptionField& field, std::string_view prefix, double value);
absl::Status CheckField(const OptionField& field, std::string_view prefix, absl::Duration value);

}  // namespace hearth::internal

#endif  // HEARTH_SCHEDULER_OPTIONS_SCHEMA_H_
