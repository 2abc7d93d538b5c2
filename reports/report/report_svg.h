// The charts of the HTML report as inline SVG fragments (internal to the reports library). Each
// returns markup ready to paste into the page: the chart, or a <p class="na"> saying why there
// is none. Every string from the report is escaped with HtmlEscape.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tg::internal {

// The "timeline" section: one lane per (device, stream), idle time shaded so the gaps show.
std::string TimelineSvg(const nlohmann::json& doc);
// "phases": one stacked bar of the phase shares with a legend.
std::string PhaseBarSvg(const nlohmann::json& doc);
// "top_kernels": horizontal bars of total time.
std::string KernelBarsSvg(const nlohmann::json& doc);
// "latency_samples_ms": a histogram (square-root rule, at most 30 bins) with p50/p95 marks.
std::string LatencyHistogramSvg(const nlohmann::json& doc);

}  // namespace tg::internal
