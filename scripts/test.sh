#!/usr/bin/env bash
# test.sh is `make test`: it chooses where PostgreSQL and Redis come from,
# runs every module's tests, then runs each fuzz target for FUZZTIME.
#
# The test environment is chosen in this order:
#   1. NOTES_TEST_DATABASE_URL / MARKETDATA_TEST_DATABASE_URL /
#      MARKETDATA_TEST_REDIS_URL, when set, name the servers to use.
#   2. Otherwise, when a Docker engine answers and the PostgreSQL and Redis
#      images are present or can be built (scripts/testimages.sh), the suites
#      start their own containers with testcontainers-go.
#   3. Otherwise the local stack (scripts/stack.sh) is started, installing
#      PostgreSQL and Redis from Debian packages when it can.
# TICKERDESK_TEST_ENV=docker or =local forces 2 or 3.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOWORK=off
modules=(pkg notes-svc marketdata-svc)
fuzztime=${FUZZTIME:-8s}
mode=${1:-all}   # all | --fuzz-only | --bench

started_stack=false
cleanup() { if $started_stack; then scripts/stack.sh down; fi; }
trap cleanup EXIT

use_local_stack() {
  if ! scripts/stack.sh status >/dev/null 2>&1; then started_stack=true; fi
  # Only the test URLs are wanted here; the service URLs stay as they were.
  eval "$(scripts/stack.sh up | grep '_TEST_')"
  echo "test environment: local stack (PostgreSQL and Redis from scripts/stack.sh)"
}

docker_ready() {
  command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1 || return 1
  [ -x scripts/testimages.sh ] || return 1
  scripts/testimages.sh >&2 || return 1
  # Ryuk off only when its image is absent; the host override only inside a
  # container: testimages.sh prints just the lines that apply here.
  eval "$(scripts/testimages.sh env)"
  env | grep '^TESTCONTAINERS_' || true
}

choose_env() {
  if [ -n "${NOTES_TEST_DATABASE_URL:-}${MARKETDATA_TEST_DATABASE_URL:-}${MARKETDATA_TEST_REDIS_URL:-}" ]; then
    echo "test environment: servers named by *_TEST_*_URL"
    return
  fi
  case "${TICKERDESK_TEST_ENV:-auto}" in
    local) use_local_stack ;;
    docker)
      docker_ready || { echo "TICKERDESK_TEST_ENV=docker but no Docker engine or test images" >&2; exit 1; }
      echo "test environment: testcontainers (Docker)" ;;
    *)
      if docker_ready; then echo "test environment: testcontainers (Docker)"; else use_local_stack; fi ;;
  esac
}

# run_tests runs each module's tests verbosely into a log and shows the
# package results, where each suite got its servers (testenv lines), and
# every failure in full.
run_tests() {
  local m log status passed=0 failed=0
  log=$(mktemp)
  for m in "${modules[@]}"; do
    echo "== test $m"
    status=0
    (cd "$m" && CGO_ENABLED=1 go test -race -count=1 -p 2 -v ./...) >"$log" 2>&1 || status=$?
    grep -E '^(ok|FAIL|\?|panic:)|^testenv: ' "$log" || true
    passed=$((passed + $(grep -cE '^\s*--- PASS' "$log" || true)))
    failed=$((failed + $(grep -cE '^\s*--- FAIL' "$log" || true)))
    if [ "$status" -ne 0 ]; then
      echo "-- failures in $m:"
      grep -vE '^\s*(=== (RUN|PAUSE|CONT|NAME)|--- PASS)' "$log" | tail -n 300
      rm -f "$log"
      echo "tests: $passed passed, $((failed > 0 ? failed : 1)) failed"
      exit 1
    fi
  done
  rm -f "$log"
  echo "tests: $passed passed, $failed failed"
}

# run_fuzz runs each fuzz target alone: go test -fuzz takes one target at a
# time.
run_fuzz() {
  local m pkg name
  for m in "${modules[@]}"; do
    (cd "$m" && go test -list '^Fuzz' ./... 2>/dev/null) | awk '
      /^Fuzz/ { names[n++] = $1; next }
      /^ok/   { for (i = 0; i < n; i++) print $2, names[i]; n = 0 }' |
    while read -r pkg name; do
      echo "== fuzz $name ($pkg, $fuzztime)"
      (cd "$m" && go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" >/tmp/fuzz.$$.log 2>&1) || {
        cat /tmp/fuzz.$$.log; rm -f /tmp/fuzz.$$.log; exit 1; }
      tail -n 1 /tmp/fuzz.$$.log
    done
  done
  rm -f /tmp/fuzz.$$.log
}

# run_benchmarks runs every module's Go benchmarks with -benchmem; the
# store benchmarks need the same servers as the tests.
run_benchmarks() {
  local m
  for m in "${modules[@]}"; do
    echo "== bench $m"
    (cd "$m" && go test -run '^$' -bench . -benchmem -count=1 ./... | grep -E '^(Benchmark|ok|FAIL|goos|cpu)|^testenv: ')
  done
}

case "$mode" in
  --fuzz-only) run_fuzz ;;
  --bench) choose_env; run_benchmarks ;;
  *) choose_env; run_tests; run_fuzz; echo "all tests passed" ;;
esac
