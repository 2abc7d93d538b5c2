// The serving gate (docs/SERVING.md, "The serving gate"): two serving reports compared like with
// like. Steps are grouped by kind and power-of-two token bucket, as the report's serving section
// groups them; within each group on both sides, ms per token (summed latency / summed tokens) is
// compared with a bootstrap interval over the group's steps; a group fails when it is significantly
// more than the threshold slower: the one-sided bootstrap p-values of "at most threshold slower",
// corrected for the number of groups (Benjamini-Hochberg), below alpha. Another batch mix (groups on one side
// only, a shifted step mix) is a workload change, never a latency regression.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <ostream>
#include <tuple>

#include "reports/document/report_document.h"
#include "reports/document/report_keys.h"
#include "reports/gate/compare_internal.h"
#include "tracegate/analyzer/serving.h"

namespace tg::internal {

namespace {

// The report's serving section and its step count (docs/SERVING.md); the rows' keys are in
// report_keys.h.
constexpr std::string_view kServingSection = "serving";
constexpr std::string_view kServingSteps = "steps";
constexpr std::string_view kIterationTable = "iteration_table";

constexpr int kResamples = kServingResamples;
constexpr double kConfidence = kServingConfidence;
constexpr size_t kMinSteps = kServingMinSteps;

struct GroupSamples {
  std::vector<double> latency_ms, tokens;
};

int KindOrder(std::string_view kind) {
  for (int k = 1; k < 4; ++k)
    if (kind == kStepKindNames[k]) return k;
  return 0;  // unknown: not grouped
}

bool IsServingReport(const nlohmann::json& doc) {
  return Number(Object(doc, kServingSection), kServingSteps).value_or(0) > 0;
}

// The side's grouped steps, keyed (kind order, bucket min); `left_out` counts the serving steps of
// unknown kind, tokens or latency.
std::map<std::pair<int, int64_t>, GroupSamples> GroupSteps(const nlohmann::json& doc, size_t* left_out) {
  std::map<std::pair<int, int64_t>, GroupSamples> groups;
  for (const nlohmann::json& row : Array(doc, kIterationTable)) {
    const nlohmann::json* kind_value = Find(row, keys::kRowStepKind.name);
    if (kind_value == nullptr) continue;  // not a serving step
    const int kind = KindOrder(Text(row, keys::kRowStepKind.name));
    const int64_t tokens = Int(row, keys::kRowTokens.name, -1);
    const std::optional<double> latency = Number(row, keys::kRowLatencyMs.name);
    if (kind == 0 || tokens <= 0 || !latency || *latency < 0) {
      ++*left_out;
      continue;
    }
    GroupSamples& g = groups[{kind, TokenBucketMin(tokens)}];
    g.latency_ms.push_back(*latency);
    g.tokens.push_back(static_cast<double>(tokens));
  }
  return groups;
}

double Sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

std::string Percent(double share) { return FormatNumber(share * 100, 1) + "%"; }

std::string GroupList(const std::vector<ServingGroupDelta>& groups, bool base) {
  std::string out;
  for (const ServingGroupDelta& g : groups)
    if ((base ? g.base_steps : g.new_steps) > 0) out += (out.empty() ? "" : ", ") + ServingGroupName(g);
  return out.empty() ? "none" : out;
}

// Why no group can be judged: no group on both sides, or none with kMinSteps steps on each.
std::string NoMatchText(const Comparison& c) {
  const ServingComparison& s = c.serving;
  bool both = false;
  for (const ServingGroupDelta& g : s.groups) both = both || (g.base_steps > 0 && g.new_steps > 0);
  const std::string sides = " (" + c.base.label + ": " + GroupList(s.groups, true) + "; " + c.next.label + ": " +
                            GroupList(s.groups, false) + ")";
  if (!both) return "no serving step group (kind x token bucket) on both sides, so no ms per token to compare" + sides;
  return "no serving step group (kind x token bucket) has " + std::to_string(kMinSteps) +
         " steps on both sides, the fewest the gate judges" + sides;
}

void FindWorkloadChange(ServingComparison& s) {
  std::vector<std::string> one_side;
  for (const ServingGroupDelta& g : s.groups) {
    s.step_mix_distance += std::abs(g.base_step_share - g.new_step_share) / 2;
    if (g.base_steps == 0 || g.new_steps == 0)
      one_side.push_back(ServingGroupName(g) + " (" + (g.base_steps == 0 ? "new" : "base") + " only, " +
                         std::to_string(g.base_steps + g.new_steps) + " steps)");
  }
  const bool shifted = s.step_mix_distance >= kServingMixLimit;
  s.workload_changed = shifted || !one_side.empty();
  if (!s.workload_changed) return;
  std::vector<const ServingGroupDelta*> moved;
  for (const ServingGroupDelta& g : s.groups) moved.push_back(&g);
  std::stable_sort(moved.begin(), moved.end(), [](const ServingGroupDelta* a, const ServingGroupDelta* b) {
    return std::abs(a->new_step_share - a->base_step_share) > std::abs(b->new_step_share - b->base_step_share);
  });
  std::string text = "workload changed, not judged as latency: ";
  if (shifted) {
    text += "step mix shifted by " + Percent(s.step_mix_distance) + " (";
    for (size_t i = 0; i < moved.size() && i < 3; ++i)
      text += (i ? ", " : "") + ServingGroupName(*moved[i]) + " " + Percent(moved[i]->base_step_share) + " -> " +
              Percent(moved[i]->new_step_share);
    text += " of steps)";
  }
  if (!one_side.empty()) {
    text += shifted ? ", " : "";
    text += "groups on one side only: ";
    for (size_t i = 0; i < one_side.size(); ++i) text += (i ? ", " : "") + one_side[i];
  }
  s.workload_text = text;
}

// Benjamini-Hochberg: q_(i) = min over j >= i of m p_(j) / j, at most 1, over the judged groups.
void AdjustForGroups(ServingComparison& s) {
  std::vector<ServingGroupDelta*> judged;
  for (ServingGroupDelta& g : s.groups)
    if (g.judged) judged.push_back(&g);
  std::stable_sort(judged.begin(), judged.end(), [](const ServingGroupDelta* a, const ServingGroupDelta* b) {
    return a->bootstrap.p_not_above < b->bootstrap.p_not_above;
  });
  const double m = static_cast<double>(judged.size());
  double running = 1;
  for (size_t i = judged.size(); i-- > 0;) {
    running = std::min(running, m * judged[i]->bootstrap.p_not_above / static_cast<double>(i + 1));
    judged[i]->q = running;
  }
}

}  // namespace

std::string ServingGroupChange(const ServingGroupDelta& g) {
  return ServingGroupName(g) + " " + FormatNumber(g.base_ms_per_token, 4) + " -> " +
         FormatNumber(g.new_ms_per_token, 4) + " ms/token (" + FormatSigned(g.delta_pct, 2) + "%, " +
         FormatNumber(g.bootstrap.confidence * 100, -1) + "% CI " + FormatSigned((g.bootstrap.lo - 1) * 100, 2) +
         "%.." + FormatSigned((g.bootstrap.hi - 1) * 100, 2) + "%, q = " + FormatP(g.q) + ")";
}

std::string ServingLimitText(const Comparison& c) { return FormatSigned(c.options.threshold_pct, -1) + "%"; }

std::string ServingGroupVerdict(const Comparison& c, const ServingGroupDelta& g) {
  if (!g.judged) return "not judged: " + ServingNotJudgedReason(g);
  const std::string limit = ServingLimitText(c);
  if (g.regression)
    return VerdictHeading(Verdict::kRegression) + ": ms/token over the " + limit + " limit in " + ServingGroupChange(g);
  if (g.over_threshold)
    return VerdictHeading(Verdict::kPass) + ": " + ServingGroupChange(g) + " is over the " + limit +
           " limit but not significant (q = " + FormatP(g.q) + " >= " + FormatNumber(c.options.alpha, -1) + ")";
  return VerdictHeading(Verdict::kPass) + ": ms/token within the " + limit + " limit in " + ServingGroupChange(g);
}

std::string ServingNotJudgedReason(const ServingGroupDelta& g) {
  if (g.judged) return "";
  if (g.base_steps == 0) return "no steps in base";
  if (g.new_steps == 0) return "no steps in new";
  if (g.base_steps < kMinSteps || g.new_steps < kMinSteps)
    return "fewer than " + std::to_string(kMinSteps) + " steps on a side";
  return g.bootstrap.reason;
}

ServingRowCells ServingRow(const ServingGroupDelta& g) {
  ServingRowCells r;
  r.group = ServingGroupName(g);
  r.steps = std::to_string(g.base_steps) + " / " + std::to_string(g.new_steps);
  r.shares = Percent(g.base_step_share) + " / " + Percent(g.new_step_share);
  r.base_ms_per_token = g.base_steps ? FormatNumber(g.base_ms_per_token, 4) : "n/a";
  r.new_ms_per_token = g.new_steps ? FormatNumber(g.new_ms_per_token, 4) : "n/a";
  r.change = g.judged ? FormatSigned(g.delta_pct, 2) + "%" : "n/a";
  r.interval =
      g.judged ? FormatSigned((g.bootstrap.lo - 1) * 100, 2) + "%.." + FormatSigned((g.bootstrap.hi - 1) * 100, 2) + "%"
               : "n/a";
  r.q = g.judged ? FormatP(g.q) : "n/a";
  r.verdict = g.regression        ? "REGRESSION"
              : g.over_threshold  ? "over the limit, not significant"
              : g.judged          ? "pass"
              : g.base_steps == 0 ? "new only"
              : g.new_steps == 0  ? "base only"
                                  : "fewer than " + std::to_string(kMinSteps) + " steps a side";
  return r;
}

std::string ServingGroupName(const ServingGroupDelta& g) {
  return g.kind + " " +
         (g.bucket_max - g.bucket_min <= 1 ? std::to_string(g.bucket_min)
                                           : std::to_string(g.bucket_min) + "-" + std::to_string(g.bucket_max - 1)) +
         " tokens";
}

void CompareServing(const nlohmann::json& base, const nlohmann::json& next, Comparison* c) {
  ServingComparison& s = c->serving;
  if (!IsServingReport(base) || !IsServingReport(next)) return;
  s.applies = true;
  const auto b = GroupSteps(base, &s.base_left_out), n = GroupSteps(next, &s.new_left_out);
  std::map<std::pair<int, int64_t>, std::pair<const GroupSamples*, const GroupSamples*>> keys;
  for (const auto& [key, g] : b) keys[key].first = &g;
  for (const auto& [key, g] : n) keys[key].second = &g;
  double base_steps = 0, new_steps = 0;
  for (const auto& [key, g] : b) base_steps += static_cast<double>(g.tokens.size());
  for (const auto& [key, g] : n) new_steps += static_cast<double>(g.tokens.size());
  const GroupSamples none;
  for (const auto& [key, sides] : keys) {
    const GroupSamples& gb = sides.first ? *sides.first : none;
    const GroupSamples& gn = sides.second ? *sides.second : none;
    ServingGroupDelta g;
    g.kind = kStepKindNames[key.first];
    g.bucket_min = key.second;
    g.bucket_max = key.second == 0 ? 1 : 2 * key.second;
    g.base_steps = gb.tokens.size();
    g.new_steps = gn.tokens.size();
    const double bt = Sum(gb.tokens), nt = Sum(gn.tokens);
    g.base_tokens = static_cast<int64_t>(bt);
    g.new_tokens = static_cast<int64_t>(nt);
    if (bt > 0) g.base_ms_per_token = Sum(gb.latency_ms) / bt;
    if (nt > 0) g.new_ms_per_token = Sum(gn.latency_ms) / nt;
    if (base_steps > 0) g.base_step_share = static_cast<double>(g.base_steps) / base_steps;
    if (new_steps > 0) g.new_step_share = static_cast<double>(g.new_steps) / new_steps;
    if (g.base_steps >= kMinSteps && g.new_steps >= kMinSteps)
      g.bootstrap = BootstrapRatioOfRates(gb.latency_ms, gb.tokens, gn.latency_ms, gn.tokens,
                                          1 + c->options.threshold_pct / 100, kResamples, kConfidence, kBootstrapSeed);
    g.judged = g.bootstrap.ok;
    if (g.judged) {
      g.delta_pct = (g.bootstrap.ratio - 1) * 100;
      g.over_threshold = g.delta_pct > c->options.threshold_pct;
      ++s.judged;
    }
    s.groups.push_back(std::move(g));
  }
  AdjustForGroups(s);
  for (ServingGroupDelta& g : s.groups) {
    g.regression = g.judged && g.over_threshold && g.q < c->options.alpha;
    s.regressions += g.regression;
  }
  FindWorkloadChange(s);
  if (s.judged == 0) {
    s.no_match = NoMatchText(*c);
    c->problems.push_back({"latency", s.no_match});  // JUnit: the latency case's error
  }
  for (auto [left, label] : {std::pair{s.base_left_out, &c->base.label}, std::pair{s.new_left_out, &c->next.label}})
    if (left > 0)
      c->notes.push_back(*label + ": " + std::to_string(left) +
                         " serving steps of unknown kind or tokens are in no step group, so not compared");
}

std::string ServingVerdictText(const Comparison& c) {
  const ServingComparison& s = c.serving;
  std::vector<std::string> clauses;
  const std::string limit = FormatSigned(c.options.threshold_pct, -1) + "%";
  if (s.regressions > 0) {
    std::string text = "ms/token over the " + limit + " limit in ";
    bool first = true;
    for (const ServingGroupDelta& g : s.groups)
      if (g.regression) text += (first ? "" : ", ") + ServingGroupChange(g), first = false;
    clauses.push_back(text);
  } else {
    const ServingGroupDelta* largest = nullptr;
    for (const ServingGroupDelta& g : s.groups)
      if (g.judged && (!largest || g.delta_pct > largest->delta_pct)) largest = &g;
    std::string text = "ms/token within the " + limit + " limit in " + std::to_string(s.judged) +
                       (s.judged == 1 ? " step group" : " step groups");
    if (largest) text += " (largest change " + ServingGroupChange(*largest) + ")";
    clauses.push_back(text);
    for (const ServingGroupDelta& g : s.groups)
      if (g.judged && g.over_threshold)
        clauses.push_back(ServingGroupName(g) + " is over the limit but not significant (q = " + FormatP(g.q) +
                          " >= " + FormatNumber(c.options.alpha, -1) + ")");
  }
  if (s.workload_changed) clauses.push_back(s.workload_text);
  if (c.has_latency && (s.workload_changed || c.over_threshold))
    clauses.push_back("avg_latency_ms " + FormatNumber(c.base_latency_ms, 3) + " -> " +
                      FormatNumber(c.new_latency_ms, 3) + " ms (" + FormatSigned(c.latency_delta_pct, 2) +
                      "%) follows the batch mix: serving steps are judged per group");
  std::string text = VerdictHeading(c.verdict) + ": ";
  for (size_t i = 0; i < clauses.size(); ++i) text += (i ? "; " : "") + clauses[i];
  return text;
}

nlohmann::json ServingComparisonJson(const Comparison& c) {
  const ServingComparison& s = c.serving;
  auto number_or = [](bool has, double v) { return has ? nlohmann::json(v) : nlohmann::json(nullptr); };
  nlohmann::json groups = nlohmann::json::array();
  for (const ServingGroupDelta& g : s.groups) {
    const bool base = g.base_steps > 0, next = g.new_steps > 0;
    groups.push_back({{"kind", g.kind},
                      {"token_bucket_min", g.bucket_min},
                      {"token_bucket_max", g.bucket_max},
                      {"name", ServingGroupName(g)},
                      {"base_steps", g.base_steps},
                      {"new_steps", g.new_steps},
                      {"base_tokens", g.base_tokens},
                      {"new_tokens", g.new_tokens},
                      {"base_ms_per_token", number_or(base, g.base_ms_per_token)},
                      {"new_ms_per_token", number_or(next, g.new_ms_per_token)},
                      {"base_step_share", g.base_step_share},
                      {"new_step_share", g.new_step_share},
                      {"judged", g.judged},
                      {"not_judged_reason", ServingNotJudgedReason(g)},
                      {"ratio", number_or(g.judged, g.bootstrap.ratio)},
                      {"delta_pct", number_or(g.judged, g.delta_pct)},
                      {"ci_lo_pct", number_or(g.judged, (g.bootstrap.lo - 1) * 100)},
                      {"ci_hi_pct", number_or(g.judged, (g.bootstrap.hi - 1) * 100)},
                      {"p_within_threshold", number_or(g.judged, g.bootstrap.p_not_above)},
                      {"q", number_or(g.judged, g.q)},
                      {"over_threshold", g.over_threshold},
                      {"regression", g.regression}});
    if (g.judged) groups.back()["not_judged_reason"] = nullptr;
  }
  return {{"groups", std::move(groups)},
          {"judged", s.judged},
          {"regressions", s.regressions},
          {"failing",
           [&] {
             nlohmann::json names = nlohmann::json::array();
             for (const ServingGroupDelta& g : s.groups)
               if (g.regression) names.push_back(ServingGroupName(g));
             return names;
           }()},
          {"base_left_out", s.base_left_out},
          {"new_left_out", s.new_left_out},
          {"workload_changed", s.workload_changed},
          {"workload", s.workload_text.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.workload_text)},
          {"step_mix_distance", s.step_mix_distance},
          {"step_mix_limit", kServingMixLimit},
          {"no_match", s.no_match.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.no_match)},
          {"statistic", "ms_per_token = sum(latency_ms) / sum(tokens) of the group's steps"},
          {"bootstrap",
           {{"resamples", kResamples}, {"confidence", kConfidence}, {"seed", kBootstrapSeed}, {"unit", "steps"}}},
          {"fdr", "benjamini-hochberg"}};
}

void ServingTable(std::ostream& out, const Comparison& c, bool markdown) {
  const ServingComparison& s = c.serving;
  if (!s.applies) return;
  const std::string ci = FormatNumber(kConfidence * 100, -1) + "% CI";
  if (markdown)
    out << "\n### Serving step groups (ms per token)\n\n| step group | steps base / new | share of steps base / new | "
           "base ms/token | new ms/token | change | "
        << ci << " | q | verdict |\n|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
  else out << "  serving step groups (ms per token, " << ci << " bootstrap, q Benjamini-Hochberg):\n";
  for (const ServingGroupDelta& g : s.groups) {
    const ServingRowCells r = ServingRow(g);
    if (markdown) {
      out << "| " << r.group << " | " << r.steps << " | " << r.shares << " | " << r.base_ms_per_token << " | "
          << r.new_ms_per_token << " | " << r.change << " | " << r.interval << " | " << r.q << " | "
          << (g.regression ? "**REGRESSION**" : r.verdict) << " |\n";
    } else {
      char line[256];
      std::snprintf(line, sizeof line, "    %-24s %11s %15s %9s -> %-9s %9s %19s %8s  %s\n", r.group.c_str(),
                    r.steps.c_str(), r.shares.c_str(), r.base_ms_per_token.c_str(), r.new_ms_per_token.c_str(),
                    r.change.c_str(), r.interval.c_str(), r.q.c_str(), r.verdict.c_str());
      out << line;
    }
  }
  if (s.workload_changed) out << (markdown ? "\n" : "  ") << s.workload_text << "\n";
  if (markdown) out << "\n";
}

}  // namespace tg::internal
