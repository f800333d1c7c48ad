// File: src/scheduler/spec_validation.cc
//
// Validation of a RequestSpec against the SchedulerOptions it is submitted
// under (ValidateSpec, declared in options_validation.h): its references,
// its length against the model and the KV cache, its tokens and targets,
// its stamps and its cache scope. Apart from options_validation.cc, which
// checks the options themselves once, since this runs on every Submit.

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hearth/scheduler/step_plan.h"
#include "kv/chain_scope.h"
#include "internal/status_macros.h"
#include "scheduler/model_memory.h"
#include "scheduler/model_registry.h"
#include "scheduler/options_schema.h"
#include "scheduler/options_validation.h"
#include "scheduler/pending_shares.h"

namespace hearth {

namespace internal {
namespace {

// One rule for every SLO target, a class's or a request's (the table's for
// classes, DurationRule::kSloTarget).
bool SloTargetAllowed(absl::Duration target) {
  return target == absl::InfiniteDuration() ||
         (target > absl::ZeroDuration() && target <= kMaxSloTarget);
}

}  // namespace
namespace {

template <typename... Parts>
absl::Status BadSpec(const Parts&... parts) {
  return absl::InvalidArgumentError(absl::StrCat("RequestSpec.", parts...));
}

// What a spec is checked against: the options and its model's entry
// (ValidateSpec resolves it first).
struct SpecContext {
  const SchedulerOptions& o;
  const ModelConfig& model;
  // The base's weights beside an adapter (0 for a base model).
  int64_t base_weights = 0;
};

absl::Status ValidateModelRef(const RequestSpec& spec, const ModelRegistry& models,
                              const ModelEntry** entry) {
  *entry = models.Get(spec.model);
  if (*entry == nullptr) {
    return BadSpec("model ", spec.model.ToString(), " is unknown; registered models are [0, ",
                   models.size(), ")");
  }
  if ((*entry)->removed.load(std::memory_order_acquire)) {
    return BadSpec("model ", spec.model.ToString(), " (\"", (*entry)->config.name,
                   "\") was removed (Scheduler::RemoveModel)");
  }
  return absl::OkStatus();
}

absl::Status ValidateSpecRefs(const RequestSpec& spec, const SpecContext& c) {
  const SchedulerOptions& o = c.o;
  if (!spec.user.valid() || spec.user.value() >= o.users.size()) {
    return BadSpec("user ", spec.user.ToString(), " is unknown; configured users are [0, ", o.users.size(), ")");
  }
  if (!spec.work_class.valid() || spec.work_class.value() >= o.work_classes.size()) {
    return BadSpec("work_class ", spec.work_class.ToString(), " is unknown; configured classes are [0, ",
               o.work_classes.size(), ")");
  }
  return absl::OkStatus();
}

// What the request's kind allows of the fields that describe its output.
absl::Status ValidateSpecKind(const RequestSpec& spec, const SpecContext&) {
  if (spec.kind != RequestKind::kGenerate && spec.kind != RequestKind::kEmbed) {
    return BadSpec("kind is ", static_cast<int>(spec.kind), "; must be kGenerate or kEmbed");
  }
  if (spec.pooling != Pooling::kLast && spec.pooling != Pooling::kMean) {
    return BadSpec("pooling is ", static_cast<int>(spec.pooling), "; must be kLast or kMean");
  }
  if (spec.num_samples < 1 || spec.num_samples > kMaxSamples ||
      (spec.num_samples > 1 && spec.kind != RequestKind::kGenerate)) {
    return BadSpec("num_samples is ", spec.num_samples, "; must be in [1, ", kMaxSamples,
                   "], and 1 for an embedding");
  }
  if (spec.kind == RequestKind::kGenerate) {
    if (spec.max_new_tokens < 1) {
      return BadSpec("max_new_tokens is ", spec.max_new_tokens,
                     "; must be >= 1 for a generation (0 is for kind kEmbed)");
    }
    if (spec.pooling != Pooling::kLast) {
      return BadSpec("pooling is ", std::string(PoolingName(spec.pooling)),
                     " but kind is generate; pooling applies to kind kEmbed only");
    }
    return absl::OkStatus();
  }
  if (spec.max_new_tokens != 0) {
    return BadSpec("max_new_tokens is ", spec.max_new_tokens,
                   " but kind is embed; an embedding generates nothing, so it must be 0");
  }
  if (spec.predicted_output.expected_tokens != 0 || spec.predicted_output.low_tokens != 0 ||
      spec.predicted_output.high_tokens != 0) {
    return BadSpec("predicted_output is set but kind is embed; an embedding has no output "
                   "tokens to predict");
  }
  if (spec.tpot_slo.has_value() && *spec.tpot_slo != absl::InfiniteDuration()) {
    return BadSpec("tpot_slo is ", absl::FormatDuration(*spec.tpot_slo),
                   " but kind is embed; an embedding has no tokens after its first, so leave "
                   "it unset (or InfiniteDuration)");
  }
  return absl::OkStatus();
}

absl::Status ValidateSpecLength(const RequestSpec& spec, const SpecContext& c) {
  const SchedulerOptions& o = c.o;
  const ModelConfig& model = c.model;
  if (spec.prompt_tokens < 1) {
    return BadSpec("prompt_tokens is ", spec.prompt_tokens, "; must be >= 1");
  }
  const int64_t total = int64_t{spec.prompt_tokens} + spec.max_new_tokens;
  if (total > model.context_length) {
    return BadSpec("prompt_tokens + max_new_tokens is ", total, " (", spec.prompt_tokens, " + ",
               spec.max_new_tokens, "); model \"", model.name, "\" allows at most ",
               model.context_length, " tokens per sequence");
  }
  const int64_t capacity = int64_t{o.kv.num_device_blocks} * o.kv.block_size;
  if (total > capacity) {
    return BadSpec("prompt_tokens + max_new_tokens is ", total,
               " tokens, more than the whole KV cache holds (", o.kv.num_device_blocks,
               " blocks of ", o.kv.block_size, " = ", capacity,
               " tokens); it could never run. Lower max_new_tokens or shorten the prompt");
  }
  return absl::OkStatus();
}

absl::Status ValidateSpecFits(const RequestSpec& spec, const SpecContext& c) {
  const SchedulerOptions& o = c.o;
  const ModelConfig& model = c.model;
  const int64_t total = int64_t{spec.prompt_tokens} + spec.max_new_tokens;
  if (o.residency.device_memory_bytes > 0) {
    const int64_t block_bytes = MaxBlockBytes(o);
    // An adapter runs beside its base.
    const int64_t weights = model.weights_bytes + c.base_weights;
    const int64_t blocks = std::min<int64_t>(
        (o.residency.device_memory_bytes - weights) / block_bytes, o.kv.num_device_blocks);
    if (total > blocks * o.kv.block_size) {
      return BadSpec("prompt_tokens + max_new_tokens is ", total, " tokens, more KV than fits beside model \"",
                 model.name, "\" even with no other model resident (", blocks * o.kv.block_size,
                 " tokens); it could never run");
    }
  }
  const WorkClassConfig& cls = o.work_classes[spec.work_class.value()];
  if (!cls.borrow && cls.kv_block_budget > 0 &&
      total > int64_t{cls.kv_block_budget} * o.kv.block_size) {
    return BadSpec("prompt_tokens + max_new_tokens is ", total, " tokens, more than class \"", cls.name,
               "\" may ever hold (a hard kv_block_budget of ", cls.kv_block_budget, " blocks = ",
               int64_t{cls.kv_block_budget} * o.kv.block_size, " tokens); it could never run");
  }
  return absl::OkStatus();
}

absl::Status ValidateSpecTokens(const RequestSpec& spec, const SpecContext& c) {
  const ModelConfig& model = c.model;
  if (!spec.prompt_token_ids.empty()) {
    if (static_cast<int64_t>(spec.prompt_token_ids.size()) != spec.prompt_tokens) {
      return BadSpec("prompt_token_ids has ", spec.prompt_token_ids.size(),
                 " ids but prompt_tokens is ", spec.prompt_tokens,
                 "; give exactly prompt_tokens ids or none");
    }
    for (size_t i = 0; i < spec.prompt_token_ids.size(); ++i) {
      const TokenId t = spec.prompt_token_ids[i];
      if (t < 0 || (model.vocab_size > 0 && t >= model.vocab_size)) {
        return BadSpec("prompt_token_ids[", i, "] is ", t, "; ids must be in [0, ",
                   model.vocab_size > 0 ? absl::StrCat(model.vocab_size) : std::string("2^31"),
                   ")");
      }
    }
  }
  if (const OutputLengthPrediction& p = spec.predicted_output;
      p.expected_tokens < 0 || p.expected_tokens > spec.max_new_tokens ||
      ((p.low_tokens != 0 || p.high_tokens != 0) &&
       !(p.low_tokens >= 1 && p.low_tokens <= p.expected_tokens &&
         p.expected_tokens <= p.high_tokens))) {
    return BadSpec("predicted_output is {expected ", p.expected_tokens, ", low ", p.low_tokens,
                   ", high ", p.high_tokens, "}; expected must be 0 (none) or in [1, max_new_tokens = ",
                   spec.max_new_tokens, "], and the range 0 and 0 or 1 <= low <= expected <= high");
  }
  if (spec.deadline == absl::InfinitePast()) {
    return BadSpec("deadline is InfinitePast; use InfiniteFuture for no deadline");
  }
  for (const auto& [name, target] : {std::pair{"ttft_slo", spec.ttft_slo},
                                     std::pair{"tpot_slo", spec.tpot_slo}}) {
    if (target.has_value() && !SloTargetAllowed(*target)) {
      return BadSpec(name, " is ", absl::FormatDuration(*target), "; ", absl::string_view(kSloTargetAllowed.data(), kSloTargetAllowed.size()));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateSpecStamps(const RequestSpec& spec, const SpecContext& c) {
  const SchedulerOptions& o = c.o;
  if (spec.arrival_time == absl::InfiniteFuture()) {
    return BadSpec("arrival_time is InfiniteFuture; leave it InfinitePast for \"now\" or "
                   "stamp the time the request reached the host");
  }
  if (spec.label.size() > static_cast<size_t>(o.max_label_bytes)) {
    return BadSpec("label is ", spec.label.size(), " bytes; SchedulerOptions.max_label_bytes "
                   "allows at most ", o.max_label_bytes);
  }
  const int64_t bytes = PendingBytes(spec);
  if (bytes > o.max_pending_bytes) {
    return BadSpec("prompt_token_ids and label hold ", bytes,
                   " bytes, more than all requests together may hold "
                   "(SchedulerOptions.max_pending_bytes = ", o.max_pending_bytes, ")");
  }
  return absl::OkStatus();
}

absl::Status ValidateSpecSpans(const RequestSpec& spec, const SpecContext& c) {
  const SchedulerOptions& o = c.o;
  const std::vector<EncoderSpan>& spans = spec.encoder_spans;
  if (spans.empty()) return absl::OkStatus();
  if (spans.size() > kMaxEncoderSpans) {
    return BadSpec("encoder_spans has ", spans.size(), " spans; at most ", kMaxEncoderSpans,
                   " (kMaxEncoderSpans)");
  }
  const int32_t budget = EncoderBudgetPerStep(o);
  const int32_t cache = EncoderCacheTokens(o);
  // A span is computed in one chunk, so it must fit one step too.
  const int32_t longest = std::min({budget, cache, o.max_batched_tokens});
  int64_t end_of_last = 0;
  for (size_t i = 0; i < spans.size(); ++i) {
    const EncoderSpan& e = spans[i];
    if (e.position < 0 || e.position >= spec.prompt_tokens) {
      return BadSpec("encoder_spans[", i, "].position is ", e.position,
                     "; must be in [0, prompt_tokens = ", spec.prompt_tokens, ")");
    }
    if (e.length < 1 || e.length > longest) {
      return BadSpec("encoder_spans[", i, "].length is ", e.length, "; must be in [1, ", longest,
                     "]: a span is encoded and computed within one step, so it must fit "
                     "max_encoder_tokens_per_step (", budget, "), encoder_cache_tokens (", cache,
                     ") and max_batched_tokens (", o.max_batched_tokens, ")");
    }
    const int64_t end = int64_t{e.position} + e.length;
    if (end > spec.prompt_tokens) {
      return BadSpec("encoder_spans[", i, "] covers [", e.position, ", ", end,
                     "), past the prompt's ", spec.prompt_tokens, " tokens");
    }
    if (e.position < end_of_last) {
      return BadSpec("encoder_spans[", i, "] starts at ", e.position,
                     ", inside or before the span before it (which ends at ", end_of_last,
                     "); spans must be sorted by position and must not overlap");
    }
    end_of_last = end;
  }
  return absl::OkStatus();
}

absl::Status ValidateSpecCacheScope(const RequestSpec& spec, const SpecContext&) {
  return ValidateCacheScope(spec);
}

}  // namespace

absl::Status ValidateSpec(const RequestSpec& spec, const SchedulerOptions& o,
                          const ModelRegistry& models) {
  const ModelEntry* entry = nullptr;
  HEARTH_RETURN_IF_ERROR(ValidateModelRef(spec, models, &entry));
  int64_t base_weights = 0;
  if (entry->base >= 0) {
    base_weights = std::clamp<int64_t>(
        models.Get(ModelId(static_cast<uint32_t>(entry->base)))->config.weights_bytes, 0,
        o.residency.device_memory_bytes);
  }
  const SpecContext c{o, entry->config, base_weights};
  for (auto check : {ValidateSpecRefs, ValidateSpecKind, ValidateSpecLength, ValidateSpecFits, ValidateSpecTokens,
                     ValidateSpecStamps, ValidateSpecCacheScope, ValidateSpecSpans}) {
    if (absl::Status s = check(spec, c); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace hearth
