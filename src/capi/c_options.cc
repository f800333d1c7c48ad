// hearth_options_*: building scheduler options from C.

#include <cmath>
#include <cstring>
#include <memory>

#include "capi/c_handles.h"
#include "capi/c_status.h"
#include "capi/options_json.h"
#include "hearth/common/names.h"

using hearth::capi::Fail;
using hearth::capi::FromStatus;
using hearth::capi::Guard;

namespace {

// The caller's string, read up to the JSON limit plus one byte so that an
// unterminated or oversized buffer is found without reading on for ever.
std::string_view BoundedString(const char* text, size_t limit) {
  return std::string_view(text, strnlen(text, limit + 1));
}

}  // namespace

extern "C" {

hearth_status hearth_options_new(hearth_options** out, hearth_error** error) {
  return Guard(error, "hearth_options_new", [&] {
    HEARTH_C_REQUIRE(out, "hearth_options_new", error);
    *out = new hearth_options;
    return HEARTH_OK;
  });
}

hearth_status hearth_options_from_json(const char* json, hearth_options** out,
                                       hearth_error** error) {
  return Guard(error, "hearth_options_from_json", [&] {
    HEARTH_C_REQUIRE(json, "hearth_options_from_json", error);
    HEARTH_C_REQUIRE(out, "hearth_options_from_json", error);
    *out = nullptr;
    auto options = std::make_unique<hearth_options>();
    const std::string_view text =
        BoundedString(json, hearth::capi::kMaxOptionsJsonBytes);
    const hearth_status status =
        FromStatus(hearth::capi::ApplyOptionsJson(text, *options), error);
    if (status == HEARTH_OK) *out = options.release();
    return status;
  });
}

void hearth_options_free(hearth_options* options) { delete options; }

hearth_status hearth_options_set_kv_blocks(hearth_options* options,
                                           int32_t block_size,
                                           int32_t num_device_blocks,
                                           int32_t num_host_blocks,
                                           hearth_error** error) {
  HEARTH_C_REQUIRE(options, "hearth_options_set_kv_blocks", error);
  options->scheduler.kv.block_size = block_size;
  options->scheduler.kv.num_device_blocks = num_device_blocks;
  options->scheduler.kv.num_host_blocks = num_host_blocks;
  return HEARTH_OK;
}

hearth_status hearth_options_set_batch_limits(hearth_options* options,
                                              int32_t max_batched_tokens,
                                              int32_t max_running,
                                              int32_t max_prefill_chunk_tokens,
                                              hearth_error** error) {
  HEARTH_C_REQUIRE(options, "hearth_options_set_batch_limits", error);
  options->scheduler.max_batched_tokens = max_batched_tokens;
  options->scheduler.max_running = max_running;
  options->scheduler.max_prefill_chunk_tokens = max_prefill_chunk_tokens;
  return HEARTH_OK;
}

hearth_status hearth_options_set_policy(hearth_options* options,
                                        const char* name,
                                        hearth_error** error) {
  return Guard(error, "hearth_options_set_policy", [&] {
    HEARTH_C_REQUIRE(options, "hearth_options_set_policy", error);
    HEARTH_C_REQUIRE(name, "hearth_options_set_policy", error);
    const std::string_view text = BoundedString(name, 64);
    const hearth_status status = FromStatus(hearth::capi::CheckPolicyName(text), error);
    if (status == HEARTH_OK) options->policy = std::string(text);
    return status;
  });
}

hearth_status hearth_options_set_metrics(hearth_options* options, int32_t enabled,
                                         hearth_error** error) {
  HEARTH_C_REQUIRE(options, "hearth_options_set_metrics", error);
  options->metrics_enabled = enabled != 0;
  return HEARTH_OK;
}

hearth_status hearth_options_set_context_length(hearth_options* options,
                                                int32_t context_length,
                                                hearth_error** error) {
  HEARTH_C_REQUIRE(options, "hearth_options_set_context_length", error);
  options->scheduler.models.front().context_length = context_length;
  return HEARTH_OK;
}

hearth_status hearth_options_add_user(hearth_options* options, const char* name,
                                      double weight, hearth_error** error) {
  return Guard(error, "hearth_options_add_user", [&] {
    HEARTH_C_REQUIRE(options, "hearth_options_add_user", error);
    HEARTH_C_REQUIRE(name, "hearth_options_add_user", error);
    const std::string_view text = BoundedString(name, hearth::kMaxNameBytes);
    if (hearth_status s = FromStatus(
            hearth::ValidateName(text, "hearth_options_add_user: name"), error);
        s != HEARTH_OK) {
      return s;
    }
    if (text == hearth::kOtherUsersName) {
      return Fail(error, HEARTH_INVALID_ARGUMENT,
                  "hearth_options_add_user: name \"_other\" is reserved (the Prometheus "
                  "series of users beyond the per-user series)");
    }
    if (!options->users_added) options->scheduler.users.clear();
    options->users_added = true;
    hearth::UserConfig& user = options->scheduler.users.emplace_back();
    user.name = std::string(text);
    user.weight = weight;
    return HEARTH_OK;
  });
}

hearth_status hearth_options_add_work_class(hearth_options* options,
                                            const char* name, int32_t priority,
                                            int32_t max_running,
                                            double queue_timeout_s,
                                            hearth_error** error) {
  return Guard(error, "hearth_options_add_work_class", [&] {
    HEARTH_C_REQUIRE(options, "hearth_options_add_work_class", error);
    HEARTH_C_REQUIRE(name, "hearth_options_add_work_class", error);
    const std::string_view text = BoundedString(name, hearth::kMaxNameBytes);
    if (hearth_status s = FromStatus(
            hearth::ValidateName(text, "hearth_options_add_work_class: name"), error);
        s != HEARTH_OK) {
      return s;
    }
    // Checked here, not at create: absl::Seconds(NaN) would hide the NaN.
    if (std::isnan(queue_timeout_s) || queue_timeout_s == -INFINITY) {
      return Fail(error, HEARTH_INVALID_ARGUMENT,
                  "hearth_options_add_work_class: queue_timeout_s must be > 0 "
                  "seconds or INFINITY");
    }
    if (!options->classes_added) options->scheduler.work_classes.clear();
    options->classes_added = true;
    hearth::WorkClassConfig& c = options->scheduler.work_classes.emplace_back();
    c.name = std::string(text);
    c.priority = priority;
    c.max_running = max_running;
    c.queue_timeout = queue_timeout_s == INFINITY ? absl::InfiniteDuration()
                                                  : absl::Seconds(queue_timeout_s);
    return HEARTH_OK;
  });
}

hearth_status hearth_options_use_household_classes(hearth_options* options,
                                                   hearth_error** error) {
  return Guard(error, "hearth_options_use_household_classes", [&] {
    HEARTH_C_REQUIRE(options, "hearth_options_use_household_classes", error);
    options->scheduler.work_classes = hearth::HouseholdWorkClasses();
    options->classes_added = true;
    return HEARTH_OK;
  });
}

}  // extern "C"
