#include "analyzer/util/intervals.h"

#include <algorithm>

#include "analyzer/util/sort_runs.h"

namespace tg {

TimeNs UnionLength(std::vector<Interval>& v) {
  // Equal intervals are interchangeable, so any correct order gives the same union.
  internal::SortNearlySorted(v, [](const Interval& a, const Interval& b) { return a < b; });
  TimeNs total = 0, cur_a = 0, cur_b = 0;
  bool open = false;
  for (const auto& [a, b] : v) {
    if (b <= a) continue;
    if (open && a <= cur_b) {
      cur_b = std::max(cur_b, b);
      continue;
    }
    if (open) total += cur_b - cur_a;
    cur_a = a;
    cur_b = b;
    open = true;
  }
  return open ? total + (cur_b - cur_a) : total;
}

}  // namespace tg
