// hearth_llama_household: a household sharing one llama.cpp engine.
//
// Four members submit from their own threads, each with its own kind of
// request: mom asks short voice questions, dad chats, the kid's agent floods
// the engine with long tasks all at once, grandma has a long letter
// summarised. The same submissions run under each policy named in --policies
// ("fifo", and the "household" tree: priority between work classes, VTC
// between members, FIFO within a member) against real llama.cpp forward
// passes, and the program prints per member: queue wait, time to first token
// and tokens served.
//
//   hearth_llama_household                       # tiny random model
//   hearth_llama_household --model=/path/to/real.gguf --n_ctx=4096

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "hearth/common/clock.h"
#include "hearth/policy/policy_registry.h"
#include "hearth_llama_cpp/llama_engine.h"
#include "hearth_llama_cpp/llama_runtime.h"
#include "hearth_llama_cpp/text.h"
#include "hearth_llama_cpp/tiny_gguf.h"

ABSL_FLAG(std::string, model, "", "GGUF model; empty writes and uses the tiny random model");
ABSL_FLAG(std::string, tiny_path, "/tmp/hearth_tiny_llama.gguf", "where the tiny model is written");
ABSL_FLAG(std::string, policies, "fifo,household", "comma-separated policy names to compare");
ABSL_FLAG(int32_t, n_ctx, 2048, "llama.cpp KV cells (the one shared pool)");
ABSL_FLAG(int32_t, n_batch, 128, "llama.cpp n_batch = Hearth's token budget per step");
ABSL_FLAG(int32_t, n_seq_max, 8, "llama.cpp sequences = Hearth's max running requests");
ABSL_FLAG(bool, overlap_planning, false,
          "plan the next step while llama_decode runs the current one on a worker thread");
ABSL_FLAG(int32_t, threads, 1,
          "llama.cpp CPU threads (0: its default; more than the free cores makes its "
          "thread barriers spin, 1000x slower on a loaded 2-core machine)");
ABSL_FLAG(std::string, backend_dir, "", "folder of ggml backend modules (default: found by CMake)");

namespace {

namespace lc = hearth::llama_cpp;

struct Member {
  std::string name;
  std::string work_class;
  std::string phrase;      // repeated to the prompt length
  int prompt_bytes = 0;
  int max_new_tokens = 0;
  int requests = 0;
  absl::Duration every;    // gap between submissions; zero: all at once
  absl::Duration start;    // first submission after the run starts
};

std::vector<Member> Household() {
  return {
      {"mom", "voice", "Timer for the pasta? ", 24, 8, 8, absl::Milliseconds(60), absl::Milliseconds(20)},
      {"dad", "chat", "What should we cook tonight with leeks and rice? ", 80, 24, 6,
       absl::Milliseconds(90), absl::Milliseconds(10)},
      {"kid", "agent", "Plan the science fair volcano, list materials and steps. ", 160, 48, 20,
       absl::ZeroDuration(), absl::ZeroDuration()},
      {"grandma", "chat", "Dear family, the garden is full of tomatoes this year. ", 400, 32, 2,
       absl::Milliseconds(150), absl::Milliseconds(30)},
  };
}

hearth::SchedulerOptions HouseholdOptions() {
  hearth::SchedulerOptions o;
  o.users.clear();
  for (const Member& m : Household()) o.users.push_back({m.name, 1.0});
  o.work_classes = {{"voice", 2}, {"chat", 1}, {"agent", 0}};
  return o;
}

std::string Repeat(const std::string& phrase, int bytes) {
  std::string text;
  while (static_cast<int>(text.size()) < bytes) text += phrase;
  text.resize(static_cast<size_t>(bytes));
  return text;
}

struct MemberStats {
  int requests = 0;
  int finished = 0;
  double wait_ms = 0;
  double ttft_ms = 0;
  double ttft_max_ms = 0;
  long tokens = 0;
};

absl::Status RunPolicy(const std::string& policy, llama_model* model) {
  lc::ContextOptions copts;
  copts.n_ctx = absl::GetFlag(FLAGS_n_ctx);
  copts.n_batch = absl::GetFlag(FLAGS_n_batch);
  copts.n_seq_max = absl::GetFlag(FLAGS_n_seq_max);
  copts.n_threads = absl::GetFlag(FLAGS_threads);
  absl::StatusOr<lc::ContextPtr> ctx = lc::CreateContext(model, copts);
  if (!ctx.ok()) return ctx.status();
  lc::LlamaEngineOptions options;
  options.scheduler = HouseholdOptions();
  hearth::PolicyConfig config;
  absl::StatusOr<hearth::PolicyFactory> factory = hearth::MakePolicyFactory(policy, config);
  if (!factory.ok()) return factory.status();
  options.scheduler.policy_factory = *factory;
  options.scheduler.overlap_planning = absl::GetFlag(FLAGS_overlap_planning);
  absl::StatusOr<std::unique_ptr<lc::LlamaEngine>> engine = lc::LlamaEngine::Create(ctx->get(), options);
  if (!engine.ok()) return engine.status();

  const std::vector<Member> members = Household();
  std::vector<std::vector<hearth::RequestId>> ids(members.size());
  std::vector<absl::Status> errors(members.size());
  const absl::Time t0 = absl::Now();
  std::vector<std::thread> threads;
  for (size_t m = 0; m < members.size(); ++m) {
    threads.emplace_back([&, m] {
      const Member& me = members[m];
      absl::StatusOr<std::vector<int32_t>> prompt = lc::Tokenize(model, Repeat(me.phrase, me.prompt_bytes));
      if (!prompt.ok()) {
        errors[m] = prompt.status();
        return;
      }
      absl::SleepFor(me.start);
      for (int k = 0; k < me.requests; ++k) {
        hearth::RequestSpec spec;
        spec.user = *(*engine)->scheduler().FindUser(me.name);
        spec.work_class = *(*engine)->scheduler().FindWorkClass(me.work_class);
        spec.prompt_token_ids = *prompt;
        spec.prompt_token_ids.back() = 'a' + k % 26;  // distinct prompts
        spec.max_new_tokens = me.max_new_tokens;
        spec.arrival_time = absl::Now();
        absl::StatusOr<hearth::RequestId> id = (*engine)->Submit(spec);
        if (!id.ok()) {
          errors[m] = id.status();
          return;
        }
        ids[m].push_back(*id);
        absl::SleepFor(me.every);
      }
    });
  }
  int expected = 0;
  for (const Member& m : members) expected += m.requests;
  hearth::RealClock clock;
  std::vector<lc::Completion> done;
  while (static_cast<int>(done.size()) < expected) {
    absl::StatusOr<bool> ran = (*engine)->Step(clock);
    if (!ran.ok()) return ran.status();
    for (lc::Completion& c : (*engine)->TakeCompletions()) done.push_back(std::move(c));
    bool failed = false;
    for (const absl::Status& e : errors) failed = failed || !e.ok();
    if (failed) break;
    // Idle: sleep until a member submits (bounded, to notice their errors).
    if (!*ran) (*engine)->WaitForWork(clock, absl::Milliseconds(50));
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& e : errors) {
    if (!e.ok()) return e;
  }
  // The last step planned ahead may still be running.
  if (absl::Status s = (*engine)->Finish(clock); !s.ok()) return s;
  const double seconds = absl::ToDoubleSeconds(absl::Now() - t0);

  std::vector<MemberStats> stats(members.size());
  long total_tokens = 0;
  for (const lc::Completion& c : done) {
    MemberStats& s = stats[c.result.user.value()];
    ++s.requests;
    s.finished += c.result.phase == hearth::RequestPhase::kFinished;
    const double wait = absl::ToDoubleMilliseconds(c.result.first_admit_time - c.result.arrival_time);
    const double ttft = absl::ToDoubleMilliseconds(c.result.first_token_time - c.result.arrival_time);
    s.wait_ms += wait;
    s.ttft_ms += ttft;
    s.ttft_max_ms = std::max(s.ttft_max_ms, ttft);
    s.tokens += static_cast<long>(c.output.size());
    total_tokens += static_cast<long>(c.output.size());
  }
  const lc::LlamaExecutorStats& ex = (*engine)->executor().stats();
  std::printf("\npolicy %-9s  %d requests, %ld tokens in %.2f s; %llu steps, %llu preemptions\n",
              policy.c_str(), expected, total_tokens, seconds,
              static_cast<unsigned long long>(ex.steps),
              static_cast<unsigned long long>((*engine)->scheduler().stats().preemptions));
  std::printf("  %-8s %-6s %9s %9s %13s %13s %12s %8s\n", "member", "class", "requests", "finished",
              "mean wait ms", "mean TTFT ms", "max TTFT ms", "tokens");
  for (size_t m = 0; m < members.size(); ++m) {
    const MemberStats& s = stats[m];
    const double n = std::max(1, s.requests);
    std::printf("  %-8s %-6s %9d %9d %13.1f %13.1f %12.1f %8ld\n", members[m].name.c_str(),
                members[m].work_class.c_str(), s.requests, s.finished, s.wait_ms / n, s.ttft_ms / n,
                s.ttft_max_ms, s.tokens);
  }
  return absl::OkStatus();
}

absl::Status Run() {
  lc::SetLlamaLogging(false);
  if (absl::Status s = lc::LoadLlamaBackends(absl::GetFlag(FLAGS_backend_dir)); !s.ok()) return s;
  std::string path = absl::GetFlag(FLAGS_model);
  if (path.empty()) {
    path = absl::GetFlag(FLAGS_tiny_path);
    if (absl::Status s = lc::WriteTinyLlamaGguf(lc::TinyModelSpec{}, path); !s.ok()) return s;
  }
  absl::StatusOr<lc::ModelPtr> model = lc::LoadModel(path);
  if (!model.ok()) return model.status();
  std::printf("model %s; n_ctx %d, n_batch %d, n_seq_max %d\n", path.c_str(),
              absl::GetFlag(FLAGS_n_ctx), absl::GetFlag(FLAGS_n_batch), absl::GetFlag(FLAGS_n_seq_max));
  for (absl::string_view policy : absl::StrSplit(absl::GetFlag(FLAGS_policies), ',')) {
    if (absl::Status s = RunPolicy(std::string(policy), model->get()); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status status = Run();
  if (!status.ok()) {
    std::fprintf(stderr, "hearth_llama_household: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
