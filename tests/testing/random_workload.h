// File: tests/testing/random_workload.h
//
// One seeded random scenario for the randomized invariant driver: a random
// configuration, then random Submit / Cancel / Release / SetPriority /
// SetWorkClass / AddModel / RemoveModel / Plan+Complete interleavings
// with random sizes, shared prefixes, deadlines, stop tokens and engine
// failures, then a drain until every accepted request is terminal. Reusable
// with any policy so that every policy runs the same driver.

#ifndef HEARTH_TESTS_TESTING_RANDOM_WORKLOAD_H_
#define HEARTH_TESTS_TESTING_RANDOM_WORKLOAD_H_

#include <cstdint>

#include "absl/status/status.h"
#include "hearth/policy/policy.h"

namespace hearth::testing {

struct RandomWorkloadStats {
  int64_t finished = 0, cancelled = 0, timed_out = 0, failed = 0;
  int64_t rejected_at_submit = 0, rejected_at_intake = 0;
  int64_t preemptions_recompute = 0, preemptions_swap = 0;
  // Listed in plans with cause kEngineOutOfKv and kRetry.
  int64_t preemptions_out_of_kv = 0, retries = 0;
  int64_t prefix_hit_tokens = 0, copy_on_write = 0;
  // Victims the rank check (rank_checking_policy.h) judged.
  int64_t victims_checked = 0;
  // SetPriority / SetWorkClass calls accepted.
  int64_t live_changes = 0;
  // Draft tokens planned for speculative decodes.
  int64_t draft_tokens = 0;
  // Seeds whose models include an adapter.
  int64_t adapter_configs = 0;
  // Requests submitted held, and releases accepted.
  int64_t held = 0, releases = 0;
  // Embeddings accepted, and those that ended pooled.
  int64_t embeddings = 0, pooled = 0;
  // Groups of parallel samples accepted.
  int64_t sample_groups = 0;
  // Requests with encoder spans (photos) accepted.
  int64_t photos = 0;
  // Models added and removed at run time, and requests accepted for them.
  int64_t models_added = 0, models_removed = 0, runtime_model_requests = 0;
  // Overlapped planning: seeds with it, decodes planned with a pending
  // input, and plan entries voided while outstanding.
  int64_t overlap_configs = 0, pending_inputs = 0, voided_entries = 0;
  void Add(const RandomWorkloadStats& o) {
    finished += o.finished; cancelled += o.cancelled; timed_out += o.timed_out;
    failed += o.failed; rejected_at_submit += o.rejected_at_submit;
    rejected_at_intake += o.rejected_at_intake;
    preemptions_recompute += o.preemptions_recompute; preemptions_swap += o.preemptions_swap;
    preemptions_out_of_kv += o.preemptions_out_of_kv; retries += o.retries;
    overlap_configs += o.overlap_configs; pending_inputs += o.pending_inputs;
    voided_entries += o.voided_entries;
    prefix_hit_tokens += o.prefix_hit_tokens; copy_on_write += o.copy_on_write;
    victims_checked += o.victims_checked; live_changes += o.live_changes;
    draft_tokens += o.draft_tokens;
    adapter_configs += o.adapter_configs;
    held += o.held; releases += o.releases;
    embeddings += o.embeddings; pooled += o.pooled;
    sample_groups += o.sample_groups;
    photos += o.photos;
    models_added += o.models_added; models_removed += o.models_removed;
    runtime_model_requests += o.runtime_model_requests;
  }
};

// `policy` may be null (FIFO). Users, classes and priorities are random too,
// so fairness and priority policies see varied input.
absl::Status RunRandomWorkload(uint64_t seed, const PolicyFactory* policy,
                               RandomWorkloadStats* stats);

}  // namespace hearth::testing

#endif  // HEARTH_TESTS_TESTING_RANDOM_WORKLOAD_H_
