#include "hearth/sim/latency_capacity.h"

#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hearth/sim/load_scaling.h"
#include "hearth/sim/oracle_policy.h"
#include "hearth/sim/reference_figures.h"
#include "hearth/sim/simulator.h"
#include "internal/status_macros.h"

namespace hearth {
namespace {

absl::Status CheckSpec(const Scenario& s) {
  if (s.capacity.criterion.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        s.name, ": the [capacity] table sets no bound; set p99_itl_ms, p50_queue_wait_s or "
                "p50_ttft_s"));
  }
  for (int32_t budget : s.capacity.token_budgets) {
    if (budget < s.scheduler.max_running) {
      return absl::InvalidArgumentError(absl::StrCat(
          s.name, ": capacity.token_budgets has ", budget, "; each must be >= engine.max_running (",
          s.scheduler.max_running, ")"));
    }
  }
  return absl::OkStatus();
}

// The scenario with its step budget and prefill chunk set to `budget` (0:
// as it is).
Scenario WithBudget(const Scenario& s, int32_t budget) {
  Scenario out = s;
  if (budget > 0) {
    out.scheduler.max_batched_tokens = budget;
    out.scheduler.max_prefill_chunk_tokens = 0;
  }
  return out;
}

// One run's verdict and the measures the table shows.
struct Judged {
  std::string misses;
  double p99_itl_s = 0, p50_queue_wait_s = 0, p50_ttft_s = 0;
};

// Runs one policy at one budget at the rates the bisection asks for.
class BudgetRunner {
 public:
  BudgetRunner(const Scenario& variant, const LoadScaling& scaling, double high)
      : variant_(variant), scaling_(scaling), high_(high) {}

  absl::StatusOr<Judged> Run(const std::string& policy, double rate) {
    if (auto it = seen_.find(rate); it != seen_.end()) return it->second;
    HEARTH_ASSIGN_OR_RETURN(Workload w, scaling_.WorkloadAt(rate / high_));
    HEARTH_ASSIGN_OR_RETURN(SimulationOptions o, SimulationOptionsFor(variant_, policy));
    o.record_timeline = false;
    // Every gap kept exactly: the criterion's P99 is judged on all of them.
    size_t tokens = 1;
    for (const SimRequest& r : w.requests) tokens += static_cast<size_t>(r.output_tokens) + 1;
    o.latency_samples_per_series = tokens;
    absl::StatusOr<SimulationResult> r = RunSimulation(w, o);
    if (!r.ok()) {
      return absl::Status(r.status().code(),
                          absl::StrFormat("%s, token budget %d, %.4g requests/s: %s", policy,
                                          variant_.scheduler.max_batched_tokens, rate,
                                          r.status().message()));
    }
    const GroupReport& t = r->report.total;
    Judged j{LatencyCriterionMisses(variant_.capacity.criterion, t), t.itl.p99, t.queue_wait.p50,
             t.ttft.p50};
    seen_.emplace(rate, j);
    return j;
  }

 private:
  const Scenario& variant_;
  const LoadScaling& scaling_;
  const double high_;
  std::map<double, Judged> seen_;
};

std::string Ratio(double num, double den) {
  return den > 0 ? absl::StrFormat("%.2fx", num / den) : "–";
}

}  // namespace

absl::StatusOr<LatencyCapacityResult> RunLatencyCapacity(
    const Scenario& s, const std::function<void(const std::string&, int32_t, double)>& on_run) {
  HEARTH_RETURN_IF_ERROR(CheckSpec(s));
  const BisectionOptions& bisection = s.capacity.bisection;
  // Load 1 stands for the highest rate searched: load = rate / high.
  HEARTH_ASSIGN_OR_RETURN(LoadScaling scaling, LoadScaling::Create(s, bisection.high));
  LatencyCapacityResult result;
  result.scenario = s.name;
  result.spec = s.capacity;
  HEARTH_ASSIGN_OR_RETURN(Workload base, scaling.WorkloadAt(1.0));
  result.requests = base.requests.size();
  std::vector<int32_t> budgets = s.capacity.token_budgets;
  if (budgets.empty()) budgets.push_back(0);
  for (const std::string& policy : s.policies) {
    for (int32_t budget : budgets) {
      const Scenario variant = WithBudget(s, budget);
      BudgetRunner runner(variant, scaling, bisection.high);
      CapacityCell cell;
      cell.policy = policy;
      cell.token_budget = budget;
      HEARTH_ASSIGN_OR_RETURN(
          cell.search,
          BisectCapacity(bisection, [&](double rate) -> absl::StatusOr<bool> {
            if (on_run) on_run(policy, budget, rate);
            HEARTH_ASSIGN_OR_RETURN(Judged j, runner.Run(policy, rate));
            return j.misses.empty();
          }));
      if (cell.search.capacity > 0) {
        HEARTH_ASSIGN_OR_RETURN(Judged at, runner.Run(policy, cell.search.capacity));
        cell.p99_itl_s = at.p99_itl_s;
        cell.p50_queue_wait_s = at.p50_queue_wait_s;
        cell.p50_ttft_s = at.p50_ttft_s;
      }
      if (cell.search.saw_failure) {
        HEARTH_ASSIGN_OR_RETURN(Judged above, runner.Run(policy, cell.search.lowest_failing));
        cell.limited_by = above.misses;
      }
      result.cells.push_back(std::move(cell));
    }
  }
  return result;
}

absl::StatusOr<double> MeasuredCapacityFigure(std::string_view figure, const std::string& policy,
                                              const LatencyCapacityResult& r) {
  if (!IsCapacityFigure(figure)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", std::string(figure), "\" is not a capacity figure"));
  }
  const CapacityCell* first = nullptr;
  const CapacityCell* last = nullptr;
  for (const CapacityCell& c : r.cells) {
    if (c.policy != policy) continue;
    if (first == nullptr) first = &c;
    last = &c;
  }
  if (last == nullptr) return absl::NotFoundError(absl::StrCat(policy, " was not run"));
  if (figure == "capacity_per_s") return last->search.capacity;
  if (!(first->search.capacity > 0)) {
    return absl::FailedPreconditionError("no capacity at the first budget");
  }
  return last->search.capacity / first->search.capacity;
}

std::string LatencyCapacityMarkdown(const Scenario& s, const LatencyCapacityResult& r) {
  const BisectionOptions& b = r.spec.bisection;
  std::string out = absl::StrFormat(
      "### Capacity: %s\n\nCriterion, over every request of a run: %s. Capacity: the highest "
      "rate (requests/s) at which a run meets it, by bisection (%d steps after %.3g requests/s, "
      "in [0, %.3g]); each run replays the same %d requests, their arrivals scaled to the rate. "
      "Token budget: the step's token budget and prefill chunk (max_batched_tokens). "
      "Latencies are those of the run at capacity; \"fails above by\" what the run at the "
      "lowest failing rate missed.\n\n"
      "| policy | token budget | capacity req/s | vs first budget | vs fifo | P99 ITL ms | "
      "median queue wait s | median TTFT s | fails above by |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
      r.scenario, r.spec.criterion.Describe(), b.steps, b.low, b.high, r.requests);
  for (const CapacityCell& c : r.cells) {
    const CapacityCell* first = nullptr;
    const CapacityCell* fifo = nullptr;
    for (const CapacityCell& o : r.cells) {
      if (o.policy == c.policy && first == nullptr) first = &o;
      if (o.policy == "fifo" && o.token_budget == c.token_budget) fifo = &o;
    }
    const double cap = c.search.capacity;
    absl::StrAppendFormat(
        &out, "| %s | %s | %s%.3g | %s | %s | %.0f | %.3g | %.3g | %s |\n", c.policy,
        c.token_budget > 0 ? absl::StrCat(c.token_budget)
                           : absl::StrCat(s.scheduler.max_batched_tokens, " (engine)"),
        c.search.saw_failure ? "" : ">= ", cap, Ratio(cap, first->search.capacity),
        fifo == nullptr ? "–" : Ratio(cap, fifo->search.capacity), c.p99_itl_s * 1e3,
        c.p50_queue_wait_s, c.p50_ttft_s, c.search.saw_failure ? c.limited_by : "nothing failed");
  }
  std::vector<std::string> oracles;
  for (const std::string& p : s.policies) {
    if (IsOraclePolicy(p)) oracles.push_back(p);
  }
  absl::StrAppend(&out, ReferenceFiguresTable(
                            s.paper, /*capacity=*/true, oracles,
                            [&](const std::string& policy, const std::string& figure) {
                              return MeasuredCapacityFigure(figure, policy, r);
                            }));
  return out;
}

}  // namespace hearth
