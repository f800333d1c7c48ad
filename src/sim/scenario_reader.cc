#include "sim/quote.h"
#include "sim/scenario_reader.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "internal/status_macros.h"

namespace hearth::internal {
absl::StatusOr<const toml::table*> ScenarioReader::Table(
    const toml::table& t, std::string_view key, const std::string& path) const {
  static const toml::table* const kEmpty = new toml::table();
  const toml::node* n = t.get(key);
  if (n == nullptr) return kEmpty;
  if (!n->is_table()) return Error(*n, JoinKey(path, key), "must be a table");
  return n->as_table();
}

absl::StatusOr<std::vector<const toml::table*>> ScenarioReader::Tables(
    const toml::table& t, std::string_view key, const std::string& path) const {
  std::vector<const toml::table*> out;
  const toml::node* n = t.get(key);
  if (n == nullptr) return out;
  const toml::array* a = n->as_array();
  if (a == nullptr) return Error(*n, JoinKey(path, key), "must be an array of tables");
  for (const toml::node& e : *a) {
    if (!e.is_table()) {
      return Error(e, JoinKey(path, key), "every entry must be a table");
    }
    out.push_back(e.as_table());
  }
  return out;
}

absl::StatusOr<double> ScenarioReader::Number(const toml::table& t,
                                              std::string_view key,
                                              const std::string& path,
                                              std::optional<double> def,
                                              double lo, double hi) const {
  HEARTH_ASSIGN_OR_RETURN(double v, GetNumber(t, key, file_, path, def));
  if (!(v >= lo && v <= hi) || !std::isfinite(v)) {
    const toml::node* n = t.get(key);
    return Error(n != nullptr ? *n : static_cast<const toml::node&>(t), JoinKey(path, key),
                 absl::StrCat("must be in [", lo, ", ", hi, "]; got ", v));
  }
  return v;
}

absl::StatusOr<int64_t> ScenarioReader::Int(const toml::table& t,
                                            std::string_view key,
                                            const std::string& path,
                                            std::optional<int64_t> def,
                                            int64_t lo, int64_t hi) const {
  HEARTH_ASSIGN_OR_RETURN(int64_t v, GetInt(t, key, file_, path, def));
  if (v < lo || v > hi) {
    const toml::node* n = t.get(key);
    return Error(n != nullptr ? *n : static_cast<const toml::node&>(t), JoinKey(path, key),
                 absl::StrCat("must be in [", lo, ", ", hi, "]; got ", v));
  }
  return v;
}

absl::StatusOr<std::string> ScenarioReader::String(
    const toml::table& t, std::string_view key, const std::string& path,
    std::optional<std::string> def) const {
  return GetString(t, key, file_, path, std::move(def));
}

absl::StatusOr<bool> ScenarioReader::Bool(const toml::table& t,
                                          std::string_view key,
                                          const std::string& path,
                                          std::optional<bool> def) const {
  return GetBool(t, key, file_, path, def);
}

absl::StatusOr<std::vector<std::string>> ScenarioReader::Strings(
    const toml::table& t, std::string_view key, const std::string& path) const {
  std::vector<std::string> out;
  const toml::node* n = t.get(key);
  if (n == nullptr) return out;
  const toml::array* a = n->as_array();
  if (a == nullptr) return Error(*n, JoinKey(path, key), "must be an array of strings");
  for (const toml::node& e : *a) {
    if (!e.is_string()) return Error(e, JoinKey(path, key), "must hold strings only");
    out.emplace_back(*e.value<std::string_view>());
  }
  return out;
}

absl::StatusOr<std::vector<double>> ScenarioReader::Numbers(
    const toml::table& t, std::string_view key, const std::string& path) const {
  std::vector<double> out;
  const toml::node* n = t.get(key);
  if (n == nullptr) return out;
  const toml::array* a = n->as_array();
  if (a == nullptr) return Error(*n, JoinKey(path, key), "must be an array of numbers");
  for (const toml::node& e : *a) {
    if (!e.is_number()) return Error(e, JoinKey(path, key), "must hold numbers only");
    out.push_back(*e.value<double>());
  }
  return out;
}

absl::StatusOr<absl::Duration> ScenarioReader::Seconds(
    const toml::table& t, std::string_view key, const std::string& path,
    absl::Duration def) const {
  if (t.get(key) == nullptr) return def;
  HEARTH_ASSIGN_OR_RETURN(double v, Number(t, key, path, std::nullopt, 0, 1e9));
  return absl::Nanoseconds(std::llround(v * 1e9));
}

absl::StatusOr<absl::Duration> ScenarioReader::Duration(
    const toml::table& t, std::string_view key, const std::string& path,
    absl::Duration def, DurationRule rule) const {
  const toml::node* n = t.get(key);
  if (n == nullptr) return def;
  const std::string full = JoinKey(path, key);
  const std::string_view unit = rule.seconds_per_unit == 1 ? "seconds" : "milliseconds";
  const std::string allowed =
      absl::StrCat("a number of ", std::string(unit), " in [0, 1e9]", rule.positive ? " above 0" : "",
                   rule.off_allowed ? ", or \"off\" for none" : "");
  if (const auto* text = n->as_string()) {
    if (rule.off_allowed && (text->get() == "off" || text->get() == "none")) {
      return absl::InfiniteDuration();
    }
    return Error(*n, full, absl::StrCat("must be ", allowed, "; got ", Quote(text->get())));
  }
  if (!n->is_number()) return Error(*n, full, absl::StrCat("must be ", allowed));
  const double v = *n->value<double>();
  if (!(v >= 0 && v <= 1e9) || (rule.positive && v == 0)) {
    return Error(*n, full, absl::StrCat("must be ", allowed, "; got ", v));
  }
  return absl::Nanoseconds(std::llround(v * rule.seconds_per_unit * 1e9));
}

absl::StatusOr<LengthDistribution> ScenarioReader::Length(
    const toml::table& t, std::string_view key, const std::string& path,
    const LengthDistribution& def) const {
  const toml::node* n = t.get(key);
  if (n == nullptr) return def;
  const std::string full = JoinKey(path, key);
  const toml::table* d = n->as_table();
  if (d == nullptr) {
    return Error(*n, full, "must be a table like {kind = \"lognormal\", median = 600, "
                           "sigma = 0.8, min = 16, max = 8000}");
  }
  HEARTH_RETURN_IF_ERROR(CheckKeys(*d, {"kind", "value", "median", "sigma", "min", "max"},
                                   file_, full));
  HEARTH_ASSIGN_OR_RETURN(std::string kind, String(*d, "kind", full, std::nullopt));
  LengthDistribution out;
  constexpr double kMax = 1 << 24;
  if (kind == "fixed") {
    HEARTH_ASSIGN_OR_RETURN(int64_t v, Int(*d, "value", full, std::nullopt, 1, kMax));
    out = LengthDistribution::Fixed(static_cast<int32_t>(v));
  } else if (kind == "uniform") {
    HEARTH_ASSIGN_OR_RETURN(int64_t lo, Int(*d, "min", full, std::nullopt, 1, kMax));
    HEARTH_ASSIGN_OR_RETURN(int64_t hi, Int(*d, "max", full, std::nullopt, lo, kMax));
    out = LengthDistribution::Uniform(static_cast<int32_t>(lo), static_cast<int32_t>(hi));
  } else if (kind == "lognormal") {
    HEARTH_ASSIGN_OR_RETURN(double med, Number(*d, "median", full, std::nullopt, 1, kMax));
    HEARTH_ASSIGN_OR_RETURN(double sigma, Number(*d, "sigma", full, std::nullopt, 0, 10));
    HEARTH_ASSIGN_OR_RETURN(int64_t lo, Int(*d, "min", full, 1, 1, kMax));
    HEARTH_ASSIGN_OR_RETURN(int64_t hi, Int(*d, "max", full, 1 << 20, lo, kMax));
    out = LengthDistribution::LogNormal(med, sigma, static_cast<int32_t>(lo),
                                        static_cast<int32_t>(hi));
  } else {
    return Error(*d->get("kind"), JoinKey(full, "kind"),
                 "must be \"fixed\", \"uniform\" or \"lognormal\"");
  }
  return out;
}

absl::StatusOr<uint32_t> ScenarioReader::Lookup(
    const toml::node& at, const std::string& key, const std::string& name,
    const std::vector<std::string>& names, std::string_view what) const {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<uint32_t>(i);
  }
  return Error(at, key, absl::StrCat("unknown ", std::string(what), " ", Quote(name),
                                     "; known: ", absl::StrJoin(names, ", ")));
}

std::string ScenarioReader::Resolve(const std::string& path) const {
  if (path.empty() || path[0] == '/' || base_dir_.empty()) return path;
  return absl::StrCat(base_dir_, "/", path);
}

std::vector<std::string> UserNames(const Scenario& s) {
  std::vector<std::string> out;
  for (const UserConfig& u : s.scheduler.users) out.push_back(u.name);
  return out;
}

std::vector<std::string> ClassNames(const Scenario& s) {
  std::vector<std::string> out;
  for (const WorkClassConfig& c : s.scheduler.work_classes) out.push_back(c.name);
  return out;
}

}  // namespace hearth::internal
