#include "tests/testing/random_workload.h"

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "tests/testing/cache_scope_audit.h"
#include "tests/testing/rank_checking_policy.h"
#include "tests/testing/scheduler_harness.h"
#include "scheduler/scheduler_peer.h"

namespace hearth::testing {
namespace {

void CountPreemptions(const PlanCopy& plan, RandomWorkloadStats* stats) {
  for (const PlanCopy::Sequence& s : plan.sequences) stats->pending_inputs += s.input_pending;
  for (const Preemption& p : plan.preempted) {
    if (p.cause == PreemptionCause::kEngineOutOfKv) ++stats->preemptions_out_of_kv;
    if (p.cause == PreemptionCause::kRetry) ++stats->retries;
    if (p.cause != PreemptionCause::kScheduler) continue;
    (p.mode == PreemptionMode::kSwap ? stats->preemptions_swap : stats->preemptions_recompute)++;
  }
}

int32_t Uniform(std::mt19937_64& rng, int32_t lo, int32_t hi) {
  return std::uniform_int_distribution<int32_t>(lo, hi)(rng);
}

SchedulerOptions RandomOptions(std::mt19937_64& rng, const PolicyFactory* policy) {
  SchedulerOptions o;
  o.kv.block_size = std::vector<int32_t>{1, 2, 4, 8, 16}[rng() % 5];
  o.kv.num_device_blocks = Uniform(rng, 4, 120);
  o.kv.num_host_blocks = rng() % 2 ? Uniform(rng, 1, 80) : 0;
  o.preemption_mode = o.kv.num_host_blocks > 0 && rng() % 3 ? PreemptionMode::kSwap
                                                            : PreemptionMode::kRecompute;
  o.kv.watermark_blocks = rng() % 3 == 0 ? Uniform(rng, 0, o.kv.num_device_blocks / 4) : 0;
  o.kv.enable_prefix_caching = rng() % 4 != 0;
  o.max_batched_tokens = Uniform(rng, 1, 200);
  o.max_running = Uniform(rng, 1, std::min(o.max_batched_tokens, 24));
  o.max_prefill_chunk_tokens = rng() % 2 ? Uniform(rng, 1, 64) : 0;
  o.max_pending_requests = Uniform(rng, 5, 60);
  o.models[0].context_length = Uniform(rng, 16, 400);
  o.models[0].vocab_size = 64;
  o.users = {{.name = "a", .weight = 1.0}, {.name = "b", .weight = 2.0}, {.name = "c", .weight = 1.0}};
  if (rng() % 3 == 0) o.users[0].max_queued_requests = Uniform(rng, 1, 6);
  if (rng() % 3 == 0) {
    o.users[1].token_quota = Uniform(rng, 50, 2000);
    o.users[1].quota_window = absl::Milliseconds(Uniform(rng, 100, 2000));
  }
  o.work_classes = {{.name = "voice", .priority = 3}, {.name = "chat", .priority = 2},
                    {.name = "batch", .priority = 0}};
  // Two interactive classes and a background one for the SLO class level
  // (household); fixed, so that the random stream is the same as without.
  o.work_classes[0].ttft_slo = absl::Milliseconds(40);
  o.work_classes[1].ttft_slo = absl::Milliseconds(150);
  for (WorkClassConfig& c : o.work_classes) {
    if (rng() % 2) c.max_running = Uniform(rng, 1, 4);
    if (rng() % 3 == 0) c.kv_block_budget = Uniform(rng, 1, o.kv.num_device_blocks);
    c.borrow = rng() % 2;
    if (rng() % 4 == 0) c.queue_timeout = absl::Milliseconds(Uniform(rng, 1, 300));
    c.max_retries = Uniform(rng, 0, 2);
  }
  if (rng() % 3 == 0) {
    // Several models sharing device memory with the KV cache.
    const int64_t kv_per_token = 1000;
    o.models.clear();
    for (int m = 0; m < 3; ++m) {
      ModelConfig mc;
      mc.name = "m" + std::to_string(m);
      mc.context_length = Uniform(rng, 16, 400);
      mc.vocab_size = 64;
      mc.kv_bytes_per_token = kv_per_token;
      mc.weights_bytes = int64_t{Uniform(rng, 0, 40)} * kv_per_token * o.kv.block_size;
      mc.preload = m == 0;
      if (rng() % 2) mc.keep_alive = absl::Milliseconds(Uniform(rng, 10, 500));
      o.models.push_back(mc);
    }
    // Room for the largest model plus at least half the pool.
    o.residency.device_memory_bytes =
        (int64_t{40} + o.kv.num_device_blocks / 2 + Uniform(rng, 0, o.kv.num_device_blocks)) *
        kv_per_token * o.kv.block_size;
    o.residency.max_concurrent_loads = Uniform(rng, 1, 2);
  }
  if (policy != nullptr) o.policy_factory = *policy;
  return o;
}

}  // namespace

absl::Status RunRandomWorkload(uint64_t seed, const PolicyFactory* policy,
                               RandomWorkloadStats* stats) {
  std::mt19937_64 rng(seed);
  SchedulerOptions options = RandomOptions(rng, policy);
  auto violations = std::make_shared<RankViolations>();
  options.policy_factory = RankCheckingFactory(options.policy_factory, violations);
  std::mt19937_64 workflow_rng(seed ^ 0x9e3779b97f4a7c15ULL);
  const absl::Duration retentions[] = {absl::ZeroDuration(), absl::Milliseconds(30),
                                       absl::Minutes(10)};
  options.workflow_retention = retentions[workflow_rng() % 3];
  // Speculative decoding in a third of the seeds, from its own stream too.
  std::mt19937_64 draft_rng(seed ^ 0x2545f4914f6cdd1dULL);
  if (draft_rng() % 3 == 0) options.max_draft_tokens = Uniform(draft_rng, 1, 4);
  // A tight encoder budget and cache in a third of the seeds, from their own
  // stream too (the photos' spans are up to 16 positions).
  std::mt19937_64 encoder_rng(seed ^ 0x1f83d9abfb41bd6bULL);
  if (encoder_rng() % 3 == 0) {
    options.max_encoder_tokens_per_step = Uniform(encoder_rng, 16, 40);
    options.encoder_cache_tokens = Uniform(encoder_rng, 16, 64);
  }
  // With several models, now and then the third is an adapter of the first,
  // with bounded adapter slots and adapters per step.
  std::mt19937_64 adapter_rng(seed ^ 0x94d049bb133111ebULL);
  if (options.models.size() == 3 && adapter_rng() % 2 == 0) {
    ModelConfig& adapter = options.models[2];
    adapter.base_model = options.models[0].name;
    adapter.context_length = std::min(adapter.context_length, options.models[0].context_length);
    adapter.preload = false;
    // An adapter is small beside its base (the one KV block each model
    // must leave room for is checked beside the base's weights).
    adapter.weights_bytes = int64_t{Uniform(adapter_rng, 0, 2)} * adapter.kv_bytes_per_token *
                            options.kv.block_size;
    options.residency.max_resident_adapters = Uniform(adapter_rng, 0, 1);
    options.residency.max_adapters_per_step = Uniform(adapter_rng, 0, 1);
    ++stats->adapter_configs;
  }
  // Overlapped planning in a third of the seeds, from its own stream too.
  std::mt19937_64 overlap_rng(seed ^ 0xbf58476d1ce4e5b9ULL);
  if (overlap_rng() % 3 == 0) {
    options.overlap_planning = true;
    ++stats->overlap_configs;
  }
  // Cache scopes from their own stream too: mostly the member's own, now and
  // then a shared prefix, a named scope or an opt-out.
  std::mt19937_64 scope_rng(seed ^ 0xd6e8feb86659fd93ULL);
  CacheScopeAudit scope_audit(options.kv.block_size, options.kv.enable_prefix_caching);
  std::vector<RequestSpec> repeatable;
  auto harness = SchedulerHarness::Create(options, seed);
  if (!harness.ok()) return harness.status();
  SchedulerHarness& h = **harness;
  h.executor().set_failure_rate(rng() % 4 == 0 ? 0.01 : 0.0);
  h.executor().set_out_of_kv_rate(rng() % 3 == 0 ? 0.01 : 0.0);
  h.executor().set_load_failure_rate(rng() % 4 == 0 ? 0.2 : 0.0);
  const int32_t num_models = static_cast<int32_t>(options.models.size());
  // A few shared prompt stems make prefix hits (and full hits) common.
  std::vector<std::vector<TokenId>> stems(3);
  for (auto& stem : stems) {
    stem.resize(static_cast<size_t>(Uniform(rng, 1, 120)));
    for (TokenId& t : stem) t = Uniform(rng, 0, 63);
  }
  std::vector<RequestId> submitted;
  // Embeddings (RequestKind::kEmbed) in half the seeds, from their own
  // stream too: a fifth of the submissions, either pooling.
  std::mt19937_64 kind_rng(seed ^ 0xe7037ed1a0b428dbULL);
  const bool embeds = kind_rng() % 2 == 0;
  // Parallel samples in half the seeds, from their own stream too: a
  // seventh of the submissions ask for 2-4 (now and then 0 or too many).
  std::mt19937_64 sample_rng(seed ^ 0x8cb92ba72f3d8dd7ULL);
  const bool groups = sample_rng() % 2 == 0;
  // Photos (encoder spans) in half the seeds, from their own stream too: a
  // sixth of the submissions carry one or two spans, of four contents (so
  // outputs and prompt blocks are reused), now and then out of the rules.
  std::mt19937_64 photo_rng(seed ^ 0x5be0cd19137e2179ULL);
  const bool photos = photo_rng() % 2 == 0;
  absl::flat_hash_set<RequestId> embeddings;
  // Holds (RequestSpec::hold) and their releases, from their own stream too,
  // in half the seeds (the other half's workloads stay as they were): a
  // sixth of the submissions enter held, released at random later, the
  // rest just before the drain (a hold that is never released keeps its
  // request live until its deadline or a cancel).
  std::mt19937_64 hold_rng(seed ^ 0x9e6c63d0676a9a99ULL);
  const bool holds = hold_rng() % 2 == 0;
  std::vector<RequestId> held;
  const auto release_one = [&](size_t index) -> absl::Status {
    const RequestId id = held[index];
    held[index] = held.back();
    held.pop_back();
    const absl::Status s = h.scheduler().Release(id);
    if (s.ok()) {
      ++stats->releases;
      if (!h.live().contains(id)) {
        return absl::InternalError(absl::StrCat("release of non-live ", id.ToString()));
      }
      return absl::OkStatus();
    }
    // Ended meanwhile (a deadline, a cancel): the only allowed refusal.
    if (s.code() != absl::StatusCode::kNotFound || s.message().empty()) return s;
    return absl::OkStatus();
  };
  // Models added and removed at run time in half the seeds, from their own
  // stream too: bases and adapters (of a registered base), now and then one
  // Create would refuse; removals of any id ever registered, refused while
  // a request of the model is live. Submissions then name any id ever
  // registered (removed ones are refused) or, now and then, one never was.
  std::mt19937_64 model_rng(seed ^ 0x3c6ef372fe94f82bULL);
  const bool runtime_models = model_rng() % 2 == 0;
  std::vector<uint32_t> model_ids;
  for (int32_t m = 0; m < num_models; ++m) model_ids.push_back(static_cast<uint32_t>(m));
  absl::flat_hash_map<RequestId, uint32_t> model_of;
  const bool residency = options.residency.device_memory_bytes > 0;
  const int64_t block_bytes = int64_t{1000} * options.kv.block_size;
  const auto change_models = [&]() -> absl::Status {
    Scheduler& s = h.scheduler();
    if (model_rng() % 2 == 0) {
      const uint32_t m = model_ids[model_rng() % model_ids.size()];
      const absl::Status r = s.RemoveModel(ModelId(m));
      if (r.ok()) {
        ++stats->models_removed;
        for (RequestId id : h.live()) {
          auto it = model_of.find(id);
          if (it != model_of.end() && it->second == m) {
            return absl::InternalError(absl::StrCat("model ", m, " removed while ", id.ToString(),
                                                    " of it is live"));
          }
        }
        return absl::OkStatus();
      }
      if (r.code() != absl::StatusCode::kFailedPrecondition && r.code() != absl::StatusCode::kNotFound) {
        return r;
      }
      return r.message().empty() ? absl::InternalError("a removal refused without a reason")
                                 : absl::OkStatus();
    }
    ModelConfig mc;
    mc.name = absl::StrCat("rt", stats->models_added, "-", model_rng() % 1000);
    mc.context_length = Uniform(model_rng, 16, 400);
    mc.vocab_size = 64;
    if (residency) {
      mc.kv_bytes_per_token = 1000;
      mc.weights_bytes = int64_t{Uniform(model_rng, 0, 40)} * block_bytes;
      if (model_rng() % 2) mc.keep_alive = absl::Milliseconds(Uniform(model_rng, 10, 500));
    }
    if (model_rng() % 3 == 0) {
      // An adapter of a registered base model, if one is left.
      for (uint32_t b : model_ids) {
        const absl::StatusOr<ModelConfig> base = s.GetModel(ModelId(b));
        if (!base.ok() || !base->base_model.empty()) continue;
        mc.base_model = base->name;
        mc.context_length = std::min(mc.context_length, base->context_length);
        mc.kv_bytes_per_token = 0;
        mc.vocab_size = 0;
        mc.weights_bytes = residency ? int64_t{Uniform(model_rng, 0, 2)} * block_bytes : 0;
        break;
      }
    }
    // Now and then what Create refuses: a context of 1, or (with
    // residency) KV wider than the blocks.
    const int bad = model_rng() % 12;
    if (bad == 0) mc.context_length = 1;
    if (bad == 1 && residency && mc.base_model.empty()) mc.kv_bytes_per_token = 5000;
    const absl::StatusOr<ModelId> added = s.AddModel(mc);
    if (!added.ok()) {
      if (added.status().code() != absl::StatusCode::kInvalidArgument || added.status().message().empty()) {
        return added.status();
      }
      return absl::OkStatus();
    }
    if (bad == 0 || (bad == 1 && residency && mc.base_model.empty())) {
      return absl::InternalError(absl::StrCat("AddModel accepted a bad config: ", mc.name));
    }
    ++stats->models_added;
    model_ids.push_back(added->value());
    return absl::OkStatus();
  };
  // Live priority and class changes, from their own stream too.
  std::mt19937_64 change_rng(seed ^ 0x5851f42d4c957f2dULL);
  const auto num_classes = static_cast<uint32_t>(options.work_classes.size());
  const int ops = Uniform(rng, 20, 160);
  for (int op = 0; op < ops; ++op) {
    if (change_rng() % 6 == 0 && !submitted.empty()) {
      const RequestId id = submitted[change_rng() % submitted.size()];
      absl::Status s;
      if (change_rng() % 2 == 0) {
        s = h.scheduler().SetPriority(id, Uniform(change_rng, -3, 3));
      } else {
        // Now and then a class that does not exist.
        const uint32_t cls = static_cast<uint32_t>(change_rng() % (num_classes + 1));
        s = h.scheduler().SetWorkClass(id, WorkClassId(cls));
        if (cls == num_classes && s.code() != absl::StatusCode::kInvalidArgument) {
          return absl::InternalError(absl::StrCat("class ", cls, " accepted: ", s.ToString()));
        }
        // Unknown classes, and hard KV budgets too small for the request.
        if (s.code() == absl::StatusCode::kInvalidArgument) {
          if (s.message().empty()) return absl::InternalError("refused without a message");
          s = absl::NotFoundError("");
        }
      }
      if (!s.ok() && s.code() != absl::StatusCode::kNotFound) return s;
      if (s.ok() && !h.live().contains(id)) {
        return absl::InternalError(absl::StrCat("change of non-live ", id.ToString(), " succeeded"));
      }
      if (s.ok()) ++stats->live_changes;
    }
    if (!held.empty() && hold_rng() % 4 == 0) {
      if (absl::Status s = release_one(hold_rng() % held.size()); !s.ok()) return s;
    }
    if (runtime_models && model_rng() % 8 == 0) {
      if (absl::Status s = change_models(); !s.ok()) return s;
    }
    const int kind = Uniform(rng, 0, 9);
    if (kind <= 3) {
      RequestSpec spec;
      spec.user = UserId(Uniform(rng, 0, 2));
      spec.work_class = WorkClassId(Uniform(rng, 0, 2));
      spec.priority = Uniform(rng, -2, 2);
      spec.model = ModelId(static_cast<uint32_t>(Uniform(rng, 0, num_models - 1)));
      spec.prompt_tokens = Uniform(rng, rng() % 20 == 0 ? -3 : 1, 120);
      spec.max_new_tokens = Uniform(rng, rng() % 20 == 0 ? 0 : 1, 60);
      if (rng() % 2 && spec.prompt_tokens > 0) {
        const auto& stem = stems[rng() % stems.size()];
        spec.prompt_token_ids.resize(static_cast<size_t>(spec.prompt_tokens));
        for (size_t i = 0; i < spec.prompt_token_ids.size(); ++i) {
          spec.prompt_token_ids[i] = i < stem.size() ? stem[i] : Uniform(rng, 0, 63);
        }
      }
      if (rng() % 6 == 0) spec.deadline = h.now() + absl::Milliseconds(Uniform(rng, 0, 400));
      // Agent workflows: a parent of any user, live or ended, and now and
      // then an id never issued. Drawn from their own stream so that the
      // rest of each seed's workload stays as it was.
      if (workflow_rng() % 3 == 0 && !submitted.empty()) {
        spec.parent = submitted[workflow_rng() % submitted.size()];
      } else if (workflow_rng() % 40 == 0) {
        spec.parent = RequestId(uint64_t{1} << 40);
      }
      // Random, so that collisions between requests are allowed too: the
      // handle is the host's business.
      spec.handle = rng() % 4 == 0 ? 0 : rng();
      if (spec.prompt_tokens > 0) {
        switch (scope_rng() % 8) {
          case 0:
            spec.cache_scope.shared_prefix_tokens =
                Uniform(scope_rng, 1, std::min(spec.prompt_tokens, 48));
            spec.cache_scope.shared_prefix_scope = scope_rng() % 4 ? "template" : "notes";
            break;
          case 1:
            spec.cache_scope.name = "notes";
            break;
          case 2:
            spec.cache_scope.opt_out = true;
            break;
          default:
            break;
        }
      }
      // Now and then a member sends the start of an earlier prompt again, in
      // the same scopes (a prompt of whole cached blocks is copied on write
      // at its last block). The length stays the one drawn above, so the
      // sizes the scheduler sees keep their distribution.
      if (!repeatable.empty() && !spec.prompt_token_ids.empty() && scope_rng() % 5 == 0) {
        const RequestSpec& earlier = repeatable[scope_rng() % repeatable.size()];
        if (earlier.prompt_tokens >= spec.prompt_tokens) {
          spec.user = earlier.user;
          std::copy_n(earlier.prompt_token_ids.begin(), spec.prompt_tokens,
                      spec.prompt_token_ids.begin());
          spec.cache_scope = earlier.cache_scope;
          spec.cache_scope.shared_prefix_tokens =
              std::min(spec.cache_scope.shared_prefix_tokens, spec.prompt_tokens);
          if (spec.cache_scope.shared_prefix_tokens == 0) spec.cache_scope.shared_prefix_scope.clear();
        }
      }
      spec.hold = holds && hold_rng() % 6 == 0;
      if (embeds && kind_rng() % 5 == 0) {
        spec.kind = RequestKind::kEmbed;
        spec.pooling = kind_rng() % 2 ? Pooling::kMean : Pooling::kLast;
        // Now and then the generation's bound kept: refused at Submit.
        if (kind_rng() % 10 != 0) spec.max_new_tokens = 0;
      }
      if (groups && spec.kind == RequestKind::kGenerate && sample_rng() % 7 == 0) {
        spec.num_samples = sample_rng() % 10 == 0 ? static_cast<int32_t>(sample_rng() % 2) * 100
                                                  : Uniform(sample_rng, 2, 4);
      }
      if (photos && spec.prompt_tokens >= 4 && photo_rng() % 6 == 0) {
        const int32_t n = spec.prompt_tokens;
        const int32_t first = Uniform(photo_rng, 0, n - 2);
        const int32_t length = Uniform(photo_rng, 1, std::min(16, n - first));
        spec.encoder_spans.push_back({first, length, photo_rng() % 4});
        const int32_t after = first + length;
        if (after + 1 < n && photo_rng() % 2 == 0) {
          const int32_t second = Uniform(photo_rng, after, n - 1);
          spec.encoder_spans.push_back(
              {second, Uniform(photo_rng, 1, std::min(16, n - second)), photo_rng() % 4});
        }
        // Now and then overlapping, or past the prompt: refused at Submit.
        if (photo_rng() % 20 == 0) spec.encoder_spans.push_back({first, length + n, 9});
      }
      if (runtime_models && model_rng() % 2 == 0) {
        spec.model = ModelId(model_rng() % 40 == 0
                                 ? 5000u
                                 : model_ids[model_rng() % model_ids.size()]);
      }
      auto id = h.Submit(spec);
      if (id.ok() && !spec.encoder_spans.empty()) ++stats->photos;
      if (id.ok()) {
        for (int32_t k = 0; k < spec.num_samples; ++k) {
          model_of[RequestId(id->value() + static_cast<uint64_t>(k))] = spec.model.value();
        }
        if (spec.model.value() >= static_cast<uint32_t>(num_models)) ++stats->runtime_model_requests;
      }
      if (id.ok() && spec.num_samples > 1) stats->sample_groups += 1;
      if (id.ok() && spec.kind == RequestKind::kEmbed) {
        embeddings.insert(*id);
        ++stats->embeddings;
      }
      if (id.ok() && spec.hold) {
        held.push_back(*id);
        ++stats->held;
      }
      if (id.ok()) {
        if (!spec.prompt_token_ids.empty() && repeatable.size() < 16) repeatable.push_back(spec);
        for (int32_t k = 1; k < spec.num_samples; ++k) {
          const RequestId sample(id->value() + static_cast<uint64_t>(k));
          scope_audit.Record(sample, spec);
          submitted.push_back(sample);
        }
        scope_audit.Record(*id, spec);
        submitted.push_back(*id);
        if (rng() % 3 == 0) h.executor().SetStopAfter(*id, Uniform(rng, 1, 40));
      } else {
        ++stats->rejected_at_submit;
        if (id.status().message().empty()) return absl::InternalError("rejection without a message");
      }
    } else if (kind == 4) {
      if (!submitted.empty()) {
        const RequestId id = submitted[rng() % submitted.size()];
        absl::Status s = h.scheduler().Cancel(id);
        if (!s.ok() && s.code() != absl::StatusCode::kNotFound) return s;
        if (s.ok() != h.live().contains(id) && s.ok()) {
          return absl::InternalError(absl::StrCat("cancel of non-live ", id.ToString(), " succeeded"));
        }
      }
    } else {
      absl::Status s = h.Step();
      if (!s.ok()) return s;
      CountPreemptions(h.last_plan(), stats);
      for (const PlanCopy::Sequence& seq : h.last_plan().sequences) {
        stats->draft_tokens += seq.draft_tokens;
      }
      stats->copy_on_write += static_cast<int64_t>(h.last_plan().copy_on_write.size());
    }
  }
  while (!held.empty()) {
    if (absl::Status s = release_one(held.size() - 1); !s.ok()) return s;
  }
  const int32_t most_steps = 20000;
  const absl::StatusOr<SchedulerHarness::RunEnd> drained =
      h.Run({.max_steps = most_steps, .after_step = [&] {
               CountPreemptions(h.last_plan(), stats);
               stats->copy_on_write += static_cast<int64_t>(h.last_plan().copy_on_write.size());
               return absl::OkStatus();
             }});
  if (!drained.ok()) return drained.status();
  if (absl::Status s = h.FinishInFlight(); !s.ok()) return s;
  stats->voided_entries += h.voided_entries();
  if (!h.live().empty()) {
    const SchedulerStats st = h.scheduler().stats();
    std::string detail = absl::StrCat(" waiting ", st.waiting, " running ", st.running, " swapped ",
                                      st.swapped, " free blocks ", st.free_device_blocks, "/",
                                      options.kv.num_device_blocks, " cached ", st.cached_device_blocks,
                                      " kv limit ", st.kv_block_limit, " weights ", st.resident_weight_bytes,
                                      " memory ", options.residency.device_memory_bytes);
    for (RequestId id : h.live()) {
      auto v = h.scheduler().GetRequest(id);
      if (!v.ok()) continue;
      absl::StrAppend(&detail, "\n  ", id.ToString(), " ", std::string(PhaseName(v->phase)), " model ",
                      v->model.value(), " class ",
                      v->work_class.value(), " user ", v->user.value(), " len ", v->length(),
                      " computed ", v->computed_tokens, " blocks ", v->device_blocks);
    }
    const PlanCopy& last = h.last_plan();
    absl::StrAppend(&detail, "\n  last plan step ", last.step, ": ", last.sequences.size(),
                    " sequences, ", last.preempted.size(), " preempted, tokens ", last.num_batched_tokens);
    for (const auto& q : last.sequences) {
      absl::StrAppend(&detail, " [", q.id.ToString(), " @", q.start_position, "+", q.num_tokens, "]");
    }
    for (size_t c = 0; c < options.work_classes.size(); ++c) {
      const WorkClassConfig& w = options.work_classes[c];
      absl::StrAppend(&detail, "\n  class ", c, " cap ", w.max_running, " budget ", w.kv_block_budget,
                      " borrow ", w.borrow);
    }
    return absl::InternalError(absl::StrCat(h.live().size(), " requests never ended (seed ", seed,
                                            ", block size ", options.kv.block_size, ", max_running ",
                                            options.max_running, ", watermark ",
                                            options.kv.watermark_blocks, ")", detail));
  }
  if (h.results().size() != submitted.size()) {
    return absl::InternalError(absl::StrCat(h.results().size(), " results for ", submitted.size(),
                                            " accepted requests"));
  }
  for (const auto& [id, r] : h.results()) {
    switch (r.phase) {
      case RequestPhase::kFinished: ++stats->finished; break;
      case RequestPhase::kCancelled: ++stats->cancelled; break;
      case RequestPhase::kTimedOut: ++stats->timed_out; break;
      case RequestPhase::kFailed: ++stats->failed; break;
      // A call whose ended parent was another user's.
      case RequestPhase::kRejected: ++stats->rejected_at_intake; break;
      default: return absl::InternalError(absl::StrCat("unexpected phase for ", id.ToString()));
    }
    if (r.phase != RequestPhase::kFinished && r.message.empty()) {
      return absl::InternalError(absl::StrCat("no reason for ", id.ToString()));
    }
    // An embedding ends pooled with no tokens, a generation never pooled.
    const bool embedding = embeddings.contains(id);
    if ((r.finish_reason == FinishReason::kPooled) !=
            (embedding && r.phase == RequestPhase::kFinished) ||
        (embedding && r.output_tokens != 0)) {
      return absl::InternalError(absl::StrCat(
          embedding ? "embedding " : "generation ", id.ToString(), " ended ",
          std::string(PhaseName(r.phase)), " (", std::string(FinishReasonName(r.finish_reason)),
          ") with ", r.output_tokens, " tokens"));
    }
    if (r.finish_reason == FinishReason::kPooled) ++stats->pooled;
  }
  const int32_t vocab = options.models[0].vocab_size > 0 ? options.models[0].vocab_size : 1000;
  if (absl::Status s = scope_audit.Check(h.results(),
                                         [vocab](RequestId id, int32_t position) {
                                           return FakeExecutor::TokenFor(id, position, vocab);
                                         });
      !s.ok()) {
    return s;
  }
  const SchedulerStats st = h.scheduler().stats();
  stats->prefix_hit_tokens += static_cast<int64_t>(st.prefix_hit_tokens);
  // Everything returned: no block owned, no host block in use.
  if (internal::SchedulerPeer::allocator(h.scheduler()).num_owned() != 0 ||
      st.free_host_blocks != options.kv.num_host_blocks) {
    return absl::InternalError("blocks still owned after every request ended");
  }
  if (!violations->first.empty()) {
    return absl::InternalError(absl::StrCat("rank rule broken: ", violations->first));
  }
  stats->victims_checked += violations->victims_checked;
  return absl::OkStatus();
}

}  // namespace hearth::testing
