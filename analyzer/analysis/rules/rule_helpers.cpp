// The helpers every rule family shares (rule_helpers.h): the context, starting a finding, the
// involved lists, the phase-share rules' common test, and MakeAmdahl.
#include "analyzer/analysis/rules/rule_helpers.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "analyzer/util/demangle.h"
#include "tracegate/analyzer/amdahl.h"
#include "tracegate/analyzer/strings.h"

namespace tg {

using internal::Demangle;
using internal::IntersectUnions;
using internal::LengthOf;
using internal::SubtractUnions;
using internal::UnionOf;

AmdahlEstimate MakeAmdahl(double share, double speedup, std::string basis, std::string assumption) {
  AmdahlEstimate a;
  a.share = std::clamp(std::isfinite(share) ? share : 0.0, 0.0, 1.0);
  a.speedup = speedup > 0 && !std::isnan(speedup) ? speedup : 1.0;
  a.basis = std::move(basis);
  a.assumption = std::move(assumption);
  a.overall = AmdahlSpeedup(a.share, a.speedup);
  a.upper_bound = AmdahlBound(a.share);
  a.gain_pct = std::isfinite(a.overall) ? (a.overall - 1.0) * 100.0 : 0.0;
  return a;
}

namespace internal {

RuleContext::RuleContext(const FindingsInput& in, const RulesConfig& rules)
    : in_(in), rules_(rules), n_(in.iterations->iterations.size()), total_ns_(in.iterations->total_ns) {
  for (const Iteration& it : in.iterations->iterations) spans_.emplace_back(it.start, it.end);
  spans_ = UnionOf(spans_);
}

const std::vector<uint32_t>& RuleContext::KernelsByStart() const {
  // The summary kept the order from its sweep: no second ordering.
  if (in_.summary && in_.summary->kernels_by_start.size() == trace().kernels.size()) {
    return in_.summary->kernels_by_start;
  }
  if (!kernels_by_start_) kernels_by_start_ = tg::KernelsByStart(trace().kernels);
  return *kernels_by_start_;
}

const std::vector<Interval>& RuleContext::GpuBusy() const {
  if (!gpu_busy_) {
    const Trace& t = trace();
    if (in_.summary && in_.summary->kernels_by_start.size() == t.kernels.size()) {
      gpu_busy_ = IntersectUnions(in_.summary->GpuBusy(), spans_);
      return *gpu_busy_;
    }
    // The kernels' union (in start order already), then copies and memsets merged in.
    std::vector<Interval> v = WallIntervalsWhere(*this, t.kernels, [](size_t) { return true; });
    for (size_t i = 0; i < t.memcpys.size(); ++i) v.emplace_back(t.memcpys.start[i], t.memcpys.end[i]);
    for (size_t i = 0; i < t.memsets.size(); ++i) v.emplace_back(t.memsets.start[i], t.memsets.end[i]);
    gpu_busy_ = IntersectUnions(UnionOf(v), spans_);
  }
  return *gpu_busy_;
}

std::vector<Interval> RuleContext::BusyIn(const std::vector<Interval>& where) const {
  // where & (busy & spans) and (where & spans) & busy hold the same pieces: one per triple of
  // intervals that meet, in time order.
  if (!gpu_busy_ && in_.summary && in_.summary->kernels_by_start.size() == trace().kernels.size())
    return IntersectUnions(IntersectUnions(where, spans_), in_.summary->GpuBusy());
  return IntersectUnions(where, GpuBusy());
}

std::vector<ClaimPart> LocatedClaim(const RuleContext& c, std::vector<Interval> where, double share, bool gpu_work) {
  // The parts are moved in: a braced list would copy each part's intervals (one per GPU gap).
  std::vector<ClaimPart> parts;
  parts.reserve(2);
  if (gpu_work) {
    parts.push_back(ClaimPart{ClaimSpace::kGpu, share, std::move(where)});
    return parts;
  }
  std::vector<Interval> busy = c.BusyIn(where);
  std::vector<Interval> idle = SubtractUnions(where, busy);
  const double busy_share = std::min(share, c.Share(LengthOf(busy)));
  parts.push_back(ClaimPart{ClaimSpace::kGpu, busy_share, std::move(busy)});
  if (share - busy_share > 0) parts.push_back(ClaimPart{ClaimSpace::kIdle, share - busy_share, std::move(idle)});
  return parts;
}

const std::string& RuleContext::ShortName(StringId id) const {
  if (short_names_.size() <= id) short_names_.resize(trace().strings.size());
  std::string& name = short_names_[id];
  if (name.empty()) name = ShortKernelName(Demangle(trace().Name(id)));
  return name;
}

std::optional<double> RuleContext::IdleCauseShare(IdleCause cause) const {
  // The iterations' idle phase by cause, when attributed (iteration_idle.h).
  if (in_.idle && in_.idle->attributed) {
    TimeNs total = 0;
    for (TimeNs ns : in_.idle->idle_phase_ns) total += ns;
    // No host events to read (every piece unknown): the causes are not known.
    if (total <= 0 || in_.idle->idle_phase_ns[static_cast<size_t>(IdleCause::kUnknown)] == total) return std::nullopt;
    return static_cast<double>(in_.idle->idle_phase_ns[static_cast<size_t>(cause)]) / static_cast<double>(total);
  }
  if (!in_.summary) return std::nullopt;
  TimeNs total = 0, of_cause = 0;
  bool attributed = false;
  for (const DeviceSummary& d : in_.summary->devices) {
    if (!JudgedCauses(d).attributed) continue;
    attributed = true;
    total += d.has_in_iterations ? d.in_iterations_ns : d.gap_total_ns;
    of_cause += JudgedCauses(d).ns[static_cast<size_t>(cause)];
  }
  if (!attributed || total <= 0) return std::nullopt;
  return static_cast<double>(of_cause) / static_cast<double>(total);
}

Finding StartFinding(const RuleDef& rule) {
  Finding f;
  f.id = rule.id;
  f.title = rule.title;
  f.priority = rule.priority;
  for (const char* s : rule.strategies) f.strategies.emplace_back(s);
  return f;
}

std::vector<Involved> TopInvolved(const std::map<std::string, Tally>& groups, const std::string& kind, size_t top) {
  std::vector<Involved> out;
  for (const auto& [name, t] : groups) out.push_back(Involved{kind, name, t.count, t.time_ns, ""});
  std::sort(out.begin(), out.end(), [](const Involved& a, const Involved& b) {
    return std::tie(b.time_ns, a.name) < std::tie(a.time_ns, b.name);
  });
  if (out.size() > top) out.resize(top);
  return out;
}

std::map<std::string, Tally> ByKernelName(const RuleContext& c, const IdTallies& t) {
  return t.ByName([&](StringId id) -> const std::string& { return c.ShortName(id); });
}

Involved GapInvolved(const RuleContext& c, const DeviceSummary& d, const IdleGap& gap) {
  std::string where = StrFormat("device %d", d.device);
  if (gap.next_stream != kUnknownId) where += StrFormat(" stream %lld", static_cast<long long>(gap.next_stream));
  where += StrFormat(", %.3f ms into the trace", NsToMs(gap.start_ns - c.in().summary->start_ns));
  if (d.idle_causes.attributed) where += std::string(", ") + kIdleCauseNames[static_cast<size_t>(gap.cause)];
  Involved v{"gap", ShortKernelName(gap.previous) + " -> " + ShortKernelName(gap.next), 1, gap.duration_ns,
             std::move(where)};
  v.start_ns = gap.start_ns;
  v.device = d.device;
  return v;
}

std::string CopyGroupName(CopyKind kind, int64_t bytes, bool pageable) {
  return StrFormat("Memcpy %s %lld B%s", std::string(CopyKindName(kind)).c_str(), static_cast<long long>(bytes),
                   pageable ? " pageable" : "");
}

double RuleContext::ClaimableIdleRatio() const {
  const double idle = PhaseRatio(Phase::kIdle);
  if (!(in_.idle && in_.idle->attributed)) return idle;
  TimeNs total = 0, unclaimable = 0;
  for (size_t c = 0; c < kIdleCauseCount; ++c) {
    total += in_.idle->idle_phase_ns[c];
    if (!IsClaimableIdle(static_cast<IdleCause>(c))) unclaimable += in_.idle->idle_phase_ns[c];
  }
  return total > 0 ? idle * static_cast<double>(total - unclaimable) / static_cast<double>(total) : idle;
}

bool PhaseAbove(const RuleContext& c, const RuleDef& rule, Phase phase, const char* metric, const char* assumption,
                Finding* f) {
  double r = phase == Phase::kIdle ? c.ClaimableIdleRatio() : c.PhaseRatio(phase), thr = c.P(rule, "threshold");
  if (!(r > thr)) return false;
  *f = StartFinding(rule);
  f->evidence.push_back(Ev(metric, r, thr, ">"));
  double s = c.P(rule, "assumed_speedup");
  f->amdahl = MakeAmdahl(r, s, "assumed", StrFormat("%s %.2fx", assumption, s));
  return true;
}

}  // namespace internal
}  // namespace tg
