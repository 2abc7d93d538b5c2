// Copy rules: host<->device copies. h2d_bound (their phase takes a large share), pageable_copies
// (staged through a driver buffer) and small_copies (each pays the fixed cost of a copy).
#include <algorithm>

#include "analyzer/analysis/rules/rule_helpers.h"
#include "tracegate/analyzer/strings.h"

namespace tg::internal {

void EvaluateH2dBound(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  Finding f;
  if (!PhaseAbove(c, rule, Phase::kH2d, "h2d_ms_ratio", "host-to-device copy time shrinks", &f)) return;
  double r = c.PhaseRatio(Phase::kH2d);
  f.summary = StrFormat("Host-to-device copies take %.1f%% of each iteration (%.3f ms on average).", r * 100,
                  c.PhaseMeanMs(Phase::kH2d));
  std::map<std::string, Tally> groups;
  const MemcpyTable& m = c.trace().memcpys;
  CopyTimeWhere(c, [&](size_t i) { return m.kind[i] == CopyKind::kHtoD; }, &groups);
  f.involved = TopInvolved(groups, "copy", kTopInvolved);
  // The h2d phase is the instants of the spans with an HtoD copy (of any iteration) active.
  f.claim = LocatedClaim(c, WallIntervalsWhere(c, m, [&](size_t i) { return m.kind[i] == CopyKind::kHtoD; }), r, true);
  out.push_back(std::move(f));
}

void EvaluatePageableCopies(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  const MemcpyTable& m = c.trace().memcpys;
  std::map<std::string, Tally> groups;
  uint64_t count = 0;
  auto pageable = [&](size_t i) { return m.src_kind[i] == MemKind::kPageable || m.dst_kind[i] == MemKind::kPageable; };
  TimeNs time = CopyTimeWhere(c, pageable, &groups, &count);
  double thr = c.P(rule, "threshold");
  if (count == 0 || !(c.Share(time) >= thr)) return;
  std::vector<Interval> where = WallIntervalsWhere(c, m, [&](size_t i) { return c.CopyKept(i) && pageable(i); });
  double share = c.Share(LengthOf(where));
  if (!(share >= thr)) return;
  Finding f = StartFinding(rule);
  f.evidence.push_back(Ev("pageable_copy_ratio", share, thr, ">="));
  f.summary = StrFormat("%llu copies from or to pageable host memory take %.1f%% of the iteration; pageable copies are "
                  "staged through a driver buffer and cannot overlap compute.",
                  static_cast<unsigned long long>(count), share * 100);
  f.involved = TopInvolved(groups, "copy", kTopInvolved);
  double s = c.P(rule, "assumed_speedup");
  f.amdahl = MakeAmdahl(share, s, "assumed", StrFormat("pinned copies run %.2fx faster", s));
  f.claim = LocatedClaim(c, std::move(where), share, true);
  out.push_back(std::move(f));
}

void EvaluateSmallCopies(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out) {
  const MemcpyTable& m = c.trace().memcpys;
  const int64_t limit = c.in().small_copy_bytes;
  Finding f = StartFinding(rule);
  TimeNs time = 0;
  uint64_t merged_count = 0, groups_count = 0;
  std::vector<CopyKind> dirs;  // the directions with enough small copies
  for (CopyKind dir : {CopyKind::kHtoD, CopyKind::kDtoH}) {
    std::map<std::string, Tally> groups;
    uint64_t count = 0;
    TimeNs t = CopyTimeWhere(c, [&](size_t i) { return m.kind[i] == dir && m.bytes[i] < limit; }, &groups, &count);
    double per_iter = c.PerIteration(static_cast<double>(count));
    double min_per = c.P(rule, "min_per_iteration");
    if (!(per_iter >= min_per)) continue;
    std::string name(CopyKindName(dir));
    f.evidence.push_back(Ev("small_" + name + "_copies_per_iteration", per_iter, min_per, ">=", "count"));
    for (Involved& inv : TopInvolved(groups, "copy", kTopInvolved)) f.involved.push_back(std::move(inv));
    time += t;
    merged_count += count;
    groups_count += c.n();
    dirs.push_back(dir);
  }
  double thr = c.P(rule, "min_share");
  if (f.evidence.empty() || !(c.Share(time) >= thr)) return;
  std::vector<Interval> where = WallIntervalsWhere(c, m, [&](size_t i) {
    return c.CopyKept(i) && m.bytes[i] < limit && std::find(dirs.begin(), dirs.end(), m.kind[i]) != dirs.end();
  });
  double share = c.Share(LengthOf(where));
  if (!(share >= thr)) return;
  f.evidence.push_back(Ev("small_copy_ratio", share, thr, ">="));
  double per_group = static_cast<double>(merged_count) / static_cast<double>(groups_count);
  f.summary = StrFormat("%.1f copies under %lld bytes per iteration and direction take %.1f%% of the iteration; each pays "
                  "the fixed cost of a copy, so one merged copy would cost about as much as one of them.",
                  per_group, static_cast<long long>(limit), share * 100);
  f.amdahl = MakeAmdahl(share, per_group, "assumed",
                        StrFormat("%.1f latency-bound copies merged into one cost as much as one", per_group));
  f.claim = LocatedClaim(c, std::move(where), share, true);
  out.push_back(std::move(f));
}

}  // namespace tg::internal
