// Charts with axes for the HTML pages, each axis titled with its one unit (report_svg.h's AxisX
// and AxisY). Generic pieces first (other pages reuse them: keep the signatures stable), then the
// analyze page's charts built from them.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tg::internal {

// Vertical stacked columns, one per entry, on a value axis from 0: parts[i] drawn with
// part_classes[i], named part_names[i] in the legend (parts that are 0 in every column get no
// key). A marked column gets a dashed outline. At most ~300 columns read well: group before.
struct Column {
  std::string label;          // the x label (shown for a few columns only)
  std::vector<double> parts;  // >= 0, in the y axis's unit
  std::string title;          // the tooltip
  bool marked = false;
};
std::string StackedColumnsSvg(const std::vector<Column>& columns, const std::vector<std::string>& part_classes,
                              const std::vector<std::string>& part_names, const std::string& y_title,
                              const std::string& x_title, const std::string& aria_label);

// A histogram of `samples` (square-root rule, at most 30 bins) with vertical marks at `marks`
// (label, value), whose labels are stacked so they never overprint. `x_title` names the unit.
struct Mark {
  std::string label;
  double value = 0;
};
std::string HistogramSvg(const std::vector<double>& samples, const std::vector<Mark>& marks, const std::string& x_title,
                         const std::string& aria_label);

// Lines over equally spaced points (x_labels, one per point): each series a polyline with class
// `cls` (gaps where a value is missing), and a dot per point of the first series with
// point_classes[i] and point_titles[i] (the tooltip).
struct Series {
  std::string name, cls;
  std::vector<std::optional<double>> values;
};
std::string TrendSvg(const std::vector<std::string>& x_labels, const std::vector<Series>& series,
                     const std::vector<std::string>& point_classes, const std::vector<std::string>& point_titles,
                     const std::string& y_title, const std::string& x_title, const std::string& aria_label);

// The analyze page: the phases of each iteration of "iteration_table" as stacked columns (ms),
// the timeline's iteration marked; consecutive iterations averaged in groups beyond 300.
std::string StepTimeSvg(const nlohmann::json& doc);
// "latency_samples_ms" with p50/p95/p99 marks; a note instead below kHistogramMinSamples.
inline constexpr size_t kHistogramMinSamples = 10;
std::string LatencyHistogramHtml(const nlohmann::json& doc);

}  // namespace tg::internal
