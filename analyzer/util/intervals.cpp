#include "analyzer/util/intervals.h"

#include <algorithm>

#include "analyzer/util/sort_runs.h"

namespace tg::internal {

namespace {

// Folds intervals given in start order into the maximal intervals of their union, calling
// emit(a, b) once for each, in order. Empty intervals add nothing.
template <typename Emit>
class UnionFold {
 public:
  explicit UnionFold(const Emit& emit) : emit_(emit) {}
  void Add(const Interval& i) {
    const auto [a, b] = i;
    if (b <= a) return;
    if (open_ && a <= cur_b_) {
      cur_b_ = std::max(cur_b_, b);
      return;
    }
    if (open_) emit_(cur_a_, cur_b_);
    cur_a_ = a;
    cur_b_ = b;
    open_ = true;
  }
  void Finish() {
    if (open_) emit_(cur_a_, cur_b_);
  }

 private:
  const Emit& emit_;
  TimeNs cur_a_ = 0, cur_b_ = 0;
  bool open_ = false;
};

// Calls emit(a, b) once per maximal interval of the union, in order.
template <typename Emit>
void ForEachMerged(std::vector<Interval>& v, Emit emit) {
  // Equal intervals are interchangeable, so any correct order gives the same union. Lists are
  // often a few sorted ones one after the other (one per stream, device or table): merged.
  auto less = [](const Interval& a, const Interval& b) { return a < b; };
  if (!internal::TryMergeSortedRuns(v.data(), v.data() + v.size(), less, 32)) internal::SortNearlySorted(v, less);
  UnionFold fold(emit);
  for (const Interval& i : v) fold.Add(i);
  fold.Finish();
}

}  // namespace

TimeNs UnionLength(std::vector<Interval>& v) {
  TimeNs total = 0;
  ForEachMerged(v, [&](TimeNs a, TimeNs b) { total += b - a; });
  return total;
}

std::vector<Interval> UnionOf(std::vector<Interval>& v) {
  // Room for the most pieces there can be, taken at once: growing a large list by doubling maps
  // (and faults in) about twice its pages and copies each piece again; pages never written cost no
  // memory.
  std::vector<Interval> out;
  out.reserve(v.size());
  ForEachMerged(v, [&](TimeNs a, TimeNs b) { out.emplace_back(a, b); });
  return out;
}

namespace {

// The first position from `i` whose piece ends after `t`. The ends of a union's pieces never
// decrease: steps doubling from `i`, then a binary search inside the last step.
size_t FirstEndingAfter(const std::vector<Interval>& v, size_t i, TimeNs t) {
  if (i >= v.size() || v[i].second > t) return i;
  size_t lo = i + 1, hi = i + 1;  // every piece before lo ends by t
  for (size_t step = 1; hi < v.size() && v[hi].second <= t; step *= 2) {
    lo = hi + 1;
    hi = std::min(v.size(), lo + step);
  }
  return static_cast<size_t>(std::partition_point(v.begin() + static_cast<std::ptrdiff_t>(lo),
                                                  v.begin() + static_cast<std::ptrdiff_t>(hi),
                                                  [t](const Interval& x) { return x.second <= t; }) -
                             v.begin());
}

}  // namespace

std::vector<Interval> IntersectUnions(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  out.reserve(a.size() + b.size());  // each piece out moves past a piece of a or b (UnionOf says why)
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    // The pieces of either list that end before the other's piece starts meet nothing: passed
    // over at once (one list is often far shorter than the other), as the walk below would pass
    // them one at a time.
    if (a[i].second <= b[j].first && a[i].second < b[j].second) {
      i = FirstEndingAfter(a, i, std::min(b[j].first, b[j].second - 1));
      continue;
    }
    if (b[j].second <= a[i].first) {
      j = FirstEndingAfter(b, j, a[i].first);
      continue;
    }
    const TimeNs lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (lo < hi) out.emplace_back(lo, hi);
    if (a[i].second < b[j].second) ++i;
    else ++j;
  }
  return out;
}

std::vector<Interval> SubtractUnions(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  // A piece out ends a piece of a, or ends where a piece of b starts (once for each of b's).
  std::vector<Interval> out;
  out.reserve(a.size() + b.size());
  size_t j = 0;
  for (auto [lo, hi] : a) {
    while (j < b.size() && b[j].second <= lo) ++j;
    // b[j..] ends after lo: cut each piece of b that starts before hi out of [lo, hi).
    for (size_t k = j; k < b.size() && b[k].first < hi; ++k) {
      if (b[k].first > lo) out.emplace_back(lo, b[k].first);
      lo = std::max(lo, b[k].second);
    }
    if (lo < hi) out.emplace_back(lo, hi);
  }
  return out;
}

TimeNs LengthOf(const std::vector<Interval>& u) {
  TimeNs total = 0;
  for (const auto& [a, b] : u) total += b - a;
  return total;
}

}  // namespace tg::internal
