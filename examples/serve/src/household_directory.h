// File: examples/serve/src/household_directory.h
//
// `HouseholdDirectory` answers "who is calling, and what kind of work is
// this?" for each HTTP request: the API key (request_credentials.h:
// Authorization: Bearer or Basic, or X-Api-Key) names a member, a default
// work class, the classes the key may use and its role; a model alias
// (e.g. "hearth-voice") overrides the class; an X-Hearth-Class header
// overrides both; a class outside the key's rights is PermissionDenied
// (403), whichever way it was asked for. Member and class ids are the
// scheduler's (the config's order).
//
// Thread-safety: immutable after construction; any thread.
//
// Example:
//   HouseholdDirectory directory(config, "qwen2.5-0.5b");
//   absl::StatusOr<Caller> caller = directory.Identify(auth, "", "hearth-voice", "");

#ifndef HEARTH_SERVE_HOUSEHOLD_DIRECTORY_H_
#define HEARTH_SERVE_HOUSEHOLD_DIRECTORY_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "hearth/common/ids.h"
#include "household_config.h"

namespace hearth::serve {

struct Caller {
  // Invalid (and `member` empty) for an admin or metrics key that belongs
  // to no member: such a key reads pages and makes no calls.
  UserId user;
  std::string member;
  WorkClassId work_class;
  KeyRole role = KeyRole::kMember;
  // Index for index over the work classes: those this key may use.
  std::vector<bool> allowed_classes;
};

class HouseholdDirectory {
 public:
  HouseholdDirectory(const HouseholdConfig& config, std::string model_name);

  // HouseholdDirectory::Authenticate()
  //
  // The caller behind the raw `authorization` and `api_key` header values
  // (empty: absent; see request_credentials.h), with the key's default
  // class. Unauthenticated for a missing, malformed or unknown key (unless
  // the household needs no keys: then every call is its one member's, with
  // every right, and an admin's view of the pages).
  absl::StatusOr<Caller> Authenticate(absl::string_view authorization,
                                      absl::string_view api_key) const;
  // The same for a key already taken out of its header.
  absl::StatusOr<Caller> AuthenticateKey(absl::string_view key) const;

  // HouseholdDirectory::ResolveClass()
  //
  // Applies the model alias and the X-Hearth-Class header to `caller`.
  // PermissionDenied for a key of no member (it makes no calls) and for a
  // class the key may not use (naming the ones it may); NotFound for a
  // model that is neither the served model nor an alias; InvalidArgument
  // for an unknown class name (listing the known ones).
  absl::Status ResolveClass(absl::string_view model, absl::string_view class_header,
                            Caller& caller) const;

  // PermissionDenied unless `caller` belongs to a member (may make calls).
  static absl::Status RequireMember(const Caller& caller);

  bool keys_required() const { return keys_required_; }

  // The served model first, then the aliases.
  std::vector<std::string> ModelNames() const;
  const std::string& model_name() const { return model_name_; }

 private:
  absl::StatusOr<WorkClassId> FindClass(absl::string_view name) const;

  const std::string model_name_;
  const bool keys_required_;
  std::vector<std::string> member_names_;
  std::vector<std::string> class_names_;
  absl::flat_hash_map<std::string, Caller> keys_;
  // Alias -> class.
  std::vector<std::pair<std::string, WorkClassId>> aliases_;
};

}  // namespace hearth::serve

#endif  // HEARTH_SERVE_HOUSEHOLD_DIRECTORY_H_
