// What findings claim and how their gains combine (docs/RULES.md, "Claims and the combined
// estimate", "Priority"): the default claim of rules that state none, which findings claim the
// same time, the combined estimate over disjoint parts, and the priority a gain supports.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "analyzer/analysis/rules/rule_helpers.h"
#include "analyzer/util/intervals.h"
#include "analyzer/util/side_task.h"
#include "tracegate/analyzer/amdahl.h"
#include "tracegate/analyzer/findings.h"

namespace tg {

using internal::LengthOf;
using internal::UnionOf;

namespace internal {

void DefaultClaim(const RuleContext& c, Finding& f) {
  const double p = f.amdahl.share;
  if (f.id == "idle_gaps" || f.id == "launch_bound") {
    // Both measure (a part of) the idle phase; which instants is not located.
    f.claim = SpaceClaim(ClaimSpace::kIdle, p);
  } else if (f.id == "single_stream") {
    // The host<->device copies that would hide behind compute (P = min(copy, kernel) <= copy).
    const MemcpyTable& m = c.trace().memcpys;
    f.claim = LocatedClaim(c, WallIntervalsWhere(c, m, [&](size_t i) {
      return c.CopyKept(i) && (m.kind[i] == CopyKind::kHtoD || m.kind[i] == CopyKind::kDtoH);
    }), p, true);
  } else {
    // A rule whose claim is not known here: the run as a whole, which overlaps every claim.
    f.claim = SpaceClaim(ClaimSpace::kRun, p);
  }
}

}  // namespace internal

const char* EvidenceStrengthName(EvidenceStrength s) {
  switch (s) {
    case EvidenceStrength::kMeasured: return "measured";
    case EvidenceStrength::kAssumed: return "assumed";
    case EvidenceStrength::kHeuristic: return "heuristic";
  }
  return "assumed";
}

EvidenceStrength EvidenceStrengthOf(const Finding& f) {
  if (f.heuristic) return EvidenceStrength::kHeuristic;
  return f.amdahl.basis == "measured" ? EvidenceStrength::kMeasured : EvidenceStrength::kAssumed;
}

Priority DerivePriority(Priority table, const Finding& f) {
  if (!f.amdahl.applicable) return table;
  const double gain = std::isfinite(f.amdahl.overall) ? (f.amdahl.overall - 1) * 100 : INFINITY;
  Priority p = gain >= kHighGainPct ? Priority::kHigh : gain >= kMediumGainPct ? Priority::kMedium : Priority::kLow;
  // Name-based kernel classes can be wrong: their findings never outrank measured ones.
  if (EvidenceStrengthOf(f) == EvidenceStrength::kHeuristic && p == Priority::kHigh) p = Priority::kMedium;
  return p;
}

std::vector<std::string> FindingRefs(const std::vector<Finding>& findings) {
  std::map<std::string_view, size_t> total, seen;
  for (const Finding& f : findings) total[f.id]++;
  std::vector<std::string> refs;
  for (const Finding& f : findings)
    refs.push_back(total[f.id] > 1 ? f.id + "#" + std::to_string(++seen[f.id]) : f.id);
  return refs;
}

namespace {

using Parts = std::vector<ClaimPart>;

// Whether two unions (sorted, disjoint) meet: IntersectUnions(a, b) is not empty, found without
// building it (the same walk, stopping at the first common piece).
bool Meet(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (std::max(a[i].first, b[j].first) < std::min(a[i].second, b[j].second)) return true;
    if (a[i].second < b[j].second) ++i;
    else ++j;
  }
  return false;
}

// LengthOf(SubtractUnions(a, b)) without building the difference (the same walk, summed).
TimeNs LengthNotIn(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  TimeNs total = 0;
  size_t j = 0;
  for (auto [lo, hi] : a) {
    while (j < b.size() && b[j].second <= lo) ++j;
    for (size_t k = j; k < b.size() && b[k].first < hi; ++k) {
      if (b[k].first > lo) total += b[k].first - lo;
      lo = std::max(lo, b[k].second);
    }
    if (lo < hi) total += hi - lo;
  }
  return total;
}

// UnionOf(a + b) for two lists each sorted as pairs (a union always is): one merge of the two
// sorted lists, then UnionOf's own pass (empty intervals dropped, overlapping or touching ones
// joined), instead of copying `a` and sorting both again. Equal intervals are interchangeable, so
// the merged order is the sorted order UnionOf would use. Lists not sorted take UnionOf itself.
std::vector<Interval> MergedUnion(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  if (!std::is_sorted(a.begin(), a.end()) || !std::is_sorted(b.begin(), b.end())) {
    std::vector<Interval> all = a;
    all.insert(all.end(), b.begin(), b.end());
    return UnionOf(all);
  }
  std::vector<Interval> out;
  out.reserve(a.size() + b.size());
  bool open = false;
  auto add = [&](const Interval& v) {
    if (v.second <= v.first) return;
    if (open && v.first <= out.back().second) {
      out.back().second = std::max(out.back().second, v.second);
      return;
    }
    out.push_back(v);
    open = true;
  };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) add(b[j] < a[i] ? b[j++] : a[i++]);
  while (i < a.size()) add(a[i++]);
  while (j < b.size()) add(b[j++]);
  return out;
}

bool ClaimsRun(const Parts& parts) {
  if (parts.empty()) return true;
  return std::any_of(parts.begin(), parts.end(), [](const ClaimPart& p) { return p.space == ClaimSpace::kRun; });
}

// Two claims overlap when one claims the run as a whole, or they have parts of one space that
// meet: located parts where their intervals intersect, any part of a space with one unlocated.
bool Overlap(const Parts& a, const Parts& b) {
  if (ClaimsRun(a) || ClaimsRun(b)) return true;
  for (const ClaimPart& x : a)
    for (const ClaimPart& y : b) {
      if (x.space != y.space || !(x.share > 0) || !(y.share > 0)) continue;
      if (x.intervals.empty() || y.intervals.empty() || Meet(x.intervals, y.intervals)) return true;
    }
  return false;
}

// Whether `v` is a union as UnionOf writes it: sorted, no empty interval, none touching the next.
bool IsUnion(const std::vector<Interval>& v) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].second <= v[i].first || (i > 0 && v[i].first <= v[i - 1].second)) return false;
  return true;
}

// What is already assigned in one space.
struct Taken {
  // Union of the located parts assigned so far: `own`, or the one part assigned so far when it is
  // a union already (read in place: a part can hold an interval per GPU gap).
  const std::vector<Interval>* located = &own;
  std::vector<Interval> own;
  size_t located_left = 0;  // located parts still to assign (the union is not needed after the last)
  double unlocated = 0;     // shares of unlocated parts assigned so far
  double total = 0;         // every share assigned so far
};

// The share of `part` no earlier (larger-S) finding holds. Unlocated time is assumed to be the
// time already taken first (the largest overlap possible): the estimate never counts time twice.
double Assign(const ClaimPart& part, Taken& taken) {
  double got = 0;
  if (!part.intervals.empty()) {
    const TimeNs len = LengthOf(part.intervals);
    const TimeNs free = LengthNotIn(part.intervals, *taken.located);
    got = len > 0 ? part.share * static_cast<double>(free) / static_cast<double>(len) : 0;
    got = std::max(0.0, got - taken.unlocated);
    if (--taken.located_left == 0) {
      // The last located part of the space: no one reads the union after it.
    } else if (taken.located->empty() && IsUnion(part.intervals)) {
      taken.located = &part.intervals;  // MergedUnion({}, a union) is that union
    } else {
      taken.own = MergedUnion(*taken.located, part.intervals);
      taken.located = &taken.own;
    }
  } else {
    got = std::max(0.0, part.share - taken.total);
    taken.unlocated += got;
  }
  taken.total += got;
  return got;
}

}  // namespace

CombinedEstimate RelateFindings(std::vector<Finding>& findings) {
  const std::vector<std::string> refs = FindingRefs(findings);
  // Which findings overlap, on the second core while this one assigns the time below: both only
  // read the claims, and that side writes only the findings' `overlaps`.
  internal::SideTask overlaps([&] {
    // Overlap is symmetric: each pair is walked once (a claim can hold an interval per GPU gap).
    const size_t n = findings.size();
    std::vector<uint8_t> meets(n * n, 0);
    for (size_t i = 0; i < n; ++i)
      for (size_t j = i + 1; j < n; ++j)
        meets[i * n + j] = meets[j * n + i] = Overlap(findings[i].claim, findings[j].claim) ? 1 : 0;
    for (size_t i = 0; i < n; ++i) {
      findings[i].overlaps.clear();
      for (size_t j = 0; j < n; ++j)
        if (meets[i * n + j]) findings[i].overlaps.push_back(refs[j]);
    }
  });
  CombinedEstimate out;
  std::vector<size_t> order;
  for (size_t i = 0; i < findings.size(); ++i) {
    if (ClaimsRun(findings[i].claim)) out.left_out.push_back(refs[i]);
    else order.push_back(i);
  }
  // The largest local speedup first: each unit of time goes to the finding that would shrink it
  // most (ties: list order, which is priority and gain).
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return findings[a].amdahl.speedup > findings[b].amdahl.speedup; });
  std::array<Taken, static_cast<size_t>(ClaimSpace::kCount)> taken;
  for (size_t i : order)
    for (const ClaimPart& part : findings[i].claim)
      if (!part.intervals.empty()) taken[static_cast<size_t>(part.space)].located_left++;
  double sum = 0;
  std::vector<AmdahlPart> parts;
  for (size_t i : order) {
    double share = 0;
    for (const ClaimPart& part : findings[i].claim) share += Assign(part, taken[static_cast<size_t>(part.space)]);
    share = std::min(share, 1 - sum);  // spaces partition the iterations: never more than the whole
    if (!(share > 0)) continue;
    sum += share;
    out.parts.push_back(CombinedPart{refs[i], share, findings[i].amdahl.speedup});
    parts.push_back(AmdahlPart{share, findings[i].amdahl.speedup});
  }
  if (!parts.empty() && ValidateAmdahl(parts).ok()) {
    out.overall = AmdahlSpeedup(parts);
    out.upper_bound = AmdahlBound(parts);
    out.gain_pct = std::isfinite(out.overall) ? (out.overall - 1) * 100 : 0;
  }
  overlaps.Wait();
  return out;
}

}  // namespace tg
