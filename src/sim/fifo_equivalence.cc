#include "hearth/sim/fifo_equivalence.h"

#include <set>

#include "absl/strings/str_cat.h"

namespace hearth {
namespace {

// What of the scenario's registries a workload uses.
struct Presence {
  std::vector<bool> users;
  std::vector<bool> classes;
  bool workflows = false;
};

int Count(const std::vector<bool>& present) {
  int n = 0;
  for (bool p : present) n += p ? 1 : 0;
  return n;
}

// Distinct values of `key` over the classes present.
template <typename Key>
size_t DistinctOverClasses(const Scenario& s, const Presence& p, Key key) {
  std::set<decltype(key(s.scheduler.work_classes[0]))> values;
  for (size_t c = 0; c < p.classes.size(); ++c) {
    if (p.classes[c]) values.insert(key(s.scheduler.work_classes[c]));
  }
  return values.size();
}

std::vector<std::string> Warnings(const Scenario& s, const Presence& p) {
  std::vector<std::string> out;
  const PolicyConfig& pc = s.policy_config;
  if (p.workflows && pc.workflow_head_start > absl::ZeroDuration()) return out;
  const bool one_user = Count(p.users) <= 1;
  const auto priority = [](const WorkClassConfig& c) { return c.priority; };
  const auto ttft = [](const WorkClassConfig& c) { return c.ttft_slo; };
  const bool one_level = DistinctOverClasses(s, p, priority) <= 1;
  const bool one_deadline = DistinctOverClasses(s, p, ttft) <= 1;
  for (const std::string& policy : s.policies) {
    if (policy == "vtc" && one_user) {
      out.push_back("vtc cannot differ from fifo here: one user has requests, so there is "
                    "nobody to share between and it admits in arrival order");
    } else if (policy == "priority" && one_level) {
      out.push_back("priority cannot differ from fifo here: every class with requests has the "
                    "same priority, so all wait on one level, in arrival order");
    } else if (policy == "household" && one_user && one_deadline &&
               (pc.priority.quotas.empty() || one_level) &&
               pc.household_request_level == RequestLevel::kFifo) {
      out.push_back("household cannot differ from fifo here: one user has requests and every "
                    "class with requests has the same TTFT target (ttft_slo_s), so deadlines "
                    "follow arrival order");
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> FifoEquivalenceWarnings(const Scenario& s, const Workload& w) {
  Presence p;
  p.users.assign(s.scheduler.users.size(), false);
  p.classes.assign(s.scheduler.work_classes.size(), false);
  for (const SimRequest& r : w.requests) {
    if (r.user < p.users.size()) p.users[r.user] = true;
    if (r.work_class < p.classes.size()) p.classes[r.work_class] = true;
    p.workflows = p.workflows || r.parent >= 0;
  }
  return Warnings(s, p);
}

std::vector<std::string> FifoEquivalenceWarnings(const Scenario& s, const SimulationResult& run) {
  Presence p;
  for (const GroupReport& g : run.report.users) p.users.push_back(g.arrived > 0);
  for (const GroupReport& g : run.report.classes) p.classes.push_back(g.arrived > 0);
  p.users.resize(s.scheduler.users.size(), false);
  p.classes.resize(s.scheduler.work_classes.size(), false);
  // A call issued by a finished parent is in a workflow; so is one never
  // issued because its parent did not finish.
  p.workflows = run.workflows > 0 || run.dependents_dropped > 0;
  return Warnings(s, p);
}

}  // namespace hearth
