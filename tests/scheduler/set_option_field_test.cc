// SetOptionField, the one conversion every text front end ends in: a value
// of the wrong type is refused in the same words for every field of a type
// (OptionTypeInWords), and "off" -- how OptionValueText quotes
// InfiniteDuration -- is read back as it.

#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "hearth/scheduler/option_fields.h"

namespace hearth {
namespace {

// Runs `f(target, field)` for every field of every scope on a default target.
template <typename F>
void ForEveryField(F f) {
  for (const OptionFieldInfo& field : OptionFields(OptionScope::kOptions)) {
    SchedulerOptions o;
    f(o, field);
  }
  for (const OptionFieldInfo& field : OptionFields(OptionScope::kModel)) {
    ModelConfig m;
    f(m, field);
  }
  for (const OptionFieldInfo& field : OptionFields(OptionScope::kUser)) {
    UserConfig u;
    f(u, field);
  }
  for (const OptionFieldInfo& field : OptionFields(OptionScope::kWorkClass)) {
    WorkClassConfig c;
    f(c, field);
  }
}

TEST_CASE("SetOptionField words a wrong type as OptionTypeInWords does", "[scheduler][options]") {
  int checked = 0;
  ForEveryField([&](auto& target, const OptionFieldInfo& f) {
    CAPTURE(f.path);
    // Each field gets the one type it cannot take from a text front end.
    const OptionValue wrong = f.type == OptionType::kBool ? OptionValue(std::string("yes"))
                                                           : OptionValue(true);
    const absl::Status s = SetOptionField(target, f, wrong);
    const std::string words(OptionTypeInWords(f.type));
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::EndsWith(s.message(), "must be " + words));
    ++checked;
  });
  CHECK(checked > 50);
}

TEST_CASE("SetOptionField reads \"off\" for a duration as InfiniteDuration, where allowed",
          "[scheduler][options]") {
  int durations = 0, infinite_allowed = 0;
  ForEveryField([&](auto& target, const OptionFieldInfo& f) {
    if (f.type != OptionType::kDuration) return;
    CAPTURE(f.path);
    ++durations;
    const absl::Status s = SetOptionField(target, f, std::string("off"));
    const absl::Status inf = SetOptionField(target, f, absl::InfiniteDuration());
    // The same verdict as InfiniteDuration itself, and on success the
    // field reads back as it, which OptionValueText quotes as "off".
    CHECK(s.ok() == inf.ok());
    if (s.ok()) {
      ++infinite_allowed;
      CHECK(OptionValueText(GetOptionField(target, f)) == "\"off\"");
    } else {
      INFO(s.message());
      CHECK(absl::StartsWith(s.message(), "is \"off\"; "));
    }
    // Any other word is a wrong type, not a duration.
    CHECK(absl::EndsWith(SetOptionField(target, f, std::string("never")).message(),
                         "must be a number of seconds or \"off\""));
  });
  CHECK(durations >= 5);
  CHECK(infinite_allowed >= 1);
  CHECK(infinite_allowed < durations);
}

}  // namespace
}  // namespace hearth
