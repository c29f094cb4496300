#!/usr/bin/env bash
# PostgreSQL and Redis for a Debian or Ubuntu machine, run by scripts/setup.sh first. For each one
# named on this machine (DATABASE_URL / REDIS_URL on 127.0.0.1, localhost or ::1; defaults as in
# docs/configuration.md): answering → nothing to do (the common case: two quick probes). Not
# answering → as root, install it with apt-get when it is missing and start it; as another user,
# print the one command to run (this script with sudo) and exit 1. A server elsewhere is left to
# its operator. Everyone else: docker/compose.yaml.
#
# A PostgreSQL installed here is set up for local development like the compose file: loopback
# connections are trusted (no password), and the role named in DATABASE_URL is created if it is
# not `postgres`. The database itself is created by scripts/create-database.mjs.
set -euo pipefail

# sudo drops the environment: the printed command keeps these two when they are set.
preserve="${DATABASE_URL:+DATABASE_URL}${REDIS_URL:+${DATABASE_URL:+,}REDIS_URL}"
DATABASE_URL="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/gen}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
WAIT_SECONDS="${SERVICES_WAIT_SECONDS:-30}"
# Debian's locations (overridable for test/setup/ensure-services.test.ts).
PG_CONF_DIR="${PG_CONF_DIR:-/etc/postgresql}"
REDIS_DIR="${REDIS_DIR:-/var/lib/redis}"

say() { echo "ensure-services: $*" >&2; }

# scheme://[user[:password]@]host[:port][/path] → globals url_user url_host url_port
parse_url() {
  local re='^[a-z]+://(([^:@/]*)(:[^@/]*)?@)?(\[[^]/]*\]|[^:/?]*)(:([0-9]+))?'
  [[ "$1" =~ $re ]] || { say "cannot read the URL $1"; exit 1; }
  url_user="${BASH_REMATCH[2]}"
  url_host="${BASH_REMATCH[4]}"
  url_host="${url_host#[}"; url_host="${url_host%]}"
  url_port="${BASH_REMATCH[6]:-$2}"
}

is_local() { [[ "$1" == "127.0.0.1" || "$1" == "localhost" || "$1" == "::1" || "$1" == "" ]]; }

parse_url "$DATABASE_URL" 5432
pg_user="${url_user:-postgres}"; pg_host="${url_host:-127.0.0.1}"; pg_port="$url_port"
parse_url "$REDIS_URL" 6379
redis_host="${url_host:-127.0.0.1}"; redis_port="$url_port"

pg_answers() { command -v pg_isready >/dev/null 2>&1 && pg_isready -q -h "$pg_host" -p "$pg_port"; }
# A server that wants a password (NOAUTH) is running all the same.
redis_answers() {
  command -v redis-cli >/dev/null 2>&1 || return 1
  case "$(redis-cli -h "$redis_host" -p "$redis_port" ping 2>/dev/null)" in PONG | NOAUTH*) return 0 ;; *) return 1 ;; esac
}

need_pg=0; need_redis=0
is_local "$pg_host" && ! pg_answers && need_pg=1
is_local "$redis_host" && ! redis_answers && need_redis=1
[ "$need_pg" = 0 ] && [ "$need_redis" = 0 ] && exit 0

missing=()
[ "$need_pg" = 1 ] && ! command -v pg_ctlcluster >/dev/null 2>&1 && missing+=(postgresql)
[ "$need_redis" = 1 ] && ! command -v redis-server >/dev/null 2>&1 && missing+=(redis-server)

if [ "$(id -u)" != 0 ]; then
  what=()
  [ "$need_pg" = 1 ] && what+=("PostgreSQL at $pg_host:$pg_port")
  [ "$need_redis" = 1 ] && what+=("Redis at $redis_host:$redis_port")
  say "$(IFS=,; echo "${what[*]}" | sed 's/,/ and /') not answering${missing[*]:+ (not installed: ${missing[*]})}. Run once, then set-up again:"
  echo "sudo ${preserve:+--preserve-env=$preserve }bash scripts/ensure-services.sh"
  exit 1
fi

if [ "${#missing[@]}" -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || { say "not installed: ${missing[*]}, and no apt-get here; install them, or use docker/compose.yaml"; exit 1; }
  say "installing ${missing[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q "${missing[@]}" >/dev/null
fi

wait_for() {
  local i
  for ((i = 0; i < WAIT_SECONDS; i++)); do "$1" && return 0; sleep 1; done
  say "$2 did not answer within ${WAIT_SECONDS} s"
  exit 1
}

if [ "$need_pg" = 1 ]; then
  version="$(ls "$PG_CONF_DIR" 2>/dev/null | sort -V | tail -n 1)"
  [ -n "$version" ] || { say "no PostgreSQL cluster under $PG_CONF_DIR"; exit 1; }
  if [[ " ${missing[*]} " == *" postgresql "* ]]; then
    # Fresh install, development set-up: loopback connections trusted, as in docker/compose.yaml.
    sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$PG_CONF_DIR/$version/main/pg_hba.conf"
  fi
  # The package may have started it already (systemd): then only the trust lines need a reload.
  if pg_answers; then
    pg_ctlcluster --skip-systemctl-redirect "$version" main reload
  else
    say "starting PostgreSQL $version"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start
  fi
  wait_for pg_answers "PostgreSQL at $pg_host:$pg_port"
  if [ "$pg_user" != postgres ]; then
    literal="${pg_user//\'/\'\'}"
    quoted="${pg_user//\"/\"\"}"
    runuser -u postgres -- psql -qAt -p "$pg_port" -c "SELECT 1 FROM pg_roles WHERE rolname = '$literal'" | grep -q 1 ||
      runuser -u postgres -- psql -q -p "$pg_port" -c "CREATE ROLE \"$quoted\" LOGIN CREATEDB"
  fi
fi

if [ "$need_redis" = 1 ] && ! redis_answers; then
  say "starting Redis on port $redis_port"
  mkdir -p "$REDIS_DIR"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$redis_port" --dir "$REDIS_DIR" --logfile "$REDIS_DIR/redis-server.log"
  wait_for redis_answers "Redis at $redis_host:$redis_port"
fi
