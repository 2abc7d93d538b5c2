#include "reports/view/charts_html.h"
#include "reports/document/report_keys.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "reports/view/report_svg.h"
#include "reports/view/report_view.h"
#include "tracegate/reports/report_html.h"

namespace tg::internal {

namespace {

constexpr double kAxisLeft = 72;  // room for the y ticks and the rotated y title
constexpr double kRight = kChartWidth - kChartRightMargin;
// A character's width in viewBox units at the larger font narrow windows get (page_assets.cpp):
// legends and labels are spaced for it, so they do not run into each other at any width.
constexpr double kCharWidth = 9.5;

std::string Esc(std::string_view s) { return HtmlEscape(s); }

// A legend row of coloured keys at the top of a chart; returns its markup.
std::string Legend(const std::vector<std::pair<std::string, std::string>>& keys, double y) {
  std::string out;
  double x = kAxisLeft;
  for (const auto& [cls, name] : keys) {
    out += SvgRect(x, y, 12, 12, cls);
    out += SvgText(x + 16, y + 11, "legend", name);
    x += 16 + kCharWidth * static_cast<double>(name.size()) + 22;
  }
  return out;
}

// Up to `most` evenly spread indices of [0, n), always the first and the last.
std::vector<size_t> Spread(size_t n, size_t most) {
  std::vector<size_t> out;
  if (n == 0) return out;
  const size_t step = std::max<size_t>(1, (n + most - 1) / most);
  for (size_t i = 0; i < n; i += step) out.push_back(i);
  if (out.back() != n - 1) {
    if (n - 1 - out.back() < step / 2 && out.size() > 1) out.back() = n - 1;
    else out.push_back(n - 1);
  }
  return out;
}

constexpr std::array<const char*, 6> kPhases{"pre", "h2d", "infer", "d2h", "post", "idle"};

}  // namespace

std::string StackedColumnsSvg(const std::vector<Column>& columns, const std::vector<std::string>& part_classes,
                              const std::vector<std::string>& part_names, const std::string& y_title,
                              const std::string& x_title, const std::string& aria_label) {
  double most = 0;
  std::vector<double> part_total(part_classes.size(), 0);
  for (const Column& c : columns) {
    double sum = 0;
    for (size_t i = 0; i < c.parts.size() && i < part_total.size(); ++i) {
      sum += std::max(c.parts[i], 0.0);
      part_total[i] += std::max(c.parts[i], 0.0);
    }
    most = std::max(most, sum);
  }
  if (columns.empty() || most <= 0) return SvgNa("no column has a height to show");
  const double top = 28, plot_h = 190, plot_w = kRight - kAxisLeft;
  std::string out = SvgOpen(top + plot_h + 44, aria_label, "fit");
  std::vector<std::pair<std::string, std::string>> keys;
  for (size_t i = 0; i < part_classes.size() && i < part_names.size(); ++i)
    if (part_total[i] > 0) keys.emplace_back(part_classes[i], part_names[i]);
  out += Legend(keys, 4);
  const double hi = most * 1.05;
  const double slot = plot_w / static_cast<double>(columns.size());
  const double bar = slot > 4 ? slot * 0.8 : slot;
  for (size_t c = 0; c < columns.size(); ++c) {
    const Column& col = columns[c];
    const double x = kAxisLeft + slot * static_cast<double>(c) + (slot - bar) / 2;
    double y = top + plot_h;
    out += "<g><title>" + Esc(col.title) + "</title>\n";
    for (size_t i = 0; i < col.parts.size() && i < part_classes.size(); ++i) {
      const double h = std::max(col.parts[i], 0.0) / hi * plot_h;
      if (h <= 0) continue;
      y -= h;
      out += SvgRect(x, y, bar, h, part_classes[i]);
    }
    out += "</g>\n";
    if (col.marked)
      out += StrFormat("<rect class=\"marker\" fill=\"none\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n",
                       x - 1.5, y - 1.5, bar + 3, top + plot_h - y + 3);
  }
  out += AxisY(0, hi, kAxisLeft, top, plot_h, y_title);
  // The x axis: a label under a few columns, and the axis title.
  out += "<g class=\"axis axis-x\">\n" + SvgLine(kAxisLeft, top + plot_h, kRight, top + plot_h, "axis-line");
  for (size_t c : Spread(columns.size(), 12)) {
    const double x = kAxisLeft + slot * (static_cast<double>(c) + 0.5);
    out += SvgLine(x, top + plot_h, x, top + plot_h + 4, "tick");
    out += SvgText(x, top + plot_h + 16, "tick-label", columns[c].label);
  }
  out += SvgText(kAxisLeft + plot_w / 2, top + plot_h + 34, "axis-title", x_title) + "</g>\n";
  return out + "</svg>\n";
}

std::string HistogramSvg(const std::vector<double>& samples, const std::vector<Mark>& marks, const std::string& x_title,
                         const std::string& aria_label) {
  if (samples.empty()) return SvgNa("no samples");
  auto [mn, mx] = std::minmax_element(samples.begin(), samples.end());
  double lo = *mn, hi = *mx;
  size_t bins = hi > lo ? std::clamp<size_t>(static_cast<size_t>(std::ceil(std::sqrt(samples.size()))), 1, 30) : 1;
  if (hi <= lo) {  // every sample equal: one bar around the value
    const double pad = std::max(std::fabs(lo) * 0.01, 1e-6);
    lo -= pad, hi += pad;
  }
  std::vector<size_t> counts(bins, 0);
  for (double s : samples) {
    const double f = (s - lo) / (hi - lo) * static_cast<double>(bins);  // NaN only for a report no tool wrote
    counts[f >= 0 && f < static_cast<double>(bins) ? static_cast<size_t>(f) : f >= 0 ? bins - 1 : 0]++;
  }
  const size_t top_count = *std::max_element(counts.begin(), counts.end());
  // Mark labels in rows: a label goes to the first row where it does not touch the one before.
  std::vector<Mark> sorted = marks;
  std::sort(sorted.begin(), sorted.end(), [](const Mark& a, const Mark& b) { return a.value < b.value; });
  const double plot_w = kRight - kAxisLeft;
  auto x_of = [&](double v) { return kAxisLeft + (v - lo) / (hi - lo) * plot_w; };
  std::vector<double> row_end;                 // per row: where its last label ends
  std::vector<std::pair<size_t, bool>> place;  // (row, label right of the line)
  for (const Mark& m : sorted) {
    const double x = x_of(m.value), w = kCharWidth * static_cast<double>(m.label.size()) + 6;
    const bool right = x + w <= kRight;
    const double from = right ? x : x - w;
    size_t row = 0;
    while (row < row_end.size() && row_end[row] > from) ++row;
    if (row == row_end.size()) row_end.push_back(0);
    row_end[row] = from + w;
    place.emplace_back(row, right);
  }
  const double label_h = 15, top = 6 + label_h * static_cast<double>(row_end.size()), plot_h = 160;
  std::string out = SvgOpen(top + plot_h + 44, aria_label, "fit");
  const double bin_w = plot_w / static_cast<double>(bins);
  for (size_t b = 0; b < bins; ++b) {
    const double h = static_cast<double>(counts[b]) / static_cast<double>(top_count) * plot_h;
    const double from = lo + (hi - lo) * static_cast<double>(b) / static_cast<double>(bins);
    const double to = lo + (hi - lo) * static_cast<double>(b + 1) / static_cast<double>(bins);
    out += SvgRect(kAxisLeft + static_cast<double>(b) * bin_w + 1, top + plot_h - h, std::max(bin_w - 2, 0.6), h,
                   "hist", StrFormat("%zu in [%.3f, %.3f]", counts[b], from, to));
  }
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i].value < lo || sorted[i].value > hi) continue;
    const double x = x_of(sorted[i].value), ly = 4 + label_h * static_cast<double>(place[i].first) + 11;
    out += SvgLine(x, ly - 10, x, top + plot_h, "marker");
    out += SvgText(place[i].second ? x + 3 : x - 3, ly, place[i].second ? "legend" : "legend end", sorted[i].label);
  }
  out += AxisY(0, static_cast<double>(top_count), kAxisLeft, top, plot_h, "iterations (count)");
  out += AxisX(lo, hi, top + plot_h, kAxisLeft, plot_w, x_title);
  return out + "</svg>\n";
}

std::string TrendSvg(const std::vector<std::string>& x_labels, const std::vector<Series>& series,
                     const std::vector<std::string>& point_classes, const std::vector<std::string>& point_titles,
                     const std::string& y_title, const std::string& x_title, const std::string& aria_label) {
  double lo = 0, hi = 0;
  bool any = false;
  for (const Series& s : series)
    for (const auto& v : s.values)
      if (v) lo = any ? std::min(lo, *v) : *v, hi = any ? std::max(hi, *v) : *v, any = true;
  if (!any || x_labels.empty()) return SvgNa("nothing to draw");
  const double pad = hi > lo ? (hi - lo) * 0.1 : std::max(std::fabs(hi) * 0.05, 1e-3);
  lo = std::max(0.0, lo - pad), hi += pad;
  const double top = 28, plot_h = 200, plot_w = kRight - kAxisLeft - 20;
  const size_t n = x_labels.size();
  auto x_of = [&](size_t i) {
    return kAxisLeft + 10 + (n == 1 ? plot_w / 2 : plot_w * static_cast<double>(i) / static_cast<double>(n - 1));
  };
  auto y_of = [&](double v) { return top + plot_h - (v - lo) / (hi - lo) * plot_h; };
  std::string out = SvgOpen(top + plot_h + 44, aria_label, "fit");
  std::vector<std::pair<std::string, std::string>> keys;
  for (const Series& s : series) keys.emplace_back(s.cls, s.name);
  out += Legend(keys, 4);
  for (const Series& s : series) {
    std::string points;
    auto flush = [&] {
      if (!points.empty()) out += "<polyline class=\"" + Esc(s.cls) + "\" points=\"" + points + "\"/>\n";
      points.clear();
    };
    for (size_t i = 0; i < s.values.size() && i < n; ++i) {
      if (!s.values[i]) {
        flush();
        continue;
      }
      points += StrFormat("%s%.2f,%.2f", points.empty() ? "" : " ", x_of(i), y_of(*s.values[i]));
    }
    flush();
  }
  if (!series.empty())
    for (size_t i = 0; i < series[0].values.size() && i < n; ++i) {
      if (!series[0].values[i]) continue;
      out += StrFormat("<circle class=\"%s\" cx=\"%.2f\" cy=\"%.2f\" r=\"4\">",
                       Esc(i < point_classes.size() ? point_classes[i] : "pt-saved").c_str(), x_of(i),
                       y_of(*series[0].values[i])) +
             "<title>" + Esc(i < point_titles.size() ? point_titles[i] : x_labels[i]) + "</title></circle>\n";
    }
  out += AxisY(lo, hi, kAxisLeft, top, plot_h, y_title);
  out += "<g class=\"axis axis-x\">\n" + SvgLine(kAxisLeft, top + plot_h, kRight, top + plot_h, "axis-line");
  for (size_t i : Spread(n, 10)) {
    out += SvgLine(x_of(i), top + plot_h, x_of(i), top + plot_h + 4, "tick");
    out += SvgText(x_of(i), top + plot_h + 16, "tick-label", x_labels[i]);
  }
  out += SvgText(kAxisLeft + plot_w / 2, top + plot_h + 34, "axis-title", x_title) + "</g>\n";
  return out + "</svg>\n";
}

std::string StepTimeSvg(const json& doc) {
  const json& rows = Array(doc, "iteration_table");
  if (rows.size() < 2)
    return "<p class=\"note\">" +
           Esc(rows.empty() ? std::string("This report has no iteration rows.")
                            : std::string("One iteration: its phases are in the breakdown below.")) +
           "</p>\n";
  const double drawn = Number(Object(doc, "timeline"), "iteration").value_or(-1);
  constexpr size_t kMostColumns = 300;
  const size_t group = (rows.size() + kMostColumns - 1) / kMostColumns;
  std::vector<Column> columns;
  for (size_t first = 0; first < rows.size(); first += group) {
    const size_t last = std::min(rows.size(), first + group);
    Column c;
    c.parts.assign(kPhases.size(), 0);
    for (size_t r = first; r < last; ++r) {
      const json& phases = Object(rows[r], keys::kRowPhasesMs.name);
      for (size_t p = 0; p < kPhases.size(); ++p)
        c.parts[p] += Number(phases, kPhases[p]).value_or(0) / static_cast<double>(last - first);
      c.marked = c.marked || Number(rows[r], keys::kRowIndex.name).value_or(-2) == drawn;
    }
    const auto index = [&](size_t r) {
      return StrFormat("%.0f", Number(rows[r], keys::kRowIndex.name).value_or(static_cast<double>(r)));
    };
    c.label = index(first);
    double sum = 0;
    for (double v : c.parts) sum += v;
    c.title = (group == 1 ? "iteration " + c.label +
                                (Text(rows[first], keys::kRowName.name).empty()
                                     ? ""
                                     : " (" + Text(rows[first], keys::kRowName.name) + ")")
                          : "iterations " + c.label + "-" + index(last - 1) + " (mean)") +
              ": " + FormatValue(sum, Unit::kMs);
    for (size_t p = 0; p < kPhases.size(); ++p)
      if (c.parts[p] > 0) c.title += std::string(", ") + kPhases[p] + " " + FormatValue(c.parts[p], Unit::kMs);
    if (c.marked) c.title += " (drawn on the timeline)";
    columns.push_back(std::move(c));
  }
  std::string out;
  if (group > 1)
    out += "<p class=\"note\">" +
           Esc(StrFormat("%zu iterations: each column is the mean of %zu consecutive ones.", rows.size(), group)) +
           "</p>\n";
  return out + StackedColumnsSvg(columns,
                                 {"phase-pre", "phase-h2d", "phase-infer", "phase-d2h", "phase-post", "phase-idle"},
                                 {"pre", "h2d", "infer", "d2h", "post", "idle"}, "step time (ms)",
                                 group > 1 ? "iteration (first of each group)" : "iteration (index)",
                                 "Step time per iteration by phase");
}

std::string LatencyHistogramHtml(const json& doc) {
  std::vector<double> samples;
  for (const json& v : Array(doc, keys::kLatencySamplesMs.name))
    if (v.is_number()) samples.push_back(v.get<double>());
  if (samples.size() < kHistogramMinSamples) {
    if (samples.empty())
      return SvgNa(Find(doc, keys::kLatencySamplesMs.name) ? "no iterations" : "this report has no latency samples");
    std::string list;
    for (double s : samples) list += (list.empty() ? "" : ", ") + FormatValue(s, Unit::kMs);
    return "<p class=\"note\">" +
           Esc(StrFormat("%zu iteration%s (%s): a histogram needs %zu or more.", samples.size(),
                         samples.size() == 1 ? "" : "s", list.c_str(), kHistogramMinSamples)) +
           "</p>\n";
  }
  std::vector<Mark> marks;
  for (const auto& [key, name] :
       {std::pair{keys::kP50LatencyMs.name, "p50"}, std::pair{keys::kP95LatencyMs.name, "p95"},
        std::pair{keys::kP99LatencyMs.name, "p99"}})
    if (auto v = Number(doc, key)) marks.push_back({std::string(name) + " " + FormatValue(*v, Unit::kMs), *v});
  return HistogramSvg(samples, marks, "iteration latency (ms)", "Latency histogram");
}

}  // namespace tg::internal
