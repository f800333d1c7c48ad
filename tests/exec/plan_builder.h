// File: tests/exec/plan_builder.h
//
// Hand-built StepPlans for executor tests. StepPlan spans do not own their
// data; PlanBuilder keeps the block tables and token ids alive as long as the
// builder lives.
//
// Example:
//   PlanBuilder b(/*step=*/1);
//   b.Add(RequestId(1), 0, {5, 6, 7}, {0}, /*full=*/true, /*sample=*/true);
//   executor->Execute(b.plan(), &outcome);

#ifndef HEARTH_TESTS_EXEC_PLAN_BUILDER_H_
#define HEARTH_TESTS_EXEC_PLAN_BUILDER_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "hearth/common/ids.h"
#include "hearth/scheduler/step_plan.h"

namespace hearth::testing {

inline std::vector<BlockId> Blocks(std::initializer_list<uint32_t> ids) {
  std::vector<BlockId> out;
  for (uint32_t id : ids) out.push_back(BlockId(id));
  return out;
}

class PlanBuilder {
 public:
  explicit PlanBuilder(uint64_t step) { plan_.step = step; }

  // Schedules positions [start, start + tokens.size()) of `id` with block
  // table `table`; `new_blocks` defaults to the whole table when `full`.
  PlanBuilder& Add(RequestId id, int32_t start, std::vector<TokenId> tokens,
                   std::vector<BlockId> table, bool full, bool sample,
                   std::vector<BlockId> new_blocks = {}) {
    const auto& t = tables_.emplace_back(std::move(table));
    const auto& tok = tokens_.emplace_back(std::move(tokens));
    const auto& nb = news_.emplace_back(full ? t : std::move(new_blocks));
    ScheduledSequence s;
    s.id = id;
    s.model = ModelId(0);
    s.start_position = start;
    s.num_tokens = static_cast<int32_t>(tok.size());
    s.sample = sample;
    s.full_block_table = full;
    s.block_table = t;
    s.new_blocks = nb;
    s.token_ids = tok;
    plan_.sequences.push_back(s);
    plan_.num_batched_tokens += s.num_tokens;
    return *this;
  }
  StepPlan& plan() { return plan_; }

 private:
  StepPlan plan_;
  // Deques: growing them never moves earlier elements the spans point at.
  std::deque<std::vector<BlockId>> tables_;
  std::deque<std::vector<TokenId>> tokens_;
  std::deque<std::vector<BlockId>> news_;
};

}  // namespace hearth::testing

#endif  // HEARTH_TESTS_EXEC_PLAN_BUILDER_H_
