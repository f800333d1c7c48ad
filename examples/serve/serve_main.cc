// hearth-serve: the household's OpenAI-compatible server. Hearth schedules,
// llama.cpp computes, cpp-httplib serves. See examples/serve/README.md.

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "hearth/jobs/job_pool.h"
#include "hearth/policy/policy_registry.h"
#include "hearth_llama_cpp/llama_runtime.h"
#include "hearth_llama_cpp/tiny_gguf.h"
#include "household_config.h"
#include "cors_policy.h"
#include "cors_routes.h"
#include "guarded_server.h"
#include "household_directory.h"
#include "http_routes.h"
#include "job_call.h"
#include "member_turns.h"
#include "model_facts.h"
#include "model_text.h"
#include "physical_cores.h"
#include "public_request_ids.h"
#include "request_gate.h"
#include "serve_context.h"
#include "serve_engine.h"
#include "serve_job_queues.h"

ABSL_FLAG(std::string, model, "", "GGUF model file; empty serves the tiny random test model");
ABSL_FLAG(std::string, model_name, "", "name clients use for the model (default: file stem, or \"tiny\")");
ABSL_FLAG(bool, tiny_no_eos, false, "tiny model only: never end early (fixed-length answers, for tests)");
ABSL_FLAG(std::string, tiny_shape, "",
          "tiny model only: LAYERSxWIDTH, e.g. 4x256 (8 heads, 4 KV heads, feed-forward 3 x "
          "WIDTH) for benchmarks of a model that does some work; empty: 2 layers of width 64");
ABSL_FLAG(std::string, household, "",
          "household TOML (members, keys, aliases, classes, [scheduler] options; "
          "examples/serve/README.md); empty: no keys, one member");
ABSL_FLAG(std::string, policy, "household", "scheduling policy: household, fifo, vtc, priority, mlfq");
ABSL_FLAG(std::string, host, "127.0.0.1", "address to listen on");
ABSL_FLAG(std::string, cors_origins, "",
          "web origins whose pages' scripts may call the server from a browser (CORS), "
          "comma-separated, e.g. https://chat.home.arpa,http://127.0.0.1:3000; empty: no CORS "
          "headers; \"*\" any origin, only without --household");
ABSL_FLAG(int32_t, port, 8080, "port to listen on; 0 picks a free one (printed)");
ABSL_FLAG(std::string, kv_layout, "streams",
          "llama.cpp's KV layout: streams (one stream of --n_ctx cells per sequence id; each "
          "token attends over its own sequence only) or unified (one pool of --n_ctx cells all "
          "sequences share; every token attends over every cell in use, slower, but one request "
          "may take the whole pool). KV memory: streams (--n_seq_max + --prefix_cache_sequences) "
          "x --n_ctx cells, unified --n_ctx cells; the start line prints it in MiB");
ABSL_FLAG(int32_t, n_ctx, 8192,
          "the longest request in tokens (prompt plus answer): with --kv_layout=streams each "
          "sequence id's stream (padded up to a multiple of 256), with unified the one pool");
ABSL_FLAG(int32_t, n_batch, 512, "llama.cpp n_batch: tokens per step (Hearth's token budget)");
ABSL_FLAG(int32_t, n_seq_max, 8, "sequences running at once; in [1, 256]");
ABSL_FLAG(int32_t, prefix_cache_sequences, 4,
          "llama.cpp sequence ids beyond n_seq_max that keep ended requests' KV for prefix-cache "
          "hits (scoped per member; n_seq_max plus this is at most 256); 0: no prefix caching. "
          "With --kv_layout=streams each takes a stream of --n_ctx cells (memory); with unified "
          "kept cells widen the range every token attends over (time)");
ABSL_FLAG(std::string, flash_attention, "auto",
          "llama.cpp flash attention: on (where the device supports it), off, or auto: off "
          "when no layer is offloaded (--gpu_layers=0; llama.cpp's CPU kernel measured 2-3x "
          "slower), else on");
ABSL_FLAG(int64_t, swap_space_mib, -1,
          "host RAM in MiB for swap preemption: a preempted request's KV is saved there and "
          "restored instead of recomputed (taken only while requests are swapped out); 0: "
          "preemption recomputes; -1: 1024 with --kv_layout=streams, 0 with unified (there "
          "llama.cpp found no room to restore swapped sequences beside the prefix cache's kept "
          "cells, failing their requests: bench/RESULTS.md); in [-1, 1048576]");
ABSL_FLAG(int32_t, threads, 0,
          "llama.cpp CPU threads; 0: one per physical core this process may run on (a core's "
          "second hardware thread only slows llama.cpp's matrix work)");
ABSL_FLAG(int32_t, gpu_layers, 0, "layers offloaded to a GPU (needs a GPU build of llama.cpp)");
// Valueless unless given: a flag given on the command line wins over the
// household file's [scheduler] field, which wins over the default.
ABSL_FLAG(std::optional<int32_t>, prefill_chunk, std::nullopt,
          "largest prefill chunk per sequence and step; smaller chunks let new voice and chat "
          "requests in beside long prompts (0: the whole n_batch). Default: the household "
          "file's [scheduler] max_prefill_chunk_tokens, else 128; given here, it wins over "
          "the file");
ABSL_FLAG(std::optional<int32_t>, block_size, std::nullopt,
          "tokens per Hearth KV block. Default: the household file's [scheduler] "
          "kv.block_size, else 16; given here, it wins over the file");
ABSL_FLAG(int32_t, default_max_tokens, 256, "max_tokens when a request names none");
ABSL_FLAG(int64_t, max_body_bytes, 1 << 20, "largest request body accepted (larger: 413)");
ABSL_FLAG(int32_t, http_threads, 256,
          "connections served at once (each holds an HTTP thread); at the cap a new connection "
          "sheds one that showed no valid key, else it is refused 503");
ABSL_FLAG(int32_t, max_connections_per_client, 64,
          "connections served at once from one client address (same rule at the cap)");
ABSL_FLAG(absl::Duration, header_timeout, absl::Seconds(10),
          "a request's head must arrive whole within this (408 after)");
ABSL_FLAG(absl::Duration, body_timeout, absl::Seconds(30),
          "a request's body must arrive whole within this after its head (408 after)");
ABSL_FLAG(absl::Duration, io_timeout, absl::Seconds(10),
          "longest wait for one socket read or write to make progress");
ABSL_FLAG(absl::Duration, drain_timeout, absl::Seconds(30), "after SIGTERM, how long in-flight requests may finish");
ABSL_FLAG(bool, verbose, false, "pass llama.cpp's logs through");
ABSL_FLAG(int32_t, job_threads, 0,
          "CPU cores lent to the job queues (templating, tokenisation, document parsing, model "
          "loads); 0: all the machine's");
ABSL_FLAG(int32_t, member_job_turns, 0,
          "calls of one member prepared at once (body parsed, chat templated, prompt "
          "tokenized), and apart from those, documents parsed and chunked; the member's other "
          "calls wait behind them. 0: half the job threads, at least 1");
ABSL_FLAG(std::string, interactive_classes, "voice,chat",
          "work classes whose waiting requests make the background job queues give cores back");
ABSL_FLAG(int32_t, demand_backlog, 8,
          "interactive requests waiting for their first token at which background job queues "
          "are cut to their floor (documents 1, library paused)");

namespace hearth::serve {
namespace {

struct LoadedModel {
  llama_cpp::ModelPtr model;
  std::string name;
  ModelFacts facts;
};

// --tiny_shape into the tiny model's spec; the head counts follow the
// layout benchmark's (examples/llama_cpp/kv_layout_main.cc), so that figures
// of the two compare.
absl::Status ApplyTinyShape(llama_cpp::TinyModelSpec& spec) {
  const std::string shape = absl::GetFlag(FLAGS_tiny_shape);
  if (shape.empty()) return absl::OkStatus();
  std::vector<std::string> parts = absl::StrSplit(shape, 'x');
  int32_t layers = 0, width = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &layers) ||
      !absl::SimpleAtoi(parts[1], &width) || layers < 1 || layers > 64 || width < 64 ||
      width > 4096 || width % 64 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tiny_shape is \"", shape, "\"; allowed: LAYERSxWIDTH, layers in [1, 64], width a "
        "multiple of 64 in [64, 4096] (e.g. 4x256)"));
  }
  spec.n_layer = layers;
  spec.n_embd = width;
  spec.n_head = width >= 256 ? 8 : 4;
  spec.n_head_kv = spec.n_head / 2;
  spec.n_ff = 3 * width;
  spec.n_ctx_train = std::max(spec.n_ctx_train, absl::GetFlag(FLAGS_n_ctx));
  return absl::OkStatus();
}

// Also reads the file's facts (model_facts.h) while it exists: the tiny
// model's is deleted once loaded.
absl::StatusOr<llama_cpp::ModelPtr> LoadServedModel(std::string* name, ModelFacts* facts) {
  std::string path = absl::GetFlag(FLAGS_model);
  std::string tiny;
  if (path.empty()) {
    llama_cpp::TinyModelSpec spec;
    spec.suppress_control_tokens = absl::GetFlag(FLAGS_tiny_no_eos);
    if (absl::Status s = ApplyTinyShape(spec); !s.ok()) return s;
    tiny = (std::filesystem::temp_directory_path() /
            absl::StrCat("hearth-serve-tiny-", getpid(), ".gguf")).string();
    if (absl::Status s = llama_cpp::WriteTinyLlamaGguf(spec, tiny); !s.ok()) return s;
    path = tiny;
  }
  absl::StatusOr<llama_cpp::ModelPtr> model =
      llama_cpp::LoadModel(path, absl::GetFlag(FLAGS_gpu_layers));
  *facts = FileFacts(path);
  if (model.ok()) *facts = ReadModelFacts(model->get(), *std::move(facts));
  if (!tiny.empty()) std::filesystem::remove(tiny);
  *name = absl::GetFlag(FLAGS_model_name);
  if (name->empty()) name->assign(tiny.empty() ? std::filesystem::path(path).stem().string() : "tiny");
  return model;
}

// Model files are read on the model_load queue: one load at a time, with
// the disk's I/O depth to itself (an I/O depth of one), so that a load does
// not starve a backup or a document scan of the disk, nor they it.
absl::StatusOr<LoadedModel> LoadServedModelOnQueue(JobPool& jobs) {
  JobSpec spec;
  spec.queue = kModelLoadQueue;
  spec.label = absl::StrCat("load ", absl::GetFlag(FLAGS_model).empty() ? "the tiny test model"
                                                                         : absl::GetFlag(FLAGS_model));
  return CallOnQueue<LoadedModel>(jobs, spec, [](const JobContext&) -> absl::StatusOr<LoadedModel> {
    LoadedModel out;
    absl::StatusOr<llama_cpp::ModelPtr> model = LoadServedModel(&out.name, &out.facts);
    if (!model.ok()) return model.status();
    out.model = *std::move(model);
    return out;
  });
}

int JobCores() {
  const int cores = absl::GetFlag(FLAGS_job_threads);
  return cores > 0 ? cores : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

absl::StatusOr<std::unique_ptr<JobPool>> CreateJobPool() {
  return JobPool::Create(ServeJobQueues(JobCores(), absl::GetFlag(FLAGS_demand_backlog)));
}

// --member_job_turns, or half the job cores: a member's flood then leaves
// the other half to everyone else.
int MemberJobTurns() {
  const int turns = absl::GetFlag(FLAGS_member_job_turns);
  return turns > 0 ? turns : std::max(1, JobCores() / 2);
}

// --interactive_classes as a flag per work class.
absl::StatusOr<std::vector<bool>> InteractiveClasses(const HouseholdConfig& household) {
  std::vector<bool> out(household.classes.size(), false);
  for (absl::string_view name :
       absl::StrSplit(absl::GetFlag(FLAGS_interactive_classes), ',', absl::SkipEmpty())) {
    size_t c = 0;
    while (c < household.classes.size() && household.classes[c].name != name) ++c;
    if (c == household.classes.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--interactive_classes names \"", name, "\", which is not a work class"));
    }
    out[c] = true;
  }
  return out;
}

// --swap_space_mib, its -1 resolved by layout: on streams a swapped-out
// sequence comes back into an empty stream; in the unified pool the restore
// needs free cells that kept prefix-cache sequences may still hold, and
// measured it failed there (the request with it).
int64_t SwapSpaceMib() {
  const int64_t mib = absl::GetFlag(FLAGS_swap_space_mib);
  if (mib >= 0) return mib;
  return absl::GetFlag(FLAGS_kv_layout) == "streams" ? 1024 : 0;
}

// A flag's value when given on the command line (said on stderr when it
// overrides the household file's field), else the file's when it set
// `field`, else `fallback`: a command line is the more specific ask.
int32_t FlagOverFile(const absl::Flag<std::optional<int32_t>>& flag, absl::string_view name,
                     const HouseholdConfig& household, absl::string_view field,
                     int32_t file_value, int32_t fallback) {
  const std::optional<int32_t> given = absl::GetFlag(flag);
  const bool in_file = absl::c_linear_search(household.scheduler_fields, field);
  if (given.has_value()) {
    if (in_file) {
      std::fprintf(stderr, "hearth-serve: --%s=%d overrides the household file's [scheduler] %s\n",
                   std::string(name).c_str(), *given, std::string(field).c_str());
    }
    return *given;
  }
  return in_file ? file_value : fallback;
}

absl::StatusOr<ServeEngineOptions> EngineOptions(const HouseholdConfig& household,
                                                 const std::string& model_name, JobPool* jobs) {
  ServeEngineOptions o;
  // The file's [scheduler] fields; the sizes SizeSchedulerForContext sets
  // from the context it refuses (household_config.h).
  o.scheduler = household.scheduler;
  o.scheduler.users = household.members;
  o.scheduler.work_classes = household.classes;
  o.scheduler.kv.block_size =
      FlagOverFile(FLAGS_block_size, "block_size", household, "kv.block_size",
                   household.scheduler.kv.block_size, 16);
  o.prefix_cache_sequences = absl::GetFlag(FLAGS_prefix_cache_sequences);
  o.swap_space_mib = SwapSpaceMib();
  // Block hashes members cannot predict, so no member can craft a prompt
  // whose blocks collide with another member's (KvCacheConfig::
  // prefix_hash_key).
  std::random_device entropy;
  o.scheduler.kv.prefix_hash_key = (uint64_t{entropy()} << 32) ^ entropy();
  o.scheduler.max_prefill_chunk_tokens = FlagOverFile(
      FLAGS_prefill_chunk, "prefill_chunk", household, "max_prefill_chunk_tokens",
      household.scheduler.max_prefill_chunk_tokens, 128);
  o.slos = household.slos;
  o.model_name = model_name;
  o.policy_name = absl::GetFlag(FLAGS_policy);
  absl::StatusOr<PolicyFactory> policy = MakePolicyFactory(o.policy_name, {});
  if (!policy.ok()) return policy.status();
  o.scheduler.policy_factory = *policy;
  absl::StatusOr<std::vector<bool>> interactive = InteractiveClasses(household);
  if (!interactive.ok()) return interactive.status();
  o.interactive_classes = *std::move(interactive);
  o.on_interactive_demand = [jobs](const InteractiveDemand& demand) {
    // The engine's own figures are valid by construction; a refusal would
    // only mean the pool is shutting down.
    jobs->SetInteractiveDemand(demand).IgnoreError();
  };
  return o;
}

// --kv_layout and --flash_attention as llama.cpp options.
absl::Status ParseKvFlags(llama_cpp::ContextOptions& c) {
  const std::string layout = absl::GetFlag(FLAGS_kv_layout);
  if (layout == "streams") {
    c.kv_layout = llama_cpp::KvLayout::kPerSequence;
  } else if (layout == "unified") {
    c.kv_layout = llama_cpp::KvLayout::kUnified;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--kv_layout is \"", layout, "\"; allowed: streams, unified"));
  }
  const std::string flash = absl::GetFlag(FLAGS_flash_attention);
  if (flash == "auto") {
    c.disable_flash_attention = absl::GetFlag(FLAGS_gpu_layers) == 0;
  } else if (flash == "on" || flash == "off") {
    c.disable_flash_attention = flash == "off";
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--flash_attention is \"", flash, "\"; allowed: auto, on, off"));
  }
  return absl::OkStatus();
}

// The llama.cpp context the flags ask for. On streams every sequence id,
// spare prefix-cache ids included, gets a stream that holds the longest
// request, so --n_ctx is multiplied out here.
absl::StatusOr<llama_cpp::ContextOptions> ContextOptionsFromFlags() {
  llama_cpp::ContextOptions c;
  if (absl::Status s = ParseKvFlags(c); !s.ok()) return s;
  const int32_t n_ctx = absl::GetFlag(FLAGS_n_ctx);
  const int32_t running = absl::GetFlag(FLAGS_n_seq_max);
  const int32_t spare = absl::GetFlag(FLAGS_prefix_cache_sequences);
  const auto bad = [](absl::string_view flag, int64_t value, absl::string_view allowed) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " is ", value, "; allowed: ", allowed));
  };
  if (n_ctx < 1 || n_ctx > (1 << 30)) return bad("--n_ctx", n_ctx, "[1, 2^30]");
  const int32_t n_batch = absl::GetFlag(FLAGS_n_batch);
  if (n_batch < 1) return bad("--n_batch", n_batch, ">= 1");
  if (running < 1 || running > 256) return bad("--n_seq_max", running, "[1, 256]");
  if (spare < 0) return bad("--prefix_cache_sequences", spare, "[0, 256 - n_seq_max] (0: none)");
  const int64_t swap = absl::GetFlag(FLAGS_swap_space_mib);
  if (swap < -1 || swap > (1 << 20)) {
    return bad("--swap_space_mib", swap, "[-1, 1048576] (0: no swap, -1: by layout)");
  }
  c.n_seq_max = running + spare;
  if (c.n_seq_max > 256) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--n_seq_max (", running, ") plus --prefix_cache_sequences (", spare, ") is ",
        c.n_seq_max, "; llama.cpp allows at most 256 sequence ids"));
  }
  const bool streams = c.kv_layout == llama_cpp::KvLayout::kPerSequence;
  const int64_t cells = streams ? int64_t{n_ctx} * c.n_seq_max : n_ctx;
  if (cells > (int64_t{1} << 30)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--n_ctx (", n_ctx, ") x ", c.n_seq_max, " sequence ids (--n_seq_max plus "
        "--prefix_cache_sequences) is ", cells, " KV cells with --kv_layout=streams; allowed: "
        "at most 2^30"));
  }
  c.n_ctx = static_cast<int32_t>(cells);
  c.n_batch = n_batch;
  // A negative count stays as given: CreateContext refuses it.
  c.n_threads = absl::GetFlag(FLAGS_threads) == 0 ? PhysicalCores() : absl::GetFlag(FLAGS_threads);
  return c;
}

// The start line's account of KV memory, so that the cost of --n_ctx and
// the sequence ids is seen where it is paid.
std::string KvLine(llama_context* ctx, const ServeEngine& engine) {
  const int64_t cells = llama_n_ctx(ctx);
  const int32_t streams = llama_cpp::KvStreams(ctx);
  const int64_t mib = cells * engine.kv_bytes_per_token() >> 20;
  std::string line =
      streams > 1
          ? absl::StrCat("KV ", streams, " streams of ", llama_n_ctx_seq(ctx), " cells (", mib, " MiB)")
          : absl::StrCat("KV one pool of ", cells, " cells (", mib, " MiB)");
  if (engine.host_blocks() > 0) {
    absl::StrAppend(&line, ", swap up to ", SwapSpaceMib(), " MiB");
  }
  return line;
}

ConnectionLimits ConnectionLimitsFromFlags() {
  ConnectionLimits l;
  l.max_connections = std::max(1, absl::GetFlag(FLAGS_http_threads));
  l.max_per_client = std::max(1, absl::GetFlag(FLAGS_max_connections_per_client));
  l.header_timeout = std::max(absl::Milliseconds(100), absl::GetFlag(FLAGS_header_timeout));
  l.body_timeout = std::max(absl::Milliseconds(100), absl::GetFlag(FLAGS_body_timeout));
  l.io_timeout = std::max(absl::Milliseconds(100), absl::GetFlag(FLAGS_io_timeout));
  return l;
}

// httplib (0.11) listens with a backlog of 5: a burst of clients connecting
// at once overflows it, and the kernel drops their SYNs (retried a second
// or more later) or resets them. The listening socket is captured when it
// is created and its backlog raised after bind.
void ConfigureHttp(httplib::Server& server, int* listen_fd) {
  server.set_socket_options([listen_fd](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    *listen_fd = sock;
  });
  // The accepted sockets' own timeouts; GuardedStream polls with
  // --io_timeout before each read and write.
  const auto io = absl::ToChronoSeconds(absl::GetFlag(FLAGS_io_timeout));
  server.set_read_timeout(io);
  server.set_write_timeout(io);
  server.set_tcp_nodelay(true);
}

// Waits for SIGTERM or SIGINT, then drains: no new requests, in-flight ones
// finish (or end as unavailable at the drain timeout), then the server stops.
void DrainOnSignal(sigset_t signals, ServeEngine* engine, GuardedServer* server) {
  int sig = 0;
  sigwait(&signals, &sig);
  std::cerr << "hearth-serve: signal " << sig << ", draining " << engine->live()
            << " requests" << std::endl;
  engine->CloseIntake();
  const absl::Time deadline = absl::Now() + absl::GetFlag(FLAGS_drain_timeout);
  while (engine->live() > 0 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(20));
  engine->Stop();
  // Lets the HTTP threads write the last events of what just ended.
  absl::SleepFor(absl::Milliseconds(300));
  server->stop();
  server->guard().ShedIdle();
}

// Buffers of a request body's size (up to --max_body_bytes) are mapped and
// unmapped rather than kept in malloc's arenas: glibc's default raises its
// mapping threshold after the first such free, and each of the HTTP threads'
// arenas then keeps a body's worth, so a burst of large bodies would leave
// RSS high long after the bodies are gone.
void ReturnLargeBuffersToTheSystem() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
#endif
}

int Main() {
  ReturnLargeBuffersToTheSystem();
  // Signals go to the drain thread only; every thread started below (the
  // job pool's first) inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  llama_cpp::SetLlamaLogging(absl::GetFlag(FLAGS_verbose));
  if (absl::Status s = llama_cpp::LoadLlamaBackends(""); !s.ok()) {
    std::cerr << "hearth-serve: " << s.message() << std::endl;
    return 1;
  }
  absl::StatusOr<std::unique_ptr<JobPool>> jobs = CreateJobPool();
  absl::StatusOr<LoadedModel> loaded =
      jobs.ok() ? LoadServedModelOnQueue(**jobs) : absl::StatusOr<LoadedModel>(jobs.status());
  if (!loaded.ok()) {
    std::cerr << "hearth-serve: " << loaded.status().message() << std::endl;
    return 1;
  }
  const std::string model_name = loaded->name;
  llama_model* model = loaded->model.get();
  absl::StatusOr<llama_cpp::ContextOptions> copts = ContextOptionsFromFlags();
  if (!copts.ok()) {
    std::cerr << "hearth-serve: " << copts.status().message() << std::endl;
    return 1;
  }
  absl::StatusOr<llama_cpp::ContextPtr> ctx = llama_cpp::CreateContext(model, *copts);
  absl::StatusOr<HouseholdConfig> household =
      absl::GetFlag(FLAGS_household).empty() ? OpenHousehold()
                                             : LoadHouseholdConfig(absl::GetFlag(FLAGS_household));
  absl::StatusOr<ServeEngineOptions> options =
      household.ok() ? EngineOptions(*household, model_name, jobs->get()) : household.status();
  ModelText text(model);
  absl::StatusOr<std::unique_ptr<ServeEngine>> engine =
      !ctx.ok() ? ctx.status()
      : options.ok() ? ServeEngine::Create(ctx->get(), &text, *options)
                     : options.status();
  if (!engine.ok()) {
    std::cerr << "hearth-serve: " << engine.status().message() << std::endl;
    return 1;
  }
  MemberTurns generation_turns(household->members.size(), MemberJobTurns());
  MemberTurns document_turns(household->members.size(), MemberJobTurns());
  HouseholdDirectory directory(*household, model_name);
  absl::StatusOr<CorsPolicy> cors =
      CorsPolicy::Parse(absl::GetFlag(FLAGS_cors_origins), directory.keys_required());
  if (!cors.ok()) {
    std::cerr << "hearth-serve: " << cors.status().message() << std::endl;
    return 1;
  }
  PublicRequestIds ids;
  GuardedServer server(ConnectionLimitsFromFlags(),
                       static_cast<size_t>(std::max<int64_t>(1, absl::GetFlag(FLAGS_max_body_bytes))));
  server.set_gate(KeyGate(directory, /*preflights=*/cors->enabled()));
  server.set_key_check(ValidKeyCheck(directory));
  ServeContext serve{engine->get(), jobs->get(), &text, &directory, &*household, &ids,
                     &server.guard()};
  serve.limits.default_max_tokens = absl::GetFlag(FLAGS_default_max_tokens);
  serve.generation_turns = &generation_turns;
  serve.document_turns = &document_turns;
  const ServeProps props{absl::GetFlag(FLAGS_model), model_name, text.chat_template(),
                         (*engine)->context_length(), absl::GetFlag(FLAGS_n_seq_max),
                         serve.limits.default_max_tokens};
  serve.props = &props;
  serve.model_facts = &loaded->facts;

  int listen_fd = -1;
  ConfigureHttp(server, &listen_fd);
  InstallGenerationRoutes(server, serve);
  InstallDocumentRoutes(server, serve);
  InstallTokenizeRoutes(server, serve);
  InstallInfoRoutes(server, serve);
  InstallOllamaRoutes(server, serve);
  InstallErrorHandler(server);
  InstallCors(server, *cors);
  const std::string host = absl::GetFlag(FLAGS_host);
  int port = absl::GetFlag(FLAGS_port);
  if (port == 0) {
    port = server.bind_to_any_port(host);
  } else if (!server.bind_to_port(host, port)) {
    port = -1;
  }
  if (port < 0) {
    std::cerr << "hearth-serve: cannot listen on " << host << ":" << absl::GetFlag(FLAGS_port)
              << std::endl;
    return 1;
  }
  if (listen_fd >= 0) listen(listen_fd, SOMAXCONN);
  std::thread engine_loop([&] { (*engine)->Run(); });
  std::thread drain(DrainOnSignal, signals, engine->get(), &server);
  std::cout << "hearth-serve: model " << model_name << ", policy " << options->policy_name
            << ", context " << (*engine)->context_length() << " tokens, " << KvLine(ctx->get(), **engine)
            << ", " << copts->n_threads << " llama.cpp threads; listening on http://"
            << host << ":" << port << std::endl;
  server.listen_after_bind();
  // Wakes the drain thread if the server stopped on its own (a no-op
  // pending signal otherwise: every thread blocks it).
  kill(getpid(), SIGTERM);
  drain.join();
  (*engine)->Stop();
  engine_loop.join();
  // Before the model and its text go: a job that timed out may still be
  // running (job_call.h), and its worker is joined here.
  jobs->reset();
  std::cout << "hearth-serve: stopped" << std::endl;
  return 0;
}

}  // namespace
}  // namespace hearth::serve

namespace {

// Abseil's --help lists only flags of a file named after the program
// (hearth-serve.cc), so it matched none of ours; every hearth-serve flag is
// defined here. The path shown starts at examples/, not at the builder's
// checkout.
void ConfigureFlagsUsage() {
  absl::FlagsUsageConfig config;
  auto ours = [](absl::string_view file) { return absl::EndsWith(file, "serve/serve_main.cc"); };
  config.contains_help_flags = ours;
  config.contains_helpshort_flags = ours;
  config.normalize_filename = [](absl::string_view file) {
    const size_t at = file.rfind("examples/");
    return std::string(at == absl::string_view::npos ? file : file.substr(at));
  };
  absl::SetFlagsUsageConfig(config);
}

}  // namespace

int main(int argc, char** argv) {
  ConfigureFlagsUsage();
  absl::SetProgramUsageMessage(
      "hearth-serve --model=model.gguf [--household=household.toml] [--port=8080]\n"
      "An OpenAI-compatible server on llama.cpp, scheduled by Hearth; dashboard at /.");
  absl::ParseCommandLine(argc, argv);
  return hearth::serve::Main();
}
