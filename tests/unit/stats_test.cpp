#include "tracegate/analyzer/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace tg {
namespace {

TEST(Stats, NearestRankIsAnObservedValue) {
  const std::vector<double> v{10, 20, 30, 40};
  EXPECT_EQ(NearestRank(v, 50), 20);   // ceil(0.50 * 4) = 2nd
  EXPECT_EQ(NearestRank(v, 25), 10);   // ceil(1.00) = 1st
  EXPECT_EQ(NearestRank(v, 26), 20);   // ceil(1.04) = 2nd
  EXPECT_EQ(NearestRank(v, 75), 30);   // ceil(3.00) = 3rd
  EXPECT_EQ(NearestRank(v, 100), 40);
  EXPECT_EQ(NearestRank(v, 0), 10);    // pct <= 0: the minimum
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
  EXPECT_EQ(Pearson({1, 2, 3}, {5, 5, 5}), 0);                  // constant
  EXPECT_EQ(Pearson({4, 4}, {1, 2}), 0);
  EXPECT_EQ(Pearson({1}, {1}), 0);                              // n < 2
  EXPECT_EQ(Pearson({1, 2, 3}, {1, 2}), 0);                     // lengths differ
}

}  // namespace
}  // namespace tg
