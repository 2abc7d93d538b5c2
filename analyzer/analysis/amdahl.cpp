// Amdahl's law. Sums of fractions are compared with a small tolerance: 0.1 + 0.2 + 0.7 is
// 1.0000000000000002 in doubles and must still count as "the whole run".
#include "tracegate/analyzer/amdahl.h"

#include <cstdio>

namespace tg {

namespace {

constexpr double kSumTolerance = 1e-9;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

double FractionSum(std::span<const AmdahlPart> parts) {
  double sum = 0;
  for (const AmdahlPart& p : parts) sum += p.fraction;
  return sum;
}

// 1 - sum P: the share of the run no part touches, 0 when the parts cover it (within tolerance).
double UntouchedShare(std::span<const AmdahlPart> parts) {
  double rest = 1 - FractionSum(parts);
  return rest > kSumTolerance ? rest : 0;
}

}  // namespace

Status ValidateAmdahl(std::span<const AmdahlPart> parts) {
  for (const AmdahlPart& p : parts) {
    if (!(p.fraction >= 0 && p.fraction <= 1)) {
      return InvalidInput("fraction " + Num(p.fraction) + " is outside 0..1: give the part's share of the total time");
    }
    // NaN and -inf fail the first test; +inf is allowed (the part disappears).
    if (!(p.speedup > 0)) {
      return InvalidInput("speedup " + Num(p.speedup) + " must be > 0 (2 means the part runs twice as fast)");
    }
  }
  double sum = FractionSum(parts);
  if (sum > 1 + kSumTolerance) {
    return InvalidInput("fractions sum to " + Num(sum) + ", more than 1: the parts must not overlap");
  }
  return Status::Ok();
}

double AmdahlSpeedup(std::span<const AmdahlPart> parts) {
  // New time as a share of the old: the untouched rest plus each part divided by its speedup.
  double time = UntouchedShare(parts);
  for (const AmdahlPart& p : parts) {
    if (!std::isinf(p.speedup)) time += p.fraction / p.speedup;
  }
  if (time <= 0) return kInfiniteSpeedup;
  return 1 / time;
}

double AmdahlBound(std::span<const AmdahlPart> parts) {
  double rest = UntouchedShare(parts);
  return rest > 0 ? 1 / rest : kInfiniteSpeedup;
}

}  // namespace tg
