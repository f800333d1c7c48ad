#include "page_views.h"

#include <string>
#include <utility>

#include "status_json.h"

namespace hearth::serve {
namespace {

using Json = nlohmann::json;

bool SeesEveryone(const Caller& caller) { return caller.role != KeyRole::kMember; }

const char* RoleName(KeyRole role) {
  switch (role) {
    case KeyRole::kAdmin: return "admin";
    case KeyRole::kMetrics: return "metrics";
    case KeyRole::kMember: break;
  }
  return "member";
}

// Keeps the entries of `array` whose `field` is `member`.
Json OnlyMember(const Json& array, const char* field, const std::string& member) {
  Json out = Json::array();
  for (const Json& entry : array) {
    if (entry.value(field, std::string()) == member) out.push_back(entry);
  }
  return out;
}

}  // namespace

absl::Status MayReadStatus(const Caller& caller) {
  if (caller.role != KeyRole::kMetrics) return absl::OkStatus();
  return absl::PermissionDeniedError("this key is a metrics key: it may read /metrics only");
}

absl::Status MayCall(const Caller& caller) {
  if (caller.role == KeyRole::kMetrics) {
    return absl::PermissionDeniedError("this key is a metrics key: it may read /metrics only");
  }
  return HouseholdDirectory::RequireMember(caller);
}

Json StatusView(const Caller& caller, const EngineSnapshot& snapshot, int32_t live_requests,
                const PublicRequestIds& ids) {
  Json status = StatusJson(snapshot, live_requests);
  if (!SeesEveryone(caller)) {
    status["members"] = OnlyMember(status["members"], "name", caller.member);
    status["running"] = OnlyMember(status["running"], "member", caller.member);
  }
  for (Json& r : status["running"]) {
    r["id"] = ids.PublicOf(RequestId(r["id"].get<uint64_t>()));
  }
  status["viewer"] = {{"role", RoleName(caller.role)},
                      {"member", caller.member.empty() ? Json(nullptr) : Json(caller.member)}};
  return status;
}

MetricsReport MetricsView(const Caller& caller, const MetricsReport& report) {
  MetricsReport view = report;
  if (SeesEveryone(caller)) return view;
  std::vector<GroupReport> own;
  for (const GroupReport& u : report.users) {
    if (u.name == caller.member) own.push_back(u);
  }
  view.users = std::move(own);
  return view;
}

}  // namespace hearth::serve
