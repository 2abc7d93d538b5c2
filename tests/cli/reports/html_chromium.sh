#!/usr/bin/env bash
# tracegate analyze --html in a real browser: headless Chromium loads the page from a trace whose
# kernel is named <script>alert(1)</script>; the page must log no console error, render to a
# non-empty screenshot, and show the name as text (escaped in the DOM, no <script> but the page's own).
# Chromium is installed by ci/deps.sh. Without it the test is skipped on a developer machine and
# fails in CI ($CI set), so CI can never pass without running it.
# Usage: html_chromium.sh TRACEGATE FIXTURES_DIR
#   TRACEGATE_ARTIFACT_DIR=DIR keeps html_report.html and html_report.png there.
set -u
tg=$1
fixtures=$2
trace=$fixtures/kineto/html_escape.json
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=${TRACEGATE_ARTIFACT_DIR:-$dir}
mkdir -p "$out"
fails=0; passes=0
ok() { passes=$((passes+1)); }
fail() { fails=$((fails+1)); echo "FAIL: $*"; }

# Without a browser: the outputs are written, and none may overwrite the input trace.
"$tg" analyze "$trace" -q -o "$dir/r.json" --html "$dir/report.html" --md "$dir/report.md" --model '<b>m</b>' \
  || fail "analyze --html"
cp "$dir/report.html" "$out/html_report.html" 2>/dev/null
[ -s "$dir/report.html" ] && [ -s "$dir/report.md" ] && ok || fail "no HTML or Markdown report"
cp "$trace" "$dir/copy.json"
for opt in --html --md; do
  err=$("$tg" analyze "$dir/copy.json" -q "$opt" "$dir/copy.json" 2>&1); rc=$?
  if [ $rc = 2 ] && [[ $err == *"would overwrite the input"* ]] && cmp -s "$trace" "$dir/copy.json"; then ok;
  else fail "analyze $opt INPUT -> rc $rc: $err"; fi
done

source "$(dirname "$0")/../chromiumlib.bash"
need_browser "the HTML report was not checked in a browser"

# The detector must see a page's console error, or "no console errors" below proves nothing.
printf '<!DOCTYPE html><title>canary</title><script>console.error("tg-canary-error")</script>\n' >"$dir/canary.html"
run_browser "$dir/canary.log" --dump-dom "file://$dir/canary.html" >/dev/null
console_errors "$dir/canary.log" | grep -q tg-canary-error && ok \
  || fail "console errors are not detected: $(tail -5 "$dir/canary.log")"

url="file://$dir/report.html"

rm -f "$out/html_report.png"
run_browser "$dir/shot.log" --screenshot="$out/html_report.png" --window-size=1400,2000 --hide-scrollbars "$url" \
  >/dev/null || fail "chromium --screenshot exited $?: $(tail -5 "$dir/shot.log")"
png_magic=$(head -c 8 "$out/html_report.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')
if [ -s "$out/html_report.png" ] && [ "$png_magic" = 89504e470d0a1a0a ]; then
  ok
else
  fail "no PNG screenshot at $out/html_report.png"
fi
# A blank page compresses to almost nothing; the report's charts and text do not.
[ "$(stat -c %s "$out/html_report.png" 2>/dev/null || echo 0)" -gt 20000 ] && ok || fail "screenshot looks blank"

run_browser "$dir/dom.log" --dump-dom "$url" >"$dir/dom.html" || fail "chromium --dump-dom exited $?"
for log in "$dir/shot.log" "$dir/dom.log"; do
  if console_errors "$log" >/dev/null; then fail "console errors in ${log##*/}: $(console_errors "$log")"; else ok; fi
done
grep -qF '&lt;script&gt;alert(1)&lt;/script&gt;' "$dir/dom.html" && ok || fail "the kernel name is not shown as text"
# One <script> element: the page's own (zoom, pan, sorting), which ran under the page's policy.
[ "$(grep -oi '<script' "$dir/dom.html" | wc -l)" = 1 ] && ok || fail "a <script> element other than the page's is in the DOM"
grep -q 'data-tg-ready="1"' "$dir/dom.html" && ok || fail "the page's script did not run"
grep -qF '&lt;b&gt;m&lt;/b&gt;' "$dir/dom.html" && ok || fail "the model tag is not escaped"
grep -qiF '<b>m</b>' "$dir/dom.html" && fail "the model tag became markup" || ok
grep -qF 'NVIDIA H200 &lt;b&gt;bold&lt;/b&gt;' "$dir/dom.html" && ok || fail "the device name is not escaped"
# The timeline's overview and view, the step time of the 3 iterations, the phase bar, the kernel
# bars (fewer than 10 iterations: no histogram).
[ "$(grep -o '<svg' "$dir/dom.html" | wc -l)" = 5 ] && ok || fail "expected 5 charts in the DOM"
grep -q '<rect class="memcpy"' "$dir/dom.html" && ok || fail "the timeline has no memcpy"
grep -qF '&lt;b&gt;m&lt;/b&gt;' "$dir/report.md" && ! grep -qiE '<script|<b>' "$dir/report.md" && ok \
  || fail "markdown escaping"

echo "html_chromium: $passes passed, $fails failed${TRACEGATE_ARTIFACT_DIR:+ (screenshot: $out/html_report.png)}"
[ $fails = 0 ]
