// The comparison page's charts: latency distributions overlaid with the interval, the kernel
// family waterfall, and the two median iterations on one time axis.
#include "reports/html/compare_charts.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "reports/document/report_document.h"
#include "reports/document/report_keys.h"
#include "reports/gate/compare_internal.h"
#include "reports/view/report_svg.h"
#include "reports/view/report_view.h"
#include "tracegate/analyzer/strings.h"
#include "tracegate/reports/report_html.h"

namespace tg::internal {

namespace {

constexpr double kWidth = kChartWidth;  // viewBox width of every chart; the page scales it
constexpr double kCharPx = 6.6;         // about one character of the 12 px chart font

std::string Esc(std::string_view s) { return HtmlEscape(RepairUtf8(s)); }

// A text that starts at x, or ends at x when it would run past the chart's right edge.
std::string LabelFitting(double x, double y, const std::string& cls, const std::string& text) {
  const bool fits = x + kCharPx * static_cast<double>(text.size()) < kWidth - 4;
  return SvgText(fits ? x : std::min(x, kWidth - 4), y, fits ? cls : cls + " end", text);
}

// A horizontal axis over [lo_ms, hi_ms] at height y: ticks in one unit (report_svg's PickTimeUnit,
// NiceTicks and TickText, as on the analyze page), and its title under them ("<title> (<unit>)").
std::string AxisBelow(double lo_ms, double hi_ms, double x0, double width, double y, const std::string& title) {
  const TimeUnit u = PickTimeUnit((hi_ms - lo_ms) * 1e6);
  const double lo = lo_ms * 1e6 / u.ns, hi = hi_ms * 1e6 / u.ns;
  std::string out = SvgLine(x0, y, x0 + width, y, "axis");
  const std::vector<double> ticks = NiceTicks(lo, hi, 7);
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  for (double t : ticks) {
    const double x = x0 + (t - lo) / (hi - lo) * width;
    out += SvgLine(x, y, x, y + 4, "tick");
    out += SvgText(x, y + 16, "tick-label", TickText(t, step));
  }
  return out + SvgText(x0 + width / 2, y + 34, "axis-title", title + " (" + u.name + ")");
}

std::vector<double> Samples(const json& doc) {
  std::vector<double> out;
  for (const json& v : Array(doc, keys::kLatencySamplesMs.name))
    if (v.is_number() && std::isfinite(v.get<double>())) out.push_back(v.get<double>());
  return out;
}

double Mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

std::string Ms(double ms) {
  const double a = std::fabs(ms);
  if (a >= 1000) return StrFormat("%.1f", ms);
  if (a >= 0.001 || a == 0) return StrFormat("%.3f", ms);
  return StrFormat("%.3g", ms);
}

std::string LatencyOverlaySvg(const Comparison& c, const PageSide& base, const PageSide& next) {
  const std::vector<double> bs = Samples(*base.doc), ns = Samples(*next.doc);
  if (bs.empty() && ns.empty()) return SvgNa("neither report has latency_samples_ms (no iterations)");
  const double bm = Mean(bs), nm = Mean(ns);
  const BootstrapResult& boot = c.bootstrap;
  double lo = std::numeric_limits<double>::max(), hi = std::numeric_limits<double>::lowest();
  for (const std::vector<double>* v : {&bs, &ns})
    for (double s : *v) lo = std::min(lo, s), hi = std::max(hi, s);
  if (c.has_latency) lo = std::min(lo, c.limit_ms), hi = std::max(hi, c.limit_ms);
  if (boot.ok) lo = std::min(lo, bm * boot.lo), hi = std::max(hi, bm * boot.hi);
  const double pad = std::max((hi - lo) * 0.04, std::max(std::fabs(hi), 1e-6) * 0.01);
  lo = std::max(0.0, lo - pad);
  hi += pad;
  const double x0 = 170, plot_w = kWidth - x0 - 60;
  auto X = [&](double ms) { return x0 + (ms - lo) / (hi - lo) * plot_w; };
  const bool histogram = bs.size() >= 10 && ns.size() >= 10;
  const double hist_top = 30, hist_h = histogram ? 110 : 0, rows_top = hist_top + hist_h + (histogram ? 14 : 0);
  const double row_h = 26, axis_y = rows_top + 2 * (row_h + 8) + 4;
  std::string out = SvgOpen(axis_y + 44, "Latency per iteration of both runs");
  // Legend.
  double lx = x0;
  auto key = [&](const std::string& cls, const std::string& text) {
    out += SvgRect(lx, 4, 12, 12, cls) + SvgText(lx + 16, 14, "legend", text);
    lx += 16 + kCharPx * static_cast<double>(text.size()) + 22;
  };
  key("side-base", "base (" + std::to_string(bs.size()) + " iterations)");
  key("side-new", "new (" + std::to_string(ns.size()) + " iterations)");
  if (boot.ok) key("ci", StrFormat("%g%% interval of the new mean", boot.confidence * 100));
  if (c.has_latency) {
    out += SvgLine(lx, 10, lx + 18, 10, "limit");
    out += SvgText(lx + 22, 14, "legend", "limit " + FormatSigned(c.options.threshold_pct, -1) + "%");
  }
  if (histogram) {  // shared bins; a bar's height is the share of its run's iterations
    const size_t bins =
        std::clamp<size_t>(static_cast<size_t>(std::ceil(std::sqrt(std::max(bs.size(), ns.size())))), 5, 30);
    std::vector<double> hb(bins, 0), hn(bins, 0);
    auto fill = [&](const std::vector<double>& v, std::vector<double>& h) {
      for (double s : v) h[std::min(bins - 1, static_cast<size_t>((s - lo) / (hi - lo) * static_cast<double>(bins)))]++;
      for (double& x : h) x /= static_cast<double>(v.size());
    };
    fill(bs, hb);
    fill(ns, hn);
    const double top = std::max(*std::max_element(hb.begin(), hb.end()), *std::max_element(hn.begin(), hn.end()));
    const double bin_w = plot_w / static_cast<double>(bins);
    for (size_t b = 0; b < bins; ++b) {
      const double from = lo + (hi - lo) * static_cast<double>(b) / static_cast<double>(bins),
                   to = from + (hi - lo) / static_cast<double>(bins);
      for (const auto& [h, cls, who] : {std::tuple{&hb, "hist-base", "base"}, std::tuple{&hn, "hist-new", "new"}}) {
        const double bar = (*h)[b] / top * hist_h;
        if (bar > 0)
          out += SvgRect(x0 + static_cast<double>(b) * bin_w + 1, hist_top + hist_h - bar, bin_w - 2, bar, cls,
                         StrFormat("%s: %.0f%% of its iterations in [%s, %s] ms", who, (*h)[b] * 100, Ms(from).c_str(),
                                   Ms(to).c_str()));
      }
    }
    out += SvgLine(x0 - 6, hist_top, x0 - 6, hist_top + hist_h, "axis");
    out += SvgText(x0 - 10, hist_top + 10, "tick-label end", StrFormat("%.0f", top * 100));
    out += SvgText(x0 - 10, hist_top + hist_h, "tick-label end", "0");
    out += SvgText(x0 - 12, hist_top + hist_h / 2 + 4, "axis-title end", "share of iterations (%)");
  }
  // One row per run: every sample a tick, the mean a heavy line.
  const struct Row {
    const std::vector<double>* v;
    double mean;
    const char* cls;
    std::string label;
  } rows[] = {{&bs, bm, "side-base", "base"}, {&ns, nm, "side-new", "new"}};
  double y = rows_top;
  for (const Row& r : rows) {
    out += SvgText(x0 - 10, y + row_h * 0.65, "lane-label", r.label + " (n = " + std::to_string(r.v->size()) + ")");
    out += SvgRect(x0, y, plot_w, row_h, "lane");
    if (&r == &rows[1] && boot.ok)
      out +=
          SvgRect(X(bm * boot.lo), y - 3, X(bm * boot.hi) - X(bm * boot.lo), row_h + 6, "ci",
                  StrFormat("mean(new) / mean(base) = %.4f, %g%% bootstrap interval [%.4f, %.4f]: the new mean lies in "
                            "[%s, %s] ms",
                            boot.ratio, boot.confidence * 100, boot.lo, boot.hi, Ms(bm * boot.lo).c_str(),
                            Ms(bm * boot.hi).c_str()));
    for (double s : *r.v) out += SvgLine(X(s), y + 4, X(s), y + row_h - 4, (std::string("rug ") + r.cls).c_str());
    if (!r.v->empty()) {
      out += SvgLine(X(r.mean), y - 2, X(r.mean), y + row_h + 2, "mean");
      out += LabelFitting(X(r.mean) + 5, y + row_h * 0.65, "legend", "mean " + Ms(r.mean) + " ms");
    }
    y += row_h + 8;
  }
  if (c.has_latency)
    out += SvgLine(X(c.limit_ms), hist_top - 4, X(c.limit_ms), y - 4, "limit") +
           StrFormat("<rect class=\"hit\" x=\"%.2f\" y=\"%.2f\" width=\"6\" height=\"%.2f\"><title>", X(c.limit_ms) - 3,
                     hist_top - 4, y - hist_top) +
           Esc("limit: base avg_latency_ms x (1 + " + FormatNumber(c.options.threshold_pct, -1) +
               "/100) = " + Ms(c.limit_ms) + " ms") +
           "</title></rect>\n";
  out += AxisBelow(lo, hi, x0, plot_w, axis_y, "latency per iteration");
  return out + "</svg>\n";
}

std::string FamilyWaterfallSvg(const Comparison& c) {
  if (c.kernels.empty()) return SvgNa("the kernels were not compared (a side has no kernel_table)");
  double base_total = 0, new_total = 0;
  for (const KernelDelta& k : c.kernels) base_total += k.base_ms, new_total += k.new_ms;
  constexpr size_t kSteps = 12;
  constexpr double kLabelWidth = 370;
  constexpr size_t kLabelChars = static_cast<size_t>((kLabelWidth - 16) / kCharPx);
  struct Step {
    std::string label, value, title;
    double from, to;
    const char* cls;
  };
  std::vector<Step> steps;
  steps.push_back({"base: all kernels", Ms(base_total) + " ms", "", 0, base_total, "wf-total"});
  double at = base_total, shown = 0;
  for (size_t i = 0; i < c.families.size() && i < kSteps; ++i) {
    const FamilyDelta& f = c.families[i];
    const std::string variants = f.variants > 1 ? " (" + std::to_string(f.variants) + " variants)" : "";
    const std::string label = CutMiddle(f.name, kLabelChars - variants.size()) + variants;
    std::string what = f.change == KernelChange::kChanged ? FormatSigned(f.delta_pct, 1) + "%"
                                                          : std::string(KernelChangeName(f.change));
    std::string title = f.name + ": " + Ms(f.base_ms) + " -> " + Ms(f.new_ms) + " ms per iteration, launches " +
                        FormatNumber(f.base_launches, 1) + " -> " + FormatNumber(f.new_launches, 1) +
                        (f.variants > 1 ? ", " + std::to_string(f.variants) + " variants netted" : "");
    steps.push_back({label, FormatSigned(f.delta_ms, 3) + " ms, " + what, title, at, at + f.delta_ms,
                     f.delta_ms > 0 ? "wf-up" : "wf-down"});
    at += f.delta_ms;
    shown += f.delta_ms;
  }
  const double rest = (new_total - base_total) - shown;
  const size_t others = c.families.size() > kSteps ? c.families.size() - kSteps : 0;
  std::string rest_label =
      others > 0 ? std::to_string(others) + " more families, and those within noise" : "families within noise";
  steps.push_back({rest_label, FormatSigned(rest, 3) + " ms", "the kernels not listed above, netted", at, at + rest,
                   rest > 0 ? "wf-up" : "wf-down"});
  steps.push_back({"new: all kernels", Ms(new_total) + " ms", "", 0, new_total, "wf-total"});
  double top = 0;
  for (const Step& s : steps) top = std::max({top, s.from, s.to});
  if (top <= 0) return SvgNa("no kernel time on either side");
  top *= 1.02;
  const double label_w = kLabelWidth, value_w = 190, x0 = label_w, plot_w = kWidth - label_w - value_w;
  const double bar_h = 18, gap = 7, axis_y = 8 + static_cast<double>(steps.size()) * (bar_h + gap);
  auto X = [&](double ms) { return x0 + ms / top * plot_w; };
  std::string out = SvgOpen(axis_y + 44, "Kernel GPU time per iteration from base to new, by kernel family");
  double y = 8;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const double a = X(std::min(s.from, s.to)), b = X(std::max(s.from, s.to));
    out += "<g>";
    if (!s.title.empty()) out += "<title>" + Esc(s.title) + "</title>";
    out += SvgText(label_w - 8, y + 13, "lane-label", s.label);
    out += SvgRect(a, y, std::max(b - a, 1.0), bar_h, s.cls);
    out += LabelFitting(b + 6, y + 13, "legend", s.value);
    out += "</g>\n";
    if (i + 1 < steps.size()) out += SvgLine(X(s.to), y + bar_h, X(s.to), y + bar_h + gap, "connector");
    y += bar_h + gap;
  }
  out += AxisBelow(0, top, x0, plot_w, axis_y, "kernel GPU time per iteration, summed over streams");
  return out + "</svg>\n";
}

std::string TimelineMissing(const json& doc) {
  const json* tl = Find(doc, "timeline");
  if (!tl || !tl->is_object())
    return "the report has no timeline section (written by an older tracegate: re-run tracegate analyze on the trace)";
  if (!Number(*tl, "iteration") || !Number(*tl, "duration_ns")) {
    const std::string why = Text(*tl, "iteration_reason");
    return "no median iteration in the report (" + (why.empty() ? std::string("no iteration") : why) + ")";
  }
  return "";
}

std::string MedianIterationsSvg(const PageSide& base, const PageSide& next) {
  constexpr size_t kMaxLanes = 6;
  struct Side {
    const PageSide* side;
    const json* tl;
    std::vector<const json*> lanes;
    size_t lanes_left = 0;
  };
  std::vector<Side> sides;
  double lo = 0, hi = 0;  // ns from the iteration's start
  for (const PageSide* s : {&base, &next}) {
    if (!TimelineMissing(*s->doc).empty()) continue;
    Side side{s, &Object(*s->doc, "timeline"), {}, 0};
    hi = std::max(hi, Number(*side.tl, "duration_ns").value_or(0));
    std::vector<const json*> lanes;
    for (const json& lane : Array(*side.tl, "lanes")) lanes.push_back(&lane);
    // The busiest lanes when there are many; drawn in the report's (device, stream) order.
    std::vector<const json*> kept = lanes;
    std::stable_sort(kept.begin(), kept.end(), [](const json* a, const json* b) {
      return Number(*a, "busy_ns").value_or(0) > Number(*b, "busy_ns").value_or(0);
    });
    if (kept.size() > kMaxLanes) kept.resize(kMaxLanes);
    for (const json* lane : lanes)
      if (std::find(kept.begin(), kept.end(), lane) != kept.end()) side.lanes.push_back(lane);
    side.lanes_left = lanes.size() - side.lanes.size();
    for (const json* lane : side.lanes)
      for (const json& r : Array(*lane, "items"))
        if (r.is_array() && r.size() >= 2 && r[0].is_number() && r[1].is_number()) {
          lo = std::min(lo, r[0].get<double>());
          hi = std::max(hi, r[0].get<double>() + std::max(0.0, r[1].get<double>()));
        }
    sides.push_back(std::move(side));
  }
  if (sides.empty()) return SvgNa("neither report has a timeline section with a median iteration");
  if (hi <= lo) hi = lo + 1;
  const double x0 = 190, plot_w = kWidth - x0 - 150, lane_h = 16, head_h = 22;
  auto X = [&](double ns) { return x0 + (ns - lo) / (hi - lo) * plot_w; };
  double height = 26;
  for (const Side& s : sides) height += head_h + static_cast<double>(s.lanes.size()) * (lane_h + 4) + 8;
  std::string out = SvgOpen(height + 44, "The median iteration of each run on one time axis");
  double lx = x0;
  for (const auto& [cls, name] :
       {std::pair{"kernel", "kernel"}, std::pair{"collective", "collective"}, std::pair{"memcpy", "memcpy"},
        std::pair{"memset", "memset"}, std::pair{"lane", "idle (no work on the stream)"}}) {
    out += SvgRect(lx, 4, 12, 12, cls) + SvgText(lx + 16, 14, "legend", name);
    lx += 16 + kCharPx * static_cast<double>(std::string_view(name).size()) + 22;
  }
  double y = 26;
  for (const Side& s : sides) {
    const json& tl = *s.tl;
    const double duration = Number(tl, "duration_ns").value_or(0);
    std::string head = s.side->label + ": iteration " + StrFormat("%.0f", Number(tl, "iteration").value_or(0)) + ", " +
                       Ms(duration / 1e6) + " ms (" + Text(tl, "selection") + ")";
    if (s.lanes_left > 0) head += StrFormat("; %zu quieter streams not drawn", s.lanes_left);
    out += SvgText(x0, y + 14, "side-title", Cut(head, 150));
    y += head_h;
    const double first_lane = y;
    for (const json* lane : s.lanes) {
      const json* dev = Find(*lane, "device");
      const json* stream = Find(*lane, "stream");
      auto id = [](const json* v) { return v && v->is_number_integer() ? std::to_string(v->get<int64_t>()) : "?"; };
      const std::string name = "GPU " + id(dev) + " · stream " + id(stream);
      out += SvgText(x0 - 8, y + lane_h * 0.8, "lane-label", name);
      out += SvgRect(X(0), y, X(duration) - X(0), lane_h, "lane",
                     name + ": busy " + Ms(Number(*lane, "busy_ns").value_or(0) / 1e6) + " ms, idle " +
                         Ms(Number(*lane, "idle_ns").value_or(0) / 1e6) + " ms");
      for (const json& r : Array(*lane, "items")) {
        if (!r.is_array() || r.size() < 4 || !r[0].is_number() || !r[1].is_number()) continue;
        const double start = r[0].get<double>(), dur = std::max(0.0, r[1].get<double>());
        const std::string kind = r[2].is_string() ? r[2].get<std::string>() : "kernel";
        const char* cls = kind == "memcpy"       ? "memcpy"
                          : kind == "memset"     ? "memset"
                          : kind == "collective" ? "collective"
                                                 : "kernel";
        out += SvgRect(X(start), y, std::max(X(start + dur) - X(start), 0.6), lane_h, cls,
                       (r[3].is_string() ? r[3].get<std::string>() : kind) + ": at " + Ms(start / 1e6) + " ms, " +
                           Ms(dur / 1e6) + " ms");
      }
      y += lane_h + 4;
    }
    out += SvgLine(X(duration), first_lane - 4, X(duration), y, "iteration-end");
    out += LabelFitting(X(duration) + 4, first_lane + 8, "legend", "end " + Ms(duration / 1e6) + " ms");
    y += 8;
  }
  out += AxisBelow(lo / 1e6, hi / 1e6, x0, plot_w, y + 2, "time from the iteration's start");
  return out + "</svg>\n";
}

}  // namespace tg::internal
