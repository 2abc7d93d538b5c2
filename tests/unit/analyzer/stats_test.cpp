#include "tracegate/analyzer/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tg {
namespace {

TEST(Stats, NearestRankIsAnObservedValue) {
  const std::vector<double> v{10, 20, 30, 40};
  EXPECT_EQ(NearestRank(v, 50), 20);  // ceil(0.50 * 4) = 2nd
  EXPECT_EQ(NearestRank(v, 25), 10);  // ceil(1.00) = 1st
  EXPECT_EQ(NearestRank(v, 26), 20);  // ceil(1.04) = 2nd
  EXPECT_EQ(NearestRank(v, 75), 30);  // ceil(3.00) = 3rd
  EXPECT_EQ(NearestRank(v, 100), 40);
  EXPECT_EQ(NearestRank(v, 0), 10);  // pct <= 0: the minimum
  EXPECT_EQ(NearestRank(v, -5), 10);
  EXPECT_EQ(NearestRank({7}, 99), 7);
}

TEST(Stats, NearestRankOfIntegralPercentIsNotOffByOne) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_EQ(NearestRank(v, 95), 95);  // rank 95 exactly, not 96 from 0.95 * 100 rounding up
  EXPECT_EQ(NearestRank(v, 99), 99);
  EXPECT_EQ(NearestRank(v, 99.5), 100);  // ceil(99.5)
}

TEST(Stats, DescribeKnownSample) {
  // Sorted: 2 4 4 4 5 5 7 9. Mean 40/8 = 5; squared deviations 9+1+1+1+0+0+4+16 = 32, /8 = 4,
  // population std 2, CV 2/5 = 0.4. p50 = 4th = 4, p95 = ceil(7.6) = 8th = 9, p99 = 8th = 9.
  SampleStats s = Describe({9, 4, 5, 2, 4, 7, 4, 5});
  EXPECT_EQ(s.n, 8u);
  EXPECT_EQ(s.mean, 5);
  EXPECT_EQ(s.std, 2);
  EXPECT_EQ(s.min, 2);
  EXPECT_EQ(s.max, 9);
  EXPECT_EQ(s.p50, 4);
  EXPECT_EQ(s.p95, 9);
  EXPECT_EQ(s.p99, 9);
  ASSERT_TRUE(s.has_cv);
  EXPECT_DOUBLE_EQ(s.cv, 0.4);
}

TEST(Stats, DescribeFlagsUndefinedCv) {
  SampleStats empty = Describe({});
  EXPECT_EQ(empty.n, 0u);
  EXPECT_EQ(empty.mean, 0);
  EXPECT_EQ(empty.p99, 0);
  EXPECT_FALSE(empty.has_cv);

  SampleStats one = Describe({3});
  EXPECT_EQ(one.n, 1u);
  EXPECT_EQ(one.mean, 3);
  EXPECT_EQ(one.std, 0);
  EXPECT_EQ(one.p50, 3);
  EXPECT_FALSE(one.has_cv);  // n < 2

  SampleStats zero_mean = Describe({-1, 1});
  EXPECT_EQ(zero_mean.std, 1);
  EXPECT_FALSE(zero_mean.has_cv);  // mean 0
}

void ExpectFit(const std::vector<double>& y, double slope, double intercept, double r) {
  LinearFit f = FitLine(y);
  ASSERT_TRUE(f.ok);
  EXPECT_DOUBLE_EQ(f.slope, slope);
  EXPECT_DOUBLE_EQ(f.intercept, intercept);
  EXPECT_DOUBLE_EQ(f.r, r);
}

TEST(Stats, FitLine) {
  // y = 1 + 2x. x mean 1.5, y mean 4; Sxx = 5, Sxy = 10, Syy = 20: slope 2, r = 10 / sqrt(100) = 1.
  ExpectFit({1, 3, 5, 7}, 2, 1, 1);
  ExpectFit({7, 5, 3, 1}, -2, 7, -1);
  // y = {1, 3, 2, 4}: x mean 1.5, y mean 2.5; dx = -1.5 -.5 .5 1.5, dy = -1.5 .5 -.5 1.5;
  // Sxy = 2.25 - .25 - .25 + 2.25 = 4, Sxx = Syy = 5: slope 0.8, intercept 2.5 - 1.2 = 1.3, r 0.8.
  ExpectFit({1, 3, 2, 4}, 0.8, 1.3, 0.8);
}

TEST(Stats, FitLineDegenerateCases) {
  EXPECT_FALSE(FitLine({}).ok);
  EXPECT_FALSE(FitLine({5}).ok);
  LinearFit flat = FitLine({0.1, 0.1, 0.1});
  EXPECT_TRUE(flat.ok);
  EXPECT_EQ(flat.slope, 0);
  EXPECT_EQ(flat.r, 0);
  EXPECT_EQ(flat.intercept, 0.1);
  EXPECT_FALSE(std::isnan(flat.r));
}

TEST(Stats, Pearson) {
  EXPECT_DOUBLE_EQ(Pearson({1, 2, 3}, {2, 4, 6}), 1);
  EXPECT_DOUBLE_EQ(Pearson({1, 2, 3}, {3, 2, 1}), -1);
  EXPECT_DOUBLE_EQ(Pearson({1, 2, 3, 4}, {1, 3, 2, 4}), 0.8);  // Sxy 4 / sqrt(5 * 5), as above
  EXPECT_EQ(Pearson({1, 2, 3}, {5, 5, 5}), 0);                 // constant
  EXPECT_EQ(Pearson({4, 4}, {1, 2}), 0);
  EXPECT_EQ(Pearson({1}, {1}), 0);           // n < 2
  EXPECT_EQ(Pearson({1, 2, 3}, {1, 2}), 0);  // lengths differ
}

// The warm-up rule (stats.h, docs/RULES.md "Warm-up iterations"): the longest prefix of w
// iterations, 1 <= w <= min(n / 2, n - 3), each more than 2x the median of the other n - w.
TEST(Stats, WarmupDropsLeadingOutliers) {
  // The ResNet-50 eager recording's shape: one 437.8 ms iteration, then about 5.8 ms.
  WarmupSplit w = FindWarmup({437.8, 10.9, 9.2, 6.2, 5.8, 5.9, 5.8, 5.7});
  EXPECT_TRUE(w.eligible);
  EXPECT_EQ(w.dropped, 1u);
  EXPECT_DOUBLE_EQ(w.median, 5.9);  // of {10.9, 9.2, 6.2, 5.8, 5.9, 5.8, 5.7}: the 4th smallest
  EXPECT_EQ(w.first_ratio, 0);
  // Two slow iterations: both dropped, each more than 2x the median (2) of the other four.
  w = FindWarmup({100, 50, 2, 2, 2, 2});
  EXPECT_EQ(w.dropped, 2u);
  EXPECT_DOUBLE_EQ(w.median, 2);
  // The prefix stops at the first iteration that is not more than 2x: exactly 2x is not.
  EXPECT_EQ(FindWarmup({100, 4, 2, 2, 2, 2}).dropped, 1u);
  EXPECT_EQ(FindWarmup({4.0001, 2, 2, 2}).dropped, 1u);
  // Even counts take the mean of the two middle values: median of {1, 3} is 2.
  EXPECT_EQ(FindWarmup({4.5, 1, 3, 1, 3, 9}).dropped, 0u);  // rest {1, 3, 1, 3, 9}: median 3, 4.5 <= 6
  EXPECT_EQ(FindWarmup({4.5, 1, 3, 1, 3}).dropped, 1u);     // rest {1, 3, 1, 3}: median 2, 4.5 > 4
  EXPECT_EQ(FindWarmup({4.0, 1, 3, 1, 3}).dropped, 0u);     // 4 is not more than 4
}

TEST(Stats, WarmupKeepsTheSteadyState) {
  // Nothing stands out: none dropped, and the first iteration's ratio to the median of the rest.
  WarmupSplit w = FindWarmup({12, 10, 11, 10, 12});
  EXPECT_TRUE(w.eligible);
  EXPECT_EQ(w.dropped, 0u);
  EXPECT_DOUBLE_EQ(w.median, 10.5);
  EXPECT_DOUBLE_EQ(w.first_ratio, 12 / 10.5);
  // A slow iteration later in the run is no warm-up, nor is a slow second one after a normal first.
  EXPECT_EQ(FindWarmup({10, 10, 10, 500, 10, 10}).dropped, 0u);
  EXPECT_EQ(FindWarmup({10, 500, 10, 10, 10, 10}).dropped, 0u);
  // Fewer than 4 iterations: too few to judge.
  w = FindWarmup({1000, 1, 1});
  EXPECT_FALSE(w.eligible);
  EXPECT_EQ(w.dropped, 0u);
  EXPECT_FALSE(FindWarmup({}).eligible);
  // At most half of the run, and at least 3 kept: 4 iterations drop at most 1, 7 at most 3.
  EXPECT_EQ(FindWarmup({100, 100, 1, 1}).dropped, 1u);  // 100 > 2x median{100, 1, 1}; 2 would keep 2
  EXPECT_EQ(FindWarmup({100, 1, 1, 1}).dropped, 1u);
  EXPECT_EQ(FindWarmup({100, 100, 100, 100, 1, 1, 1}).dropped, 3u);  // the fourth stays: at most 3 of 7
  EXPECT_EQ(FindWarmup({100, 100, 100, 1, 1, 1, 1}).dropped, 3u);
  // The longest qualifying prefix: w = 1 (median 12 of the rest) and w = 2 (median 11) qualify,
  // w = 3 does not (10 is not more than 2x 12).
  EXPECT_EQ(FindWarmup({25, 1000, 10, 10, 12, 12}).dropped, 2u);
  // Not monotone: w = 1 fails (100 is not more than 2x the median 50.5 of the rest), w = 2 to 4
  // qualify (median 1): 4 dropped, the fifth stays (at most 4 of 9).
  EXPECT_EQ(FindWarmup({100, 100, 100, 100, 100, 1, 1, 1, 1}).dropped, 4u);
  // Zero latencies: nothing is more than 2x a zero median unless it is positive.
  EXPECT_EQ(FindWarmup({0, 0, 0, 0}).dropped, 0u);
}

// The suffix medians come from a Fenwick tree: check them against sorting every suffix.
TEST(Stats, WarmupMatchesBruteForce) {
  uint64_t seed = 12345;
  auto next = [&] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>((seed >> 33) % 1000);
  };
  for (int round = 0; round < 300; ++round) {
    const size_t n = 4 + static_cast<size_t>(round % 40);
    std::vector<double> v(n);
    for (double& x : v) x = next();
    for (size_t i = 0; i < n / 3; ++i) v[i] *= static_cast<double>(1 + round % 5);  // slow fronts, sometimes
    auto median = [](std::vector<double> s) {
      std::sort(s.begin(), s.end());
      return s.size() % 2 ? s[s.size() / 2] : (s[s.size() / 2 - 1] + s[s.size() / 2]) / 2;
    };
    size_t best = 0;
    for (size_t w = 1; w <= std::min(n / 2, n - 3); ++w) {
      const double m = median(std::vector<double>(v.begin() + static_cast<ptrdiff_t>(w), v.end()));
      if (std::all_of(v.begin(), v.begin() + static_cast<ptrdiff_t>(w), [&](double x) { return x > 2 * m; })) best = w;
    }
    const WarmupSplit w = FindWarmup(v);
    ASSERT_EQ(w.dropped, best) << "round " << round;
    const size_t from = best > 0 ? best : 1;
    EXPECT_EQ(w.median, median(std::vector<double>(v.begin() + static_cast<ptrdiff_t>(from), v.end())));
  }
}

}  // namespace
}  // namespace tg
