// scheduler_ops_fuzzer: the input picks a small house (small_options.h) and
// then up to kMaxCalls public calls, as a careless engine and hostile hosts
// would make them: Submit with edge-value fields (held or not, embeddings
// of either pooling and groups of parallel samples too), Cancel and
// Release of live, held, ended and made-up ids, Plan with times that go back
// and jump to infinity, Complete with right, failed, corrupt, missing,
// repeated and planless outcomes; with overlapped planning (chosen by the
// input) a second Plan before Complete.
//
// After every call the scheduler's own CheckInvariants() must pass and every
// result must keep the exactly-once promise (result_ledger.h). At the end
// the house is drained (everything cancelled, planned and completed) and
// every accepted request must have ended with no KV block left owned.

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "hearth/metrics/metrics_collector.h"
#include "hearth/scheduler/scheduler.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/hostile_values.h"
#include "tests/fuzz/result_ledger.h"
#include "tests/fuzz/small_options.h"

namespace hearth::fuzz {
namespace {

// Keeps one input's run to well under a millisecond or so.
constexpr int kMaxCalls = 200;
// Plan/Complete rounds allowed to end everything once all is cancelled.
constexpr int kMaxDrainRounds = 64;

class OpsRun {
 public:
  OpsRun(FuzzedDataProvider& in, std::unique_ptr<Scheduler> s, bool callback_results,
         std::shared_ptr<std::vector<RequestResult>> delivered)
      : in_(in), s_(std::move(s)), callback_results_(callback_results),
        delivered_(std::move(delivered)) {}

  void Run() {
    for (int i = 0; i < kMaxCalls && in_.remaining_bytes() > 0; ++i) {
      switch (in_.ConsumeIntegralInRange<int>(0, 11)) {
        case 0: case 1: case 2: Submit(); break;
        case 11: ChangeModels(); break;
        case 3: Cancel(); break;
        case 10: Release(); break;
        case 4: case 5: Plan(); break;
        case 6: case 7: Complete(); break;
        case 8: Peek(); break;
        case 9: CompleteAgain(); break;
      }
      AfterCall("call");
    }
    DrainToQuiescence();
  }

 private:
  // ---- Submit.

  RequestSpec HostileSpec() {
    const SchedulerOptions& o = s_->options();
    RequestSpec spec;
    spec.user = UserId(SmallOrEdge<uint32_t>(in_, 0, o.users.size() - 1));
    spec.work_class = WorkClassId(SmallOrEdge<uint32_t>(in_, 0, o.work_classes.size() - 1));
    spec.model = ModelId(SmallOrEdge<uint32_t>(in_, 0, o.models.size() + models_added_));
    spec.prompt_tokens = SmallOrEdge<int32_t>(in_, 1, 48);
    if (in_.ConsumeBool()) {
      // Ids from a tiny alphabet so that prompts share prefixes; sometimes
      // the wrong count, sometimes out of the vocabulary.
      int32_t count = spec.prompt_tokens;
      if (count < 0 || count > 256 || in_.ConsumeIntegralInRange(0, 7) == 0) {
        count = in_.ConsumeIntegralInRange<int32_t>(0, 64);
      }
      const bool junk = in_.ConsumeIntegralInRange(0, 7) == 0;
      for (int32_t t = 0; t < count; ++t) {
        spec.prompt_token_ids.push_back(junk ? in_.ConsumeIntegral<TokenId>()
                                             : in_.ConsumeIntegralInRange<TokenId>(0, 3));
      }
    }
    spec.max_new_tokens = SmallOrEdge<int32_t>(in_, 1, 24);
    spec.priority = SmallOrEdge<int32_t>(in_, -3, 3);
    if (in_.ConsumeBool()) spec.deadline = NearOrEdgeTime(in_, now_);
    if (in_.ConsumeBool()) spec.parent = PickId();
    if (in_.ConsumeBool()) spec.arrival_time = NearOrEdgeTime(in_, now_);
    if (in_.ConsumeIntegralInRange(0, 7) == 0) spec.label = in_.ConsumeRandomLengthString(64);
    if (in_.ConsumeIntegralInRange(0, 3) == 0) {
      // Cache scopes: a few names (so scopes are shared), any bytes, any
      // shared prefix length, opt-outs mixed in.
      CacheScope& c = spec.cache_scope;
      c.name = in_.ConsumeBool() ? std::string(1, 'a' + in_.ConsumeIntegralInRange(0, 1))
                                 : in_.ConsumeRandomLengthString(300);
      c.shared_prefix_tokens = SmallOrEdge<int32_t>(in_, 0, 48);
      if (in_.ConsumeBool()) c.shared_prefix_scope = "t";
      c.opt_out = in_.ConsumeIntegralInRange(0, 5) == 0;
    }
    spec.hold = in_.ConsumeIntegralInRange(0, 5) == 0;
    if (in_.ConsumeIntegralInRange(0, 4) == 0) {
      // An embedding, now and then with the generation's bound left, or a
      // kind or pooling outside the enums.
      spec.kind = static_cast<RequestKind>(SmallOrEdge<uint8_t>(in_, 1, 1));
      spec.pooling = static_cast<Pooling>(SmallOrEdge<uint8_t>(in_, 0, 1));
      if (in_.ConsumeIntegralInRange(0, 7) != 0) spec.max_new_tokens = 0;
    }
    // Parallel samples, and counts out of range.
    if (in_.ConsumeIntegralInRange(0, 6) == 0) spec.num_samples = SmallOrEdge<int32_t>(in_, 2, 4);
    // Photos: a few spans of a few contents (so outputs are reused), with
    // positions and lengths at their edges (overlapping, past the prompt,
    // INT_MAX) now and then.
    if (in_.ConsumeIntegralInRange(0, 4) == 0) {
      const int spans = in_.ConsumeIntegralInRange(1, 3);
      int32_t at = 0;
      for (int k = 0; k < spans; ++k) {
        EncoderSpan e;
        e.position = in_.ConsumeIntegralInRange(0, 5) == 0 ? SmallOrEdge<int32_t>(in_, 0, 64)
                                                           : at + in_.ConsumeIntegralInRange(0, 8);
        e.length = SmallOrEdge<int32_t>(in_, 1, 24);
        e.content_hash = in_.ConsumeIntegralInRange<uint64_t>(0, 3);
        spec.encoder_spans.push_back(e);
        at = static_cast<int32_t>(std::clamp<int64_t>(int64_t{e.position} + e.length, 0, 1 << 20));
      }
    }
    return spec;
  }

  void Submit() {
    const RequestSpec spec = HostileSpec();
    const absl::StatusOr<RequestId> id = s_->Submit(spec);
    if (!id.ok()) return;
    // A group's samples have the ids after sample 0's.
    for (int32_t k = 0; k < spec.num_samples; ++k) {
      ledger_.Accepted(RequestId(id->value() + static_cast<uint64_t>(k)));
    }
  }

  // ---- Cancel and reads.

  // An accepted id (live or ended) most of the time, otherwise any id.
  RequestId PickId() {
    const std::vector<RequestId>& ids = ledger_.accepted();
    if (ids.empty() || in_.ConsumeIntegralInRange(0, 4) == 0) {
      return RequestId(in_.ConsumeIntegral<uint64_t>());
    }
    return ids[in_.ConsumeIntegralInRange<size_t>(0, ids.size() - 1)];
  }

  void Cancel() {
    const RequestId id = PickId();
    const absl::Status st = s_->Cancel(id);
    if (!st.ok() && st.code() != absl::StatusCode::kNotFound) {
      Fail(absl::StrCat("Cancel(", id.ToString(), ") returned ", st.ToString()));
    }
  }

  // Of held, released, ended and made-up ids alike.
  void Release() {
    const RequestId id = PickId();
    const absl::Status st = s_->Release(id);
    if (!st.ok() && st.code() != absl::StatusCode::kNotFound &&
        st.code() != absl::StatusCode::kFailedPrecondition) {
      Fail(absl::StrCat("Release(", id.ToString(), ") returned ", st.ToString()));
    }
  }

  // ---- Models at run time: hostile configs, removals of any id.

  void ChangeModels() {
    if (in_.ConsumeBool()) {
      const ModelId m(SmallOrEdge<uint32_t>(in_, 0, s_->options().models.size() + models_added_));
      const absl::Status st = s_->RemoveModel(m);
      if (!st.ok() && st.code() != absl::StatusCode::kNotFound &&
          st.code() != absl::StatusCode::kFailedPrecondition) {
        Fail(absl::StrCat("RemoveModel(", m.ToString(), ") returned ", st.ToString()));
      }
      return;
    }
    ModelConfig m;
    m.name = in_.ConsumeBool() ? std::string(1, 'm' + in_.ConsumeIntegralInRange(0, 3))
                               : in_.ConsumeRandomLengthString(300);
    m.context_length = SmallOrEdge<int32_t>(in_, 2, 512);
    m.vocab_size = SmallOrEdge<int32_t>(in_, 0, 8);
    m.kv_bytes_per_token = SmallOrEdge<int64_t>(in_, 0, 2000);
    m.weights_bytes = SmallOrEdge<int64_t>(in_, 0, 1 << 20);
    m.preload = in_.ConsumeBool();
    if (in_.ConsumeBool()) m.keep_alive = absl::Milliseconds(SmallOrEdge<int32_t>(in_, 0, 500));
    if (in_.ConsumeBool()) {
      const std::vector<ModelConfig>& initial = s_->options().models;
      m.base_model = in_.ConsumeBool() ? initial[0].name : std::string(1, 'm' + in_.ConsumeIntegralInRange(0, 3));
    }
    const absl::StatusOr<ModelId> id = s_->AddModel(m);
    if (id.ok()) {
      ++models_added_;
    } else if (id.status().code() != absl::StatusCode::kInvalidArgument &&
               id.status().code() != absl::StatusCode::kResourceExhausted) {
      Fail(absl::StrCat("AddModel returned ", id.status().ToString()));
    }
  }

  void Peek() {
    (void)s_->GetRequest(PickId());
    (void)s_->stats();
    Require(s_->DrainResults(nullptr) == 0, "DrainResults(nullptr) moved results");
  }

  // ---- Plan.

  absl::Time NextNow() {
    switch (in_.ConsumeIntegralInRange<int>(0, 15)) {
      case 0: return now_ - absl::Milliseconds(in_.ConsumeIntegralInRange(1, 1000));
      case 1: return absl::InfinitePast();
      case 2: return now_ + absl::Hours(in_.ConsumeIntegralInRange(1, 1000));
      case 3: if (in_.ConsumeIntegralInRange(0, 7) == 0) return absl::InfiniteFuture();
              return now_;
      default: return now_ + absl::Milliseconds(in_.ConsumeIntegralInRange(0, 200));
    }
  }

  void Plan() {
    const int outstanding = s_->plans_outstanding();
    const absl::Time at = NextNow();
    const absl::StatusOr<const StepPlan*> plan = s_->Plan(at);
    if (!plan.ok()) {
      Require(s_->plans_outstanding() == outstanding, "a failed Plan changed plans_outstanding()");
      return;
    }
    Require(outstanding < (s_->options().overlap_planning ? 2 : 1),
            "Plan succeeded with the most plans already outstanding");
    Require(s_->plans_outstanding() == outstanding + 1, "Plan succeeded but was not counted");
    plans_.push_back(*plan);
    now_ = at;
  }

  // ---- Complete.

  // The outcome an honest engine reports for the outstanding plan, with the
  // input choosing tokens, stop reasons and failures.
  StepOutcome HonestOutcome(bool from_input) {
    const StepPlan* plan = plans_.front();
    StepOutcome out;
    out.step = plan->step;
    for (const ScheduledSequence& seq : plan->sequences) {
      SequenceOutcome& o = out.sequences.emplace_back();
      o.id = seq.id;
      o.produced_token = seq.sample;
      if (!from_input) continue;
      o.token = in_.ConsumeIntegralInRange<TokenId>(0, 3);
      switch (in_.ConsumeIntegralInRange<int>(0, 15)) {
        case 0: if (seq.sample) o.finish = FinishReason::kStopToken; break;
        case 1: if (seq.sample) o.finish = FinishReason::kStopString; break;
        case 2: o.error = "engine failure"; o.produced_token = false; break;
        default: break;
      }
    }
    if (from_input && !plan->model_commands.empty() && in_.ConsumeBool()) {
      const ModelCommand& c = plan->model_commands.front();
      if (c.kind == ModelCommandKind::kLoad) out.failed_loads.push_back({c.model, "no memory"});
    }
    if (from_input && in_.ConsumeBool()) {
      out.completed_at = plan->now + absl::Milliseconds(in_.ConsumeIntegralInRange(0, 50));
    }
    return out;
  }

  // One corruption of an honest outcome, which Complete must reject whole.
  void Corrupt(StepOutcome& out) {
    const size_t n = out.sequences.size();
    switch (in_.ConsumeIntegralInRange<int>(0, 9)) {
      case 0: out.step += in_.ConsumeIntegralInRange<uint64_t>(1, 3); break;
      case 1: if (n > 0) out.sequences.pop_back(); break;
      case 2: out.sequences.push_back({.id = PickId(), .produced_token = true}); break;
      case 3: if (n > 0) out.sequences[in_.ConsumeIntegralInRange<size_t>(0, n - 1)].id = PickId();
              break;
      case 4: if (n > 1) std::swap(out.sequences[0].id, out.sequences[n - 1].id); break;
      case 5: if (n > 0) out.sequences[0].finish =
                             static_cast<FinishReason>(in_.ConsumeIntegral<uint8_t>());
              break;
      case 6: if (n > 0) out.sequences[0].produced_token = !out.sequences[0].produced_token;
              break;
      case 7: out.completed_at = NearOrEdgeTime(in_, now_); break;
      case 8: out.failed_loads.push_back(
                  {ModelId(SmallOrEdge<uint32_t>(in_, 0, 3)), in_.ConsumeRandomLengthString(8)});
              break;
      case 9: if (n > 0) out.sequences[0].finish = FinishReason::kLength; break;
    }
  }

  void Complete() {
    if (!s_->plan_outstanding()) {
      // Complete without a plan: any outcome must be refused.
      StepOutcome junk;
      junk.step = in_.ConsumeIntegral<uint64_t>();
      if (in_.ConsumeBool()) junk.sequences.push_back({.id = PickId(), .produced_token = true});
      const absl::Status st = s_->Complete(junk);
      Require(!st.ok(), "Complete without an outstanding plan succeeded");
      return;
    }
    StepOutcome out = HonestOutcome(true);
    const bool corrupt = in_.ConsumeIntegralInRange(0, 3) == 0;
    if (corrupt) Corrupt(out);
    last_outcome_ = out;
    const int outstanding = s_->plans_outstanding();
    const absl::Status st = s_->Complete(out);
    if (st.ok()) {
      Require(s_->plans_outstanding() == outstanding - 1,
              "Complete succeeded but the plan is still outstanding");
      plans_.pop_front();
      if (out.completed_at != absl::InfinitePast()) {
        completed_at_ = std::max(completed_at_, out.completed_at);
      }
    } else {
      Require(s_->plans_outstanding() == outstanding,
              "a rejected Complete dropped the outstanding plan");
    }
  }

  // The last outcome a second time: its step is complete, so it must be
  // refused (with a plan outstanding, it answers the wrong step).
  void CompleteAgain() {
    if (!last_outcome_ || (!plans_.empty() && plans_.front()->step == last_outcome_->step)) return;
    Require(!s_->Complete(*last_outcome_).ok(), "the same outcome was completed twice");
  }

  // ---- Checks.

  void AfterCall(const char* what) {
    const absl::Status inv = s_->CheckInvariants();
    if (!inv.ok()) Fail(absl::StrCat("CheckInvariants after ", what, ": ", inv.ToString()));
    std::vector<RequestResult> results;
    if (callback_results_) {
      results.swap(*delivered_);
      Require(s_->DrainResults(&results) == 0, "DrainResults returned results with on_result set");
    } else {
      s_->DrainResults(&results);
    }
    for (const RequestResult& r : results) ledger_.Ended(r);
  }

  void DrainToQuiescence() {
    for (RequestId id : ledger_.live_ids()) (void)s_->Cancel(id);
    AfterCall("the final cancels");
    for (int round = 0; round < kMaxDrainRounds && !ledger_.all_ended(); ++round) {
      if (s_->plan_outstanding()) {
        const absl::Status st = s_->Complete(HonestOutcome(false));
        Require(st.ok(), absl::StrCat("an honest Complete was refused: ", st.ToString()));
        plans_.pop_front();
        AfterCall("a drain Complete");
        continue;
      }
      // Never before the last completion; InfiniteFuture stays put.
      now_ = std::max(now_, completed_at_) + absl::Milliseconds(1);
      const absl::StatusOr<const StepPlan*> plan = s_->Plan(now_);
      Require(plan.ok(), absl::StrCat("a drain Plan failed: ", plan.status().ToString()));
      plans_.push_back(*plan);
      AfterCall("a drain Plan");
    }
    Require(ledger_.all_ended(), absl::StrCat(ledger_.live(), " accepted requests never ended"));
    const SchedulerStats stats = s_->stats();
    const int32_t owned =
        stats.device_blocks - stats.free_device_blocks - stats.cached_device_blocks;
    Require(owned == 0, absl::StrCat(owned, " device blocks still owned after everything ended"));
    Require(stats.free_host_blocks == stats.host_blocks,
            absl::StrCat(stats.host_blocks - stats.free_host_blocks,
                         " host blocks still in use after everything ended"));
  }

  FuzzedDataProvider& in_;
  // Models AddModel accepted, so that submissions and removals aim at them.
  uint32_t models_added_ = 0;
  std::unique_ptr<Scheduler> s_;
  const bool callback_results_;
  std::shared_ptr<std::vector<RequestResult>> delivered_;
  ResultLedger ledger_;
  absl::Time now_ = absl::UnixEpoch() + absl::Hours(24 * 365 * 50);
  absl::Time completed_at_ = absl::InfinitePast();
  // Outstanding plans, oldest first.
  std::deque<const StepPlan*> plans_;
  std::optional<StepOutcome> last_outcome_;
};

}  // namespace
}  // namespace hearth::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hearth;
  FuzzedDataProvider in(data, size);
  SchedulerOptions options = fuzz::SmallOptions(in);
  if (!fuzz::SetPolicy(in, fuzz::PickPolicy(in), options).ok()) return 0;
  std::unique_ptr<MetricsCollector> metrics;
  if (in.ConsumeBool()) {
    MetricsOptions m;
    m.user_names.clear();
    for (const UserConfig& u : options.users) m.user_names.push_back(u.name);
    m.class_names.clear();
    for (const WorkClassConfig& c : options.work_classes) m.class_names.push_back(c.name);
    absl::StatusOr<std::unique_ptr<MetricsCollector>> made = MetricsCollector::Create(m);
    if (made.ok()) metrics = *std::move(made);
    options.metrics_sink = metrics.get();
  }
  options.overlap_planning = in.ConsumeBool();
  const bool callback_results = in.ConsumeBool();
  auto delivered = std::make_shared<std::vector<RequestResult>>();
  if (callback_results) {
    options.on_result = [delivered](const RequestResult& r) { delivered->push_back(r); };
  }
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(std::move(options));
  if (!scheduler.ok()) return 0;
  fuzz::OpsRun(in, *std::move(scheduler), callback_results, delivered).Run();
  if (metrics) (void)metrics->Report();
  return 0;
}
