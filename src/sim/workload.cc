#include "hearth/sim/workload.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace hearth {

absl::Status ValidateWorkload(const Workload& workload, uint32_t num_users,
                              uint32_t num_classes) {
  for (size_t i = 0; i < workload.requests.size(); ++i) {
    const SimRequest& r = workload.requests[i];
    auto bad = [&](std::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat(
          "workload request ", i, r.label.empty() ? "" : " (", r.label,
          r.label.empty() ? "" : ")", ": ", std::string(what)));
    };
    if (r.user >= num_users) {
      return bad(absl::StrCat("user ", r.user, " is not below ", num_users));
    }
    if (r.work_class >= num_classes) {
      return bad(absl::StrCat("work class ", r.work_class, " is not below ",
                              num_classes));
    }
    if (r.prompt_tokens < 1 || r.output_tokens < 1) {
      return bad("prompt_tokens and output_tokens must be >= 1");
    }
    if (r.max_new_tokens < 0) return bad("max_new_tokens must be >= 0");
    if (r.parent >= static_cast<int64_t>(i) || r.parent < -1) {
      return bad("parent must be -1 or the index of an earlier request");
    }
    if (r.parent < 0 && (r.arrival < absl::ZeroDuration() ||
                         r.arrival == absl::InfiniteDuration())) {
      return bad("arrival must be finite and >= 0");
    }
    if (!r.prefix_hashes.empty() && r.prefix_hash_tokens < 1) {
      return bad("prefix_hash_tokens must be >= 1 with prefix_hashes");
    }
    if (r.think_time < absl::ZeroDuration()) return bad("think_time must be >= 0");
    if (r.shared_prefix_tokens < 0 ||
        (r.shared_prefix_tokens > 0 &&
         (r.parent < 0 || r.shared_prefix_tokens > r.prompt_tokens ||
          r.shared_prefix_tokens >
              int64_t{workload.requests[r.parent].prompt_tokens} +
                  workload.requests[r.parent].output_tokens))) {
      return bad(
          "shared_prefix_tokens needs a parent and must fit this prompt and "
          "the parent's prompt plus output");
    }
  }
  return absl::OkStatus();
}

CacheScope SimCacheScope(const SimRequest& r) {
  if (r.cache_scope.has_value()) return *r.cache_scope;
  CacheScope scope;
  if (r.prefix_hashes.empty() || r.shared_prefix_tokens > 0) return scope;
  const int64_t hashed = std::min<int64_t>(
      r.prompt_tokens, static_cast<int64_t>(r.prefix_hashes.size()) * r.prefix_hash_tokens);
  scope.shared_prefix_tokens = static_cast<int32_t>(hashed);
  scope.shared_prefix_scope = kTraceCacheScope;
  return scope;
}

}  // namespace hearth
