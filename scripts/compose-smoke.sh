#!/usr/bin/env bash
# compose-smoke.sh brings the whole stack of deploy/compose/compose.yaml up
# from locally built images, calls both APIs through their published ports,
# and always tears everything down again (containers, network, volume).
#
# Needs: tickerdesk/notes-svc and tickerdesk/marketdata-svc (make images),
# tickerdesk/test-postgres:15 and tickerdesk/test-redis:7 (make test-images;
# TICKERDESK_POSTGRES_IMAGE / TICKERDESK_REDIS_IMAGE name others), curl, and jq or
# python3. Works with `docker compose` (v2) and `docker-compose` (v1).
#
#   TICKERDESK_IMAGE_TAG    service image tag (default latest)
#   NOTES_PORT / MARKETDATA_PORT   host ports (default 0: any free port)
#   SMOKE_TIMEOUT           seconds to wait for readiness (default 180)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
file="$root/deploy/compose/compose.yaml"
export COMPOSE_PROJECT_NAME=${COMPOSE_PROJECT_NAME:-tickerdesk-smoke-$$}
export TICKERDESK_IMAGE_TAG=${TICKERDESK_IMAGE_TAG:-latest}
# The stand-ins from `make test-images` unless official images are named.
export TICKERDESK_POSTGRES_IMAGE=${TICKERDESK_POSTGRES_IMAGE:-${TICKERDESK_TEST_POSTGRES_IMAGE:-tickerdesk/test-postgres:15}}
export TICKERDESK_REDIS_IMAGE=${TICKERDESK_REDIS_IMAGE:-${TICKERDESK_TEST_REDIS_IMAGE:-tickerdesk/test-redis:7}}
export NOTES_PORT=${NOTES_PORT:-0} MARKETDATA_PORT=${MARKETDATA_PORT:-0}
timeout=${SMOKE_TIMEOUT:-180}

log() { printf 'compose-smoke: %s\n' "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

if docker compose version >/dev/null 2>&1; then
  compose=(docker compose)
elif command -v docker-compose >/dev/null 2>&1; then
  compose=(docker-compose)
else
  fail "neither 'docker compose' nor 'docker-compose' is installed"
fi
compose+=(-f "$file")

json() { # json FILTER < document   (jq filter syntax subset: .a.b[0].c)
  if command -v jq >/dev/null 2>&1; then
    jq -r "$1"
  else
    python3 -c 'import json,re,sys
v=json.load(sys.stdin)
for k in re.findall(r"\.(\w+)|\[(\d+)\]", sys.argv[1]):
    v=v[k[0]] if k[0] else v[int(k[1])]
print(v if not isinstance(v,bool) else str(v).lower())' "$1"
  fi
}

for image in "tickerdesk/notes-svc:$TICKERDESK_IMAGE_TAG" "tickerdesk/marketdata-svc:$TICKERDESK_IMAGE_TAG" \
  "$TICKERDESK_POSTGRES_IMAGE" "$TICKERDESK_REDIS_IMAGE"; do
  docker image inspect "$image" >/dev/null 2>&1 || fail "image $image missing: run make images and make test-images"
done

cleanup() {
  local rc=$?
  if [ $rc -ne 0 ]; then
    log "state at failure:"
    "${compose[@]}" ps >&2 || true
    "${compose[@]}" logs --no-color --tail=40 >&2 || true
  fi
  "${compose[@]}" down -v --remove-orphans --timeout 10 >/dev/null 2>&1 || true
  log "stack removed ($COMPOSE_PROJECT_NAME)"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start=$SECONDS
log "up ($COMPOSE_PROJECT_NAME, ${compose[*]:0:2})"
# up waits for the one-shot migrations and the demo load (depends_on
# service_completed_successfully) and fails when one of them fails.
"${compose[@]}" up -d || fail "compose up failed"

published() { # published SERVICE PORT -> host:port
  local hp
  hp=$("${compose[@]}" port "$1" "$2" 2>/dev/null | head -n1)
  [ -n "$hp" ] || return 1
  echo "127.0.0.1:${hp##*:}"
}

wait_ready() { # wait_ready SERVICE PORT
  local deadline=$((SECONDS + timeout)) addr
  while [ $SECONDS -lt $deadline ]; do
    if addr=$(published "$1" "$2") && curl -fsS -o /dev/null --max-time 2 "http://$addr/readyz"; then
      echo "$addr"; return
    fi
    sleep 1
  done
  fail "$1 not ready within ${timeout}s"
}
notes=$(wait_ready notes-svc 8080)
marketdata=$(wait_ready marketdata-svc 8081)
log "ready after $((SECONDS - start))s: notes-svc $notes, marketdata-svc $marketdata"

curl -fsS --max-time 5 "http://$notes/healthz" >/dev/null || fail "notes-svc /healthz"
curl -fsS --max-time 5 "http://$marketdata/healthz" >/dev/null || fail "marketdata-svc /healthz"

new_key() { # new_key SERVICE -> the key (last stdout line)
  local key
  key=$("${compose[@]}" run --rm --no-deps -T "$1" keys create --account smoke </dev/null | tail -n1 | tr -d '\r')
  [ -n "$key" ] || fail "$1 keys create printed no key"
  echo "$key"
}
notes_key=$(new_key notes-svc)
marketdata_key=$(new_key marketdata-svc)
log "keys created (${notes_key:0:4}…, ${marketdata_key:0:4}…)"

# notes: create, then read back.
body=$(mktemp)
status=$(curl -sS -o "$body" -w '%{http_code}' --max-time 10 -X POST "http://$notes/v1/notes" \
  -H "Authorization: Bearer $notes_key" -H 'Content-Type: application/json' \
  -d '{"title":"compose smoke","content":"hello from compose-smoke","tags":["smoke"]}')
[ "$status" = 201 ] || fail "POST /v1/notes: $status $(cat "$body")"
id=$(json .id <"$body")
status=$(curl -sS -o "$body" -w '%{http_code}' --max-time 10 "http://$notes/v1/notes/$id" \
  -H "Authorization: Bearer $notes_key")
[ "$status" = 200 ] || fail "GET /v1/notes/$id: $status $(cat "$body")"
[ "$(json .title <"$body")" = "compose smoke" ] || fail "GET /v1/notes/$id returned $(cat "$body")"
log "notes-svc: created and read note $id"

# marketdata: one EOD record of the demo data.
status=$(curl -sS -o "$body" -w '%{http_code}' --max-time 10 \
  "http://$marketdata/v1/eod?access_key=$marketdata_key&symbols=GOOG&limit=1")
[ "$status" = 200 ] || fail "GET /v1/eod: $status $(cat "$body")"
[ "$(json .data[0].symbol <"$body")" = GOOG ] || fail "GET /v1/eod returned $(cat "$body")"
[ "$(json .pagination.count <"$body")" = 1 ] || fail "GET /v1/eod pagination: $(cat "$body")"
log "marketdata-svc: GOOG $(json .data[0].date <"$body") close $(json .data[0].close <"$body")"
rm -f "$body"

# Compose health checks run `<svc> healthcheck` inside the container.
for svc in notes-svc marketdata-svc; do
  cid=$("${compose[@]}" ps -q "$svc")
  deadline=$((SECONDS + 60))
  while :; do
    health=$(docker inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{end}}' "$cid")
    [ "$health" = starting ] && [ $SECONDS -lt $deadline ] || break
    sleep 2
  done
  if [ "$health" != healthy ]; then
    out=$(docker inspect -f '{{range .State.Health.Log}}{{.Output}}{{end}}' "$cid" | grep -v '^[[:space:]]*$' | head -n2)
    if grep -q 'unknown command "healthcheck"' <<<"$out"; then
      fail "$svc has no 'healthcheck' subcommand, which the compose health check runs (see deploy/README.md, Compose)"
    fi
    fail "$svc health is '$health': $out"
  fi
done
log "both services healthy; passed in $((SECONDS - start))s"
