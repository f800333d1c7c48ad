// File: src/scheduler/scheduler_peer.h
//
// SchedulerPeer: what tests read of a Scheduler beyond its public API (the
// block allocator's per-block state). Engine thread, as for stats(). Not
// part of the public API.

#ifndef HEARTH_SRC_SCHEDULER_SCHEDULER_PEER_H_
#define HEARTH_SRC_SCHEDULER_SCHEDULER_PEER_H_

#include "hearth/scheduler/scheduler.h"
#include "kv/block_allocator.h"

namespace hearth::internal {

struct SchedulerPeer {
  static const BlockAllocator& allocator(const Scheduler& scheduler);
};

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SCHEDULER_SCHEDULER_PEER_H_
