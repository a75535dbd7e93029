#!/usr/bin/env bash
# security.sh (make security) runs the static security checks over pkg,
# notes-svc and marketdata-svc, each module on its own (GOWORK=off):
#
#   gosec        every finding is either fixed or justified, one line each,
#                in resilience/gosec-justified.txt (resilience/cmd/gosecgate)
#   staticcheck  the project's pinned version, all default checks
#   hygiene      no registry host names in any file, and every locally built
#                image has a tickerdesk/ name (scripts/hygiene.sh, with its
#                self-test first)
#   govulncheck  needs https://vuln.go.dev; when that cannot be reached (no
#                network besides the Go module proxy here), it is reported as
#                SKIPPED with the reason, the only check allowed to skip
#
#   scripts/security.sh [--report FILE]   FILE receives a markdown summary
#
# Exit status is non-zero when gosec has open findings or staticcheck
# reports anything.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export GOWORK=off CGO_ENABLED=${CGO_ENABLED:-0}
tools="$root/.bin"
modules=(pkg notes-svc marketdata-svc)
GOSEC_VERSION=v2.22.11
STATICCHECK_VERSION=v0.8.2
GOVULNCHECK_VERSION=v1.9.0

report=""
if [ "${1:-}" = "--report" ]; then report=${2:?--report needs a file}; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
summary="$work/summary.md"
status=0
say() { printf '%s\n' "$*" | tee -a "$summary"; }

install_tool() { # name module@version
  [ -x "$tools/$1" ] && return 0
  echo "security: installing $2"
  mkdir -p "$tools"
  GOBIN="$tools" go install "$2"
}

install_tool gosec "github.com/securego/gosec/v2/cmd/gosec@$GOSEC_VERSION" || exit 1
install_tool staticcheck "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" || exit 1

# gosec, one JSON report per module, gated by the justification list.
reports=()
for m in "${modules[@]}"; do
  echo "security: gosec $m"
  (cd "$m" && "$tools/gosec" -fmt json -out "$work/gosec-$m.json" ./... >/dev/null 2>"$work/gosec-$m.err")
  if [ ! -s "$work/gosec-$m.json" ]; then
    echo "security: gosec failed on $m:"; cat "$work/gosec-$m.err"; status=1; continue
  fi
  reports+=("$work/gosec-$m.json")
done
(cd resilience && go build -o "$work/gosecgate" ./cmd/gosecgate) || exit 1
say "### gosec $GOSEC_VERSION"
say ""
if ! "$work/gosecgate" -root "$root" -justified resilience/gosec-justified.txt "${reports[@]}" >"$work/gosec.md"; then
  status=1
fi
cat "$work/gosec.md" | tee -a "$summary"

# staticcheck.
say "### staticcheck $STATICCHECK_VERSION"
say ""
sc_fail=0
for m in "${modules[@]}"; do
  echo "security: staticcheck $m"
  if out=$(cd "$m" && "$tools/staticcheck" ./... 2>&1); then
    say "- $m: clean"
  else
    sc_fail=1
    say "- $m: findings:"
    say '```'
    say "$out"
    say '```'
  fi
done
[ $sc_fail = 0 ] || status=1
say ""

# Repository hygiene: registry host names and image names.
say "### Repository hygiene"
say ""
if out=$(scripts/hygiene.sh --self-test 2>&1) && out2=$(scripts/hygiene.sh 2>&1); then
  say "- $out"
  say "- $out2"
else
  status=1
  say '```'; say "$out"; say "${out2:-}"; say '```'
fi
say ""

# govulncheck: only when its database answers.
say "### govulncheck"
say ""
if timeout 5 bash -c 'exec 3<>/dev/tcp/vuln.go.dev/443' 2>/dev/null &&
   timeout 120 go run "golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION" -version >/dev/null 2>&1; then
  for m in "${modules[@]}"; do
    echo "security: govulncheck $m"
    if out=$(cd "$m" && timeout 120 go run "golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION" ./... 2>&1); then
      say "- $m: no known vulnerabilities reached"
    else
      status=1
      say "- $m:"; say '```'; say "$out"; say '```'
    fi
  done
else
  say "- SKIPPED: the vulnerability database https://vuln.go.dev cannot be reached from this machine (only the Go module proxy and Debian mirrors are), so govulncheck cannot run here. It runs wherever vuln.go.dev answers; this is the one check allowed to skip."
fi
say ""

if [ $status = 0 ]; then say "Static checks: pass."; else say "Static checks: **FAIL**."; fi
[ -n "$report" ] && cp "$summary" "$report"
exit $status
