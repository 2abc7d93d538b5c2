// Inline SVG charts for the HTML pages (internal to the reports library). Each chart function
// returns markup ready to paste into a page: the chart, or a <p class="na"> saying why there is
// none. Every string from a report is escaped with HtmlEscape. The primitives below are shared by
// every HTML page (analyze, job, compare, history): keep their signatures stable.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tg::internal {

// ---- Primitives. Coordinates are viewBox units; every chart is kChartWidth wide and scales with
// the page (width="100%").
inline constexpr double kChartWidth = 1200;
// The left column of lane and bar labels, and the right margin kept for the last tick label.
inline constexpr double kChartLabelWidth = 170;
inline constexpr double kChartRightMargin = 30;

// <svg class="chart [extra_class]" viewBox="0 0 kChartWidth height" ...> with an aria-label.
std::string SvgOpen(double height, const std::string& aria_label, const std::string& extra_class = "");
// <rect class=...> with an optional <title> (the tooltip). Negative sizes are drawn as 0.
std::string SvgRect(double x, double y, double w, double h, const std::string& cls, const std::string& title = "");
std::string SvgText(double x, double y, const std::string& cls, const std::string& text);
std::string SvgLine(double x1, double y1, double x2, double y2, const std::string& cls);
// <p class="na">n/a: why</p>.
std::string SvgNa(const std::string& why);

// The one unit of a time axis spanning `span_ns`: ns, us, ms or s, and how many ns it is.
struct TimeUnit {
  const char* name;
  double ns;
};
TimeUnit PickTimeUnit(double span_ns);

// Round tick values (1, 2 or 5 x 10^k apart) covering [lo, hi], at most about `ticks`+1 of them.
std::vector<double> NiceTicks(double lo, double hi, int ticks);
// A tick value with as many decimals as its step needs ("1.5", "1230", "0.05").
std::string TickText(double value, double step);

// Axes. Tick labels are bare numbers; `title` names the quantity and its one unit
// ("time into the trace (ms)"), drawn as <text class="axis-title">. The axis is a <g class="axis">.
// A horizontal axis for values lo..hi drawn from x0 to x0 + width at height y.
std::string AxisX(double lo, double hi, double y, double x0, double width, const std::string& title);
// A vertical axis for values lo (at y0 + height) .. hi (at y0) at x.
std::string AxisY(double lo, double hi, double x, double y0, double height, const std::string& title);

// ---- Charts of the analyze page.
// "phases": one stacked bar of the phase shares with a legend (phases with a share only).
std::string PhaseBarSvg(const nlohmann::json& doc);
// "top_kernels": horizontal bars of total time, each kernel named by its label
// (ReportKernelLabels: kernels that share a short name told apart).
std::string KernelBarsSvg(const nlohmann::json& doc);

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
