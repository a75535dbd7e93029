#!/usr/bin/env bash
# testimages.sh builds local stand-ins for the postgres:15 and redis:7 images
# that the testcontainers suites and the compose stack use, for machines that
# cannot pull from a registry, and the compose stack's nginx gateway. Each
# image sits on a root filesystem made from Debian packages:
#
#   debootstrap --variant=minbase --include=postgresql-15,redis-server bookworm
#   debootstrap --variant=minbase --include=nginx,openssl,curl bookworm
#   debootstrap --variant=minbase --include=postgresql-15,patroni,etcd-server,... bookworm
#
# (the first shared by postgres and redis, the second the gateway's, the third
# the high-availability drills' tickerdesk/test-patroni:15), each
# cached as a tarball under .cache/testimages/ (git-ignored), imported once
# with `docker import`, and topped with the entrypoints in
# deploy/testimages/{postgres,redis}/ and deploy/gateway/image/.
#
#   scripts/testimages.sh          build the images whose tags are missing
#   scripts/testimages.sh --force  rebuild all three images (the rootfs caches stay)
#   scripts/testimages.sh ha       build tickerdesk/test-patroni:15 when missing
#                                  or older than deploy/testimages/patroni
#                                  (PostgreSQL 15, Patroni, etcd, pgBackRest and
#                                  HAProxy: the failover and backup drills' one
#                                  image, built only by the drills that use it)
#   scripts/testimages.sh env      print the testcontainers environment for this
#                                  engine: eval "$(scripts/testimages.sh env)"
#
# Tags come from TICKERDESK_TEST_POSTGRES_IMAGE (default
# tickerdesk/test-postgres:15), TICKERDESK_TEST_REDIS_IMAGE (default
# tickerdesk/test-redis:7) and TICKERDESK_GATEWAY_IMAGE (default
# tickerdesk/gateway:nginx). The stand-ins have names of their own so that
# they never shadow the official postgres and redis images on a developer's
# machine; point both variables at official tags to test against those. A tag
# that already exists is left alone, and a rootfs is only made for an image
# that is built.
#
# The Debian mirror is the one this machine's apt is configured with (the
# first deb source of the suite in /etc/apt/sources.list.d/*.sources or
# /etc/apt/sources.list), or TESTIMAGES_MIRROR. The project names no mirror
# of its own.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/debian.sh
. "$(dirname "$0")/lib/debian.sh"
cache="$root/.cache/testimages"
suite=${TESTIMAGES_SUITE:-bookworm}
mirror=${TESTIMAGES_MIRROR:-}
# Two root filesystems: "db" for postgres and redis, "gateway" for nginx.
# Bump a rev when build_rootfs or the package list changes, so that cache
# and base image are rebuilt; the db names are the ones from before the
# gateway existed, so that present images stay valid.
db_packages=postgresql-15,redis-server
db_rev=2
db_tar="$cache/rootfs-$suite-r$db_rev.tar"
db_base="tickerdesk/testimages-rootfs:$suite-r$db_rev"
gateway_packages=nginx,openssl,curl
gateway_rev=1
gateway_tar="$cache/rootfs-gateway-$suite-r$gateway_rev.tar"
gateway_base="tickerdesk/testimages-rootfs:gateway-$suite-r$gateway_rev"
pg_image=${TICKERDESK_TEST_POSTGRES_IMAGE:-tickerdesk/test-postgres:15}
redis_image=${TICKERDESK_TEST_REDIS_IMAGE:-tickerdesk/test-redis:7}
gateway_image=${TICKERDESK_GATEWAY_IMAGE:-tickerdesk/gateway:nginx}
# The HA rootfs: patroni's etcd client (python3-etcd) is only a
# recommendation of the package, which debootstrap does not follow; curl
# asks Patroni's REST API from inside the containers.
ha_packages=postgresql-15,patroni,python3-etcd,etcd-server,etcd-client,pgbackrest,haproxy,curl
ha_rev=1
ha_tar="$cache/rootfs-ha-$suite-r$ha_rev.tar"
ha_base="tickerdesk/testimages-rootfs:ha-$suite-r$ha_rev"
ha_image=${TICKERDESK_TEST_PATRONI_IMAGE:-tickerdesk/test-patroni:15}

log() { printf 'testimages: %s\n' "$*" >&2; }
have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# tc_env prints the environment the testcontainers suites need with this
# engine, as export lines for eval:
#   - testcontainers-go starts a Ryuk reaper container (testcontainers/ryuk)
#     to clean up after crashed test binaries. Without a registry that image
#     cannot be pulled and every container start fails, so Ryuk is disabled,
#     with the exact value "true", when no Ryuk image is present or the one
#     present is our stand-in (scripts/ryukimage.sh): only `make tc-test`
#     runs with the stand-in on purpose, the other suites keep the set-up
#     they are known to pass with. The suites still terminate their
#     containers in TestMain.
#   - Inside a container (/.dockerenv) testcontainers-go looks for published
#     ports on the default gateway. When the engine runs in this very network
#     namespace (its docker0 bridge is visible here) they are on localhost.
tc_env() {
  local ryuk
  ryuk=$(docker image ls -q testcontainers/ryuk 2>/dev/null | head -n1)
  if [ -z "${TESTCONTAINERS_RYUK_DISABLED:-}" ] && { [ -z "$ryuk" ] ||
    [ "$(docker image inspect -f '{{index .Config.Labels "org.tickerdesk.stand-in"}}' "$ryuk" 2>/dev/null)" = true ]; }; then
    echo 'export TESTCONTAINERS_RYUK_DISABLED=true'
  fi
  if [ -z "${TESTCONTAINERS_HOST_OVERRIDE:-}" ] && [ -e /.dockerenv ] && [ -e /sys/class/net/docker0 ]; then
    case "${DOCKER_HOST:-unix://}" in
      unix://*) echo 'export TESTCONTAINERS_HOST_OVERRIDE=localhost' ;;
    esac
  fi
}

# apt_mirror prints the URI of the first "deb" source that carries $suite in
# the machine's apt configuration: deb822 files (*.sources) first, then the
# one-line format. Security and updates suites are not a base suite, so only
# an exact suite match counts.
apt_mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    awk -v suite="$suite" '
      function flush() {
        if (deb && uri != "" && has) { print uri; found = 1; exit }
        deb = 0; uri = ""; has = 0
      }
      /^[ \t]*$/ { flush(); next }
      /^[ \t]*#/ { next }
      tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
      tolower($1) == "uris:" { uri = $2 }
      tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == suite) has = 1 }
      END { if (!found) flush() }' "$f"
  done | head -n 1 | grep . && return
  cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk -v suite="$suite" '
      $1 == "deb" {
        i = 2; if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        if ($(i + 1) == suite) { print $i; exit }
      }' | grep .
}

build_rootfs() { # build_rootfs TAR PACKAGES
  local rootfs_tar=$1 packages=$2
  if [ -s "$rootfs_tar" ]; then
    log "rootfs cached: ${rootfs_tar#"$root"/}"
    return
  fi
  if ! command -v debootstrap >/dev/null 2>&1; then
    if can_apt; then
      log "installing debootstrap"
      apt_install debootstrap
    else
      log "debootstrap is missing: install it (Debian: apt-get install debootstrap) and run as root"
      exit 1
    fi
  fi
  if [ "$(id -u)" != 0 ]; then
    log "debootstrap needs root"
    exit 1
  fi
  if [ -z "$mirror" ] && ! mirror=$(apt_mirror); then
    log "no Debian mirror for $suite in /etc/apt/sources.list or /etc/apt/sources.list.d/: configure apt, or set TESTIMAGES_MIRROR"
    exit 1
  fi
  mkdir -p "$cache"
  local name
  name=$(basename "$rootfs_tar" .tar)
  local dir="$cache/$name.work" dlog="$cache/$name.debootstrap.log"
  rm -rf "$dir"
  log "debootstrap $suite with $packages from $mirror (a few minutes, once)"
  local start=$SECONDS
  if ! debootstrap --variant=minbase --include="$packages" "$suite" "$dir" "$mirror" >"$dlog" 2>&1; then
    tail -n 30 "$dlog" >&2
    log "debootstrap failed; full log in ${dlog#"$root"/}"
    exit 1
  fi
  # A package script (the HA rootfs has several daemons) can leave /proc
  # mounted inside the tree, which rm below cannot take apart.
  umount -l "$dir/proc" 2>/dev/null || true
  # The paths below that a rootfs lacks are simply not there to remove.
  # The package scripts create a "main" cluster; the entrypoint runs initdb
  # itself, so drop it together with caches and documentation. The LLVM JIT
  # (about 150 MB with its libraries) goes too: without llvmjit.so PostgreSQL
  # quietly runs without JIT. Message translations are not needed either.
  rm -rf "$dir"/var/lib/postgresql/15/main "$dir"/etc/postgresql/15/main \
    "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/* \
    "$dir"/usr/share/doc/* "$dir"/usr/share/man/* "$dir"/usr/share/info/* \
    "$dir"/usr/share/locale/* "$dir"/var/log/*.log "$dir"/var/log/apt/* \
    "$dir"/usr/lib/postgresql/15/lib/llvmjit* "$dir"/usr/lib/postgresql/15/lib/bitcode \
    "$dir"/usr/lib/*-linux-gnu/libLLVM-* "$dir"/usr/lib/*-linux-gnu/libz3.so*
  tar --numeric-owner --one-file-system -C "$dir" \
    --exclude=./dev/* --exclude=./proc/* --exclude=./sys/* \
    -cf "$rootfs_tar.tmp" .
  mv "$rootfs_tar.tmp" "$rootfs_tar"
  rm -rf "$dir"
  log "rootfs built in $((SECONDS - start))s: ${rootfs_tar#"$root"/} ($(du -h "$rootfs_tar" | cut -f1))"
}

import_base() { # import_base IMAGE TAR PACKAGES
  local base_image=$1 rootfs_tar=$2
  if have_image "$base_image"; then return; fi
  build_rootfs "$rootfs_tar" "$3"
  log "docker import $base_image"
  docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' \
    "$rootfs_tar" "$base_image" >/dev/null
}

build_image() { # build_image TAG DIR BASE_IMAGE
  local tag=$1 dir=$2 base_image=$3
  log "building $tag from ${dir#"$root"/}"
  # The classic builder resolves FROM against local images without asking a
  # registry; these Dockerfiles need nothing newer.
  DOCKER_BUILDKIT=0 docker build -q --build-arg BASE_IMAGE="$base_image" -t "$tag" "$dir" >/dev/null
}

main() {
  local force=
  case "${1:-}" in
    env) tc_env; return ;;
    ha)
      # The image carries the digest of its build directory, so a changed
      # entrypoint rebuilds it (on the cached rootfs, in seconds).
      local t=$SECONDS rev
      rev=$(cd "$root/deploy/testimages/patroni" && cat Dockerfile ha-entrypoint.sh | sha256sum | cut -c1-16)
      if [ "$(docker image inspect -f '{{index .Config.Labels "org.tickerdesk.rev"}}' "$ha_image" 2>/dev/null)" = "$rev" ]; then
        log "$ha_image present; skipping"; return
      fi
      import_base "$ha_base" "$ha_tar" "$ha_packages"
      log "building $ha_image from deploy/testimages/patroni"
      DOCKER_BUILDKIT=0 docker build -q --build-arg BASE_IMAGE="$ha_base" --label org.tickerdesk.rev="$rev" \
        -t "$ha_image" "$root/deploy/testimages/patroni" >/dev/null
      log "built $ha_image in $((SECONDS - t))s"
      return ;;
    --force) force=1 ;;
    "") ;;
    *) echo "usage: $0 [--force|env|ha]" >&2; exit 2 ;;
  esac
  if ! docker info >/dev/null 2>&1; then
    log "no Docker engine answers; nothing to build"
    exit 1
  fi
  local start=$SECONDS todo=()
  if [ -n "$force" ] || ! have_image "$pg_image"; then todo+=(postgres); fi
  if [ -n "$force" ] || ! have_image "$redis_image"; then todo+=(redis); fi
  if [ -n "$force" ] || ! have_image "$gateway_image"; then todo+=(gateway); fi
  if [ ${#todo[@]} -eq 0 ]; then
    log "$pg_image, $redis_image and $gateway_image present; skipping"
    return
  fi
  local name
  for name in "${todo[@]}"; do
    case "$name" in
      postgres)
        import_base "$db_base" "$db_tar" "$db_packages"
        build_image "$pg_image" "$root/deploy/testimages/postgres" "$db_base" ;;
      redis)
        import_base "$db_base" "$db_tar" "$db_packages"
        build_image "$redis_image" "$root/deploy/testimages/redis" "$db_base" ;;
      gateway)
        import_base "$gateway_base" "$gateway_tar" "$gateway_packages"
        build_image "$gateway_image" "$root/deploy/gateway/image" "$gateway_base" ;;
    esac
  done
  log "built ${todo[*]} in $((SECONDS - start))s"
}

main "$@"
