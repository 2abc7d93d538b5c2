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

// Warm-up: the leading iterations that are clear outliers against the steady state (docs/RULES.md,
// "Warm-up iterations"). Of n latencies in run order, the warm-up is the longest prefix of w
// iterations, 1 <= w <= min(n / 2, n - 3), each of which took more than `factor` times the median
// of the other n - w (the middle value, or the mean of the two middle values); none when no
// prefix qualifies, and always none when n < 4. At most half of the run is dropped, at least 3
// iterations are kept, and one slow iteration later in the run is never a reason to drop.
inline constexpr double kWarmupFactor = 2.0;
inline constexpr size_t kWarmupMinIterations = 4;
struct WarmupSplit {
  bool eligible = false;  // n >= kWarmupMinIterations
  size_t dropped = 0;     // w
  // eligible: the median of latencies[dropped..]; with none dropped, of latencies[1..] (the
  // median the first iteration was measured against) and first_ratio = latencies[0] / median.
  double median = 0;
  double first_ratio = 0;
};
// O(n log n). Latencies must be finite and non-negative.
WarmupSplit FindWarmup(const std::vector<double>& latencies, double factor = kWarmupFactor);

}  // namespace tg
