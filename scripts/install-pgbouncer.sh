#!/usr/bin/env bash
# Debian's PgBouncer for the tests that run the service through a transaction-mode pooler (they
# start their own pgbouncer on a free loopback port; the package's service is not used). Idempotent.
set -euo pipefail
PGBOUNCER="${PGBOUNCER_PATH:-/usr/sbin/pgbouncer}"
{ [ -x "$PGBOUNCER" ] || command -v pgbouncer >/dev/null 2>&1; } && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "install-pgbouncer: installing Debian's pgbouncer" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q pgbouncer >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q pgbouncer >/dev/null; }
else
  echo "install-pgbouncer: no pgbouncer at $PGBOUNCER; install Debian's pgbouncer (or set PGBOUNCER_PATH) for the connection pooler tests" >&2
fi
