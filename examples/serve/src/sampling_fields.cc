#include "sampling_fields.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "json_fields.h"

namespace hearth::serve {
namespace {

using Json = nlohmann::json;

// A number field in [lo, hi]; `out` keeps its default when absent or null.
absl::Status ReadNumber(const Json& j, absl::string_view prefix, const char* field, double lo,
                        double hi, double& out) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < lo ||
      it->get<double>() > hi) {
    return BadField(absl::StrCat(prefix, field),
                    absl::StrCat("must be a number in [", lo, ", ", hi, "]"));
  }
  out = it->get<double>();
  return absl::OkStatus();
}

// The sampling fields beyond temperature and top_p.
absl::Status ReadPenaltiesAndCuts(const Json& j, absl::string_view prefix, SamplingParams& p) {
  if (auto it = j.find("top_k"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > (1 << 20)) {
      return BadField(absl::StrCat(prefix, "top_k"), "must be an integer in [0, 2^20] (0: no cut)");
    }
    p.top_k = static_cast<int32_t>(it->get<int64_t>());
  }
  if (absl::Status s = ReadNumber(j, prefix, "min_p", 0, 1, p.min_p); !s.ok()) return s;
  if (absl::Status s = ReadNumber(j, prefix, "repeat_penalty", 0, 10, p.repeat_penalty); !s.ok()) {
    return s;
  }
  if (p.repeat_penalty <= 0) {
    return BadField(absl::StrCat(prefix, "repeat_penalty"), "must be in (0, 10] (1: none)");
  }
  if (absl::Status s = ReadNumber(j, prefix, "presence_penalty", -2, 2, p.presence_penalty);
      !s.ok()) {
    return s;
  }
  return ReadNumber(j, prefix, "frequency_penalty", -2, 2, p.frequency_penalty);
}

}  // namespace

absl::Status ReadSamplingFields(const Json& j, absl::string_view prefix, SamplingParams& p) {
  if (absl::Status s = ReadNumber(j, prefix, "temperature", 0, 2, p.temperature); !s.ok()) {
    return s;
  }
  if (absl::Status s = ReadNumber(j, prefix, "top_p", 0, 1, p.top_p); !s.ok()) return s;
  if (p.top_p <= 0) return BadField(absl::StrCat(prefix, "top_p"), "must be in (0, 1]");
  if (absl::Status s = ReadPenaltiesAndCuts(j, prefix, p); !s.ok()) return s;
  if (auto it = j.find("seed"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer()) return BadField(absl::StrCat(prefix, "seed"), "must be an integer");
    // Any integer is accepted, as OpenAI does; llama.cpp takes 32 bits.
    p.seed = static_cast<uint32_t>(it->get<int64_t>());
  }
  return absl::OkStatus();
}

absl::Status ReadStopField(const Json& j, absl::string_view prefix, std::vector<std::string>& stop) {
  auto it = j.find("stop");
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  const std::string field = absl::StrCat(prefix, "stop");
  if (it->is_string()) {
    stop.push_back(it->get<std::string>());
  } else if (it->is_array() && it->size() <= kMaxStopStrings) {
    for (const Json& s : *it) {
      if (!s.is_string()) return BadField(field, "must be a string or an array of strings");
      stop.push_back(s.get<std::string>());
    }
  } else {
    return BadField(field, absl::StrCat("must be a string or an array of at most ",
                                        kMaxStopStrings, " strings"));
  }
  for (const std::string& s : stop) {
    if (s.empty() || s.size() > kMaxStopBytes) {
      return BadField(field, absl::StrCat("strings must be 1 to ", kMaxStopBytes, " bytes"));
    }
  }
  return absl::OkStatus();
}

}  // namespace hearth::serve
