// Scheduler::Impl::CheckInvariants: an O(requests + blocks) audit for tests.

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "scheduler/scheduler_impl.h"

namespace hearth {

using internal::RequestRecord;
using internal::RunList;

namespace {

// Lets ids and strings appear in messages beside numbers.
template <typename T>
decltype(auto) Fmt(const T& v) {
  if constexpr (requires { v.ToString(); }) {
    return v.ToString();
  } else if constexpr (std::is_same_v<T, std::string_view>) {
    return std::string(v);
  } else {
    return (v);
  }
}

template <typename... Parts>
absl::Status Broken(const Parts&... parts) {
  return absl::InternalError(absl::StrCat("invariant violated: ", Fmt(parts)...));
}

}  // namespace

absl::Status Scheduler::Impl::CheckInvariants() const {
  const int32_t n = allocator_.num_device_blocks();
  std::vector<int32_t> refs(static_cast<size_t>(n), 0);
  std::vector<uint8_t> host_used(static_cast<size_t>(allocator_.num_host_blocks()), 0);
  int32_t waiting = 0, swapped = 0, running = 0, preparing = 0;

  for (const auto& [id, slot] : slot_of_) {
    const RequestRecord& r = slab_[slot];
    if (r.id != id) return Broken("slot ", slot, " holds ", r.id, " but is mapped from ", id);
    absl::flat_hash_set<uint32_t> own;
    for (BlockId b : r.device_blocks) {
      if (!b.valid() || b.value() >= static_cast<uint32_t>(n)) {
        return Broken("request ", id, " holds out-of-range device block ", b);
      }
      if (!own.insert(b.value()).second) {
        return Broken("request ", id, " holds device block ", b, " twice");
      }
      ++refs[b.value()];
    }
    for (BlockId b : r.host_blocks) {
      if (!b.valid() || b.value() >= host_used.size() || host_used[b.value()]++) {
        return Broken("host block ", b, " of request ", id, " is out of range or shared");
      }
    }
    if (r.computed < 0 || r.computed > r.length()) {
      return Broken("request ", id, " has computed ", r.computed, " of length ", r.length());
    }
    if (r.output_tokens >= r.max_new_tokens) {
      return Broken("request ", id, " is live with ", r.output_tokens, " of max ",
                    r.max_new_tokens, " tokens");
    }
    switch (r.phase) {
      case RequestPhase::kWaiting:
        ++waiting;
        if (!r.device_blocks.empty() || !r.host_blocks.empty() || r.computed != 0 ||
            r.list != RunList::kNone) {
          return Broken("waiting request ", id, " holds blocks, progress or a run list");
        }
        break;
      case RequestPhase::kSwapped:
        ++swapped;
        if (!r.device_blocks.empty() || r.list != RunList::kNone ||
            static_cast<int32_t>(r.host_blocks.size()) < BlocksFor(r.computed)) {
          return Broken("swapped request ", id, " has device blocks, a run list or too few host blocks");
        }
        break;
      case RequestPhase::kRunning: {
        ++running;
        const std::vector<uint32_t>& list = r.list == RunList::kDecoding ? decoding_ : prefilling_;
        if (r.list == RunList::kNone || r.list_index < 0 ||
            static_cast<size_t>(r.list_index) >= list.size() || list[r.list_index] != slot) {
          return Broken("running request ", id, " is not where its run list index says");
        }
        if ((r.list == RunList::kDecoding) != r.decoding()) {
          return Broken("running request ", id, " is in the wrong run list");
        }
        if (static_cast<int32_t>(r.device_blocks.size()) < BlocksFor(r.computed) ||
            !r.host_blocks.empty()) {
          return Broken("running request ", id, " has ", r.device_blocks.size(),
                        " device blocks for ", r.computed, " computed tokens, or host blocks");
        }
        break;
      }
      case RequestPhase::kPreparing:
        ++preparing;
        if (!r.device_blocks.empty() || !r.host_blocks.empty() || r.list != RunList::kNone ||
            residency_.ready(r.model)) {
          return Broken("preparing request ", id, " holds blocks or its model is ready");
        }
        break;
      default:
        return Broken("request ", id, " is live in terminal phase ", PhaseName(r.phase));
    }
  }
  std::vector<int32_t> class_running(options_.work_classes.size(), 0);
  std::vector<int32_t> class_blocks(options_.work_classes.size(), 0);
  for (const auto& [id, slot] : slot_of_) {
    const RequestRecord& r = slab_[slot];
    if (r.phase == RequestPhase::kRunning) ++class_running[r.work_class.value()];
    class_blocks[r.work_class.value()] += static_cast<int32_t>(r.device_blocks.size());
    if (r.borrowed && (r.borrowed_index < 0 ||
                       static_cast<size_t>(r.borrowed_index) >= borrowed_.size() ||
                       borrowed_[r.borrowed_index] != slot || r.phase != RequestPhase::kRunning)) {
      return Broken("borrowed request ", id, " is not where its borrowed index says, or not running");
    }
  }
  std::vector<int32_t> class_borrowed(options_.work_classes.size(), 0);
  for (uint32_t slot : borrowed_) ++class_borrowed[slab_[slot].work_class.value()];
  for (size_t c = 0; c < class_running.size(); ++c) {
    const WorkClassConfig& cfg = options_.work_classes[c];
    // Beyond a limit only by borrowing: an over-limit class has borrowers,
    // who are the first to be reclaimed.
    const bool over_cap = cfg.max_running > 0 && class_running[c] > cfg.max_running;
    if (over_cap && class_running[c] - cfg.max_running > class_borrowed[c]) {
      return Broken("class ", cfg.name, " runs ", class_running[c], " over its cap ", cfg.max_running,
                    " with only ", class_borrowed[c], " sequences marked as borrowing");
    }
    if (cfg.kv_block_budget > 0 && class_blocks[c] > cfg.kv_block_budget && class_borrowed[c] == 0) {
      return Broken("class ", cfg.name, " holds ", class_blocks[c], " blocks over its budget ",
                    cfg.kv_block_budget, " without any sequence marked as borrowing");
    }
    if (class_running[c] != class_running_[c] || class_blocks[c] != class_blocks_[c]) {
      return Broken("class ", cfg.name, " counts ", class_running_[c], " running / ", class_blocks_[c],
                    " blocks but records say ", class_running[c], " / ", class_blocks[c]);
    }
    if (!cfg.borrow && ((cfg.max_running > 0 && class_running[c] > cfg.max_running) ||
                        (cfg.kv_block_budget > 0 && class_blocks[c] > cfg.kv_block_budget))) {
      return Broken("class ", cfg.name, " exceeds its hard limits: ", class_running[c], " running (cap ",
                    cfg.max_running, "), ", class_blocks[c], " blocks (budget ", cfg.kv_block_budget, ")");
    }
  }
  if (waiting != num_waiting_ || swapped != num_swapped_ ||
      running != running_count()) {
    return Broken("counts waiting/swapped/running ", num_waiting_, "/", num_swapped_, "/",
                  running_count(), " but records say ", waiting, "/", swapped, "/", running);
  }
  int32_t reserve = 0;
  for (uint32_t slot : prefilling_) reserve += slab_[slot].prefill_reserve;
  if (reserve != prefill_reserved_) {
    return Broken("prefill reserve ", prefill_reserved_, " but prefilling requests reserve ", reserve);
  }
  if (preparing != num_preparing_) {
    return Broken(num_preparing_, " preparing counted but records say ", preparing);
  }
  if (allocator_.num_owned() > residency_.kv_block_limit()) {
    return Broken(allocator_.num_owned(), " device blocks owned but resident weights leave room for ",
                  residency_.kv_block_limit());
  }
  if (running_count() > options_.max_running) {
    return Broken(running_count(), " running sequences exceed max_running ", options_.max_running);
  }
  for (BlockId b : host_release_after_step_) {
    if (!b.valid() || b.value() >= host_used.size() || host_used[b.value()]++) {
      return Broken("host block ", b, " pending release is out of range or shared");
    }
  }
  int32_t free = 0, cached = 0, owned = 0;
  for (int32_t b = 0; b < n; ++b) {
    const BlockId id(static_cast<uint32_t>(b));
    switch (allocator_.state(id)) {
      case BlockState::kFree: ++free; break;
      case BlockState::kCached:
        ++cached;
        if (!prefix_cache_.has_value() || !prefix_cache_->contains_block(id)) {
          return Broken("device block ", b, " is cached but not in the prefix cache");
        }
        break;
      case BlockState::kOwned: ++owned; break;
    }
    if (allocator_.ref_count(id) != refs[static_cast<size_t>(b)]) {
      return Broken("device block ", b, " has ref count ", allocator_.ref_count(id), " but ",
                    refs[static_cast<size_t>(b)], " block tables hold it");
    }
  }
  if (free != allocator_.num_free() || cached != allocator_.num_cached() ||
      free + cached + owned != n) {
    return Broken("block states free/cached/owned ", free, "/", cached, "/", owned,
                  " do not add up to ", n, " (allocator says ", allocator_.num_free(), "/",
                  allocator_.num_cached(), ")");
  }
  for (size_t b = 0; b < host_used.size(); ++b) {
    if ((host_used[b] != 0) != allocator_.host_in_use(BlockId(static_cast<uint32_t>(b)))) {
      return Broken("host block ", b, " in-use flag disagrees with the requests holding it");
    }
  }
  if (prefix_cache_.has_value() && prefix_cache_->size() > n) {
    return Broken("prefix cache holds ", prefix_cache_->size(), " entries for ", n, " blocks");
  }
  return absl::OkStatus();
}

}  // namespace hearth
