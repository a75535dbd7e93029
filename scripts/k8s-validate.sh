#!/usr/bin/env bash
# k8s-validate.sh renders every overlay under deploy/k8s/overlays with the
# pinned kustomize and runs the validation module (deploy/k8s/validate):
# strict decoding of every object into the client-go and Gateway API types,
# and semantic checks against the services' config and their route tables
# (deploy/routes, written by make routes) in both directions.
#
#   KUSTOMIZE_VERSION   pinned kustomize (default v5.8.2, installed into .bin/)
#   KUSTOMIZE           use this binary instead
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
version=${KUSTOMIZE_VERSION:-v5.8.2}
export GOWORK=off

log() { printf 'k8s-validate: %s\n' "$*" >&2; }

if [ -z "${KUSTOMIZE:-}" ]; then
  KUSTOMIZE="$root/.bin/kustomize"
  if ! [ -x "$KUSTOMIZE" ] || ! "$KUSTOMIZE" version 2>/dev/null | grep -qF "$version"; then
    log "installing kustomize $version into .bin/"
    GOBIN="$root/.bin" go install "sigs.k8s.io/kustomize/kustomize/v5@$version"
  fi
fi
export KUSTOMIZE
log "kustomize $("$KUSTOMIZE" version)"

for dir in "$root"/deploy/k8s/overlays/*/; do
  name=$(basename "$dir")
  out=$("$KUSTOMIZE" build "$dir")
  log "overlay $name: $(grep -c '^kind:' <<<"$out") objects ($(grep '^kind:' <<<"$out" | sort | uniq -c | awk '{printf "%s%s %s", sep, $1, $3; sep=", "}'))"
done

cd "$root/deploy/k8s/validate"
unformatted=$(gofmt -l .)
[ -z "$unformatted" ] || { log "gofmt would change: $unformatted"; exit 1; }
go vet ./...
go test -count=1 -v ./... 2>&1 | grep -v '^=== RUN' | sed 's/^/  /'
exit "${PIPESTATUS[0]}"
