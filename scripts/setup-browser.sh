#!/usr/bin/env bash
# Make sure a headless browser is there for the HTML report test
# (crates/tailrank-cli/tests/html_report.rs): Debian's chromium, installed with apt-get when
# /usr/bin/chromium is missing (needs root and a reachable package mirror). Idempotent and
# quiet; prints the browser's path.
set -euo pipefail
browser="${TAILRANK_CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$browser" ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup-browser.sh: $browser is missing and apt-get is not available; install chromium" \
      "and set TAILRANK_CHROMIUM to its path" >&2
    exit 1
  fi
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >&2
  $sudo apt-get install -y -qq chromium >/dev/null
  browser=/usr/bin/chromium
fi
echo "$browser"
