#include "swap_store.h"

#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hearth::llama_cpp {
namespace {

std::string Blocks(absl::Span<const BlockId> blocks) {
  return absl::StrJoin(blocks, ",", [](std::string* out, BlockId b) {
    absl::StrAppend(out, b.value());
  });
}

}  // namespace

void SwapStore::Erase(BlockId key) {
  auto it = records_.find(key);
  if (it == records_.end()) return;
  for (BlockId b : it->second.host) owner_.erase(b);
  bytes_ -= static_cast<int64_t>(it->second.state.size());
  records_.erase(it);
}

absl::Status SwapStore::Save(llama_context* ctx, llama_seq_id seq, std::vector<BlockId> host,
                             int32_t positions, std::vector<TokenId> tokens) {
  if (host.empty()) return absl::InvalidArgumentError("a swap-out names no host block");
  // A host block named again was freed: the record it was part of belongs
  // to a request that ended while swapped out.
  for (BlockId b : host) {
    if (auto it = owner_.find(b); it != owner_.end()) Erase(it->second);
  }
  Saved saved;
  saved.state.resize(llama_state_seq_get_size(ctx, seq));
  const size_t wrote = llama_state_seq_get_data(ctx, saved.state.data(), saved.state.size(), seq);
  if (wrote == 0) {
    return absl::InternalError(absl::StrCat("llama_state_seq_get_data saved nothing for sequence ",
                                            seq, "; see llama.cpp's error log"));
  }
  saved.state.resize(wrote);
  saved.positions = positions;
  saved.tokens = std::move(tokens);
  saved.host = std::move(host);
  const BlockId key = saved.host.front();
  for (BlockId b : saved.host) owner_[b] = key;
  bytes_ += static_cast<int64_t>(saved.state.size());
  records_[key] = std::move(saved);
  return absl::OkStatus();
}

absl::StatusOr<SwapStore::Saved> SwapStore::Take(RequestId id, absl::Span<const BlockId> host) {
  auto it = host.empty() ? records_.end() : records_.find(host.front());
  if (it == records_.end()) {
    return absl::NotFoundError(absl::StrCat("request ", id.ToString(), " swaps in host blocks [",
                                            Blocks(host), "] that hold no swapped-out sequence"));
  }
  if (!absl::c_equal(it->second.host, host)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "request ", id.ToString(), " swaps in host blocks [", Blocks(host),
        "] but they were swapped out as [", Blocks(it->second.host),
        "]; the llama.cpp executor swaps whole sequences only"));
  }
  Saved saved = std::move(it->second);
  records_.erase(it);
  for (BlockId b : saved.host) owner_.erase(b);
  bytes_ -= static_cast<int64_t>(saved.state.size());
  return saved;
}

absl::Status SwapStore::Restore(llama_context* ctx, const Saved& saved, llama_seq_id seq) {
  if (llama_state_seq_set_data(ctx, saved.state.data(), saved.state.size(), seq) == 0) {
    return absl::InternalError(absl::StrCat(
        "llama_state_seq_set_data could not restore ", saved.positions,
        " positions into sequence ", seq, " (no room for its cells)"));
  }
  return absl::OkStatus();
}

}  // namespace hearth::llama_cpp
