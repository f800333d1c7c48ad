#include "household_directory.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "request_credentials.h"

namespace hearth::serve {

HouseholdDirectory::HouseholdDirectory(const HouseholdConfig& config, std::string model_name)
    : model_name_(std::move(model_name)), keys_required_(config.keys_required) {
  for (const UserConfig& m : config.members) member_names_.push_back(m.name);
  for (const WorkClassConfig& c : config.classes) class_names_.push_back(c.name);
  // Config validation guarantees every name below resolves.
  for (const ApiKeyConfig& k : config.keys) {
    Caller caller;
    for (size_t i = 0; i < member_names_.size(); ++i) {
      if (member_names_[i] == k.member) caller.user = UserId(static_cast<uint32_t>(i));
    }
    caller.member = k.member;
    caller.work_class = *FindClass(k.default_class);
    caller.role = k.role;
    caller.allowed_classes = k.member.empty() ? std::vector<bool>(class_names_.size(), false)
                                              : AllowedClasses(config, k);
    keys_.emplace(k.key, caller);
  }
  for (const ModelAliasConfig& a : config.aliases) {
    aliases_.emplace_back(a.model, *FindClass(a.work_class));
  }
}

absl::StatusOr<WorkClassId> HouseholdDirectory::FindClass(absl::string_view name) const {
  for (size_t i = 0; i < class_names_.size(); ++i) {
    if (class_names_[i] == name) return WorkClassId(static_cast<uint32_t>(i));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown work class \"", name,
                                                 "\"; known: ", absl::StrJoin(class_names_, ", ")));
}

absl::StatusOr<Caller> HouseholdDirectory::Authenticate(absl::string_view authorization,
                                                        absl::string_view api_key) const {
  std::vector<absl::string_view> auth_values, key_values;
  if (!authorization.empty()) auth_values.push_back(authorization);
  if (!api_key.empty()) key_values.push_back(api_key);
  absl::StatusOr<std::string> key = PresentedKey(auth_values, key_values);
  if (!key.ok() && keys_required_) return key.status();
  return AuthenticateKey(key.ok() ? *key : "");
}

absl::StatusOr<Caller> HouseholdDirectory::AuthenticateKey(absl::string_view key) const {
  if (!keys_required_) {
    Caller open;
    open.user = UserId(0);
    open.member = member_names_[0];
    open.work_class = FindClass("chat").value_or(WorkClassId(0));
    open.role = KeyRole::kAdmin;
    open.allowed_classes.assign(class_names_.size(), true);
    return open;
  }
  if (key.empty()) {
    return absl::UnauthenticatedError(
        "no API key; send \"Authorization: Bearer <key>\" with a key from the household file");
  }
  auto it = keys_.find(key);
  if (it == keys_.end()) return absl::UnauthenticatedError("unknown API key");
  return it->second;
}

absl::Status HouseholdDirectory::RequireMember(const Caller& caller) {
  if (caller.user.valid()) return absl::OkStatus();
  return absl::PermissionDeniedError(
      "this key belongs to no member: it reads the server's pages and makes no calls");
}

absl::Status HouseholdDirectory::ResolveClass(absl::string_view model,
                                              absl::string_view class_header,
                                              Caller& caller) const {
  if (absl::Status s = RequireMember(caller); !s.ok()) return s;
  bool known = model == model_name_;
  for (const auto& [alias, work_class] : aliases_) {
    if (alias == model) {
      known = true;
      caller.work_class = work_class;
    }
  }
  if (!known) {
    return absl::NotFoundError(absl::StrCat("the model \"", model, "\" does not exist; served: ",
                                            absl::StrJoin(ModelNames(), ", ")));
  }
  if (!class_header.empty()) {
    absl::StatusOr<WorkClassId> c = FindClass(class_header);
    if (!c.ok()) return c.status();
    caller.work_class = *c;
  }
  const uint32_t c = caller.work_class.value();
  if (c >= caller.allowed_classes.size() || !caller.allowed_classes[c]) {
    std::vector<std::string> allowed;
    for (size_t i = 0; i < class_names_.size() && i < caller.allowed_classes.size(); ++i) {
      if (caller.allowed_classes[i]) allowed.push_back(class_names_[i]);
    }
    return absl::PermissionDeniedError(absl::StrCat(
        "this key may not use the work class \"", class_names_[c], "\"; it may use: ",
        absl::StrJoin(allowed, ", ")));
  }
  return absl::OkStatus();
}

std::vector<std::string> HouseholdDirectory::ModelNames() const {
  std::vector<std::string> names = {model_name_};
  for (const auto& [alias, work_class] : aliases_) names.push_back(alias);
  return names;
}

}  // namespace hearth::serve
