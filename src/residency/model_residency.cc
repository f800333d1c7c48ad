#include "residency/model_residency.h"

#include <algorithm>

#include "scheduler/options_validation.h"

namespace hearth::internal {

ModelResidency::ModelResidency(const SchedulerOptions& o)
    : enabled_(o.residency.device_memory_bytes > 0),
      memory_(o.residency.device_memory_bytes),
      max_loads_(o.residency.max_concurrent_loads),
      max_resident_adapters_(o.residency.max_resident_adapters),
      max_running_adapters_(o.residency.max_adapters_per_step),
      pool_blocks_(o.kv.num_device_blocks) {
  models_.resize(o.models.size());
  for (const ModelConfig& m : o.models) {
    block_bytes_ = std::max(block_bytes_, m.kv_bytes_per_token * o.kv.block_size);
  }
  for (size_t i = 0; i < o.models.size(); ++i) {
    Model& m = models_[i];
    m.weights = o.models[i].weights_bytes;
    m.keep_alive = o.models[i].keep_alive;
    m.resident = !enabled_ || o.models[i].preload;
    if (enabled_ && m.resident) weight_bytes_ += m.weights;
    m.base = static_cast<int32_t>(BaseModelIndex(o, o.models[i]));
    if (enabled_ && m.resident && m.base >= 0) ++resident_adapters_;
  }
  Recompute();
}

void ModelResidency::AddModel(const ModelConfig& config, int32_t base) {
  Model& m = models_.emplace_back();
  m.weights = config.weights_bytes;
  m.keep_alive = config.keep_alive;
  m.base = base;
  m.resident = !enabled_;
}

void ModelResidency::RemoveModel(ModelId id) {
  Model& m = models_[id.value()];
  // Idle since forever with no keep-alive: PlanUnloads takes it first
  // chance, and NextUnloadTime asks for a plan now.
  m.keep_alive = absl::ZeroDuration();
  m.last_used = absl::InfinitePast();
}

void ModelResidency::AddRunning(ModelId m, int32_t delta) {
  Model& model = models_[m.value()];
  const bool was = model.running > 0;
  model.running += delta;
  if (model.base >= 0 && was != (model.running > 0)) running_adapters_ += was ? -1 : 1;
}

void ModelResidency::Recompute() {
  if (!enabled_) {
    kv_block_limit_ = pool_blocks_;
    return;
  }
  // One uniform pool: a block is sized for the largest model's KV.
  const int64_t blocks = std::max<int64_t>(0, memory_ - weight_bytes_) / block_bytes_;
  kv_block_limit_ = static_cast<int32_t>(std::min<int64_t>(blocks, pool_blocks_));
}

void ModelResidency::AddLive(ModelId m) {
  Model& model = models_[m.value()];
  ++model.live;
  if (model.base >= 0) ++models_[static_cast<size_t>(model.base)].live;
}

void ModelResidency::RemoveLive(ModelId m, absl::Time now) {
  Model& model = models_[m.value()];
  --model.live;
  model.last_used = now;
  if (model.base >= 0) {
    Model& base = models_[static_cast<size_t>(model.base)];
    --base.live;
    base.last_used = now;
  }
}

void ModelResidency::AddActive(ModelId m, int32_t delta, int32_t full_blocks) {
  pinned_full_blocks_ += int64_t{delta} * full_blocks;
  Model& model = models_[m.value()];
  model.active += delta;
  if (model.base >= 0) models_[static_cast<size_t>(model.base)].active += delta;
}

void ModelResidency::WantLoad(ModelId m) {
  Model& model = models_[m.value()];
  // The base first: it loads ahead of the adapter in the queue's order.
  if (model.base >= 0) WantLoad(ModelId(static_cast<uint32_t>(model.base)));
  if (model.resident || model.loading || model.load_queued) return;
  model.load_queued = true;
  load_queue_.push_back(m.value());
}

void ModelResidency::Unload(uint32_t m, std::vector<ModelCommand>* commands,
                            std::vector<ModelId>* demoted) {
  if (models_[m].base < 0) {
    for (size_t a = 0; a < models_.size(); ++a) {
      Model& adapter = models_[a];
      if (adapter.base != static_cast<int32_t>(m) || !adapter.resident) continue;
      Unload(static_cast<uint32_t>(a), commands);
      if (adapter.live > 0 && demoted != nullptr) {
        demoted->push_back(ModelId(static_cast<uint32_t>(a)));
        WantLoad(ModelId(static_cast<uint32_t>(a)));
      }
    }
  } else {
    --resident_adapters_;
  }
  models_[m].resident = false;
  weight_bytes_ -= models_[m].weights;
  commands->push_back({ModelCommandKind::kUnload, ModelId(m)});
  Recompute();
}

bool ModelResidency::HeldOnlyForLoads(uint32_t i) const {
  const Model& m = models_[i];
  if (m.base >= 0 || m.active > 0) return false;
  int32_t waiting_for_adapters = 0;
  for (const Model& a : models_) {
    if (a.base == static_cast<int32_t>(i) && !a.resident) waiting_for_adapters += a.live;
  }
  return waiting_for_adapters == m.live;
}

bool ModelResidency::Evictable(uint32_t i, Reclaim level, ModelId keep) const {
  const Model& m = models_[i];
  if (!m.resident || m.loading) return false;
  if (m.live > 0) {
    // Only waiting requests (none holds KV), and not the model (or the base
    // of the adapter) that wants the room.
    if (level == Reclaim::kIdle || m.active > 0 || ModelId(i) == keep) return false;
    if (keep.valid() && keep.value() < models_.size() &&
        models_[keep.value()].base == static_cast<int32_t>(i)) {
      return false;
    }
    if (level == Reclaim::kHeldForLoads && !HeldOnlyForLoads(i)) return false;
  }
  // An adapter mid-load needs its base.
  for (const Model& a : models_) {
    if (a.base == static_cast<int32_t>(i) && a.loading) return false;
  }
  return true;
}

int64_t ModelResidency::FreedBytes(uint32_t i) const {
  int64_t bytes = models_[i].weights;
  if (models_[i].base >= 0) return bytes;
  for (const Model& a : models_) {
    if (a.base == static_cast<int32_t>(i) && a.resident) bytes += a.weights;
  }
  return bytes;
}

int64_t ModelResidency::ReclaimableBytes(Reclaim level, ModelId keep) const {
  int64_t bytes = 0;
  for (size_t i = 0; i < models_.size(); ++i) {
    const Model& m = models_[i];
    if (!m.resident) continue;
    // Unloading a base takes its resident adapters with it.
    const bool with_base =
        m.base >= 0 && Evictable(static_cast<uint32_t>(m.base), level, keep);
    if (with_base || Evictable(static_cast<uint32_t>(i), level, keep)) bytes += m.weights;
  }
  return bytes;
}

bool ModelResidency::MayLoadAdapter(uint32_t id, std::vector<ModelCommand>* commands) {
  const Model& m = models_[id];
  if (m.base < 0) return true;
  if (!ready(ModelId(static_cast<uint32_t>(m.base)))) return false;
  if (max_resident_adapters_ == 0 || resident_adapters_ < max_resident_adapters_) return true;
  // Slots are full: free the least recently used idle adapter's.
  int64_t best = -1;
  for (size_t i = 0; i < models_.size(); ++i) {
    const Model& a = models_[i];
    if (a.base < 0 || !a.resident || a.loading || a.live > 0) continue;
    if (best < 0 || a.last_used < models_[static_cast<size_t>(best)].last_used) {
      best = static_cast<int64_t>(i);
    }
  }
  if (best < 0) return false;
  Unload(static_cast<uint32_t>(best), commands);
  return true;
}

bool ModelResidency::EvictFor(int64_t needed, int64_t owned_bytes, Reclaim level, ModelId keep,
                              std::vector<ModelCommand>* commands, std::vector<ModelId>* demoted) {
  // Nothing goes unless that makes enough room: a model unloaded for room
  // that is still too small is loaded again by those who want it, and
  // while it loads it cannot be unloaded, so two evictions that each need
  // the other's models gone would take turns forever.
  if (memory_ - weight_bytes_ - owned_bytes < needed &&
      memory_ - weight_bytes_ - owned_bytes + ReclaimableBytes(level, keep) < needed) {
    return false;
  }
  while (memory_ - weight_bytes_ - owned_bytes < needed) {
    int64_t best = -1;
    for (size_t i = 0; i < models_.size(); ++i) {
      const Model& m = models_[i];
      // One that frees nothing (weights of 0) would only send its waiting
      // requests back to preparing.
      if (!Evictable(static_cast<uint32_t>(i), level, keep) ||
          FreedBytes(static_cast<uint32_t>(i)) == 0) {
        continue;
      }
      // Idle models go before busy ones, then least recently used.
      if (best < 0) {
        best = static_cast<int64_t>(i);
        continue;
      }
      const Model& b = models_[static_cast<size_t>(best)];
      if ((m.live == 0) != (b.live == 0) ? m.live == 0 : m.last_used < b.last_used) {
        best = static_cast<int64_t>(i);
      }
    }
    if (best < 0) return false;
    const auto m = static_cast<uint32_t>(best);
    const bool wanted = models_[m].live > 0;
    Unload(m, commands, demoted);
    if (wanted) {
      // Its waiting requests go back to preparation (kHeldForLoads: they are
      // there already) and will want it back.
      if (demoted != nullptr) demoted->push_back(ModelId(m));
      WantLoad(ModelId(m));
    }
  }
  return true;
}

void ModelResidency::PlanUnloads(absl::Time now, std::vector<ModelCommand>* commands) {
  if (!enabled_) return;
  for (size_t i = 0; i < models_.size(); ++i) {
    const Model& m = models_[i];
    if (m.resident && !m.loading && m.live == 0 && m.keep_alive != absl::InfiniteDuration() &&
        now - m.last_used >= m.keep_alive &&
        Evictable(static_cast<uint32_t>(i), Reclaim::kIdle, ModelId())) {
      Unload(static_cast<uint32_t>(i), commands);
    }
  }
}

absl::Time ModelResidency::NextUnloadTime() const {
  absl::Time next = absl::InfiniteFuture();
  if (!enabled_) return next;
  for (const Model& m : models_) {
    if (m.resident && !m.loading && m.live == 0 && m.keep_alive != absl::InfiniteDuration()) {
      next = std::min(next, m.last_used + m.keep_alive);
    }
  }
  return next;
}

void ModelResidency::PlanLoads(int32_t owned_blocks, std::vector<ModelCommand>* commands) {
  if (!enabled_) return;
  // Loads take only memory KV will not want soon: not the room made for it
  // in this plan, nor what requests holding KV need to grow to their full
  // length. A load into it would preempt that growth while it loads, and
  // be unloaded by the next growth, again and again.
  const int64_t kv_blocks =
      std::max({int64_t{owned_blocks}, int64_t{room_made_blocks_}, pinned_full_blocks_});
  const int64_t owned_bytes = kv_blocks * block_bytes_;
  room_made_blocks_ = 0;
  int32_t loads = 0;
  // Adapters first, and never held up by a base model that does not fit:
  // an adapter's waiting requests are what keep its base busy, so a model
  // waiting for the base's memory could otherwise wait for the adapter
  // forever. Once loading, an adapter makes its base busy for good, so the
  // base models below may not take it as a base held only for loads.
  for (const bool adapters : {true, false}) {
    size_t kept = 0;
    // Base models load in request order: one that does not fit yet blocks
    // the ones behind it, so a big model is not starved by small ones.
    bool blocked = false;
    for (size_t q = 0; q < load_queue_.size(); ++q) {
      const uint32_t id = load_queue_[q];
      Model& m = models_[id];
      if (m.live == 0) {
        m.load_queued = false;  // Everyone who wanted it has gone.
        continue;
      }
      const bool issued = (m.base >= 0) == adapters && loads < max_loads_ &&
                          (adapters || !blocked) && TryLoad(id, owned_bytes, commands);
      if (issued) {
        ++loads;
        continue;
      }
      if (!adapters && m.base < 0) blocked = true;
      // A base unloaded since it was asked for is asked for again.
      if (m.base >= 0 && !models_[static_cast<size_t>(m.base)].resident) WantLoad(ModelId(id));
      load_queue_[kept++] = id;
    }
    load_queue_.resize(kept);
  }
}

bool ModelResidency::TryLoad(uint32_t id, int64_t owned_bytes,
                             std::vector<ModelCommand>* commands) {
  // An adapter waits for its base and for a slot. It may unload idle
  // models, then bases kept only by requests waiting for an adapter of
  // theirs to load (those load later, not never), when its own requests
  // can run once it is ready: not a base only its adapters' requests want,
  // which would just be the next base held only for loads (two such would
  // unload each other in turn).
  const Model& m = models_[id];
  if (m.base >= 0 && !MayLoadAdapter(id, commands)) return false;
  const ModelId self(id);
  if (EvictFor(m.weights, owned_bytes, Reclaim::kIdle, self, commands, nullptr)) {
    StartLoad(id, commands);
    return true;
  }
  if ((m.base < 0 && HeldOnlyForLoads(id)) ||
      !EvictFor(m.weights, owned_bytes, Reclaim::kHeldForLoads, self, commands, nullptr)) {
    return false;
  }
  StartLoad(id, commands);
  return true;
}

void ModelResidency::StartLoad(uint32_t id, std::vector<ModelCommand>* commands) {
  Model& m = models_[id];
  m.load_queued = false;
  m.loading = true;
  m.resident = true;  // Its memory is taken from now on.
  if (m.base >= 0) ++resident_adapters_;
  weight_bytes_ += m.weights;
  Recompute();
  commands->push_back({ModelCommandKind::kLoad, ModelId(id)});
}

bool ModelResidency::MakeRoomForBlocks(int32_t blocks, int32_t owned_blocks, ModelId keep,
                                       std::vector<ModelCommand>* commands,
                                       std::vector<ModelId>* demoted) {
  if (!enabled_) return false;
  const int64_t needed = int64_t{owned_blocks + blocks} * block_bytes_;
  if (!EvictFor(needed, 0, Reclaim::kIdle, keep, commands, demoted) &&
      !EvictFor(needed, 0, Reclaim::kWaitingOnly, keep, commands, demoted)) {
    return false;
  }
  room_made_blocks_ = std::max(room_made_blocks_, owned_blocks + blocks);
  return true;
}

void ModelResidency::FinishLoads(const std::vector<ModelCommand>& commands,
                                 const std::vector<ModelId>& failed,
                                 std::vector<ModelId>* loaded) {
  for (const ModelCommand& c : commands) {
    if (c.kind != ModelCommandKind::kLoad) continue;
    Model& m = models_[c.model.value()];
    m.loading = false;
    if (std::find(failed.begin(), failed.end(), c.model) != failed.end()) {
      m.resident = false;
      if (m.base >= 0) --resident_adapters_;
      weight_bytes_ -= m.weights;
      Recompute();
    } else {
      loaded->push_back(c.model);
    }
  }
}

}  // namespace hearth::internal
