#!/usr/bin/env bash
# bench.sh is `make bench`: it measures both services against the machine's
# ceilings in one run and writes BENCHMARKS.md and bench/results.json.
#
#  1. installs wrk and the PostgreSQL client tools (pgbench, psql) from
#     Debian packages when they are missing;
#  2. builds the services (make build) and the bench tools (bench/ module);
#  3. starts the local stack if it is not running (never stops it);
#  4. runs bench/cmd/benchrun, which prepares the bench databases
#     (bench_marketdata: ~10M EOD rows, bench_notes: 100,000 notes, and for
#     tenant_scale bench_tenants_100 and bench_tenants_5000: 200 notes per
#     account, 1M notes in the larger; bench_intraday: 50M minute bars
#     for intraday_query; bench_scale_small and bench_scale_large: 1M and
#     100M EOD bars, 5,000 and 170,000 tickers, for the scale workloads;
#     all kept between runs), then
#     measures every workload next to its ceiling.
#
# Settings: BENCH_* environment variables, see BENCHMARKS.md ("Reproduce").
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/debian.sh
. "$(dirname "$0")/lib/debian.sh"
cd "$root"
log() { printf 'bench: %s\n' "$*" >&2; }

pg_bindir() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r | head -n1
}

# pgbench lives in the server's bin directory on Debian, not on PATH.
need=()
command -v wrk >/dev/null 2>&1 || need+=(wrk)
if ! command -v pgbench >/dev/null 2>&1 && [ ! -x "$(pg_bindir)/pgbench" ]; then need+=(postgresql-contrib); fi
command -v psql >/dev/null 2>&1 || need+=(postgresql-client)
command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
if [ ${#need[@]} -gt 0 ]; then
  if can_apt; then
    log "installing ${need[*]} from Debian packages"
    apt_install "${need[@]}"
  else
    log "missing ${need[*]}: install them (Debian: apt-get install ${need[*]})"
    exit 1
  fi
fi
if ! command -v pgbench >/dev/null 2>&1; then PATH="$(pg_bindir):$PATH"; fi
command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:$PATH"
export PATH

log "building services"
make --no-print-directory build >&2

log "building bench tools"
mkdir -p bench/out/bin
(cd bench && GOWORK=off CGO_ENABLED=0 go build -trimpath -o out/bin/ ./cmd/...)
# The data providers' fake the sync workloads read (marketdata-svc's own
# command: the fakes are the service's test code, which the bench module
# may not import).
(cd marketdata-svc && GOWORK=off CGO_ENABLED=0 go build -trimpath -o ../bench/out/bin/ ./cmd/providerfake)

# Assigned first: a failing stack.sh must stop the run, and eval of a
# failed command substitution would not.
stack_env=$(scripts/stack.sh up)
eval "$stack_env"

exec bench/out/bin/benchrun "$root"
