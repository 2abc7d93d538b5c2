# Headless Chromium for the CLI tests that read pages in a browser (source it after testlib.bash,
# or after setting $dir, $fails and $passes; not a test itself). Gives $browser and:
#   need_browser WHAT   without a browser: exit 1 after failures or under $CI (ci/deps.sh installs
#                       Debian's chromium, so CI can never pass without the browser checks), else
#                       print SKIP naming WHAT was not checked and exit 0
#   run_browser LOG ARGS...   headless Chromium with ARGS; its stdout is the browser's, its log LOG
#   console_errors LOG        the console messages, CSP refusals and uncaught errors in LOG
# TRACEGATE_CHROMIUM names the browser; set and empty, it plays a machine without one.
browser=${TRACEGATE_CHROMIUM-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}

need_browser() {
  [ -n "$browser" ] && return 0
  [ "$fails" = 0 ] || exit 1
  if [ -n "${CI:-}" ]; then
    echo "FAIL: chromium is not installed and \$CI is set (ci/deps.sh installs the Debian package chromium)"
    exit 1
  fi
  echo "SKIP ($passes checks passed without it): chromium is not installed (apt-get install chromium); $1"
  exit 0
}

# Chromium as root in a container needs --no-sandbox; /dev/shm is often tiny there.
run_browser() {
  timeout 120 "$browser" --headless --disable-gpu --no-sandbox --disable-dev-shm-usage --no-first-run \
    --user-data-dir="$dir/profile" --enable-logging=stderr --v=0 "${@:2}" 2>"$1"
}

# Console messages are logged as "INFO:CONSOLE(line)] "text", source: URL (line)"; CSP refusals and
# uncaught exceptions go to the console too.
console_errors() { grep -E 'CONSOLE|Uncaught|Refused to|Content Security Policy' "$1"; }
