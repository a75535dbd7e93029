#!/usr/bin/env bash
# compose-smoke.sh brings the whole stack of deploy/compose/compose.yaml up
# from locally built images, calls both APIs through the gateway only (TLS,
# the one published port), and always tears everything down again
# (containers, network, volume). Besides the calls themselves it shows:
#
#   - routing: paths the HTTPRoute leaves out (/healthz) stay internal, and
#     a body over the gateway's limit gets 413 from the gateway;
#   - X-Request-Id: the caller's id is passed through and echoed, or one is
#     made, and the service logs the same id;
#   - client address: the address a service logs (and throttles on) is the
#     one the gateway saw, even with a forged X-Forwarded-For; and a forged
#     X-Forwarded-For sent to a replica directly, not via the gateway, is
#     not believed;
#   - quota: a key with a monthly quota of QUOTA gets exactly QUOTA answers
#     across the two marketdata replicas, then 429 usage_limit_reached;
#   - SIGTERM: one notes replica is stopped with SIGTERM under load (wrk);
#     no request is lost (every answer 2xx, no socket error).
#
# Needs: tickerdesk/notes-svc and tickerdesk/marketdata-svc (make images),
# tickerdesk/test-postgres:15, tickerdesk/test-redis:7 and
# tickerdesk/gateway:nginx (make test-images; TICKERDESK_POSTGRES_IMAGE,
# TICKERDESK_REDIS_IMAGE and TICKERDESK_GATEWAY_IMAGE name others), curl, wrk
# (installed with apt-get when missing and running as root), and jq or
# python3. Works with `docker compose` (v2) and `docker-compose` (v1).
#
#   TICKERDESK_IMAGE_TAG    service image tag (default latest)
#   GATEWAY_PORT            host port of the gateway (default 0: any free port)
#   TICKERDESK_NET_PREFIX   the network's first three octets (default: a free
#                           172.30.x)
#   SMOKE_QUOTA             the monthly quota of the quota check (default 5)
#   SMOKE_LOAD_SECONDS      length of the SIGTERM load (default 8)
#   SMOKE_TIMEOUT           seconds to wait for readiness (default 180)
#   SMOKE_REPORT            write the measured figures to this file (key=value)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/debian.sh
. "$(dirname "$0")/lib/debian.sh"
file="$root/deploy/compose/compose.yaml"
export COMPOSE_PROJECT_NAME=${COMPOSE_PROJECT_NAME:-tickerdesk-smoke-$$}
export TICKERDESK_IMAGE_TAG=${TICKERDESK_IMAGE_TAG:-latest}
# The stand-ins from `make test-images` unless official images are named.
export TICKERDESK_POSTGRES_IMAGE=${TICKERDESK_POSTGRES_IMAGE:-${TICKERDESK_TEST_POSTGRES_IMAGE:-tickerdesk/test-postgres:15}}
export TICKERDESK_REDIS_IMAGE=${TICKERDESK_REDIS_IMAGE:-${TICKERDESK_TEST_REDIS_IMAGE:-tickerdesk/test-redis:7}}
export TICKERDESK_GATEWAY_IMAGE=${TICKERDESK_GATEWAY_IMAGE:-tickerdesk/gateway:nginx}
export GATEWAY_PORT=${GATEWAY_PORT:-0}
timeout=${SMOKE_TIMEOUT:-180}
quota=${SMOKE_QUOTA:-5}
load_seconds=${SMOKE_LOAD_SECONDS:-8}
spoofed=203.0.113.7

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

if ! command -v wrk >/dev/null 2>&1; then
  if can_apt; then
    log "installing wrk"
    apt_install wrk
  else
    fail "wrk is missing (Debian: apt-get install wrk)"
  fi
fi

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
  "$TICKERDESK_POSTGRES_IMAGE" "$TICKERDESK_REDIS_IMAGE" "$TICKERDESK_GATEWAY_IMAGE"; do
  docker image inspect "$image" >/dev/null 2>&1 || fail "image $image missing: run make images and make test-images"
done

# A /24 no other Docker network uses, so that parallel stacks do not clash.
if [ -z "${TICKERDESK_NET_PREFIX:-}" ]; then
  used=$(docker network inspect $(docker network ls -q) --format '{{range .IPAM.Config}}{{.Subnet}} {{end}}' 2>/dev/null | tr ' ' '\n')
  for _ in $(seq 1 50); do
    candidate=172.30.$((RANDOM % 256))
    grep -q "^$candidate\.\|^172\.30\.0\.0/16\|^172\.16\.0\.0/12" <<<"$used" || { TICKERDESK_NET_PREFIX=$candidate; break; }
  done
  [ -n "${TICKERDESK_NET_PREFIX:-}" ] || fail "no free 172.30.x.0/24 for the stack; set TICKERDESK_NET_PREFIX"
fi
export TICKERDESK_NET_PREFIX
# The Docker host's address on the stack's network (compose.yaml fixes it):
# what the gateway sees for a client calling the published port from here.
host_ip=$TICKERDESK_NET_PREFIX.1

tmp=$(mktemp -d)
cleanup() {
  local rc=$?
  if [ $rc -ne 0 ]; then
    log "state at failure:"
    "${compose[@]}" ps >&2 || true
    "${compose[@]}" logs --no-color --tail=40 >&2 || true
  fi
  "${compose[@]}" down -v --remove-orphans --timeout 10 >/dev/null 2>&1 || true
  rm -rf "$tmp"
  log "stack removed ($COMPOSE_PROJECT_NAME)"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start=$SECONDS
log "up ($COMPOSE_PROJECT_NAME, ${compose[*]:0:2}, network $TICKERDESK_NET_PREFIX.0/24)"
# up waits for the one-shot migrations and the demo load (depends_on
# service_completed_successfully) and the replicas' health before it starts
# the gateway, and fails when one of them fails.
"${compose[@]}" up -d || fail "compose up failed"

port=$("${compose[@]}" port gateway 8443 2>/dev/null | head -n1)
port=${port##*:}
[ -n "$port" ] || fail "the gateway publishes no port"
gw="https://localhost:$port"
# The certificate the gateway made at start: the only one curl trusts here.
"${compose[@]}" exec -T gateway cat /run/gateway/tls.crt >"$tmp/ca.crt" || fail "no certificate in the gateway"
call() { # call OUT [curl args...] -> status; every call verifies the gateway's certificate
  local out=$1; shift
  curl -sS --cacert "$tmp/ca.crt" -o "$out" -D "$tmp/headers" -w '%{http_code}' --max-time 10 "$@"
}
deadline=$((SECONDS + timeout))
until [ "$(call /dev/null "$gw/v1/notes" 2>/dev/null)" = 401 ]; do
  [ $SECONDS -lt $deadline ] || fail "the gateway did not route /v1/notes within ${timeout}s"
  sleep 1
done
log "ready after $((SECONDS - start))s: gateway $gw (TLS verified), the only published port"

for svc in notes-svc-1 notes-svc-2 marketdata-svc-1 marketdata-svc-2; do
  if [ -n "$("${compose[@]}" port "$svc" 8080 2>/dev/null)$("${compose[@]}" port "$svc" 8081 2>/dev/null)" ]; then
    fail "$svc publishes a port; only the gateway may"
  fi
done

new_key() { # new_key SERVICE BINARY [args] -> the key (last stdout line)
  local svc=$1 bin=$2 key; shift 2
  key=$("${compose[@]}" exec -T "$svc" "$bin" keys create --account smoke "$@" </dev/null | tail -n1 | tr -d '\r')
  [ -n "$key" ] || fail "$svc keys create printed no key"
  echo "$key"
}
notes_key=$(new_key notes-svc-1 /notes-svc)
marketdata_key=$(new_key marketdata-svc-1 /marketdata-svc)
log "keys created (${notes_key:0:4}…, ${marketdata_key:0:4}…)"

body="$tmp/body"
# notes: create, then read back, with a caller's request id.
rid=smoke-$$-$RANDOM
status=$(call "$body" -X POST "$gw/v1/notes" -H "X-Request-Id: $rid" \
  -H "Authorization: Bearer $notes_key" -H 'Content-Type: application/json' \
  -d '{"title":"compose smoke","content":"hello from compose-smoke","tags":["smoke"]}')
[ "$status" = 201 ] || fail "POST /v1/notes: $status $(cat "$body")"
grep -qi "^x-request-id: $rid" "$tmp/headers" || fail "POST /v1/notes did not echo X-Request-Id $rid"
id=$(json .id <"$body")
status=$(call "$body" "$gw/v1/notes/$id" -H "Authorization: Bearer $notes_key")
[ "$status" = 200 ] || fail "GET /v1/notes/$id: $status $(cat "$body")"
[ "$(json .title <"$body")" = "compose smoke" ] || fail "GET /v1/notes/$id returned $(cat "$body")"
made=$(grep -i '^x-request-id:' "$tmp/headers" | tr -d '\r' | awk '{print $2}')
[[ "$made" =~ ^[0-9a-f]{32}$ ]] || fail "GET without X-Request-Id: the gateway made no id ($made)"
log "notes-svc: created and read note $id; X-Request-Id passed through ($rid) and made ($made)"

# marketdata: one EOD record of the demo data.
status=$(call "$body" "$gw/v1/eod?access_key=$marketdata_key&symbols=GOOG&limit=1")
[ "$status" = 200 ] || fail "GET /v1/eod: $status $(cat "$body")"
[ "$(json .data[0].symbol <"$body")" = GOOG ] || fail "GET /v1/eod returned $(cat "$body")"
[ "$(json .pagination.count <"$body")" = 1 ] || fail "GET /v1/eod pagination: $(cat "$body")"
status=$(call "$body" "$gw/v2/eod?access_key=$marketdata_key&symbols=GOOG&limit=1")
[ "$status" = 200 ] || fail "GET /v2/eod: $status $(cat "$body")"
log "marketdata-svc: GOOG $(json .data[0].date <"$body") close $(json .data[0].close <"$body") (v1 and v2)"

# Every path of the HTTPRoute (deploy/gateway/routes.conf) reaches its
# service: the answer is the service's (any status below 500), never the
# gateway's own 404.
routed=0
while read -r path upstream; do
  case "$upstream" in
    notes-svc) status=$(call "$body" "$gw$path" -H "Authorization: Bearer $notes_key") ;;
    *) status=$(call "$body" "$gw$path?access_key=$marketdata_key&symbols=GOOG&limit=1") ;;
  esac
  if [ "$status" -ge 500 ] || grep -q 'no API at this path' "$body"; then
    fail "GET $path through the gateway: $status $(cat "$body")"
  fi
  routed=$((routed + 1))
done < <(awk '$1 == "location" && $2 == "=" {p = $3} /proxy_pass/ && p != "" {sub("http://", "", $2); sub(";", "", $2); print p, $2; p = ""}' "$root/deploy/gateway/routes.conf")
[ "$routed" -ge 19 ] || fail "only $routed routed paths in deploy/gateway/routes.conf"
log "routing: all $routed paths of the HTTPRoute answered by their service"

# What the HTTPRoute leaves out stays internal; the body limit is the gateway's.
for path in /healthz /readyz /metrics /v1/openapi.json /v1/notesX; do
  status=$(call "$body" "$gw$path")
  [ "$status" = 404 ] || fail "GET $path through the gateway: $status, want 404 (not routed)"
done
head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' 'x' >"$tmp/big"
status=$(call "$body" -X POST "$gw/v1/notes" -H "Authorization: Bearer $notes_key" \
  -H 'Content-Type: application/json' --data-binary @"$tmp/big")
[ "$status" = 413 ] || fail "POST of 1 MiB + 1 byte: $status, want 413 from the gateway"
log "routing: internal paths 404, a body over 1 MiB 413"

# service_log SERVICE... REQUEST_ID -> the service's access-log line for that request
service_log() {
  local id=${*: -1} svc line
  for svc in "${@:1:$#-1}"; do
    line=$("${compose[@]}" logs --no-color "$svc" 2>/dev/null | sed 's/^[^{]*//' | grep -F "\"request_id\":\"$id\"" | grep -F '"msg":"request"' | tail -n1 || true)
    [ -n "$line" ] && { echo "$line"; return; }
  done
  return 1
}
gateway_log() { # gateway_log REQUEST_ID -> the gateway's access-log line
  "${compose[@]}" logs --no-color gateway 2>/dev/null | sed 's/^[^{]*//' | grep -F "\"request_id\":\"$1\"" | tail -n1
}

# The client address through the gateway, with a forged X-Forwarded-For.
rid=smoke-ip-$$-$RANDOM
status=$(call "$body" "$gw/v1/notes/$id" -H "Authorization: Bearer $notes_key" \
  -H "X-Request-Id: $rid" -H "X-Forwarded-For: $spoofed")
[ "$status" = 200 ] || fail "GET /v1/notes/$id with X-Forwarded-For: $status"
sleep 1
line=$(gateway_log "$rid") || fail "no gateway log line for $rid"
seen=$(json .client_ip <<<"$line")
line=$(service_log notes-svc-1 notes-svc-2 "$rid") || fail "no notes-svc log line for $rid"
logged=$(json .client_ip <<<"$line")
[ "$logged" = "$seen" ] || fail "notes-svc logged client_ip $logged, the gateway saw $seen"
[ "$seen" = "$host_ip" ] || fail "the gateway saw $seen, want the Docker host's address on the network, $host_ip"
log "client address: the gateway saw $seen (the Docker host), notes-svc logged $logged (forged $spoofed ignored)"

# A forged X-Forwarded-For sent straight to a replica, from a container on
# the stack's network that is not the gateway: not believed.
network=$(docker inspect -f '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}' "$("${compose[@]}" ps -q gateway)" | awk '{print $1}')
rid=smoke-direct-$$-$RANDOM
direct=$(docker run --rm --network "$network" --entrypoint sh "$TICKERDESK_GATEWAY_IMAGE" -c \
  'hostname -i; curl -sS -o /dev/null -w "%{http_code}\n" -H "X-Forwarded-For: $1" -H "X-Request-Id: $2" -H "Authorization: Bearer $3" "http://notes-svc-1:8080/v1/notes/$4"' \
  sh "$spoofed" "$rid" "$notes_key" "$id") || fail "the direct call to notes-svc-1 failed"
caller=$(head -n1 <<<"$direct" | awk '{print $1}')
[ "$(tail -n1 <<<"$direct")" = 200 ] || fail "direct GET on notes-svc-1: $(tail -n1 <<<"$direct")"
sleep 1
line=$(service_log notes-svc-1 "$rid") || fail "no notes-svc-1 log line for $rid"
logged=$(json .client_ip <<<"$line")
[ "$logged" = "$caller" ] || fail "notes-svc-1 logged client_ip $logged for a direct call from $caller with X-Forwarded-For $spoofed"
log "client address: a direct call from $caller forging $spoofed is logged as $logged"

# The quota is exact across the two replicas.
quota_key=$(new_key marketdata-svc-2 /marketdata-svc --monthly-quota "$quota")
ok=0 limited=0 other=0 extra=3
for i in $(seq 1 $((quota + extra))); do
  status=$(call "$body" "$gw/v1/eod?access_key=$quota_key&symbols=GOOG&limit=1" -H "X-Request-Id: smoke-quota-$$-$i")
  case "$status" in
    200) ok=$((ok + 1)) ;;
    429) limited=$((limited + 1))
      [ "$(json .error.code <"$body")" = usage_limit_reached ] || fail "429 without usage_limit_reached: $(cat "$body")" ;;
    *) other=$((other + 1)); log "quota call $i: $status $(cat "$body")" ;;
  esac
done
replicas=$("${compose[@]}" logs --no-color gateway 2>/dev/null | sed 's/^[^{]*//' | grep -F "\"request_id\":\"smoke-quota-$$-" |
  while read -r l; do json .upstream <<<"$l"; done | sort -u | tr '\n' ' ')
[ "$ok" = "$quota" ] && [ "$limited" = "$extra" ] && [ "$other" = 0 ] ||
  fail "quota $quota: $ok answered, $limited refused with 429, $other other; want $quota, $extra, 0"
[ "$(wc -w <<<"$replicas")" -ge 2 ] || fail "the quota calls reached one replica only ($replicas)"
log "quota: $((quota + extra)) calls with a quota of $quota: $ok answered, $limited 429 usage_limit_reached, across $replicas"

# SIGTERM to one replica under load: no request lost.
wrk_script="$tmp/auth.lua"
printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$notes_key" >"$wrk_script"
# The container id first: compose itself can take seconds to answer.
victim=$("${compose[@]}" ps -q notes-svc-1)
wrk -t2 -c8 -d"${load_seconds}s" --timeout 5s -s "$wrk_script" "$gw/v1/notes/$id" >"$tmp/wrk.out" 2>&1 &
wrk_pid=$!
sleep 2
killed=$(date +%s.%N)
docker kill -s TERM "$victim" >/dev/null

wait "$wrk_pid" || { cat "$tmp/wrk.out" >&2; fail "wrk failed"; }
cat "$tmp/wrk.out" >&2
sent=$(awk '/requests in/ {print $1}' "$tmp/wrk.out")
non2xx=$(awk -F: '/Non-2xx or 3xx responses/ {gsub(/ /, "", $2); print $2}' "$tmp/wrk.out")
sockerr=$(awk '/Socket errors/ {n = 0; for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+,?$/) n += $i; print n}' "$tmp/wrk.out")
lost=$(( ${non2xx:-0} + ${sockerr:-0} ))
# The drain (NOTES_SHUTDOWN_DRAIN) and the shutdown end with the process;
# its log is buffered until then (pkg/flushwriter).
timeout 30 docker wait "$victim" >/dev/null || fail "notes-svc-1 still running 30s after SIGTERM"
exited=$(awk -v a="$killed" -v b="$(date -d "$(docker inspect -f '{{.State.FinishedAt}}' "$victim")" +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
state=$(docker inspect -f '{{.State.Status}}, exit code {{.State.ExitCode}}' "$victim")
# Logs go to files first: grep -q on a pipe would end compose logs early,
# and pipefail would count that as a failure.
"${compose[@]}" logs --no-color notes-svc-1 >"$tmp/victim.log" 2>/dev/null
"${compose[@]}" logs --no-color gateway 2>/dev/null | sed 's/^[^{]*//' | grep -F "\"path\":\"/v1/notes/$id\"" >"$tmp/load.log" || true
grep -q '"msg":"shutting down: readiness now fails"' "$tmp/victim.log" || fail "notes-svc-1 logged no drain after SIGTERM (state: $state)"
grep -q '"msg":"stopped"' "$tmp/victim.log" || fail "notes-svc-1 exited without a clean stop (state: $state)"
to_victim=$(grep -c "\"upstream\":\"$TICKERDESK_NET_PREFIX.11:8080\"" "$tmp/load.log" || true)
retried=$(grep -c '"upstream":"[^"]*, ' "$tmp/load.log" || true)
[ "${to_victim:-0}" -gt 0 ] || fail "no load request reached notes-svc-1 before SIGTERM"
[ -n "$sent" ] && [ "$sent" -gt 0 ] || fail "wrk sent no request"
[ "$lost" = 0 ] || fail "SIGTERM under load: $lost of $sent requests lost (non-2xx ${non2xx:-0}, socket errors ${sockerr:-0})"
log "SIGTERM to notes-svc-1 after 2s of a ${load_seconds}s load: $sent requests, 0 lost; $to_victim answered by notes-svc-1, $retried retried on notes-svc-2 (notes-svc-1: $state ${exited}s after SIGTERM)"

if [ -n "${SMOKE_REPORT:-}" ]; then
  printf 'load_seconds=%s\nrequests_sent=%s\nrequests_lost=%s\nquota=%s\nquota_calls=%s\nquota_answered=%s\nquota_refused=%s\nanswered_by_stopped_replica=%s\nretried=%s\nexit_after_sigterm_s=%s\n' \
    "$load_seconds" "$sent" "$lost" "$quota" "$((quota + extra))" "$ok" "$limited" "$to_victim" "$retried" "$exited" >"$SMOKE_REPORT"
fi
log "passed in $((SECONDS - start))s"
