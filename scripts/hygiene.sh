#!/usr/bin/env bash
# hygiene.sh checks two properties of the repository that no compiler sees:
#
#   1. No file names a package or image registry host. Package sources come
#      from the machine's own configuration (apt's sources, GOPROXY), images
#      are built locally, and a registry for published images is the
#      operator's choice (<your-registry> in the docs).
#   2. Every image the project builds for itself has a tickerdesk/ name, so a
#      stand-in can never shadow an official image (postgres:15, redis:7) on a
#      developer's machine: the default tags in the scripts, compose and the
#      test environments must all be tickerdesk/....
#   3. No file, reports included, names an absolute path of this machine:
#      the checkout's own path or the home directory. Reports show commands
#      relative to the repository root, so they read the same on every
#      machine.
#   4. Every Makefile target has a `## target: description` line, which
#      `make help` lists.
#   5. No comment in code cites an issue number: the tracker is not in the
#      repository, so a comment says why in its own words.
#
# Run by scripts/security.sh (make security, make faults); exits non-zero
# with the offending lines. `scripts/hygiene.sh --self-test` shows that each
# check catches a planted offender.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# Registry hosts: container registries, language package registries and
# Debian/Ubuntu mirrors, plus any host whose first label is "registry".
registry_re='(^|[^A-Za-z0-9.-])((deb|ftp[0-9]*|security|snapshot|archive|httpredir|cdn-fastly)\.debian\.org|([a-z]+\.)?archive\.ubuntu\.com|proxy\.golang\.org|sum\.golang\.org|goproxy\.(io|cn)|(registry-1\.|index\.|hub\.)?docker\.(io|com)|([a-z0-9-]+\.)?gcr\.io|ghcr\.io|quay\.io|mcr\.microsoft\.com|public\.ecr\.aws|[a-z0-9.-]*\.?pkg\.dev|registry\.[a-z0-9-]+(\.[a-z0-9-]+)+|(registry\.)?npmjs\.(org|com)|pypi\.org|files\.pythonhosted\.org|crates\.io|rubygems\.org|repo[0-9]?\.maven\.org|repo\.maven\.apache\.org)($|[^A-Za-z0-9-])'

check_hosts() { # files...
  grep -nIHE "$registry_re" "$@" 2>/dev/null || true
}

# Default image names the project's own builds and tests use: the value after
# ":-" in TICKERDESK_*IMAGE defaults of the scripts, and the quoted defaults
# of the Go test environments.
check_image_names() { # files...
  {
    grep -nIHoE 'TICKERDESK_TEST_(POSTGRES|REDIS)_IMAGE:-[^}]+' "$@" 2>/dev/null | sed -E 's/:-/ /'
    grep -nIHoE 'imageFromEnv\([A-Za-z]+, "[^"]+"\)|image = "[^"]+"' "$@" 2>/dev/null | sed -E 's/.*"([^"]+)".*/& \1/'
  } | awk '{ if ($NF !~ /^tickerdesk\//) print }' || true
}

check_abs_paths() { # root home files...
  local r=$1 h=$2; shift 2
  # A home of / (or none) would match every absolute path.
  [ "${#h}" -gt 1 ] || h=$r
  grep -nIHF -e "$r/" -e "$h/" "$@" 2>/dev/null || true
}

# check_tracker lists comments that cite an issue number of the project's
# tracker; an upstream reference (golang/go#N) names its own tracker.
check_tracker() { # files...
  [ $# -gt 0 ] || return 0
  grep -nIHE '(//|#|--).*\b[Ii]ssues? #?[0-9]+' "$@" 2>/dev/null | grep -v 'golang/go#' || true
}

files() {
  git ls-files -z --cached --others --exclude-standard |
    xargs -0 -I{} sh -c '[ -f "{}" ] && printf "%s\n" "{}"' |
    grep -vE '(^|/)go\.sum$'
}

self_test() {
  local dir
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' RETURN
  # The planted hosts are assembled at run time, so that this file names
  # no registry host itself.
  local org=org dot=.
  printf 'mirror=http://deb%sdebian%s%s/debian\n' "$dot" "$dot" "$org" >"$dir/a.sh"
  printf 'FROM gcr%sio/distroless/static\n' "$dot" >"$dir/b.Dockerfile"
  printf 'newName: registry%sexample%scom/x\n' "$dot" "$dot" >"$dir/c.yaml"
  printf 'image: ghcr%sio/x/y:1\n' "$dot" >"$dir/d.yaml"
  # The Go proxy case plants the machine's own GOPROXY (its configuration,
  # not a host written here); it is expected caught only when that names a
  # public registry.
  local goproxy
  goproxy=$(go env GOPROXY 2>/dev/null || true)
  printf 'GOPROXY=%s\n' "$goproxy" >"$dir/e.env"
  local planted="a.sh b.Dockerfile c.yaml d.yaml"
  if grep -qE "$registry_re" <<<"GOPROXY=$goproxy"; then planted="$planted e.env"; fi
  printf 'module github.com/tickerdesk/x\n# see https://vuln.go.dev\n' >"$dir/ok.txt"
  printf 'pg_image=${TICKERDESK_TEST_POSTGRES_IMAGE:-postgres:15}\n' >"$dir/f.sh"
  printf '\t\timage = "redis:7"\n' >"$dir/g.go"
  printf 'x=${TICKERDESK_TEST_REDIS_IMAGE:-tickerdesk/test-redis:7}\n' >"$dir/ok.sh"
  printf 'cmd: (cd %s/bench/lua && wrk)\n' "$root" >"$dir/h.json"
  printf 'path %s/.cache/x\n' "$HOME" >"$dir/i.md"
  local abs
  abs=$(check_abs_paths "$root" "$HOME" "$dir"/*)
  for want in h.json i.md; do
    grep -q "/$want:" <<<"$abs" || { echo "hygiene self-test: $want not caught"; return 1; }
  done
  if grep -q '/ok\.' <<<"$abs"; then echo "hygiene self-test: false positive: $abs"; return 1; fi
  printf 'x := 1 // see issue 12, item 5\n' >"$dir/j.go"
  printf '%s\n' '-- marketstack compatibility (issue 10).' >"$dir/k.sql"
  printf '# fuzz by count (golang/go#75804)\n' >"$dir/ok.mk"
  local tr
  tr=$(check_tracker "$dir"/*)
  for want in j.go k.sql; do
    grep -q "/$want:" <<<"$tr" || { echo "hygiene self-test: $want not caught"; return 1; }
  done
  if grep -q '/ok\.' <<<"$tr"; then echo "hygiene self-test: false positive: $tr"; return 1; fi
  local hosts names
  hosts=$(check_hosts "$dir"/*)
  names=$(check_image_names "$dir"/*)
  local want
  for want in $planted; do
    grep -q "/$want:" <<<"$hosts" || { echo "hygiene self-test: $want not caught"; return 1; }
  done
  for want in f.sh g.go; do
    grep -q "/$want:" <<<"$names" || { echo "hygiene self-test: $want not caught"; return 1; }
  done
  if grep -q '/ok\.' <<<"$hosts$names"; then echo "hygiene self-test: false positive: $hosts$names"; return 1; fi
  echo "hygiene self-test: every planted offender caught, no false positive"
}

if [ "${1:-}" = "--self-test" ]; then self_test; exit; fi

mapfile -t list < <(files)
status=0
hosts=$(check_hosts "${list[@]}")
if [ -n "$hosts" ]; then
  echo "hygiene: registry host names in the project (take sources from the machine's configuration):"
  echo "$hosts"
  status=1
fi
# This file's planted image names are its self-test's data.
names=$(check_image_names $(printf '%s\n' "${list[@]}" | grep -v '^scripts/hygiene\.sh$'))
if [ -n "$names" ]; then
  echo "hygiene: locally built images must have tickerdesk/ names, not an official image's:"
  echo "$names"
  status=1
fi
abs=$(check_abs_paths "$root" "$HOME" "${list[@]}")
if [ -n "$abs" ]; then
  echo "hygiene: absolute paths of this machine (write them relative to the repository root):"
  echo "$abs"
  status=1
fi
# Comments of the languages the project writes: //, # and -- (SQL).
tracker=$(check_tracker $(printf '%s\n' "${list[@]}" | grep -E '\.(go|sh|sql|lua|ya?ml|conf)$|(^|/)Makefile$' | grep -v '^scripts/hygiene\.sh$'))
if [ -n "$tracker" ]; then
  echo "hygiene: comments citing issue numbers (say why in the comment's own words):"
  echo "$tracker"
  status=1
fi
undocumented=$(comm -23 <(grep -oE '^[a-z][a-z0-9-]*:' Makefile | tr -d : | sort -u) \
  <(sed -nE 's/^## ([a-z][a-z0-9-]*): .*/\1/p' Makefile | sort -u))
if [ -n "$undocumented" ]; then
  echo "hygiene: Makefile targets without a '## target: description' line (make help):"
  echo "$undocumented"
  status=1
fi
[ $status = 0 ] && echo "hygiene: no registry host names in ${#list[@]} files; every locally built image has a tickerdesk/ name; no absolute path of this machine; no comment cites an issue number"
exit $status
