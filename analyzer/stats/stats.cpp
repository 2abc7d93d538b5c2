// Descriptive statistics. Two-pass mean / variance (numerically safer than sum of squares) and
// exact-equality checks for "constant" so that a constant series never yields NaN.
#include "tracegate/analyzer/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

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

namespace {

// The medians of every suffix latencies[w..] for w = 1..last, from one sort and a Fenwick tree
// of counts over the values' ranks (each step removes latencies[w - 1]; k-th smallest by descent).
class SuffixMedians {
 public:
  explicit SuffixMedians(const std::vector<double>& v) : rank_(v.size()), by_rank_(v.size()), tree_(v.size() + 1) {
    std::vector<size_t> order(v.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
    for (size_t r = 0; r < order.size(); ++r) rank_[order[r]] = r, by_rank_[r] = v[order[r]];
    for (size_t r = 0; r < order.size(); ++r) Add(r, 1);
    size_ = v.size();
  }
  void Remove(size_t i) {
    Add(rank_[i], -1);
    --size_;
  }
  double Median() const {
    const double hi = Kth(size_ / 2 + 1);
    return size_ % 2 == 1 ? hi : (Kth(size_ / 2) + hi) / 2;
  }

 private:
  void Add(size_t r, int d) {
    for (size_t i = r + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += d;
  }
  // The k-th smallest (1-based) of the values still present.
  double Kth(size_t k) const {
    size_t pos = 0, step = 1;
    while (step * 2 < tree_.size()) step *= 2;
    for (; step > 0; step /= 2) {
      if (pos + step < tree_.size() && static_cast<size_t>(tree_[pos + step]) < k) {
        pos += step;
        k -= static_cast<size_t>(tree_[pos]);
      }
    }
    return by_rank_[pos];  // pos: the count of ranks below the k-th, so its rank
  }
  std::vector<size_t> rank_;
  std::vector<double> by_rank_;
  std::vector<int64_t> tree_;
  size_t size_ = 0;
};

}  // namespace

WarmupSplit FindWarmup(const std::vector<double>& latencies, double factor) {
  WarmupSplit s;
  const size_t n = latencies.size();
  if (n < kWarmupMinIterations) return s;
  s.eligible = true;
  const size_t last = std::min(n / 2, n - 3);
  SuffixMedians medians(latencies);
  double prefix_min = latencies[0];
  std::vector<double> median_at(last + 1);
  for (size_t w = 1; w <= last; ++w) {
    medians.Remove(w - 1);
    prefix_min = std::min(prefix_min, latencies[w - 1]);
    median_at[w] = medians.Median();
    if (prefix_min > factor * median_at[w]) s.dropped = w;
  }
  if (s.dropped > 0) {
    s.median = median_at[s.dropped];
  } else {
    s.median = median_at[1];
    s.first_ratio = s.median > 0 ? latencies[0] / s.median : 0;
  }
  return s;
}

}  // namespace tg
