// The options table (src/scheduler/options_schema.h) against the options
// structs: every field is in it exactly once, and Create judges each by its
// rule, quoting the rejected value exactly.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hearth/scheduler/scheduler.h"
#include "tests/testing/option_fields.h"

namespace hearth {
namespace {

using testing::AggregateArity;
using W = testing::FieldRef::Where;

struct Counts {
  size_t top = 0, kv = 0, residency = 0, step_time_model = 0, model = 0, user = 0, work_class = 0;
};

Counts CountFields() {
  Counts c;
  SchedulerOptions o;
  testing::VisitAllFields(o, [&c](W where, const internal::OptionField& f, const auto&) {
    const std::string_view path = f.path;
    if (where == W::kModel) ++c.model;
    if (where == W::kUser) ++c.user;
    if (where == W::kWorkClass) ++c.work_class;
    if (where != W::kOptions) return;
    if (path.substr(0, 3) == "kv.") {
      ++c.kv;
    } else if (path.substr(0, 10) == "residency.") {
      ++c.residency;
    } else if (path.substr(0, 16) == "step_time_model.") {
      ++c.step_time_model;
    } else {
      ++c.top;
    }
  });
  return c;
}

TEST_CASE("The options table has every field of the options structs", "[scheduler][options]") {
  const Counts c = CountFields();
  // A field added to one of these structs makes its count one short: add it
  // to options_schema.h (and so to validation and the C API's JSON).
  INFO("fields of each struct, and those the table visits");
  CHECK(AggregateArity<KvCacheConfig>() == c.kv);
  CHECK(AggregateArity<ResidencyConfig>() == c.residency);
  CHECK(AggregateArity<StepTimeModel>() == c.step_time_model);
  CHECK(AggregateArity<ModelConfig>() == c.model);
  CHECK(AggregateArity<UserConfig>() == c.user);
  CHECK(AggregateArity<WorkClassConfig>() == c.work_class);
  // Beside the table's own: the three registries, the three nested structs,
  // and what only C++ can pass (policy_factory, on_result, metrics_sink).
  CHECK(AggregateArity<SchedulerOptions>() == c.top + 3 + 3 + 3);
  // The arity check itself counts: 2 fields, not 1 or 3.
  CHECK(AggregateArity<StepTimeModel>() == 2);
}

TEST_CASE("Each entry of the options table is a field of its own", "[scheduler][options]") {
  const SchedulerOptions defaults;
  const std::vector<std::string> before = testing::Snapshot(defaults);
  for (size_t i = 0; i < before.size(); ++i) {
    SchedulerOptions o;
    const auto [field, value] = testing::Perturb(o, i);
    INFO(field.path);
    const std::vector<std::string> after = testing::Snapshot(o);
    // Exactly entry i changed: no two entries alias one field.
    for (size_t j = 0; j < before.size(); ++j) CHECK((before[j] == after[j]) == (j != i));
  }
}

TEST_CASE("Create quotes a rejected value exactly", "[scheduler][options]") {
  SchedulerOptions o;
  o.reserved_pending_share = 1.0000001;
  CHECK(Scheduler::Create(o).status().message() ==
        "SchedulerOptions.reserved_pending_share is 1.0000001; must be in [0, 1]");
  o = SchedulerOptions();
  o.users[0].weight = std::nextafter(1e9, INFINITY);
  CHECK(Scheduler::Create(o).status().message() ==
        "SchedulerOptions.users[0].weight is 1000000000.0000001; must be in (0, 1e9]");
  o = SchedulerOptions();
  o.swap_block_cost_tokens = -5e-324;
  CHECK(Scheduler::Create(o).status().message() ==
        "SchedulerOptions.swap_block_cost_tokens is -5e-324; must be >= 0 and finite");
  o = SchedulerOptions();
  o.work_classes[0].ttft_slo = absl::Nanoseconds(-1);
  CHECK(Scheduler::Create(o).status().message() ==
        "SchedulerOptions.work_classes[0].ttft_slo is -1ns; must be positive and at most "
        "kMaxSloTarget (365 days), or InfiniteDuration for no target");
}

TEST_CASE("Create judges every field of the table by its rule", "[scheduler][options]") {
  // For each ranged field, the values just outside the range are refused
  // with a message naming the field; NaN too for doubles.
  SchedulerOptions probe;
  size_t index = 0;
  testing::VisitAllFields(probe, [&](W where, const internal::OptionField& f, const auto& value) {
    using T = std::decay_t<decltype(value)>;
    const size_t me = index++;
    if (f.check != internal::OptionField::Check::kTable) return;
    std::vector<T> bad;
    if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      if (f.lo > static_cast<double>(std::numeric_limits<T>::min())) {
        bad.push_back(static_cast<T>(f.lo) - (f.lo_open ? 0 : 1));
      }
      if (f.hi < static_cast<double>(std::numeric_limits<T>::max())) {
        bad.push_back(static_cast<T>(f.hi) + (f.hi_open ? 0 : 1));
      }
    } else if constexpr (std::is_same_v<T, double>) {
      bad.push_back(std::nan(""));
      bad.push_back(f.lo_open ? f.lo : std::nextafter(f.lo, -INFINITY));
      bad.push_back(std::isinf(f.hi) ? -f.hi : std::nextafter(f.hi, INFINITY));
    } else if constexpr (std::is_same_v<T, absl::Duration>) {
      if (f.duration != internal::DurationRule::kAny) bad.push_back(-absl::Nanoseconds(1));
    }
    for (const T& v : bad) {
      SchedulerOptions o;
      size_t i = 0;
      testing::VisitAllFields(o, [&](W, const internal::OptionField&, auto& field_value) {
        if constexpr (std::is_same_v<std::decay_t<decltype(field_value)>, T>) {
          if (i == me) field_value = v;
        }
        ++i;
      });
      const std::string prefix = where == W::kOptions  ? "SchedulerOptions."
                                 : where == W::kModel  ? "SchedulerOptions.models[0]."
                                 : where == W::kUser   ? "SchedulerOptions.users[0]."
                                                       : "SchedulerOptions.work_classes[0].";
      INFO(f.path << " = " << testing::Repr(v));
      const absl::Status s = Scheduler::Create(o).status();
      CHECK(s.code() == absl::StatusCode::kInvalidArgument);
      CHECK(std::string(s.message()) ==
            absl::StrCat(prefix, std::string(f.path), " is ", testing::Repr(v), "; ",
                         std::string(f.allowed)));
    }
  });
}

}  // namespace
}  // namespace hearth
