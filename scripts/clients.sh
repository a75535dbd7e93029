#!/usr/bin/env bash
# clients.sh is `make clients`: it generates the Go clients' gen.go files
# from the OpenAPI documents the services serve, with oapi-codegen at a
# pinned version run by `go run` (so the clients module does not require it).
# `clients.sh --check` (make clients-check) generates into a temporary
# directory instead and fails on any difference from the committed files.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOWORK=off
oapi_codegen=github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2
# Each line: the package directory (holding oapi-codegen.yaml) and its document.
clients=(
  "clients/notes/notesapi notes-svc/internal/httpapi/openapi.yaml"
  "clients/marketdata/marketdataapi marketdata-svc/internal/httpapi/openapi.yaml"
  "clients/marketdata/marketdatav2api marketdata-svc/internal/httpapi/openapi_v2.yaml"
)

generate() {
  local root=$1 dir spec
  for c in "${clients[@]}"; do
    read -r dir spec <<<"$c"
    mkdir -p "$root/$dir"
    go run "$oapi_codegen" -config "$dir/oapi-codegen.yaml" -o "$root/$dir/gen.go" "$spec"
  done
}

case "${1:-}" in
  "")
    generate .
    echo "clients generated" ;;
  --check)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    generate "$tmp"
    status=0
    for c in "${clients[@]}"; do
      read -r dir _ <<<"$c"
      diff -u "$dir/gen.go" "$tmp/$dir/gen.go" || status=1
    done
    if [ "$status" -ne 0 ]; then
      echo "clients-check: the generated clients differ from the OpenAPI documents; run make clients" >&2
      exit 1
    fi
    echo "clients-check: generated clients match the OpenAPI documents" ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac
