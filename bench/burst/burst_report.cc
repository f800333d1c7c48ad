#include "bench/burst/burst_report.h"

#include <algorithm>
#include <cinttypes>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/burst/duration_stats.h"

namespace hearth::bench {

namespace {

constexpr double kAcceptanceMaxPlanMs = 5.0;

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

struct BystanderSummary {
  size_t submitted = 0;
  size_t rejected = 0;
  std::map<std::string, uint64_t> errors;
  size_t never_planned = 0;
  // Planned requests by steps waited: 0, 1, 2-10, 11-100, more.
  size_t waited[5] = {};
  uint64_t max_wait = 0;
};

BystanderSummary Summarize(const std::vector<BystanderRequest>& bob) {
  BystanderSummary s;
  s.submitted = bob.size();
  for (const BystanderRequest& r : bob) {
    if (!r.accepted) {
      ++s.rejected;
      ++s.errors[r.error];
      continue;
    }
    if (!r.planned()) {
      ++s.never_planned;
      continue;
    }
    const uint64_t w = r.wait_steps();
    s.max_wait = std::max(s.max_wait, w);
    ++s.waited[w == 0 ? 0 : w == 1 ? 1 : w <= 10 ? 2 : w <= 100 ? 3 : 4];
  }
  return s;
}

// Indices of the `k` longest durations, longest first.
std::vector<size_t> LongestSteps(const std::vector<int64_t>& ns, size_t k) {
  std::vector<size_t> order(ns.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  k = std::min(k, order.size());
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](size_t a, size_t b) { return ns[a] > ns[b]; });
  order.resize(k);
  return order;
}

}  // namespace

bool BurstAccepted(const BurstReport& r, double max_plan_ms) {
  if (!r.setup.ok() || r.timed_out || r.lost != 0) return false;
  const BystanderSummary bob = Summarize(r.bob);
  const int64_t longest = r.plan_ns.empty() ? 0 : *std::max_element(r.plan_ns.begin(), r.plan_ns.end());
  return bob.rejected == 0 && bob.never_planned == 0 && bob.max_wait <= 1 &&
         Ms(longest) < max_plan_ms;
}

namespace {

std::vector<int64_t> Sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Plan's wall time, split into the scheduler's own work (CPU time) and the
// Plans the OS switched out, and Complete's, with the longest Plans.
void PrintStepTimes(const BurstReport& r, std::FILE* out) {
  const std::vector<int64_t> sorted = Sorted(r.plan_ns);
  std::vector<int64_t> busy;
  std::vector<int64_t> kept;
  size_t blocked = 0;
  int64_t blocked_max = 0;
  for (size_t i = 0; i < r.plan_ns.size(); ++i) {
    if (r.busy[i]) busy.push_back(r.plan_ns[i]);
    if (!r.plan_switched_out[i]) kept.push_back(r.plan_ns[i]);
    if (r.plan_blocked[i]) {
      ++blocked;
      blocked_max = std::max(blocked_max, r.plan_ns[i]);
    }
  }
  busy = Sorted(std::move(busy));
  kept = Sorted(std::move(kept));
  const std::vector<int64_t> cpu = Sorted(r.plan_cpu_ns);
  const std::vector<int64_t> complete = Sorted(r.complete_ns);
  auto max = [](const std::vector<int64_t>& v) { return Ms(v.empty() ? 0 : v.back()); };
  std::fprintf(out, "| Plan max (ms) | **%.2f** |\n", max(sorted));
  std::fprintf(out, "| Plan CPU time max / p99.9 (ms): the engine thread's own work | %.2f / %.3f |\n",
               max(cpu), Ms(Percentile(cpu, 0.999)));
  std::fprintf(out,
               "| Plan max (ms) of the %zu Plans the OS did not switch out (%zu were) | %.2f |\n",
               kept.size(), r.plan_ns.size() - kept.size(), max(kept));
  std::fprintf(out, "| Plans in which the engine thread blocked (waited on a lock or I/O), longest (ms) | %zu, %.2f |\n",
               blocked, Ms(blocked_max));
  std::fprintf(out, "| Complete max / p99.9 (ms) | %.2f / %.3f |\n", max(complete),
               Ms(Percentile(complete, 0.999)));
  for (size_t i : LongestSteps(r.plan_ns, 3)) {
    std::fprintf(out,
                 "| a longest Plan: step %zu | %.2f ms, took in ~%" PRId64
                 " submissions, %d waiting after |\n",
                 i + 1, Ms(r.plan_ns[i]), r.intake[i], r.waiting[i]);
  }
  std::fprintf(out, "| Plan p99.9 / p99 / p50 (ms), all plans | %.3f / %.3f / %.4f |\n",
               Ms(Percentile(sorted, 0.999)), Ms(Percentile(sorted, 0.99)),
               Ms(Percentile(sorted, 0.5)));
  std::fprintf(out,
               "| Plan p99.9 / p99 / p50 (ms), %zu plans that scheduled work | %.3f / %.3f / "
               "%.4f |\n",
               busy.size(), Ms(Percentile(busy, 0.999)), Ms(Percentile(busy, 0.99)),
               Ms(Percentile(busy, 0.5)));
}

std::string CountsByCode(const std::map<std::string, uint64_t>& counts) {
  std::string joined = absl::StrJoin(
      counts, ", ",
      [](std::string* s, const auto& kv) { absl::StrAppend(s, kv.first, " ", kv.second); });
  return joined.empty() ? "none" : joined;
}

}  // namespace

void PrintBurstReport(const BurstReport& r, std::FILE* out) {
  if (!r.setup.ok()) {
    std::fprintf(out, "burst failed: %s\n", r.setup.ToString().c_str());
  }
  const BystanderSummary bob = Summarize(r.bob);
  std::fprintf(out, "| measure | value |\n|---|---:|\n");
  std::fprintf(out, "| device KV blocks | %d |\n", r.device_blocks);
  std::fprintf(out, "| alice: requests accepted / attempts | %" PRIu64 " / %" PRIu64 " |\n",
               r.alice.accepted, r.alice.attempts);
  std::fprintf(out, "| alice: Submit rejections by code | %s |\n",
               CountsByCode(r.alice.rejections).c_str());
  std::fprintf(out, "| alice: Submit throughput (accepted/s) | %.0f |\n",
               r.alice.seconds > 0 ? static_cast<double>(r.alice.accepted) / r.alice.seconds : 0);
  std::fprintf(out, "| alice: seconds submitting | %.2f |\n", r.alice.seconds);
  std::fprintf(out, "| steps | %" PRIu64 " |\n", r.steps);
  PrintStepTimes(r, out);
  std::fprintf(out, "| most waiting after a step | %d |\n", r.max_waiting);
  std::fprintf(out, "| bob: submitted / rejected (codes) | %zu / %zu (%s) |\n", bob.submitted,
               bob.rejected, CountsByCode(bob.errors).c_str());
  std::fprintf(out,
               "| bob: planned after 0 / 1 / 2–10 / 11–100 / >100 steps, never | %zu / %zu / "
               "%zu / %zu / %zu, %zu |\n",
               bob.waited[0], bob.waited[1], bob.waited[2], bob.waited[3], bob.waited[4],
               bob.never_planned);
  std::fprintf(out, "| bob: longest wait (steps) | **%" PRIu64 "** |\n", bob.max_wait);
  std::fprintf(out, "| ended alice / bob, lost | %" PRIu64 " / %" PRIu64 ", %" PRIu64 " |\n",
               r.alice_ended, r.bob_ended, r.lost);
  std::fprintf(out, "| wall (s) | %.1f%s |\n", r.wall_seconds, r.timed_out ? " (gave up)" : "");
  std::fprintf(out, "| peak RSS (MiB) | %.1f |\n", static_cast<double>(r.peak_rss_kib) / 1024.0);
  std::fprintf(out,
               "| acceptance (bob planned within 1 step, never rejected; Plan max < %.0f ms) | "
               "**%s** |\n",
               kAcceptanceMaxPlanMs, BurstAccepted(r, kAcceptanceMaxPlanMs) ? "met" : "not met");
}

}  // namespace hearth::bench
