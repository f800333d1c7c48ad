#include "scheduler/request_table.h"

#include <optional>

namespace hearth::internal {

void RequestTable::Reserve(size_t backlog, size_t running, size_t held) {
  slab_.reserve(backlog);
  slot_of_.reserve(backlog);
  slots_.Reserve(backlog, held);
  decoding_.reserve(running);
  prefilling_.reserve(running);
}

RequestTable::Taken RequestTable::TakeSlot() {
  if (const std::optional<uint32_t> slot = slots_.Take()) return {*slot, false};
  slab_.emplace_back();
  return {static_cast<uint32_t>(slab_.size() - 1), true};
}

uint32_t RequestTable::Unmap(RequestId id) {
  const uint32_t slot = *slot_of_.find(id);
  slot_of_.erase(id);
  return slot;
}

void RequestTable::Link(RequestRecord& r, RunList list) {
  std::vector<uint32_t>& v = list == RunList::kDecoding ? decoding_ : prefilling_;
  r.list = list;
  r.list_index = static_cast<int32_t>(v.size());
  v.push_back(r.slot);
}

void RequestTable::Unlink(RequestRecord& r) {
  std::vector<uint32_t>& v = r.list == RunList::kDecoding ? decoding_ : prefilling_;
  const auto i = static_cast<size_t>(r.list_index);
  if (i + 1 != v.size()) {
    v[i] = v.back();
    slab_[v[i]].list_index = static_cast<int32_t>(i);
  }
  v.pop_back();
  r.list = RunList::kNone;
  r.list_index = -1;
}

}  // namespace hearth::internal
