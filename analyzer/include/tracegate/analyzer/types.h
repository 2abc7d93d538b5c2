// Time and intervals, the units every stage shares: nanosecond times, [start, end) intervals and
// the id that means "not known".
// Nothing here needs the trace model (model.h includes this header), so a stage that only does
// arithmetic on times (analyzer/util/intervals.h, the cross-rank analysis) includes this alone.
#pragma once

#include <cstdint>
#include <utility>

namespace tg {

// Nanoseconds on one clock per trace.
using TimeNs = int64_t;

// Nanoseconds as milliseconds, for reports and messages.
constexpr double NsToMs(TimeNs ns) { return static_cast<double>(ns) / 1e6; }

// A [first, second) interval of nanoseconds.
using Interval = std::pair<TimeNs, TimeNs>;

// Id meaning "not known" for correlation ids, streams, devices, pids and tids (and a collective's
// sequence number or step).
inline constexpr int64_t kUnknownId = -1;

}  // namespace tg
