// File: src/residency/model_residency.h
//
// Which models are resident, what memory is left for KV blocks, and which
// loads and unloads a step issues. Engine thread only. With residency
// disabled every model is resident and the KV limit is the whole pool.
//
// Adapters (ModelConfig::base_model) are models whose base must be ready
// before they load and before their requests run: a request of an adapter
// counts as live and active for its base too, so the base outlives it, and
// unloading a base unloads its adapters first. Adapter slots
// (max_resident_adapters) and the adapters of the running set
// (max_adapters_per_step) are bounded apart from memory.

#ifndef HEARTH_RESIDENCY_MODEL_RESIDENCY_H_
#define HEARTH_RESIDENCY_MODEL_RESIDENCY_H_

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "hearth/scheduler/scheduler_options.h"
#include "hearth/scheduler/step_plan.h"

namespace hearth::internal {

class ModelResidency {
 public:
  explicit ModelResidency(const SchedulerOptions& options);

  bool enabled() const { return enabled_; }
  // Resident and not still loading: its requests may run.
  bool ready(ModelId m) const {
    const Model& model = models_[m.value()];
    return model.resident && !model.loading &&
           (model.base < 0 || ready(ModelId(static_cast<uint32_t>(model.base))));
  }
  // Running requests of `m` (StartRunning/StopRunning); with adapters this
  // bounds the adapters of the running set.
  void AddRunning(ModelId m, int32_t delta);
  // Whether a request of `m` may start running beside the running set:
  // always for a base model, or an adapter already running, else while
  // fewer than max_adapters_per_step adapters run.
  bool AdmitsAdapter(ModelId m) const {
    const Model& model = models_[m.value()];
    return model.base < 0 || model.running > 0 || max_running_adapters_ == 0 ||
           running_adapters_ < max_running_adapters_;
  }
  // Device blocks that may be owned at once given resident (and loading)
  // weights.
  int32_t kv_block_limit() const { return kv_block_limit_; }
  int64_t resident_weight_bytes() const { return weight_bytes_; }

  // Unfinished requests per model (idleness and LRU order come from them).
  void AddLive(ModelId m);
  void RemoveLive(ModelId m, absl::Time now);

  // A model registered at run time (Scheduler::AddModel), `base` its base's
  // index or -1: with residency it starts unloaded and loads when its
  // requests want it. Its KV must fit the block size fixed at construction.
  void AddModel(const ModelConfig& config, int32_t base);
  // A model removed at run time, which no request needs any more: never
  // loaded again, and unloaded by the next PlanUnloads that finds it
  // resident and not loading.
  void RemoveModel(ModelId m);
  // Bytes of a KV block (the largest model's at construction); 0 without
  // residency.
  int64_t block_bytes() const { return enabled_ ? block_bytes_ : 0; }

  // A request is waiting for `m` to load: queue the load once.
  void WantLoad(ModelId m);

  // Keep-alive: unloads models idle for longer than their keep_alive.
  void PlanUnloads(absl::Time now, std::vector<ModelCommand>* commands);
  // The earliest time PlanUnloads would unload an idle model;
  // InfiniteFuture when none would. O(models).
  absl::Time NextUnloadTime() const;
  // Issues queued loads while fewer than max_concurrent_loads are in this
  // plan and memory beside KV allows (`owned_blocks`, or more: what requests
  // holding KV need at their full length, and room made for KV by
  // MakeRoomForBlocks since the last PlanLoads): adapters whose base is
  // ready first, then base models in request order (one that does not fit
  // holds back the base models behind it, never an adapter). A load may
  // unload idle models, least recently used first, then bases kept only by
  // requests waiting for one of their adapters to load, when that makes
  // enough room. Called after admissions, so loads only take memory
  // runnable work does not need. Whatever the order of requests, every
  // queued load is issued once the requests that hold memory end.
  void PlanLoads(int32_t owned_blocks, std::vector<ModelCommand>* commands);

  // Requests of a model holding KV (running or swapped); such a model is
  // never unloaded. `full_blocks`: the device blocks each needs at its full
  // length (prompt + max_new_tokens), which loads leave to KV.
  void AddActive(ModelId m, int32_t delta, int32_t full_blocks);

  // Unloads models, least recently used first, until `blocks` more KV blocks
  // fit beside `owned_blocks`: idle ones (no unfinished requests) first, then
  // ones whose requests all still wait (none holds KV), never `keep`. Models
  // of the second kind are appended to `demoted`: their waiting requests must
  // go back to preparing. False, unloading nothing, if even that is not
  // enough. The next PlanLoads leaves the room made to KV.
  bool MakeRoomForBlocks(int32_t blocks, int32_t owned_blocks, ModelId keep,
                         std::vector<ModelCommand>* commands, std::vector<ModelId>* demoted);

  // The plan carrying `commands` was completed. Loads not in `failed` are
  // resident now; failed ones give their memory back. Returns, in `loaded`,
  // the models that became resident.
  void FinishLoads(const std::vector<ModelCommand>& commands,
                   const std::vector<ModelId>& failed, std::vector<ModelId>* loaded);

 private:
  struct Model {
    // The base model's index, or -1 for a base model.
    int32_t base = -1;
    int32_t running = 0;
    int64_t weights = 0;
    absl::Duration keep_alive = absl::InfiniteDuration();
    bool resident = false;
    bool loading = false;
    bool load_queued = false;
    int32_t live = 0;
    int32_t active = 0;
    absl::Time last_used = absl::InfinitePast();
  };
  // Which models an eviction may take: idle ones; also bases whose every
  // request waits for an adapter of theirs that is not resident (they
  // serve nobody until a later load); also any whose requests all wait
  // (none holds KV; those requests go back to preparing).
  enum class Reclaim { kIdle, kHeldForLoads, kWaitingOnly };
  void Recompute();
  // Unloads least recently used models allowed at `level`, idle ones first,
  // until `bytes_needed` fit; false, unloading nothing, if they would not.
  // Wanted models unloaded are appended to `demoted` (when given) and asked
  // for again.
  bool EvictFor(int64_t bytes_needed, int64_t owned_bytes, Reclaim level, ModelId keep,
                std::vector<ModelCommand>* commands, std::vector<ModelId>* demoted);
  // Weights that unloading `m` frees: its own, and a base's resident
  // adapters' (they go with it).
  int64_t FreedBytes(uint32_t m) const;
  // Model weights that unloading every model evictable at `level` frees.
  int64_t ReclaimableBytes(Reclaim level, ModelId keep) const;
  // A base whose live requests are all of adapters not resident.
  bool HeldOnlyForLoads(uint32_t m) const;
  // Starts loading queued model `id` if it may load and fits (see
  // PlanLoads); false if not.
  bool TryLoad(uint32_t id, int64_t owned_bytes, std::vector<ModelCommand>* commands);
  void StartLoad(uint32_t id, std::vector<ModelCommand>* commands);
  // Unloads `m`, a base's resident adapters first (those with requests
  // waiting go to `demoted`, when given, and want loading again).
  void Unload(uint32_t m, std::vector<ModelCommand>* commands,
              std::vector<ModelId>* demoted = nullptr);
  // Whether `m` may start loading now: a base, or an adapter whose base is
  // ready and for which an adapter slot is free or was freed (unloading an
  // idle adapter into `commands`).
  bool MayLoadAdapter(uint32_t m, std::vector<ModelCommand>* commands);
  // Model `m` is evictable: resident, not loading, idle (or busy as
  // `level` allows), not `keep` or keep's base, and no adapter of it loading.
  bool Evictable(uint32_t m, Reclaim level, ModelId keep) const;

  const bool enabled_;
  const int64_t memory_;
  const int32_t max_loads_;
  const int32_t max_resident_adapters_;
  const int32_t max_running_adapters_;
  int32_t resident_adapters_ = 0;
  int32_t running_adapters_ = 0;
  const int32_t pool_blocks_;
  int64_t block_bytes_ = 0;
  std::vector<Model> models_;
  // Models with requests waiting for them, in the order the first asked.
  std::vector<uint32_t> load_queue_;
  int64_t weight_bytes_ = 0;
  int32_t kv_block_limit_ = 0;
  // The most KV blocks MakeRoomForBlocks made room for since the last
  // PlanLoads (which leaves that room alone).
  int32_t room_made_blocks_ = 0;
  // Sum of AddActive's full_blocks over requests holding KV.
  int64_t pinned_full_blocks_ = 0;
};

}  // namespace hearth::internal

#endif  // HEARTH_RESIDENCY_MODEL_RESIDENCY_H_
