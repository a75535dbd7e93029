#!/usr/bin/env bash
# docs-browser.sh is `make docs-browser`: the interactive API references
# (GET /docs) checked in a real browser. It installs Debian's chromium when
# it is missing, starts both services with the demo data and demo keys as
# `make up` does, on a stack and ports of its own, runs tools/docsbrowser,
# and always stops what it started. Screenshots: .artifacts/docs-<svc>.png.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# shellcheck source=lib/debian.sh
. "$(dirname "$0")/lib/debian.sh"
export GOWORK=off

# A separate stack and ports, so a `make up` or another suite keeps its own.
export STACK_DIR=${STACK_DIR:-"$root/.stack-docs"}
export STACK_PG_PORT=${STACK_PG_PORT:-55632}
export STACK_REDIS_PORT=${STACK_REDIS_PORT:-56579}
export NOTES_PORT=${NOTES_PORT:-18180}
export MARKETDATA_PORT=${MARKETDATA_PORT:-18181}
artifacts="$root/.artifacts"

chromium=$(command -v chromium || true)
if [ -z "$chromium" ]; then
  if can_apt; then
    echo "docs-browser: installing Debian's chromium"
    apt_install chromium
    chromium=$(command -v chromium)
  else
    echo "docs-browser: chromium is missing; install it (Debian: apt-get install chromium)" >&2
    exit 1
  fi
fi

# scripts/run.sh keeps its pids, logs and demo keys under .stack/ whatever
# STACK_DIR says: refuse rather than take over a `make up` of this checkout.
if [ -s "$root/.stack/services.pid" ]; then
  echo "docs-browser: services of a 'make up' are running here (.stack/services.pid); run 'make down' first" >&2
  exit 1
fi

make --no-print-directory build >/dev/null
cleanup() { scripts/run.sh --stop || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
scripts/run.sh --detach >/dev/null
# shellcheck disable=SC1091
. "$root/.stack/demo-keys.env"
export NOTES_KEY MARKETDATA_KEY

mkdir -p "$artifacts"
(cd tools/docsbrowser && go test -count=1 ./... && go build -o "$root/bin/docsbrowser" .)
bin/docsbrowser -chromium "$chromium" -out "$artifacts" \
  -notes "http://127.0.0.1:$NOTES_PORT" -marketdata "http://127.0.0.1:$MARKETDATA_PORT"
