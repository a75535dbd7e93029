#!/usr/bin/env bash
# run.sh is `make run`: it starts PostgreSQL and Redis (scripts/stack.sh),
# migrates both databases, loads the demo data, creates a demo key per
# service, starts both services and prints how to call them. Ctrl-C stops
# everything it started.
#
#   scripts/run.sh            run in the foreground (make run)
#   scripts/run.sh --detach   start and return, leaving everything up (make up)
#   scripts/run.sh --stop     stop what --detach started (make down)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
logs="$root/.stack/logs"
pidfile="$root/.stack/services.pid"
mkdir -p "$logs"

stop_detached() {
  if [ -s "$pidfile" ]; then
    while read -r pid; do kill -TERM "$pid" 2>/dev/null || true; done <"$pidfile"
    while read -r pid; do while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done; done <"$pidfile"
    rm -f "$pidfile"
  fi
  # Stop the stack only when `--detach` started it, never one that was
  # already running for someone else.
  if [ -f "$root/.stack/started-by-run" ]; then
    rm -f "$root/.stack/started-by-run"
    scripts/stack.sh down
  fi
}

detach=false
case "${1:-}" in
  --stop) stop_detached; exit 0 ;;
  --detach) detach=true ;;
esac

# shellcheck source=lib/stack.sh
. scripts/lib/stack.sh
stack_up

notes_port=${NOTES_PORT:-8080}
market_port=${MARKETDATA_PORT:-8081}
notes_admin_port=${NOTES_ADMIN_PORT:-9080}
market_admin_port=${MARKETDATA_ADMIN_PORT:-9081}

# The admin API (docs/ADMIN.md) of both services, on loopback, with a demo
# admin token generated once into .stack/ (git-ignored).
admin_tokens="$root/.stack/admin-tokens"
if ! [ -s "$admin_tokens" ]; then
  (umask 077; printf 'demo:%s\n' "$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >"$admin_tokens")
fi
admin_token=$(cut -d: -f2 "$admin_tokens")

port_free() { # name port
  if (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then
    echo "port $2 for $1 is in use; stop what holds it or set ${3}=<port>" >&2
    return 1
  fi
}

wait_ready() { # name url pid
  local i
  for i in $(seq 1 100); do
    kill -0 "$3" 2>/dev/null || break
    curl -fsS "$2/readyz" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "$1 did not become ready; see $logs/$1.log:" >&2
  tail -n 5 "$logs/$1.log" >&2
  return 1
}

have() { [ -x "bin/$1" ] && [ -d "$1/cmd/$1" ]; }

serve() { # name port port-variable env-prefix admin-port admin-port-variable: starts `name serve` in the background, its pid in $served
  port_free "$1" "$2" "$3"
  port_free "$1 admin" "$5" "$6"
  env "${4}_HTTP_ADDR=127.0.0.1:$2" "${4}_ADMIN_ADDR=127.0.0.1:$5" "${4}_ADMIN_TOKEN_FILE=$admin_tokens" \
    "bin/$1" serve >"$logs/$1.log" 2>&1 &
  served=$!
  pids+=("$served")
}

notes_key="" market_key=""
if have notes-svc; then
  bin/notes-svc migrate >"$logs/notes-migrate.log"
  notes_key=$(bin/notes-svc keys create --account demo | tail -n 1)
  serve notes-svc "$notes_port" NOTES_PORT NOTES "$notes_admin_port" NOTES_ADMIN_PORT
  notes_pid=$served
else
  echo "notes-svc does not exist yet: nothing to start for it."
fi
if have marketdata-svc; then
  bin/marketdata-svc migrate >"$logs/marketdata-migrate.log"
  bin/marketdata-svc demo >"$logs/marketdata-demo.log"
  market_key=$(bin/marketdata-svc keys create --account demo --rate-per-second 10 --monthly-quota 100000 | tail -n 1)
  serve marketdata-svc "$market_port" MARKETDATA_PORT MARKETDATA "$market_admin_port" MARKETDATA_ADMIN_PORT
  market_pid=$served
else
  echo "marketdata-svc does not exist yet: nothing to start for it."
fi

if [ -n "$notes_key" ]; then wait_ready notes-svc "http://127.0.0.1:$notes_port" "$notes_pid"; fi
if [ -n "$market_key" ]; then wait_ready marketdata-svc "http://127.0.0.1:$market_port" "$market_pid"; fi
umask 077
printf 'NOTES_KEY=%s\nMARKETDATA_KEY=%s\n' "$notes_key" "$market_key" >"$root/.stack/demo-keys.env"

cat <<TXT

Tickerdesk is running. Logs: .stack/logs/. Demo keys: .stack/demo-keys.env.
Admin APIs on loopback: notes :$notes_admin_port, marketdata :$market_admin_port (token: .stack/admin-tokens).

TXT
if [ -n "$notes_key" ]; then cat <<TXT
notes-svc       http://localhost:$notes_port   (API reference: notes-svc/docs/API.md)
  export NOTES_KEY=$notes_key
  curl -s -X POST localhost:$notes_port/v1/notes -H "Authorization: Bearer \$NOTES_KEY" \\
       -H 'Content-Type: application/json' -d '{"title":"Hello","content":"First note","tags":["demo"]}'
  curl -s localhost:$notes_port/v1/notes -H "Authorization: Bearer \$NOTES_KEY"
  # The admin API (docs/ADMIN.md, token in .stack/admin-tokens): an account, then a key for it
  export ADMIN_TOKEN=$admin_token
  curl -s -X POST localhost:$notes_admin_port/admin/v1/accounts -H "Authorization: Bearer \$ADMIN_TOKEN" -d '{"name":"alice"}'
  curl -s -X POST localhost:$notes_admin_port/admin/v1/accounts/<id>/keys -H "Authorization: Bearer \$ADMIN_TOKEN" -d '{"scopes":["notes:read"]}'

TXT
fi
if [ -n "$market_key" ]; then cat <<TXT
marketdata-svc  http://localhost:$market_port   (API reference: marketdata-svc/docs/API.md)
  export MARKETDATA_KEY=$market_key
  curl -s "localhost:$market_port/v1/eod?access_key=\$MARKETDATA_KEY&symbols=GOOG,GSPC.INDX&date_to=2008-10-14&limit=4"
  curl -s "localhost:$market_port/v1/tickers?access_key=\$MARKETDATA_KEY&symbols=GOOG,MSFT"
  curl -s "localhost:$market_port/v1/intraday?access_key=\$MARKETDATA_KEY&symbols=GOOG&date_from=2008-10-14&date_to=2008-10-14&limit=3"

TXT
fi
if $detach; then
  printf '%s\n' "${pids[@]}" >"$pidfile"
  if $started_stack; then touch "$root/.stack/started-by-run"; fi
  trap - INT TERM EXIT
  echo "Detached. Stop everything with: make down"
  exit 0
fi
echo "Ctrl-C stops everything."
if [ ${#pids[@]} -eq 0 ]; then
  echo "No service exists yet; PostgreSQL and Redis are up. Press Ctrl-C to stop them."
  while :; do sleep 3600; done
fi
wait -n "${pids[@]}" || true
echo "a service stopped; see $logs" >&2
