#include "reports/view/report_svg.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <vector>

#include "reports/view/report_view.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/analyzer/strings.h"
#include "tracegate/reports/report_html.h"

namespace tg::internal {

namespace {

using namespace internal;

constexpr double kWidth = kChartWidth;
constexpr double kLabelWidth = kChartLabelWidth;

std::string Esc(std::string_view s) { return HtmlEscape(RepairUtf8(s)); }  // a name may hold any bytes

// The stacked bars' ms axis: bare numbers, the unit once in the title under it.
std::string MsAxis(double lo, double hi, double y, double x0, double width) {
  std::string out = SvgLine(x0, y, x0 + width, y, "axis");
  const std::vector<double> ticks = NiceTicks(lo, hi, 6);
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  for (double t : ticks) {
    double x = x0 + (t - lo) / (hi - lo) * width;
    out += SvgLine(x, y, x, y + 4, "tick");
    out += SvgText(x, y + 16, "tick-label", TickText(t, step));
  }
  return out;
}

constexpr std::array<const char*, 6> kPhaseKeys{"pre", "h2d", "infer", "d2h", "post", "idle"};

}  // namespace

std::string SvgOpen(double height, const std::string& aria_label, const std::string& extra_class) {
  return StrFormat("<svg class=\"chart%s%s\" viewBox=\"0 0 %.0f %.0f\" width=\"100%%\" role=\"img\" aria-label=\"",
                   extra_class.empty() ? "" : " ", Esc(extra_class).c_str(), kWidth, height) +
         Esc(aria_label) + "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
}

std::string SvgRect(double x, double y, double w, double h, const std::string& cls, const std::string& title) {
  std::string r = StrFormat("<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"", cls.c_str(), x,
                            y, std::max(w, 0.0), std::max(h, 0.0));
  return title.empty() ? r + "/>\n" : r + "><title>" + Esc(title) + "</title></rect>\n";
}

std::string SvgText(double x, double y, const std::string& cls, const std::string& text) {
  return StrFormat("<text class=\"%s\" x=\"%.2f\" y=\"%.2f\">", cls.c_str(), x, y) + Esc(text) + "</text>\n";
}

std::string SvgLine(double x1, double y1, double x2, double y2, const std::string& cls) {
  return StrFormat("<line class=\"%s\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", cls.c_str(), x1, y1, x2,
                   y2);
}

std::string SvgNa(const std::string& why) { return "<p class=\"na\">n/a: " + Esc(why) + "</p>\n"; }

TimeUnit PickTimeUnit(double span_ns) {
  const double a = std::fabs(span_ns);
  if (a < 2e3) return {"ns", 1};
  if (a < 2e6) return {"us", 1e3};
  if (a < 2e9) return {"ms", 1e6};
  return {"s", 1e9};
}

std::vector<double> NiceTicks(double lo, double hi, int ticks) {
  std::vector<double> out;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || ticks < 1) return out;
  const double raw = (hi - lo) / ticks;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * p;
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (int i = 0; i <= 2 * ticks + 2 && first + i * step <= hi + step * 1e-9; ++i) {  // bounded
    const double t = first + i * step;
    out.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
  }
  return out;
}

std::string TickText(double value, double step) {
  int decimals = 0;
  for (double s = std::fabs(step); decimals < 9 && s > 0 && std::fabs(s - std::round(s)) > s * 1e-6; s *= 10)
    ++decimals;
  return StrFormat("%.*f", decimals, value);
}

std::string AxisX(double lo, double hi, double y, double x0, double width, const std::string& title) {
  std::string out = "<g class=\"axis axis-x\">\n" + SvgLine(x0, y, x0 + width, y, "axis-line");
  const std::vector<double> ticks = NiceTicks(lo, hi, std::max(2, static_cast<int>(width / 110)));
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  for (double t : ticks) {
    const double x = x0 + (t - lo) / (hi - lo) * width;
    out += SvgLine(x, y, x, y + 4, "tick");
    out += SvgText(x, y + 16, "tick-label", TickText(t, step));
  }
  out += SvgText(x0 + width / 2, y + 32, "axis-title", title);
  return out + "</g>\n";
}

std::string AxisY(double lo, double hi, double x, double y0, double height, const std::string& title) {
  std::string out = "<g class=\"axis axis-y\">\n" + SvgLine(x, y0, x, y0 + height, "axis-line");
  const std::vector<double> ticks = NiceTicks(lo, hi, std::max(2, static_cast<int>(height / 40)));
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  for (double t : ticks) {
    const double y = y0 + height - (t - lo) / (hi - lo) * height;
    out += SvgLine(x - 4, y, x, y, "tick");
    out += SvgText(x - 6, y + 4, "tick-label end", TickText(t, step));
  }
  out +=
      StrFormat("<text class=\"axis-title\" transform=\"translate(%.2f %.2f) rotate(-90)\">", x - 44, y0 + height / 2) +
      Esc(title) + "</text>\n";
  return out + "</g>\n";
}

std::string PhaseBarSvg(const json& doc) {
  const json* phases = Find(doc, "phases");
  if (!phases || !phases->is_object()) return SvgNa("this report has no phases section");
  double total = 0;
  for (const char* key : kPhaseKeys) total += Number(Object(*phases, key), "ratio").value_or(0);
  if (total <= 0) return SvgNa("no iteration time to break down");
  std::string out = SvgOpen(70, "Phase breakdown", "fit");
  double x = 0;
  for (const char* key : kPhaseKeys) {
    const json& p = Object(*phases, key);
    double ratio = Number(p, "ratio").value_or(0);
    std::string title = std::string(key) + ": " + FormatValue(ratio, Unit::kPercent) + ", mean " +
                        FormatValue(Number(p, "mean_ms").value_or(0), Unit::kMs) + " per iteration";
    double w = ratio / total * kWidth;
    out += SvgRect(x, 0, w, 34, (std::string("phase-") + key).c_str(), title);
    if (w > 60) out += SvgText(x + 6, 22, "bar-label", std::string(key) + " " + FormatValue(ratio, Unit::kPercent));
    x += w;
  }
  double lx = 0;
  for (const char* key : kPhaseKeys) {
    if (Number(Object(*phases, key), "ratio").value_or(0) <= 0) continue;  // no key for what is not there
    out += SvgRect(lx, 48, 12, 12, (std::string("phase-") + key).c_str());
    out += SvgText(
        lx + 16, 59, "legend",
        std::string(key) + " " + FormatValue(Number(Object(*phases, key), "ratio").value_or(0), Unit::kPercent));
    lx += 150;
  }
  return out + "</svg>\n";
}

std::string KernelBarsSvg(const json& doc) {
  const json& kernels = Array(doc, "top_kernels");
  if (std::string why = EmptyListReason(doc, "top_kernels", "the trace has no kernels"); !why.empty())
    return SvgNa(why);
  double max_ms = 0;
  for (const json& k : kernels) max_ms = std::max(max_ms, Number(k, "total_ms").value_or(0));
  if (max_ms <= 0) max_ms = 1;
  const double bar_h = 18, gap = 6, label_w = 360, plot_w = kWidth - label_w - 200;
  const std::map<std::string, KernelLabel> labels = ReportKernelLabels(doc);
  std::string out = SvgOpen(kernels.size() * (bar_h + gap) + 4, "Top kernels by total time", "kbars");
  double y = 2;
  size_t rank = 0;
  for (const json& k : kernels) {
    std::string name = Text(k, "name");
    double ms = Number(k, "total_ms").value_or(0);
    out += "<g><title>" + Esc(name) + "</title>\n";
    // Short names repeat (template instances): the label adds a hint that tells them apart.
    const std::string label = KernelLabelFit(labels, name, 44);
    out += SvgText(label_w - 8, y + 13, "lane-label", StrFormat("%zu. ", ++rank) + label);
    out += SvgRect(label_w, y, std::max(ms / max_ms * plot_w, 0.6), bar_h, "kernel");
    out += SvgText(label_w + ms / max_ms * plot_w + 6, y + 13, "legend",
                   FormatValue(ms, Unit::kMs) + ", " + ShowInline(Show(k, "count", Unit::kCount)) + " calls, " +
                       FormatValue(Number(k, "share_ratio").value_or(0), Unit::kPercent));
    out += "</g>\n";
    y += bar_h + gap;
  }
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
  if (bars.empty() || most <= 0) return SvgNa("no bar has a length to show");
  const double bar_h = 18, gap = 6, top = 24, note_w = 300, plot_w = kWidth - kLabelWidth - note_w;
  const double axis_y = top + static_cast<double>(bars.size()) * (bar_h + gap) + 2;
  std::string out = SvgOpen(axis_y + 44, aria_label);
  double lx = kLabelWidth;
  for (size_t i = 0; i < part_classes.size() && i < part_names.size(); ++i) {
    out += SvgRect(lx, 2, 12, 12, part_classes[i].c_str());
    out += SvgText(lx + 16, 13, "legend", part_names[i]);
    lx += 16 + 7.0 * static_cast<double>(part_names[i].size()) + 24;  // ~7 px a character at 12 px
  }
  double y = top;
  for (const StackedBar& b : bars) {
    out += SvgText(kLabelWidth - 8, y + 13, "lane-label", b.label);
    double x = kLabelWidth;
    for (size_t i = 0; i < b.parts.size() && i < part_classes.size(); ++i) {
      const double w = std::max(b.parts[i], 0.0) / most * plot_w;
      if (w <= 0) continue;
      const std::string name = i < part_names.size() ? part_names[i] : "";
      out += SvgRect(x, y, w, bar_h, part_classes[i].c_str(),
                     b.label + ": " + name + " " + FormatValue(b.parts[i], Unit::kMs));
      x += w;
    }
    if (b.marked)
      out += StrFormat("<rect class=\"marker\" fill=\"none\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n",
                       kLabelWidth - 2, y - 2, x - kLabelWidth + 4, bar_h + 4);
    out += SvgText(x + 8, y + 13, "legend", b.note);
    y += bar_h + gap;
  }
  out += MsAxis(0, most, axis_y, kLabelWidth, plot_w);
  out += SvgText(kLabelWidth + plot_w / 2, axis_y + 36, "axis-title", axis);
  return out + "</svg>\n";
}

}  // namespace tg::internal
