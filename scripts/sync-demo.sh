#!/usr/bin/env bash
# sync-demo.sh is `make sync-demo`: the walk-through of
# marketdata-svc/docs/DATA.md ("Keeping prices current") against the
# providers' fakes (cmd/providerfake), on the local stack
# (scripts/stack.sh): a ten-year backfill from marketstack, the daily
# update of a whole exchange from EODHD's bulk endpoint, a bar the provider
# restates, and a per-symbol daily update from Tiingo. It uses the symbols
# S00000 to S00002, which only the fakes have; running it again stores
# nothing new (every window is synced already).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
logs="$root/.stack/logs"
mkdir -p "$logs" "$root/bin"

# shellcheck source=lib/stack.sh
. scripts/lib/stack.sh
stack_up

(cd marketdata-svc && go build -o "$root/bin/marketdata-svc" ./cmd/marketdata-svc && go build -o "$root/bin/providerfake" ./cmd/providerfake)

bin/providerfake --token demo-token --symbols 3 >"$logs/providerfake.log" 2>&1 &
pids+=("$!")
fake=""
for _ in $(seq 1 50); do
  fake=$(sed -n 's/^providerfake listening on //p' "$logs/providerfake.log")
  [ -n "$fake" ] && break
  sleep 0.1
done
[ -n "$fake" ] || { echo "providerfake did not start; see $logs/providerfake.log" >&2; exit 1; }

# Each provider's credential and, for the demo, its base URL: the fake's.
export MARKETDATA_SYNC_MARKETSTACK_TOKEN=demo-token MARKETDATA_SYNC_MARKETSTACK_URL=$fake/marketstack/v2
export MARKETDATA_SYNC_EODHD_TOKEN=demo-token MARKETDATA_SYNC_EODHD_URL=$fake/eodhd
export MARKETDATA_SYNC_TIINGO_TOKEN=demo-token MARKETDATA_SYNC_TIINGO_URL=$fake
export MARKETDATA_LOG_LEVEL=warn

step() { printf '\n== %s\n$ %s\n' "$1" "${*:2}"; "${@:2}"; }

bin/marketdata-svc demo >/dev/null # the exchanges (XNAS among them)
step "1. backfill ten years from marketstack, with the customer's own key" \
  bin/marketdata-svc sync --provider marketstack --symbols S00000,S00001,S00002 --from 2014-07-01 --to 2024-06-28
step "2. the same command again: everything is synced, nothing is fetched or stored" \
  bin/marketdata-svc sync --provider marketstack --symbols S00000,S00001,S00002 --from 2014-07-01 --to 2024-06-28
step "3. the daily update of the whole exchange, one EODHD call a day" \
  bin/marketdata-svc sync --provider eodhd --exchange XNAS --from 2024-07-01 --to 2024-07-03
curl -fsS -X PUT "$fake/fake/bar?symbol=S00001&date=2024-07-02&open=20&high=21&low=19&close=20.5&volume=1234"
step "4. the provider restated S00001's 2024-07-02 bar: --lookback takes it, factors and caches follow" \
  bin/marketdata-svc sync --provider eodhd --exchange XNAS --to 2024-07-03 --lookback 2
step "5. a per-symbol daily update from Tiingo, from the day after the last stored bar" \
  bin/marketdata-svc sync --provider tiingo --symbols S00000 --to 2024-07-05
set +e
step "6. a symbol no provider knows: listed as failed, the others stored, exit status 3" \
  bin/marketdata-svc sync --provider tiingo --symbols S00001,NOPE --to 2024-07-05
status=$?
set -e
echo "exit status $status"
[ "$status" = 3 ] || { echo "sync-demo: want exit status 3" >&2; exit 1; }
echo
echo "sync-demo: done"
