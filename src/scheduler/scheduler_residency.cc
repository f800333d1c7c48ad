// File: src/scheduler/scheduler_residency.cc
//
// The core's side of model residency (ModelResidency decides which models
// load and unload): requests whose model finished loading go on to wait for
// admission, requests whose model was unloaded go back to preparation, a
// failed load ends everyone waiting for it, and memory the KV cache needs
// is taken back from idle models' weights.

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/options_validation.h"
#include "scheduler/scheduler_impl.h"

namespace hearth {

using internal::RequestRecord;

void Scheduler::Impl::PromotePrepared(absl::Time now) {
  for (ModelId m : model_queues_.loaded) {
    for (const auto& [slot, id] : model_queues_.preparing[m.value()]) {
      RequestRecord& r = table_[slot];
      if (r.id != id || r.phase != RequestPhase::kPreparing) continue;  // Ended meanwhile.
      SetPhase(r, RequestPhase::kWaiting, now);
    }
    model_queues_.preparing[m.value()].clear();
  }
  model_queues_.loaded.clear();
}

void Scheduler::Impl::DemoteUnloaded(absl::Time now) {
  if (model_queues_.demoted.empty()) return;
  // Rare (a model unloaded while requests for it still wait): a scan of the
  // live requests is simpler than keeping per-model waiting lists. The slab,
  // not the id map, so the order is deterministic; sorted so that model_queues_.preparing
  // stays in arrival order.
  std::vector<RequestRecord*> moved;
  for (RequestRecord& r : table_.slots()) {
    if (r.id.valid() && r.phase == RequestPhase::kWaiting &&
        std::find(model_queues_.demoted.begin(), model_queues_.demoted.end(), r.model) !=
            model_queues_.demoted.end()) {
      moved.push_back(&r);
    }
  }
  std::sort(moved.begin(), moved.end(), [](const RequestRecord* a, const RequestRecord* b) {
    return a->arrival_seq < b->arrival_seq;
  });
  for (RequestRecord* r : moved) {
    SetPhase(*r, RequestPhase::kPreparing, now);
    model_queues_.preparing[r->model.value()].emplace_back(r->slot, r->id);
  }
  model_queues_.demoted.clear();
}

void Scheduler::Impl::FinishModelLoads(const StepOutcome& outcome, absl::Time now) {
  model_queues_.failed.clear();
  for (const ModelLoadFailure& f : outcome.failed_loads) model_queues_.failed.push_back(f.model);
  residency_.FinishLoads(step_.plan->model_commands, model_queues_.failed, &model_queues_.loaded);
  PromotePrepared(now);
  for (const ModelLoadFailure& f : outcome.failed_loads) {
    // Everyone waiting for the model ends, with the engine's reason; a later
    // request for it asks for a new load. Requests of its adapters waited
    // for it too: they end as well rather than ask for it forever.
    const std::string& name = models_.Get(f.model)->config.name;
    for (size_t m = 0; m < model_queues_.preparing.size(); ++m) {
      const internal::ModelEntry& entry = *models_.Get(ModelId(static_cast<uint32_t>(m)));
      const bool adapter = entry.base == static_cast<int32_t>(f.model.value());
      if (m != f.model.value() && !adapter) continue;
      auto& waiting = model_queues_.preparing[m];
      for (const auto& [slot, id] : waiting) {
        RequestRecord& r = table_[slot];
        if (r.id != id || r.phase != RequestPhase::kPreparing) continue;
        Terminate(r, RequestPhase::kFailed, FinishReason::kNone,
                  adapter ? absl::StrCat("base model \"", name, "\" of adapter \"",
                                         entry.config.name, "\" failed to load: ", f.error)
                          : absl::StrCat("model \"", name, "\" failed to load: ", f.error),
                  now);
      }
      waiting.clear();
    }
  }
}

bool Scheduler::Impl::MakeRoomInMemory(int32_t blocks, ModelId keep) {
  if (!residency_.enabled()) return false;
  const int32_t owned = kv_.allocator().num_owned();
  if (residency_.MakeRoomForBlocks(blocks, owned, keep, &step_.plan->model_commands,
                                   &model_queues_.demoted)) {
    return true;
  }
  // Swapped requests pin their model (their KV would need it back). When
  // even unloading every other unpinned model is not enough, they give up
  // their host copies and recompute later, so their models can go: without
  // this, a request could wait forever behind one whose model it evicts.
  bool unpinned = false;
  // The slab, not the id map: its order is deterministic.
  for (RequestRecord& r : table_.slots()) {
    if (!r.id.valid() || r.phase != RequestPhase::kSwapped || r.model == keep) continue;
    kv_.DeferHostRelease(r.kv);
    r.computed = 0;
    SetPhase(r, RequestPhase::kWaiting, step_.plan->now);
    unpinned = true;
  }
  return unpinned &&
         residency_.MakeRoomForBlocks(blocks, kv_.allocator().num_owned(), keep,
                                      &step_.plan->model_commands, &model_queues_.demoted);
}

}  // namespace hearth
