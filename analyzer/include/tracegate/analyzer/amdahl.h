// Amdahl's law (docs/RULES.md, "The pattern matrix" and "`tracegate predict`"): speeding up a
// share P of the run by S gives the whole run 1 / ((1 - P) + P / S); the upper bound
// (S -> infinity) is 1 / (1 - P). Several parts: 1 / ((1 - sum P_i) + sum P_i / S_i). S may be
// +infinity (the part disappears).
#pragma once

#include <cmath>
#include <limits>
#include <span>
#include <string>

#include "tracegate/analyzer/status.h"

namespace tg {

struct AmdahlPart {
  double fraction = 0;  // P, 0..1: share of the original total time
  double speedup = 1;   // S > 0; +infinity means the part's time goes to zero
};

inline constexpr double kInfiniteSpeedup = std::numeric_limits<double>::infinity();

// Checks 0 <= P <= 1, S > 0 and finite-or-+inf, and sum P <= 1; the message names the bad value.
Status ValidateAmdahl(std::span<const AmdahlPart> parts);

// Overall speedup of the whole run. Parts must be valid (ValidateAmdahl). Returns +infinity when
// every part of the run disappears (sum P == 1 and every S infinite).
double AmdahlSpeedup(std::span<const AmdahlPart> parts);
inline double AmdahlSpeedup(double fraction, double speedup) {
  AmdahlPart p{fraction, speedup};
  return AmdahlSpeedup(std::span<const AmdahlPart>(&p, 1));
}

// 1 / (1 - sum P): the bound as every S -> infinity (+infinity when sum P == 1).
double AmdahlBound(std::span<const AmdahlPart> parts);
inline double AmdahlBound(double fraction) {
  AmdahlPart p{fraction, kInfiniteSpeedup};
  return AmdahlBound(std::span<const AmdahlPart>(&p, 1));
}

}  // namespace tg
