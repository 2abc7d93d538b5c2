// IntersectUnions passes over the pieces of one union that end before the other's next piece in
// one step (steps doubling): its pieces are those of the plain linear walk, against a nanosecond
// count, on unions of very different lengths, with touching and empty pieces.
#include "analyzer/util/intervals.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace tg::internal {
namespace {

// The walk IntersectUnions makes without passing over pieces.
std::vector<Interval> LinearIntersect(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    const TimeNs lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (lo < hi) out.emplace_back(lo, hi);
    if (a[i].second < b[j].second) ++i;
    else ++j;
  }
  return out;
}

// Sorted pieces that never overlap: gaps of 0 (touching) or more, lengths of 0 (empty) or more.
std::vector<Interval> RandomUnion(std::mt19937& rng, size_t n, TimeNs max_gap, TimeNs max_len) {
  std::vector<Interval> v;
  TimeNs at = static_cast<TimeNs>(rng() % 50);
  for (size_t k = 0; k < n; ++k) {
    at += static_cast<TimeNs>(rng() % (max_gap + 1));
    const TimeNs len = static_cast<TimeNs>(rng() % (max_len + 1));
    v.emplace_back(at, at + len);
    at += len;
  }
  return v;
}

TEST(Intervals, IntersectUnionsPassesOverWhatMeetsNothing) {
  std::mt19937 rng(5);
  for (int round = 0; round < 400; ++round) {
    const size_t na = 1 + rng() % (round % 2 ? 8 : 300), nb = 1 + rng() % (round % 3 ? 2000 : 20);
    const std::vector<Interval> a = RandomUnion(rng, na, round % 5 ? 400 : 3, 60);
    const std::vector<Interval> b = RandomUnion(rng, nb, 6, round % 7 ? 5 : 0);
    const std::vector<Interval> got = IntersectUnions(a, b);
    EXPECT_EQ(got, LinearIntersect(a, b)) << round;
    EXPECT_EQ(IntersectUnions(b, a), LinearIntersect(b, a)) << round;
    // And the instants: each one in both unions, once.
    const TimeNs end = std::max(a.back().second, b.back().second);
    std::vector<int> count(static_cast<size_t>(end) + 1, 0);
    for (const auto& v : {a, b})
      for (const auto& [s, e] : v)
        for (TimeNs x = s; x < e; ++x) count[static_cast<size_t>(x)]++;
    TimeNs both = 0;
    for (int c : count) both += c == 2;
    TimeNs length = 0;
    for (const auto& [s, e] : got) {
      EXPECT_LT(s, e) << round;
      length += e - s;
      for (TimeNs x = s; x < e; ++x) EXPECT_EQ(count[static_cast<size_t>(x)], 2) << round << " at " << x;
    }
    EXPECT_EQ(length, both) << round;
  }
}

}  // namespace
}  // namespace tg::internal
