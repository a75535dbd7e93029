#!/usr/bin/env bash
# images.sh builds the container images of notes-svc and marketdata-svc from
# deploy/docker/<svc>.Dockerfile, then runs each once (--version) the way a
# cluster runs it: read-only root filesystem, non-root user, no capabilities,
# no network.
#
#   IMAGE_MODE=auto     (default) "build" when the base images are present or a
#                       registry answers, else "offline"
#   IMAGE_MODE=build    multi-stage build in golang + distroless (needs BuildKit
#                       and a registry or pre-pulled base images)
#   IMAGE_MODE=offline  binaries built here (CGO_ENABLED=0, -trimpath), copied
#                       into FROM scratch with the host's CA bundle
#   VERSION             version baked into the binary (default: git describe)
#   IMAGE_REPO          image name prefix (default tickerdesk)
#   IMAGE_TAG           tag (default $VERSION); "latest" is tagged as well
#   SERVICES            which services (default "notes-svc marketdata-svc")
#   GO_IMAGE, DISTROLESS_IMAGE   base images of the build mode (defaults
#                       golang:1.26-bookworm, gcr.io/distroless/static-debian12:nonroot)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

mode=${IMAGE_MODE:-auto}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
repo=${IMAGE_REPO:-tickerdesk}
tag=${IMAGE_TAG:-$version}
services=${SERVICES:-notes-svc marketdata-svc}
go_version=${GO_VERSION:-1.26}
builder_image=${GO_IMAGE:-golang:${go_version}-bookworm}
final_image=${DISTROLESS_IMAGE:-gcr.io/distroless/static-debian12:nonroot}
ca_bundle=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
staging="$root/deploy/docker/staging"

log() { printf 'images: %s\n' "$*" >&2; }

detect_mode() {
  if docker image inspect "$builder_image" >/dev/null 2>&1 && docker image inspect "$final_image" >/dev/null 2>&1; then
    echo build; return
  fi
  # A registry that answers gets the normal multi-stage build; a pull that
  # fails (no network, no DNS) within the timeout means offline.
  if timeout 30 docker pull -q "$final_image" >/dev/null 2>&1; then
    echo build
  else
    echo offline
  fi
}

stage_offline() {
  local svc=$1 out="$staging/$1"
  [ -s "$ca_bundle" ] || { log "CA bundle $ca_bundle missing (set CA_BUNDLE; Debian: apt-get install ca-certificates)"; exit 1; }
  mkdir -p "$out"
  cp "$ca_bundle" "$out/ca-certificates.crt"
  log "go build $svc ($version)"
  (cd "$svc" && GOWORK=off CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X main.version=$version" -o "$out/$svc" "./cmd/$svc")
}

build_image() {
  local svc=$1 target=$2 image="$repo/$1:$tag" start=$SECONDS
  local args=(-f "deploy/docker/$svc.Dockerfile" --target "$target"
    --build-arg "VERSION=$version" --build-arg "GO_IMAGE=$builder_image"
    --build-arg "DISTROLESS_IMAGE=$final_image"
    --label "org.opencontainers.image.title=$svc"
    --label "org.opencontainers.image.version=$version"
    --label "org.opencontainers.image.revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)"
    -t "$image" -t "$repo/$svc:latest")
  if [ "$target" = image ]; then
    # BuildKit builds only the stages the target needs (not the offline one).
    DOCKER_BUILDKIT=1 docker build -q "${args[@]}" . >/dev/null
  else
    docker build -q "${args[@]}" . >/dev/null 2> >(grep -v -e DEPRECATED -e 'BuildKit is currently disabled' -e 'environment-variable' -e buildx -e '^ *$' >&2)
  fi
  log "built $image ($target) in $((SECONDS - start))s, $(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.1f MB", $1/1e6}')"
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
  if [ "$mode" = auto ]; then mode=$(detect_mode); fi
  local target
  case "$mode" in
    build) target=image ;;
    offline) target=offline ;;
    *) log "IMAGE_MODE must be auto, build or offline"; exit 2 ;;
  esac
  log "mode $mode, version $version"
  local svc
  for svc in $services; do
    if [ "$target" = offline ]; then stage_offline "$svc"; fi
    build_image "$svc" "$target"
    smoke "$svc"
  done
}

main "$@"
