// Kernel rules: what the kernels do. memory_bound (the roofline, or kernel classes by op and name),
// transform_kernels (layout and copy kernels by name: an op never makes a kernel a transform nor
// takes it out of that class) and fusion_candidate (chains that one kernel could do; it reads
// FindingsInput::fusion, which RunAnalysis fills on a second thread).
#include "analyzer/analysis/rules/rule_helpers.h"
#include "analyzer/util/demangle.h"
#include "tracegate/analyzer/strings.h"

namespace tg::internal {

void EvaluateMemoryBound(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  const std::vector<RooflineItem>& roof = *c.in().roofline;
  bool use_roofline = !roof.empty() && c.in().peak->has_bandwidth && c.in().peak->has_flops;
  Finding f = StartFinding(rule);
  double share = 0, thr = 0;
  std::vector<Interval> where;  // the kernels' wall time inside the spans: the claim
  if (use_roofline) {
    double bw_thr = c.P(rule, "bandwidth_share");
    TimeNs time = 0;
    std::vector<uint8_t> row_in(c.trace().kernels.size(), 0);  // kernels of qualifying items
    for (const RooflineItem& item : roof) {
      if (!item.memory_bound || item.bandwidth_share < bw_thr) continue;
      time += item.time_ns;
      for (size_t r : item.kernel_rows) row_in[r] = 1;
      f.involved.push_back(Involved{"kernel", item.label, item.launches, item.time_ns,
                                    StrFormat("%.0f GB/s (%.0f%% of peak), %.2f TFLOP/s (%.1f%% of peak), %.2f FLOP/B, %s",
                                        item.achieved_gbs, item.bandwidth_share * 100, item.achieved_tflops,
                                        item.flops_share * 100, item.intensity, item.source.c_str())});
    }
    thr = c.P(rule, "min_share");
    if (!(c.Share(time) >= thr)) return;
    where = WallIntervalsWhere(c, c.trace().kernels, [&](size_t i) { return row_in[i] != 0; });
    share = c.Share(LengthOf(where));
    if (!(share >= thr)) return;
    f.evidence.push_back(Ev("memory_bound_time_ratio", share, thr, ">="));
    f.summary = StrFormat("Kernels below the roofline ridge running at >= %.0f%% of peak bandwidth (%s) take %.1f%% of "
                    "the iteration: only moving fewer bytes makes them faster.",
                    bw_thr * 100, c.in().peak->source.c_str(), share * 100);
  } else {
    std::map<std::string, Tally> groups;
    TimeNs time = KernelTimeWhere(c, IsLikelyMemoryBound, &groups);
    thr = c.P(rule, "heuristic_min_share");
    if (!(c.Share(time) >= thr)) return;
    const std::vector<KernelClass>& cls = *c.in().kernel_classes;
    where = WallIntervalsWhere(c, c.trace().kernels,
                               [&](size_t i) { return c.KernelKept(i) && IsLikelyMemoryBound(cls[i]); });
    share = c.Share(LengthOf(where));
    if (!(share >= thr)) return;
    f.heuristic = true;
    f.evidence.push_back(Ev("likely_memory_bound_time_ratio", share, thr, ">="));
    f.summary = StrFormat("Element-wise, normalisation, reduction and layout kernels take %.1f%% of the iteration. They "
                    "are classed as memory-bound by the op that launched them, else by name (a heuristic: pass "
                    "--costs or annotate ranges with bytes=/flops= for a roofline%s).",
                    share * 100, roof.empty() ? "" : "; the GPU's peak rates are unknown, pass --peak-gbs/--peak-tflops");
    f.involved = TopInvolved(groups, "kernel", kTopInvolved);
  }
  double s = c.P(rule, "assumed_speedup");
  f.amdahl = MakeAmdahl(share, s, "assumed", StrFormat("memory-bound kernels move fewer bytes and run %.2fx faster", s));
  f.claim = LocatedClaim(c, std::move(where), share, true);
  out.push_back(std::move(f));
}

void EvaluateTransformKernels(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  std::map<std::string, Tally> groups;
  TimeNs transform = KernelTimeWhere(c, [](KernelClass k) { return k == KernelClass::kTransform; }, &groups);
  if (transform <= 0) return;
  // Wall times: the kernels' share of the GPU's kernel time, counting concurrent streams once.
  const std::vector<KernelClass>& cls = *c.in().kernel_classes;
  std::vector<Interval> where = WallIntervalsWhere(
      c, c.trace().kernels, [&](size_t i) { return c.KernelKept(i) && cls[i] == KernelClass::kTransform; });
  const TimeNs all = LengthOf(WallIntervalsWhere(c, c.trace().kernels, [&](size_t i) { return c.KernelKept(i); }));
  if (all <= 0) return;
  const TimeNs wall = LengthOf(where);
  double share = static_cast<double>(wall) / static_cast<double>(all), thr = c.P(rule, "threshold");
  if (!(share >= thr)) return;
  Finding f = StartFinding(rule);
  f.heuristic = true;
  f.evidence.push_back(Ev("transform_kernel_time_ratio", share, thr, ">="));
  f.summary = StrFormat("Transpose, concat, layout-conversion and copy kernels take %.1f%% of the kernels' wall time "
                  "(%.1f%% of the iteration): they move data without computing (classed by name).",
                  share * 100, c.Share(wall) * 100);
  f.involved = TopInvolved(groups, "kernel", kTopInvolved);
  double s = c.P(rule, "assumed_speedup");
  f.amdahl = MakeAmdahl(c.Share(wall), s, "assumed", StrFormat("half the layout work disappears (%.2fx)", s));
  f.claim = LocatedClaim(c, std::move(where), f.amdahl.share, true);
  out.push_back(std::move(f));
}

void EvaluateFusionCandidate(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  double min_share = c.P(rule, "min_share");
  for (const FusionCandidate& cand : *c.in().fusion) {
    // The chains' wall time (occurrences on concurrent streams count once), inside the spans.
    std::vector<Interval> spans(cand.spans.begin(), cand.spans.end());
    std::vector<Interval> where = IntersectUnions(UnionOf(spans), c.Spans());
    const double share = c.Share(LengthOf(where));
    if (!(share >= min_share)) continue;
    Finding f = StartFinding(rule);
    f.heuristic = true;
    std::string chain, classes;
    for (size_t k = 0; k < cand.names.size(); ++k) {
      chain += (k ? " -> " : "") + ShortKernelName(Demangle(c.trace().Name(cand.names[k])));
      classes += (k ? " -> " : "") + std::string(kKernelClassNames[static_cast<size_t>(cand.classes[k])]);
    }
    f.title = "Fusion candidate: " + classes;
    f.evidence.push_back(Ev("chain_time_ratio", share, min_share, ">="));
    f.evidence.push_back(Ev("occurrences_per_iteration", cand.per_iteration, 0, ">", "count"));
    // Inside a graph replay the kernels follow each other without launch gaps: nothing to save there.
    const std::string gaps = cand.graph_occurrences == 0 ? "launch gaps vanish"
                             : cand.graph_occurrences == cand.occurrences
                                 ? "no launch gaps to save inside a graph replay"
                                 : StrFormat("launch gaps vanish (the %llu inside graph replays have none)",
                                             static_cast<unsigned long long>(cand.graph_occurrences));
    f.amdahl = MakeAmdahl(share, cand.local_speedup, "assumed",
                          StrFormat("the fused kernel costs the head plus %.0f%% of the followers; %s",
                                    c.P(rule, "follower_residual") * 100, gaps.c_str()));
    f.summary = StrFormat("The chain %s runs %llu times (%.1f per iteration) and takes %.1f%% of the iteration. Fused, each "
                    "occurrence would save about %.1f us (local speedup %.3fx); over every occurrence the run gains "
                    "%.2f%%.",
                    chain.c_str(), static_cast<unsigned long long>(cand.occurrences), cand.per_iteration,
                    share * 100,
                    cand.occurrences ? NsToMs(cand.saving_ns) * 1000 / static_cast<double>(cand.occurrences) : 0.0,
                    cand.local_speedup, f.amdahl.gain_pct);
    for (size_t k = 0; k < cand.names.size(); ++k) {
      size_t row = k < cand.first_rows.size() ? cand.first_rows[k] : 0;
      TimeNs d = k < cand.first_rows.size() ? c.trace().kernels.end[row] - c.trace().kernels.start[row] : 0;
      f.involved.push_back(Involved{"kernel", ShortKernelName(Demangle(c.trace().Name(cand.names[k]))),
                                    cand.occurrences, d,
                                    std::string(kKernelClassNames[static_cast<size_t>(cand.classes[k])]) +
                                        (k == 0 ? ", head" : ", follower") + "; time is the first occurrence's"});
    }
    f.claim = LocatedClaim(c, std::move(where), share, false);
    out.push_back(std::move(f));
  }
}

}  // namespace tg::internal
