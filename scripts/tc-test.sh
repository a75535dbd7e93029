#!/usr/bin/env bash
# tc-test.sh runs the tests of tools/reaper (the Ryuk stand-in), then the
# testcontainers module's tests (tdnotes, tdmarketdata, their Examples)
# against the locally built images, twice: with Ryuk off, where the
# module's own Terminate must clean up, and with Ryuk on (the stand-in from
# scripts/ryukimage.sh), where the reaper also watches.
# Full logs: .cache/tc-test-ryuk-{off,on}.log.
#
# PostgreSQL and Redis are the local stand-ins unless
# TICKERDESK_TEST_POSTGRES_IMAGE / TICKERDESK_TEST_REDIS_IMAGE say otherwise.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
log() { printf 'tc-test: %s\n' "$*" >&2; }

export GOWORK=off
export TICKERDESK_TEST_POSTGRES_IMAGE=${TICKERDESK_TEST_POSTGRES_IMAGE:-tickerdesk/test-postgres:15}
export TICKERDESK_TEST_REDIS_IMAGE=${TICKERDESK_TEST_REDIS_IMAGE:-tickerdesk/test-redis:7}
# Only TESTCONTAINERS_HOST_OVERRIDE is taken from here; Ryuk is set below.
images_env=$(TESTCONTAINERS_RYUK_DISABLED=set "$root/scripts/testimages.sh" env)
eval "$images_env"
(cd "$root/tools/reaper" && go test -count=1 ./...)
"$root/scripts/ryukimage.sh"
ryuk_image=$("$root/scripts/ryukimage.sh" tag)

mkdir -p "$root/.cache"
cd "$root/testcontainers"
for ryuk in off on; do
  disabled=false
  [ "$ryuk" = off ] && disabled=true
  log "go test ./... with Ryuk $ryuk"
  start=$SECONDS
  set +e
  TESTCONTAINERS_RYUK_DISABLED=$disabled go test -count=1 -v ./... >"$root/.cache/tc-test-ryuk-$ryuk.log" 2>&1
  status=$?
  set -e
  grep -E '^(--- |FAIL|ok|panic)|Run took' "$root/.cache/tc-test-ryuk-$ryuk.log" >&2 || true
  [ "$status" = 0 ] || { log "tests failed with Ryuk $ryuk (log: .cache/tc-test-ryuk-$ryuk.log)"; exit 1; }
  # A run "with Ryuk on" that never started the reaper would prove nothing.
  if [ "$ryuk" = on ] && ! grep -q "Creating container for image $ryuk_image" "$root/.cache/tc-test-ryuk-on.log"; then
    log "Ryuk on, but no $ryuk_image container was started"; exit 1
  fi
  log "Ryuk $ryuk: passed in $((SECONDS - start))s"
done
