// Mann-Whitney U and the bootstrap CI of the ratio of means. Expected p-values were computed with
// scipy 1.10.1: scipy.stats.mannwhitneyu(a, b, method="exact" | "asymptotic") (two-sided, with
// continuity correction), and are written here as numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tracegate/analyzer/significance.h"

namespace tg {
namespace {

TEST(MannWhitney, FullySeparatedSmallSamplesUseTheExactDistribution) {
  // Every a below every b: U_a = 0. Of the C(10, 5) = 252 equally likely arrangements only one
  // gives U = 0 (and one U = 25), so p = 2 * 1/252 = 0.0079365...
  MannWhitneyResult r = MannWhitneyU({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.u, 0);
  EXPECT_NEAR(r.p_two_sided, 2.0 / 252, 1e-15);
  // z = -(|0 - 12.5| - 0.5) / sqrt(25 * 11 / 12) = -12 / 4.7871
  EXPECT_NEAR(r.z, -12 / std::sqrt(25.0 * 11 / 12), 1e-12);
}

TEST(MannWhitney, InterleavedSamplesMatchScipyExact) {
  // U_a = 7: 44 of the C(13, 6) = 1716 arrangements have U <= 7, so p = 2 * 44/1716 = 0.0512820...
  // (scipy: statistic 7.0, p 0.05128205128205128).
  MannWhitneyResult r = MannWhitneyU({1.1, 2.3, 3.5, 4.2, 6.0, 7.7}, {2.0, 5.1, 8.3, 9.9, 10.4, 11.0, 12.5});
  ASSERT_TRUE(r.ok);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.u, 7);
  EXPECT_NEAR(r.p_two_sided, 0.05128205128205128, 1e-12);
}

TEST(MannWhitney, TiesUseTheNormalApproximationWithTieCorrection) {
  // Pooled ranks: 1 | 2,2 -> 2.5 | 3 x4 -> 5.5 | 4 x3 -> 9 | 5,5 -> 11.5 | 6 -> 13.
  // R_a = 1 + 2.5 + 2.5 + 5.5 * 3 + 9 = 31.5, U_a = 31.5 - 28 = 3.5 (scipy 3.5).
  // tie term = 6 + 60 + 24 + 6 = 96, n (n - 1) = 13 * 12 = 156;
  // sigma = sqrt(42/12 * (14 - 96/156)); z = -(|3.5 - 21| - 0.5) / sigma. scipy asymptotic p:
  MannWhitneyResult r = MannWhitneyU({1, 2, 2, 3, 3, 3, 4}, {3, 4, 4, 5, 5, 6});
  ASSERT_TRUE(r.ok);
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.u, 3.5);
  EXPECT_NEAR(r.p_two_sided, 0.012999854364387305, 1e-12);
  EXPECT_NEAR(r.z, -(21 - 3.5 - 0.5) / std::sqrt(42.0 / 12 * (14 - 96.0 / 156)), 1e-12);
}

std::vector<double> Sequence(size_t n, double step, double offset) {
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(static_cast<double>(i) * step + offset);
  return v;
}

TEST(MannWhitney, LargestExactSizeAndTheFirstApproximatedOne) {
  // a = 0.5, 2.5, ..., b = 4.25, 6.25, ...: no ties. 50 x 50 is still exact; 51 x 50 is not.
  MannWhitneyResult exact = MannWhitneyU(Sequence(50, 2, 0.5), Sequence(50, 2, 4.25));
  ASSERT_TRUE(exact.ok);
  EXPECT_TRUE(exact.exact);
  EXPECT_EQ(exact.u, 1176);
  EXPECT_NEAR(exact.p_two_sided, 0.6138419352848832, 1e-10);
  MannWhitneyResult approx = MannWhitneyU(Sequence(51, 2, 0.5), Sequence(50, 2, 4.25));
  ASSERT_TRUE(approx.ok);
  EXPECT_FALSE(approx.exact);
  EXPECT_EQ(approx.u, 1225);
  EXPECT_NEAR(approx.p_two_sided, 0.736703745024799, 1e-12);
}

TEST(MannWhitney, LargeSamplesWithTiesMatchScipyAsymptotic) {
  std::vector<double> a, b;
  for (int i = 0; i < 60; ++i) {
    a.push_back((i * 37) % 101);
    b.push_back((i * 53) % 103 + 10);
  }
  MannWhitneyResult r = MannWhitneyU(a, b);
  ASSERT_TRUE(r.ok);
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.u, 1523.5);
  EXPECT_NEAR(r.p_two_sided, 0.14741933571660895, 1e-12);
}

TEST(MannWhitney, IdenticalValuesGivePOne) {
  MannWhitneyResult r = MannWhitneyU({3, 3, 3}, {3, 3});
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.u, 3);  // n_a n_b / 2
  EXPECT_EQ(r.p_two_sided, 1);
  EXPECT_EQ(r.z, 0);
}

TEST(MannWhitney, TooFewOrNonFiniteSamplesCannotBeTested) {
  MannWhitneyResult r = MannWhitneyU({1}, {2, 3});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("at least 2 samples"), std::string::npos) << r.reason;
  EXPECT_FALSE(MannWhitneyU({}, {}).ok);
  EXPECT_FALSE(MannWhitneyU({1, std::nan("")}, {2, 3}).ok);
}

TEST(Bootstrap, ConstantSamplesGiveTheExactRatio) {
  // Every resample of a constant sample has the same mean: lo = hi = ratio = 11 / 10.
  BootstrapResult r = BootstrapRatioOfMeans({10, 10, 10}, {11, 11, 11, 11});
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_DOUBLE_EQ(r.ratio, 1.1);
  EXPECT_DOUBLE_EQ(r.lo, 1.1);
  EXPECT_DOUBLE_EQ(r.hi, 1.1);
  EXPECT_EQ(r.resamples, 10000);
  EXPECT_EQ(r.confidence, 0.95);
}

TEST(Bootstrap, IntervalMatchesTheDeltaMethodForLargeSamples) {
  // base = {9, 11} x 20: mean 10, population variance 1; next = 1.1 x base: mean 11, variance
  // 1.21; n = 40 each. Var(ratio) ~ Vn/(n Mb^2) + Mn^2 Vb/(n Mb^4) = 1.21/4000 + 121/400000
  // = 0.000605, sd 0.0246, 95% half width 1.96 * 0.0246 = 0.0482 -> about [1.052, 1.148].
  std::vector<double> base, next;
  for (int i = 0; i < 20; ++i) {
    base.insert(base.end(), {9, 11});
    next.insert(next.end(), {9.9, 12.1});
  }
  BootstrapResult r = BootstrapRatioOfMeans(base, next);
  ASSERT_TRUE(r.ok);
  EXPECT_DOUBLE_EQ(r.ratio, 1.1);
  EXPECT_NEAR(r.lo, 1.052, 0.006);
  EXPECT_NEAR(r.hi, 1.148, 0.006);
  EXPECT_LT(r.lo, r.ratio);
  EXPECT_GT(r.hi, r.ratio);
}

TEST(Bootstrap, IsDeterministicForASeedAndNarrowsWithLowerConfidence) {
  std::vector<double> base{5.1, 4.9, 5.3, 5.0, 4.8, 5.2}, next{5.6, 5.2, 5.9, 5.4, 5.5, 5.3};
  BootstrapResult a = BootstrapRatioOfMeans(base, next), b = BootstrapRatioOfMeans(base, next);
  EXPECT_EQ(a.lo, b.lo);
  EXPECT_EQ(a.hi, b.hi);
  BootstrapResult other_seed = BootstrapRatioOfMeans(base, next, 10000, 0.95, 1);
  EXPECT_NEAR(other_seed.lo, a.lo, 0.01);  // a different seed moves the ends only a little
  BootstrapResult narrow = BootstrapRatioOfMeans(base, next, 10000, 0.5);
  EXPECT_GT(narrow.lo, a.lo);
  EXPECT_LT(narrow.hi, a.hi);
}

TEST(Bootstrap, RejectsWhatItCannotResample) {
  EXPECT_FALSE(BootstrapRatioOfMeans({1}, {1, 2}).ok);
  EXPECT_FALSE(BootstrapRatioOfMeans({0, 1}, {1, 2}).ok);
  EXPECT_FALSE(BootstrapRatioOfMeans({1, 2}, {1, 2}, 0).ok);
  EXPECT_FALSE(BootstrapRatioOfMeans({1, 2}, {1, 2}, 100, 1.0).ok);
  BootstrapResult r = BootstrapRatioOfMeans({-1, 2}, {1, 2});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "base samples must be positive");
}

}  // namespace
}  // namespace tg
