// Significance tests for the gate: is the new run's latency really different from the baseline's,
// or is the difference noise? Both work on per-iteration samples (latency_samples_ms) and are
// deterministic: the same inputs always give the same numbers, so a CI verdict is reproducible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tg {

// Samples up to this size on both sides (and no ties) get the exact distribution of U.
inline constexpr size_t kMannWhitneyExactMax = 50;

// Mann-Whitney U (Wilcoxon rank-sum) test, two-sided.
//   u  = U of sample a: R_a - n_a (n_a + 1) / 2, R_a the sum of a's ranks in the pooled sample
//        (ties get their average rank); U_b = n_a n_b - u.
//   Exact (both sides <= kMannWhitneyExactMax, no ties): p = 2 P(U >= max(u, U_b)), capped at 1,
//        from the null distribution of U counted over every arrangement.
//   Otherwise the normal approximation with tie and continuity correction:
//        sigma = sqrt(n_a n_b / 12 * ((n + 1) - sum(t^3 - t) / (n (n - 1)))), t = size of each tie
//        group, z = (|u - n_a n_b / 2| - 0.5) / sigma, p = 2 (1 - Phi(z)), capped at 1.
//   Both agree with scipy.stats.mannwhitneyu(a, b, method="exact" / "asymptotic").
// ok = false (reason says why) when a side has fewer than 2 samples or a value is not finite.
struct MannWhitneyResult {
  bool ok = false;
  bool exact = false;       // which p-value was computed
  double u = 0;             // U of sample a
  double z = 0;             // signed normal score of u (with the corrections above; 0 when sigma is 0)
  double p_two_sided = 1;
  std::string reason;       // when !ok
};
MannWhitneyResult MannWhitneyU(const std::vector<double>& a, const std::vector<double>& b);

// Percentile bootstrap of mean(next) / mean(base): `resamples` times, draw each side with
// replacement (independently, same sizes), and take the (1 - confidence) / 2 and
// (1 + confidence) / 2 quantiles (nearest rank) of the resampled ratios as lo and hi.
// Deterministic: a SplitMix64 generator seeded with `seed`.
// ok = false (reason says why) when a side has fewer than 2 samples, a value is not finite, a
// base value is not positive (so no resampled base mean is 0), resamples < 1 or confidence
// outside (0, 1).
struct BootstrapResult {
  bool ok = false;
  double ratio = 0;         // mean(next) / mean(base) of the samples themselves
  double lo = 0, hi = 0;
  double confidence = 0;
  int resamples = 0;
  std::string reason;       // when !ok
};
inline constexpr uint64_t kBootstrapSeed = 0x7472616365676174ULL;  // "tracegat"
BootstrapResult BootstrapRatioOfMeans(const std::vector<double>& base, const std::vector<double>& next,
                                      int resamples = 10000, double confidence = 0.95,
                                      uint64_t seed = kBootstrapSeed);
// The same, with the resamples shared by `threads` threads (0: 2 on a machine with two or more
// cores when there is enough work). Every resample draws the same random numbers whatever the
// split, so the result does not depend on `threads`.
BootstrapResult BootstrapRatioOfMeans(const std::vector<double>& base, const std::vector<double>& next,
                                      int resamples, double confidence, uint64_t seed, int threads);

// Percentile bootstrap of a ratio of rates, (sum next_num / sum next_den) / (sum base_num / sum
// base_den): `resamples` times, draw each side's (num, den) pairs with replacement (independently,
// same sizes) and take the ratio of the resampled rates; lo and hi as BootstrapRatioOfMeans.
// The serving gate's ms per token: num the steps' latencies, den their tokens.
// p_not_above: the one-sided bootstrap p-value of "next's rate is at most `bound` times base's",
// (1 + #{resampled ratio <= bound}) / (resamples + 1). Deterministic (SplitMix64 from `seed`).
// ok = false (reason says why) when a side has fewer than 2 pairs, the sides' num and den differ
// in size, a value is not finite, a num is negative or a den not positive, resamples < 1 or
// confidence outside (0, 1).
struct RateBootstrapResult {
  bool ok = false;
  double ratio = 0;  // of the samples themselves
  double lo = 0, hi = 0;
  double confidence = 0;
  int resamples = 0;
  double p_not_above = 1;
  std::string reason;  // when !ok
};
RateBootstrapResult BootstrapRatioOfRates(const std::vector<double>& base_num, const std::vector<double>& base_den,
                                          const std::vector<double>& next_num, const std::vector<double>& next_den,
                                          double bound = 1, int resamples = 2000, double confidence = 0.95,
                                          uint64_t seed = kBootstrapSeed);

}  // namespace tg
