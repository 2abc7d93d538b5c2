#include "reports/report/report_svg.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <vector>

#include "reports/report/report_view.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/reports/report_html.h"

namespace tg::internal {

namespace {

using namespace internal;

constexpr double kWidth = 1200;      // viewBox width of every chart; the page scales it
constexpr double kLabelWidth = 170;  // left column for lane / kernel names
constexpr double kRightMargin = 40;   // room for the last tick label
constexpr double kPlotWidth = kWidth - kLabelWidth - kRightMargin;

std::string Esc(std::string_view s) { return HtmlEscape(s); }

std::string Na(const std::string& why) { return "<p class=\"na\">n/a: " + Esc(why) + "</p>\n"; }

std::string SvgOpen(double height, const std::string& label) {
  return StrFormat("<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"100%%\" role=\"img\" aria-label=\"", kWidth,
                height) +
         Esc(label) + "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
}

std::string Rect(double x, double y, double w, double h, const char* cls, const std::string& title = "") {
  std::string r = StrFormat("<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"", cls, x, y, w, h);
  return title.empty() ? r + "/>\n" : r + "><title>" + Esc(title) + "</title></rect>\n";
}

std::string TextAt(double x, double y, const char* cls, const std::string& text) {
  return StrFormat("<text class=\"%s\" x=\"%.2f\" y=\"%.2f\">", cls, x, y) + Esc(text) + "</text>\n";
}

// A duration for axis labels and tooltips.
std::string Duration(double ns) {
  double a = std::fabs(ns);
  if (a < 1e3) return StrFormat("%.0f ns", ns);
  if (a < 1e6) return StrFormat("%.1f us", ns / 1e3);
  if (a < 1e9) return StrFormat("%.2f ms", ns / 1e6);
  return StrFormat("%.2f s", ns / 1e9);
}

// A round step (1, 2 or 5 times a power of ten) giving at most ~`ticks` ticks over `range`.
double NiceStep(double range, int ticks) {
  double raw = range / ticks;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

std::string Axis(double lo, double hi, double y, double x0, double width, std::string (*label)(double)) {
  std::string out = StrFormat("<line class=\"axis\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", x0, y,
                           x0 + width, y);
  double step = NiceStep(hi - lo, 6);
  double first = std::ceil(lo / step) * step;
  for (int i = 0; i <= 12 && first + i * step <= hi + step * 1e-9; ++i) {  // bounded: no float surprises
    double t = first + i * step;
    double x = x0 + (t - lo) / (hi - lo) * width;
    out += StrFormat("<line class=\"tick\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", x, y, x, y + 4);
    out += TextAt(x, y + 16, "tick-label", label(std::fabs(t) < step * 1e-9 ? 0 : t));
  }
  return out;
}

std::string IdText(const json* v) {
  return v && v->is_number_integer() ? std::to_string(v->get<int64_t>()) : "?";
}

// One row of a timeline lane: [start_offset_ns, duration_ns, kind, name].
struct Row {
  double start = 0, duration = 0;
  std::string kind, name;
};
bool ReadRow(const json& r, Row* out) {
  if (!r.is_array() || r.size() < 4 || !r[0].is_number() || !r[1].is_number()) return false;
  out->start = r[0].get<double>();
  out->duration = std::max(0.0, r[1].get<double>());
  out->kind = r[2].is_string() ? r[2].get<std::string>() : "";
  out->name = r[3].is_string() ? r[3].get<std::string>() : "";
  return true;
}

const char* KindClass(const std::string& kind) {
  return kind == "memcpy" ? "memcpy" : kind == "memset" ? "memset" : kind == "collective" ? "collective" : "kernel";
}

constexpr std::array<const char*, 6> kPhaseKeys{"pre", "h2d", "infer", "d2h", "post", "idle"};

}  // namespace

std::string TimelineSvg(const json& doc) {
  const json* tl = Find(doc, "timeline");
  if (!tl || !tl->is_object()) return Na("this report has no timeline section");
  auto duration = Number(*tl, "duration_ns");
  const json* iteration = Find(*tl, "iteration");
  if (!iteration || !iteration->is_number() || !duration) {
    std::string why = Text(*tl, "iteration_reason");
    return Na(why.empty() ? "no iteration" : why);
  }
  const json& lanes = Array(*tl, "lanes");
  if (lanes.empty()) return Na("the iteration has no GPU work");
  double lo = 0, hi = *duration;
  for (const json& lane : lanes)
    for (const json& r : Array(lane, "items")) {
      Row row;
      if (!ReadRow(r, &row)) continue;
      lo = std::min(lo, row.start);
      hi = std::max(hi, row.start + row.duration);
    }
  if (hi <= lo) hi = lo + 1;
  const double scale = kPlotWidth / (hi - lo), lane_h = 22, top = 10;
  const double height = top + lanes.size() * (lane_h + 6) + 30;
  std::string out = SvgOpen(height, "GPU timeline of one iteration");
  double y = top;
  for (const json& lane : lanes) {
    std::string label = "GPU " + IdText(Find(lane, "device")) + " · stream " + IdText(Find(lane, "stream"));
    out += TextAt(kLabelWidth - 8, y + lane_h * 0.7, "lane-label", label);
    // The lane's background is the idle colour: every pixel not covered by work is a gap.
    auto busy = Number(lane, "busy_ns"), idle = Number(lane, "idle_ns");
    std::string lane_title = label;
    if (busy && idle) lane_title += ": busy " + Duration(*busy) + ", idle " + Duration(*idle);
    out += Rect(kLabelWidth + (0 - lo) * scale, y, *duration * scale, lane_h, "gap", lane_title);
    for (const json& r : Array(lane, "items")) {
      Row row;
      if (!ReadRow(r, &row)) continue;
      out += Rect(kLabelWidth + (row.start - lo) * scale, y, std::max(row.duration * scale, 0.6), lane_h,
                  KindClass(row.kind),
                  row.name + " (" + row.kind + "): +" + Duration(row.start) + ", " + Duration(row.duration));
    }
    y += lane_h + 6;
  }
  for (const char* key : {"marker_start_offset_ns", "marker_end_offset_ns"})
    if (auto m = Number(*tl, key))
      out += StrFormat("<line class=\"marker\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n",
                    kLabelWidth + (*m - lo) * scale, top - 4, kLabelWidth + (*m - lo) * scale, y);
  out += Axis(lo, hi, y + 2, kLabelWidth, kPlotWidth, [](double ns) { return Duration(ns); });
  return out + "</svg>\n";
}

std::string PhaseBarSvg(const json& doc) {
  const json* phases = Find(doc, "phases");
  if (!phases || !phases->is_object()) return Na("this report has no phases section");
  double total = 0;
  for (const char* key : kPhaseKeys) total += Number(Object(*phases, key), "ratio").value_or(0);
  if (total <= 0) return Na("no iteration time to break down");
  std::string out = SvgOpen(70, "Phase breakdown");
  double x = 0;
  for (const char* key : kPhaseKeys) {
    const json& p = Object(*phases, key);
    double ratio = Number(p, "ratio").value_or(0);
    std::string title = std::string(key) + ": " + FormatValue(ratio, Unit::kPercent) + ", mean " +
                        FormatValue(Number(p, "mean_ms").value_or(0), Unit::kMs) + " per iteration";
    double w = ratio / total * kWidth;
    out += Rect(x, 0, w, 34, (std::string("phase-") + key).c_str(), title);
    if (w > 60) out += TextAt(x + 6, 22, "bar-label", std::string(key) + " " + FormatValue(ratio, Unit::kPercent));
    x += w;
  }
  double lx = 0;
  for (const char* key : kPhaseKeys) {
    out += Rect(lx, 48, 12, 12, (std::string("phase-") + key).c_str());
    out += TextAt(lx + 16, 59, "legend",
                  std::string(key) + " " +
                      FormatValue(Number(Object(*phases, key), "ratio").value_or(0), Unit::kPercent));
    lx += 150;
  }
  return out + "</svg>\n";
}

std::string KernelBarsSvg(const json& doc) {
  const json& kernels = Array(doc, "top_kernels");
  if (std::string why = EmptyListReason(doc, "top_kernels", "the trace has no kernels"); !why.empty()) return Na(why);
  double max_ms = 0;
  for (const json& k : kernels) max_ms = std::max(max_ms, Number(k, "total_ms").value_or(0));
  if (max_ms <= 0) max_ms = 1;
  const double bar_h = 18, gap = 6, label_w = 360, plot_w = kWidth - label_w - 200;
  std::string out = SvgOpen(kernels.size() * (bar_h + gap) + 4, "Top kernels by total time");
  double y = 2;
  size_t rank = 0;
  for (const json& k : kernels) {
    std::string name = Text(k, "name");
    double ms = Number(k, "total_ms").value_or(0);
    out += "<g><title>" + Esc(name) + "</title>\n";
    // Short names repeat (template instances): the rank ties a bar to its row in the table below.
    out += TextAt(label_w - 8, y + 13, "lane-label", StrFormat("%zu. ", ++rank) + Cut(ShortKernelName(name), 44));
    out += Rect(label_w, y, std::max(ms / max_ms * plot_w, 0.6), bar_h, "kernel");
    out += TextAt(label_w + ms / max_ms * plot_w + 6, y + 13, "legend",
                  FormatValue(ms, Unit::kMs) + ", " + ShowInline(Show(k, "count", Unit::kCount)) + " calls, " +
                      FormatValue(Number(k, "share_ratio").value_or(0), Unit::kPercent));
    out += "</g>\n";
    y += bar_h + gap;
  }
  return out + "</svg>\n";
}

std::string LatencyHistogramSvg(const json& doc) {
  std::vector<double> samples;
  for (const json& v : Array(doc, "latency_samples_ms"))
    if (v.is_number()) samples.push_back(v.get<double>());
  if (samples.empty())
    return Na(Find(doc, "latency_samples_ms") ? "no iterations" : "this report has no latency samples");
  auto [mn, mx] = std::minmax_element(samples.begin(), samples.end());
  double lo = *mn, hi = *mx;
  size_t bins = hi > lo ? std::clamp<size_t>(static_cast<size_t>(std::ceil(std::sqrt(samples.size()))), 1, 30) : 1;
  if (hi <= lo) {  // every sample equal: one bar around the value
    lo -= 0.5 * std::max(std::fabs(lo) * 0.01, 1e-6);
    hi = 2 * *mx - lo;
  }
  std::vector<size_t> counts(bins, 0);
  for (double s : samples)
    counts[std::min(bins - 1, static_cast<size_t>((s - lo) / (hi - lo) * static_cast<double>(bins)))]++;
  size_t top = *std::max_element(counts.begin(), counts.end());
  const double plot_h = 160, x0 = 60, plot_w = kWidth - x0 - kRightMargin, bin_w = plot_w / static_cast<double>(bins);
  std::string out = SvgOpen(plot_h + 40, "Latency histogram");
  for (size_t b = 0; b < bins; ++b) {
    double h = static_cast<double>(counts[b]) / static_cast<double>(top) * (plot_h - 10);
    double from = lo + (hi - lo) * static_cast<double>(b) / static_cast<double>(bins);
    double to = lo + (hi - lo) * static_cast<double>(b + 1) / static_cast<double>(bins);
    out += Rect(x0 + b * bin_w + 1, plot_h - h, std::max(bin_w - 2, 0.6), h, "hist",
                StrFormat("%zu iteration(s) in [%.3f, %.3f] ms", counts[b], from, to));
  }
  out += TextAt(x0 - 6, 12, "lane-label", StrFormat("%zu", top));
  for (const auto& [key, cls] : {std::pair{"p50_latency_ms", "p50"}, std::pair{"p95_latency_ms", "p95"}})
    if (auto v = Number(doc, key); v && *v >= lo && *v <= hi) {
      double x = x0 + (*v - lo) / (hi - lo) * plot_w;
      out += StrFormat("<line class=\"marker\" x1=\"%.2f\" y1=\"0\" x2=\"%.2f\" y2=\"%.2f\"/>\n", x, x, plot_h);
      bool right_half = x > x0 + plot_w / 2;  // label on the side with room
      out += TextAt(right_half ? x - 3 : x + 3, 10, right_half ? "legend end" : "legend",
                    std::string(cls) + " " + FormatValue(*v, Unit::kMs));
    }
  out += Axis(lo, hi, plot_h, x0, plot_w, [](double ms) { return FormatValue(ms, Unit::kMs); });
  return out + "</svg>\n";
}

std::string StackedBarsSvg(const std::vector<StackedBar>& bars, const std::vector<std::string>& part_classes,
                           const std::vector<std::string>& part_names, const std::string& axis,
                           const std::string& aria_label) {
  double most = 0;
  for (const StackedBar& b : bars) {
    double sum = 0;
    for (double v : b.parts) sum += std::max(v, 0.0);
    most = std::max(most, sum);
  }
  if (bars.empty() || most <= 0) return Na("no bar has a length to show");
  const double bar_h = 18, gap = 6, top = 24, note_w = 300, plot_w = kWidth - kLabelWidth - note_w;
  const double axis_y = top + static_cast<double>(bars.size()) * (bar_h + gap) + 2;
  std::string out = SvgOpen(axis_y + 44, aria_label);
  double lx = kLabelWidth;
  for (size_t i = 0; i < part_classes.size() && i < part_names.size(); ++i) {
    out += Rect(lx, 2, 12, 12, part_classes[i].c_str());
    out += TextAt(lx + 16, 13, "legend", part_names[i]);
    lx += 16 + 7.0 * static_cast<double>(part_names[i].size()) + 24;  // ~7 px a character at 12 px
  }
  double y = top;
  for (const StackedBar& b : bars) {
    out += TextAt(kLabelWidth - 8, y + 13, "lane-label", b.label);
    double x = kLabelWidth;
    for (size_t i = 0; i < b.parts.size() && i < part_classes.size(); ++i) {
      const double w = std::max(b.parts[i], 0.0) / most * plot_w;
      if (w <= 0) continue;
      const std::string name = i < part_names.size() ? part_names[i] : "";
      out += Rect(x, y, w, bar_h, part_classes[i].c_str(), b.label + ": " + name + " " + FormatValue(b.parts[i], Unit::kMs));
      x += w;
    }
    if (b.marked)
      out += StrFormat("<rect class=\"marker\" fill=\"none\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n",
                       kLabelWidth - 2, y - 2, x - kLabelWidth + 4, bar_h + 4);
    out += TextAt(x + 8, y + 13, "legend", b.note);
    y += bar_h + gap;
  }
  out += Axis(0, most, axis_y, kLabelWidth, plot_w, [](double ms) { return FormatValue(ms, Unit::kMs); });
  out += TextAt(kLabelWidth + plot_w / 2, axis_y + 36, "tick-label", axis);
  return out + "</svg>\n";
}

}  // namespace tg::internal
