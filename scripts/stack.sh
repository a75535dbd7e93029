#!/usr/bin/env bash
# stack.sh starts and stops the throwaway PostgreSQL and Redis servers that
# `make run` and `make test` use. Data lives under .stack/ (git-ignored) and
# the servers listen on loopback on non-default ports, so they never clash
# with a system PostgreSQL or Redis.
#
#   scripts/stack.sh up      start what is not running yet, then print env
#   scripts/stack.sh down    stop both servers
#   scripts/stack.sh env     print the export lines for the running stack
#   scripts/stack.sh status  exit 0 when both servers answer
#
# STACK_DIR, STACK_PG_PORT and STACK_REDIS_PORT run a second, separate stack
# (the fault suite restarts its own servers without disturbing others).
#
# Servers named by NOTES_DATABASE_URL / MARKETDATA_DATABASE_URL /
# MARKETDATA_REDIS_URL are used instead and not started here.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/debian.sh
. "$(dirname "$0")/lib/debian.sh"
dir=${STACK_DIR:-"$root/.stack"}
pg_port=${STACK_PG_PORT:-55432}
redis_port=${STACK_REDIS_PORT:-56379}
pg_data="$dir/pg"
pg_run="$dir/run"
redis_dir="$dir/redis"

log() { printf 'stack: %s\n' "$*" >&2; }

pg_bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r); do
    local v=${d#/usr/lib/postgresql/}; v=${v%%/*}
    if [ "$v" -ge 15 ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return; fi
  done
  if command -v pg_ctl >/dev/null 2>&1; then dirname "$(readlink -f "$(command -v pg_ctl)")"; fi
}

need_pg() { [ -z "${NOTES_DATABASE_URL:-}" ] || [ -z "${MARKETDATA_DATABASE_URL:-}" ]; }
need_redis() { [ -z "${MARKETDATA_REDIS_URL:-}" ]; }

install_missing() {
  local pkgs=()
  if need_pg && [ -z "$(pg_bindir)" ]; then pkgs+=(postgresql); fi
  if need_redis && ! command -v redis-server >/dev/null 2>&1; then pkgs+=(redis-server); fi
  [ ${#pkgs[@]} -eq 0 ] && return 0
  if can_apt; then
    log "installing ${pkgs[*]} from Debian packages"
    apt_install "${pkgs[@]}"
    # The packages start system-wide servers on the default ports; this
    # stack does not need them.
    if command -v service >/dev/null 2>&1; then
      service redis-server stop >/dev/null 2>&1 || true
      service postgresql stop >/dev/null 2>&1 || true
    fi
  else
    log "missing: ${pkgs[*]}. Install PostgreSQL 15 or newer and Redis 7 (Debian: apt-get install postgresql redis-server), or set NOTES_DATABASE_URL, MARKETDATA_DATABASE_URL and MARKETDATA_REDIS_URL."
    exit 1
  fi
}

# as_pg runs a command as the user that owns the cluster: PostgreSQL refuses
# to run as root.
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_up() {
  local bin; bin=$(pg_bindir)
  mkdir -p "$dir"
  if [ ! -s "$pg_data/PG_VERSION" ]; then
    mkdir -p "$pg_data" "$pg_run"
    [ "$(id -u)" = 0 ] && chown postgres: "$pg_data" "$pg_run"
    chmod 700 "$pg_data"
    as_pg "$bin/initdb" -D "$pg_data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >/dev/null
    cat >>"$pg_data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $pg_port
unix_socket_directories = '$pg_run'
max_connections = 300
shared_buffers = 256MB
fsync = off
synchronous_commit = off
full_page_writes = off
CONF
  fi
  mkdir -p "$pg_run"; [ "$(id -u)" = 0 ] && chown postgres: "$pg_run"
  if ! as_pg "$bin/pg_ctl" -D "$pg_data" status >/dev/null 2>&1; then
    as_pg "$bin/pg_ctl" -D "$pg_data" -l "$pg_data/server.log" -w -t 60 start >/dev/null
    log "PostgreSQL on 127.0.0.1:$pg_port"
  fi
  local db
  for db in notes marketdata; do
    if ! psql_local -tAc "select 1 from pg_database where datname='$db'" | grep -q 1; then
      psql_local -qc "create database $db" >/dev/null
    fi
  done
}

psql_local() { psql -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -X "$@"; }

redis_up() {
  mkdir -p "$redis_dir"
  if ! redis-cli -p "$redis_port" ping >/dev/null 2>&1; then
    redis-server --port "$redis_port" --bind 127.0.0.1 --daemonize yes --dir "$redis_dir" \
      --save '' --appendonly no --maxmemory 256mb --maxmemory-policy volatile-lru \
      --pidfile "$redis_dir/redis.pid" --logfile "$redis_dir/redis.log" >/dev/null
    local i
    for i in $(seq 1 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    log "Redis on 127.0.0.1:$redis_port"
  fi
}

print_env() {
  local pg="postgres://postgres@127.0.0.1:$pg_port"
  echo "export NOTES_DATABASE_URL='${NOTES_DATABASE_URL:-$pg/notes?sslmode=disable}'"
  echo "export MARKETDATA_DATABASE_URL='${MARKETDATA_DATABASE_URL:-$pg/marketdata?sslmode=disable}'"
  echo "export MARKETDATA_REDIS_URL='${MARKETDATA_REDIS_URL:-redis://127.0.0.1:$redis_port/0}'"
  # Test suites create a database per test through this administrative URL.
  echo "export NOTES_TEST_DATABASE_URL='${NOTES_TEST_DATABASE_URL:-${NOTES_DATABASE_URL:-$pg/postgres?sslmode=disable}}'"
  echo "export MARKETDATA_TEST_DATABASE_URL='${MARKETDATA_TEST_DATABASE_URL:-${MARKETDATA_DATABASE_URL:-$pg/postgres?sslmode=disable}}'"
  echo "export MARKETDATA_TEST_REDIS_URL='${MARKETDATA_TEST_REDIS_URL:-${MARKETDATA_REDIS_URL:-redis://127.0.0.1:$redis_port/0}}'"
}

down() {
  local bin; bin=$(pg_bindir)
  if [ -s "$pg_data/PG_VERSION" ] && [ -n "$bin" ]; then
    as_pg "$bin/pg_ctl" -D "$pg_data" -m fast -w stop >/dev/null 2>&1 && log "PostgreSQL stopped" || true
  fi
  if [ -s "$redis_dir/redis.pid" ]; then
    redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1 && log "Redis stopped" || true
  fi
}

status() {
  if need_pg; then psql_local -tAc 'select 1' >/dev/null 2>&1 || return 1; fi
  if need_redis; then redis-cli -p "$redis_port" ping >/dev/null 2>&1 || return 1; fi
}

case "${1:-}" in
  up)
    install_missing
    need_pg && pg_up
    need_redis && redis_up
    print_env ;;
  down) down ;;
  env) print_env ;;
  status) status ;;
  *) echo "usage: $0 up|down|env|status" >&2; exit 2 ;;
esac
