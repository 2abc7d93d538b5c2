// What the rules share: the context every evaluate function reads (the analysed trace, the rules
// file's parameters, short kernel names computed once; for the rules across ranks, the job's
// ranks), the tallies that build a finding's "involved" list, the wall-time and copy-time sums,
// and the evaluate functions themselves, one per row of the rule table (rule_table.cpp), defined
// in one file per rule family.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "analyzer/util/intervals.h"
#include "tracegate/analyzer/findings.h"

namespace tg::internal {

// Everything a rule needs, precomputed once per EvaluateRules call.
class RuleContext {
 public:
  RuleContext(const FindingsInput& in, const RulesConfig& rules);
  const Trace& trace() const { return *in_.trace; }
  const IterationAnalysis& iters() const { return *in_.iterations; }
  const FindingsInput& in() const { return in_; }
  // A parameter of `rule`, as the rules file left it.
  double P(const RuleDef& rule, std::string_view key) const { return rules_.Get(rule.id, key); }
  size_t n() const { return n_; }
  TimeNs total_ns() const { return total_ns_; }
  double Share(TimeNs ns) const {
    return total_ns_ > 0 ? static_cast<double>(ns) / static_cast<double>(total_ns_) : 0;
  }
  double PerIteration(double count) const { return n_ > 0 ? count / static_cast<double>(n_) : 0; }
  double PhaseRatio(Phase p) const { return iters().phase_ratio[static_cast<size_t>(p)]; }
  double PhaseMeanMs(Phase p) const { return iters().phase_mean_ms[static_cast<size_t>(p)]; }
  bool KernelKept(size_t i) const { return iters().kernel_iteration[i] >= 0; }
  bool CopyKept(size_t i) const { return iters().memcpy_iteration[i] >= 0; }
  // No kernel, copy or memset at all: the device's idle time is undefined, so the rules about
  // waiting (idle, launches, syncs) have nothing to judge (Summary::no_device_activity says why).
  bool NoDeviceActivity() const { return in_.summary && !in_.summary->no_device_activity.empty(); }
  // Share of the devices' gap time (all devices together) attributed to `cause`; nullopt when no
  // device's gaps were attributed (a summary made without the API index) or there are no gaps.
  // The gaps judged are those inside the kept iterations when the summary has them (JudgedCauses).
  std::optional<double> IdleCauseShare(IdleCause cause) const;
  // The idle phase's share of the iterations less the time no finding may claim as idle
  // (device_backlog, graph_capture: IsClaimableIdle); the idle phase ratio when not attributed.
  double ClaimableIdleRatio() const;
  // A graph-capture trace (iteration_idle.h): its idle time is the capture; no idle finding.
  bool CaptureTrace() const { return in_.idle && in_.idle->capture_trace; }
  // Short display name of a kernel row's name, computed once per distinct name.
  const std::string& KernelName(size_t row) const { return ShortName(trace().kernels.name[row]); }
  const std::string& ShortName(StringId id) const;
  // The kept iterations' spans, sorted and disjoint: claims are clipped to them, so a claimed
  // share never counts time outside the iterations' total.
  const std::vector<Interval>& Spans() const { return spans_; }
  // The gpu claim space: the union of all GPU work (any iteration's kernels, copies, memsets)
  // inside the spans, exactly the h2d + infer + d2h phases. Computed on first use.
  const std::vector<Interval>& GpuBusy() const;
  // IntersectUnions(where, GpuBusy()) (`where`: a union), piece for piece; from the summary's
  // union directly while GpuBusy() is not made, which would copy it (an interval per GPU gap).
  std::vector<Interval> BusyIn(const std::vector<Interval>& where) const;
  // Kernel rows by start time: the summary's (kept from its sweep), else sorted once on first
  // use. Rules take unions of many kernel subsets; one order replaces a sort per union.
  const std::vector<uint32_t>& KernelsByStart() const;

 private:
  const FindingsInput& in_;
  const RulesConfig& rules_;
  mutable std::vector<std::string> short_names_;
  std::vector<Interval> spans_;
  mutable std::optional<std::vector<Interval>> gpu_busy_;
  mutable std::optional<std::vector<uint32_t>> kernels_by_start_;
  size_t n_ = 0;
  TimeNs total_ns_ = 0;
};

// Everything a rule across ranks reads: the job's ranks and collectives (JobRulesInput) and the
// rules file's parameters. EvaluateJobRules makes one only for a job with a latency.
class JobRuleContext {
 public:
  JobRuleContext(const JobRulesInput& in, const RulesConfig& rules) : in_(in), rules_(rules) {}
  const JobRulesInput& in() const { return in_; }
  const std::vector<JobRank>& ranks() const { return in_.ranks; }
  const CrossRank& cross() const { return *in_.cross; }
  double latency_ms() const { return *in_.latency_ms; }  // > 0
  double P(const RuleDef& rule, std::string_view key) const { return rules_.Get(rule.id, key); }
  // A count parameter ("top_ranks"), as a size.
  size_t Count(const RuleDef& rule, std::string_view key) const;

 private:
  const JobRulesInput& in_;
  const RulesConfig& rules_;
};

// A finding of `rule` with its id, title, priority and strategies filled in.
Finding StartFinding(const RuleDef& rule);

inline Evidence Ev(std::string metric, double value, double threshold, std::string cmp,
                   std::string unit = "ratio") {
  return Evidence{std::move(metric), value, threshold, std::move(cmp), std::move(unit)};
}

// Groups rows by a key and keeps the `top` largest by time: the "involved" list of a finding.
struct Tally {
  uint64_t count = 0;
  TimeNs time_ns = 0;
  void Add(TimeNs d) {
    count++;
    time_ns += d;
  }
  void Add(const Tally& t) {
    count += t.count;
    time_ns += t.time_ns;
  }
};
std::vector<Involved> TopInvolved(const std::map<std::string, Tally>& groups, const std::string& kind, size_t top);

inline constexpr size_t kTopInvolved = 5;

// Tallies by name id, folded into display-name groups once at the end: a row costs an index, not
// a string-keyed map lookup (distinct ids may share a display name).
class IdTallies {
 public:
  explicit IdTallies(const Trace& t) : by_id_(t.strings.size()) {}
  void Add(StringId id, TimeNs d) { by_id_[id].Add(d); }
  template <typename Name>
  std::map<std::string, Tally> ByName(Name name) const {
    std::map<std::string, Tally> out;
    for (StringId id = 0; id < by_id_.size(); ++id)
      if (by_id_[id].count > 0) out[std::string(name(id))].Add(by_id_[id]);
    return out;
  }

 private:
  std::vector<Tally> by_id_;
};

std::map<std::string, Tally> ByKernelName(const RuleContext& c, const IdTallies& t);

// Kernel time of kept kernels whose class satisfies `pred`, grouped by display name.
template <typename Pred>
TimeNs KernelTimeWhere(const RuleContext& c, Pred pred, std::map<std::string, Tally>* groups) {
  const KernelTable& k = c.trace().kernels;
  const std::vector<KernelClass>& cls = *c.in().kernel_classes;
  TimeNs total = 0;
  IdTallies by_id(c.trace());
  for (size_t i = 0; i < k.size(); ++i) {
    if (!c.KernelKept(i) || !pred(cls[i])) continue;
    TimeNs d = k.end[i] - k.start[i];
    total += d;
    if (groups) by_id.Add(k.name[i], d);
  }
  if (groups) *groups = ByKernelName(c, by_id);
  return total;
}

// Wall time covered by the kept table rows that satisfy `pred(i)`: the union of their intervals,
// so work running at once on several streams or devices counts once. Shares of the iteration
// use this (a sum of durations would exceed the iteration when streams overlap); the summed
// time can only be larger, so rules test it first and skip the sort when it is under threshold.
template <typename Table, typename Pred>
TimeNs WallTimeWhere(const Table& t, Pred pred) {
  std::vector<Interval> v;
  for (size_t i = 0; i < t.size(); ++i)
    if (pred(i)) v.emplace_back(t.start[i], t.end[i]);
  return UnionLength(v);
}

// The device's gaps the rules judge: those inside the kept iterations (DeviceSummary::in_iterations)
// when the summary has them, else all of the device's (a summary made without the spans). The
// warm-up and start-up around the iterations are not the iterations' idle time.
inline const IdleCauses& JudgedCauses(const DeviceSummary& d) {
  return d.has_in_iterations ? d.in_iterations : d.idle_causes;
}
inline const std::vector<IdleGap>& JudgedLargestGaps(const DeviceSummary& d) {
  return d.has_in_iterations ? d.in_iterations_largest : d.largest_gaps;
}

// A device gap as an entry of a finding's involved list: "previous -> next", its length, and
// where it is (device, stream of the next work, time into the trace) and its cause when known.
Involved GapInvolved(const RuleContext& c, const DeviceSummary& d, const IdleGap& gap);

// The same union as intervals, clipped to the iterations' spans: what a finding claims. Its
// length over total_ns() is the share the finding prints and uses as P.
template <typename Table, typename Pred>
std::vector<Interval> WallIntervalsWhere(const RuleContext& c, const Table& t, Pred pred) {
  std::vector<Interval> v;
  v.reserve(t.size());  // at most a piece a row: room taken once (UnionOf, intervals.cpp, says why)
  if constexpr (std::is_same_v<Table, KernelTable>) {
    // Rows in start order: the union is one pass, no sort.
    for (uint32_t i : c.KernelsByStart()) {
      if (!pred(i) || t.end[i] <= t.start[i]) continue;
      if (!v.empty() && t.start[i] <= v.back().second) v.back().second = std::max(v.back().second, t.end[i]);
      else v.emplace_back(t.start[i], t.end[i]);
    }
    return IntersectUnions(v, c.Spans());
  } else {
    for (size_t i = 0; i < t.size(); ++i)
      if (pred(i)) v.emplace_back(t.start[i], t.end[i]);
    return IntersectUnions(UnionOf(v), c.Spans());
  }
}

// A claim on `where` (sorted, disjoint, clipped to the spans) of `share` (at most its length's
// share). `gpu_work` says `where` is GPU work itself (kernels, copies): one located gpu part.
// Otherwise the instants of `where` with no GPU work at all (launch gaps inside a fusion chain)
// become a located idle part, so the parts still sum to `share`.
std::vector<ClaimPart> LocatedClaim(const RuleContext& c, std::vector<Interval> where, double share, bool gpu_work);
// A part of one space's time, not located.
inline std::vector<ClaimPart> SpaceClaim(ClaimSpace space, double share) { return {ClaimPart{space, share, {}}}; }

// "Memcpy HtoD 4194304 B pageable": the name of a group of copies in a finding's involved list.
std::string CopyGroupName(CopyKind kind, int64_t bytes, bool pageable);

// Copies of kept iterations matching `pred`, grouped by CopyGroupName.
template <typename Pred>
TimeNs CopyTimeWhere(const RuleContext& c, Pred pred, std::map<std::string, Tally>* groups,
                     uint64_t* count = nullptr) {
  const MemcpyTable& m = c.trace().memcpys;
  TimeNs total = 0;
  // Keyed by the fields the name shows; the names are formatted once per group at the end.
  std::map<std::tuple<CopyKind, int64_t, bool>, Tally> by_key;
  for (size_t i = 0; i < m.size(); ++i) {
    if (!c.CopyKept(i) || !pred(i)) continue;
    TimeNs d = m.end[i] - m.start[i];
    total += d;
    if (count) (*count)++;
    if (groups) {
      bool pageable = m.src_kind[i] == MemKind::kPageable || m.dst_kind[i] == MemKind::kPageable;
      by_key[{m.kind[i], m.bytes[i], pageable}].Add(d);
    }
  }
  if (groups)
    for (const auto& [key, t] : by_key) (*groups)[std::apply(CopyGroupName, key)].Add(t);
  return total;
}

// The rules that fire when one phase's share exceeds the rule's `threshold`: starts the finding
// with its evidence and the Amdahl estimate for the rule's `assumed_speedup`, or returns false.
bool PhaseAbove(const RuleContext& c, const RuleDef& rule, Phase phase, const char* metric,
                const char* assumption, Finding* f);

// The evaluate functions, by the family file that defines them.
// timeline_rules.cpp: when the GPU waits for the host.
void EvaluateIdleGaps(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
void EvaluateLaunchBound(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
void EvaluateSingleStream(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
void EvaluateSyncInLoop(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
void EvaluateHostBound(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
// communication_rules.cpp: collectives and the time the devices wait around them.
void EvaluateCommunication(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
// copy_rules.cpp: host<->device copies.
void EvaluateH2dBound(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
void EvaluatePageableCopies(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
void EvaluateSmallCopies(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
// kernel_rules.cpp: what the kernels do (kernel classes, the roofline, fusion chains).
void EvaluateMemoryBound(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
void EvaluateTransformKernels(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
void EvaluateFusionCandidate(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
// iteration_rules.cpp: the iterations' phases and latencies.
void EvaluateSlowPost(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
void EvaluateUnstable(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
void EvaluateDrift(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
// device_rules.cpp: the device and the precision it runs at.
void EvaluateThrottling(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
void EvaluateInt8NoGain(const RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);

// cross_rank_rules.cpp: across the ranks of a job (EvaluateJobRules).
void EvaluateStraggler(const JobRuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
void EvaluateComputeImbalance(const JobRuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
void EvaluateCommExposed(const JobRuleContext& c, const RuleDef& rule, std::vector<Finding>& out);

// claims.cpp: the claim of a finding whose rule states none (idle_gaps, launch_bound and
// single_stream; a rule that claims nothing known claims the run as a whole).
void DefaultClaim(const RuleContext& c, Finding& f);

}  // namespace tg::internal
