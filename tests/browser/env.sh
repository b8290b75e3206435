# Sourced by the browser tests (tests/e2e/browser_*.sh, dashboard_browser.sh): finds node and
# chromium or skips the test (exit 77, "SKIP: ..."; CI installs both, see .ci/run), and ends a
# chromium the driver left behind (by the pid it wrote to $tmp/chromium.pid) when the test exits.
# Needs $tmp (the test's temp dir). Sets NODE and CHROMIUM (exported: the driver reads it).
NODE=$(command -v node || command -v nodejs || true)
if [ -z "$NODE" ]; then
  echo "SKIP: node is not installed (apt-get install nodejs)"
  exit 77
fi
if [ -z "${CHROMIUM:-}" ]; then
  for c in chromium chromium-browser google-chrome; do
    CHROMIUM=$(command -v "$c" || true)
    [ -n "$CHROMIUM" ] && break
  done
fi
if [ -z "$CHROMIUM" ]; then
  echo "SKIP: chromium is not installed (apt-get install chromium)"
  exit 77
fi
export CHROMIUM
browser_cleanup() {
  local p
  if [ -s "$tmp/chromium.pid" ]; then
    p=$(cat "$tmp/chromium.pid")
    kill -KILL -- "-$p" "$p" 2>/dev/null
  fi
  return 0
}
