// The report's "timeline" section: the GPU work of one representative iteration, per stream.
// Internal to the reports library (AnalysisToJson calls it); the keys are listed in
// tracegate/analysis_report.h.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/model.h"

namespace tg::internal {

// At most this many items are listed; the longest are kept (a timeline of thousands of tiny
// kernels is unreadable, and the long ones are what a reader looks for).
inline constexpr size_t kTimelineItemCap = 2000;
// The longest device-idle intervals listed, the host items (the longest) and host lanes (the
// threads with the most items) listed (the overview's bins: kOverviewBins, summary.h).
inline constexpr size_t kTimelineGapCap = 300;
inline constexpr size_t kTimelineHostCap = 800;  // calls, and again ranges
inline constexpr size_t kTimelineHostLanes = 6;

// The timeline of the kept iteration with the median latency (nearest rank, so its latency is
// p50_latency_ms; ties: the earlier iteration).
nlohmann::json TimelineJson(const Trace& trace, const Analysis& analysis, size_t item_cap = kTimelineItemCap);

}  // namespace tg::internal
