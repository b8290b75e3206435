#!/usr/bin/env bash
# The in-repo Chrome DevTools Protocol driver (tests/browser/cdp.js) on a local page, in a real
# headless chromium: clicks are trusted mouse events refused on covered or hidden elements,
# console errors / exceptions / failed loads are collected, waits are bounded, screenshots are
# whole-page PNGs, closing leaves no chromium behind (tests/browser/selftest.js). The dashboard
# test (dashboard_browser.sh) relies on all of it. Skips (exit 77) without node or chromium.
# usage: browser_driver.sh GSCHED_BIN SOURCE_DIR
set -u
src=$2
tmp=$(mktemp -d)
. "$src/tests/browser/env.sh"
trap 'browser_cleanup; rm -rf "$tmp"' EXIT
timeout -k 5 150 "$NODE" "$src/tests/browser/selftest.js" "$tmp"
