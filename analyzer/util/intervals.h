// Interval arithmetic on [start, end) nanosecond intervals.
#pragma once

#include <utility>
#include <vector>

#include "tracegate/analyzer/types.h"

namespace tg::internal {

// Length of the union of the intervals (sorts them in place; rows that are mostly in time order
// already, as trace rows are, sort in about one pass). Empty intervals add nothing.
TimeNs UnionLength(std::vector<Interval>& v);

// The union as sorted, disjoint, non-empty intervals (sorts `v` in place the same way).
std::vector<Interval> UnionOf(std::vector<Interval>& v);
// Set operations and length on such unions (sorted, disjoint): one linear merge each.
std::vector<Interval> IntersectUnions(const std::vector<Interval>& a, const std::vector<Interval>& b);
std::vector<Interval> SubtractUnions(const std::vector<Interval>& a, const std::vector<Interval>& b);
TimeNs LengthOf(const std::vector<Interval>& u);

}  // namespace tg::internal
