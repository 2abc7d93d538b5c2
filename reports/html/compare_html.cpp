// ComparisonHtml: the comparison page of `compare --html` and `gate --html`
// (tracegate/reports/compare_html.h). The charts are in compare_charts.cpp; the phases reuse the
// report's stacked bars (reports/view/report_svg.h).
#include "tracegate/reports/compare_html.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "reports/document/report_document.h"
#include "reports/gate/compare_internal.h"
#include "reports/html/compare_charts.h"
#include "reports/view/report_svg.h"
#include "reports/view/report_view.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/analyzer/strings.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/report_html.h"

namespace tg {

namespace {

using namespace internal;

constexpr size_t kFamilyRows = 15;
constexpr size_t kVariantsShown = 8;

std::string Esc(std::string_view s) { return HtmlEscape(RepairUtf8(s)); }

constexpr const char* kStyle = R"css(
body { margin: 0; background: #f5f6f8; color: #1c2230; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
header, main, footer { max-width: 1280px; margin: 0 auto; padding: 0 20px; }
header { padding-top: 18px; }
h1 { font-size: 21px; margin: 0 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 16px; margin: 26px 0 8px; }
section { background: #fff; border: 1px solid #e0e3e9; border-radius: 6px; padding: 6px 16px 12px; margin-bottom: 12px; }
p { margin: 6px 0; }
.sub { color: #4b5466; overflow-wrap: anywhere; }
.banner { border-width: 2px; padding: 10px 16px; }
.banner.pass { border-color: #3d8b40; background: #f1f8f1; }
.banner.regression { border-color: #c62828; background: #fdf0ef; }
.banner.cannot_judge { border-color: #b7791f; background: #fdf7ec; }
.banner .verdict { font-size: 22px; font-weight: 700; letter-spacing: 0.02em; }
.pass .verdict { color: #2e6b31; } .regression .verdict { color: #a11d1d; } .cannot_judge .verdict { color: #8a5a12; }
.banner .line { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12.5px; overflow-wrap: anywhere; }
.figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(210px, 1fr)); gap: 8px; margin-top: 8px; }
.figure { background: #fff; border: 1px solid #e0e3e9; border-radius: 5px; padding: 5px 10px; min-width: 0; }
.figure .k { color: #5b6475; font-size: 12px; } .figure .v { font-size: 16px; font-weight: 600; overflow-wrap: anywhere; }
ul.caveats { list-style: none; padding: 0; margin: 6px 0; }
ul.caveats li { padding: 3px 8px 3px 10px; margin: 3px 0; border-left: 4px solid #9aa1ad; overflow-wrap: anywhere; }
ul.caveats li.error { border-color: #c62828; background: #fdf0ef; }
ul.caveats li.warning { border-color: #d08a1e; background: #fdf7ec; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #eceef2; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.name { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; overflow-wrap: anywhere; }
.name summary { cursor: pointer; } .name ul { margin: 4px 0; padding-left: 18px; }
.scroll { overflow-x: auto; }
table.families td.name { min-width: 240px; }
.na { color: #8a6d1f; font-size: 12px; }
.up { color: #a11d1d; } .down { color: #2e6b31; }
svg.chart { display: block; margin: 8px 0; min-width: 960px; }
svg text { font: 12px system-ui, sans-serif; fill: #1c2230; }
svg .lane-label, svg .end { text-anchor: end; }
svg .tick-label, svg .axis-title { text-anchor: middle; fill: #5b6475; }
svg .axis-title.end { text-anchor: end; }
svg .side-title { font-weight: 600; }
svg .axis, svg .tick { stroke: #9aa1ad; } svg .connector { stroke: #9aa1ad; stroke-dasharray: 2 2; }
svg .marker, svg .mean { stroke: #1c2230; stroke-width: 2; } svg .marker { stroke-width: 1; stroke-dasharray: 4 3; }
svg .limit { stroke: #c62828; stroke-width: 1.5; stroke-dasharray: 5 3; } svg .hit { fill: transparent; }
svg .iteration-end { stroke: #1c2230; stroke-dasharray: 3 2; }
.lane { fill: #eceef2; } .ci { fill: #f2c14e; fill-opacity: 0.45; }
.side-base { fill: #4e79a7; stroke: #4e79a7; } .side-new { fill: #e8772e; stroke: #e8772e; }
.hist-base { fill: #4e79a7; fill-opacity: 0.5; } .hist-new { fill: #e8772e; fill-opacity: 0.5; }
.rug { stroke-width: 1.5; }
.wf-total { fill: #7a8191; } .wf-up { fill: #d9534f; } .wf-down { fill: #4caf50; }
.kernel { fill: #4e79a7; } .collective { fill: #b07aa1; } .memcpy { fill: #f28e2b; } .memset { fill: #9c755f; }
.phase-pre { fill: #76b7b2; } .phase-h2d { fill: #f28e2b; } .phase-infer { fill: #4e79a7; }
.phase-d2h { fill: #e15759; } .phase-post { fill: #59a14f; } .phase-idle { fill: #bab0ac; }
footer { color: #5b6475; font-size: 12px; padding-bottom: 22px; }
)css";

std::string Signed(double v, int decimals) { return FormatSigned(v, decimals); }
// A chart in a box that scrolls sideways on a narrow screen, so its text stays readable.
std::string Chart(const std::string& svg) { return "<div class=\"scroll\">" + svg + "</div>\n"; }
std::string DeltaClass(double v, bool higher_is_worse = true) {
  if (v == 0) return "";
  return (v > 0) == higher_is_worse ? " up" : " down";
}

void Head(std::ostream& out, const Comparison& c) {
  const std::string title = "tracegate: " + c.base.label + " vs " + c.next.label;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "img-src data:\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<link rel=\"icon\" href=\"data:,\">\n<title>" << Esc(title) << "</title>\n<style>" << kStyle
      << "</style>\n</head>\n<body>\n<header>\n<h1>tracegate: base against new</h1>\n<p class=\"sub\">base <span "
         "class=\"name\">"
      << Esc(c.base.label) << "</span> · new <span class=\"name\">" << Esc(c.next.label) << "</span> · threshold "
      << Esc(Signed(c.options.threshold_pct, -1))
      << (c.serving.applies ? "% on ms per token in each serving step group" : "% on avg_latency_ms")
      << (c.options.require_significance ? ", significance required" : "")
      << (c.options.has_kernel_threshold ? ", kernel families " + Signed(c.options.kernel_threshold_pct, -1) + "%"
                                         : std::string())
      << "</p>\n</header>\n<main>\n";
}

void Figure(std::ostream& out, const std::string& key, const std::string& value, const std::string& cls = "") {
  out << "<div class=\"figure\"><div class=\"k\">" << Esc(key) << "</div><div class=\"v" << cls << "\">" << Esc(value)
      << "</div></div>\n";
}

void Banner(std::ostream& out, const Comparison& c) {
  out << "<section class=\"banner " << VerdictName(c.verdict) << "\" id=\"verdict\">\n<div class=\"verdict\">"
      << Esc(VerdictHeading(c.verdict)) << "</div>\n<p class=\"line\">" << Esc(c.verdict_text) << "</p>\n";
  out << "<div class=\"figures\">\n";
  if (c.serving.applies)
    Figure(out, "serving step groups (ms per token)",
           std::to_string(c.serving.judged) + " judged, " + std::to_string(c.serving.regressions) + " over the limit" +
               (c.serving.workload_changed ? ", workload changed" : ""),
           c.serving.regressions > 0 ? " up" : "");
  if (c.has_latency) {
    Figure(out, "avg latency per iteration", Ms(c.base_latency_ms) + " -> " + Ms(c.new_latency_ms) + " ms");
    Figure(out,
           c.serving.applies ? "change (not judged: serving steps are judged per group)"
                             : "change (limit " + Signed(c.options.threshold_pct, -1) + "%)",
           Signed(c.latency_delta_ms, 3) + " ms, " + Signed(c.latency_delta_pct, 2) + "%",
           DeltaClass(c.latency_delta_ms));
  }
  if (c.bootstrap.ok)
    Figure(out, StrFormat("%g%% interval of the change (bootstrap)", c.bootstrap.confidence * 100),
           Signed((c.bootstrap.lo - 1) * 100, 2) + "% to " + Signed((c.bootstrap.hi - 1) * 100, 2) + "%");
  else Figure(out, "interval of the change", "n/a: " + c.bootstrap.reason);
  if (c.mann_whitney.ok)
    Figure(out, "Mann-Whitney U test",
           "p = " + FormatP(c.mann_whitney.p_two_sided) + ", " + (c.significant ? "significant" : "not significant") +
               " at " + FormatNumber(c.options.alpha, -1));
  for (const MetricDelta& m : c.metrics)
    if (m.key == "kernel_ms_per_iter" && m.has_base && m.has_new)
      Figure(out, "kernel GPU time per iteration", Ms(m.base) + " -> " + Ms(m.next) + " ms", DeltaClass(m.delta));
  out << "</div>\n</section>\n";
}

void Caveats(std::ostream& out, const Comparison& c) {
  out << "<h2 id=\"caveats\">Data quality and devices</h2>\n<section>\n<ul class=\"caveats\">\n";
  for (const CompareProblem& p : c.problems)
    out << "<li class=\"error\">" << Esc("Cannot judge (" + p.check + "): " + p.message) << "</li>\n";
  if (!c.base.devices.empty() && c.base.devices == c.next.devices) {
    std::string names;
    for (const std::string& d : c.base.devices) names += (names.empty() ? "" : ", ") + d;
    out << "<li>" << Esc("Devices: both runs on " + names) << "</li>\n";
  }
  for (const SideInfo* s : {&c.base, &c.next})
    if (s->has_quality && s->error_counters.empty() && s->warning_counters.empty())
      out << "<li>" << (s == &c.base ? "Data quality, base" : "Data quality, new")
          << ": no error- or warning-level counter is set</li>\n";
  for (const Caveat& k : ComparisonCaveats(c))
    out << "<li" << (k.warning ? " class=\"warning\"" : "") << ">" << Esc(k.text) << "</li>\n";
  out << "</ul>\n</section>\n";
}

// Serving reports on both sides: the step groups' table, the cells the terminal and the Markdown
// print (ServingRow), then the workload change.
void Serving(std::ostream& out, const Comparison& c) {
  const ServingComparison& s = c.serving;
  if (!s.applies) return;
  const std::string limit = ServingLimitText(c), ci = FormatNumber(kServingConfidence * 100, -1) + "%";
  out << "<h2 id=\"serving\">Serving step groups (ms per token)</h2>\n<section>\n<p>"
      << Esc("Serving runs are judged per step group (step kind x power-of-two token bucket), not on avg_latency_ms, "
             "which follows the batch mix. ms per token: the group's summed step latency / summed tokens; change: "
             "new / base - 1, with its " +
             ci + " percentile bootstrap interval over the group's steps (" + std::to_string(kServingResamples) +
             " resamples); q: the one-sided p-value of \"at most " + limit +
             " slower\", Benjamini-Hochberg-adjusted across the judged groups. A group fails when it is over the " +
             limit + " limit with q < " + FormatNumber(c.options.alpha, -1) + "; groups with fewer than " +
             std::to_string(kServingMinSteps) + " steps on a side are listed, not judged.")
      << "</p>\n<div class=\"scroll\"><table class=\"serving\"><tr><th>Step group</th><th class=\"num\">Steps base / "
         "new</th><th class=\"num\">Share of steps base / new</th><th class=\"num\">Base ms/token</th><th "
         "class=\"num\">New ms/token</th><th class=\"num\">Change</th><th class=\"num\">"
      << Esc(ci) << " CI</th><th class=\"num\">q</th><th>Verdict</th></tr>\n";
  for (const ServingGroupDelta& g : s.groups) {
    const ServingRowCells r = ServingRow(g);
    const std::string verdict = g.regression ? "<strong class=\"up\">" + Esc(r.verdict) + "</strong>"
                                : g.judged   ? Esc(r.verdict)
                                             : "<span class=\"na\">" + Esc(r.verdict) + "</span>";
    out << "<tr><td class=\"name\">" << Esc(r.group) << "</td><td class=\"num\">" << Esc(r.steps)
        << "</td><td class=\"num\">" << Esc(r.shares) << "</td><td class=\"num\">" << Esc(r.base_ms_per_token)
        << "</td><td class=\"num\">" << Esc(r.new_ms_per_token) << "</td><td class=\"num"
        << (g.over_threshold                 ? " up"
            : g.judged && g.bootstrap.hi < 1 ? " down"
                                             : "")
        << "\">" << Esc(r.change) << "</td><td class=\"num\">" << Esc(r.interval) << "</td><td class=\"num\">"
        << Esc(r.q) << "</td><td>" << verdict << "</td></tr>\n";
  }
  out << "</table></div>\n";
  if (!s.no_match.empty()) out << "<p class=\"na\">" << Esc(s.no_match) << ".</p>\n";
  if (s.workload_changed)
    out << "<ul class=\"caveats\"><li class=\"warning\">" << Esc(s.workload_text) << "</li></ul>\n";
  else
    out << "<p>"
        << Esc("Same workload: every group on both sides, the step mix shifted by " +
               FormatNumber(s.step_mix_distance * 100, 1) + "% (" + FormatNumber(kServingMixLimit * 100, -1) +
               "% or more is a workload change).")
        << "</p>\n";
  out << "</section>\n";
}

void Latency(std::ostream& out, const Comparison& c, const PageSide& base, const PageSide& next) {
  out << "<h2 id=\"latency\">Latency per iteration</h2>\n<section>\n<p>Each tick is one kept iteration "
         "(latency_samples_ms); the heavy line is the run's mean, the dashed red line the gate's limit. ";
  if (c.bootstrap.ok)
    out << "The shaded band is where the new mean lies by the "
        << Esc(StrFormat("%g%% percentile bootstrap interval of mean(new) / mean(base) (%d resamples): ",
                         c.bootstrap.confidence * 100, c.bootstrap.resamples))
        << Esc(FormatNumber(c.bootstrap.ratio, 4) + " [" + FormatNumber(c.bootstrap.lo, 4) + ", " +
               FormatNumber(c.bootstrap.hi, 4) + "]")
        << ", times the base mean.";
  else out << "No interval: " << Esc(c.bootstrap.reason) << ".";
  if (c.serving.applies)
    out << " Serving runs: the iterations are engine steps of mixed sizes, so the mean follows the batch mix and the "
           "limit line is not the gate; the step groups above are.";
  out << "</p>\n" << Chart(LatencyOverlaySvg(c, base, next)) << "</section>\n";
}

// The families' kernels, by full name: a family's variants.
std::vector<const KernelDelta*> Variants(const Comparison& c, const FamilyDelta& f) {
  std::vector<const KernelDelta*> out;
  for (const KernelDelta& k : c.kernels)
    if (KernelFamilyName(k.name) == f.name || (f.variants == 1 && ShortKernelName(k.name) == f.name)) out.push_back(&k);
  return out;
}

void Families(std::ostream& out, const Comparison& c) {
  out << "<h2 id=\"kernels\">Kernel GPU time by family</h2>\n<section>\n<p>From the base's kernel GPU time per "
         "iteration to the new one's: one step per kernel family (a kernel's template instantiations summed, "
         "variants netted), largest move first. Kernel time is summed over streams; on overlapping streams it can "
         "exceed its effect on latency.</p>\n"
      << Chart(FamilyWaterfallSvg(c));
  if (c.families.empty()) {
    out << "<p class=\"na\">No kernel family changed beyond noise (1% of its base and 0.001 ms).</p>\n</section>\n";
    return;
  }
  out << "<div class=\"scroll\"><table class=\"families\"><tr><th>Kernel family</th><th>Change</th><th "
         "class=\"num\">Base ms/iter</th>"
         "<th class=\"num\">New ms/iter</th><th class=\"num\">Delta ms/iter</th><th class=\"num\">Delta %</th>"
         "<th class=\"num\">Launches/iter</th></tr>\n";
  for (size_t i = 0; i < c.families.size() && i < kFamilyRows; ++i) {
    const FamilyDelta& f = c.families[i];
    out << "<tr><td class=\"name\"><details><summary>" << Esc(CutMiddle(f.name, 90))
        << (f.variants > 1 ? " (" + std::to_string(f.variants) + " variants)" : "") << "</summary><ul>";
    const std::vector<const KernelDelta*> variants = Variants(c, f);
    for (size_t v = 0; v < variants.size() && v < kVariantsShown; ++v)
      out << "<li>" << Esc(variants[v]->name) << ": " << Esc(Ms(variants[v]->base_ms)) << " -> "
          << Esc(Ms(variants[v]->new_ms)) << " ms</li>";
    if (variants.size() > kVariantsShown) out << "<li>" << variants.size() - kVariantsShown << " more</li>";
    out << "</ul></details></td><td>" << KernelChangeName(f.change) << "</td><td class=\"num\">" << Ms(f.base_ms)
        << "</td><td class=\"num\">" << Ms(f.new_ms) << "</td><td class=\"num" << DeltaClass(f.delta_ms) << "\">"
        << Signed(f.delta_ms, 3) << "</td><td class=\"num\">"
        << (f.has_delta_pct ? Signed(f.delta_pct, 1) + "%" : std::string("n/a")) << "</td><td class=\"num\">"
        << FormatNumber(f.base_launches, 1) << " -> " << FormatNumber(f.new_launches, 1) << "</td></tr>\n";
  }
  out << "</table></div>\n";
  if (c.families.size() > kFamilyRows)
    out << "<p class=\"na\">" << c.families.size() - kFamilyRows << " more in tracegate compare --json.</p>\n";
  out << "</section>\n";
}

std::string PhaseBars(const Comparison& c) {
  std::vector<StackedBar> bars(2);
  bars[0].label = "base";
  bars[1].label = "new";
  for (const PhaseDelta& p : c.phases) {
    bars[0].parts.push_back(p.base_ms);
    bars[1].parts.push_back(p.new_ms);
  }
  bars[0].note = Ms(c.base_latency_ms) + " ms";
  bars[1].note = Ms(c.new_latency_ms) + " ms";
  std::vector<std::string> classes, names;
  for (const char* p : kPhaseNames) {
    classes.push_back(std::string("phase-") + p);
    names.push_back(p);
  }
  return Chart(StackedBarsSvg(bars, classes, names, "mean time per iteration (ms)", "Phases of both runs"));
}

void Phases(std::ostream& out, const Comparison& c) {
  out << "<h2 id=\"phases\">Phases side by side</h2>\n<section>\n";
  if (c.phases.empty()) {
    out << "<p class=\"na\">n/a: a report has no phases section.</p>\n</section>\n";
    return;
  }
  out << "<p>Mean time per iteration in each phase; the phases partition an iteration, so their deltas add up to "
         "the latency's.</p>\n"
      << PhaseBars(c)
      << "<table><tr><th>Phase</th><th class=\"num\">Base ms</th><th class=\"num\">New ms</th>"
         "<th class=\"num\">Delta ms</th><th class=\"num\">Share of the change</th></tr>\n";
  std::string zero;
  for (const PhaseDelta& p : c.phases) {
    if (p.base_ms == 0 && p.new_ms == 0) {
      zero += (zero.empty() ? "" : ", ") + p.phase;
      continue;
    }
    out << "<tr><td>" << p.phase << "</td><td class=\"num\">" << Ms(p.base_ms) << "</td><td class=\"num\">"
        << Ms(p.new_ms) << "</td><td class=\"num" << DeltaClass(p.delta_ms) << "\">" << Signed(p.delta_ms, 3)
        << "</td><td class=\"num\">"
        << (p.has_share ? FormatNumber(p.share_of_change * 100, 1) + "%" : std::string("n/a")) << "</td></tr>\n";
  }
  out << "</table>\n";
  if (!zero.empty()) out << "<p class=\"na\">" << zero << ": 0 ms on both sides.</p>\n";
  out << "</section>\n";
}

void MedianIterations(std::ostream& out, const Comparison& c, const PageSide& base, const PageSide& next) {
  out << "<h2 id=\"iterations\">The median iterations on one time axis</h2>\n<section>\n";
  const std::string b = TimelineMissing(*base.doc), n = TimelineMissing(*next.doc);
  for (const auto& [who, why] : {std::pair{"base", &b}, std::pair{"new", &n}})
    if (!why->empty()) out << "<p class=\"na\">" << who << ": " << Esc(*why) << ".</p>\n";
  if (b.empty() || n.empty()) {
    out << "<p>Each run's iteration of median latency, from the report's timeline section; hover a block for its "
           "name and times.</p>\n"
        << Chart(MedianIterationsSvg(base, next));
  } else if (!c.phases.empty()) {  // what the reports do hold: the mean phases (the chart above)
    out << "<p>Drawing the iterations needs each report's timeline section; the phases section above shows where "
           "each run's time goes instead.</p>\n";
  }
  out << "</section>\n";
}

void Metrics(std::ostream& out, const Comparison& c) {
  if (c.metrics.empty()) return;
  out << "<h2 id=\"metrics\">Headline metrics</h2>\n<section>\n<div class=\"scroll\"><table><tr><th>Metric</th>"
         "<th class=\"num\">Base</th><th class=\"num\">New</th><th class=\"num\">Delta</th><th class=\"num\">Delta "
         "%</th>"
         "</tr>\n";
  for (const MetricDelta& m : c.metrics) {
    if (!m.has_base && !m.has_new) continue;
    const int d = MetricDecimals(m);
    auto cell = [&](bool has, double v, const std::string& why) {
      return has ? FormatNumber(v, d) : "n/a (" + why + ")";
    };
    out << "<tr><td class=\"name\">" << Esc(m.key) << "</td><td class=\"num\">"
        << Esc(cell(m.has_base, m.base, m.base_reason)) << "</td><td class=\"num\">"
        << Esc(cell(m.has_new, m.next, m.new_reason)) << "</td><td class=\"num"
        << (m.has_base && m.has_new ? DeltaClass(m.delta, m.higher_is_worse) : "") << "\">"
        << (m.has_base && m.has_new ? Signed(m.delta, d) : "n/a") << "</td><td class=\"num\">"
        << (m.has_pct ? Signed(m.pct, 2) + "%" : "n/a") << "</td></tr>\n";
  }
  out << "</table></div>\n</section>\n";
}

void Ranks(std::ostream& out, const Comparison& c) {
  if (c.ranks.empty()) return;
  out << "<h2 id=\"ranks\">Ranks</h2>\n<section>\n<table><tr><th class=\"num\">Rank</th><th class=\"num\">Base ms</th>"
         "<th class=\"num\">New ms</th><th class=\"num\">Delta %</th><th>Over the limit</th><th>Families that grew</th>"
         "</tr>\n";
  for (const RankDelta& r : c.ranks) {
    std::string grown;
    for (size_t i = 0; i < r.grown.size() && i < 3; ++i)
      grown += (i ? ", " : "") + CutMiddle(r.grown[i].name, 60) + " " + Signed(r.grown[i].delta_ms, 3) + " ms";
    out << "<tr><td class=\"num\">" << r.rank << "</td><td class=\"num\">" << (r.has_base ? Ms(r.base_ms) : "n/a")
        << "</td><td class=\"num\">" << (r.has_new ? Ms(r.new_ms) : "n/a") << "</td><td class=\"num\">"
        << (r.has_base && r.has_new ? Signed(r.delta_pct, 2) + "%" : "n/a") << "</td><td>"
        << (r.over_threshold ? "yes" : "no") << "</td><td class=\"name\">" << Esc(grown) << "</td></tr>\n";
  }
  out << "</table>\n</section>\n";
}

}  // namespace

std::string ComparisonHtml(const Comparison& c, const nlohmann::json& base, const nlohmann::json& next) {
  const json b = ValidUtf8(base), n = ValidUtf8(next);
  const PageSide bs{"base", &b}, ns{"new", &n};
  std::ostringstream out;
  Head(out, c);
  Banner(out, c);
  Caveats(out, c);
  if (!c.metrics.empty()) {  // the inputs were read
    Serving(out, c);
    Latency(out, c, bs, ns);
    Families(out, c);
    Phases(out, c);
    MedianIterations(out, c, bs, ns);
    Metrics(out, c);
    Ranks(out, c);
  }
  out << "</main>\n<footer>Generated by tracegate from two " << kReportSchema << " reports; the numbers are "
      << kComparisonSchema << "'s (tracegate compare --json). Self-contained: no script, no network.</footer>\n"
      << "</body>\n</html>\n";
  return out.str();
}

}  // namespace tg
