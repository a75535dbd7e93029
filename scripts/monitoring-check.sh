#!/usr/bin/env bash
# monitoring-check.sh checks deploy/monitoring: `promtool check rules` and
# `promtool test rules` with the pinned promtool (built into .bin/ once
# by make, from the Go module proxy), then the check module's tests, which parse every
# PromQL expression of the rules and dashboards and fail when a generated
# file (metrics-<service>.txt, the PrometheusRule) is out of date.
#
#   PROMTOOL   the promtool binary (make monitoring-check builds the pinned one
#              into .bin/promtool once, from the Go module proxy)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export GOWORK=off

log() { printf 'monitoring-check: %s\n' "$*" >&2; }

PROMTOOL=${PROMTOOL:-$root/.bin/promtool}
[ -x "$PROMTOOL" ] || { log "no promtool at $PROMTOOL: run make monitoring-check"; exit 1; }
log "$("$PROMTOOL" --version 2>&1 | head -1)"

cd "$root/deploy/monitoring"
"$PROMTOOL" check rules rules.yaml
"$PROMTOOL" test rules rules_test.yaml

cd check
unformatted=$(gofmt -l .)
[ -z "$unformatted" ] || { log "gofmt would change: $unformatted"; exit 1; }
go vet ./...
go test -count=1 ./...
