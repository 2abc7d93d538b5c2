// The charts of the comparison page (compare --html, gate --html) as inline SVG fragments.
// Internal to the reports library. Each returns the chart, or a <p class="na"> saying why there is
// none; nothing is drawn that the reports do not hold. Every axis has a title naming its unit
// (class "axis-title"), and one unit serves all of an axis's ticks.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tracegate/reports/compare.h"

namespace tg::internal {

// One run's part of a chart: its label and its report document.
struct PageSide {
  std::string label;          // "base" / "new"
  const nlohmann::json* doc;  // the report (any JSON)
};

// Both runs' latency_samples_ms on one ms axis: each sample as a tick in its run's row, the
// means, the gate's limit, and the bootstrap interval of mean(new) / mean(base) drawn as the
// range of the new mean it implies (base mean x [lo, hi]); with 10 samples or more on each side,
// also both histograms on shared bins (share of the run's iterations).
std::string LatencyOverlaySvg(const Comparison& c, const PageSide& base, const PageSide& next);

// The kernels' GPU time per iteration from base to new: the base total, one step per kernel
// family (variants netted: the family's delta is the sum of its kernels'), largest move first,
// the families left out and those whose change is noise as one "other" step, and the new total.
std::string FamilyWaterfallSvg(const Comparison& c);

// The median iteration of each run (the reports' "timeline" sections) on one time axis: a lane
// per stream, work coloured by kind, each iteration's end marked. When a side has no timeline:
// the reason, and nothing drawn for it.
std::string MedianIterationsSvg(const PageSide& base, const PageSide& next);

// Why a side has no drawable timeline ("" when it has one).
std::string TimelineMissing(const nlohmann::json& doc);

// ms with the decimals a ms figure needs at its size: "16347.7", "11.568", "0.0213".
std::string Ms(double ms);

}  // namespace tg::internal
