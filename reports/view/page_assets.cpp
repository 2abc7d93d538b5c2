#include "reports/view/page_assets.h"

#include "reports/view/sha256.h"
#include "tracegate/reports/report_html.h"

namespace tg::internal {

namespace {

constexpr const char* kStyle = R"css(
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1d2330;
       background: #f6f7f9; }
header, main, footer { max-width: 1280px; margin: 0 auto; padding: 0 20px; }
header { padding-top: 18px; }
h1 { font-size: 22px; margin: 0 0 6px; overflow-wrap: anywhere; }
h2 { font-size: 17px; margin: 24px 0 8px; border-bottom: 1px solid #d8dce3; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 8px 0 4px; }
section { background: #fff; border: 1px solid #e1e4ea; border-radius: 6px; padding: 6px 16px 12px; margin-bottom: 12px;
          overflow-wrap: break-word; overflow-x: auto; }
p { margin: 6px 0; }
.facts { color: #4a5263; margin: 0 0 10px; font-size: 13px; }
.facts b { color: #1d2330; font-weight: 600; }
.facts .fact { margin-right: 14px; } .facts .fact.short { white-space: nowrap; }
.verdict { font-size: 17px; line-height: 1.5; background: #fff; border: 1px solid #e1e4ea; border-left: 5px solid #4e79a7;
           border-radius: 6px; padding: 10px 16px; margin: 10px 0 4px; }
.verdict.high { border-left-color: #d62728; } .verdict.medium { border-left-color: #f28e2b; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 8px; padding: 10px 12px; }
.card { border: 1px solid #e1e4ea; border-radius: 5px; padding: 6px 10px; min-width: 0; overflow: hidden; }
.card .label { color: #5b6475; font-size: 12px; }
.card .value { font-size: 18px; font-weight: 600; white-space: nowrap; font-variant-numeric: tabular-nums; }
.card .sub { color: #5b6475; font-size: 12px; }
.na, .note { color: #6b5a1f; font-size: 12.5px; }
.alert { background: #fdecea; border: 1px solid #f5c2bd; color: #8c1d13; padding: 8px 12px; border-radius: 5px; }
.tablewrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #eceef2; vertical-align: top; }
th { font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th[data-sort] { cursor: pointer; user-select: none; }
th[aria-sort="ascending"]::after { content: " \25B2"; font-size: 10px; }
th[aria-sort="descending"]::after { content: " \25BC"; font-size: 10px; }
.name { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; overflow-wrap: anywhere; }
.hint { color: #6f4e99; }
.name summary { cursor: pointer; } .name details[open] summary { font-weight: 600; }
.tools { display: flex; gap: 6px; align-items: center; flex-wrap: wrap; margin: 6px 0; font-size: 13px; }
.tools input { font: inherit; padding: 2px 6px; min-width: 14em; }
.tools button { font: inherit; padding: 1px 9px; border: 1px solid #c5cad3; border-radius: 4px; background: #fff; cursor: pointer; }
.finding { border-left: 4px solid #bab0ac; padding: 2px 12px; margin: 10px 0; }
.finding.high { border-color: #d62728; } .finding.medium { border-color: #f28e2b; } .finding.low { border-color: #4e79a7; }
.finding h3 small { font-weight: 400; } .finding h3 .gain { float: right; font-size: 14px; }
.finding .try { margin: 4px 0; }
details.finding.folded { margin: 4px 0; } details.finding.folded > summary { cursor: pointer; list-style-position: outside; }
details.finding.folded > summary h3 { display: inline; font-size: 14px; }
.badge { display: inline-block; font-size: 11px; text-transform: uppercase; padding: 1px 6px; border-radius: 3px;
         color: #fff; background: #7f7f7f; }
.high .badge { background: #d62728; } .medium .badge { background: #c0661a; } .low .badge { background: #4e79a7; }
.gapref { display: inline-block; min-width: 1.6em; text-align: center; border-radius: 9px; background: #c0392b;
          color: #fff; font: 600 11px system-ui, sans-serif; padding: 0 5px; text-decoration: none; }
.gain { font-weight: 600; }
details.more > summary { cursor: pointer; color: #3b5b8c; }
svg.chart { display: block; margin: 6px 0; overflow: visible; }
/* Charts scale with the page: in a narrow window the text of the charts grows in chart units so
   that it stays about 10 px on screen (their labels are spaced for it). */
@media (max-width: 1000px) {
  svg.fit text, svg.fit .axis-title { font-size: 17px; } svg.kbars text { font-size: 15px; }
  svg .gapnum text { font-size: 14px; } svg .gapnum circle { r: 10px; }
}
svg text { font: 12px system-ui, sans-serif; fill: #1d2330; }
svg .lane-label, svg .end { text-anchor: end; } svg .tick-label { text-anchor: middle; fill: #5b6475; }
svg .axis-title { text-anchor: middle; fill: #3a4252; font-size: 12px; }
svg .bar-label { fill: #fff; font-weight: 600; }
svg .axis-line, svg .axis, svg .tick { stroke: #9aa1ad; } svg .marker { stroke: #1d2330; stroke-dasharray: 4 3; }
svg .group-label { font-weight: 600; }
.lane { fill: #f4f5f8; }
.kernel { fill: #4e79a7; } .collective { fill: #b07aa1; } .memcpy { fill: #f28e2b; } .memset { fill: #9c755f; }
.gap { fill: #e15759; fill-opacity: 0.3; }
.launch { fill: #59a14f; } .sync { fill: #e15759; } .copy { fill: #edc948; } .api { fill: #a0a4ab; }
.range { fill: #76b7b2; fill-opacity: 0.75; stroke: #fff; stroke-width: 0.5; }
.cp-host { fill: #8cd17d; } .cp-delay { fill: #ff9da7; } .cp-gap { fill: #d4a6c8; } .cp-none { fill: #d3d3d3; }
.cp-mark { fill: none; stroke: #d62728; stroke-width: 1.5; }
.busy { fill: #4e79a7; } .ov-window { fill: none; stroke: #1d2330; stroke-width: 1.5; }
.ov-iter { fill: #d9dde5; } .ov-drawn { fill: #8d99ae; }
.gapnum circle { fill: #c0392b; } .gapnum text { fill: #fff; font-weight: 600; font-size: 11px; text-anchor: middle; }
.hist { fill: #59a14f; }
.trend-avg { stroke: #4e79a7; stroke-width: 2; fill: none; } .trend-p95 { stroke: #f28e2b; stroke-width: 2; fill: none; }
rect.trend-avg { fill: #4e79a7; stroke: none; } rect.trend-p95 { fill: #f28e2b; stroke: none; }
.pt-saved { fill: #4e79a7; } .pt-pass { fill: #59a14f; } .pt-regression { fill: #d62728; } .pt-cannot_judge { fill: #bab0ac; }
.phase-pre { fill: #76b7b2; } .phase-h2d { fill: #f28e2b; } .phase-infer { fill: #4e79a7; }
.phase-d2h { fill: #e15759; } .phase-post { fill: #59a14f; } .phase-idle { fill: #bab0ac; }
.key { display: inline-block; width: 11px; height: 11px; vertical-align: -1px; margin: 0 4px 0 10px; }
.key.kernel { background: #4e79a7; } .key.collective { background: #b07aa1; } .key.memcpy { background: #f28e2b; }
.key.memset { background: #9c755f; } .key.gap { background: #f3bcbd; } .key.launch { background: #59a14f; }
.key.sync { background: #e15759; } .key.copy { background: #edc948; } .key.api { background: #a0a4ab; }
.key.range { background: #76b7b2; } .key.cp-host { background: #8cd17d; } .key.cp-delay { background: #ff9da7; } .key.cp-gap { background: #d4a6c8; } .key.pt-saved { background: #4e79a7; } .key.pt-pass { background: #59a14f; }
.key.pt-regression { background: #d62728; } .key.pt-cannot_judge { background: #bab0ac; } .key.trend-avg { background: #4e79a7; } .key.trend-p95 { background: #f28e2b; }
.legend-line { font-size: 13px; margin: 4px 0; }
svg.tl-zoom { cursor: grab; touch-action: none; } svg.tl-zoom.dragging { cursor: grabbing; }
footer { color: #5b6475; font-size: 12px; padding: 8px 20px 24px; }
)css";

// Kept small and dependency-free; it only moves and re-labels what the page already drew, so the
// page reads the same without it (a static first view).
constexpr const char* kScript = R"js(
(function () {
  'use strict';
  function unitFor(span) {
    return span < 2e3 ? ['ns', 1] : span < 2e6 ? ['us', 1e3] : span < 2e9 ? ['ms', 1e6] : ['s', 1e9];
  }
  function ticks(lo, hi, n) {
    var out = [];
    if (!(hi > lo)) return { values: out, step: 1 };
    var raw = (hi - lo) / n, p = Math.pow(10, Math.floor(Math.log10(raw))), step = 10 * p;
    for (var m of [1, 2, 5]) if (m * p >= raw) { step = m * p; break; }
    var first = Math.ceil(lo / step - 1e-9) * step;
    for (var i = 0; i <= 2 * n + 2 && first + i * step <= hi + step * 1e-9; i++) out.push(first + i * step);
    return { values: out, step: step };
  }
  function tickText(v, step) {
    var d = 0;
    for (var s = Math.abs(step); d < 9 && s > 0 && Math.abs(s - Math.round(s)) > s * 1e-6; s *= 10) d++;
    return (Math.abs(v) < step * 1e-9 ? 0 : v).toFixed(d);
  }
  function make(ns, tag, attrs, text) {
    var e = document.createElementNS(ns, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function setupTimeline(svg) {
    var d = svg.dataset, x0 = +d.x0, w = +d.w, t0 = +d.t0, t1 = +d.t1, v0 = +d.v0, v1 = +d.v1;
    var placed = svg.querySelectorAll('[data-s]'), axis = svg.querySelector('g.axis-x');
    var overview = d.overview ? document.getElementById(d.overview) : null;
    var tools = document.querySelector('.tl-tools[data-for="' + svg.id + '"]');
    function draw() {
      var k = w / (v1 - v0), right = x0 + w;
      placed.forEach(function (e) {
        var s = +e.dataset.s, len = +(e.dataset.d || 0), a = x0 + (s - v0) * k, b = x0 + (s + len - v0) * k;
        if (e.tagName === 'rect') {
          var l = Math.max(a, x0), r = Math.min(b, right), min = +(e.dataset.min || 0);
          var shown = b >= x0 && a <= right && (r > l || min > 0);
          e.style.display = shown ? '' : 'none';
          if (!shown) return;
          if (r - l < min) { l = Math.min(Math.max(l, x0), right - min); r = l + min; }
          e.setAttribute('x', l.toFixed(2));
          e.setAttribute('width', (r - l).toFixed(2));
        } else if (e.tagName === 'line') {
          e.style.display = a >= x0 && a <= right ? '' : 'none';
          e.setAttribute('x1', a.toFixed(2));
          e.setAttribute('x2', a.toFixed(2));
        } else {
          var c = len ? (Math.max(a, x0) + Math.min(b, right)) / 2 : a;
          e.style.display = b >= x0 && a <= right ? '' : 'none';
          e.setAttribute('transform', 'translate(' + c.toFixed(2) + ' 0)');
        }
      });
      if (axis) {
        var unit = unitFor(v1 - v0), y = +axis.dataset.y, tk = ticks(v0 / unit[1], v1 / unit[1], Math.max(2, Math.floor(w / 110)));
        axis.querySelectorAll('.tick, .tick-label, .axis-title').forEach(function (e) { e.remove(); });
        (tk.values || []).forEach(function (t) {
          var x = x0 + (t * unit[1] - v0) * k;
          axis.appendChild(make(axis.namespaceURI, 'line', { 'class': 'tick', x1: x, y1: y, x2: x, y2: y + 4 }));
          axis.appendChild(make(axis.namespaceURI, 'text', { 'class': 'tick-label', x: x, y: y + 16 }, tickText(t, tk.step)));
        });
        axis.appendChild(make(axis.namespaceURI, 'text', { 'class': 'axis-title', x: x0 + w / 2, y: y + 32 },
                              axis.dataset.axisTitle + ' (' + unit[0] + ')'));
      }
      if (overview) {
        var o = overview.dataset, ok = +o.w / (+o.t1 - +o.t0), win = overview.querySelector('.ov-window');
        if (win) {
          var wx = +o.x0 + (v0 - +o.t0) * ok;
          win.setAttribute('x', wx.toFixed(2));
          win.setAttribute('width', Math.max(2, (v1 - v0) * ok).toFixed(2));
        }
      }
      if (tools) {
        var u = unitFor(v1 - v0), span = tools.querySelector('.tl-view');
        var dec = Math.max(0, 3 - Math.floor(Math.log10((v1 - v0) / u[1])));
        if (span) span.textContent = 'showing ' + (v0 / u[1]).toFixed(dec) + '\u2013' + (v1 / u[1]).toFixed(dec) + ' ' +
                                     u[0] + ' into the trace';
      }
    }
    function setView(a, b) {
      var min = 200, full = t1 - t0;
      if (b - a < min) { var c = (a + b) / 2; a = c - min / 2; b = c + min / 2; }
      if (b - a > full) { a = t0; b = t1; }
      if (a < t0) { b += t0 - a; a = t0; }
      if (b > t1) { a -= b - t1; b = t1; }
      v0 = a; v1 = b;
      draw();
    }
    function zoom(f, at) {
      var c = at === undefined ? (v0 + v1) / 2 : at;
      setView(c - (c - v0) * f, c + (v1 - c) * f);
    }
    function timeAt(ev) {
      var r = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
      var x = (ev.clientX - r.left) * vb.width / r.width;
      return v0 + (x - x0) * (v1 - v0) / w;
    }
    var drag = null;
    svg.addEventListener('pointerdown', function (ev) {
      drag = { x: ev.clientX, a: v0, b: v1 };
      svg.setPointerCapture(ev.pointerId);
      svg.classList.add('dragging');
    });
    svg.addEventListener('pointermove', function (ev) {
      if (!drag) return;
      var r = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
      var dt = (ev.clientX - drag.x) * vb.width / r.width * (drag.b - drag.a) / w;
      setView(drag.a - dt, drag.b - dt);
    });
    function end() { drag = null; svg.classList.remove('dragging'); }
    svg.addEventListener('pointerup', end);
    svg.addEventListener('pointercancel', end);
    svg.addEventListener('wheel', function (ev) {
      if (!(ev.ctrlKey || ev.metaKey || ev.altKey)) return;
      ev.preventDefault();
      zoom(ev.deltaY > 0 ? 1.4 : 1 / 1.4, timeAt(ev));
    }, { passive: false });
    svg.addEventListener('dblclick', function (ev) { zoom(ev.shiftKey ? 2 : 0.5, timeAt(ev)); });
    if (tools) tools.addEventListener('click', function (ev) {
      var act = ev.target && ev.target.dataset ? ev.target.dataset.act : '';
      if (act === 'in') zoom(0.5);
      else if (act === 'out') zoom(2);
      else if (act === 'fit') setView(+d.f0, +d.f1);
      else if (act === 'all') setView(t0, t1);
    });
    draw();
  }
  function setupTable(table) {
    var body = table.tBodies[0];
    table.querySelectorAll('th[data-sort]').forEach(function (th, col) {
      var index = Array.prototype.indexOf.call(th.parentNode.children, th);
      th.addEventListener('click', function () {
        var asc = th.getAttribute('aria-sort') !== 'ascending', num = th.dataset.sort === 'num';
        table.querySelectorAll('th[aria-sort]').forEach(function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (r1, r2) {
          var c1 = r1.cells[index], c2 = r2.cells[index];
          var a = num ? parseFloat(c1.dataset.v || 'NaN') : c1.textContent.toLowerCase();
          var b = num ? parseFloat(c2.dataset.v || 'NaN') : c2.textContent.toLowerCase();
          if (num) { a = isNaN(a) ? -Infinity : a; b = isNaN(b) ? -Infinity : b; }
          return (a < b ? -1 : a > b ? 1 : 0) * (asc ? 1 : -1);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }
  function setupFilter(input) {
    var table = document.getElementById(input.dataset.table);
    var count = document.querySelector('[data-count-for="' + input.dataset.table + '"]');
    if (!table) return;
    input.addEventListener('input', function () {
      var q = input.value.trim().toLowerCase(), shown = 0, rows = table.tBodies[0].rows;
      for (var i = 0; i < rows.length; i++) {
        var hit = !q || (rows[i].dataset.name || rows[i].textContent).toLowerCase().indexOf(q) >= 0;
        rows[i].style.display = hit ? '' : 'none';
        if (hit) shown++;
      }
      if (count) count.textContent = shown + ' of ' + rows.length + ' shown';
    });
  }
  document.querySelectorAll('svg.tl-zoom').forEach(setupTimeline);
  document.querySelectorAll('table.sortable').forEach(setupTable);
  document.querySelectorAll('input.filter').forEach(setupFilter);
  document.documentElement.setAttribute('data-tg-ready', '1');
})();
)js";

}  // namespace

const std::string& PageStyle() {
  static const std::string style = kStyle;
  return style;
}

const std::string& PageScript() {
  static const std::string script = kScript;
  return script;
}

std::string PageHead(const std::string& title, const std::string& extra_css) {
  // The script runs by its hash only: a string of the report that escaped into markup as a
  // <script> would still not run, and the page loads nothing (default-src 'none').
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "img-src data:; script-src " +
         CspSha256(PageScript()) +
         "\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<link rel=\"icon\" href=\"data:,\">\n<title>" +
         HtmlEscape(title) + "</title>\n<style>" + PageStyle() + extra_css + "</style>\n</head>\n<body>\n";
}

std::string PageEnd(const std::string& footer) {
  return "<footer>" + HtmlEscape(footer) + "</footer>\n<script>" + PageScript() + "</script>\n</body>\n</html>\n";
}

}  // namespace tg::internal
