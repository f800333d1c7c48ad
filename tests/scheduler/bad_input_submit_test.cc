// Catalogue surface: RequestSpec, as Scheduler::Submit judges it, and the
// per-user and global limits Submit enforces. A rejected request leaves
// nothing behind, so after each row the scheduler still serves.

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/scheduler/bad_input_catalogue.h"

namespace hearth::catalogue {
namespace {

using testing::Spec;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;
constexpr auto kExhausted = absl::StatusCode::kResourceExhausted;

// A spec changed by `apply`, submitted to a scheduler configured by
// `configure` (may be null).
BadInputRow SpecRow(std::string name, std::function<void(RequestSpec&)> apply,
                    std::string message_has,
                    std::function<void(SchedulerOptions&)> configure = nullptr) {
  auto misuse = [apply = std::move(apply)](LiveScheduler& live) {
    RequestSpec spec = Spec({.prompt = 4, .max_new = 2});
    apply(spec);
    return live->Submit(spec).status();
  };
  return LiveRow("submit: " + name, std::move(configure), std::move(misuse), kInvalid,
                 std::move(message_has));
}

std::vector<TokenId> Ids(size_t n, TokenId value = 7) { return std::vector<TokenId>(n, value); }

std::vector<BadInputRow> SpecRows() {
  using S = RequestSpec&;
  return {
      SpecRow("unknown model", [](S s) { s.model = ModelId(1); }, "model 1 is unknown"),
      SpecRow("invalid model id", [](S s) { s.model = ModelId(); }, "model <invalid>"),
      SpecRow("unknown user", [](S s) { s.user = UserId(2); }, "user 2 is unknown"),
      SpecRow("invalid user id", [](S s) { s.user = UserId(); }, "user <invalid>"),
      SpecRow("unknown work class", [](S s) { s.work_class = WorkClassId(2); },
              "work_class 2 is unknown"),
      SpecRow("invalid work class id", [](S s) { s.work_class = WorkClassId(); },
              "work_class <invalid>"),
      SpecRow("prompt_tokens 0", [](S s) { s.prompt_tokens = 0; }, "prompt_tokens is 0"),
      SpecRow("prompt_tokens -1", [](S s) { s.prompt_tokens = -1; }, "prompt_tokens is -1"),
      SpecRow("prompt_tokens INT32_MIN", [](S s) { s.prompt_tokens = kInt32Min; }, "must be >= 1"),
      SpecRow("max_new_tokens 0", [](S s) { s.max_new_tokens = 0; }, "max_new_tokens is 0"),
      SpecRow("max_new_tokens -5", [](S s) { s.max_new_tokens = -5; }, "max_new_tokens is -5"),
      SpecRow("prompt_tokens INT32_MAX", [](S s) { s.prompt_tokens = kInt32Max; },
              "allows at most 1024"),
      // The sum is taken in 64 bits; in 32 it would wrap to a small negative.
      SpecRow("prompt and max_new_tokens both INT32_MAX",
              [](S s) { s.prompt_tokens = s.max_new_tokens = kInt32Max; }, "4294967294"),
      SpecRow("one token past the context",
              [](S s) {
                s.prompt_tokens = 1024;
                s.max_new_tokens = 1;
              },
              "prompt_tokens + max_new_tokens is 1025"),
      SpecRow("more KV than the whole cache",
              [](S s) {
                s.prompt_tokens = 2048;
                s.max_new_tokens = 2049;
              },
              "more than the whole KV cache",
              [](SchedulerOptions& o) { o.models[0].context_length = 8192; }),
      // Was (with a context of INT32_MAX): accepted, then Plan aborted.
      SpecRow("a prompt of 2^30 - 1 tokens at the largest context",
              [](S s) {
                s.prompt_tokens = (1 << 30) - 1;
                s.max_new_tokens = 1;
              },
              "it could never run", [](SchedulerOptions& o) { o.models[0].context_length = 1 << 30; }),
      SpecRow("more KV than fits beside the model's weights",
              [](S s) {
                s.prompt_tokens = 300;
                s.max_new_tokens = 100;
              },
              "beside model",
              [](SchedulerOptions& o) {
                o.residency.device_memory_bytes = 1 << 20;
                o.models[0].kv_bytes_per_token = 1 << 10;
                o.models[0].weights_bytes = (1 << 20) - (1 << 18);
              }),
      SpecRow("more KV than a hard class budget",
              [](S s) {
                s.prompt_tokens = 60;
                s.max_new_tokens = 10;
              },
              "hard kv_block_budget",
              [](SchedulerOptions& o) {
                o.work_classes[0].borrow = false;
                o.work_classes[0].kv_block_budget = 4;
              }),
      SpecRow("fewer token ids than prompt_tokens", [](S s) { s.prompt_token_ids = Ids(3); },
              "prompt_token_ids has 3 ids"),
      SpecRow("more token ids than prompt_tokens", [](S s) { s.prompt_token_ids = Ids(5); },
              "exactly prompt_tokens ids"),
      // Bounded, so the row stays fast under ASan; the check is on the count,
      // before any id is hashed.
      SpecRow("100,000 token ids for a 4-token prompt", [](S s) { s.prompt_token_ids = Ids(100000); },
              "prompt_token_ids has 100000 ids"),
      SpecRow("a negative token id",
              [](S s) {
                s.prompt_token_ids = Ids(4);
                s.prompt_token_ids[2] = -1;
              },
              "prompt_token_ids[2] is -1"),
      SpecRow("a token id equal to vocab_size",
              [](S s) {
                s.prompt_token_ids = Ids(4);
                s.prompt_token_ids[3] = 1000;
              },
              "[0, 1000)"),
      SpecRow("token id INT32_MAX",
              [](S s) { s.prompt_token_ids = Ids(4, kInt32Max); }, "prompt_token_ids[0]"),
      SpecRow("token id INT32_MIN without a vocabulary",
              [](S s) { s.prompt_token_ids = Ids(4, kInt32Min); }, "[0, 2^31)",
              [](SchedulerOptions& o) { o.models[0].vocab_size = 0; }),
      SpecRow("deadline InfinitePast", [](S s) { s.deadline = absl::InfinitePast(); },
              "deadline is InfinitePast"),
      // Was: accepted and clamped, moving the user's quota window to +inf.
      SpecRow("arrival_time InfiniteFuture", [](S s) { s.arrival_time = absl::InfiniteFuture(); },
              "arrival_time is InfiniteFuture"),
      // Was: a 50 MB label accepted silently.
      SpecRow("a label one byte over max_label_bytes",
              [](S s) { s.label = std::string(4097, 'l'); }, "max_label_bytes allows at most 4096"),
      SpecRow("a 50 MB label", [](S s) { s.label = std::string(50 << 20, 'l'); },
              "max_label_bytes"),
      SpecRow("token ids larger than max_pending_bytes",
              [](S s) {
                s.prompt_tokens = 300;
                s.prompt_token_ids = Ids(300);
              },
              "max_pending_bytes = 1000",
              [](SchedulerOptions& o) { o.max_pending_bytes = 1000; }),
  };
}

// RequestSpec::cache_scope: names are bounded UTF-8, the shared prefix a
// range of the prompt with a scope to be cached in.
std::vector<BadInputRow> CacheScopeRows() {
  using S = RequestSpec&;
  return {
      SpecRow("a cache scope name one byte over kMaxCacheScopeBytes",
              [](S s) { s.cache_scope.name = std::string(kMaxCacheScopeBytes + 1, 's'); },
              "RequestSpec.cache_scope.name is 257 bytes; at most 256"),
      SpecRow("a 10 MB shared scope name",
              [](S s) {
                s.cache_scope.shared_prefix_tokens = 1;
                s.cache_scope.shared_prefix_scope = std::string(10 << 20, 's');
              },
              "cache_scope.shared_prefix_scope is 10485760 bytes"),
      SpecRow("a scope name with a lone continuation byte",
              [](S s) { s.cache_scope.name = "ab\x80"; },
              "cache_scope.name is not valid UTF-8 (byte 0x80 at offset 2)"),
      SpecRow("a scope name with an overlong '/'",
              [](S s) { s.cache_scope.name = "\xC0\xAF"; }, "(byte 0xc0 at offset 0)"),
      SpecRow("a scope name with a UTF-16 surrogate",
              [](S s) { s.cache_scope.name = "x\xED\xA0\x80"; }, "(byte 0xed at offset 1)"),
      SpecRow("a scope name cut inside a character",
              [](S s) { s.cache_scope.name = "\xE2\x82"; }, "not valid UTF-8"),
      SpecRow("a scope name past U+10FFFF",
              [](S s) { s.cache_scope.name = "\xF4\x90\x80\x80"; }, "(byte 0xf4 at offset 0)"),
      SpecRow("a scope name with a NUL byte",
              [](S s) { s.cache_scope.name = std::string("a\0b", 3); },
              "cache_scope.name has a NUL byte at offset 1"),
      SpecRow("shared_prefix_tokens -1",
              [](S s) {
                s.cache_scope.shared_prefix_tokens = -1;
                s.cache_scope.shared_prefix_scope = "t";
              },
              "cache_scope.shared_prefix_tokens is -1; must be in [0, prompt_tokens = 4]"),
      SpecRow("shared_prefix_tokens INT32_MIN",
              [](S s) { s.cache_scope.shared_prefix_tokens = kInt32Min; },
              "shared_prefix_tokens is -2147483648"),
      SpecRow("shared_prefix_tokens past the prompt",
              [](S s) {
                s.cache_scope.shared_prefix_tokens = 5;
                s.cache_scope.shared_prefix_scope = "t";
              },
              "shared_prefix_tokens is 5; must be in [0, prompt_tokens = 4]"),
      SpecRow("shared_prefix_tokens INT32_MAX",
              [](S s) { s.cache_scope.shared_prefix_tokens = kInt32Max; },
              "shared_prefix_tokens is 2147483647"),
      SpecRow("a shared prefix without a scope",
              [](S s) { s.cache_scope.shared_prefix_tokens = 2; },
              "cache_scope.shared_prefix_scope is empty but shared_prefix_tokens is 2"),
      SpecRow("a shared scope without a prefix",
              [](S s) { s.cache_scope.shared_prefix_scope = "template"; },
              "shared_prefix_scope is \"template\" but shared_prefix_tokens is 0"),
      SpecRow("opting out with a scope name",
              [](S s) {
                s.cache_scope.opt_out = true;
                s.cache_scope.name = "house";
              },
              "cache_scope.opt_out is true with a scope name"),
      SpecRow("opting out with a shared prefix",
              [](S s) {
                s.cache_scope.opt_out = true;
                s.cache_scope.shared_prefix_tokens = 2;
                s.cache_scope.shared_prefix_scope = "t";
              },
              "cache_scope.opt_out"),
      SpecRow("scope names larger than max_pending_bytes",
              [](S s) {
                s.cache_scope.name = std::string(200, 'n');
                s.cache_scope.shared_prefix_tokens = 1;
                s.cache_scope.shared_prefix_scope = std::string(200, 's');
              },
              "max_pending_bytes = 300",
              [](SchedulerOptions& o) { o.max_pending_bytes = 300; }),
  };
}

// A parent in another user's name, or one never issued.
std::vector<BadInputRow> ParentRows() {
  return {
      LiveRow(
          "submit: a parent id never issued", nullptr,
          [](LiveScheduler& live) {
            RequestSpec spec = Spec({.prompt = 4, .max_new = 2});
            spec.parent = RequestId(12345);
            return live->Submit(spec).status();
          },
          kInvalid, "never issued"),
      LiveRow(
          "submit: parent id UINT64_MAX - 1", nullptr,
          [](LiveScheduler& live) {
            RequestSpec spec = Spec({.prompt = 4, .max_new = 2});
            spec.parent = RequestId(RequestId::kInvalidValue - 1);
            return live->Submit(spec).status();
          },
          kInvalid, "never issued"),
      LiveRow(
          "submit: a live parent of another user", nullptr,
          [](LiveScheduler& live) {
            const RequestId parent = live.Submit(Spec({.user = 1, .prompt = 4, .max_new = 2}));
            RequestSpec spec = Spec({.prompt = 4, .max_new = 2});
            spec.parent = parent;
            return live->Submit(spec).status();
          },
          kInvalid, "RequestSpec.parent"),
  };
}

std::vector<BadInputRow> LimitRows() {
  return {
      LiveRow(
          "submit: past max_pending_requests",
          [](SchedulerOptions& o) { o.max_pending_requests = 2; },
          [](LiveScheduler& live) {
            live.Submit();
            live.Submit(Spec({.user = 1, .prompt = 4, .max_new = 2}));
            return live->Submit(Spec({.prompt = 4, .max_new = 2})).status();
          },
          kExhausted, "max_pending_requests = 2"),
      LiveRow(
          "submit: past a user's max_queued_requests",
          [](SchedulerOptions& o) { o.users[0].max_queued_requests = 1; },
          [](LiveScheduler& live) {
            live.Submit();
            return live->Submit(Spec({.prompt = 4, .max_new = 2})).status();
          },
          kExhausted, "max_queued_requests is 1"),
      LiveRow(
          "submit: past a user's max_queued_requests while the first runs",
          [](SchedulerOptions& o) { o.users[0].max_queued_requests = 1; },
          [](LiveScheduler& live) {
            live.PlanUntilScheduled(live.Submit(Spec({.prompt = 4, .max_new = 8})));
            return live->Submit(Spec({.prompt = 4, .max_new = 2})).status();
          },
          kExhausted, "\"alice\" has 1 unfinished"),
      LiveRow(
          "submit: past a user's reserved part of max_pending_requests",
          [](SchedulerOptions& o) { o.max_pending_requests = 4; },
          [](LiveScheduler& live) {
            // One reserved for each of the two users, two shared.
            for (int i = 0; i < 3; ++i) live.Submit();
            return live->Submit(Spec({.prompt = 4, .max_new = 2})).status();
          },
          kExhausted, "beyond its reserved 1"),
      LiveRow(
          "submit: repeated after a refusal by count",
          [](SchedulerOptions& o) { o.max_pending_requests = 4; },
          [](LiveScheduler& live) {
            for (int i = 0; i < 3; ++i) live.Submit();
            (void)live->Submit(Spec({.prompt = 4, .max_new = 2}));
            return live->Submit(Spec({.prompt = 4, .max_new = 2})).status();
          },
          kExhausted, "none has ended since"),
      LiveRow(
          "submit: past a user's reserved part of max_pending_bytes",
          [](SchedulerOptions& o) { o.max_pending_bytes = 400; },
          [](LiveScheduler& live) {
            // 100 reserved for each, 200 shared: this user may hold 300.
            RequestSpec spec = Spec({.prompt = 4, .max_new = 2});
            spec.label = std::string(150, 'l');
            live.Submit(spec);
            live.Submit(spec);
            return live->Submit(spec).status();
          },
          kExhausted, "bytes of token ids and labels"),
      LiveRow(
          "submit: one request larger than the token quota",
          [](SchedulerOptions& o) { o.users[0].token_quota = 6; },
          [](LiveScheduler& live) {
            return live->Submit(Spec({.prompt = 4, .max_new = 3})).status();
          },
          kExhausted, "6-token quota"),
      LiveRow(
          "submit: the token quota spent in this window",
          [](SchedulerOptions& o) { o.users[0].token_quota = 10; },
          [](LiveScheduler& live) {
            live.Submit(Spec({.prompt = 4, .max_new = 2}));
            return live->Submit(Spec({.prompt = 4, .max_new = 2})).status();
          },
          kExhausted, "has used 6 of a 10-token quota"),
  };
}

}  // namespace

std::vector<BadInputRow> SubmitRows() {
  std::vector<BadInputRow> rows;
  for (auto part : {SpecRows, CacheScopeRows, ParentRows, LimitRows}) {
    for (BadInputRow& row : part()) rows.push_back(std::move(row));
  }
  return rows;
}

TEST_CASE("Bad input: Submit rejects each invalid request, naming what is wrong",
          "[scheduler][bad_input]") {
  RunRows(SubmitRows());
}

}  // namespace hearth::catalogue
