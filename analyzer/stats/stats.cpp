// Descriptive statistics. Two-pass mean / variance (numerically safer than sum of squares) and
// exact-equality checks for "constant" so that a constant series never yields NaN.
#include "tracegate/analyzer/stats.h"

#include <algorithm>
#include <cmath>

namespace tg {

namespace {

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

bool AllEqual(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [&](double x) { return x == v.front(); });
}

// Sums of squared and crossed deviations from the means: Sxx, Sxy, Syy.
struct CoMoments {
  double sxx = 0, sxy = 0, syy = 0;
};
template <class XAt>
CoMoments Deviations(XAt x_at, double x_mean, const std::vector<double>& y) {
  const double y_mean = Mean(y);
  CoMoments m;
  for (size_t i = 0; i < y.size(); ++i) {
    double dx = x_at(i) - x_mean, dy = y[i] - y_mean;
    m.sxx += dx * dx;
    m.sxy += dx * dy;
    m.syy += dy * dy;
  }
  return m;
}

}  // namespace

size_t NearestRankIndex(size_t n, double pct) {
  if (n == 0 || !(pct > 0)) return 0;
  // pct * n / 100 rather than pct / 100 * n: pct * n is exact for integral pct, so p95 of 100
  // values is rank 95, not 96 from 0.95 * 100 = 95.00000000000001.
  double rank = std::ceil(pct * static_cast<double>(n) / 100.0);
  size_t r = rank >= static_cast<double>(n) ? n : static_cast<size_t>(rank);
  return std::max<size_t>(r, 1) - 1;
}

double NearestRank(const std::vector<double>& sorted, double pct) {
  if (sorted.empty()) return 0;
  return sorted[NearestRankIndex(sorted.size(), pct)];
}

SampleStats Describe(std::vector<double> values) {
  SampleStats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.n = values.size();
  s.min = values.front();
  s.max = values.back();
  s.p50 = NearestRank(values, 50);
  s.p95 = NearestRank(values, 95);
  s.p99 = NearestRank(values, 99);
  s.mean = Mean(values);
  double ss = 0;
  for (double x : values) ss += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(ss / static_cast<double>(s.n));
  if (s.n >= 2 && s.mean != 0) {
    s.has_cv = true;
    s.cv = s.std / s.mean;
  }
  return s;
}

LinearFit FitLine(const std::vector<double>& y) {
  LinearFit fit;
  const size_t n = y.size();
  if (n < 2) return fit;
  fit.ok = true;
  if (AllEqual(y)) {
    fit.intercept = y.front();
    return fit;
  }
  const double x_mean = static_cast<double>(n - 1) / 2;
  CoMoments m = Deviations([](size_t i) { return static_cast<double>(i); }, x_mean, y);
  fit.slope = m.sxy / m.sxx;
  fit.intercept = Mean(y) - fit.slope * x_mean;
  fit.r = m.syy > 0 ? m.sxy / std::sqrt(m.sxx * m.syy) : 0;
  return fit;
}

double Pearson(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2 || AllEqual(x) || AllEqual(y)) return 0;
  CoMoments m = Deviations([&x](size_t i) { return x[i]; }, Mean(x), y);
  if (!(m.sxx > 0) || !(m.syy > 0)) return 0;
  return m.sxy / std::sqrt(m.sxx * m.syy);
}

}  // namespace tg
