#!/usr/bin/env bash
# Debian's Chromium for the console's browser test: Playwright drives it and never downloads a
# browser of its own (this network has only the npm registry and Debian's packages). Idempotent.
set -euo pipefail
CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$CHROMIUM" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: installing Debian's chromium" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q chromium >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
else
  echo "install-chromium: no Chromium at $CHROMIUM; install Debian's chromium (or set CHROMIUM_PATH) for the console browser test" >&2
fi
