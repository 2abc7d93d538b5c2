// The charts of the HTML report as inline SVG fragments (internal to the reports library). Each
// returns markup ready to paste into the page: the chart, or a <p class="na"> saying why there
// is none. Every string from the report is escaped with HtmlEscape.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tg::internal {

// The "timeline" section: one lane per (device, stream), idle time shaded so the gaps show.
std::string TimelineSvg(const nlohmann::json& doc);
// "phases": one stacked bar of the phase shares with a legend.
std::string PhaseBarSvg(const nlohmann::json& doc);
// "top_kernels": horizontal bars of total time.
std::string KernelBarsSvg(const nlohmann::json& doc);
// "latency_samples_ms": a histogram (square-root rule, at most 30 bins) with p50/p95 marks.
std::string LatencyHistogramSvg(const nlohmann::json& doc);

// Horizontal stacked bars on one ms axis, one bar per row (the job report's straggler chart).
// parts[i] is drawn with part_classes[i] (a class of the page's style: kernel, collective, gap,
// ...) and named part_names[i] in the legend and each segment's tooltip; a marked bar gets a
// dashed outline. `note` follows the bar; `axis` names the axis with its unit.
struct StackedBar {
  std::string label;
  std::vector<double> parts;  // ms, >= 0
  std::string note;
  bool marked = false;
};
std::string StackedBarsSvg(const std::vector<StackedBar>& bars, const std::vector<std::string>& part_classes,
                           const std::vector<std::string>& part_names, const std::string& axis,
                           const std::string& aria_label);

}  // namespace tg::internal
