// Layout invariants of a tracegate HTML page, checked in the browser after the page's own script
// ran (html_layout.sh appends this file to a copy of the page, without the page's CSP so that it
// may run). The verdict goes into the DOM as a pre element with id tg-verdict: PASS, or FAIL and
// one line per problem, which `chromium --dump-dom` prints.
(function () {
  'use strict';
  var fails = [];
  function fail(m) { if (fails.length < 40) fails.push(m); }
  function text(e) { return (e.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 60); }
  var root = document.documentElement;
  if (root.getAttribute('data-tg-ready') !== '1') fail('the page script did not run to its end');
  (window.__tgErrors || []).forEach(function (e) { fail('script error: ' + e); });

  // Nothing wider than the window: wide content scrolls inside its own box.
  if (root.scrollWidth > window.innerWidth + 1) fail('page wider than the window: ' + root.scrollWidth + ' > ' + window.innerWidth);
  // Cards: no text overflows, none says n/a, no "0.0 /s".
  document.querySelectorAll('.card, .card *').forEach(function (c) {
    if (c.scrollWidth > c.clientWidth + 1) fail('card text overflows: ' + text(c));
  });
  document.querySelectorAll('.card .value').forEach(function (v) {
    if (/n\/a|^0\.0 \/s$|^$/.test(text(v))) fail('card without a value: ' + text(v.parentNode));
  });
  // The facts line: a short value is never broken across lines (no "tracegate 0.\n1.0").
  document.querySelectorAll('.facts .fact .name').forEach(function (n) {
    if (n.textContent.length <= 40 && n.getClientRects().length > 1) fail('short fact broken across lines: ' + text(n));
  });
  // Table cells with numbers stay on one line.
  document.querySelectorAll('td.num').forEach(function (td) {
    if (td.textContent.trim() && td.getClientRects().length && td.scrollWidth > td.clientWidth + 1) fail('number cell overflows: ' + text(td));
  });
  // Timeline: every gap is narrower than its lane and inside it, and lies on its interval.
  document.querySelectorAll('svg rect.gap').forEach(function (g) {
    if (g.style.display === 'none') return;
    var svg = g.ownerSVGElement, lane = svg.querySelector('rect.lane[data-lane="' + g.dataset.lane + '"]');
    if (!lane) { fail('gap without a lane'); return; }
    var gx = +g.getAttribute('x'), gw = +g.getAttribute('width'), lx = +lane.getAttribute('x'), lw = +lane.getAttribute('width');
    var gy = +g.getAttribute('y'), gh = +g.getAttribute('height'), ly = +lane.getAttribute('y'), lh = +lane.getAttribute('height');
    if (!(gw < lw)) fail('gap as wide as its lane: ' + gw + ' >= ' + lw);
    if (gx < lx - 0.01 || gx + gw > lx + lw + 0.01 || gy < ly - 0.01 || gy + gh > ly + lh + 0.01) fail('gap outside its lane');
    var d = svg.dataset, k = +d.w / (+svg.dataset.v1 - +svg.dataset.v0);
    var want = Math.max(+d.x0, +d.x0 + (+g.dataset.s - +svg.dataset.v0) * k);
    if (Math.abs(gx - want) > 0.6) fail('gap not on its interval: x ' + gx + ', want ' + want.toFixed(2));
  });
  // Every axis is titled with its unit in parentheses, and its ticks are bare numbers (one unit).
  document.querySelectorAll('svg g.axis').forEach(function (a) {
    var t = a.querySelector('.axis-title');
    if (!t || !/\([^()]+\)$/.test(text(t))) fail('axis without a unit: ' + (t ? text(t) : 'no title'));
    a.querySelectorAll('.tick-label').forEach(function (l) {
      if (!/^-?[0-9]+(\.[0-9]+)?$/.test(text(l))) fail('tick label is not a bare number: ' + text(l));
    });
  });
  // The order a reader asks in: the summary sentence, then findings, then the headline cards.
  var summary = document.getElementById('summary'), findings = document.getElementById('findings');
  var cards = document.getElementById('headline');
  if (!summary || !text(summary)) fail('no summary sentence');
  if (findings && cards && !(findings.compareDocumentPosition(cards) & Node.DOCUMENT_POSITION_FOLLOWING))
    fail('the headline cards come before the findings');
  // Zoom and pan: the buttons move the view and the axis follows it in one unit.
  var tl = document.querySelector('svg.tl-zoom');
  if (tl) {
    var before = tl.querySelector('g.axis-x .axis-title').textContent;
    var ticks = function () { return Array.prototype.map.call(tl.querySelectorAll('g.axis-x .tick-label'), text).join(' '); };
    var t0 = ticks();
    document.querySelector('.tl-tools [data-act="in"]').click();
    document.querySelector('.tl-tools [data-act="in"]').click();
    if (ticks() === t0) fail('zoom in did not change the axis');
    document.querySelector('.tl-tools [data-act="all"]').click();
    if (!/\((ns|us|ms|s)\)$/.test(tl.querySelector('g.axis-x .axis-title').textContent)) fail('timeline axis without a time unit');
    if (!before) fail('timeline axis has no title');
  }
  // Sortable tables: a click on a numeric header orders the rows.
  var table = document.querySelector('table.sortable');
  if (table) {
    var th = table.querySelector('th[data-sort="num"]:not(:first-child)') || table.querySelector('th[data-sort="num"]');
    var col = Array.prototype.indexOf.call(th.parentNode.children, th);
    th.click();
    var values = Array.prototype.map.call(table.tBodies[0].rows, function (r) { return parseFloat(r.cells[col].dataset.v || 'NaN'); })
                      .filter(function (v) { return !isNaN(v); });
    for (var i = 1; i < values.length; i++) if (values[i] < values[i - 1]) { fail('sorting did not order the column'); break; }
  }
  var filter = document.querySelector('input.filter');
  if (filter) {
    var rows = document.getElementById(filter.dataset.table).tBodies[0].rows;
    filter.value = 'zzz-no-such-kernel';
    filter.dispatchEvent(new Event('input'));
    var shown = Array.prototype.filter.call(rows, function (r) { return r.style.display !== 'none'; }).length;
    if (shown !== 0) fail('the filter hid nothing');
    filter.value = '';
    filter.dispatchEvent(new Event('input'));
  }
  var out = document.createElement('pre');
  out.id = 'tg-verdict';
  out.textContent = (fails.length ? 'FAIL\n' + fails.join('\n') : 'PASS') + '\n';
  document.body.appendChild(out);
})();
