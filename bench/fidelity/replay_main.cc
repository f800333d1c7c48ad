// hearth_fidelity_replay: one request list, run (a) by llama.cpp under Hearth
// in real time and (b) by the simulator with a fitted step-cost profile,
// under each policy; then compared step by step and request by request.
//
// Both sides use one loop (Drive) and one set of SchedulerOptions, sized
// from the llama.cpp context exactly as LlamaEngine sizes them: the only
// difference is where a step's duration comes from, the wall clock around
// llama_decode or the profile. The simulated requests get the real run's
// output lengths as their hidden lengths (the self-written models never end
// early, so these equal max_new_tokens).
//
//   hearth_fidelity_replay --model=wide --profile=wide.toml --out_dir=fidelity_out
//
// Prints per policy: per-step time error (each real plan priced by the
// profile against its measured time), per-request TTFT and end-to-end
// latency error (median, p90), voice p90 TTFT real and simulated, and
// whether the simulator orders the policies as the real engine does. Writes
// requests.jsonl (the list, in the simulator's format), and per policy
// requests_<policy>.csv and steps_<policy>.csv for the plot (replay.gp).

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "bench/fidelity/bench_models.h"
#include "bench/fidelity/fidelity_stats.h"
#include "bench/fidelity/replay_workload.h"
#include "hearth/exec/step_executor.h"
#include "hearth/policy/policy_registry.h"
#include "hearth/scheduler/scheduler.h"
#include "hearth/sim/fitted_cost_model.h"
#include "hearth/sim/simulated_executor.h"
#include "hearth_llama_cpp/llama_engine.h"
#include "hearth_llama_cpp/llama_runtime.h"
#include "hearth_llama_cpp/llama_step_executor.h"

ABSL_FLAG(std::string, model, "wide", "self-written model: tiny or wide");
ABSL_FLAG(std::string, model_path, "", "where the model is written (default /tmp/hearth_fidelity_<model>.gguf)");
ABSL_FLAG(std::string, profile, "", "fitted step-cost profile (hearth_fidelity_calibrate); required");
ABSL_FLAG(std::string, policies, "fifo,household", "policies to replay under");
ABSL_FLAG(double, horizon_s, 24, "arrivals fall in [0, horizon_s)");
ABSL_FLAG(double, load, 1.0, "multiplies the arrival rates and burst sizes");
ABSL_FLAG(uint64_t, seed, 1, "seeds the request list");
ABSL_FLAG(int32_t, n_ctx, 4096, "llama.cpp KV cells = Hearth's KV blocks x block size");
ABSL_FLAG(int32_t, n_batch, 128, "llama.cpp n_batch = Hearth's token budget per step");
ABSL_FLAG(int32_t, n_seq_max, 8, "llama.cpp sequences = Hearth's max running requests");
ABSL_FLAG(int32_t, threads, 1, "llama.cpp CPU threads");
ABSL_FLAG(std::string, out_dir, "", "folder for the CSV and JSONL files (none when empty)");

namespace hearth::fidelity {
namespace {

namespace lc = llama_cpp;

struct StepRecord {
  double prefill = 0, decodes = 0, context = 0;  // P, D, K as the profile sees them
  double seconds = 0;                            // measured (real) or priced (simulated)
  std::vector<SequenceWork> work;
};

struct RunRecord {
  std::vector<RequestLatency> requests;
  std::vector<int32_t> output_tokens;  // by request index
  std::vector<StepRecord> steps;
  double seconds = 0;  // first arrival to last end
  uint64_t preemptions = 0;
};

// Where time comes from: the wall clock, or the simulator's step prices.
class ReplayClock {
 public:
  virtual ~ReplayClock() = default;
  virtual absl::Time Now() = 0;
  // Called after the step ran; stamps outcome.completed_at and returns the
  // step's duration in seconds.
  virtual double StepDone(absl::Time started, StepOutcome& outcome) = 0;
  virtual void WaitUntil(absl::Time t) = 0;
};

class WallClock : public ReplayClock {
 public:
  absl::Time Now() override { return absl::Now(); }
  double StepDone(absl::Time started, StepOutcome& outcome) override {
    outcome.completed_at = std::max(started, absl::Now());
    return absl::ToDoubleSeconds(outcome.completed_at - started);
  }
  void WaitUntil(absl::Time t) override { absl::SleepFor(std::min(t - absl::Now(), absl::Milliseconds(2))); }
};

class PricedClock : public ReplayClock {
 public:
  explicit PricedClock(const SimulatedExecutor* e) : executor_(e) {}
  absl::Time Now() override { return now_; }
  double StepDone(absl::Time, StepOutcome& outcome) override {
    now_ = outcome.completed_at;  // the simulated executor priced the step
    return absl::ToDoubleSeconds(executor_->last_step_time());
  }
  void WaitUntil(absl::Time t) override { now_ = std::max(now_, t); }

 private:
  const SimulatedExecutor* executor_;
  absl::Time now_ = absl::UnixEpoch();
};

SchedulerOptions BaseOptions(const std::string& policy) {
  SchedulerOptions o;
  o.users.clear();
  for (const std::string& u : ReplayUsers()) o.users.push_back({u, 1.0});
  o.work_classes = {{"voice", 2}, {"chat", 1}, {"agent", 0}};
  absl::StatusOr<PolicyFactory> factory = MakePolicyFactory(policy, PolicyConfig{});
  if (factory.ok()) o.policy_factory = *factory;
  return o;
}

RequestSpec SpecFor(const Scheduler& s, const ReplayRequest& r, size_t index, absl::Time arrival) {
  RequestSpec spec;
  spec.user = *s.FindUser(r.user);
  spec.work_class = *s.FindWorkClass(r.work_class);
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
    (s.decode ? rec.decodes : rec.prefill) += s.decode ? 1 : s.num_tokens;
    rec.context += s.start_position + s.num_tokens;
  }
  return rec;
}

// The shared loop: submit what has arrived, plan, execute, complete, collect.
// `sim` (may be null) learns each request's hidden length from `lengths`.
absl::StatusOr<RunRecord> Drive(Scheduler& scheduler, StepExecutor& executor, ReplayClock& clock,
                                const std::vector<ReplayRequest>& list, SimulatedExecutor* sim,
                                const std::vector<int32_t>& lengths) {
  RunRecord run;
  run.output_tokens.assign(list.size(), 0);
  absl::flat_hash_map<RequestId, size_t> index_of;
  const absl::Time t0 = clock.Now();
  size_t next = 0;
  StepOutcome outcome;
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
    absl::StatusOr<const StepPlan*> plan = scheduler.Plan(now);
    if (!plan.ok()) return plan.status();
    StepRecord rec = Describe(**plan);
    const absl::Status executed = ExecuteStep(executor, **plan, &outcome);
    rec.seconds = clock.StepDone(now, outcome);
    if (absl::Status s = scheduler.Complete(outcome); !s.ok()) return s;
    if (!executed.ok()) return executed;
    if (!rec.work.empty()) run.steps.push_back(std::move(rec));
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
    if ((*plan)->sequences.empty()) {
      clock.WaitUntil(next < list.size() ? t0 + absl::Seconds(list[next].arrival_s)
                                         : now + absl::Milliseconds(1));
    }
  }
  run.seconds = absl::ToDoubleSeconds(last_end - t0);
  run.preemptions = scheduler.stats().preemptions;
  return run;
}

absl::StatusOr<RunRecord> RunReal(llama_model* model, const std::string& policy,
                                  const std::vector<ReplayRequest>& list, SchedulerOptions* sized) {
  lc::ContextOptions copts;
  copts.n_ctx = absl::GetFlag(FLAGS_n_ctx);
  copts.n_batch = absl::GetFlag(FLAGS_n_batch);
  copts.n_seq_max = absl::GetFlag(FLAGS_n_seq_max);
  copts.n_threads = absl::GetFlag(FLAGS_threads);
  absl::StatusOr<lc::ContextPtr> ctx = lc::CreateContext(model, copts);
  if (!ctx.ok()) return ctx.status();
  *sized = BaseOptions(policy);
  if (absl::Status s = lc::SizeSchedulerForContext(ctx->get(), 0, *sized); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(*sized);
  if (!scheduler.ok()) return scheduler.status();
  absl::StatusOr<std::unique_ptr<lc::LlamaStepExecutor>> executor =
      lc::LlamaStepExecutor::Create(ctx->get());
  if (!executor.ok()) return executor.status();
  WallClock clock;
  return Drive(**scheduler, **executor, clock, list, nullptr, {});
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

absl::Status WriteFile(const std::string& name, const std::string& text) {
  const std::string dir = absl::GetFlag(FLAGS_out_dir);
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
  std::string csv = "index,user,class,arrival_s,prompt,output,real_ttft_s,sim_ttft_s,real_e2e_s,sim_e2e_s\n";
  for (size_t i = 0; i < list.size(); ++i) {
    absl::StrAppend(&csv, absl::StrFormat("%d,%s,%s,%.6f,%d,%d,%.6f,%.6f,%.6f,%.6f\n", i,
                                          list[i].user, list[i].work_class, list[i].arrival_s,
                                          list[i].prompt_tokens, real.output_tokens[i],
                                          by_real[i]->ttft, by_sim[i]->ttft, by_real[i]->e2e,
                                          by_sim[i]->e2e));
  }
  return csv;
}

// Per-step error: every real step's plan priced by the profile.
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

struct PolicyOutcome {
  std::string policy;
  double real_voice_p90 = 0, sim_voice_p90 = 0;
  bool passes = false;
};

absl::StatusOr<PolicyOutcome> ReplayPolicy(llama_model* model, const StepCostModel& cost,
                                           const std::string& policy,
                                           const std::vector<ReplayRequest>& list) {
  SchedulerOptions options;
  absl::StatusOr<RunRecord> real = RunReal(model, policy, list, &options);
  if (!real.ok()) return real.status();
  absl::StatusOr<RunRecord> sim = RunSimulated(options, cost, list, real->output_tokens);
  if (!sim.ok()) return sim.status();
  absl::StatusOr<ReplayComparison> cmp = CompareRequests(real->requests, sim->requests);
  if (!cmp.ok()) return cmp.status();
  std::string steps_csv;
  const ErrorSummary step = StepErrors(*real, cost, &steps_csv);
  PolicyOutcome out{policy, ClassTtftQuantile(real->requests, "voice", 0.9),
                    ClassTtftQuantile(sim->requests, "voice", 0.9)};
  out.passes = cmp->ttft.median <= 0.15 && cmp->e2e.median <= 0.15 && cmp->ttft.p90 <= 0.25 &&
               cmp->e2e.p90 <= 0.25;
  std::printf("\npolicy %s: %zu requests; real %.2f s in %zu steps (%llu preemptions), "
              "simulated %.2f s in %zu steps (%llu preemptions)\n",
              policy.c_str(), cmp->requests, real->seconds, real->steps.size(),
              static_cast<unsigned long long>(real->preemptions), sim->seconds, sim->steps.size(),
              static_cast<unsigned long long>(sim->preemptions));
  std::printf("  %-26s %8s %8s %8s %8s\n", "relative error", "median", "p90", "mean", "max");
  auto row = [](const char* what, const ErrorSummary& e) {
    std::printf("  %-26s %7.1f%% %7.1f%% %7.1f%% %7.1f%%\n", what, 100 * e.median, 100 * e.p90,
                100 * e.mean, 100 * e.max);
  };
  row("step time (real plans)", step);
  row("request TTFT", cmp->ttft);
  row("request end-to-end", cmp->e2e);
  std::printf("  voice p90 TTFT: real %.3f s, simulated %.3f s; TTFT/E2E acceptance "
              "(median <= 15%%, p90 <= 25%%): %s\n",
              out.real_voice_p90, out.sim_voice_p90, out.passes ? "met" : "NOT met");
  if (absl::Status s = WriteFile(absl::StrCat("steps_", policy, ".csv"), steps_csv); !s.ok()) return s;
  if (absl::Status s = WriteFile(absl::StrCat("requests_", policy, ".csv"), RequestsCsv(list, *real, *sim));
      !s.ok()) {
    return s;
  }
  if (absl::StatusOr<std::string> jsonl = FormatRequestJsonl(list, real->output_tokens); jsonl.ok()) {
    if (absl::Status s = WriteFile("requests.jsonl", *jsonl); !s.ok()) return s;
  }
  return out;
}

void PrintOrdering(const std::vector<PolicyOutcome>& outcomes) {
  for (size_t a = 0; a < outcomes.size(); ++a) {
    for (size_t b = a + 1; b < outcomes.size(); ++b) {
      // Within 5% counts as a tie: closer than the run-to-run noise measured here.
      const Order real = OrderOf(outcomes[a].real_voice_p90, outcomes[b].real_voice_p90, 0.05);
      const Order sim = OrderOf(outcomes[a].sim_voice_p90, outcomes[b].sim_voice_p90, 0.05);
      std::printf("\nvoice p90 TTFT, %s vs %s: real %s, simulated %s -> %s\n",
                  outcomes[a].policy.c_str(), outcomes[b].policy.c_str(), OrderName(real),
                  OrderName(sim), real == sim ? "same order" : "DIFFERENT order");
    }
  }
}

absl::Status Run() {
  if (absl::GetFlag(FLAGS_profile).empty()) return absl::InvalidArgumentError("--profile is required");
  absl::StatusOr<std::unique_ptr<FittedCostModel>> cost =
      FittedCostModel::LoadProfile(absl::GetFlag(FLAGS_profile));
  if (!cost.ok()) return cost.status();
  ReplayWorkloadOptions wo;
  wo.horizon_s = absl::GetFlag(FLAGS_horizon_s);
  wo.load = absl::GetFlag(FLAGS_load);
  wo.seed = absl::GetFlag(FLAGS_seed);
  absl::StatusOr<std::vector<ReplayRequest>> list = MakeReplayWorkload(wo);
  if (!list.ok()) return list.status();
  const std::string name = absl::GetFlag(FLAGS_model);
  std::string path = absl::GetFlag(FLAGS_model_path);
  if (path.empty()) path = absl::StrCat("/tmp/hearth_fidelity_", name, ".gguf");
  if (absl::Status s = WriteNamedModel(name, path); !s.ok()) return s;
  lc::SetLlamaLogging(false);
  if (absl::Status s = lc::LoadLlamaBackends(""); !s.ok()) return s;
  absl::StatusOr<lc::ModelPtr> model = lc::LoadModel(path);
  if (!model.ok()) return model.status();
  std::printf("model %s; profile %s (%s); %zu requests over %.1f s\n", name.c_str(),
              absl::GetFlag(FLAGS_profile).c_str(), (*cost)->Describe().c_str(), list->size(),
              wo.horizon_s);
  std::vector<PolicyOutcome> outcomes;
  for (absl::string_view policy : absl::StrSplit(absl::GetFlag(FLAGS_policies), ',')) {
    if (absl::StatusOr<PolicyFactory> f = MakePolicyFactory(std::string(policy), PolicyConfig{}); !f.ok()) {
      return f.status();
    }
    absl::StatusOr<PolicyOutcome> o = ReplayPolicy(model->get(), **cost, std::string(policy), *list);
    if (!o.ok()) return o.status();
    outcomes.push_back(*o);
    std::fflush(stdout);
  }
  PrintOrdering(outcomes);
  return absl::OkStatus();
}

}  // namespace
}  // namespace hearth::fidelity

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status status = hearth::fidelity::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "hearth_fidelity_replay: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
