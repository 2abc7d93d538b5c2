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
  // Equal intervals are interchangeable, so any correct order gives the same union.
  internal::SortNearlySorted(v, [](const Interval& a, const Interval& b) { return a < b; });
  UnionFold fold(emit);
  for (const Interval& i : v) fold.Add(i);
  fold.Finish();
}

}  // namespace

void ForEachUnionOfRuns(const std::vector<Interval>& v, const std::vector<size_t>& bounds,
                        const std::function<void(TimeNs, TimeNs)>& emit) {
  UnionFold fold(emit);
  // One cursor per run; the next interval is the least at any cursor: a scan over few runs, a
  // heap over many.
  std::vector<std::pair<size_t, size_t>> runs;  // (next, end)
  for (size_t k = 0; k + 1 < bounds.size(); ++k)
    if (bounds[k] < bounds[k + 1]) runs.emplace_back(bounds[k], bounds[k + 1]);
  if (runs.size() <= 8) {
    while (!runs.empty()) {
      size_t best = 0;
      for (size_t k = 1; k < runs.size(); ++k)
        if (v[runs[k].first] < v[runs[best].first]) best = k;
      fold.Add(v[runs[best].first]);
      if (++runs[best].first == runs[best].second) runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(best));
    }
  } else {
    // A min-heap of the runs by their next interval.
    auto later = [&](const std::pair<size_t, size_t>& x, const std::pair<size_t, size_t>& y) {
      return v[y.first] < v[x.first];
    };
    std::make_heap(runs.begin(), runs.end(), later);
    while (!runs.empty()) {
      std::pop_heap(runs.begin(), runs.end(), later);
      fold.Add(v[runs.back().first]);
      if (++runs.back().first == runs.back().second) {
        runs.pop_back();
      } else {
        std::push_heap(runs.begin(), runs.end(), later);
      }
    }
  }
  fold.Finish();
}

TimeNs UnionLength(std::vector<Interval>& v) {
  TimeNs total = 0;
  ForEachMerged(v, [&](TimeNs a, TimeNs b) { total += b - a; });
  return total;
}

std::vector<Interval> UnionOf(std::vector<Interval>& v) {
  std::vector<Interval> out;
  ForEachMerged(v, [&](TimeNs a, TimeNs b) { out.emplace_back(a, b); });
  return out;
}

std::vector<Interval> IntersectUnions(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    const TimeNs lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (lo < hi) out.emplace_back(lo, hi);
    if (a[i].second < b[j].second) ++i;
    else ++j;
  }
  return out;
}

std::vector<Interval> SubtractUnions(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
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
