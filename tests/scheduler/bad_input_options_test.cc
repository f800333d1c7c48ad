// Catalogue surface: SchedulerOptions, as Scheduler::Create judges them.
// Every "Must be" of scheduler_options.h, at 0, negative, just past the
// bound, the integer extremes, NaN and the infinities.

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"

#include "tests/scheduler/bad_input_catalogue.h"

namespace hearth::catalogue {
namespace {

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

BadInputRow Row(std::string name, std::function<void(SchedulerOptions&)> apply,
                std::string message_has) {
  auto run = [apply = std::move(apply)] {
    SchedulerOptions o;
    apply(o);
    return Scheduler::Create(std::move(o)).status();
  };
  return {"options: " + name, std::move(run), kInvalid, std::move(message_has)};
}

// One model that can be made resident: 2^34 bytes of device memory, half of
// it weights.
void WithResidency(SchedulerOptions& o) {
  o.residency.device_memory_bytes = int64_t{1} << 34;
  o.models[0].kv_bytes_per_token = 1 << 17;
  o.models[0].weights_bytes = int64_t{1} << 33;
}

std::vector<BadInputRow> ModelRows() {
  using O = SchedulerOptions&;
  return {
      Row("no models", [](O o) { o.models.clear(); }, "models is empty"),
      Row("a model with an empty name", [](O o) { o.models[0].name = ""; }, "models[0].name"),
      Row("two models of one name", [](O o) { o.models.push_back(o.models[0]); }, "used twice"),
      Row("context_length 0", [](O o) { o.models[0].context_length = 0; }, "[2, 2^30]"),
      Row("context_length 1", [](O o) { o.models[0].context_length = 1; }, "context_length"),
      Row("context_length -1", [](O o) { o.models[0].context_length = -1; }, "context_length"),
      Row("context_length 2^30 + 1", [](O o) { o.models[0].context_length = (1 << 30) + 1; },
          "context_length"),
      // Was: accepted, then a prompt of INT32_MAX - 1 made Plan abort in BlocksFor.
      Row("context_length INT32_MAX", [](O o) { o.models[0].context_length = kInt32Max; },
          "context_length"),
      Row("vocab_size -1", [](O o) { o.models[0].vocab_size = -1; }, "vocab_size"),
      Row("vocab_size INT32_MIN", [](O o) { o.models[0].vocab_size = kInt32Min; }, "vocab_size"),
      Row("kv_bytes_per_token -1", [](O o) { o.models[0].kv_bytes_per_token = -1; },
          "kv_bytes_per_token"),
      Row("kv_bytes_per_token 2^40 + 1",
          [](O o) { o.models[0].kv_bytes_per_token = (int64_t{1} << 40) + 1; }, "[0, 2^40]"),
      Row("kv_bytes_per_token INT64_MAX", [](O o) { o.models[0].kv_bytes_per_token = kInt64Max; },
          "kv_bytes_per_token"),
  };
}

std::vector<BadInputRow> UserRows() {
  using O = SchedulerOptions&;
  return {
      Row("no users", [](O o) { o.users.clear(); }, "users is empty"),
      Row("a user with an empty name", [](O o) { o.users[0].name = ""; }, "users[0].name"),
      Row("two users of one name", [](O o) { o.users.push_back(o.users[0]); }, "used twice"),
      // Bounded, so the row stays fast under ASan: the scan must reach the end.
      Row("100,000 users, the last unnamed",
          [](O o) {
            o.users.resize(100000);
            for (size_t i = 0; i + 1 < o.users.size(); ++i) o.users[i].name = std::to_string(i);
            o.users.back().name = "";
          },
          "users[99999].name"),
      Row("user weight 0", [](O o) { o.users[0].weight = 0; }, "(0, 1e9]"),
      Row("user weight -1", [](O o) { o.users[0].weight = -1; }, "users[0].weight"),
      Row("user weight NaN", [](O o) { o.users[0].weight = kNaN; }, "users[0].weight"),
      Row("user weight +inf", [](O o) { o.users[0].weight = kInf; }, "users[0].weight"),
      Row("user weight -inf", [](O o) { o.users[0].weight = -kInf; }, "users[0].weight"),
      Row("user weight 2e9", [](O o) { o.users[0].weight = 2e9; }, "users[0].weight"),
      Row("max_queued_requests -1", [](O o) { o.users[0].max_queued_requests = -1; },
          "max_queued_requests"),
      Row("token_quota -1", [](O o) { o.users[0].token_quota = -1; }, "token_quota"),
      Row("token_quota INT64_MIN", [](O o) { o.users[0].token_quota = kInt64Min; }, "token_quota"),
      Row("quota_window 0", [](O o) { o.users[0].quota_window = absl::ZeroDuration(); },
          "quota_window"),
      Row("quota_window -1s", [](O o) { o.users[0].quota_window = absl::Seconds(-1); },
          "positive and finite"),
      Row("quota_window InfiniteDuration",
          [](O o) { o.users[0].quota_window = absl::InfiniteDuration(); }, "quota_window"),
      Row("quota_window -InfiniteDuration",
          [](O o) { o.users[0].quota_window = -absl::InfiniteDuration(); }, "quota_window"),
  };
}

std::vector<BadInputRow> WorkClassRows() {
  using O = SchedulerOptions&;
  return {
      Row("no work classes", [](O o) { o.work_classes.clear(); }, "work_classes is empty"),
      Row("a class with an empty name", [](O o) { o.work_classes[0].name = ""; },
          "work_classes[0].name"),
      Row("two classes of one name", [](O o) { o.work_classes.push_back(o.work_classes[0]); },
          "used twice"),
      Row("100,000 classes, the last a duplicate",
          [](O o) {
            o.work_classes.resize(100000);
            for (size_t i = 0; i < o.work_classes.size(); ++i) {
              o.work_classes[i].name = std::to_string(i);
            }
            o.work_classes.back().name = "0";
          },
          "work_classes[99999].name"),
      Row("class weight 0", [](O o) { o.work_classes[0].weight = 0; }, "work_classes[0].weight"),
      Row("class weight NaN", [](O o) { o.work_classes[0].weight = kNaN; }, "work_classes[0].weight"),
      Row("class weight +inf", [](O o) { o.work_classes[0].weight = kInf; }, "(0, 1e9]"),
      Row("class max_running -1", [](O o) { o.work_classes[0].max_running = -1; },
          "work_classes[0].max_running"),
      Row("kv_block_budget -1", [](O o) { o.work_classes[0].kv_block_budget = -1; },
          "kv_block_budget"),
      Row("kv_block_budget above the cache",
          [](O o) { o.work_classes[0].kv_block_budget = o.kv.num_device_blocks + 1; },
          "kv.num_device_blocks"),
      Row("queue_timeout 0", [](O o) { o.work_classes[0].queue_timeout = absl::ZeroDuration(); },
          "queue_timeout"),
      Row("queue_timeout -1ms",
          [](O o) { o.work_classes[0].queue_timeout = absl::Milliseconds(-1); }, "must be positive"),
      Row("queue_timeout -InfiniteDuration",
          [](O o) { o.work_classes[0].queue_timeout = -absl::InfiniteDuration(); }, "queue_timeout"),
      Row("max_retries -1", [](O o) { o.work_classes[0].max_retries = -1; }, "[0, 100]"),
      Row("max_retries 101", [](O o) { o.work_classes[0].max_retries = 101; }, "max_retries"),
      Row("max_retries INT32_MAX", [](O o) { o.work_classes[0].max_retries = kInt32Max; },
          "max_retries"),
  };
}

std::vector<BadInputRow> KvCacheRows() {
  using O = SchedulerOptions&;
  return {
      Row("block_size 0", [](O o) { o.kv.block_size = 0; }, "kv.block_size"),
      Row("block_size -16", [](O o) { o.kv.block_size = -16; }, "kv.block_size"),
      Row("block_size 4097", [](O o) { o.kv.block_size = 4097; }, "[1, 4096]"),
      Row("block_size INT32_MAX", [](O o) { o.kv.block_size = kInt32Max; }, "kv.block_size"),
      Row("num_device_blocks 0", [](O o) { o.kv.num_device_blocks = 0; }, "kv.num_device_blocks"),
      Row("num_device_blocks -1", [](O o) { o.kv.num_device_blocks = -1; }, "kv.num_device_blocks"),
      // Was: accepted up to 2^30, so a valid Create could need 23 GB.
      Row("num_device_blocks 2^24 + 1", [](O o) { o.kv.num_device_blocks = (1 << 24) + 1; },
          "[1, 2^24]"),
      Row("num_host_blocks 2^24 + 1", [](O o) { o.kv.num_host_blocks = (1 << 24) + 1; },
          "[0, 2^24]"),
      Row("num_host_blocks -1", [](O o) { o.kv.num_host_blocks = -1; }, "kv.num_host_blocks"),
      Row("num_host_blocks INT32_MAX", [](O o) { o.kv.num_host_blocks = kInt32Max; },
          "kv.num_host_blocks"),
      Row("watermark_blocks -1", [](O o) { o.kv.watermark_blocks = -1; }, "kv.watermark_blocks"),
      Row("watermark_blocks the whole cache",
          [](O o) { o.kv.watermark_blocks = o.kv.num_device_blocks; }, "kv.watermark_blocks"),
      Row("swap preemption without a host tier",
          [](O o) { o.preemption_mode = PreemptionMode::kSwap; }, "num_host_blocks is 0"),
  };
}

std::vector<BadInputRow> ResidencyRows() {
  using O = SchedulerOptions&;
  return {
      Row("max_concurrent_loads 0", [](O o) { o.residency.max_concurrent_loads = 0; },
          "residency.max_concurrent_loads"),
      Row("max_concurrent_loads -1", [](O o) { o.residency.max_concurrent_loads = -1; },
          "residency.max_concurrent_loads"),
      Row("device_memory_bytes -1", [](O o) { o.residency.device_memory_bytes = -1; },
          "residency.device_memory_bytes"),
      Row("residency without kv_bytes_per_token",
          [](O o) {
            WithResidency(o);
            o.models[0].kv_bytes_per_token = 0;
          },
          "residency needs it > 0"),
      // Was: SIGFPE (a wrapped block size, then a division by zero).
      Row("residency with kv_bytes_per_token INT64_MAX",
          [](O o) {
            WithResidency(o);
            o.models[0].kv_bytes_per_token = kInt64Max;
          },
          "kv_bytes_per_token"),
      Row("weights_bytes -1",
          [](O o) {
            WithResidency(o);
            o.models[0].weights_bytes = -1;
          },
          "weights_bytes"),
      Row("weights that leave no room for a KV block",
          [](O o) {
            WithResidency(o);
            o.models[0].weights_bytes = o.residency.device_memory_bytes;
          },
          "at least one KV block"),
      // Was: a signed overflow on the way to this error.
      Row("weights_bytes INT64_MAX",
          [](O o) {
            WithResidency(o);
            o.models[0].weights_bytes = kInt64Max;
          },
          "weights_bytes"),
      Row("keep_alive 0",
          [](O o) {
            WithResidency(o);
            o.models[0].keep_alive = absl::ZeroDuration();
          },
          "keep_alive"),
      Row("keep_alive -InfiniteDuration",
          [](O o) {
            WithResidency(o);
            o.models[0].keep_alive = -absl::InfiniteDuration();
          },
          "keep_alive"),
      Row("preloaded models heavier than the device",
          [](O o) {
            WithResidency(o);
            ModelConfig second = o.models[0];
            second.name = "second";
            o.models.push_back(second);
            o.models.push_back(second);
            o.models.back().name = "third";
          },
          "models to preload weigh"),
      // Was: accepted, the sum wrapping int64 (UBSan: signed overflow) and
      // stats() reading -130 resident bytes.
      Row("preloaded weights whose sum wraps int64",
          [](O o) {
            o.residency.device_memory_bytes = kInt64Max;
            o.models[0].kv_bytes_per_token = 1;
            o.models[0].weights_bytes = kInt64Max - 64;
            ModelConfig twin = o.models[0];
            twin.name = "twin";
            o.models.push_back(twin);
          },
          "models to preload weigh"),
  };
}

std::vector<BadInputRow> LimitRows() {
  using O = SchedulerOptions&;
  return {
      Row("max_pending_requests 0", [](O o) { o.max_pending_requests = 0; }, "max_pending_requests"),
      Row("max_pending_requests -1", [](O o) { o.max_pending_requests = -1; }, ">= 1"),
      Row("max_pending_bytes 0", [](O o) { o.max_pending_bytes = 0; }, "max_pending_bytes"),
      Row("max_pending_bytes INT64_MIN", [](O o) { o.max_pending_bytes = kInt64Min; },
          "max_pending_bytes"),
      Row("reserved_pending_share NaN", [](O o) { o.reserved_pending_share = kNaN; }, "[0, 1]"),
      Row("reserved_pending_share -0.1", [](O o) { o.reserved_pending_share = -0.1; },
          "reserved_pending_share"),
      Row("reserved_pending_share 1.5", [](O o) { o.reserved_pending_share = 1.5; },
          "reserved_pending_share"),
      Row("reserved_pending_share inf", [](O o) { o.reserved_pending_share = kInf; },
          "reserved_pending_share"),
      Row("max_intake_per_plan 0", [](O o) { o.max_intake_per_plan = 0; }, "[1, 2^20]"),
      Row("max_intake_per_plan INT32_MAX", [](O o) { o.max_intake_per_plan = kInt32Max; },
          "max_intake_per_plan"),
      Row("max_label_bytes -1", [](O o) { o.max_label_bytes = -1; }, "max_label_bytes"),
      Row("max_label_bytes 2^24 + 1", [](O o) { o.max_label_bytes = (1 << 24) + 1; }, "[0, 2^24]"),
      Row("max_arrival_lead negative", [](O o) { o.max_arrival_lead = -absl::Seconds(1); },
          "max_arrival_lead"),
      Row("max_arrival_lead infinite",
          [](O o) { o.max_arrival_lead = absl::InfiniteDuration(); }, "finite"),
      Row("max_batched_tokens 0", [](O o) { o.max_batched_tokens = 0; }, "max_batched_tokens"),
      Row("max_batched_tokens -1", [](O o) { o.max_batched_tokens = -1; }, "max_batched_tokens"),
      Row("max_batched_tokens 2^24 + 1", [](O o) { o.max_batched_tokens = (1 << 24) + 1; },
          "[1, 2^24]"),
      // Was: an uncaught std::bad_alloc from the constructor's reserves.
      Row("a step of INT32_MAX tokens and sequences",
          [](O o) { o.max_batched_tokens = o.max_running = kInt32Max; }, "max_batched_tokens"),
      Row("max_running 0", [](O o) { o.max_running = 0; }, "max_running"),
      Row("max_running -1", [](O o) { o.max_running = -1; }, "max_running"),
      Row("max_running above max_batched_tokens",
          [](O o) { o.max_running = o.max_batched_tokens + 1; }, "max_batched_tokens = 2048"),
      Row("max_running 2^20 + 1",
          [](O o) {
            o.max_batched_tokens = 1 << 24;
            o.max_running = (1 << 20) + 1;
          },
          "min(2^20"),
      Row("max_prefill_chunk_tokens -1", [](O o) { o.max_prefill_chunk_tokens = -1; },
          "max_prefill_chunk_tokens"),
      Row("workflow_retention -1s", [](O o) { o.workflow_retention = absl::Seconds(-1); },
          "workflow_retention"),
      Row("workflow_retention -InfiniteDuration",
          [](O o) { o.workflow_retention = -absl::InfiniteDuration(); }, "workflow_retention"),
      Row("max_admission_declines -1", [](O o) { o.max_admission_declines = -1; },
          "max_admission_declines"),
      Row("a policy factory that builds nothing",
          [](O o) { o.policy_factory = [](const SchedulerOptions&) { return nullptr; }; },
          "policy_factory returned null"),
  };
}

// Names travel into Prometheus labels, JSON and messages: each list's
// names, and an adapter's base_model, must be valid (hearth/common/names.h).
std::vector<BadInputRow> NameRows() {
  using O = SchedulerOptions&;
  using namespace std::string_literals;
  const std::pair<const char*, std::string> bad[] = {
      {"not UTF-8", "a\xff\xfe"},
      {"a NUL", "a\0b"s},
      {"a tab", "a\tb"},
      {"a newline", "a\nb"},
      {"an escape sequence", "\x1b[31m"},
      {"DEL", "a\x7f"},
      {"a C1 control (U+0085)", "a\xc2\x85"},
      {"a line separator (U+2028)", "a\u2028b"},
      {"an overlong slash", "\xc0\xaf"},
      {"a surrogate", "\xed\xa0\x80"},
      {"above U+10FFFF", "\xf4\x90\x80\x80"},
      {"a cut sequence", "a\xe2\x82"},
      {"257 bytes", std::string(257, 'x')},
      {"10 MB", std::string(10 << 20, 'x')},
  };
  std::vector<BadInputRow> rows;
  for (const auto& [what, name] : bad) {
    rows.push_back(Row(absl::StrCat("a user name with ", what), [name = name](O o) { o.users[0].name = name; },
                       "SchedulerOptions.users[0].name is \""));
    rows.push_back(Row(absl::StrCat("a class name with ", what),
                       [name = name](O o) { o.work_classes[0].name = name; },
                       "SchedulerOptions.work_classes[0].name is \""));
    rows.push_back(Row(absl::StrCat("a model name with ", what),
                       [name = name](O o) { o.models[0].name = name; },
                       "SchedulerOptions.models[0].name is \""));
  }
  rows.push_back(Row("a user named _other (the overflow series)",
                     [](O o) { o.users.push_back({.name = "_other"}); },
                     "users[1].name is \"_other\", which is reserved"));
  rows.push_back(Row("not UTF-8 in the message of a bad base_model",
                     [](O o) {
                       o.models.push_back({.name = "lora", .base_model = "\xff\xfe"});
                     },
                     "names \"\\xff\\xfe\""));
  return rows;
}

}  // namespace

std::vector<BadInputRow> OptionsRows() {
  std::vector<BadInputRow> rows;
  for (auto part : {ModelRows, UserRows, WorkClassRows, KvCacheRows, ResidencyRows, LimitRows,
                    NameRows}) {
    for (BadInputRow& row : part()) rows.push_back(std::move(row));
  }
  return rows;
}

TEST_CASE("Bad input: Create rejects each invalid option, naming it", "[scheduler][bad_input]") {
  RunRows(OptionsRows());
}

TEST_CASE("Bad input: the largest options allowed still build a scheduler",
          "[scheduler][bad_input]") {
  // The rows' errors come from the hostile field, not from the defaults.
  CHECK(Scheduler::Create(SchedulerOptions{}).ok());
  SchedulerOptions residency;
  WithResidency(residency);
  CHECK(Scheduler::Create(residency).ok());
  SchedulerOptions names;
  names.users = {{.name = std::string(256, 'x')},
                 {.name = "carol \"c\""},
                 {.name = "x\",user=\"y"},
                 {.name = "_other "},
                 {.name = "\u5bb6\u65cf \U0001F469\u200D\U0001F467"},
                 {.name = std::string(254, 'y') + "\u00e9"}};
  names.work_classes = {{.name = "back\\slash"}, {.name = "\u202Eevil"}};
  names.models = {{.name = "m\xc3\xa9"}};
  CHECK(Scheduler::Create(names).ok());
  SchedulerOptions edge;
  edge.models[0].context_length = 1 << 30;
  edge.models[0].kv_bytes_per_token = int64_t{1} << 40;
  CHECK(Scheduler::Create(edge).ok());
}

}  // namespace hearth::catalogue
