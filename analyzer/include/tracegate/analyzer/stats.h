// Descriptive statistics shared by the analyzer and the gate: nearest-rank percentiles, mean,
// population standard deviation, coefficient of variation, and a least-squares trend line.
// Every function takes plain doubles and never returns NaN: undefined values are flagged.
#pragma once

#include <cstddef>
#include <vector>

namespace tg {

// Nearest-rank percentile of an ascending-sorted, non-empty vector: the ceil(pct/100 * n)-th
// smallest value (1-based; pct <= 0 gives the minimum). Always an observed value.
double NearestRank(const std::vector<double>& sorted, double pct);
// Its 0-based index among n > 0 sorted values: ceil(pct/100 * n) - 1, clamped to [0, n - 1].
size_t NearestRankIndex(size_t n, double pct);

struct SampleStats {
  size_t n = 0;
  double mean = 0, std = 0;   // std: population standard deviation (divide by n)
  double min = 0, max = 0;
  double p50 = 0, p95 = 0, p99 = 0;  // nearest rank
  bool has_cv = false;        // false when n < 2 or mean == 0
  double cv = 0;              // std / mean
};
// All zero (n = 0) for an empty input.
SampleStats Describe(std::vector<double> values);

// Least-squares line y = intercept + slope * x over x = 0..n-1, and Pearson's r of (x, y).
struct LinearFit {
  bool ok = false;            // false when n < 2 (or every y equal: then slope 0, r 0, ok true)
  double slope = 0, intercept = 0, r = 0;
};
LinearFit FitLine(const std::vector<double>& y);

// Pearson correlation of two equal-length series; 0 when either is constant or n < 2.
double Pearson(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace tg
