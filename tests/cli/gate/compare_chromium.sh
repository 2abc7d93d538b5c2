#!/usr/bin/env bash
# The comparison page (compare --html) in headless Chromium, 1400 and 800 px wide: no script
# error or CSP refusal in the console, and layout invariants read through the DOM by a checker
# script run on a copy of the page (the page itself forbids scripts): no text wider than its box
# and no horizontal scrolling of the page, every SVG text inside its chart, every SVG axis with a
# title naming its unit. The sibling of html_chromium.sh (the analyze page); like it, skipped
# without a browser on a developer machine and failed in CI ($CI set).
# Usage: compare_chromium.sh TRACEGATE FIXTURES_DIR
#   TRACEGATE_ARTIFACT_DIR=DIR keeps compare.html and the screenshots compare_1400.png and
#   compare_800.png there. docs/img/ has them for docs/REPORTS.md, made from the quickstart's reports
#   (build/quickstart/resnet50_compare.html) and shrunk with `pngquant --quality 55-80`.
source "$(dirname "$0")/../testlib.bash"
out=${TRACEGATE_ARTIFACT_DIR:-$dir}
mkdir -p "$out"
for run in eager compile; do
  gunzip -c "$fixtures/gpu/resnet50_${run}_b32.db.gz" >"$dir/$run.db" || fail "gunzip $run"
  "$tg" analyze "$dir/$run.db" --batch 32 --model "resnet50_$run" -q -o "$dir/$run.json" || fail "analyze $run"
done
"$tg" compare "$dir/eager.json" "$dir/compile.json" --html "$dir/compare.html" >/dev/null || fail "compare --html"
cp "$dir/compare.html" "$out/compare.html" 2>/dev/null

source "$(dirname "$0")/../chromiumlib.bash"
need_browser "the comparison page was not checked in a browser"

# The page as it is: no console message at all (it has no script; a CSP refusal would show).
for w in 1400 800; do
  rm -f "$out/compare_$w.png"
  run_browser "$dir/shot$w.log" --screenshot="$out/compare_$w.png" --window-size=$w,$((w == 1400 ? 1800 : 2200)) --hide-scrollbars \
    "file://$dir/compare.html" >/dev/null || fail "chromium --screenshot at $w px: $(tail -3 "$dir/shot$w.log")"
  [ "$(stat -c %s "$out/compare_$w.png" 2>/dev/null || echo 0)" -gt 20000 ] && ok || fail "screenshot at $w px missing or blank"
  if console_errors "$dir/shot$w.log" >/dev/null; then fail "console at $w px: $(console_errors "$dir/shot$w.log")"; else ok; fi
done

# The checker: a copy without the CSP, with a script appended that writes what it found into the DOM.
sed -e 's/<meta http-equiv="Content-Security-Policy"[^>]*>//' "$dir/compare.html" | sed -e 's#</body>##; s#</html>##' \
  >"$dir/checked.html"
cat >>"$dir/checked.html" <<'EOF_JS'
<script>
(function () {
  const problems = [];
  const cut = (s) => (s || "").trim().replace(/\s+/g, " ").slice(0, 70);
  if (document.documentElement.scrollWidth > window.innerWidth + 1)
    problems.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " > " + window.innerWidth);
  // HTML text: a box whose content is wider than it, unless the box scrolls on purpose.
  for (const el of document.querySelectorAll("h1, p, li, td, th, summary, .figure, .figure .v, .verdict")) {
    const style = getComputedStyle(el);
    if (style.overflowX !== "visible" || el.closest(".scroll")) continue;
    if (el.scrollWidth > el.clientWidth + 1) problems.push("text overflows <" + el.tagName + "> " + cut(el.textContent));
  }
  for (const el of document.querySelectorAll(".scroll")) {
    const r = el.getBoundingClientRect();
    if (r.right > window.innerWidth + 1) problems.push("a table box runs off the page");
  }
  let axes = 0, texts = 0;
  for (const svg of document.querySelectorAll("svg.chart")) {
    const vb = svg.viewBox.baseVal;
    for (const t of svg.querySelectorAll("text")) {
      texts++;
      const b = t.getBBox();
      if (b.x < vb.x - 1 || b.x + b.width > vb.x + vb.width + 1 || b.y < vb.y - 1 || b.y + b.height > vb.y + vb.height + 1)
        problems.push("SVG text outside its chart (" + svg.getAttribute("aria-label") + "): " + cut(t.textContent));
    }
    const lines = svg.querySelectorAll("line.axis").length;
    const titles = [...svg.querySelectorAll("text")].filter((t) => /\((ns|us|ms|s|%)\)$/.test(t.textContent.trim())).length;
    axes += lines;
    if (lines > titles)
      problems.push(svg.getAttribute("aria-label") + ": " + lines + " axes, " + titles + " titles with a unit");
  }
  document.body.setAttribute("data-checked", JSON.stringify({charts: document.querySelectorAll("svg.chart").length, axes, texts, problems}));
})();
</script>
</body></html>
EOF_JS
for w in 1400 800; do
  run_browser "$dir/dom$w.log" --dump-dom --window-size=$w,2600 "file://$dir/checked.html" >"$dir/dom$w.html" \
    || fail "chromium --dump-dom at $w px"
  python3 - "$dir/dom$w.html" "$w" <<'EOF_PY' && ok || fail "layout at $w px"
import html, json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'data-checked="([^"]*)"', dom)
assert m, "the checker did not run"
r = json.loads(html.unescape(m.group(1)))
print(f"{sys.argv[2]} px: {r['charts']} charts, {r['axes']} axes, {r['texts']} SVG texts, {len(r['problems'])} problems")
assert r["charts"] >= 4 and r["axes"] >= 4 and r["texts"] > 50, r
assert not r["problems"], "\n".join(r["problems"])
EOF_PY
  if console_errors "$dir/dom$w.log" >/dev/null; then fail "script error at $w px: $(console_errors "$dir/dom$w.log")"; else ok; fi
done
finish compare_chromium.sh
