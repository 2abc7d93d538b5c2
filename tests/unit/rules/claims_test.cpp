// Findings that add up (docs/RULES.md, "Claims and the combined estimate", "Priority"): what each
// finding claims, which findings claim the same time, the combined estimate over disjoint parts,
// wall-time shares and the priority a predicted gain supports. Synthetic traces of one 100,000 ns
// iteration, so every expected value is exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "analysis_test_util.h"
#include "analyzer/analysis/rules/rule_helpers.h"
#include "analyzer/util/intervals.h"
#include "trace_builder.h"
#include "tracegate/analyzer/amdahl.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/findings.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/summary.h"

namespace tg {

using internal::IntersectUnions;
using internal::LengthOf;
using internal::SubtractUnions;
using internal::UnionOf;
namespace {

using testing::AddKernel;
using testing::AddRange;
using testing::AddSync;

constexpr TimeNs kIter = 100'000;
const char* kElementwise = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >()";

Analysis Analyze(const Trace& t, const AnalysisConfig& config = {}) { return testing::AnalyzeOk(t, config); }
const Finding* Find(const Analysis& a, std::string_view id) { return testing::FindFinding(a, id); }

bool Lists(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

const CombinedPart* PartOf(const CombinedEstimate& c, std::string_view ref) {
  for (const CombinedPart& p : c.parts)
    if (p.finding == ref) return &p;
  return nullptr;
}

TEST(Intervals, UnionsIntersectAndSubtractExactly) {
  std::vector<Interval> v{{30, 40}, {0, 10}, {5, 20}, {50, 50}};
  const std::vector<Interval> u = UnionOf(v);
  EXPECT_EQ(u, (std::vector<Interval>{{0, 20}, {30, 40}}));
  const std::vector<Interval> b{{10, 35}, {38, 60}};
  EXPECT_EQ(IntersectUnions(u, b), (std::vector<Interval>{{10, 20}, {30, 35}, {38, 40}}));
  EXPECT_EQ(SubtractUnions(u, b), (std::vector<Interval>{{0, 10}, {35, 38}}));
  EXPECT_EQ(LengthOf(u), 30);
}

// Element-wise [0, 40), transpose [40, 60), gemm [60, 100): memory_bound (by name) counts the
// element-wise and the transpose kernels, transform_kernels the transpose: both claim [40, 60).
TEST(Claims, MemoryBoundAndTransformKernelsClaimTheSameKernels) {
  Trace t;
  AddRange(t, "iteration", 0, kIter);
  AddKernel(t, kElementwise, 0, 40'000);
  AddKernel(t, "transpose_kernel", 40'000, 60'000);
  AddKernel(t, "gemm_kernel", 60'000, kIter);
  AnalysisConfig config;
  ASSERT_TRUE(config.rules.SetEnabled("fusion_candidate", false).ok());
  Analysis a = Analyze(t, config);
  const Finding* mem = Find(a, "memory_bound");
  const Finding* tr = Find(a, "transform_kernels");
  ASSERT_NE(mem, nullptr);
  ASSERT_NE(tr, nullptr);
  EXPECT_DOUBLE_EQ(mem->amdahl.share, 0.6);
  EXPECT_DOUBLE_EQ(tr->amdahl.share, 0.2);
  ASSERT_EQ(mem->claim.size(), 1u);
  EXPECT_EQ(mem->claim[0].space, ClaimSpace::kGpu);
  EXPECT_EQ(mem->claim[0].intervals, (std::vector<Interval>{{0, 60'000}}));
  EXPECT_TRUE(Lists(mem->overlaps, "transform_kernels"));
  EXPECT_TRUE(Lists(tr->overlaps, "memory_bound"));
  // transform_kernels (S = 2) takes [40, 60); memory_bound (S = 1.3) keeps [0, 40): 0.6 x 40 / 60.
  const CombinedPart* pt = PartOf(a.combined, "transform_kernels");
  const CombinedPart* pm = PartOf(a.combined, "memory_bound");
  ASSERT_NE(pt, nullptr);
  ASSERT_NE(pm, nullptr);
  EXPECT_DOUBLE_EQ(pt->share, 0.2);
  EXPECT_NEAR(pm->share, 0.4, 1e-12);
  EXPECT_EQ(a.combined.parts.size(), 2u);
  EXPECT_NEAR(a.combined.overall, 1 / (0.4 + 0.2 / 2 + 0.4 / 1.3), 1e-12);
}

// Kernel [0, 50), then idle; stream syncs [60, 70) and [62, 68) at once on two streams, and
// [80, 85): idle_gaps claims the idle phase (0.5), sync_in_loop a part of it.
TEST(Claims, SyncInLoopClaimsPartOfTheIdleTimeAndGroupsAreUnions) {
  Trace t;
  AddRange(t, "iteration", 0, kIter);
  AddKernel(t, "gemm_kernel", 0, 50'000);
  AddSync(t, SyncKind::kStreamSync, 60'000, 70'000, kUnknownId, 0, 7);
  AddSync(t, SyncKind::kStreamSync, 62'000, 68'000, kUnknownId, 0, 8);
  AddSync(t, SyncKind::kStreamSync, 80'000, 85'000, kUnknownId, 0, 7);
  Analysis a = Analyze(t);
  const Finding* idle = Find(a, "idle_gaps");
  const Finding* sync = Find(a, "sync_in_loop");
  ASSERT_NE(idle, nullptr);
  ASSERT_NE(sync, nullptr);
  // The group's time is the union of its waits (15,000 ns), not their sum (21,000 ns).
  ASSERT_EQ(sync->involved.size(), 1u);
  EXPECT_EQ(sync->involved[0].count, 3u);
  EXPECT_EQ(sync->involved[0].time_ns, 15'000);
  EXPECT_DOUBLE_EQ(sync->evidence[1].value, 0.15);
  EXPECT_NE(sync->summary.find("waits in them 15.0% of the iteration"), std::string::npos) << sync->summary;
  EXPECT_NE(sync->summary.find("loses only the time it then sits idle"), std::string::npos) << sync->summary;
  ASSERT_EQ(sync->claim.size(), 1u);
  EXPECT_EQ(sync->claim[0].space, ClaimSpace::kIdle);
  EXPECT_TRUE(Lists(sync->overlaps, "idle_gaps"));
  EXPECT_TRUE(Lists(idle->overlaps, "sync_in_loop"));
  // Both S = 2; idle_gaps comes first in the list and takes the idle phase; sync_in_loop's part
  // of it is already taken (unlocated parts are assumed to be the taken time).
  ASSERT_EQ(a.combined.parts.size(), 1u);
  EXPECT_EQ(a.combined.parts[0].finding, "idle_gaps");
  EXPECT_DOUBLE_EQ(a.combined.parts[0].share, 0.5);
  EXPECT_NEAR(a.combined.overall, 1 / (0.5 + 0.25), 1e-12);
}

// gemm [0, 20) + relu [20, 30) on device 0 and the same on device 1: one candidate, two
// occurrences at once. Its share is their wall time, 0.3, not their sum, 0.6.
TEST(Claims, FusionShareIsTheChainsWallTime) {
  Trace t;
  AddRange(t, "iteration", 0, kIter);
  for (int32_t device : {0, 1}) {
    AddKernel(t, "gemm_kernel", 0, 20'000, device, 7);
    AddKernel(t, "relu_kernel", 20'000, 30'000, device, 7);
  }
  Analysis a = Analyze(t);
  const Finding* f = Find(a, "fusion_candidate");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->amdahl.share, 0.3);
  EXPECT_DOUBLE_EQ(f->evidence[0].value, 0.3);
  // chain 60,000 ns summed, saving 0.75 x 20,000: S = 60,000 / 45,000.
  EXPECT_NEAR(f->amdahl.speedup, 60.0 / 45.0, 1e-12);
  ASSERT_FALSE(f->claim.empty());
  EXPECT_EQ(f->claim[0].intervals, (std::vector<Interval>{{0, 30'000}}));
}

Finding Made(std::string id, double p, double s, bool heuristic = false, std::vector<ClaimPart> claim = {}) {
  Finding f;
  f.id = std::move(id);
  f.heuristic = heuristic;
  f.amdahl = MakeAmdahl(p, s, "assumed", "");
  f.claim = std::move(claim);
  return f;
}

ClaimPart Gpu(double share, TimeNs a, TimeNs b) { return ClaimPart{ClaimSpace::kGpu, share, {{a, b}}}; }

TEST(Claims, LocatedClaimsOverlapOnlyWhereTheyMeet) {
  std::vector<Finding> f{Made("a", 0.1, 2, false, {Gpu(0.1, 0, 10)}), Made("b", 0.1, 3, false, {Gpu(0.1, 10, 20)}),
                         Made("c", 0.1, 4, false, {Gpu(0.1, 5, 15)}),
                         Made("a", 0.2, 1.5, false, {ClaimPart{ClaimSpace::kRun, 0.2, {}}})};
  const CombinedEstimate c = RelateFindings(f);
  EXPECT_EQ(FindingRefs(f), (std::vector<std::string>{"a#1", "b", "c", "a#2"}));
  EXPECT_EQ(f[0].overlaps, (std::vector<std::string>{"c", "a#2"}));
  EXPECT_EQ(f[1].overlaps, (std::vector<std::string>{"c", "a#2"}));
  EXPECT_EQ(f[2].overlaps, (std::vector<std::string>{"a#1", "b", "a#2"}));
  EXPECT_EQ(f[3].overlaps, (std::vector<std::string>{"a#1", "b", "c"}));  // the run overlaps every claim
  // c (S = 4) takes [5, 15); b keeps [15, 20), a keeps [0, 5); a#2 claims the run: left out.
  ASSERT_EQ(c.parts.size(), 3u);
  EXPECT_EQ(c.parts[0].finding, "c");
  EXPECT_DOUBLE_EQ(c.parts[0].share, 0.1);
  EXPECT_DOUBLE_EQ(c.parts[1].share, 0.05);
  EXPECT_DOUBLE_EQ(c.parts[2].share, 0.05);
  EXPECT_EQ(c.left_out, (std::vector<std::string>{"a#2"}));
}

// Claims of several pieces each, touching and overlapping one another: which findings meet, and
// each one's free share (its length not yet taken over its length, times its share), by hand.
TEST(Claims, ManyPieceClaimsTakeOnlyTheirFreeTime) {
  auto gpu = [](double share, std::vector<Interval> v) { return ClaimPart{ClaimSpace::kGpu, share, std::move(v)}; };
  std::vector<Finding> f{Made("p", 0.3, 8, false, {gpu(0.3, {{0, 10}, {20, 30}, {40, 50}})}),
                         Made("q", 0.2, 4, false, {gpu(0.2, {{10, 20}, {25, 45}})}),
                         Made("r", 0.25, 2, false, {gpu(0.25, {{0, 5}, {5, 8}, {60, 70}})}),
                         Made("s", 0.1, 1.5, false, {gpu(0.1, {{48, 62}})})};
  const CombinedEstimate c = RelateFindings(f);
  EXPECT_EQ(f[0].overlaps, (std::vector<std::string>{"q", "r", "s"}));
  EXPECT_EQ(f[1].overlaps, (std::vector<std::string>{"p"}));  // [10, 20) only touches p's pieces
  EXPECT_EQ(f[2].overlaps, (std::vector<std::string>{"p", "s"}));
  EXPECT_EQ(f[3].overlaps, (std::vector<std::string>{"p", "r"}));
  // p takes [0,10) [20,30) [40,50); q keeps [10,20) and [30,40): 20 of 30; taken is [0, 50) now.
  // r keeps [60, 70): 10 of 18; s keeps [50, 60): 10 of 14.
  ASSERT_EQ(c.parts.size(), 4u);
  EXPECT_DOUBLE_EQ(c.parts[0].share, 0.3);
  EXPECT_DOUBLE_EQ(c.parts[1].share, 0.2 * 20 / 30);
  EXPECT_DOUBLE_EQ(c.parts[2].share, 0.25 * 10 / 18);
  EXPECT_DOUBLE_EQ(c.parts[3].share, 0.1 * 10 / 14);
}

// RelateFindings reads the first located part of a space in place when it is a union already,
// and builds the union when it is not (touching, out of order or empty pieces): the shares are
// the same either way, and so is the rest of the space's assignment.
TEST(Claims, FirstLocatedPartReadInPlaceOrUnited) {
  auto gpu = [](double share, std::vector<Interval> v) { return ClaimPart{ClaimSpace::kGpu, share, std::move(v)}; };
  auto shares = [&](std::vector<Interval> first) {
    std::vector<Finding> f{Made("p", 0.3, 8, false, {gpu(0.3, std::move(first))}),
                           Made("q", 0.2, 4, false, {gpu(0.2, {{10, 20}, {25, 45}})}),
                           Made("r", 0.1, 2, false, {gpu(0.1, {{0, 8}, {44, 60}})})};
    std::vector<double> out;
    for (const CombinedPart& part : RelateFindings(f).parts) out.push_back(part.share);
    return out;
  };
  const std::vector<double> in_place = shares({{0, 10}, {20, 30}, {40, 50}});
  ASSERT_EQ(in_place.size(), 3u);
  EXPECT_DOUBLE_EQ(in_place[1], 0.2 * 20 / 30);  // q keeps [10, 20) and [30, 40)
  EXPECT_DOUBLE_EQ(in_place[2], 0.1 * 10 / 24);  // r keeps [50, 60): [0, 50) is taken
  for (const std::vector<Interval>& first :
       {std::vector<Interval>{{0, 5}, {5, 10}, {20, 30}, {40, 50}}, std::vector<Interval>{{20, 30}, {0, 10}, {40, 50}},
        std::vector<Interval>{{0, 10}, {12, 12}, {20, 30}, {40, 50}}}) {
    const std::vector<double> united = shares(first);
    ASSERT_EQ(united.size(), in_place.size());
    for (size_t i = 1; i < united.size(); ++i) EXPECT_DOUBLE_EQ(united[i], in_place[i]);
  }
}

// A claim's GPU-busy part reads the summary's busy union clipped to the spans (GpuBusy) or, before
// GpuBusy is made, the summary's union itself with the claim clipped first: the same pieces.
TEST(Claims, BusyInIsWhereTimesGpuBusyPieceForPiece) {
  Trace t;
  AddRange(t, "iteration", 0, 1000);
  AddRange(t, "iteration", 1500, 2500);
  AddKernel(t, "a", 100, 300);
  AddKernel(t, "b", 300, 400);         // touches a: one busy piece
  AddKernel(t, "c", 900, 1700, 0, 8);  // across the hole between the iterations
  AddKernel(t, "d", 2000, 2100);
  AddKernel(t, "e", 2600, 2700);  // after the last iteration
  IterationAnalysis its;
  ASSERT_TRUE(AnalyzeIterations(t, {}, &its).ok());
  const Summary s = Summarize(t, {});
  FindingsInput in;
  in.trace = &t;
  in.summary = &s;
  in.iterations = &its;
  const RulesConfig rules;
  const internal::RuleContext fresh(in, rules), made(in, rules);
  for (const std::vector<Interval>& where :
       {std::vector<Interval>{{0, 3000}}, std::vector<Interval>{{50, 150}, {350, 950}},
        std::vector<Interval>{{1000, 1600}, {2050, 2650}}, std::vector<Interval>{}}) {
    const std::vector<Interval> expected = IntersectUnions(where, made.GpuBusy());
    EXPECT_EQ(fresh.BusyIn(where), expected);
    EXPECT_EQ(made.BusyIn(where), expected);
  }
}

// The invariants: parts sum to at most 1, each part at most its finding's P, and the combined
// gain at most the findings' savings added up. It is not bounded by the product of the
// individual speedups: two disjoint halves each removed give 2x and 2x alone, unbounded together.
TEST(Claims, CombinedEstimateInvariants) {
  std::vector<Finding> f{Made("idle", 0.5, 2, false, {ClaimPart{ClaimSpace::kIdle, 0.5, {}}}),
                         Made("sync", 0.3, 2, false, {ClaimPart{ClaimSpace::kIdle, 0.3, {}}}),
                         Made("mem", 0.4, 1.3, true, {Gpu(0.4, 0, 40)}),
                         Made("layout", 0.2, 2, true, {Gpu(0.2, 30, 50)})};
  const CombinedEstimate c = RelateFindings(f);
  double sum = 0, savings = 0;
  for (const CombinedPart& p : c.parts) {
    sum += p.share;
    for (const Finding& x : f)
      if (x.id == p.finding) {
        EXPECT_LE(p.share, x.amdahl.share + 1e-12) << p.finding;
      }
  }
  for (const Finding& x : f) savings += x.amdahl.share * (1 - 1 / x.amdahl.speedup);
  EXPECT_LE(sum, 1.0);
  EXPECT_LE(c.overall, 1 / (1 - savings) + 1e-12);
  // idle 0.5 @ 2, layout 0.2 @ 2, mem keeps [0, 30): 0.3 @ 1.3; sync's part is taken.
  EXPECT_NEAR(c.overall, 1 / (0.5 / 2 + 0.2 / 2 + 0.3 / 1.3), 1e-12);

  std::vector<Finding> halves{Made("x", 0.5, INFINITY, false, {Gpu(0.5, 0, 50)}),
                              Made("y", 0.5, INFINITY, false, {Gpu(0.5, 50, 100)})};
  const CombinedEstimate h = RelateFindings(halves);
  EXPECT_TRUE(halves[0].overlaps.empty());
  EXPECT_TRUE(std::isinf(h.overall));
  EXPECT_DOUBLE_EQ(halves[0].amdahl.overall * halves[1].amdahl.overall, 4.0);
}

TEST(Priority, FollowsTheGainAndCapsHeuristicEvidence) {
  EXPECT_EQ(DerivePriority(Priority::kLow, Made("a", 0.2, 2)), Priority::kHigh);           // +11.1%
  EXPECT_EQ(DerivePriority(Priority::kHigh, Made("a", 0.2, 2, true)), Priority::kMedium);  // heuristic
  EXPECT_EQ(DerivePriority(Priority::kHigh, Made("a", 0.05, 2)), Priority::kMedium);       // +2.6%
  EXPECT_EQ(DerivePriority(Priority::kHigh, Made("a", 0.03, 2)), Priority::kLow);          // +1.5%
  Finding none = Made("a", 0.5, 2);
  none.amdahl.applicable = false;
  EXPECT_EQ(DerivePriority(Priority::kLow, none), Priority::kLow);  // no estimate: the table's
  EXPECT_EQ(EvidenceStrengthOf(Made("a", 0.1, 2, true)), EvidenceStrength::kHeuristic);
}

// A LOW card never predicts more than a MEDIUM or HIGH one unless its evidence is weaker.
TEST(Priority, OrderIsConsistentWithGainAndEvidence) {
  Trace t;
  AddRange(t, "iteration", 0, kIter);
  AddKernel(t, kElementwise, 0, 40'000);
  AddKernel(t, "transpose_kernel", 40'000, 60'000);
  AddKernel(t, "gemm_kernel", 60'000, 80'000);
  Analysis a = Analyze(t);
  ASSERT_GE(a.findings.size(), 2u);
  for (const Finding& hi : a.findings)
    for (const Finding& lo : a.findings)
      if (lo.priority > hi.priority && lo.amdahl.overall > hi.amdahl.overall) {
        EXPECT_GT(EvidenceStrengthOf(lo), EvidenceStrengthOf(hi)) << lo.id << " below " << hi.id;
      }
}

}  // namespace
}  // namespace tg
