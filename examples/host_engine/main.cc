// A minimal host engine, the first thing a host author reads.
//
// Four household members submit requests from their own threads while the
// engine thread drives Hearth one iteration at a time: Plan -> run the plan on
// a pretend GPU -> Complete. The pretend GPU costs time like a real one (a
// fixed launch cost, plus per prefill token, plus per decoded sequence) and
// stops each request at a length the scheduler does not know in advance. Time
// is simulated, so the run is fast and prints the same table every time.
//
//   build/examples/host_engine/hearth_host_engine [--policy=fifo]

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "hearth/hearth.h"

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
    outcome->sequences.clear();
    for (const hearth::ScheduledSequence& s : plan.sequences) {
      hearth::SequenceOutcome& o = outcome->sequences.emplace_back();
      o.id = s.id;
      if (s.num_tokens == 1 && s.sample && produced_[s.id] > 0) ++decode; else prefill += s.num_tokens;
      if (!s.sample) continue;
      o.produced_token = true;
      o.token = 42;
      if (++produced_[s.id] >= target_[s.id]) o.finish = hearth::FinishReason::kStopToken;
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

}  // namespace

int main(int argc, char** argv) {
  hearth::SchedulerOptions options;
  options.users = {{"dad", 1.0}, {"mum", 1.0}, {"kid1", 1.0}, {"kid2", 1.0}};
  options.work_classes = {{"voice", 3}, {"chat", 2}, {"agent", 1}};
  options.models[0] = {.name = "llama-3.1-8b", .context_length = 32768};
  options.kv.block_size = 16;
  options.kv.num_device_blocks = 4096;  // 65,536 tokens of KV.
  options.max_batched_tokens = 2048;
  options.max_running = 64;
  options.max_prefill_chunk_tokens = 512;
  auto scheduler_or = hearth::Scheduler::Create(options);
  if (!scheduler_or.ok()) {
    std::fprintf(stderr, "%s\n", scheduler_or.status().ToString().c_str());
    return 1;
  }
  hearth::Scheduler& scheduler = **scheduler_or;
  PretendGpu gpu;

  // Each member submits from their own thread, stamping the simulated arrival
  // time; the engine loop below sees each request once the clock passes it.
  const absl::Time start = absl::UnixEpoch();
  const std::vector<Ask> asks = HouseholdEvening();
  absl::Mutex mu;
  std::map<uint64_t, Ask> by_id;
  std::vector<std::thread> members;
  for (const std::string& who : {"dad", "mum", "kid1", "kid2"}) {
    members.emplace_back([&, who] {
      for (const Ask& a : asks) {
        if (a.user != who) continue;
        hearth::RequestSpec spec;
        spec.user = *scheduler.FindUser(a.user);
        spec.work_class = *scheduler.FindWorkClass(a.work_class);
        spec.prompt_tokens = a.prompt_tokens;
        spec.max_new_tokens = 1024;
        spec.arrival_time = start + a.at;
        absl::StatusOr<RequestId> id = scheduler.Submit(spec);
        if (!id.ok()) {
          std::fprintf(stderr, "rejected: %s\n", id.status().ToString().c_str());
          continue;
        }
        gpu.Expect(*id, a.true_output_tokens);
        absl::MutexLock lock(&mu);
        by_id[id->value()] = a;
      }
    });
  }
  for (std::thread& t : members) t.join();
  // (Submitting everything up front with future arrival times keeps the demo
  // deterministic; a live host submits as requests arrive.)

  std::vector<hearth::RequestResult> results;
  absl::Time now = start;
  int steps = 0;
  while (results.size() < by_id.size() && steps < 100000) {
    absl::Status s = hearth::RunIteration(scheduler, gpu, now);
    if (!s.ok()) {
      std::fprintf(stderr, "step failed: %s\n", s.ToString().c_str());
      return 1;
    }
    now += std::max(gpu.last_step_time(), absl::Milliseconds(1));
    scheduler.DrainResults(&results);
    ++steps;
  }

  std::sort(results.begin(), results.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  std::printf("Hearth host-engine demo: policy %s, %d steps, %.2f s simulated\n\n",
              std::string(scheduler.policy_name()).c_str(), steps,
              absl::ToDoubleSeconds(now - start));
  std::printf("%4s %-5s %-6s %7s %6s %9s %9s %9s  %s\n", "id", "user", "class", "prompt",
              "output", "wait ms", "ttft ms", "e2e ms", "finish");
  for (const hearth::RequestResult& r : results) {
    const Ask& a = by_id[r.id.value()];
    std::printf("%4s %-5s %-6s %7d %6d %9s %9s %9s  %s%s\n", r.id.ToString().c_str(),
                a.user.c_str(), a.work_class.c_str(), r.prompt_tokens, r.output_tokens,
                Ms(r.first_admit_time - r.arrival_time).c_str(),
                Ms(r.first_token_time - r.arrival_time).c_str(),
                Ms(r.end_time - r.arrival_time).c_str(),
                std::string(hearth::PhaseName(r.phase)).c_str(),
                r.phase == hearth::RequestPhase::kFinished
                    ? (" (" + std::string(hearth::FinishReasonName(r.finish_reason)) + ")").c_str()
                    : "");
  }
  return 0;
}
