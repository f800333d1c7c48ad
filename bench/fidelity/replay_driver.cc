// The replay loop, its two clocks and the comparison (see replay_driver.h).

#include "bench/fidelity/replay_driver.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "bench/fidelity/policy_order.h"
#include "hearth/exec/engine_loop.h"
#include "hearth/policy/policy_registry.h"

namespace hearth::fidelity {
namespace {

RequestSpec SpecFor(const Scheduler& s, const ReplayRequest& r, size_t index, absl::Time arrival) {
  RequestSpec spec;
  spec.user = *s.FindUser(r.user);
  spec.work_class = *s.FindWorkClass(r.work_class);
  // Byte-range ids, valid in every vocabulary here; distinct per request.
  for (int32_t k = 0; k < r.prompt_tokens; ++k) {
    spec.prompt_token_ids.push_back(static_cast<TokenId>((index * 31 + k * 7) % 200 + 20));
  }
  spec.prompt_tokens = r.prompt_tokens;
  spec.max_new_tokens = r.max_new_tokens;
  spec.arrival_time = arrival;
  return spec;
}

StepRecord Describe(const StepPlan& plan) {
  StepRecord rec;
  for (const ScheduledSequence& s : plan.sequences) {
    rec.work.push_back({s.start_position, s.num_tokens, s.decode});
    if (s.decode) {
      rec.decodes += 1;
    } else {
      rec.prefill += s.num_tokens;
    }
    rec.context += s.start_position + s.num_tokens;
  }
  return rec;
}

absl::Status WriteFile(const std::string& dir, const std::string& name, const std::string& text) {
  if (dir.empty()) return absl::OkStatus();
  const std::string path = absl::StrCat(dir, "/", name);
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  return f ? absl::OkStatus() : absl::InternalError(absl::StrCat("cannot write ", path));
}

std::string RequestsCsv(const std::vector<ReplayRequest>& list, const RunRecord& real,
                        const RunRecord& sim) {
  std::vector<const RequestLatency*> by_real(list.size()), by_sim(list.size());
  for (const RequestLatency& r : real.requests) by_real[r.index] = &r;
  for (const RequestLatency& r : sim.requests) by_sim[r.index] = &r;
  std::string csv =
      "index,user,class,arrival_s,prompt,output,real_ttft_s,sim_ttft_s,real_e2e_s,sim_e2e_s\n";
  for (size_t i = 0; i < list.size(); ++i) {
    absl::StrAppend(&csv, absl::StrFormat("%d,%s,%s,%.6f,%d,%d,%.6f,%.6f,%.6f,%.6f\n", i,
                                          list[i].user, list[i].work_class, list[i].arrival_s,
                                          list[i].prompt_tokens, real.output_tokens[i],
                                          by_real[i]->ttft, by_sim[i]->ttft, by_real[i]->e2e,
                                          by_sim[i]->e2e));
  }
  return csv;
}

// Every real step's plan priced by the profile, against its measured time.
ErrorSummary StepErrors(const RunRecord& real, const StepCostModel& cost, std::string* csv) {
  std::vector<double> predicted, measured;
  *csv = "P,D,K,measured_s,predicted_s\n";
  for (const StepRecord& s : real.steps) {
    const double p = absl::ToDoubleSeconds(cost.StepTime({.sequences = s.work}));
    predicted.push_back(p);
    measured.push_back(s.seconds);
    absl::StrAppend(csv, absl::StrFormat("%g,%g,%g,%.9g,%.9g\n", s.prefill, s.decodes, s.context,
                                         s.seconds, p));
  }
  absl::StatusOr<std::vector<double>> e = RelativeErrors(predicted, measured);
  return e.ok() ? Summarize(*e) : ErrorSummary{};
}

}  // namespace

absl::Time WallClock::Now() { return absl::Now(); }

double WallClock::StepDone(absl::Time started, StepOutcome& outcome) {
  outcome.completed_at = std::max(started, absl::Now());
  return absl::ToDoubleSeconds(outcome.completed_at - started);
}

// Sleeps to the next arrival itself: a coarser poll would add its period to
// the real TTFTs (the arrival is stamped at its scheduled time), which the
// simulator, jumping to the arrival exactly, would not see.
void WallClock::WaitUntil(absl::Time t) {
  absl::SleepFor(std::clamp(t - absl::Now(), absl::ZeroDuration(), absl::Milliseconds(50)));
}

double PricedClock::StepDone(absl::Time, StepOutcome& outcome) {
  now_ = outcome.completed_at;
  return absl::ToDoubleSeconds(executor_->last_step_time());
}

absl::StatusOr<SchedulerOptions> ReplaySchedulerOptions(const std::string& policy) {
  SchedulerOptions o;
  o.users.clear();
  for (const std::string& u : ReplayUsers()) o.users.push_back({u, 1.0});
  // The library's default household classes, as a host that configures none
  // gets them: their TTFT targets are what the household policy serves by
  // (without them every class is background and it orders as FIFO does).
  o.work_classes.clear();
  for (const std::string& name : ReplayClasses()) {
    for (const WorkClassConfig& c : HouseholdWorkClasses()) {
      if (c.name == name) o.work_classes.push_back(c);
    }
  }
  if (o.work_classes.size() != ReplayClasses().size()) {
    return absl::InternalError("HouseholdWorkClasses() lacks a class the replay list names");
  }
  absl::StatusOr<PolicyFactory> factory = MakePolicyFactory(policy, PolicyConfig{});
  if (!factory.ok()) return factory.status();
  o.policy_factory = *factory;
  return o;
}

// EngineLoop's hooks for a replay: each plan described, its end stamped by
// the replay's clock.
class ReplayHooks : public EngineHooks {
 public:
  explicit ReplayHooks(ReplayClock& clock) : clock_(clock) {}
  void OnPlanned(const StepPlan& plan) override { record = Describe(plan); }
  void OnExecuted(const StepPlan& plan, const absl::Status&, StepOutcome& outcome) override {
    record.seconds = clock_.StepDone(plan.now, outcome);
  }
  StepRecord record;

 private:
  ReplayClock& clock_;
};

// The shared driver: submit what has arrived, one EngineLoop step, collect.
// `sim` (may be null) learns each request's hidden length from `lengths`.
absl::StatusOr<RunRecord> Drive(Scheduler& scheduler, StepExecutor& executor, ReplayClock& clock,
                                const std::vector<ReplayRequest>& list, SimulatedExecutor* sim,
                                const std::vector<int32_t>& lengths) {
  RunRecord run;
  run.output_tokens.assign(list.size(), 0);
  absl::flat_hash_map<RequestId, size_t> index_of;
  const absl::Time t0 = clock.Now();
  size_t next = 0;
  EngineLoop loop(scheduler, executor);
  ReplayHooks hooks(clock);
  std::vector<RequestResult> results;
  absl::Time last_end = t0;
  while (run.requests.size() < list.size()) {
    const absl::Time now = clock.Now();
    for (; next < list.size() && t0 + absl::Seconds(list[next].arrival_s) <= now; ++next) {
      const absl::Time arrival = t0 + absl::Seconds(list[next].arrival_s);
      absl::StatusOr<RequestId> id = scheduler.Submit(SpecFor(scheduler, list[next], next, arrival));
      if (!id.ok()) return id.status();
      if (sim != nullptr) {
        if (absl::Status s = sim->SetOutputLength(*id, lengths[next]); !s.ok()) return s;
      }
      index_of[*id] = next;
    }
    if (absl::Status s = loop.Step(now, hooks); !s.ok()) return s;
    if (!hooks.record.work.empty()) run.steps.push_back(std::move(hooks.record));
    results.clear();
    scheduler.DrainResults(&results);
    for (const RequestResult& r : results) {
      const size_t i = index_of.at(r.id);
      if (r.phase != RequestPhase::kFinished) {
        return absl::InternalError(absl::StrCat("request ", i, " ended unfinished: ", r.message));
      }
      run.requests.push_back({static_cast<int64_t>(i), list[i].work_class,
                              absl::ToDoubleSeconds(r.first_token_time - r.arrival_time),
                              absl::ToDoubleSeconds(r.end_time - r.arrival_time)});
      run.output_tokens[i] = r.output_tokens;
      last_end = std::max(last_end, r.end_time);
    }
    if (loop.last_step().sequences == 0) {
      clock.WaitUntil(next < list.size() ? t0 + absl::Seconds(list[next].arrival_s)
                                         : now + absl::Milliseconds(1));
    }
  }
  run.seconds = absl::ToDoubleSeconds(last_end - t0);
  run.preemptions = scheduler.stats().preemptions;
  return run;
}

absl::StatusOr<RunRecord> RunSimulated(const SchedulerOptions& options, const StepCostModel& cost,
                                       const std::vector<ReplayRequest>& list,
                                       const std::vector<int32_t>& lengths) {
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(options);
  if (!scheduler.ok()) return scheduler.status();
  SimulatedExecutor executor(&cost, options.kv.block_size, options.models[0].kv_bytes_per_token);
  PricedClock clock(&executor);
  return Drive(**scheduler, executor, clock, list, &executor, lengths);
}

absl::StatusOr<PolicyOutcome> CompareAndReport(const std::string& policy,
                                               const std::vector<ReplayRequest>& list,
                                               const RunRecord& real, const RunRecord& sim,
                                               const StepCostModel& cost,
                                               const std::string& out_dir) {
  absl::StatusOr<ReplayComparison> cmp = CompareRequests(real.requests, sim.requests);
  if (!cmp.ok()) return cmp.status();
  std::string steps_csv;
  PolicyOutcome out;
  out.policy = policy;
  out.requests = *cmp;
  out.steps = StepErrors(real, cost, &steps_csv);
  out.real_voice_p90 = ClassTtftQuantile(real.requests, "voice", 0.9);
  out.sim_voice_p90 = ClassTtftQuantile(sim.requests, "voice", 0.9);
  out.meets_target = cmp->ttft.median <= 0.15 && cmp->e2e.median <= 0.15 &&
                     cmp->ttft.p90 <= 0.25 && cmp->e2e.p90 <= 0.25;
  std::printf("\npolicy %s: %zu requests; real %.2f s in %zu steps (%llu preemptions), "
              "simulated %.2f s in %zu steps (%llu preemptions)\n",
              policy.c_str(), cmp->requests, real.seconds, real.steps.size(),
              static_cast<unsigned long long>(real.preemptions), sim.seconds, sim.steps.size(),
              static_cast<unsigned long long>(sim.preemptions));
  std::printf("  %-26s %8s %8s %8s %8s\n", "relative error", "median", "p90", "mean", "max");
  auto row = [](const char* what, const ErrorSummary& e) {
    std::printf("  %-26s %7.1f%% %7.1f%% %7.1f%% %7.1f%%\n", what, 100 * e.median, 100 * e.p90,
                100 * e.mean, 100 * e.max);
  };
  row("step time (real plans)", out.steps);
  row("request TTFT", cmp->ttft);
  row("request end-to-end", cmp->e2e);
  std::printf("  voice p90 TTFT: real %.3f s, simulated %.3f s; TTFT/E2E target "
              "(median <= 15%%, p90 <= 25%%): %s\n",
              out.real_voice_p90, out.sim_voice_p90, out.meets_target ? "met" : "NOT met");
  if (absl::Status s = WriteFile(out_dir, absl::StrCat("steps_", policy, ".csv"), steps_csv);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = WriteFile(out_dir, absl::StrCat("requests_", policy, ".csv"),
                                 RequestsCsv(list, real, sim));
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::string> jsonl = FormatRequestJsonl(list, real.output_tokens);
  if (!jsonl.ok()) return jsonl.status();
  if (absl::Status s = WriteFile(out_dir, "requests.jsonl", *jsonl); !s.ok()) return s;
  return out;
}

void PrintSummary(const std::vector<PolicyOutcome>& outcomes) {
  std::printf("\n%-10s %-4s %21s %19s %19s %s\n", "policy", "run", "voice p90 real / sim",
              "TTFT err med / p90", "E2E err med / p90", "target");
  std::vector<std::string> policies;
  for (const PolicyOutcome& o : outcomes) {
    if (std::find(policies.begin(), policies.end(), o.policy) == policies.end()) {
      policies.push_back(o.policy);
    }
  }
  for (const std::string& p : policies) {
    int run = 0, met = 0;
    ErrorSummary worst_ttft, worst_e2e;
    for (const PolicyOutcome& o : outcomes) {
      if (o.policy != p) continue;
      ++run;
      met += o.meets_target;
      worst_ttft.median = std::max(worst_ttft.median, o.requests.ttft.median);
      worst_ttft.p90 = std::max(worst_ttft.p90, o.requests.ttft.p90);
      worst_e2e.median = std::max(worst_e2e.median, o.requests.e2e.median);
      worst_e2e.p90 = std::max(worst_e2e.p90, o.requests.e2e.p90);
      std::printf("%-10s %-4d %9.3f / %7.3f s %8.1f%% / %5.1f%% %8.1f%% / %5.1f%% %s\n",
                  p.c_str(), run, o.real_voice_p90, o.sim_voice_p90, 100 * o.requests.ttft.median,
                  100 * o.requests.ttft.p90, 100 * o.requests.e2e.median,
                  100 * o.requests.e2e.p90, o.meets_target ? "met" : "NOT met");
    }
    std::printf("%-10s %-4s %21s %8.1f%% / %5.1f%% %8.1f%% / %5.1f%% met in %d of %d runs\n",
                p.c_str(), "max", "", 100 * worst_ttft.median, 100 * worst_ttft.p90,
                100 * worst_e2e.median, 100 * worst_e2e.p90, met, run);
  }
}

absl::StatusOr<bool> PrintOrdering(const std::vector<PolicyOutcome>& outcomes) {
  // Within 5% is a tie even when repeats agree more closely than that: a
  // difference that small is no order a household would notice.
  constexpr double kMinBand = 0.05;
  struct Runs {
    std::string policy;
    std::vector<double> real, sim;
  };
  std::vector<Runs> by_policy;
  for (const PolicyOutcome& o : outcomes) {
    auto it = std::find_if(by_policy.begin(), by_policy.end(),
                           [&](const Runs& r) { return r.policy == o.policy; });
    if (it == by_policy.end()) it = by_policy.insert(by_policy.end(), Runs{o.policy, {}, {}});
    it->real.push_back(o.real_voice_p90);
    it->sim.push_back(o.sim_voice_p90);
  }
  auto range = [](const std::vector<double>& v) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return v.size() == 1 ? absl::StrFormat("%.3f s", *lo)
                         : absl::StrFormat("%.3f s [%.3f-%.3f over %d runs]", Quantile(v, 0.5),
                                           *lo, *hi, v.size());
  };
  bool all_same = true;
  for (size_t a = 0; a < by_policy.size(); ++a) {
    for (size_t b = a + 1; b < by_policy.size(); ++b) {
      const Runs& x = by_policy[a];
      const Runs& y = by_policy[b];
      // The simulated side is deterministic given the lengths; the median
      // covers a host whose real output lengths differed between runs.
      const double sim_x = Quantile(x.sim, 0.5), sim_y = Quantile(y.sim, 0.5);
      absl::StatusOr<RunsOrder> o = JudgeOrder(x.real, y.real, sim_x, sim_y, kMinBand);
      if (!o.ok()) return o.status();
      all_same = all_same && o->same();
      std::printf("\nvoice p90 TTFT, %s vs %s:\n  real      %s: %s, %s: %s -> %s "
                  "(runs of one policy differ by up to %.1f%%)\n"
                  "  simulated %s: %.3f s, %s: %.3f s -> %s (tie band %.1f%%)\n  -> %s\n",
                  x.policy.c_str(), y.policy.c_str(), x.policy.c_str(), range(x.real).c_str(),
                  y.policy.c_str(), range(y.real).c_str(), OrderName(o->real),
                  100 * o->real_spread, x.policy.c_str(), sim_x, y.policy.c_str(), sim_y,
                  OrderName(o->sim), 100 * o->band, o->same() ? "same order" : "DIFFERENT order");
    }
  }
  return all_same;
}

}  // namespace hearth::fidelity
