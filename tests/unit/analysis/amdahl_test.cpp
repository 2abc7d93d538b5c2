#include "tracegate/analyzer/amdahl.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace tg {
namespace {

std::string Fixed3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

TEST(Amdahl, SeedNumbersPrintAsInTheSeed) {
  // Seed 000: the fused kernel is 141/123 = 1.146x faster.
  // P = 0.10: 1 / (0.90 + 0.10 / 1.146) = 1 / 0.98726 = 1.01290 -> "1.013" (+1.3%).
  // P = 0.15: 1 / (0.85 + 0.15 / 1.146) = 1 / 0.98089 = 1.01948 -> "1.019" (+1.9%).
  EXPECT_EQ(Fixed3(AmdahlSpeedup(0.10, 1.146)), "1.013");
  EXPECT_EQ(Fixed3(AmdahlSpeedup(0.15, 1.146)), "1.019");
  EXPECT_EQ(Fixed3(AmdahlSpeedup(0.10, 141.0 / 123)), "1.013");
  // With the unrounded 141/123 = 1.14634 the second case is 1.01952 -> "1.020": the seed rounded
  // S to 1.146 first, so the seed's figures need S = 1.146.
  EXPECT_EQ(Fixed3(AmdahlSpeedup(0.15, 141.0 / 123)), "1.020");
  EXPECT_NEAR(AmdahlSpeedup(0.10, 1.146), 1 / (0.9 + 0.1 / 1.146), 1e-15);
  // Bound as S -> infinity: 1 / (1 - P).
  EXPECT_DOUBLE_EQ(AmdahlBound(0.10), 1 / 0.9);
  EXPECT_EQ(Fixed3(AmdahlBound(0.10)), "1.111");
  EXPECT_EQ(Fixed3(AmdahlBound(0.15)), "1.176");  // 1 / 0.85 = 1.17647
}

TEST(Amdahl, TrivialCases) {
  EXPECT_EQ(AmdahlSpeedup(0.0, 10), 1);
  EXPECT_EQ(AmdahlSpeedup(0.5, 1), 1);
  EXPECT_EQ(AmdahlSpeedup(1.0, 4), 4);
  EXPECT_EQ(AmdahlSpeedup(0.5, kInfiniteSpeedup), 2);  // 1 / (0.5 + 0)
  EXPECT_EQ(AmdahlBound(0.5), 2);
  EXPECT_EQ(AmdahlBound(0.0), 1);
}

TEST(Amdahl, SeveralParts) {
  // 1 / ((1 - 0.75) + 0.5 / 2 + 0.25 / 4) = 1 / (0.25 + 0.25 + 0.0625) = 1 / 0.5625 = 16 / 9.
  std::vector<AmdahlPart> parts{{0.5, 2}, {0.25, 4}};
  EXPECT_TRUE(ValidateAmdahl(parts).ok());
  EXPECT_DOUBLE_EQ(AmdahlSpeedup(parts), 16.0 / 9);
  EXPECT_EQ(AmdahlBound(parts), 4);  // 1 / 0.25
}

TEST(Amdahl, WholeRunDisappearingIsInfinite) {
  std::vector<AmdahlPart> all{{0.6, kInfiniteSpeedup}, {0.4, kInfiniteSpeedup}};
  EXPECT_TRUE(std::isinf(AmdahlSpeedup(all)));
  EXPECT_TRUE(std::isinf(AmdahlBound(all)));
  EXPECT_TRUE(std::isinf(AmdahlBound(1.0)));
  // 0.1 + 0.2 + 0.7 is 1.0000000000000002 in doubles: still the whole run, and valid.
  std::vector<AmdahlPart> rounded{{0.1, kInfiniteSpeedup}, {0.2, kInfiniteSpeedup}, {0.7, kInfiniteSpeedup}};
  EXPECT_TRUE(ValidateAmdahl(rounded).ok());
  EXPECT_TRUE(std::isinf(AmdahlSpeedup(rounded)));
  // One part left finite: 1 / (0.7 / 7) = 10.
  std::vector<AmdahlPart> mixed{{0.1, kInfiniteSpeedup}, {0.2, kInfiniteSpeedup}, {0.7, 7}};
  EXPECT_DOUBLE_EQ(AmdahlSpeedup(mixed), 10);
}

void ExpectInvalid(std::vector<AmdahlPart> parts, const std::string& message_start) {
  Status s = ValidateAmdahl(parts);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(s.message().rfind(message_start, 0), 0u) << s.message();
}

TEST(Amdahl, ValidateNamesTheBadValue) {
  ExpectInvalid({{1.2, 2}}, "fraction 1.2 is outside 0..1");
  ExpectInvalid({{-0.1, 2}}, "fraction -0.1 is outside 0..1");
  ExpectInvalid({{std::nan(""), 2}}, "fraction nan is outside 0..1");
  ExpectInvalid({{0.5, 0}}, "speedup 0 must be > 0");
  ExpectInvalid({{0.5, -2}}, "speedup -2 must be > 0");
  ExpectInvalid({{0.5, -kInfiniteSpeedup}}, "speedup -inf must be > 0");
  ExpectInvalid({{0.6, 2}, {0.7, 3}}, "fractions sum to 1.3, more than 1");
  EXPECT_TRUE(ValidateAmdahl(std::vector<AmdahlPart>{{1.0, kInfiniteSpeedup}}).ok());
  EXPECT_TRUE(ValidateAmdahl(std::vector<AmdahlPart>{}).ok());
}

}  // namespace
}  // namespace tg
