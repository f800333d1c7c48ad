// Engine-side block tables and StepPlan checks (see sequence_tables.h).

#include "exec/sequence_tables.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"

namespace hearth::exec_internal {
namespace {

absl::Status CheckCopyList(const std::vector<BlockCopy>& copies,
                           const char* name, int32_t source_blocks,
                           const char* source_tier, int32_t target_blocks,
                           const char* target_tier) {
  absl::flat_hash_set<uint32_t> targets;
  for (size_t i = 0; i < copies.size(); ++i) {
    const BlockCopy& c = copies[i];
    if (!c.source.valid() || c.source.value() >= uint32_t(source_blocks)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "plan.%s[%d] (request %d): source block %d is not a %s block "
          "(allowed: [0, %d))",
          name, i, c.id.value(), c.source.value(), source_tier, source_blocks));
    }
    if (!c.target.valid() || c.target.value() >= uint32_t(target_blocks)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "plan.%s[%d] (request %d): target block %d is not a %s block "
          "(allowed: [0, %d))",
          name, i, c.id.value(), c.target.value(), target_tier, target_blocks));
    }
    if (!targets.insert(c.target.value()).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "plan.%s[%d] (request %d): target block %d is written twice in one "
          "step",
          name, i, c.id.value(), c.target.value()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SequenceTables::ValidateCopies(const StepPlan& plan) const {
  const int32_t dev = geometry_.num_device_blocks;
  const int32_t host = geometry_.num_host_blocks;
  absl::Status s =
      CheckCopyList(plan.swap_out, "swap_out", dev, "device", host, "host");
  if (s.ok()) {
    s = CheckCopyList(plan.swap_in, "swap_in", host, "host", dev, "device");
  }
  if (s.ok()) {
    s = CheckCopyList(plan.copy_on_write, "copy_on_write", dev, "device", dev,
                      "device");
  }
  return s;
}

void SequenceTables::DropEnded(const StepPlan& plan) {
  for (const Preemption& p : plan.preempted) entries_.erase(p.id);
  for (const ReleasedSequence& r : plan.released) entries_.erase(r.id);
}

std::string SequenceTables::CheckSequence(const ScheduledSequence& s) const {
  if (s.model != geometry_.model) {
    return absl::StrFormat("sequence %d names model %d; this executor serves "
                           "model %d only",
                           s.id.value(), s.model.value(), geometry_.model.value());
  }
  if (s.num_tokens < 1 || s.start_position < 0 ||
      int64_t{s.start_position} + s.num_tokens > geometry_.max_positions) {
    return absl::StrFormat(
        "sequence %d: positions [%d, %d + %d) are invalid (allowed: "
        "num_tokens >= 1 within [0, %d))",
        s.id.value(), s.start_position, s.start_position, s.num_tokens,
        geometry_.max_positions);
  }
  if (s.input_pending) {
    if (s.num_tokens != 1 || !s.token_ids.empty()) {
      return absl::StrFormat(
          "sequence %d: input_pending with %d positions and %d token ids (allowed: one "
          "position, no ids)",
          s.id.value(), s.num_tokens, s.token_ids.size());
    }
  } else if (s.token_ids.size() != size_t(s.num_tokens)) {
    return absl::StrFormat(
        "sequence %d: plan carries %d token ids for %d positions; this "
        "executor computes real tokens and needs requests submitted with "
        "prompt_token_ids",
        s.id.value(), s.token_ids.size(), s.num_tokens);
  }
  for (TokenId t : s.token_ids) {
    if (t < 0 || t >= geometry_.vocab_size) {
      return absl::StrFormat("sequence %d: token id %d outside [0, %d)", s.id.value(),
                             t, geometry_.vocab_size);
    }
  }
  return "";
}

std::string SequenceTables::UpdateTable(const ScheduledSequence& s) {
  if (s.full_block_table) {
    Entry& e = entries_[s.id];
    e.table.assign(s.block_table.begin(), s.block_table.end());
    // A (re)appearing sequence brings its cached prefix (prefix-cache hit or
    // swapped-in progress) in its blocks.
    e.cached = s.start_position;
  } else {
    auto it = entries_.find(s.id);
    if (it == entries_.end()) {
      return absl::StrFormat(
          "sequence %d: not full_block_table, but the engine holds no table "
          "for it (first appearance, preemption and swap-in must send the "
          "full table)",
          s.id.value());
    }
    Entry& e = it->second;
    if (s.start_position != e.cached) {
      return absl::StrFormat(
          "sequence %d: start_position %d, but the engine has computed %d "
          "positions",
          s.id.value(), s.start_position, e.cached);
    }
    e.table.insert(e.table.end(), s.new_blocks.begin(), s.new_blocks.end());
    if (!std::equal(e.table.begin(), e.table.end(), s.block_table.begin(),
                    s.block_table.end())) {
      return absl::StrFormat(
          "sequence %d: engine table (%d blocks) plus new_blocks differs from "
          "the plan's block_table (%d blocks)",
          s.id.value(), e.table.size() - s.new_blocks.size(), s.block_table.size());
    }
  }
  const Entry& e = entries_[s.id];
  const int64_t needed = int64_t{s.start_position} + s.num_tokens;
  if (int64_t(e.table.size()) * geometry_.block_size < needed) {
    return absl::StrFormat(
        "sequence %d: block table of %d blocks holds %d positions, the step "
        "needs %d",
        s.id.value(), e.table.size(), e.table.size() * geometry_.block_size, needed);
  }
  // Blocks kept from earlier steps were checked when they arrived.
  const absl::Span<const BlockId> arrived =
      s.full_block_table ? absl::Span<const BlockId>(e.table) : s.new_blocks;
  for (BlockId b : arrived) {
    if (!b.valid() || b.value() >= uint32_t(geometry_.num_device_blocks)) {
      return absl::StrFormat(
          "sequence %d: block table names block %d (allowed: [0, %d))", s.id.value(),
          b.value(), geometry_.num_device_blocks);
    }
  }
  return "";
}

void SequenceTables::CheckSharedWrites(
    const StepPlan& plan, std::vector<PreparedSequence>& out) const {
  // How many sequences of this step hold each block; a sequence holding a
  // block twice counts once (its last holder is remembered).
  holders_.clear();
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].error.empty()) continue;
    for (BlockId b : *out[i].table) {
      Holders& h = holders_[b.value()];
      if (h.last != i) {
        h.last = i;
        ++h.count;
      }
    }
  }
  const int32_t bs = geometry_.block_size;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].error.empty()) continue;
    const ScheduledSequence& s = plan.sequences[i];
    const int32_t first = s.start_position / bs;
    const int32_t last = (s.start_position + s.num_tokens - 1) / bs;
    for (int32_t k = first; k <= last; ++k) {
      const BlockId b = (*out[i].table)[k];
      if (holders_.at(b.value()).count > 1) {
        out[i].error = absl::StrFormat(
            "sequence %d writes positions into block %d, which another "
            "sequence of this step also holds (missing copy-on-write)",
            s.id.value(), b.value());
        break;
      }
    }
  }
}

std::vector<PreparedSequence> SequenceTables::PrepareSequences(
    const StepPlan& plan) {
  std::vector<PreparedSequence> out(plan.sequences.size());
  absl::flat_hash_map<RequestId, int32_t> count;
  for (const ScheduledSequence& s : plan.sequences) ++count[s.id];
  for (size_t i = 0; i < plan.sequences.size(); ++i) {
    const ScheduledSequence& s = plan.sequences[i];
    if (count[s.id] > 1) {
      out[i].error = absl::StrFormat(
          "sequence %d appears twice in step %d", s.id.value(), plan.step);
      continue;
    }
    std::string error = CheckSequence(s);
    if (error.empty()) error = UpdateTable(s);
    if (error.empty() && s.input_pending) {
      const Entry& e = entries_[s.id];
      if (e.sampled < 0 || e.cached != s.start_position) {
        error = absl::StrFormat(
            "sequence %d: input_pending at position %d, but this executor sampled no token "
            "there for it in its previous step",
            s.id.value(), s.start_position);
      } else {
        out[i].pending_input = e.sampled;
      }
    }
    if (!error.empty()) {
      entries_.erase(s.id);
      out[i].error = std::move(error);
    }
  }
  // Pointers are taken only now: inserting above may rehash the map.
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].error.empty()) {
      out[i].table = &entries_.at(plan.sequences[i].id).table;
    }
  }
  CheckSharedWrites(plan, out);
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].error.empty()) {
      entries_.erase(plan.sequences[i].id);
      out[i].table = nullptr;
    }
  }
  return out;
}

void SequenceTables::Advance(RequestId id, int32_t positions) {
  auto it = entries_.find(id);
  if (it != entries_.end()) {
    it->second.cached = positions;
    it->second.sampled = -1;
  }
}

void SequenceTables::NoteSampled(RequestId id, TokenId token) {
  auto it = entries_.find(id);
  if (it != entries_.end()) it->second.sampled = token;
}

}  // namespace hearth::exec_internal
