#!/usr/bin/env bash
# The HTML pages in headless Chromium, read through the DOM at 1400 and 800 px: analyze --html for
# real traces (a Kineto training step, the H200 recording of known_workload, the NCCL rank of
# ../shared/traces when present) and baseline history --html. Each page, as written, must run its
# one script under its own Content-Security-Policy with no console error; a copy with
# html_layout_check.js appended (and the policy removed so that the check may run) must pass the
# layout invariants: no card text overflows and no card says n/a, the page is no wider than the
# window, timeline gaps are narrower than their lane and lie on their interval, every axis is
# titled with one unit and ticked with bare numbers, the summary comes first and the findings
# before the cards, zoom changes the axis, sorting orders and the filter filters.
# Without Chromium the test is skipped on a developer machine and fails in CI ($CI set).
# TRACEGATE_ARTIFACT_DIR=DIR keeps the pages there.
source "$(dirname "$0")/../testlib.bash"
check_js="$(dirname "$0")/html_layout_check.js"
out=${TRACEGATE_ARTIFACT_DIR:-$dir}
mkdir -p "$out"

source "$(dirname "$0")/../chromiumlib.bash"
need_browser "the pages' layout was not checked"

# The pages.
pages=()
"$tg" analyze "$fixtures/kineto/html_escape.json" -q --html "$out/escape.html" && pages+=(escape) || fail "analyze html_escape"
"$tg" analyze "$fixtures/real/kineto_alexnet_train_step.json.gz" -q --html "$out/alexnet.html" && pages+=(alexnet) \
  || fail "analyze alexnet"
gunzip -c "$fixtures/gpu/known_workload.db.gz" >"$dir/known_workload.db"
"$tg" analyze "$dir/known_workload.db" -q -o "$dir/known.json" --html "$out/known_workload.html" && pages+=(known_workload) \
  || fail "analyze known_workload"
if [ -f "$shared/kineto_nccl_allreduce_rank0.json.gz" ]; then
  "$tg" analyze "$shared/kineto_nccl_allreduce_rank0.json.gz" -q --html "$out/nccl.html" && pages+=(nccl) || fail "analyze nccl"
else
  echo "note: $shared/kineto_nccl_allreduce_rank0.json.gz is absent; the NCCL page is not checked"
fi
for i in 1 2 3; do "$tg" baseline save "$dir/known.json" --name known --dir "$dir/b" >/dev/null || fail "baseline save"; done
"$tg" baseline history known --dir "$dir/b" --html "$out/history.html" >/dev/null && pages+=(history) || fail "history --html"

# The check must see what it looks for: a page with a gap across its whole lane, an n/a card, a
# long card value and an axis without a unit must fail on each.
python3 - "$out/known_workload.html" "$dir/broken.html" <<'EOF_PY' || fail "no broken page"
import re, sys
page = open(sys.argv[1]).read()
# The page script places rects from their data-s/data-d (ns): a gap over the whole range fills its lane.
t0, t1 = re.search(r'id="tl-detail"[^>]* data-t0="(-?[0-9]+)" data-t1="(-?[0-9]+)"', page).groups()
page = re.sub(r'<rect class="gap" data-s="[0-9]+" data-d="[0-9]+"',
              '<rect class="gap" data-s="%s" data-d="%d"' % (t0, int(t1) - int(t0)), page, count=1)
page = page.replace('<div class="value">', '<div class="value">n/a ' + "9" * 60, 1)
page = page.replace('time into the trace (', 'time into the trace [', 1)
open(sys.argv[2], "w").write(page)
EOF_PY
pages+=(broken)
[ "$out" = "$dir" ] || cp "$dir/broken.html" "$out/broken.html"

for p in "${pages[@]}"; do
  page="$out/$p.html"
  widths="1400 800"
  if [ "$p" = broken ]; then
    widths=1400
  else
    # As written: the script runs by its hash (data-tg-ready) and nothing is refused or thrown.
    run_browser "$dir/$p.log" --dump-dom "file://$page" >"$dir/$p.dom" || fail "$p: chromium exited $?"
    if console_errors "$dir/$p.log" >/dev/null; then fail "$p: console errors: $(console_errors "$dir/$p.log" | head -3)"; else ok; fi
    grep -q 'data-tg-ready="1"' "$dir/$p.dom" && ok || fail "$p: the page's script did not run under its policy"
    [ "$(grep -o '<script' "$dir/$p.dom" | wc -l)" = 1 ] && ok || fail "$p: more than the page's one <script> in the DOM"
  fi
  # The copy with the check.
  python3 - "$page" "$check_js" "$dir/$p.check.html" <<'EOF_PY' || fail "$p: no copy to check"
import re, sys
page, check = open(sys.argv[1]).read(), open(sys.argv[2]).read()
page, n = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
assert n == 1, "no Content-Security-Policy"
catch = "<script>window.__tgErrors=[];addEventListener('error',function(e){__tgErrors.push(String(e.message))});</script>"
page = page.replace("<head>", "<head>" + catch, 1).replace("</body>", "<script>" + check + "</script></body>", 1)
open(sys.argv[3], "w").write(page)
EOF_PY
  for width in $widths; do
    run_browser "$dir/$p.$width.log" --window-size=$width,900 --dump-dom "file://$dir/$p.check.html" >"$dir/$p.$width.dom"
    verdict=$(python3 -c 'import html,re,sys; m=re.findall(r"<pre id=\"tg-verdict\">(.*?)</pre>", open(sys.argv[1]).read(), re.S); print(html.unescape(m[-1]).strip() if m else "no verdict")' "$dir/$p.$width.dom")
    if [ "$p" = broken ]; then
      for want in "gap as wide as its lane" "card without a value" "card text overflows" "axis without a unit"; do
        [[ $verdict == FAIL*"$want"* ]] && ok || fail "the check missed: $want (verdict: $verdict)"
      done
    elif [ "$verdict" = PASS ]; then ok; else fail "$p at $width px: $verdict"; fi
  done
done
finish html_layout
