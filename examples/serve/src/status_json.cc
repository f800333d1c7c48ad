#include "status_json.h"

namespace hearth::serve {
namespace {

using Json = nlohmann::json;

Json Seconds(absl::Duration d) {
  return d == absl::InfiniteDuration() ? Json(nullptr) : Json(absl::ToDoubleSeconds(d));
}

Json ClassJson(const ClassLive& c, const GroupReport& g) {
  return {{"name", c.name},
          {"priority", c.priority},
          {"max_running", c.max_running},
          {"waiting", c.waiting},
          {"running", c.running},
          {"oldest_wait_s", c.oldest_wait_s},
          {"slo_ttft_s", Seconds(c.slo.ttft)},
          {"slo_tpot_s", Seconds(c.slo.tpot)},
          {"ttft_p50_s", g.ttft.count ? Json(g.ttft.p50) : Json(nullptr)},
          {"ttft_p90_s", g.ttft.count ? Json(g.ttft.p90) : Json(nullptr)},
          {"slo_attainment", g.slo_attainment},
          {"slo_met", g.slo_met},
          {"slo_eligible", g.slo_eligible},
          {"arrived", g.arrived},
          {"finished", g.finished},
          {"cancelled", g.cancelled},
          {"timed_out", g.timed_out},
          {"rejected", g.rejected},
          {"failed", g.failed}};
}

Json MemberJson(const MemberLive& m, const GroupReport& g, double total_service) {
  return {{"name", m.name},
          {"weight", m.weight},
          {"running", m.running},
          {"waiting", m.waiting},
          {"kv_blocks", m.kv_blocks},
          {"service_share", total_service > 0 ? g.weighted_service / total_service : 0.0},
          {"normalized_service", g.normalized_service},
          {"output_tokens", g.output_tokens},
          {"finished", g.finished},
          {"cancelled", g.cancelled}};
}

}  // namespace

Json StatusJson(const EngineSnapshot& s, int32_t live_requests) {
  Json classes = Json::array();
  for (size_t i = 0; i < s.classes.size(); ++i) {
    const GroupReport empty;
    classes.push_back(ClassJson(s.classes[i], i < s.report.classes.size() ? s.report.classes[i] : empty));
  }
  double total_service = 0;
  for (const GroupReport& u : s.report.users) total_service += u.weighted_service;
  Json members = Json::array();
  for (size_t i = 0; i < s.members.size(); ++i) {
    const GroupReport empty;
    members.push_back(MemberJson(s.members[i], i < s.report.users.size() ? s.report.users[i] : empty,
                                 total_service));
  }
  Json running = Json::array();
  for (const RunningSequence& r : s.running) {
    running.push_back({{"id", r.id},
                       {"member", r.member},
                       {"class", r.work_class},
                       {"prompt_tokens", r.prompt_tokens},
                       {"output_tokens", r.output_tokens},
                       {"kv_blocks", r.kv_blocks}});
  }
  const EngineGauges& g = s.gauges;
  return {{"model", s.model},
          {"policy", s.policy},
          {"draining", s.draining},
          {"time_unix", absl::ToDoubleSeconds(s.taken - absl::UnixEpoch())},
          {"live_requests", live_requests},
          {"context_length", s.context_length},
          {"kv",
           {{"block_size", s.block_size},
            {"used_blocks", g.device_blocks_used},
            {"usable_blocks", g.device_blocks_usable},
            {"usage", g.KvUsage()},
            {"streams", s.kv_streams},
            {"host_blocks", g.host_blocks_capacity},
            {"swapped_out", s.swapped_out},
            {"swapped_in", s.swapped_in}}},
          {"requests",
           {{"queued", g.queued}, {"waiting", g.waiting}, {"running", g.running},
            {"swapped", g.swapped}}},
          {"disconnect_cancels", s.disconnect_cancels},
          {"jain_index", s.report.jain_index},
          {"output_tokens_per_s", s.report.output_tokens_per_s},
          {"classes", classes},
          {"members", members},
          {"running", running}};
}

}  // namespace hearth::serve
