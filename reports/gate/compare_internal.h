// Shared by the comparison's sources (which read the reports with reports/document/): the kernel
// and phase diff, and the formatting of the texts (verdict line, terminal, Markdown, JUnit).
// Internal to the reports library.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "tracegate/reports/compare.h"

namespace tg::internal {

// Fills c.kernels (from each side's kernel_table), c.phases (phases.<p>.mean_ms), c.families,
// their shares of c.latency_delta_ms (when c.significant) and the contributors; a note when a
// side lacks the section.
void DiffKernelsAndPhases(const nlohmann::json& base, const nlohmann::json& next, Comparison& c);

// The families (KernelFamilyName) of c.kernels[i] for i in `kernels`, in first-seen order, with
// their times and launches per iteration summed.
std::vector<FamilyDelta> GroupFamilies(const Comparison& c, const std::vector<size_t>& kernels);

// The families of one KernelChange in c.families: how many, and their summed per-iteration
// deltas (GPU ms, launches).
struct FamilyTotals {
  size_t families = 0;
  double delta_ms = 0, delta_launches = 0;
};
FamilyTotals TotalFamilies(const Comparison& c, KernelChange change);
// The kernels' GPU time per iteration, new minus base, over every kernel of c.kernels.
double KernelDeltaMs(const Comparison& c);

// Lost data on either side (compare.h): "data_quality" problems naming the counter or table and
// its numbers; a note when a side has no counts{} to check.
void CheckLostData(const nlohmann::json& base, const nlohmann::json& next, Comparison& c);

// Job reports (either side): c.ranks, each rank's avg_latency_ms on both sides (compare_ranks.cpp).
void DiffRanks(const nlohmann::json& base, const nlohmann::json& next, Comparison& c);
// "ranks over the limit: 2 1.000 -> 1.200 ms (+20.00%)", or "" when none is.
std::string RanksOverText(const Comparison& c);
// The per-rank table of the terminal summary or the Markdown report (nothing without ranks).
void RankTable(std::ostream& out, const Comparison& c, bool markdown);
nlohmann::json RanksJson(const Comparison& c);
// A family in the comparison document: name, change, variants and the per-iteration times.
nlohmann::json FamilyJson(const FamilyDelta& f);

// "%.<decimals>f"; decimals < 0: the shortest form ("%g"), so a threshold of 5 reads "5".
std::string FormatNumber(double v, int decimals);
// A Markdown code span for a name from a trace: backticks cannot close it; in a table cell, pipes
// cannot end the cell.
std::string MdCode(const std::string& s, bool in_table = true);
// FormatNumber with a sign: "+4.90", "-0.300", "+0".
std::string FormatSigned(double v, int decimals);
// A p-value with 3 significant digits: "0.0513", "1.08e-05", "1".
std::string FormatP(double p);
// Decimals a metric is shown with: 4 for ratios and the CV, 3 for times and rates.
int MetricDecimals(const MetricDelta& m);
// "PASS", "REGRESSION", "CANNOT JUDGE": the verdict's name as a heading.
std::string VerdictHeading(Verdict v);
// What a reader should know before trusting a comparison, besides why it cannot judge (the verdict
// line says that): each side's warm-up dropped, its warning-level data-quality counters, unstable
// (CV > 0.15) or too few samples for the Mann-Whitney test to ever be significant, and the
// comparison's notes (devices compared anyway, sections a report lacks). For the Markdown and the
// HTML page (compare_markdown.cpp).
struct Caveat {
  bool warning = false;  // else information
  std::string text;
};
std::vector<Caveat> ComparisonCaveats(const Comparison& c);
// The smallest two-sided p-value the exact Mann-Whitney test can give with na and nb distinct
// samples: 2 / C(na + nb, na), capped at 1.
double SmallestMannWhitneyP(size_t na, size_t nb);
// The verdict line's clauses: split at "; " outside parentheses ("REGRESSION: avg_latency_ms ...",
// "slower kernels: ...", "phases: ...").
std::vector<std::string> VerdictClauses(const std::string& text);

// Serving reports on both sides (compare_serving.cpp): fills c->serving from the reports'
// iteration_table rows, and adds a "latency" problem when no step group can be judged.
void CompareServing(const nlohmann::json& base, const nlohmann::json& next, Comparison* c);
// The verdict line of a comparison of serving reports that can judge.
std::string ServingVerdictText(const Comparison& c);
// "decode 64-127 tokens" (kind and token bucket).
std::string ServingGroupName(const ServingGroupDelta& g);
// The comparison document's "serving" member (only when c.serving.applies).
nlohmann::json ServingComparisonJson(const Comparison& c);
// The step groups' table of the terminal summary or the Markdown (nothing unless
// c.serving.applies).
void ServingTable(std::ostream& out, const Comparison& c, bool markdown);
// Bootstrap resamples per step group, with a fixed seed: the same reports always give the same
// verdict. Fewer than kServingMinSteps steps on a side and the bootstrap understates the spread of
// their ms per token: the group is listed, not judged.
inline constexpr int kServingResamples = 2000;
inline constexpr double kServingConfidence = 0.95;
inline constexpr size_t kServingMinSteps = 10;
// One row of the step groups' table, its cells as the terminal, the Markdown and the HTML page
// show them ("n/a" where a side has no steps or the group is not judged); verdict: "REGRESSION",
// "over the limit, not significant", "pass", "new only", "base only" or "fewer than 10 steps a side".
struct ServingRowCells {
  std::string group, steps, shares, base_ms_per_token, new_ms_per_token, change, interval, q, verdict;
};
ServingRowCells ServingRow(const ServingGroupDelta& g);
// "decode 64-127 tokens 0.0630 -> 0.0670 ms/token (+6.23%, 95% CI +5.51%..+6.91%, q = 0.005)" (a
// judged group).
std::string ServingGroupChange(const ServingGroupDelta& g);
// The limit as the texts say it: "+5%".
std::string ServingLimitText(const Comparison& c);
// One group's verdict as a line: "REGRESSION: ms/token over the +5% limit in <change>", "PASS: ms/token
// within the +5% limit in <change>", "PASS: <change> is over the +5% limit but not significant (q = ...)",
// or "not judged: <why>" (JUnit, compare_text.cpp).
std::string ServingGroupVerdict(const Comparison& c, const ServingGroupDelta& g);
// Why a group is not judged ("no steps in base", "fewer than 10 steps on a side", ...); "" when judged.
std::string ServingNotJudgedReason(const ServingGroupDelta& g);

// How many kernels have each KernelChange, indexed by the enum.
std::array<size_t, 4> CountChanges(const Comparison& c);

}  // namespace tg::internal
