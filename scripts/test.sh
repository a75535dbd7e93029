#!/usr/bin/env bash
# test.sh is `make test`: it chooses where PostgreSQL and Redis come from,
# runs every module's tests, then runs each fuzz target for FUZZTIME.
#
# FUZZTIME is an execution count by default (50000x each target, about a
# minute in all on a 2-core machine): go test's duration-based -fuzztime can
# end in a bare "context deadline exceeded" on Go 1.26 (golang/go#75804).
# Every run goes through tools/fuzzrun, which fails only on a real finding (a
# written reproducer, a panic, a failed check) and reports the bare deadline
# without failing, so `make fuzz FUZZTIME=5m` is safe too. The seed corpora
# and stored crashers (testdata/fuzz) are replayed by the ordinary tests.
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
# Tool modules whose unit tests belong to `make test` too: the bench's
# and the fault suite's grading and reports among them (their runs are
# `make bench` and `make faults`; their tests need no server).
tool_modules=(tools/fuzzrun clients bench resilience)
fuzztime=${FUZZTIME:-50000x}
mode=${1:-all}   # all | --fuzz-only | --bench

started_stack=false
cleanup() { if $started_stack; then scripts/stack.sh down; fi; }
trap cleanup EXIT

use_local_stack() {
  if ! scripts/stack.sh status >/dev/null 2>&1; then started_stack=true; fi
  # Only the test URLs are wanted here; the service URLs stay as they were.
  # Assigned first: eval of a failed command substitution would not stop
  # the script.
  local stack_env
  stack_env=$(scripts/stack.sh up)
  eval "$(grep '_TEST_' <<<"$stack_env")"
  echo "test environment: local stack (PostgreSQL and Redis from scripts/stack.sh)"
}

docker_ready() {
  command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1 || return 1
  [ -x scripts/testimages.sh ] || return 1
  scripts/testimages.sh >&2 || return 1
  # Ryuk off only when its image is absent; the host override only inside a
  # container: testimages.sh prints just the lines that apply here.
  local images_env
  images_env=$(scripts/testimages.sh env) || return 1
  eval "$images_env"
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
  for m in "${modules[@]}" "${tool_modules[@]}"; do
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

# run_fuzz runs each fuzz target alone (go test -fuzz takes one target at a
# time) through tools/fuzzrun, built once.
run_fuzz() {
  local m pkg name fuzzrun
  fuzzrun=$(mktemp -d)/fuzzrun
  (cd tools/fuzzrun && go build -o "$fuzzrun" .)
  local status=0
  # Targets are found in the source, not with go test -list, which would run
  # each package's TestMain (and start its containers) just to list names.
  for m in "${modules[@]}"; do
    while read -r pkg name; do
      echo "== fuzz $name ($pkg, $fuzztime)"
      (cd "$m" && "$fuzzrun" -target "$name" -pkg "$pkg" -fuzztime "$fuzztime") || { status=1; break 2; }
    done < <(cd "$m" && grep -rEo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+\(' . |
      sed -E 's#^(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]+)\($#\1 \2#' | sort)
  done
  rm -rf "$(dirname "$fuzzrun")"
  return "$status"
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
