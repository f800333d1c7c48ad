// File: hearth/policy/fifo.h
//
// First come, first served: admits in arrival order (a recompute-preempted
// request keeps its original place), never preempts a running request for a
// waiting one, and on memory shortage preempts the latest arrival first (as
// vLLM does). The baseline every other policy is measured against. It ranks
// calls, not agent workflows: a workflow's next call queues behind everything
// that arrived before it (the tree policies' arrival-order leaf gives it a
// head start; PolicyTreeConfig::workflow_head_start).

#ifndef HEARTH_POLICY_FIFO_H_
#define HEARTH_POLICY_FIFO_H_

#include <memory>

#include "hearth/policy/policy.h"

namespace hearth {

std::unique_ptr<Policy> NewFifoPolicy();

}  // namespace hearth

#endif  // HEARTH_POLICY_FIFO_H_
