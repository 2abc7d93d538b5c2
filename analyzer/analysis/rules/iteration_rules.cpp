// Iteration rules: the iterations' phases and latencies. slow_post (the post phase's share),
// unstable (latency CV) and drift (latency trend across the run).
#include <algorithm>

#include "analyzer/analysis/rules/rule_helpers.h"
#include "tracegate/analyzer/amdahl.h"
#include "tracegate/analyzer/stats.h"
#include "tracegate/analyzer/strings.h"

namespace tg::internal {

void EvaluateSlowPost(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  Finding f;
  if (!PhaseAbove(c, rule, Phase::kPost, "post_ms_ratio", "post-processing runs faster by", &f)) return;
  double r = c.PhaseRatio(Phase::kPost);
  f.summary = StrFormat("Post-processing takes %.1f%% of each iteration (%.3f ms on average) while the GPU has no work "
                  "of the iteration.", r * 100, c.PhaseMeanMs(Phase::kPost));
  // The device gaps that waited for a launch while the host was in a pre/post stage are this
  // rule's (the launch rules leave them out); said where the causes are known.
  if (const std::optional<double> stage = c.IdleCauseShare(IdleCause::kHostStage); stage && *stage > 0)
    f.summary += StrFormat(" %.1f%% of the devices' gap time inside the iterations waits for a launch while the host is in a "
                           "pre/post stage (host_stage).", *stage * 100);
  f.involved.push_back(Involved{"range", "post", c.n(), static_cast<TimeNs>(c.PhaseMeanMs(Phase::kPost) * 1e6 * c.n()),
                                "ranges matching the post phase"});
  f.claim = SpaceClaim(ClaimSpace::kPost, f.amdahl.share);
  out.push_back(std::move(f));
}

namespace {

std::vector<double> LatenciesMs(const IterationAnalysis& it) {
  std::vector<double> v;
  v.reserve(it.iterations.size());
  for (const Iteration& i : it.iterations) v.push_back(NsToMs(i.latency_ns()));
  return v;
}

void SlowestIterations(const RuleContext& c, Finding& f) {
  std::vector<const Iteration*> v;
  for (const Iteration& i : c.iters().iterations) v.push_back(&i);
  std::sort(v.begin(), v.end(), [](const Iteration* a, const Iteration* b) {
    if (a->latency_ns() != b->latency_ns()) return a->latency_ns() > b->latency_ns();
    return a->index < b->index;
  });
  for (size_t k = 0; k < v.size() && k < 3; ++k)
    f.involved.push_back(Involved{"iteration", v[k]->name.empty() ? StrFormat("#%zu", v[k]->index) : v[k]->name, 1,
                                  v[k]->latency_ns(), StrFormat("iteration index %zu", v[k]->index)});
}

}  // namespace

void EvaluateUnstable(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  const SampleStats& s = c.iters().latency_ms;
  double thr = c.P(rule, "threshold");
  if (static_cast<double>(s.n) < c.P(rule, "min_iterations") || !s.has_cv || !(s.cv > thr)) return;
  Finding f = StartFinding(rule);
  f.evidence.push_back(Ev("latency_cv", s.cv, thr, ">", "cv"));
  f.summary = StrFormat("Iteration latency varies too much to compare runs: CV %.2f (mean %.3f ms, p50 %.3f ms, p95 %.3f ms, "
                  "max %.3f ms).", s.cv, s.mean, s.p50, s.p95, s.max);
  SlowestIterations(c, f);
  double excess = 0;
  for (double v : LatenciesMs(c.iters())) excess += std::max(0.0, v - s.p50);
  f.amdahl = MakeAmdahl(excess / (s.mean * static_cast<double>(s.n)), kInfiniteSpeedup, "measured",
                        "every iteration runs as fast as the median one");
  // The excess latency is made of every phase of the slow iterations: the run as a whole.
  f.claim = SpaceClaim(ClaimSpace::kRun, f.amdahl.share);
  out.push_back(std::move(f));
}

void EvaluateDrift(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  std::vector<double> lat = LatenciesMs(c.iters());
  if (static_cast<double>(lat.size()) < c.P(rule, "min_iterations")) return;
  LinearFit fit = FitLine(lat);
  double mean = c.iters().latency_ms.mean;
  if (!fit.ok || mean <= 0) return;
  double rise = fit.slope * static_cast<double>(lat.size() - 1) / mean, thr = c.P(rule, "threshold");
  if (!(rise > thr && fit.r >= c.P(rule, "min_r"))) return;
  Finding f = StartFinding(rule);
  f.evidence.push_back(Ev("latency_trend_rise_ratio", rise, thr, ">"));
  f.evidence.push_back(Ev("latency_trend_r", fit.r, c.P(rule, "min_r"), ">=", "pearson_r"));
  f.summary = StrFormat("Latency rises %.1f%% across the run (trend from %.3f ms to %.3f ms over %zu iterations, r = %.2f).",
                  rise * 100, fit.intercept, fit.intercept + fit.slope * static_cast<double>(lat.size() - 1),
                  lat.size(), fit.r);
  SlowestIterations(c, f);
  double excess = 0;
  for (double v : lat) excess += std::max(0.0, v - fit.intercept);
  f.amdahl = MakeAmdahl(excess / (mean * static_cast<double>(lat.size())), kInfiniteSpeedup, "measured",
                        "every iteration runs as fast as the trend's start");
  f.claim = SpaceClaim(ClaimSpace::kRun, f.amdahl.share);
  out.push_back(std::move(f));
}

}  // namespace tg::internal
