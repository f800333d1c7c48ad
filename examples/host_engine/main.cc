// A minimal host engine, the first thing a host author reads.
//
// Four household members submit requests from their own threads while the
// engine thread drives Hearth one iteration at a time (hearth::EngineLoop):
// Plan -> run the plan on
// a pretend GPU -> Complete. The pretend GPU costs time like a real one (a
// fixed launch cost, plus per prefill token, plus per decoded sequence) and
// stops each request at a length the scheduler does not know in advance. Time
// is simulated, so the run is fast and prints the same table every time.
//
//   build/examples/host_engine/hearth_host_engine [--policy=NAME] [--summary]

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <utility>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "hearth/hearth.h"

ABSL_FLAG(std::string, policy, "",
          "Run only this policy (default: fifo, then household).");
ABSL_FLAG(bool, summary, false, "Print only the per-class summary table.");

namespace {

using hearth::RequestId;

// What a member asks for; the true output length is hidden from Hearth.
struct Ask {
  std::string user;
  std::string work_class;
  int32_t prompt_tokens;
  int32_t true_output_tokens;
  absl::Duration at;  // Arrival offset from the start.
};

std::vector<Ask> HouseholdEvening() {
  std::vector<Ask> asks;
  std::mt19937 rng(2026);
  auto jitter = [&](int ms) { return absl::Milliseconds(std::uniform_int_distribution<int>(0, ms)(rng)); };
  // Dad summarises a 30-page PDF at t=0 (a long prefill).
  asks.push_back({"dad", "chat", 24000, 400, absl::ZeroDuration()});
  // Mum's agent fires a burst of tool calls.
  for (int i = 0; i < 12; ++i) asks.push_back({"mum", "agent", 1800, 60, absl::Milliseconds(200) + jitter(300)});
  // The kids chat and use voice commands throughout.
  for (int i = 0; i < 6; ++i) asks.push_back({"kid1", "chat", 300, 150, absl::Milliseconds(400 * i) + jitter(100)});
  for (int i = 0; i < 5; ++i) asks.push_back({"kid2", "voice", 40, 12, absl::Milliseconds(500 * i + 250) + jitter(100)});
  // Distinct arrival times (a microsecond apart at most) keep the order of
  // simultaneous arrivals from depending on which thread submits first.
  for (size_t i = 0; i < asks.size(); ++i) asks[i].at += absl::Microseconds(static_cast<int64_t>(i));
  return asks;
}

// The pretend GPU: costs per step and hidden stop lengths.
class PretendGpu : public hearth::StepExecutor {
 public:
  void Expect(RequestId id, int32_t output_tokens) {
    absl::MutexLock lock(&mu_);
    target_[id] = output_tokens;
  }
  absl::Duration last_step_time() const { return last_; }

  absl::Status Execute(const hearth::StepPlan& plan, hearth::StepOutcome* outcome) override {
    absl::MutexLock lock(&mu_);
    int64_t prefill = 0, decode = 0;
    hearth::StartStepOutcome(plan, outcome);
    for (const hearth::ScheduledSequence& s : plan.sequences) {
      hearth::SequenceOutcome& o = outcome->sequences.emplace_back();
      o.id = s.id;
      if (s.decode) ++decode; else prefill += s.num_tokens;
      if (!s.sample) continue;
      const bool stops = ++produced_[s.id] >= target_[s.id];
      hearth::RecordSampledToken(/*token=*/42, stops, o);
    }
    // Roughly an 8B model on a home GPU: 8 ms per step, 0.12 ms per prefill
    // token, 0.05 ms per decoding sequence.
    last_ = absl::Milliseconds(8) + absl::Microseconds(120) * prefill + absl::Microseconds(50) * decode;
    outcome->completed_at = plan.now + last_;
    return absl::OkStatus();
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<RequestId, int32_t> target_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<RequestId, int32_t> produced_ ABSL_GUARDED_BY(mu_);
  absl::Duration last_;
};

std::string Ms(absl::Duration d) { return absl::StrFormat("%8.0f", absl::ToDoubleMilliseconds(d)); }

// The members' threads and the engine share a simulated clock. Before each
// step the engine waits until every member has submitted all requests due by
// then, so the run is deterministic even though submissions come from other
// threads.
class SharedClock {
 public:
  explicit SharedClock(absl::Time start, int members) : now_(start), next_(members, start) {}

  // Member side: blocks until the clock reaches `t`.
  void WaitUntil(absl::Time t) {
    struct Arg {
      const SharedClock* clock;
      absl::Time t;
    } arg{this, t};
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](Arg* a) ABSL_NO_THREAD_SAFETY_ANALYSIS { return a->clock->now_ >= a->t; }, &arg));
  }
  // Member side: the member's next submission is due at `t` (InfiniteFuture
  // when it has no more).
  void SetNext(int member, absl::Time t) {
    absl::MutexLock lock(&mu_);
    next_[static_cast<size_t>(member)] = t;
  }
  // Engine side: waits until nobody has a submission due by now.
  void WaitForDueSubmissions() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &SharedClock::NothingDue));
  }
  void Advance(absl::Time t) {
    absl::MutexLock lock(&mu_);
    now_ = t;
  }

 private:
  bool NothingDue() const {
    for (absl::Time t : next_) {
      if (t <= now_) return false;
    }
    return true;
  }

  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Time> next_ ABSL_GUARDED_BY(mu_);
};

struct Row {
  Ask ask;
  hearth::RequestResult result;
};

absl::StatusOr<std::vector<Row>> RunEvening(const std::string& policy_name) {
  hearth::SchedulerOptions options;
  options.users = {{"dad", 1.0}, {"mum", 1.0}, {"kid1", 1.0}, {"kid2", 1.0}};
  options.work_classes = {{"voice", 3}, {"chat", 2}, {"agent", 1}};
  options.models[0] = {.name = "llama-3.1-8b", .context_length = 32768};
  options.kv.block_size = 16;
  options.kv.num_device_blocks = 4096;  // 65,536 tokens of KV.
  options.max_batched_tokens = 2048;
  options.max_running = 64;
  options.max_prefill_chunk_tokens = 512;
  absl::StatusOr<hearth::PolicyFactory> policy =
      hearth::MakePolicyFactory(policy_name, hearth::PolicyConfig{});
  if (!policy.ok()) return policy.status();
  options.policy_factory = *policy;
  absl::StatusOr<std::unique_ptr<hearth::Scheduler>> created = hearth::Scheduler::Create(options);
  if (!created.ok()) return created.status();
  hearth::Scheduler& scheduler = **created;
  PretendGpu gpu;

  const absl::Time start = absl::UnixEpoch();
  const std::vector<Ask> asks = HouseholdEvening();
  const std::vector<std::string> members = {"dad", "mum", "kid1", "kid2"};
  SharedClock clock(start, static_cast<int>(members.size()));
  absl::Mutex mu;
  std::map<uint64_t, Ask> by_id;
  size_t accepted = 0;

  std::vector<std::thread> threads;
  for (int m = 0; m < static_cast<int>(members.size()); ++m) {
    threads.emplace_back([&, m] {
      std::vector<Ask> mine;
      for (const Ask& a : asks) if (a.user == members[static_cast<size_t>(m)]) mine.push_back(a);
      std::sort(mine.begin(), mine.end(), [](const Ask& a, const Ask& b) { return a.at < b.at; });
      for (size_t i = 0; i < mine.size(); ++i) {
        clock.SetNext(m, start + mine[i].at);
        clock.WaitUntil(start + mine[i].at);
        hearth::RequestSpec spec;
        spec.user = *scheduler.FindUser(mine[i].user);
        spec.work_class = *scheduler.FindWorkClass(mine[i].work_class);
        spec.prompt_tokens = mine[i].prompt_tokens;
        spec.max_new_tokens = 1024;
        spec.arrival_time = start + mine[i].at;
        absl::StatusOr<RequestId> id = scheduler.Submit(spec);
        if (id.ok()) {
          gpu.Expect(*id, mine[i].true_output_tokens);
          absl::MutexLock lock(&mu);
          by_id[id->value()] = mine[i];
          ++accepted;
        } else {
          std::fprintf(stderr, "rejected: %s\n", id.status().ToString().c_str());
        }
      }
      clock.SetNext(m, absl::InfiniteFuture());
    });
  }

  std::vector<hearth::RequestResult> results;
  hearth::EngineLoop loop(scheduler, gpu);
  absl::Time now = start;
  for (int steps = 0; steps < 100000; ++steps) {
    clock.WaitForDueSubmissions();
    {
      absl::MutexLock lock(&mu);
      if (results.size() == asks.size() && accepted == asks.size()) break;
    }
    absl::Status s = loop.Step(now);
    if (!s.ok()) return s;
    scheduler.DrainResults(&results);
    // Idle engines poll every millisecond; busy ones advance by the step.
    now += std::max(gpu.last_step_time(), absl::Milliseconds(1));
    clock.Advance(now);
  }
  for (std::thread& t : threads) t.join();
  std::vector<Row> rows;
  for (hearth::RequestResult& r : results) rows.push_back({by_id[r.id.value()], std::move(r)});
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.result.arrival_time < b.result.arrival_time ||
           (a.result.arrival_time == b.result.arrival_time && a.result.id < b.result.id);
  });
  return rows;
}

double P(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

void PrintRows(const std::string& policy, const std::vector<Row>& rows) {
  std::printf("\n--- policy %s: every request\n", policy.c_str());
  std::printf("%6s %-5s %-6s %7s %6s %9s %9s %9s  %s\n", "arr ms", "user", "class", "prompt",
              "output", "wait ms", "ttft ms", "e2e ms", "end");
  for (const Row& row : rows) {
    const hearth::RequestResult& r = row.result;
    std::string end(hearth::PhaseName(r.phase));
    if (r.phase == hearth::RequestPhase::kFinished) {
      end += " (" + std::string(hearth::FinishReasonName(r.finish_reason)) + ")";
    }
    std::printf("%6.0f %-5s %-6s %7d %6d %9s %9s %9s  %s\n",
                absl::ToDoubleMilliseconds(r.arrival_time - absl::UnixEpoch()), row.ask.user.c_str(),
                row.ask.work_class.c_str(), r.prompt_tokens, r.output_tokens,
                Ms(r.first_admit_time - r.arrival_time).c_str(),
                Ms(r.first_token_time - r.arrival_time).c_str(),
                Ms(r.end_time - r.arrival_time).c_str(), end.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Runs a household evening through Hearth on a pretend GPU.\n"
      "  hearth_host_engine [--policy=NAME] [--summary]");
  if (absl::ParseCommandLine(argc, argv).size() > 1) {
    std::fprintf(stderr, "usage: %s [--policy=NAME] [--summary]\n", argv[0]);
    return 2;
  }
  std::vector<std::string> policies = {"fifo", "household"};
  if (!absl::GetFlag(FLAGS_policy).empty()) policies = {absl::GetFlag(FLAGS_policy)};
  const bool verbose = !absl::GetFlag(FLAGS_summary);
  std::printf("Hearth host-engine demo: four household members submit from their own threads;\n"
              "a pretend GPU (8 ms/step + 0.12 ms/prefill token + 0.05 ms/decode) runs the plans.\n");
  std::map<std::string, std::vector<Row>> runs;
  for (const std::string& p : policies) {
    absl::StatusOr<std::vector<Row>> rows = RunEvening(p);
    if (!rows.ok()) {
      std::fprintf(stderr, "%s\n", rows.status().ToString().c_str());
      return 1;
    }
    if (verbose || policies.size() == 1) PrintRows(p, *rows);
    runs[p] = std::move(*rows);
  }
  std::printf("\n%-10s %-6s %5s %14s %14s %14s\n", "policy", "class", "n", "wait p50/max",
              "ttft p50/max", "e2e p50/max");
  for (const std::string& p : policies) {
    for (const std::string& cls : {"voice", "chat", "agent"}) {
      std::vector<double> wait, ttft, e2e;
      for (const Row& row : runs[p]) {
        if (row.ask.work_class != cls) continue;
        const hearth::RequestResult& r = row.result;
        wait.push_back(absl::ToDoubleMilliseconds(r.first_admit_time - r.arrival_time));
        ttft.push_back(absl::ToDoubleMilliseconds(r.first_token_time - r.arrival_time));
        e2e.push_back(absl::ToDoubleMilliseconds(r.end_time - r.arrival_time));
      }
      std::printf("%-10s %-6s %5zu %6.0f/%-7.0f %6.0f/%-7.0f %6.0f/%-7.0f\n", p.c_str(), cls.c_str(),
                  wait.size(), P(wait, 0.5), P(wait, 1.0), P(ttft, 0.5), P(ttft, 1.0), P(e2e, 0.5),
                  P(e2e, 1.0));
    }
  }
  std::printf("\n(times in simulated ms; --summary hides the per-request tables; --policy=NAME runs one of: ");
  const auto names = hearth::KnownPolicyNames();
  for (size_t i = 0; i < names.size(); ++i) std::printf("%s%s", i ? ", " : "", std::string(names[i]).c_str());
  std::printf(")\n");
  return 0;
}
