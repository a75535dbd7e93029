#!/usr/bin/env bash
# images.sh builds the container images of notes-svc and marketdata-svc from
# deploy/docker/<svc>.Dockerfile, then runs each once (--version) the way a
# cluster runs it: read-only root filesystem, non-root user, no capabilities,
# no network.
#
#   VERSION             version baked into the binary (default: git describe)
#   IMAGE_REPO          image name prefix (default tickerdesk)
#   IMAGE_TAG           tag (default $VERSION); "latest" is tagged as well
#   SERVICES            which services (default "notes-svc marketdata-svc")
#   CA_BUNDLE           CA certificates copied into the image
#                       (default /etc/ssl/certs/ca-certificates.crt)
#
# Each binary is built here (CGO_ENABLED=0, -trimpath) and copied into
# FROM scratch with the host's CA bundle: no base image, so nothing is ever
# pulled and the build works on a machine without a registry.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
repo=${IMAGE_REPO:-tickerdesk}
tag=${IMAGE_TAG:-$version}
services=${SERVICES:-notes-svc marketdata-svc}
ca_bundle=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
staging="$root/deploy/docker/staging"

log() { printf 'images: %s\n' "$*" >&2; }

stage() {
  local svc=$1 out="$staging/$1"
  [ -s "$ca_bundle" ] || { log "CA bundle $ca_bundle missing (set CA_BUNDLE; Debian: apt-get install ca-certificates)"; exit 1; }
  mkdir -p "$out"
  cp "$ca_bundle" "$out/ca-certificates.crt"
  log "go build $svc ($version)"
  (cd "$svc" && GOWORK=off CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X main.version=$version" -o "$out/$svc" "./cmd/$svc")
}

build_image() {
  local svc=$1 image="$repo/$1:$tag" start=$SECONDS
  local args=(-f "deploy/docker/$svc.Dockerfile"
    --label "org.opencontainers.image.title=$svc"
    --label "org.opencontainers.image.version=$version"
    --label "org.opencontainers.image.revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)"
    -t "$image" -t "$repo/$svc:latest")
  docker build -q "${args[@]}" . >/dev/null 2> >(grep -v -e DEPRECATED -e 'BuildKit is currently disabled' -e 'environment-variable' -e buildx -e '^ *$' >&2)
  log "built $image in $((SECONDS - start))s, $(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.1f MB", $1/1e6}')"
}

# smoke runs the image once as a hardened pod would and checks that it
# reports the version it was built with and does not run as root.
smoke() {
  local svc=$1 image="$repo/$1:$tag" user out
  user=$(docker image inspect -f '{{.Config.User}}' "$image")
  case "$user" in
    ""|0|0:*|root|root:*) log "$image runs as root (User=$user)"; exit 1 ;;
  esac
  out=$(docker run --rm --read-only --cap-drop ALL --security-opt no-new-privileges \
    --network none --user 65532:65532 "$image" --version)
  if ! grep -qF -- "$version" <<<"$out"; then
    log "$image --version printed '$out', want $version"; exit 1
  fi
  log "$image --version: $out (user $user, read-only root)"
}

main() {
  docker info >/dev/null 2>&1 || { log "no Docker engine answers"; exit 1; }
  log "version $version"
  local svc
  for svc in $services; do
    stage "$svc"
    build_image "$svc"
    smoke "$svc"
  done
}

main "$@"
