#include "hearth/sim/fitted_cost_model.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "internal/status_macros.h"
#include "sim/toml_util.h"

namespace hearth {
namespace {

constexpr size_t kMaxBaseByTokens = 256;

}  // namespace

absl::StatusOr<std::unique_ptr<FittedCostModel>> FittedCostModel::Create(
    const FittedCoefficients& c) {
  const std::pair<const char*, double> all[] = {
      {"c0", c.c0}, {"c1", c.c1}, {"c2", c.c2}, {"c3", c.c3}, {"c4", c.c4}, {"c5", c.c5},
      {"c6", c.c6}};
  for (const auto& [name, v] : all) {
    if (!(v >= 0) || !std::isfinite(v)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "fitted coefficient ", name, " must be finite and >= 0; got ", v));
    }
  }
  if (c.base_by_tokens.size() > kMaxBaseByTokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fitted base_by_tokens has ", c.base_by_tokens.size(), " entries; at most ",
        kMaxBaseByTokens));
  }
  double base = 0;
  for (size_t i = 0; i < c.base_by_tokens.size(); ++i) {
    const double v = c.base_by_tokens[i];
    if (!(v >= 0) || !std::isfinite(v)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "fitted base_by_tokens[", i, "] must be finite and >= 0; got ", v));
    }
    base += v;
  }
  if (c.c0 + c.c1 + c.c2 + c.c3 + c.c4 + c.c5 + base <= 0) {
    return absl::InvalidArgumentError(
        "fitted coefficients c0..c4 and base_by_tokens are all zero; steps would take no time");
  }
  if (!(c.host_link_bandwidth > 0) || !(c.memory_bandwidth > 0)) {
    return absl::InvalidArgumentError(
        "fitted host_link_bandwidth and memory_bandwidth must be > 0");
  }
  return std::unique_ptr<FittedCostModel>(new FittedCostModel(c));
}

absl::StatusOr<std::unique_ptr<FittedCostModel>> FittedCostModel::LoadProfile(
    const std::string& path) {
  HEARTH_ASSIGN_OR_RETURN(std::string text, internal::ReadFileToString(path));
  return ParseProfile(text, path);
}

absl::StatusOr<std::unique_ptr<FittedCostModel>> FittedCostModel::ParseProfile(
    std::string_view text, const std::string& file) {
  HEARTH_ASSIGN_OR_RETURN(toml::table root, internal::ParseToml(text, file));
  const toml::table* t = root["fitted"].as_table();
  if (t == nullptr) {
    return internal::TomlError(file, root.source(), "fitted",
                               "missing [fitted] table");
  }
  HEARTH_RETURN_IF_ERROR(internal::CheckKeys(
      *t,
      {"gpu", "model", "c0", "c1", "c2", "c3", "c4", "c5", "c6", "base_by_tokens",
       "host_link_bandwidth", "memory_bandwidth"},
      file, "fitted"));
  FittedCoefficients c;
  double* slots[] = {&c.c0, &c.c1, &c.c2, &c.c3, &c.c4};
  const char* names[] = {"c0", "c1", "c2", "c3", "c4"};
  for (int i = 0; i < 5; ++i) {
    HEARTH_ASSIGN_OR_RETURN(
        *slots[i], internal::GetNumber(*t, names[i], file, "fitted", std::nullopt));
    if (!(*slots[i] >= 0) || !std::isfinite(*slots[i])) {
      return internal::TomlError(file, t->get(names[i])->source(),
                                 absl::StrCat("fitted.", names[i]),
                                 "must be finite and >= 0");
    }
  }
  HEARTH_ASSIGN_OR_RETURN(c.c5, internal::GetNumber(*t, "c5", file, "fitted", 0.0));
  if (!(c.c5 >= 0) || !std::isfinite(c.c5)) {
    return internal::TomlError(file, t->get("c5")->source(), "fitted.c5", "must be finite and >= 0");
  }
  HEARTH_ASSIGN_OR_RETURN(c.c6, internal::GetNumber(*t, "c6", file, "fitted", 0.0));
  if (!(c.c6 >= 0) || !std::isfinite(c.c6)) {
    return internal::TomlError(file, t->get("c6")->source(), "fitted.c6", "must be finite and >= 0");
  }
  if (const toml::node* node = t->get("base_by_tokens"); node != nullptr) {
    const toml::array* list = node->as_array();
    if (list == nullptr || list->size() > kMaxBaseByTokens) {
      return internal::TomlError(file, node->source(), "fitted.base_by_tokens",
                                 absl::StrCat("must be an array of at most ", kMaxBaseByTokens,
                                              " numbers (seconds)"));
    }
    for (const toml::node& entry : *list) {
      const std::optional<double> v = entry.value<double>();
      if (!v || !(*v >= 0) || !std::isfinite(*v)) {
        return internal::TomlError(file, entry.source(), "fitted.base_by_tokens",
                                   "entries must be finite numbers >= 0 (seconds)");
      }
      c.base_by_tokens.push_back(*v);
    }
  }
  HEARTH_ASSIGN_OR_RETURN(c.host_link_bandwidth,
                          internal::GetNumber(*t, "host_link_bandwidth", file,
                                              "fitted", 25e9));
  HEARTH_ASSIGN_OR_RETURN(c.memory_bandwidth,
                          internal::GetNumber(*t, "memory_bandwidth", file,
                                              "fitted", 1e12));
  HEARTH_ASSIGN_OR_RETURN(c.gpu,
                          internal::GetString(*t, "gpu", file, "fitted", ""));
  HEARTH_ASSIGN_OR_RETURN(c.model,
                          internal::GetString(*t, "model", file, "fitted", ""));
  absl::StatusOr<std::unique_ptr<FittedCostModel>> m = Create(c);
  if (!m.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": ", m.status().message()));
  }
  return m;
}

absl::Duration FittedCostModel::StepTime(const StepWork& work) const {
  double seconds = 0;
  if (!work.sequences.empty()) {
    double prefill = 0;
    double decodes = 0;
    double context = 0;
    size_t tokens = 0;
    for (const SequenceWork& s : work.sequences) {
      if (s.decode) {
        decodes += 1;
      } else {
        prefill += s.tokens;
      }
      context += static_cast<double>(s.context) + s.tokens;
      tokens += static_cast<size_t>(s.tokens);
    }
    seconds = c_.c0 + c_.c1 * prefill + c_.c2 * prefill * prefill +
              c_.c3 * decodes + c_.c4 * context +
              c_.c5 * static_cast<double>(tokens) * context + c_.c6 * work.encoder_tokens;
    if (const std::vector<double>& base = c_.base_by_tokens; !base.empty()) {
      seconds += base[std::min(std::max<size_t>(tokens, 1), base.size()) - 1];
    }
  }
  seconds += static_cast<double>(work.host_copy_bytes) / c_.host_link_bandwidth;
  seconds += 2.0 * static_cast<double>(work.device_copy_bytes) /
             c_.memory_bandwidth;
  return absl::Nanoseconds(std::llround(seconds * 1e9));
}

std::string FittedCostModel::Describe() const {
  std::string d = absl::StrFormat(
      "fitted %s / %s: %.3g + %.3g*P + %.3g*P^2 + %.3g*D + %.3g*K + %.3g*T*K s",
      c_.gpu.empty() ? "?" : c_.gpu, c_.model.empty() ? "?" : c_.model, c_.c0,
      c_.c1, c_.c2, c_.c3, c_.c4, c_.c5);
  if (c_.c6 > 0) absl::StrAppend(&d, absl::StrFormat(" + %.3g*E", c_.c6));
  if (!c_.base_by_tokens.empty()) {
    absl::StrAppend(&d, absl::StrFormat(" + base[T] (%d token counts)", c_.base_by_tokens.size()));
  }
  return d;
}

}  // namespace hearth
