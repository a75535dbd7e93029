#!/usr/bin/env bash
# ryukimage.sh builds the image testcontainers-go starts as its reaper
# (Ryuk), for machines that cannot pull it: tools/reaper, a stand-in that
# speaks the part of Ryuk's protocol testcontainers-go uses, as a static
# binary FROM scratch, tagged exactly as testcontainers-go asks for it
# (ReaperDefaultImage of the testcontainers-go version the testcontainers
# module requires, e.g. testcontainers/ryuk:0.13.0). The real Ryuk is not
# served by the Go module proxy (its tags are not semver), hence the
# stand-in.
#
#   scripts/ryukimage.sh          build the image unless its tag exists
#   scripts/ryukimage.sh --force  rebuild our stand-in
#   scripts/ryukimage.sh tag      print the tag
#
# A tag that exists but is not our stand-in (a real Ryuk pulled on a
# developer's machine) is left alone.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
log() { printf 'ryukimage: %s\n' "$*" >&2; }
ctx=

# tag reads ReaperDefaultImage from the testcontainers-go source the
# testcontainers module builds with, so it follows upgrades.
tag() {
  local dir
  dir=$(cd "$root/testcontainers" && GOWORK=off go list -m -f '{{.Dir}}' github.com/testcontainers/testcontainers-go)
  sed -n 's/^const ReaperDefaultImage = "\(.*\)"$/\1/p' "$dir/internal/config/config.go" | grep .
}

main() {
  local force= image
  case "${1:-}" in
    tag) tag; return ;;
    --force) force=1 ;;
    "") ;;
    *) echo "usage: $0 [--force|tag]" >&2; exit 2 ;;
  esac
  image=$(tag) || { log "cannot read ReaperDefaultImage from testcontainers-go"; exit 1; }
  if docker image inspect "$image" >/dev/null 2>&1; then
    if [ "$(docker image inspect -f '{{index .Config.Labels "org.tickerdesk.stand-in"}}' "$image")" != true ]; then
      log "$image exists and is not our stand-in; leaving it alone"
      return
    fi
    if [ -z "$force" ]; then
      log "$image present; skipping"
      return
    fi
  fi
  local start=$SECONDS
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' EXIT
  (cd "$root/tools/reaper" && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$ctx/ryuk" .)
  # Root, as Ryuk runs: the engine's socket is bind-mounted as it is on
  # the host.
  cat >"$ctx/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY ryuk /bin/ryuk
LABEL org.testcontainers.ryuk=true org.tickerdesk.stand-in=true \
      org.opencontainers.image.title="Ryuk stand-in (tools/reaper)"
CMD ["/bin/ryuk"]
DOCKERFILE
  # The classic builder: FROM scratch needs no registry and no BuildKit.
  DOCKER_BUILDKIT=0 docker build -q -t "$image" "$ctx" >/dev/null 2> >(grep -v -e DEPRECATED -e 'BuildKit is currently disabled' -e 'environment-variable' -e '^ *$' >&2)
  log "built $image from tools/reaper in $((SECONDS - start))s"
}

main "$@"
