// File: examples/serve/src/public_request_ids.h
//
// `PublicRequestIds` gives each request the id its client sees (the
// "chatcmpl-<id>" of its answer, X-Hearth-Request-Id, the status page):
// 96 random bits from the kernel as 24 hex digits, not the scheduler's
// sequential id. Sequential ids would let one member count the others'
// requests and name them (in X-Hearth-Parent, say) to probe whose they are.
//
// An id resolves back to the request only for the member that owns it;
// for anyone else it is the same as an id never issued, so an error cannot
// tell them apart. The table keeps the last `capacity` ids (oldest
// forgotten first): enough for any workflow's parent to be named while the
// scheduler still remembers it.
//
// Thread-safety: every method from any thread.
//
// Example:
//   PublicRequestIds ids;
//   std::string shown = ids.Issue(RequestId(7), UserId(0));   // "3f9c...e1"
//   ids.Resolve(shown, UserId(0));                             // RequestId(7)
//   ids.Resolve(shown, UserId(1));                             // nullopt

#ifndef HEARTH_SERVE_PUBLIC_REQUEST_IDS_H_
#define HEARTH_SERVE_PUBLIC_REQUEST_IDS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "hearth/common/ids.h"

namespace hearth::serve {

class PublicRequestIds {
 public:
  // Hex digits in an id.
  static constexpr size_t kIdChars = 24;

  // REQUIRES: capacity >= 1.
  explicit PublicRequestIds(size_t capacity = size_t{1} << 16);

  // A new id for request `id` of member `owner`.
  std::string Issue(RequestId id, UserId owner) ABSL_LOCKS_EXCLUDED(mu_);
  // The request behind `public_id` when `owner` owns it; nullopt for an id
  // of another member, an id forgotten, and a string that is no id alike.
  std::optional<RequestId> Resolve(absl::string_view public_id, UserId owner) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // The id shown for request `id`; empty when none was issued or it was
  // forgotten.
  std::string PublicOf(RequestId id) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    RequestId id;
    UserId owner;
  };

  const size_t capacity_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> by_public_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<RequestId, std::string> by_request_ ABSL_GUARDED_BY(mu_);
  // Issue order, a ring of `capacity_`: the next slot is the oldest.
  std::vector<std::string> ring_ ABSL_GUARDED_BY(mu_);
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_PUBLIC_REQUEST_IDS_H_
