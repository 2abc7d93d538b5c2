#include "tracegate/analyzer/significance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <system_error>
#include <thread>

#include "tracegate/analyzer/stats.h"

namespace tg {

namespace {

bool AllFinite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// Why a pair of samples cannot be tested, or "" when they can.
std::string SampleProblem(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || b.size() < 2)
    return "needs at least 2 samples per side (got " + std::to_string(a.size()) + " and " + std::to_string(b.size()) +
           ")";
  if (!AllFinite(a) || !AllFinite(b)) return "a sample is not a finite number";
  return "";
}

struct Ranked {
  double rank_sum_a = 0;  // sum of a's ranks (1-based, ties averaged) in the pooled sample
  double tie_term = 0;    // sum over tie groups of t^3 - t
  bool ties = false;
};

Ranked RankPooled(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t n = a.size() + b.size();
  std::vector<std::pair<double, bool>> pooled;  // value, from a
  pooled.reserve(n);
  for (double x : a) pooled.emplace_back(x, true);
  for (double x : b) pooled.emplace_back(x, false);
  std::sort(pooled.begin(), pooled.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
  Ranked out;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double avg_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;  // ranks i+1..j
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second) out.rank_sum_a += avg_rank;
    if (j - i > 1) {
      out.ties = true;
      out.tie_term += t * t * t - t;
    }
    i = j;
  }
  return out;
}

// P(U >= k) under the null for sample sizes m and n, from the recurrence over the largest
// pooled value: it belongs to the first sample with probability i / (i + j) and then beats all j
// of the second, so P_{i,j}(u) = i/(i+j) P_{i-1,j}(u - j) + j/(i+j) P_{i,j-1}(u), P_{0,j} =
// P_{i,0} = [u == 0]. Probabilities (not counts) keep every term in [0, 1].
double ExactUpperTail(size_t m, size_t n, size_t k) {
  using Dist = std::vector<double>;
  std::vector<Dist> prev(n + 1, Dist{1.0}), cur(n + 1);  // row i - 1 and row i, indexed by j
  for (size_t i = 1; i <= m; ++i) {
    cur[0] = Dist{1.0};
    for (size_t j = 1; j <= n; ++j) {
      Dist d(i * j + 1, 0.0);
      const double from_first = static_cast<double>(i) / static_cast<double>(i + j);
      const double from_second = 1 - from_first;
      for (size_t u = 0; u < prev[j].size(); ++u) d[u + j] += from_first * prev[j][u];
      for (size_t u = 0; u < cur[j - 1].size(); ++u) d[u] += from_second * cur[j - 1][u];
      cur[j] = std::move(d);
    }
    std::swap(prev, cur);
  }
  const Dist& dist = prev[n];
  double tail = 0;
  for (size_t u = dist.size(); u-- > k;) tail += dist[u];  // smallest terms first
  return tail;
}

double NormalUpperTail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast and the same on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  // The generator as it is after `draws` calls of Next (the state only counts).
  static SplitMix64 After(uint64_t seed, uint64_t draws) { return SplitMix64(seed + draws * kGamma); }
  uint64_t Next() {
    uint64_t z = (state_ += kGamma);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform index in [0, n): 53 random bits scaled (bias below 2^-40 for any sample size here).
  size_t Index(size_t n) {
    double u = static_cast<double>(Next() >> 11) * 0x1.0p-53;
    return std::min(n - 1, static_cast<size_t>(u * static_cast<double>(n)));
  }

 private:
  static constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ULL;
  uint64_t state_;
};

double Mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double ResampledMean(const std::vector<double>& v, SplitMix64& rng) {
  double sum = 0;
  for (size_t i = 0; i < v.size(); ++i) sum += v[rng.Index(v.size())];
  return sum / static_cast<double>(v.size());
}

}  // namespace

MannWhitneyResult MannWhitneyU(const std::vector<double>& a, const std::vector<double>& b) {
  MannWhitneyResult r;
  r.reason = SampleProblem(a, b);
  if (!r.reason.empty()) return r;
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size()), n = na + nb;
  const Ranked ranked = RankPooled(a, b);
  r.u = ranked.rank_sum_a - na * (na + 1) / 2;
  const double mu = na * nb / 2;
  const double sigma = std::sqrt(na * nb / 12 * ((n + 1) - ranked.tie_term / (n * (n - 1))));
  const double dev = std::abs(r.u - mu);
  const double z_abs = sigma > 0 ? (dev - 0.5) / sigma : 0;
  r.z = r.u >= mu ? z_abs : -z_abs;
  r.ok = true;
  r.exact = !ranked.ties && a.size() <= kMannWhitneyExactMax && b.size() <= kMannWhitneyExactMax;
  if (r.exact) {
    // Without ties U is an integer; max(u, U_b) = mu + dev.
    const auto k = static_cast<size_t>(std::llround(mu + dev));
    r.p_two_sided = std::min(1.0, 2 * ExactUpperTail(a.size(), b.size(), k));
  } else {
    // sigma == 0 only when every value is the same: no evidence of a difference.
    r.p_two_sided = sigma > 0 ? std::min(1.0, 2 * NormalUpperTail(z_abs)) : 1.0;
  }
  return r;
}

BootstrapResult BootstrapRatioOfMeans(const std::vector<double>& base, const std::vector<double>& next,
                                      int resamples, double confidence, uint64_t seed) {
  return BootstrapRatioOfMeans(base, next, resamples, confidence, seed, 0);
}

BootstrapResult BootstrapRatioOfMeans(const std::vector<double>& base, const std::vector<double>& next,
                                      int resamples, double confidence, uint64_t seed, int threads) {
  BootstrapResult r;
  r.confidence = confidence;
  r.resamples = resamples;
  r.reason = SampleProblem(base, next);
  if (r.reason.empty() && std::any_of(base.begin(), base.end(), [](double x) { return x <= 0; }))
    r.reason = "base samples must be positive";
  if (r.reason.empty() && resamples < 1) r.reason = "needs at least 1 resample";
  if (r.reason.empty() && !(confidence > 0 && confidence < 1)) r.reason = "confidence must be in (0, 1)";
  if (!r.reason.empty()) return r;
  r.ratio = Mean(next) / Mean(base);
  std::vector<double> ratios(static_cast<size_t>(resamples));
  // Resample k draws base.size() then next.size() numbers, starting after k * per draws.
  const uint64_t per = base.size() + next.size();
  auto run = [&](size_t first, size_t last) {
    SplitMix64 rng = SplitMix64::After(seed, first * per);
    for (size_t k = first; k < last; ++k) {
      const double b = ResampledMean(base, rng);
      ratios[k] = ResampledMean(next, rng) / b;
    }
  };
  if (threads == 0) threads = std::thread::hardware_concurrency() >= 2 && per * ratios.size() >= (1u << 20) ? 2 : 1;
  size_t done = ratios.size();
  std::thread second;
  if (threads >= 2 && ratios.size() >= 2) {
    try {
      second = std::thread(run, ratios.size() / 2, ratios.size());
      done = ratios.size() / 2;
    } catch (const std::system_error&) {
      // no thread to be had: all on this one
    }
  }
  run(0, done);
  if (second.joinable()) second.join();
  std::sort(ratios.begin(), ratios.end());
  r.lo = NearestRank(ratios, 100 * (1 - confidence) / 2);
  r.hi = NearestRank(ratios, 100 * (1 + confidence) / 2);
  r.ok = true;
  return r;
}

RateBootstrapResult BootstrapRatioOfRates(const std::vector<double>& base_num, const std::vector<double>& base_den,
                                          const std::vector<double>& next_num, const std::vector<double>& next_den,
                                          double bound, int resamples, double confidence, uint64_t seed) {
  RateBootstrapResult r;
  r.confidence = confidence;
  r.resamples = resamples;
  auto finite = [](const std::vector<double>& v, bool positive) {
    return std::all_of(v.begin(), v.end(),
                       [positive](double x) { return std::isfinite(x) && (positive ? x > 0 : x >= 0); });
  };
  if (base_num.size() != base_den.size() || next_num.size() != next_den.size())
    r.reason = "each side needs as many numerators as denominators";
  else if (base_num.size() < 2 || next_num.size() < 2) r.reason = "needs at least 2 samples per side";
  else if (!finite(base_num, false) || !finite(next_num, false) || !finite(base_den, true) || !finite(next_den, true))
    r.reason = "numerators must be finite and >= 0, denominators finite and > 0";
  else if (resamples < 1) r.reason = "needs at least 1 resample";
  else if (!(confidence > 0 && confidence < 1)) r.reason = "confidence must be in (0, 1)";
  if (!r.reason.empty()) return r;
  auto sum = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); };
  const double base_rate = sum(base_num) / sum(base_den);
  if (!(base_rate > 0)) {
    r.reason = "the base rate is 0";
    return r;
  }
  r.ratio = sum(next_num) / sum(next_den) / base_rate;
  auto resampled = [](const std::vector<double>& num, const std::vector<double>& den, SplitMix64& rng) {
    double n = 0, d = 0;
    for (size_t i = 0; i < num.size(); ++i) {
      const size_t k = rng.Index(num.size());
      n += num[k];
      d += den[k];
    }
    return n / d;
  };
  SplitMix64 rng(seed);
  std::vector<double> ratios(static_cast<size_t>(resamples));
  size_t not_above = 0;
  for (double& q : ratios) {
    const double b = resampled(base_num, base_den, rng);
    q = b > 0 ? resampled(next_num, next_den, rng) / b : std::numeric_limits<double>::infinity();
    not_above += q <= bound;
  }
  std::sort(ratios.begin(), ratios.end());
  r.lo = NearestRank(ratios, 100 * (1 - confidence) / 2);
  r.hi = NearestRank(ratios, 100 * (1 + confidence) / 2);
  r.p_not_above = static_cast<double>(1 + not_above) / static_cast<double>(resamples + 1);
  r.ok = true;
  return r;
}

}  // namespace tg
