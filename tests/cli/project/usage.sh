#!/usr/bin/env bash
# Usage errors exit 2 with one line naming the problem ("did you mean" for a mistyped command or
# option), the command's usage and a pointer to its --help; --help and --version exit 0; no
# arguments print the help and exit 2.
set -u
tg=$1
fails=0; passes=0
expect() {  # expect RC CMD...
  local want=$1; shift
  "$tg" "$@" >/dev/null 2>&1
  local rc=$?
  if [ "$rc" = "$want" ]; then passes=$((passes+1)); else fails=$((fails+1)); echo "FAIL: tracegate $* -> $rc, want $want"; fi
}
expect 0 --help
expect 0 --version
expect 0 analyze --help
expect 2
expect 2 analyze
expect 2 frobnicate
expect 2 frobnicate --help
"$tg" frobnicate 2>&1 | grep -q "^tracegate: error: unknown command 'frobnicate' (commands: analyze, .*record)" \
  && passes=$((passes+1)) || { fails=$((fails+1)); echo "FAIL: unknown command message"; }
expect 2 analyze x.json --top 0
expect 2 export x.json
expect 2 analyze x.json --batch 0
expect 0 predict --help
"$tg" --help | grep -q "analyze" || { fails=$((fails+1)); echo "FAIL: --help does not list analyze"; }

# Usage errors: the first line on stderr names the problem (with "did you mean" for a mistyped
# command or option), the second gives the command's usage and where its help is; nothing on stdout.
usage_error() {  # usage_error FIRST_LINE USAGE_LINE CMD...
  local first=$1 usage=$2; shift 2
  local out err rc
  out=$("$tg" "$@" 2>/tmp/tg_usage_err.$$); rc=$?
  err=$(cat /tmp/tg_usage_err.$$); rm -f /tmp/tg_usage_err.$$
  if [ "$rc" = 2 ] && [ -z "$out" ] && [ "$(sed -n 1p <<<"$err")" = "$first" ] && [ "$(wc -l <<<"$err")" = 2 ] &&
     sed -n 2p <<<"$err" | grep -qF "$usage   (run 'tracegate"; then
    passes=$((passes+1))
  else fails=$((fails+1)); echo "FAIL: tracegate $* -> rc $rc, stdout '$out', stderr:"; echo "$err"; fi
}
usage_error "tracegate: error: unknown command 'analyse': did you mean 'analyze'? (commands: analyze, merge, predict, export, convert, schema, baseline, compare, gate, record)" \
  "Usage: tracegate [OPTIONS] SUBCOMMAND" analyse x.json
usage_error "tracegate: error: unknown command 'comapre': did you mean 'compare'? (commands: analyze, merge, predict, export, convert, schema, baseline, compare, gate, record)" \
  "Usage: tracegate [OPTIONS] SUBCOMMAND" comapre a.json b.json
usage_error "tracegate: error: unknown baseline command 'sav': did you mean 'save'? (baseline commands: save, list, show, history)" \
  "Usage: tracegate baseline [OPTIONS] SUBCOMMAND" baseline sav r.json --name x
usage_error "tracegate: error: baseline: a command is required (save, list, show, history)" \
  "Usage: tracegate baseline [OPTIONS] SUBCOMMAND" baseline
usage_error "tracegate: error: analyze: unknown option '--tpo' (did you mean '--top'?)" \
  "Usage: tracegate analyze [OPTIONS] trace..." analyze x.json --tpo 3
usage_error "tracegate: error: analyze: unknown option '--iter' (did you mean '--iteration'?)" \
  "Usage: tracegate analyze [OPTIONS] trace..." analyze x.json --iter step
usage_error "tracegate: error: export: unknown option '--chrom' (did you mean '--chrome'?)" \
  "Usage: tracegate export [OPTIONS] trace" export x.json --chrom out.json
usage_error "tracegate: error: gate: unknown option '--baselin' (did you mean '--baseline'?)" \
  "Usage: tracegate gate [OPTIONS] new" gate x.json --baselin b
usage_error "tracegate: error: analyze: unknown option '--zzzzzz'" \
  "Usage: tracegate analyze [OPTIONS] trace..." analyze x.json --zzzzzz
usage_error "tracegate: error: export: --chrome is required" \
  "Usage: tracegate export [OPTIONS] trace" export x.json
usage_error "tracegate: error: export: unexpected argument b.json" \
  "Usage: tracegate export [OPTIONS] trace" export a.json b.json --chrome c.json
usage_error "tracegate: error: analyze: --top: 0 is out of range: must be in 1..100000" \
  "Usage: tracegate analyze [OPTIONS] trace..." analyze x.json --top 0
usage_error "tracegate: error: unknown option '--frob'" "Usage: tracegate [OPTIONS] SUBCOMMAND" --frob
usage_error "tracegate: error: predict: --speedup: 0 is out of range: must be > 0" \
  "Usage: tracegate predict [OPTIONS] [trace...]" predict --fraction 0.1 --speedup 0
usage_error "tracegate: error: predict: --fraction: 1.5 is out of range: must be in 0..1" \
  "Usage: tracegate predict [OPTIONS] [trace...]" predict --fraction 1.5 --speedup 2

# No arguments: the help on stdout (it lists the commands and the exit codes), exit 2.
out=$("$tg" 2>/dev/null); rc=$?
if [ $rc = 2 ] && grep -q "^  analyze " <<<"$out" && grep -q "^Exit codes: " <<<"$out"; then passes=$((passes+1))
else fails=$((fails+1)); echo "FAIL: no arguments -> rc $rc, stdout: $(head -3 <<<"$out")"; fi
echo "$passes passed, $fails failed"
[ $fails = 0 ]
