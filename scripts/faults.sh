#!/usr/bin/env bash
# faults.sh (make faults) proves the services keep answering under faults
# and hostile input, and writes the figures to RELIABILITY.md:
#
#   1. builds both services (make build, into the suite's own bin dir) and
#      the runner (resilience/cmd/faults);
#   2. starts the suite's OWN PostgreSQL and Redis (scripts/stack.sh with a
#      separate STACK_DIR and ports), which the runner stops and restarts;
#      the shared development stack is never touched;
#   3. runs the static checks (scripts/security.sh) unless FAULTS_STATIC=0;
#   4. runs the fault scenarios, the hostile-input table and the security
#      checks against the service binaries as child processes;
#   5. writes RELIABILITY.md and exits non-zero if any expectation failed.
#
# The stack and every child process are stopped on exit, whatever happens.
# Runtime is bounded: each load is a fixed rate for a fixed time.
#
# Environment: FAULTS_STACK_DIR (default .stack/faults), FAULTS_PG_PORT
# (55532), FAULTS_REDIS_PORT (56479), FAULTS_ONLY (comma list of steps),
# FAULTS_OUT (RELIABILITY.md), FAULTS_STATIC (1), FAULTS_WEBHOOK_DOWN (how long
# the webhooks step keeps its receiver down, 20s; make webhook-drill: 10m).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export GOWORK=off
stack_dir=${FAULTS_STACK_DIR:-$root/.stack/faults}
pg_port=${FAULTS_PG_PORT:-55532}
redis_port=${FAULTS_REDIS_PORT:-56479}
out=${FAULTS_OUT:-$root/RELIABILITY.md}
bin="$stack_dir/bin"
start=$(date +%s)

# The suite's stack: the URLs of the shared stack must not leak in, or
# stack.sh would use those servers instead of starting its own.
stack() {
  env -u NOTES_DATABASE_URL -u MARKETDATA_DATABASE_URL -u MARKETDATA_REDIS_URL \
    STACK_DIR="$stack_dir" STACK_PG_PORT="$pg_port" STACK_REDIS_PORT="$redis_port" \
    "$root/scripts/stack.sh" "$@"
}

runner_pid=""
cleanup() {
  local rc=$?
  if [ -n "$runner_pid" ] && kill -0 "$runner_pid" 2>/dev/null; then
    # The runner stops the services it started (they also die with it).
    kill -TERM "$runner_pid" 2>/dev/null || true
    wait "$runner_pid" 2>/dev/null || true
  fi
  stack down || true
  echo "faults: finished in $(( $(date +%s) - start ))s"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "faults: building"
mkdir -p "$bin"
make --no-print-directory build BIN="$bin"
for s in notes-svc marketdata-svc; do
  [ -x "$bin/$s" ] || { echo "faults: $s was not built"; exit 1; }
done
(cd resilience && go build -o "$bin/faults" ./cmd/faults)

echo "faults: starting the suite's own PostgreSQL ($pg_port) and Redis ($redis_port) in $stack_dir"
stack up >/dev/null

static_args=()
static_rc=0
if [ "${FAULTS_STATIC:-1}" != 0 ]; then
  echo "faults: static checks (scripts/security.sh)"
  scripts/security.sh --report "$stack_dir/static.md" || static_rc=$?
  static_args=(-static "$stack_dir/static.md")
fi

echo "faults: running the suites"
"$bin/faults" -bin "$bin" -stack-dir "$stack_dir" -pg-port "$pg_port" -redis-port "$redis_port" \
  -out "$out" -only "${FAULTS_ONLY:-}" -webhook-down "${FAULTS_WEBHOOK_DOWN:-20s}" "${static_args[@]}" &
runner_pid=$!
rc=0
wait "$runner_pid" || rc=$?
runner_pid=""
if [ "$static_rc" != 0 ]; then
  echo "faults: static checks failed (see the Static checks section of $out)"
  [ "$rc" != 0 ] || rc=$static_rc
fi
exit "$rc"
