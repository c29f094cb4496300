#!/usr/bin/env bash
# promtool from Debian's prometheus package, for the test that checks and unit-tests the alert
# rules under docker/observability/ (the package's server is not started). Idempotent.
set -euo pipefail
PROMTOOL="${PROMTOOL_PATH:-/usr/bin/promtool}"
{ [ -x "$PROMTOOL" ] || command -v promtool >/dev/null 2>&1; } && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "install-promtool: installing Debian's prometheus (for promtool)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends prometheus >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends prometheus >/dev/null; }
else
  echo "install-promtool: no promtool at $PROMTOOL; install Debian's prometheus (or set PROMTOOL_PATH) for the alert rule tests" >&2
fi
