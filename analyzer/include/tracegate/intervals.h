// Interval arithmetic on [start, end) nanosecond intervals.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "tracegate/model.h"

namespace tg {

using Interval = std::pair<TimeNs, TimeNs>;  // [first, second)

// Length of the union of the intervals (sorts them in place). Empty intervals add nothing.
inline TimeNs UnionLength(std::vector<Interval>& v) {
  std::sort(v.begin(), v.end());
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
