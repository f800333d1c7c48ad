// The scenario's optional [paper] table: published figures the report prints
// beside Hearth's (reference_figures.h).

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "internal/status_macros.h"
#include "sim/scenario_reader.h"

namespace hearth::internal {
namespace {

absl::StatusOr<ReferenceFigure> ParseFigure(const ScenarioReader& r, const toml::table& f,
                                            const std::string& path, const Scenario& s) {
  HEARTH_RETURN_IF_ERROR(CheckKeys(f, {"policy", "figure", "value", "note"}, r.file(), path));
  ReferenceFigure out;
  HEARTH_ASSIGN_OR_RETURN(out.policy, r.String(f, "policy", path, std::nullopt));
  if (std::find(s.policies.begin(), s.policies.end(), out.policy) == s.policies.end()) {
    return r.Error(*f.get("policy"), path + ".policy",
                   absl::StrCat("\"", out.policy, "\" is not one of the scenario's policies (",
                                absl::StrJoin(s.policies, ", "), ")"));
  }
  HEARTH_ASSIGN_OR_RETURN(out.figure, r.String(f, "figure", path, std::nullopt));
  if (std::find(std::begin(kReferenceFigureNames), std::end(kReferenceFigureNames),
                out.figure) == std::end(kReferenceFigureNames) &&
      !IsCapacityFigure(out.figure)) {
    return r.Error(*f.get("figure"), path + ".figure",
                   absl::StrCat("unknown figure \"", out.figure, "\"; known: ",
                                absl::StrJoin(kReferenceFigureNames, ", "), ", ",
                                absl::StrJoin(kCapacityFigureNames, ", "),
                                " (the last two measured by --capacity)"));
  }
  HEARTH_ASSIGN_OR_RETURN(out.value, r.Number(f, "value", path, std::nullopt, 0, 1e15));
  HEARTH_ASSIGN_OR_RETURN(out.note, r.String(f, "note", path, ""));
  return out;
}

}  // namespace

absl::Status ParsePaper(const ScenarioReader& r, const toml::table& root, Scenario& s) {
  if (root.get("paper") == nullptr) return absl::OkStatus();
  HEARTH_ASSIGN_OR_RETURN(const toml::table* paper, r.Table(root, "paper", ""));
  HEARTH_RETURN_IF_ERROR(CheckKeys(*paper, {"source", "figure"}, r.file(), "paper"));
  HEARTH_ASSIGN_OR_RETURN(s.paper.source, r.String(*paper, "source", "paper", std::nullopt));
  HEARTH_ASSIGN_OR_RETURN(std::vector<const toml::table*> figures,
                          r.Tables(*paper, "figure", "paper"));
  if (figures.empty()) {
    return r.Error(*paper, "paper.figure", "must list at least one [[paper.figure]]");
  }
  for (size_t i = 0; i < figures.size(); ++i) {
    const std::string path = absl::StrCat("paper.figure[", i, "]");
    HEARTH_ASSIGN_OR_RETURN(ReferenceFigure f, ParseFigure(r, *figures[i], path, s));
    for (const ReferenceFigure& seen : s.paper.figures) {
      if (seen.policy == f.policy && seen.figure == f.figure) {
        return r.Error(*figures[i], path,
                       absl::StrCat("repeats ", f.figure, " for ", f.policy,
                                    "; each policy's figure may appear once"));
      }
    }
    s.paper.figures.push_back(std::move(f));
  }
  return absl::OkStatus();
}

}  // namespace hearth::internal
