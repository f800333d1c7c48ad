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
  const BlockAllocator& blocks = kv_.allocator();
  std::vector<int32_t> refs(static_cast<size_t>(blocks.num_device_blocks()), 0);
  std::vector<uint8_t> host_used(static_cast<size_t>(blocks.num_host_blocks()), 0);
  for (const auto& [id, slot] : table_.live()) {
    const RequestRecord& r = table_[slot];
    if (r.id != id) return Broken("slot ", slot, " holds ", r.id, " but is mapped from ", id);
    if (absl::Status s = CheckRecord(r, refs, host_used); !s.ok()) return s;
    if (absl::Status s = CheckPhase(r); !s.ok()) return s;
  }
  if (absl::Status s = CheckClasses(); !s.ok()) return s;
  if (absl::Status s = CheckCounts(); !s.ok()) return s;
  if (absl::Status s = inbox_.Audit(table_.num_live()); !s.ok()) return s;
  if (std::string e = encoder_.cache().Check(); !e.empty()) return Broken(e);
  return CheckBlocks(refs, host_used);
}

absl::Status Scheduler::Impl::CheckRecord(const RequestRecord& r, std::vector<int32_t>& refs,
                                          std::vector<uint8_t>& host_used) const {
  const internal::SequenceKv& seq = r.kv;
  absl::flat_hash_set<uint32_t> own;
  for (BlockId b : seq.device) {
    if (!b.valid() || b.value() >= refs.size()) {
      return Broken("request ", r.id, " holds out-of-range device block ", b);
    }
    if (!own.insert(b.value()).second) {
      return Broken("request ", r.id, " holds device block ", b, " twice");
    }
    ++refs[b.value()];
  }
  for (BlockId b : seq.host) {
    if (!b.valid() || b.value() >= host_used.size() || host_used[b.value()]++) {
      return Broken("host block ", b, " of request ", r.id, " is out of range or shared");
    }
  }
  if (r.computed < 0 || r.computed > r.length()) {
    return Broken("request ", r.id, " has computed ", r.computed, " of length ", r.length());
  }
  if (r.embed ? (r.output_tokens != 0 || r.max_new_tokens != 0 || r.computed == r.length())
              : r.output_tokens >= r.max_new_tokens) {
    return Broken(r.embed ? "embedding " : "request ", r.id, " is live with ", r.output_tokens,
                  " of max ", r.max_new_tokens, " tokens, ", r.computed, " of ", r.length(),
                  " positions computed");
  }
  if (r.group_wait && r.phase != RequestPhase::kHeld) {
    return Broken("sample ", r.id, " waits for its group's prompt but is ",
                  std::string(PhaseName(r.phase)));
  }
  if (capacity_.borrowing(r.slot) && r.phase != RequestPhase::kRunning) {
    return Broken("borrowing request ", r.id, " is not running");
  }
  return absl::OkStatus();
}

absl::Status Scheduler::Impl::CheckPhase(const RequestRecord& r) const {
  const internal::SequenceKv& seq = r.kv;
  const bool no_list = r.list == RunList::kNone;
  switch (r.phase) {
    case RequestPhase::kWaiting:
      if (!seq.device.empty() || !seq.host.empty() || r.computed != 0 || !no_list) {
        return Broken("waiting request ", r.id, " holds blocks, progress or a run list");
      }
      return absl::OkStatus();
    case RequestPhase::kSwapped:
      if (!seq.device.empty() || !no_list ||
          static_cast<int32_t>(seq.host.size()) < BlocksFor(r.computed)) {
        return Broken("swapped request ", r.id, " has device blocks, a run list or too few host blocks");
      }
      return absl::OkStatus();
    case RequestPhase::kRunning: {
      const std::vector<uint32_t>& list = table_.list(r.list);
      if (no_list || r.list_index < 0 || static_cast<size_t>(r.list_index) >= list.size() ||
          list[r.list_index] != r.slot) {
        return Broken("running request ", r.id, " is not where its run list index says");
      }
      if ((r.list == RunList::kDecoding) != r.decoding()) {
        return Broken("running request ", r.id, " is in the wrong run list");
      }
      if (static_cast<int32_t>(seq.device.size()) < BlocksFor(r.computed) || !seq.host.empty()) {
        return Broken("running request ", r.id, " has ", seq.device.size(), " device blocks for ",
                      r.computed, " computed tokens, or host blocks");
      }
      return absl::OkStatus();
    }
    case RequestPhase::kPreparing:
      if (!seq.device.empty() || !seq.host.empty() || !no_list || residency_.ready(r.model)) {
        return Broken("preparing request ", r.id, " holds blocks or its model is ready");
      }
      return absl::OkStatus();
    case RequestPhase::kHeld:
      if (!seq.device.empty() || !seq.host.empty() || !no_list || r.computed != 0 ||
          r.first_admit_time != absl::InfiniteFuture()) {
        return Broken("held request ", r.id, " holds blocks, runs or was admitted");
      }
      return absl::OkStatus();
    default:
      return Broken("request ", r.id, " is live in terminal phase ", PhaseName(r.phase));
  }
}

absl::Status Scheduler::Impl::CheckClasses() const {
  const size_t n = options_.work_classes.size();
  std::vector<int32_t> running(n, 0), blocks(n, 0), borrowed(n, 0), reserved(n, 0);
  for (const auto& [id, slot] : table_.live()) {
    const RequestRecord& r = table_[slot];
    if (r.phase == RequestPhase::kRunning) ++running[r.work_class.value()];
    if (r.phase != RequestPhase::kRunning && r.kv.class_reserve != 0) {
      return Broken("request ", r.id, " reserves ", r.kv.class_reserve, " blocks while ",
                    PhaseName(r.phase));
    }
    blocks[r.work_class.value()] += table_[slot].kv.num_blocks();
    reserved[r.work_class.value()] += r.kv.class_reserve;
    if (capacity_.borrowing(slot)) ++borrowed[r.work_class.value()];
  }
  for (size_t c = 0; c < n; ++c) {
    const WorkClassConfig& cfg = options_.work_classes[c];
    const auto cls = static_cast<uint32_t>(c);
    // Beyond a limit only by borrowing: an over-limit class has borrowers,
    // who are the first to be reclaimed.
    const bool over_cap = cfg.max_running > 0 && running[c] > cfg.max_running;
    if (over_cap && running[c] - cfg.max_running > borrowed[c]) {
      return Broken("class ", cfg.name, " runs ", running[c], " over its cap ", cfg.max_running,
                    " with only ", borrowed[c], " sequences marked as borrowing");
    }
    if (cfg.kv_block_budget > 0 && blocks[c] > cfg.kv_block_budget && borrowed[c] == 0) {
      return Broken("class ", cfg.name, " holds ", blocks[c], " blocks over its budget ",
                    cfg.kv_block_budget, " without any sequence marked as borrowing");
    }
    const internal::ClassBlockLedger& ledger = kv_.classes();
    if (running[c] != capacity_.running(cls) || blocks[c] != ledger.held(cls) ||
        reserved[c] != ledger.reserved(cls)) {
      return Broken("class ", cfg.name, " counts ", capacity_.running(cls), " running / ",
                    ledger.held(cls), " blocks / ", ledger.reserved(cls),
                    " reserved but records say ", running[c], " / ", blocks[c], " / ",
                    reserved[c]);
    }
    if (!cfg.borrow && !capacity_.Within(cls, 0, 0)) {
      return Broken("class ", cfg.name, " exceeds its hard limits: ", running[c], " running (cap ",
                    cfg.max_running, "), ", blocks[c], " blocks (budget ", cfg.kv_block_budget, ")");
    }
  }
  return absl::OkStatus();
}

absl::Status Scheduler::Impl::CheckCounts() const {
  std::vector<int32_t> in_phase(internal::RequestTable::kNumPhases, 0);
  int32_t borrowers = 0;
  for (const auto& [id, slot] : table_.live()) {
    ++in_phase[static_cast<size_t>(table_[slot].phase)];
    if (capacity_.borrowing(slot)) ++borrowers;
  }
  for (RequestPhase p : {RequestPhase::kPreparing, RequestPhase::kWaiting,
                         RequestPhase::kSwapped, RequestPhase::kHeld}) {
    if (in_phase[static_cast<size_t>(p)] != count(p)) {
      return Broken(count(p), " requests counted as ", PhaseName(p), " but records say ",
                    in_phase[static_cast<size_t>(p)]);
    }
  }
  if (in_phase[static_cast<size_t>(RequestPhase::kRunning)] != running_count()) {
    return Broken(in_phase[static_cast<size_t>(RequestPhase::kRunning)],
                  " requests are running but the run lists hold ", running_count());
  }
  if (borrowers != capacity_.num_borrowers()) {
    return Broken(capacity_.num_borrowers(), " borrowers listed but records say ", borrowers);
  }
  uint32_t prev = internal::ClassCapacity::kNone;
  int32_t walked = 0;
  for (uint32_t s = capacity_.first_borrower(); s != internal::ClassCapacity::kNone;
       s = capacity_.next_borrower(s)) {
    if (!capacity_.borrowing(s) || capacity_.prev_borrower(s) != prev ||
        ++walked > capacity_.num_borrowers()) {
      return Broken("the borrower list is broken at slot ", s);
    }
    prev = s;
  }
  if (walked != capacity_.num_borrowers() || prev != capacity_.last_borrower()) {
    return Broken("the borrower list links ", walked, " of ", capacity_.num_borrowers(),
                  " borrowers");
  }
  int32_t reserve = 0;
  for (uint32_t slot : table_.prefilling()) reserve += table_[slot].kv.prefill_reserve;
  if (reserve != kv_.prefill_reserved()) {
    return Broken("prefill reserve ", kv_.prefill_reserved(), " but prefilling requests reserve ",
                  reserve);
  }
  if (kv_.allocator().num_owned() > residency_.kv_block_limit()) {
    return Broken(kv_.allocator().num_owned(),
                  " device blocks owned but resident weights leave room for ",
                  residency_.kv_block_limit());
  }
  if (running_count() > options_.max_running) {
    return Broken(running_count(), " running sequences exceed max_running ", options_.max_running);
  }
  return absl::OkStatus();
}

absl::Status Scheduler::Impl::CheckBlocks(const std::vector<int32_t>& refs,
                                          std::vector<uint8_t>& host_used) const {
  const BlockAllocator& allocator = kv_.allocator();
  const PrefixCache* cache = kv_.prefix_cache();
  for (BlockId b : kv_.deferred_host_releases()) {
    if (!b.valid() || b.value() >= host_used.size() || host_used[b.value()]++) {
      return Broken("host block ", b, " pending release is out of range or shared");
    }
  }
  const int32_t n = allocator.num_device_blocks();
  int32_t states[3] = {0, 0, 0};
  for (int32_t b = 0; b < n; ++b) {
    const BlockId id(static_cast<uint32_t>(b));
    const BlockState state = allocator.state(id);
    ++states[static_cast<int>(state)];
    if (state == BlockState::kCached && (cache == nullptr || !cache->contains_block(id))) {
      return Broken("device block ", b, " is cached but not in the prefix cache");
    }
    if (allocator.ref_count(id) != refs[static_cast<size_t>(b)]) {
      return Broken("device block ", b, " has ref count ", allocator.ref_count(id), " but ",
                    refs[static_cast<size_t>(b)], " block tables hold it");
    }
  }
  const int32_t free = states[static_cast<int>(BlockState::kFree)];
  const int32_t cached = states[static_cast<int>(BlockState::kCached)];
  if (free != allocator.num_free() || cached != allocator.num_cached() ||
      free + cached + states[static_cast<int>(BlockState::kOwned)] != n) {
    return Broken("block states free/cached/owned ", free, "/", cached, "/",
                  states[static_cast<int>(BlockState::kOwned)], " do not add up to ", n,
                  " (allocator says ", allocator.num_free(), "/", allocator.num_cached(), ")");
  }
  for (size_t b = 0; b < host_used.size(); ++b) {
    if ((host_used[b] != 0) != allocator.host_in_use(BlockId(static_cast<uint32_t>(b)))) {
      return Broken("host block ", b, " in-use flag disagrees with the requests holding it");
    }
  }
  if (cache != nullptr && cache->size() > n) {
    return Broken("prefix cache holds ", cache->size(), " entries for ", n, " blocks");
  }
  return absl::OkStatus();
}

}  // namespace hearth
