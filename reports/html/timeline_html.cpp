#include "reports/html/timeline_html.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "reports/view/report_svg.h"
#include "reports/view/report_view.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/reports/report_html.h"

namespace tg::internal {

namespace {

constexpr double kX0 = kChartLabelWidth;
constexpr double kPlotW = kChartWidth - kChartLabelWidth - kChartRightMargin;

std::string Esc(std::string_view s) { return HtmlEscape(s); }

// "1.23 ms", "456.0 us", "2.500 s": a duration for tooltips and the gap table.
std::string DurationText(double ns) {
  const double a = std::fabs(ns);
  if (a < 1e3) return StrFormat("%.0f ns", ns);
  if (a < 1e6) return StrFormat("%.1f us", ns / 1e3);
  if (a < 1e9) return StrFormat("%.3f ms", ns / 1e6);
  return StrFormat("%.3f s", ns / 1e9);
}
std::string AtText(double ns) { return StrFormat("%.3f ms into the trace", ns / 1e6); }

int64_t IdOf(const json& j, std::string_view key) {
  const json* v = Find(j, key);
  return v && v->is_number_integer() ? v->get<int64_t>() : -1;
}
// t - origin, exact in int64 (trace clocks pass 2^53, where a double loses nanoseconds); in
// doubles only where int64 would overflow (a report no tool wrote).
double Since(int64_t t, int64_t origin) {
  int64_t d = 0;
  return __builtin_sub_overflow(t, origin, &d) ? static_cast<double>(t) - static_cast<double>(origin) : static_cast<double>(d);
}
std::string IdText(int64_t id) { return id == -1 ? "?" : std::to_string(id); }

// One row of a lane: [start_offset_ns, duration_ns, kind, name (, depth)].
struct Row {
  double start = 0, duration = 0;
  std::string kind, name;
  int depth = 0;
};
bool ReadRow(const json& r, Row* out) {
  if (!r.is_array() || r.size() < 4 || !r[0].is_number() || !r[1].is_number()) return false;
  out->start = r[0].get<double>();
  out->duration = std::max(0.0, r[1].get<double>());
  out->kind = r[2].is_string() ? r[2].get<std::string>() : "";
  out->name = r[3].is_string() ? r[3].get<std::string>() : "";
  out->depth = r.size() > 4 && r[4].is_number_integer() ? static_cast<int>(r[4].get<int64_t>()) : 0;
  return true;
}

const char* GpuClass(const std::string& kind) {
  return kind == "memcpy" ? "memcpy" : kind == "memset" ? "memset" : kind == "collective" ? "collective" : "kernel";
}
const char* HostClass(const std::string& kind) {
  return kind == "launch" ? "launch" : kind == "sync" ? "sync" : kind == "copy" ? "copy" : kind == "range" ? "range" : "api";
}
const char* ClassWord(const std::string& kind) {
  return kind == "memcpy" ? "copy" : kind == "memset" ? "memset" : kind == "collective" ? "communication" : "compute";
}

// The critical path's kinds (critical_path.h) as the lane draws them: GPU work in its lane's
// colours, the host's kinds in theirs.
const char* PathClass(const std::string& kind) {
  if (kind == "communication") return "collective";
  if (kind.rfind("kernel_", 0) == 0) return "kernel";
  if (kind == "copy") return "memcpy";
  if (kind == "memset") return "memset";
  if (kind == "launch_call") return "launch";
  if (kind == "runtime_call") return "api";
  if (kind == "sync_wait") return "sync";
  if (kind == "host_compute") return "cp-host";
  if (kind == "launch_delay") return "cp-delay";
  if (kind == "gpu_gap") return "cp-gap";
  return "cp-none";
}

// One segment of timeline.critical_path: [start_offset_ns, duration_ns, kind, name, device,
// stream, pid, tid].
struct PathRow {
  double start = 0, duration = 0;
  std::string kind, name;
  int64_t device = -1, stream = -1, tid = -1;
  bool gpu = false;
};
std::vector<PathRow> ReadPath(const json& tl) {
  std::vector<PathRow> out;
  for (const json& r : Array(Object(tl, "critical_path"), "segments")) {
    if (!r.is_array() || r.size() < 8 || !r[0].is_number() || !r[1].is_number()) continue;
    PathRow p;
    p.start = r[0].get<double>();
    p.duration = std::max(0.0, r[1].get<double>());
    p.kind = r[2].is_string() ? r[2].get<std::string>() : "";
    p.name = r[3].is_string() ? r[3].get<std::string>() : "";
    p.gpu = r[4].is_number_integer() || r[5].is_number_integer();
    p.device = r[4].is_number_integer() ? r[4].get<int64_t>() : -1;
    p.stream = r[5].is_number_integer() ? r[5].get<int64_t>() : -1;
    p.tid = r[7].is_number_integer() ? r[7].get<int64_t>() : -1;
    out.push_back(std::move(p));
  }
  return out;
}

// The first view and the element placement, as the page script does it (the page reads the same
// without the script).
struct View {
  double v0 = 0, v1 = 1;
  double X(double t) const { return kX0 + (t - v0) * kPlotW / (v1 - v0); }
  // A placed rect: data-s/data-d and its x/width in this view, clamped to the plot.
  std::string Rect(double s, double d, double y, double h, const std::string& cls, double min_w,
                   const std::string& title, const std::string& extra = "") const {
    double l = std::max(X(s), kX0), r = std::min(X(s + d), kX0 + kPlotW);
    const bool shown = X(s + d) >= kX0 && X(s) <= kX0 + kPlotW && (r > l || min_w > 0);
    if (shown && r - l < min_w) {
      l = std::min(std::max(l, kX0), kX0 + kPlotW - min_w);
      r = l + min_w;
    }
    std::string out = StrFormat("<rect class=\"%s\" data-s=\"%.0f\" data-d=\"%.0f\"", cls.c_str(), s, d);
    if (min_w > 0) out += StrFormat(" data-min=\"%.1f\"", min_w);
    out += extra + StrFormat(" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"", shown ? l : kX0, y,
                             shown ? r - l : 0.0, h);
    if (!shown) out += " style=\"display:none\"";
    return out + "><title>" + Esc(title) + "</title></rect>\n";
  }
  std::string Mark(double s, double d, double y, const std::string& inner, const std::string& title) const {
    const double a = X(s), b = X(s + d);
    const bool shown = b >= kX0 && a <= kX0 + kPlotW;
    const double c = d > 0 ? (std::max(a, kX0) + std::min(b, kX0 + kPlotW)) / 2 : a;
    return StrFormat("<g class=\"gapnum\" data-s=\"%.0f\" data-d=\"%.0f\" transform=\"translate(%.2f 0)\"%s>", s, d, c,
                     shown ? "" : " style=\"display:none\"") +
           "<title>" + Esc(title) + "</title>" + StrFormat("<circle cx=\"0\" cy=\"%.2f\" r=\"7.5\"/>", y) +
           StrFormat("<text x=\"0\" y=\"%.2f\">", y + 4) + inner + "</text></g>\n";
  }
};

// The axis the page script redraws: ticks in one unit for the view, titled with it.
std::string ViewAxis(const View& v, double y) {
  const TimeUnit unit = PickTimeUnit(v.v1 - v.v0);
  std::string axis = AxisX(v.v0 / unit.ns, v.v1 / unit.ns, y, kX0, kPlotW, std::string("time into the trace (") + unit.name + ")");
  // AxisX opens with <g class="axis axis-x">: the script needs the row and the title's words.
  axis.insert(axis.find('>'), StrFormat(" data-y=\"%.2f\" data-axis-title=\"time into the trace\"", y));
  return axis;
}

struct Drawn {  // the drawn iteration, into the trace
  bool present = false;
  double start = 0, duration = 0;
};
Drawn DrawnIteration(const json& doc) {
  const json& tl = Object(doc, "timeline");
  Drawn d;
  auto duration = Number(tl, "duration_ns");
  if (!Find(tl, "start_ns") || !duration || !Find(tl, "iteration") || !Find(tl, "iteration")->is_number()) return d;
  d.present = true;
  d.start = Since(Int(tl, "start_ns"), TraceOrigin(doc));
  d.duration = *duration;
  return d;
}

// The name of the item that ends where a gap starts and the one that starts where it ends.
std::string Between(const json& tl, int64_t device, double from, double to) {
  std::string before, after;
  double best_before = -1, best_after = -1;
  for (const json& lane : Array(tl, "lanes")) {
    if (IdOf(lane, "device") != device) continue;
    for (const json& r : Array(lane, "items")) {
      Row row;
      if (!ReadRow(r, &row)) continue;
      const double end = row.start + row.duration;
      if (end <= from + 0.5 && end > best_before) best_before = end, before = row.name;
      if (row.start >= to - 0.5 && (best_after < 0 || row.start < best_after)) best_after = row.start, after = row.name;
    }
  }
  if (before.empty() && after.empty()) return "";
  return (before.empty() ? "(iteration start)" : before) + " -> " + (after.empty() ? "(iteration end)" : after);
}

// The idle cause of the device's gap that starts at `start` (trace clock), from the devices'
// listed gaps; "" when none of them is that gap.
std::string CauseOf(const json& doc, int64_t device, int64_t start) {
  for (const json& d : Array(doc, "devices")) {
    if (IdOf(d, "device") != device) continue;
    const json& gaps = Object(d, "gaps");
    for (const json* list : {&Array(gaps, "largest"), &Array(Object(gaps, "in_iterations"), "largest")})
      for (const json& g : *list)
        if (Int(g, "start_ns", -1) == start && !Text(g, "cause").empty()) return Text(g, "cause");
  }
  return "";
}

}  // namespace

int64_t TraceOrigin(const json& doc) {
  if (Find(Object(doc, "window"), "start_ns")) return Int(Object(doc, "window"), "start_ns");
  return Int(Object(doc, "timeline"), "start_ns");
}

std::vector<NumberedGap> NumberGaps(const json& doc) {
  const int64_t origin = TraceOrigin(doc);
  const json& tl = Object(doc, "timeline");
  const Drawn drawn = DrawnIteration(doc);
  std::vector<NumberedGap> out;
  auto inside = [&](double s, double d) { return drawn.present && s + d > drawn.start && s < drawn.start + drawn.duration; };
  for (const json& f : Array(doc, "findings"))
    for (const json& v : Array(f, "involved")) {
      if (Text(v, "kind") != "gap" || !Find(v, "start_ns")) continue;
      const int64_t clock = Int(v, "start_ns"), device = IdOf(v, "device");
      auto same = [&](const NumberedGap& g) { return g.device == device && g.clock_ns == clock; };
      auto it = std::find_if(out.begin(), out.end(), same);
      if (it == out.end()) {
        if (out.size() >= kNumberedGaps) continue;
        NumberedGap g;
        g.number = static_cast<int>(out.size()) + 1;
        g.device = device;
        g.start_ns = Since(clock, origin);
        g.clock_ns = clock;
        g.duration_ns = Number(v, "time_ms").value_or(0) * 1e6;
        g.between = Text(v, "name");
        g.cause = CauseOf(doc, device, clock);
        g.in_drawn = inside(g.start_ns, g.duration_ns);
        out.push_back(std::move(g));
        it = out.end() - 1;
      }
      if (std::find(it->findings.begin(), it->findings.end(), Text(f, "id")) == it->findings.end())
        it->findings.push_back(Text(f, "id"));
    }
  // Then the drawn iteration's own longest gaps.
  std::vector<const json*> own;
  for (const json& g : Array(tl, "gaps")) own.push_back(&g);
  std::stable_sort(own.begin(), own.end(), [](const json* a, const json* b) {
    return Number(*a, "duration_ns").value_or(0) > Number(*b, "duration_ns").value_or(0);
  });
  for (const json* g : own) {
    if (out.size() >= kNumberedGaps) break;
    const int64_t device = IdOf(*g, "device");
    int64_t clock = 0;
    if (__builtin_add_overflow(Int(tl, "start_ns"), Int(*g, "start_offset_ns"), &clock)) continue;
    const double start = Since(clock, origin);
    const double duration = Number(*g, "duration_ns").value_or(0);
    if (duration <= 0) continue;
    if (std::any_of(out.begin(), out.end(), [&](const NumberedGap& n) { return n.device == device && n.clock_ns == clock; }))
      continue;
    NumberedGap n;
    n.number = static_cast<int>(out.size()) + 1;
    n.device = device;
    n.start_ns = start;
    n.clock_ns = clock;
    n.duration_ns = duration;
    n.between = Between(tl, device, start - drawn.start, start - drawn.start + duration);
    n.cause = CauseOf(doc, device, clock);
    n.in_drawn = true;
    out.push_back(std::move(n));
  }
  return out;
}

int GapNumberOf(const std::vector<NumberedGap>& gaps, const json& involved) {
  if (!Find(involved, "start_ns") || Text(involved, "kind") != "gap") return 0;
  const int64_t clock = Int(involved, "start_ns"), device = IdOf(involved, "device");
  for (const NumberedGap& g : gaps)
    if (g.device == device && g.clock_ns == clock) return g.number;
  return 0;
}

namespace {

// The overview: the kept iterations (the drawn one darker), each GPU's busy share per bin as the
// opacity of its row, the numbered gaps above the rows, the view's window (moved by the script).
std::string OverviewSvg(const json& doc, const std::vector<NumberedGap>& gaps, const Drawn& drawn) {
  const json& ov = Object(Object(doc, "timeline"), "overview");
  auto duration = Number(ov, "duration_ns");
  auto bin = Number(ov, "bin_ns");
  if (!duration || !bin || *duration <= 0 || *bin <= 0) return "";
  const double from = Since(Int(ov, "start_ns"), TraceOrigin(doc)), to = from + *duration;
  const json& devices = Array(ov, "devices");
  const double row_h = 16, top = 22;
  const double height = top + 14 + static_cast<double>(devices.size()) * (row_h + 4) + 40;
  auto x = [&](double t) { return kX0 + (t - from) / (to - from) * kPlotW; };
  std::string out = SvgOpen(height, "Overview of the whole trace: iterations and each GPU's busy share", "tl-overview fit");
  out.insert(out.find("<svg") + 4, StrFormat(" id=\"tl-overview\" data-x0=\"%.2f\" data-w=\"%.2f\" data-t0=\"%.0f\" data-t1=\"%.0f\"",
                                             kX0, kPlotW, from, to));
  double y = top;
  out += SvgText(kX0 - 8, y + 11, "lane-label", "iterations");
  for (const json& it : Array(ov, "iterations")) {
    if (!it.is_array() || it.size() < 2 || !it[0].is_number() || !it[1].is_number()) continue;
    const double s = from + it[0].get<double>(), d = it[1].get<double>();
    const bool is_drawn = drawn.present && s == drawn.start;
    out += SvgRect(x(s), y, std::max(x(s + d) - x(s), 0.8), 12, is_drawn ? "ov-drawn" : "ov-iter",
                   (is_drawn ? "the drawn iteration: " : "iteration: ") + AtText(s) + ", " + DurationText(d));
  }
  y += 18;
  std::map<int64_t, double> device_y;
  for (const json& dev : devices) {
    const int64_t id = IdOf(dev, "device");
    device_y[id] = y;
    out += SvgText(kX0 - 8, y + 12, "lane-label", "GPU " + IdText(id) + " busy");
    out += SvgRect(kX0, y, kPlotW, row_h, "lane");
    const json& bins = Array(dev, "busy_ns");
    for (size_t b = 0; b < bins.size(); ++b) {
      const double busy = bins[b].is_number() ? bins[b].get<double>() : 0;
      if (busy <= 0) continue;
      const double s = from + static_cast<double>(b) * *bin, share = std::min(1.0, busy / *bin);
      out += StrFormat("<rect class=\"busy\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill-opacity=\"%.2f\">",
                       x(s), y, std::max(x(s + *bin) - x(s), 0.5), row_h, 0.15 + 0.85 * share) +
             "<title>" + Esc(StrFormat("GPU %s busy %.0f%% of ", IdText(id).c_str(), share * 100) + DurationText(*bin) +
                             " at " + AtText(s)) +
             "</title></rect>\n";
    }
    y += row_h + 4;
  }
  View whole{from, to};
  for (const NumberedGap& g : gaps) {
    auto at = device_y.find(g.device);
    const double gy = at == device_y.end() ? top - 9 : at->second + row_h / 2;
    std::string mark = whole.Mark(g.start_ns, g.duration_ns, gy, std::to_string(g.number),
                                  StrFormat("gap %d: ", g.number) + DurationText(g.duration_ns) + " at " + AtText(g.start_ns));
    mark.replace(mark.find(" data-s="), mark.find(" transform=") - mark.find(" data-s="), "");  // static: no data-s
    out += mark;
  }
  if (drawn.present)
    out += StrFormat("<rect class=\"ov-window\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n", x(drawn.start),
                     top - 2, std::max(x(drawn.start + drawn.duration) - x(drawn.start), 2.0), y - top + 2);
  const TimeUnit unit = PickTimeUnit(to - from);
  out += AxisX(from / unit.ns, to / unit.ns, y + 4, kX0, kPlotW, std::string("time into the trace (") + unit.name + ")");
  return out + "</svg>\n";
}

// The zoomable view of the drawn iteration. Rows, top to bottom: each host thread's calls and
// ranges (nesting as rows), then per GPU a row for the numbered gaps and one lane per stream with
// the device-idle intervals shaded under the work.
std::string DetailSvg(const json& doc, const std::vector<NumberedGap>& gaps, const Drawn& drawn, View* first) {
  const json& tl = Object(doc, "timeline");
  const json& lanes = Array(tl, "lanes");
  const json& host = Array(tl, "host");
  // The full range (work may begin before the span) and the GPU work's extent.
  double t0 = drawn.start, t1 = drawn.start + drawn.duration, g0 = 0, g1 = 0;
  bool any_gpu = false;
  for (const json& lane : lanes)
    for (const json& r : Array(lane, "items")) {
      Row row;
      if (!ReadRow(r, &row)) continue;
      const double s = drawn.start + row.start, e = s + row.duration;
      t0 = std::min(t0, s), t1 = std::max(t1, e);
      g0 = any_gpu ? std::min(g0, s) : s, g1 = any_gpu ? std::max(g1, e) : e, any_gpu = true;
    }
  if (t1 <= t0) t1 = t0 + 1;
  double f0 = t0, f1 = t1;
  if (any_gpu && g1 > g0) {
    const double pad = (g1 - g0) * 0.02;
    f0 = std::max(t0, g0 - pad), f1 = std::min(t1, g1 + pad);
  }
  // Without iteration markers the span may hold a long host-only stretch: open on the GPU work
  // when it covers less than 40% of the span, so it is not squeezed into a few pixels.
  const bool fit = any_gpu && (f1 - f0) < 0.4 * (t1 - t0);
  View v{fit ? f0 : t0, fit ? f1 : t1};
  *first = v;

  const double call_h = 15, range_h = 13, lane_h = 20, lane_gap = 4, mark_h = 20;
  std::string body;
  double y = 6;
  size_t lane_index = 0;
  auto lane_bg = [&](double ly, double h) {
    body += StrFormat("<rect class=\"lane\" data-lane=\"%zu\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n",
                      lane_index, kX0, ly, kPlotW, h);
  };
  // The critical path (analyze --critical-path): a lane of its own on top, and each segment
  // outlined where it ran (a GPU stream's lane, a host thread's calls) once the lanes are placed.
  const std::vector<PathRow> path = ReadPath(tl);
  std::map<int64_t, double> thread_y;                      // tid -> its calls' (or ranges') row
  std::map<std::pair<int64_t, int64_t>, double> stream_y;  // (device, stream) -> its lane
  auto path_title = [&](const PathRow& p) {
    return "critical path: " + p.kind + (p.name.empty() ? std::string() : " (" + p.name + ")") + ", " +
           DurationText(p.duration) + " at " + AtText(drawn.start + p.start);
  };
  if (!path.empty()) {
    body += SvgText(kX0 - 8, y + 12, "lane-label group-label", "critical path");
    lane_bg(y, call_h);
    for (const PathRow& p : path)
      body += v.Rect(drawn.start + p.start, p.duration, y, call_h, PathClass(p.kind), 0.5, path_title(p));
    ++lane_index;
    y += call_h + lane_gap + 4;
  }
  for (const json& thread : host) {
    std::vector<Row> calls, ranges;
    int depth = 0;
    for (const json& r : Array(thread, "items")) {
      Row row;
      if (!ReadRow(r, &row)) continue;
      if (row.kind == "range") {
        row.depth = std::clamp(row.depth, 0, 2);
        depth = std::max(depth, row.depth + 1);
        ranges.push_back(std::move(row));
      } else {
        calls.push_back(std::move(row));
      }
    }
    const std::string who = "thread " + IdText(IdOf(thread, "tid"));
    thread_y.emplace(IdOf(thread, "tid"), y);
    if (!calls.empty()) {
      body += SvgText(kX0 - 8, y + 12, "lane-label", who);
      lane_bg(y, call_h);
      for (const Row& c : calls)
        body += v.Rect(drawn.start + c.start, c.duration, y, call_h, HostClass(c.kind), 0.5,
                       c.name + " (" + c.kind + " call): " + DurationText(c.duration) + " at " + AtText(drawn.start + c.start));
      ++lane_index;
      y += call_h + lane_gap;
    }
    if (!ranges.empty()) {
      body += SvgText(kX0 - 8, y + 11, "lane-label", calls.empty() ? who + " ranges" : std::string("ranges"));
      lane_bg(y, range_h * depth);
      for (const Row& r : ranges)
        body += v.Rect(drawn.start + r.start, r.duration, y + range_h * r.depth, range_h, "range", 0.5,
                       r.name + " (range): " + DurationText(r.duration) + " at " + AtText(drawn.start + r.start));
      ++lane_index;
      y += range_h * depth + lane_gap;
    }
  }
  if (!host.empty()) y += 4;
  // GPU lanes grouped by device; the gaps of the timeline are each device's idle intervals.
  std::map<int64_t, std::vector<const json*>> by_device;
  for (const json& lane : lanes) by_device[IdOf(lane, "device")].push_back(&lane);
  for (const auto& [device, device_lanes] : by_device) {
    body += SvgText(kX0 - 8, y + 14, "lane-label group-label", "GPU " + IdText(device));
    const double mark_y = y + mark_h / 2;
    for (const NumberedGap& g : gaps)
      if (g.in_drawn && g.device == device)
        body += v.Mark(g.start_ns, g.duration_ns, mark_y, std::to_string(g.number),
                       StrFormat("gap %d: GPU %s idle ", g.number, IdText(device).c_str()) + DurationText(g.duration_ns) +
                           " at " + AtText(g.start_ns));
    y += mark_h + 2;
    for (const json* lane : device_lanes) {
      const std::string label = "stream " + IdText(IdOf(*lane, "stream"));
      std::string title = "GPU " + IdText(device) + " " + label;
      if (auto busy = Number(*lane, "busy_ns"); busy) title += ": stream busy " + DurationText(*busy);
      body += SvgText(kX0 - 8, y + 14, "lane-label", label);
      stream_y.emplace(std::pair{device, IdOf(*lane, "stream")}, y);
      lane_bg(y, lane_h);
      for (const json& g : Array(tl, "gaps")) {
        if (IdOf(g, "device") != device) continue;
        const double s = drawn.start + Number(g, "start_offset_ns").value_or(0), d = Number(g, "duration_ns").value_or(0);
        body += v.Rect(s, d, y + 1, lane_h - 2, "gap", 0,
                       "GPU " + IdText(device) + " idle " + DurationText(d) + " at " + AtText(s),
                       StrFormat(" data-lane=\"%zu\"", lane_index));
      }
      for (const json& r : Array(*lane, "items")) {
        Row row;
        if (!ReadRow(r, &row)) continue;
        body += v.Rect(drawn.start + row.start, row.duration, y, lane_h, GpuClass(row.kind), 0.5,
                       row.name + " (" + ClassWord(row.kind) + "): " + DurationText(row.duration) + " at " +
                           AtText(drawn.start + row.start));
      }
      ++lane_index;
      y += lane_h + lane_gap;
    }
  }
  for (const PathRow& p : path) {
    if (p.gpu) {
      if (auto at = stream_y.find({p.device, p.stream}); at != stream_y.end())
        body += v.Rect(drawn.start + p.start, p.duration, at->second, lane_h, "cp-mark", 0.5, path_title(p));
    } else if (p.kind != "host_compute" && p.kind != "unattributed") {
      if (auto at = thread_y.find(p.tid); at != thread_y.end())
        body += v.Rect(drawn.start + p.start, p.duration, at->second, call_h, "cp-mark", 0.5, path_title(p));
    }
  }
  for (const char* key : {"marker_start_offset_ns", "marker_end_offset_ns"})
    if (auto m = Number(tl, key)) {
      const double t = drawn.start + *m, x = v.X(t);
      const bool shown = x >= kX0 && x <= kX0 + kPlotW;
      body += StrFormat("<line class=\"marker\" data-s=\"%.0f\" x1=\"%.2f\" y1=\"2\" x2=\"%.2f\" y2=\"%.2f\"%s><title>", t, x, x,
                        y, shown ? "" : " style=\"display:none\"") +
              Esc(std::string(key == std::string_view("marker_start_offset_ns") ? "iteration marker start" : "iteration marker end") +
                  " at " + AtText(t)) +
              "</title></line>\n";
    }
  body += ViewAxis(v, y + 2);
  const double height = y + 40;
  std::string out = SvgOpen(height, "Timeline of one iteration: host calls and ranges, GPU streams, idle gaps", "tl-zoom fit");
  out.insert(out.find("<svg") + 4,
             StrFormat(" id=\"tl-detail\" data-overview=\"tl-overview\" data-x0=\"%.2f\" data-w=\"%.2f\" data-t0=\"%.0f\" "
                       "data-t1=\"%.0f\" data-v0=\"%.0f\" data-v1=\"%.0f\" data-f0=\"%.0f\" data-f1=\"%.0f\"",
                       kX0, kPlotW, t0, t1, v.v0, v.v1, f0, f1));
  return out + body + "</svg>\n";
}

std::string GapTable(const std::vector<NumberedGap>& gaps) {
  if (gaps.empty()) return "";
  std::string out =
      "<div class=\"tablewrap\"><table class=\"gaps\"><thead><tr><th class=\"num\">Gap</th><th class=\"num\">At (ms into "
      "the trace)</th><th class=\"num\">Length</th><th>GPU</th><th>Between</th><th>Cause</th><th>Cited by</th></tr>"
      "</thead><tbody>\n";
  for (const NumberedGap& g : gaps) {
    std::string cited;
    for (const std::string& f : g.findings) cited += (cited.empty() ? "" : ", ") + f;
    out += StrFormat("<tr id=\"gap-%d\"><td class=\"num\"><span class=\"gapref\">%d</span></td><td class=\"num\">%.3f</td>"
                     "<td class=\"num\">",
                     g.number, g.number, g.start_ns / 1e6) +
           Esc(DurationText(g.duration_ns)) + "</td><td>" + Esc(IdText(g.device)) + "</td><td class=\"name\" title=\"" +
           Esc(g.between) + "\">" + Esc(g.between.empty() ? "-" : Cut(g.between, 70)) + "</td><td>" +
           Esc(g.cause.empty() ? "-" : g.cause) + "</td><td>" + Esc(cited.empty() ? "-" : cited) +
           (g.in_drawn ? "" : " <span class=\"note\">(another iteration)</span>") + "</td></tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

}  // namespace

std::string TimelineHtml(const json& doc, const std::vector<NumberedGap>& gaps) {
  const json& tl = Object(doc, "timeline");
  const Drawn drawn = DrawnIteration(doc);
  std::string out;
  if (drawn.present) {
    out += StrFormat("<p>Iteration %.0f", Number(tl, "iteration").value_or(0));
    if (!Text(tl, "name").empty()) out += " (<span class=\"name\">" + Esc(Text(tl, "name")) + "</span>)";
    out += ", " + Esc(Text(tl, "selection")) + ": " + Esc(DurationText(drawn.duration)) + " from " +
           Esc(AtText(drawn.start)) + ". Red shading: the GPU is idle (no kernel, copy or memset on any of its streams); " +
           "numbered: the gaps the findings cite and this iteration's longest.</p>\n";
  } else {
    std::string why = Text(tl, "iteration_reason");
    out += "<p class=\"na\">No iteration to draw: " + Esc(why.empty() ? "this report has no timeline" : why) + ".</p>\n";
  }
  out += "<p class=\"legend-line\">GPU:<span class=\"key kernel\"></span>compute<span class=\"key collective\"></span>"
         "communication<span class=\"key memcpy\"></span>copy<span class=\"key memset\"></span>memset"
         "<span class=\"key gap\"></span>idle &nbsp; host:<span class=\"key launch\"></span>launch"
         "<span class=\"key sync\"></span>sync/wait<span class=\"key copy\"></span>copy call<span class=\"key api\"></span>"
         "other call<span class=\"key range\"></span>range</p>\n";
  if (const json* cp = Find(tl, "critical_path"); cp && cp->is_object()) {
    out +=
        "<p class=\"legend-line\">critical path (its own lane on top; outlined in the lanes where it ran):"
        "<span class=\"key cp-host\"></span>host compute<span class=\"key cp-delay\"></span>launch delay"
        "<span class=\"key cp-gap\"></span>stream gap, with the GPU and host colours above for work and calls";
    const double cp_dropped = Number(*cp, "segments_dropped").value_or(0);
    if (cp_dropped > 0)
      out += Esc(StrFormat(" (%.0f of its %.0f segments, the shortest, are not drawn)", cp_dropped,
                           Number(*cp, "segments_total").value_or(0)));
    out += "</p>\n";
  }
  out += OverviewSvg(doc, gaps, drawn);
  if (!drawn.present) return out;
  if (Array(tl, "lanes").empty() && Array(tl, "host").empty())
    return out + "<p class=\"na\">n/a: the iteration has no GPU work</p>\n";
  View first;
  const std::string detail = DetailSvg(doc, gaps, drawn, &first);
  out += "<div class=\"tools tl-tools\" data-for=\"tl-detail\"><button type=\"button\" data-act=\"in\">zoom in</button>"
         "<button type=\"button\" data-act=\"out\">zoom out</button><button type=\"button\" data-act=\"fit\">GPU work</button>"
         "<button type=\"button\" data-act=\"all\">whole iteration</button><span class=\"tl-view\"></span>"
         "<span class=\"note\">drag to pan, double-click to zoom in (shift: out), ctrl+wheel to zoom</span></div>\n";
  if (first.v0 > drawn.start + 0.5 || first.v1 < drawn.start + drawn.duration - 0.5)
    out += "<p class=\"note\">Opened on the GPU work (" + Esc(StrFormat("%.3f-%.3f ms", first.v0 / 1e6, first.v1 / 1e6)) +
           " into the trace): the iteration's span is mostly host time. \"whole iteration\" shows all of it.</p>\n";
  out += detail;
  const double dropped = Number(tl, "items_dropped").value_or(0);
  if (dropped > 0)
    out += "<p class=\"note\">" +
           Esc(StrFormat("%.0f of %.0f GPU items are not drawn (the shortest; the report lists at most %.0f); the idle "
                         "shading counts every item.",
                         dropped, Number(tl, "items_total").value_or(0), Number(tl, "item_cap").value_or(0))) +
           "</p>\n";
  return out + GapTable(gaps);
}

}  // namespace tg::internal
