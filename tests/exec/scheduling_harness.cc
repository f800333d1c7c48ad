// Scheduler + executor driver for the scheduling-invariance tests (see
// scheduling_harness.h).

#include "scheduling_harness.h"

#include <algorithm>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "hearth/exec/cpu_reference_executor.h"

namespace hearth::testing {
namespace {

// A tiny deterministic generator; std distributions differ across libraries.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t x = (state_ += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
  // Uniform in [lo, hi].
  int32_t Uniform(int32_t lo, int32_t hi) {
    return lo + static_cast<int32_t>(Next() % uint64_t(hi - lo + 1));
  }

 private:
  uint64_t state_;
};

}  // namespace

std::vector<WorkloadRequest> RandomWorkload(const WorkloadShape& shape) {
  Rng rng(shape.seed);
  std::vector<std::vector<TokenId>> prefixes(std::max(shape.prefix_groups, 1));
  for (auto& p : prefixes) {
    for (int32_t i = 0; i < shape.shared_prefix; ++i) {
      p.push_back(rng.Uniform(0, shape.vocab_size - 1));
    }
  }
  std::vector<WorkloadRequest> out(shape.requests);
  for (int32_t i = 0; i < shape.requests; ++i) {
    WorkloadRequest& r = out[i];
    if (shape.shared_prefix > 0) {
      r.prompt = prefixes[i % prefixes.size()];
      const int32_t extra = rng.Uniform(0, shape.max_prompt);
      for (int32_t j = 0; j < extra; ++j) {
        r.prompt.push_back(rng.Uniform(0, shape.vocab_size - 1));
      }
    } else {
      const int32_t n = rng.Uniform(shape.min_prompt, shape.max_prompt);
      for (int32_t j = 0; j < n; ++j) {
        r.prompt.push_back(rng.Uniform(0, shape.vocab_size - 1));
      }
    }
    r.max_new_tokens = rng.Uniform(1, shape.max_new_tokens);
    r.arrival_step = rng.Uniform(0, shape.arrival_spread);
    r.user = UserId(static_cast<uint32_t>(rng.Uniform(0, shape.num_users - 1)));
    r.work_class =
        WorkClassId(static_cast<uint32_t>(rng.Uniform(0, shape.num_work_classes - 1)));
    r.priority = rng.Uniform(0, 3);
    if (shape.embed_every > 0 && i % shape.embed_every == shape.embed_every - 1) {
      r.kind = RequestKind::kEmbed;
      r.pooling = (i / shape.embed_every) % 2 == 0 ? Pooling::kMean : Pooling::kLast;
    } else if (shape.photo_every > 0 && i % shape.photo_every == shape.photo_every - 1 &&
               r.prompt.size() >= 12) {
      r.handle = 7000 + static_cast<uint64_t>((i / shape.photo_every) % 3);
      const int32_t length = std::min<int32_t>(12, static_cast<int32_t>(r.prompt.size()) - 10);
      r.encoder_spans = {{10, length, PhotoContentHash(r.handle, 0)}};
      // Placeholder ids: what tells photos apart is the span's hash.
      for (int32_t p = 10; p < 10 + length; ++p) r.prompt[static_cast<size_t>(p)] = 0;
    }
  }
  return out;
}

std::string PhotoContent(uint64_t handle, int32_t span_index) {
  return absl::StrFormat("photo %d, span %d", handle, span_index);
}

uint64_t PhotoContentHash(uint64_t handle, int32_t span_index) {
  return handle * 64 + static_cast<uint64_t>(span_index);
}

absl::StatusOr<WorkloadRun> RunWorkload(const SchedulerOptions& options,
                                        const std::vector<WorkloadRequest>& workload,
                                        const ExecutorFactory& make_executor,
                                        int64_t max_steps) {
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(options);
  if (!scheduler.ok()) return scheduler.status();
  absl::StatusOr<std::unique_ptr<StepExecutor>> executor = make_executor(options);
  if (!executor.ok()) return executor.status();
  Scheduler& s = **scheduler;

  const size_t n = workload.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return workload[a].arrival_step < workload[b].arrival_step;
  });
  // Each request's samples take consecutive output slots.
  absl::flat_hash_map<RequestId, size_t> index;
  WorkloadRun run;
  run.first_slot.resize(n);
  size_t slots = 0;
  for (size_t i = 0; i < n; ++i) {
    run.first_slot[i] = slots;
    slots += static_cast<size_t>(workload[i].num_samples);
  }
  run.tokens.resize(slots);
  run.embeddings.resize(slots);
  run.results.resize(slots);

  size_t submitted = 0, done = 0;
  // (step, id): held requests and the step before whose Plan they are released.
  std::vector<std::pair<int64_t, RequestId>> releases;
  absl::Time now = absl::UnixEpoch();
  std::vector<RequestResult> drained;
  // Takes a step's tokens once its Complete() accepted them, skipping
  // entries voided while it was outstanding (overlapped planning).
  const auto deliver = [&](const StepPlan& plan, const StepOutcome& outcome) -> absl::Status {
    const auto width = static_cast<size_t>(outcome.embedding_width);
    const std::vector<float>& pooled = outcome.embeddings;
    size_t at = 0;
    for (size_t i = 0; i < plan.sequences.size(); ++i) {
      const ScheduledSequence& q = plan.sequences[i];
      if (!q.pool || !outcome.sequences[i].error.empty() || outcome.sequences[i].out_of_kv) {
        continue;
      }
      const size_t from = at;
      at += width;
      if (IsVoided(plan, q.id)) continue;
      if (width == 0 || at > pooled.size()) {
        return absl::InternalError("fewer vectors than pooling steps");
      }
      run.embeddings[index.at(q.id)].assign(pooled.begin() + static_cast<int64_t>(from),
                                            pooled.begin() + static_cast<int64_t>(at));
      ++run.pooled;
    }
    if (at != pooled.size()) return absl::InternalError("more vectors than pooling steps");
    size_t draft_at = 0;
    for (const SequenceOutcome& o : outcome.sequences) {
      const size_t drafts_at = draft_at;
      draft_at += static_cast<size_t>(o.accepted_drafts);
      if (IsVoided(plan, o.id)) continue;
      if (!o.error.empty()) {
        return absl::InternalError(absl::StrFormat(
            "step %d: executor failed request %d: %s", plan.step,
            o.id.value(), o.error));
      }
      if (!o.produced_token) continue;
      std::vector<TokenId>& tokens = run.tokens[index.at(o.id)];
      tokens.insert(tokens.end(), outcome.draft_ids.begin() + static_cast<int64_t>(drafts_at),
                    outcome.draft_ids.begin() + static_cast<int64_t>(draft_at));
      tokens.push_back(o.token);
      run.accepted_drafts += o.accepted_drafts;
    }
    return absl::OkStatus();
  };
  const auto complete = [&](const StepPlan& plan, const StepOutcome& outcome) -> absl::Status {
    absl::Status completed = s.Complete(outcome);
    if (!completed.ok()) return completed;
    absl::Status delivered = deliver(plan, outcome);
    if (!delivered.ok()) return delivered;
    absl::Status invariants = s.CheckInvariants();
    if (!invariants.ok()) return invariants;
    drained.clear();
    s.DrainResults(&drained);
    for (RequestResult& r : drained) {
      run.results[index.at(r.id)] = std::move(r);
      ++done;
    }
    return absl::OkStatus();
  };
  // With overlap_planning, step N+1 is planned and even executed before
  // Complete(N), as an engine that launches it at once would.
  const StepPlan* in_flight = nullptr;
  StepOutcome outcomes[2];
  int next_outcome = 0;
  for (int64_t step = 0; done < slots; ++step) {
    if (step >= max_steps) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "workload not done after %d steps (%d of %d requests ended)",
          max_steps, done, slots));
    }
    for (; submitted < n && workload[order[submitted]].arrival_step <= step;
         ++submitted) {
      const WorkloadRequest& w = workload[order[submitted]];
      RequestSpec spec;
      spec.prompt_tokens = static_cast<int32_t>(w.prompt.size());
      spec.prompt_token_ids = w.prompt;
      spec.max_new_tokens = w.kind == RequestKind::kEmbed ? 0 : w.max_new_tokens;
      spec.kind = w.kind;
      spec.pooling = w.pooling;
      spec.user = w.user;
      spec.work_class = w.work_class;
      spec.priority = w.priority;
      spec.hold = w.hold_steps > 0;
      spec.cache_scope.opt_out = w.cache_opt_out;
      spec.num_samples = w.num_samples;
      spec.handle = w.handle;
      spec.encoder_spans = w.encoder_spans;
      absl::StatusOr<RequestId> id = s.Submit(spec);
      if (!id.ok()) return id.status();
      for (int32_t k = 0; k < w.num_samples; ++k) {
        index[RequestId(id->value() + static_cast<uint64_t>(k))] =
            run.first_slot[order[submitted]] + static_cast<size_t>(k);
      }
      if (spec.hold) releases.emplace_back(step + w.hold_steps, *id);
    }
    for (auto it = releases.begin(); it != releases.end();) {
      if (it->first > step) {
        ++it;
        continue;
      }
      if (absl::Status released = s.Release(it->second); !released.ok()) return released;
      it = releases.erase(it);
    }
    now += absl::Milliseconds(1);
    absl::StatusOr<const StepPlan*> planned = s.Plan(now);
    if (!planned.ok()) return planned.status();
    const StepPlan& plan = **planned;
    run.swap_out_copies += plan.swap_out.size();
    run.swap_in_copies += plan.swap_in.size();
    run.cow_copies += plan.copy_on_write.size();
    run.max_batch = std::max(run.max_batch, int32_t(plan.sequences.size()));
    for (const ScheduledSequence& q : plan.sequences) {
      if (!q.sample) ++run.chunked_prefill_steps;
      run.draft_tokens += q.draft_tokens;
    }
    for (const ScheduledSequence& q : plan.sequences) run.pending_inputs += q.input_pending;
    for (const EncoderInput& in : plan.encoder_inputs) {
      (in.encode ? run.encoder_encodes : run.encoder_reads) += 1;
      for (const ScheduledSequence& q : plan.sequences) {
        run.chunks_inside_span += q.id == in.id && q.start_position > in.position;
      }
    }
    StepOutcome& outcome = outcomes[next_outcome];
    next_outcome ^= 1;
    absl::Status executed = (*executor)->Execute(plan, &outcome);
    if (!executed.ok()) return executed;
    if (options.overlap_planning) {
      if (in_flight != nullptr) {
        absl::Status completed = complete(*in_flight, outcomes[next_outcome]);
        if (!completed.ok()) return completed;
      }
      in_flight = &plan;
    } else {
      absl::Status completed = complete(plan, outcome);
      if (!completed.ok()) return completed;
    }
    run.steps = step + 1;
  }
  if (in_flight != nullptr) {
    absl::Status completed = complete(*in_flight, outcomes[next_outcome ^ 1]);
    if (!completed.ok()) return completed;
  }
  run.stats = s.stats();
  return run;
}

absl::StatusOr<std::vector<std::vector<TokenId>>> RunAlone(
    const SchedulerOptions& options, const std::vector<WorkloadRequest>& workload,
    const ExecutorFactory& make_executor) {
  absl::StatusOr<AloneResults> alone = RunEachAlone(options, workload, make_executor);
  if (!alone.ok()) return alone.status();
  return std::move(alone->tokens);
}

absl::StatusOr<AloneResults> RunEachAlone(
    const SchedulerOptions& options, const std::vector<WorkloadRequest>& workload,
    const ExecutorFactory& make_executor) {
  SchedulerOptions alone = options;
  alone.kv.num_device_blocks = 512;
  alone.kv.num_host_blocks = 0;
  alone.kv.watermark_blocks = 0;
  alone.kv.enable_prefix_caching = false;
  alone.preemption_mode = PreemptionMode::kRecompute;
  alone.max_batched_tokens = 2048;
  alone.max_prefill_chunk_tokens = 0;
  alone.policy_factory = nullptr;
  AloneResults out;
  for (const WorkloadRequest& w : workload) {
    // A group's sample k alone: one request with the sample's handle.
    for (int32_t k = 0; k < w.num_samples; ++k) {
      WorkloadRequest single = w;
      single.arrival_step = 0;
      single.num_samples = 1;
      single.handle = w.handle + static_cast<uint64_t>(k);
      absl::StatusOr<WorkloadRun> run = RunWorkload(alone, {single}, make_executor);
      if (!run.ok()) return run.status();
      out.tokens.push_back(std::move(run->tokens[0]));
      out.embeddings.push_back(std::move(run->embeddings[0]));
    }
  }
  return out;
}

ExecutorFactory CpuExecutorFactory(TokenId stop_token,
                                   std::function<SamplingParams(uint64_t)> sampling) {
  return [stop_token, sampling](const SchedulerOptions& options)
             -> absl::StatusOr<std::unique_ptr<StepExecutor>> {
    CpuReferenceExecutorOptions o;
    o.kv.block_size = options.kv.block_size;
    o.kv.num_device_blocks = options.kv.num_device_blocks;
    o.kv.num_host_blocks = options.kv.num_host_blocks;
    o.kv.max_positions = options.models[0].context_length;
    o.stop_token = stop_token;
    o.sampling = sampling;
    o.encoder_content = [](uint64_t handle, int32_t span) -> absl::StatusOr<std::string> {
      return PhotoContent(handle, span);
    };
    absl::StatusOr<std::unique_ptr<CpuReferenceExecutor>> e =
        CpuReferenceExecutor::Create(o);
    if (!e.ok()) return e.status();
    return std::unique_ptr<StepExecutor>(std::move(*e));
  };
}

}  // namespace hearth::testing
