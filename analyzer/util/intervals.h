// Interval arithmetic on [start, end) nanosecond intervals.
#pragma once

#include <utility>
#include <vector>

#include "tracegate/analyzer/model.h"

namespace tg {

using Interval = std::pair<TimeNs, TimeNs>;  // [first, second)

// Length of the union of the intervals (sorts them in place; rows that are mostly in time order
// already, as trace rows are, sort in about one pass). Empty intervals add nothing.
TimeNs UnionLength(std::vector<Interval>& v);

}  // namespace tg
