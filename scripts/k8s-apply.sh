#!/usr/bin/env bash
# k8s-apply.sh is `make k8s-apply`: every overlay applied to a real
# kube-apiserver. It builds kube-apiserver and kubectl from the Go module
# proxy into .bin/ (once per version), starts etcd and the API server on
# loopback in a temporary directory, installs the Gateway API and
# prometheus-operator CRDs from their Go modules, applies each overlay with
# `kubectl apply --server-side --dry-run=server` and then for real, and runs
# deploy/k8s/apply against the API server: every object exists, and every
# HPA, PDB and NetworkPolicy refers to a Deployment (or its pods) that the
# server holds. A self-test then plants bad objects and requires a failure.
# Everything started is stopped at exit.
#
#   K8S_VERSION        Kubernetes release to build (default v1.37.2, the
#                      family of deploy/k8s/validate's k8s.io/api v0.37.2)
#   ETCD_VERSION       etcd built from its module (default v3.7.0) when no etcd-server package
#   K8S_APPLY_PORT     kube-apiserver's secure port (default 16443)
#   K8S_ETCD_PORTS     etcd client and peer ports (default "23790 23800")
#   K8S_APPLY_BUILD_ONLY=1  build the binaries, start nothing
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# shellcheck source=lib/debian.sh
. "$(dirname "$0")/lib/debian.sh"
export GOWORK=off CGO_ENABLED=0

k8s_version=${K8S_VERSION:-v1.37.2}
etcd_version=${ETCD_VERSION:-v3.7.0}
api_port=${K8S_APPLY_PORT:-16443}
read -r etcd_port etcd_peer_port <<<"${K8S_ETCD_PORTS:-23790 23800}"
bin="$root/.bin"
start=$(date +%s)

log() { printf 'k8s-apply: %s (%ss)\n' "$*" "$(( $(date +%s) - start ))" >&2; }
fail() { printf 'k8s-apply: FAIL: %s\n' "$*" >&2; exit 1; }

# staging_version maps v1.Y.Z to the staging modules' v0.Y.Z.
staging_version="v0.${k8s_version#v1.}"

# build_k8s builds kube-apiserver and kubectl in a throwaway module: the
# k8s.io/kubernetes module cannot be `go install`ed because its go.mod
# replaces every k8s.io staging module with ./staging/src, so this module
# requires it and replaces each staging module with its published v0.Y.Z.
build_k8s() {
  local tmp mod line ldflags
  tmp=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" RETURN
  (cd "$tmp" && go mod init k8sapply.build >/dev/null 2>&1 &&
    go mod download -json "k8s.io/kubernetes@$k8s_version" >"$tmp/dl.json")
  mod=$(jq -r .GoMod "$tmp/dl.json")
  {
    printf 'module k8sapply.build\n\ngo %s\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' \
      "$(awk '$1 == "go" {print $2; exit}' "$mod")" "$k8s_version"
    while read -r line; do
      printf '\t%s => %s %s\n' "$line" "$line" "$staging_version"
    done < <(sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/src/.*#\1#p' "$mod")
    printf ')\n'
  } >"$tmp/go.mod"
  printf 'package build\n\nimport (\n\t_ "k8s.io/kubernetes/cmd/kube-apiserver/app"\n\t_ "k8s.io/kubectl/pkg/cmd"\n)\n' >"$tmp/deps.go"
  (cd "$tmp" && go mod tidy >"$tmp/tidy.log" 2>&1) || { cat "$tmp/tidy.log" >&2; return 1; }
  # The version the binaries report (and the cache check below reads).
  ldflags="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=$k8s_version -X $p.gitMajor=1 -X $p.gitMinor=$(cut -d. -f2 <<<"$k8s_version")"
    ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  (cd "$tmp" &&
    go build -trimpath -ldflags "$ldflags" -o "$bin/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver &&
    go build -trimpath -ldflags "$ldflags" -o "$bin/kubectl" k8s.io/kubernetes/cmd/kubectl)
}

# build_etcd builds etcd from its module, for when Debian's etcd-server is
# missing and cannot be installed. etcd's server module replaces its sibling
# modules with ../, so it is required from a throwaway module too.
build_etcd() {
  local tmp
  tmp=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" RETURN
  (cd "$tmp" && go mod init etcdapply.build >/dev/null 2>&1 &&
    go get "go.etcd.io/etcd/server/v3@$etcd_version" >/dev/null 2>&1 &&
    go build -trimpath -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3)
}

mkdir -p "$bin"
if [ -x "$bin/kube-apiserver" ] && [ -x "$bin/kubectl" ] &&
  "$bin/kube-apiserver" --version 2>/dev/null | grep -qx "Kubernetes $k8s_version"; then
  log "kube-apiserver and kubectl $k8s_version cached in .bin/"
else
  log "building kube-apiserver and kubectl $k8s_version into .bin/ (the first time takes minutes)"
  t0=$(date +%s)
  build_k8s
  log "built kube-apiserver and kubectl in $(( $(date +%s) - t0 ))s"
fi
etcd=$(command -v etcd || true)
if [ -z "$etcd" ] && can_apt; then
  log "installing Debian's etcd-server"
  apt_install etcd-server
  etcd=$(command -v etcd || true)
fi
if [ -z "$etcd" ]; then
  if ! { [ -x "$bin/etcd" ] && "$bin/etcd" --version 2>/dev/null | grep -q "etcd Version: ${etcd_version#v}\$"; }; then
    log "no etcd-server package here: building etcd $etcd_version into .bin/"
    build_etcd
  fi
  etcd="$bin/etcd"
fi
log "etcd $("$etcd" --version | awk '/etcd Version/ {print $3}') ($etcd)"
[ "${K8S_APPLY_BUILD_ONLY:-}" != 1 ] || exit 0

command -v openssl >/dev/null || fail "openssl is missing (Debian: apt-get install openssl)"
kubectl="$bin/kubectl"
tmp=$(mktemp -d)
pids=()
# cleanup stops the servers in reverse start order, the API server before
# the etcd it stores in (killed together, the API server's graceful
# shutdown waited on the dead etcd and hung CI after the check passed),
# each given 10 s after SIGTERM before SIGKILL.
cleanup() {
  local i p
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    p=${pids[i]}
    kill "$p" 2>/dev/null || continue
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# on_fail shows the end of the servers' logs before the temp dir goes.
on_fail() { for f in "$tmp"/etcd.log "$tmp"/apiserver.log; do [ -s "$f" ] && { echo "--- $f (tail)"; tail -n 20 "$f"; }; done >&2; }

"$etcd" --name k8s-apply --data-dir "$tmp/etcd" \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
  --initial-cluster "k8s-apply=http://127.0.0.1:$etcd_peer_port" --log-level warn >"$tmp/etcd.log" 2>&1 &
pids+=($!)

# A service-account signing key and a static token for kubectl (group
# system:masters, which RBAC lets do anything), both only in $tmp.
openssl genrsa -out "$tmp/sa.key" 2048 2>/dev/null
token=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
printf '%s,k8s-apply,k8s-apply,system:masters\n' "$token" >"$tmp/tokens.csv"
"$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
  --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --endpoint-reconciler-type none --secure-port "$api_port" --cert-dir "$tmp/pki" \
  --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$tmp/sa.key" \
  --service-account-signing-key-file "$tmp/sa.key" --service-cluster-ip-range 10.96.0.0/16 \
  --token-auth-file "$tmp/tokens.csv" --authorization-mode RBAC >"$tmp/apiserver.log" 2>&1 &
pids+=($!)

export KUBECONFIG="$tmp/kubeconfig"
for _ in $(seq 1 120); do [ -s "$tmp/pki/apiserver.crt" ] && break; sleep 1; done
[ -s "$tmp/pki/apiserver.crt" ] || { on_fail; fail "kube-apiserver wrote no serving certificate"; }
# The self-signed serving certificate is in the bundle it is checked against.
"$kubectl" config set-cluster k8s-apply --server "https://127.0.0.1:$api_port" \
  --certificate-authority "$tmp/pki/apiserver.crt" --embed-certs >/dev/null
"$kubectl" config set-credentials k8s-apply --token "$token" >/dev/null
"$kubectl" config set-context k8s-apply --cluster k8s-apply --user k8s-apply >/dev/null
"$kubectl" config use-context k8s-apply >/dev/null
ready=
for _ in $(seq 1 120); do
  if "$kubectl" get --raw /readyz >/dev/null 2>&1; then ready=1; break; fi
  sleep 1
done
[ -n "$ready" ] || { on_fail; fail "kube-apiserver not ready after 120s"; }
log "kube-apiserver $("$kubectl" version -o json | jq -r .serverVersion.gitVersion) ready on 127.0.0.1:$api_port (etcd on $etcd_port)"

# apply runs kubectl apply server-side (strict field validation, the
# default) and fails the target with kubectl's answer.
apply() {
  local out
  out=$("$kubectl" apply --server-side --field-manager kubectl "$@" 2>&1) || { echo "$out" >&2; return 1; }
  printf '%s\n' "$out"
}

# CRDs, from the modules the validation module decodes with. The
# prometheus-operator's main module (the one with the CRDs) is published
# up to v0.85.0 while its apis submodule goes on (v0.95.1 of the main module
# is not available), so its CRDs come from PROMETHEUS_OPERATOR_VERSION.
gomod() { (cd "$root/deploy/k8s/validate" && go list -m -f '{{.Version}}' "$1"); }
moddir() { (cd "$tmp" && go mod download -json "$1" | jq -r .Dir); }
gw_version=$(gomod sigs.k8s.io/gateway-api)
po_version=${PROMETHEUS_OPERATOR_VERSION:-v0.85.0}
gw=$(moddir "sigs.k8s.io/gateway-api@$gw_version")
po=$(moddir "github.com/prometheus-operator/prometheus-operator@$po_version")
apply -f "$gw/config/crd/standard" >/dev/null || { on_fail; fail "Gateway API $gw_version CRDs"; }
apply -f "$po/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" \
  -f "$po/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml" >/dev/null ||
  { on_fail; fail "prometheus-operator $po_version CRDs"; }
"$kubectl" wait --for condition=Established --timeout 60s crd --all >/dev/null
log "CRDs established: Gateway API $gw_version (standard channel), ServiceMonitor and PrometheusRule of prometheus-operator $po_version"

# The same kustomize as k8s-validate.
KUSTOMIZE=${KUSTOMIZE:-"$bin/kustomize"}
kversion=${KUSTOMIZE_VERSION:-v5.8.2}
if ! [ -x "$KUSTOMIZE" ] || ! "$KUSTOMIZE" version 2>/dev/null | grep -qF "$kversion"; then
  GOBIN="$bin" go install "sigs.k8s.io/kustomize/kustomize/v5@$kversion"
fi
# The checker's own tests first: it is what says an overlay is whole.
(cd "$root/deploy/k8s/apply" && go test -count=1 ./... && go build -o "$tmp/k8sapplycheck" .)

summary=()
for dir in "$root"/deploy/k8s/overlays/*/; do
  name=$(basename "$dir")
  t0=$(date +%s)
  "$KUSTOMIZE" build "$dir" >"$tmp/$name.yaml"
  # Namespaced objects cannot be dry-run into a namespace that does not
  # exist yet, so the overlay's Namespace goes first, as deploy/README.md says.
  apply -f "$dir/namespace.yaml" >/dev/null || { on_fail; fail "overlay $name: namespace"; }
  n=$(apply --dry-run=server -f "$tmp/$name.yaml" | grep -c 'serverside-applied') ||
    { on_fail; fail "overlay $name: server-side dry run rejected"; }
  apply -f "$tmp/$name.yaml" >/dev/null || { on_fail; fail "overlay $name: apply rejected"; }
  "$tmp/k8sapplycheck" -f "$tmp/$name.yaml" | sed "s/^/k8s-apply: overlay $name: /" >&2 ||
    fail "overlay $name: objects or references wrong in the API server"
  summary+=("$name: $n objects in $(( $(date +%s) - t0 ))s")
done

# Self-test: the same steps must fail on planted mistakes. References the
# API server accepts (it checks none) must be caught by the checker; an
# unknown field and an invalid value must be refused by the server itself.
selftest=k8s-apply-selftest
cat >"$tmp/bad-refs.yaml" <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: $selftest}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: $selftest}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: web:1, ports: [{name: http, containerPort: 8080}]}]}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: $selftest}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: wbe}
  minReplicas: 1
  maxReplicas: 2
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: $selftest}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: webb}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web, namespace: $selftest}
spec:
  podSelector: {matchLabels: {app: web}}
  ingress: [{ports: [{port: metrics}]}]
YAML
apply -f "$tmp/bad-refs.yaml" >/dev/null || { on_fail; fail "self-test: planted references not applied"; }
if out=$("$tmp/k8sapplycheck" -f "$tmp/bad-refs.yaml" 2>&1); then
  fail "self-test: the checker passed an HPA, a PDB and a NetworkPolicy that refer to nothing"
fi
for want in "scaleTargetRef Deployment/wbe does not exist" "PodDisruptionBudget web: selector app=webb" \
  'NetworkPolicy web: ingress port "metrics"'; do
  grep -qF "$want" <<<"$out" || { echo "$out" >&2; fail "self-test: the checker did not report: $want"; }
done
sed 's/^  selector: {matchLabels: {app: web}}$/  selector: {matchLabels: {app: web}}\n  replica: 2/' "$tmp/bad-refs.yaml" >"$tmp/bad-field.yaml"
if out=$(apply --dry-run=server -f "$tmp/bad-field.yaml" 2>&1) || ! grep -q 'spec.replica\b' <<<"$out"; then
  echo "$out" >&2; fail "self-test: an unknown field was not refused"
fi
sed 's/^  maxReplicas: 2$/  maxReplicas: 0/' "$tmp/bad-refs.yaml" >"$tmp/bad-value.yaml"
if out=$(apply --dry-run=server -f "$tmp/bad-value.yaml" 2>&1) || ! grep -q 'spec.maxReplicas' <<<"$out"; then
  echo "$out" >&2; fail "self-test: an HPA with maxReplicas 0 was not refused"
fi
log "self-test: planted HPA, PDB and NetworkPolicy references, an unknown field and an invalid value all failed as they must"

for line in "${summary[@]}"; do log "overlay $line"; done
log "passed in $(( $(date +%s) - start ))s"
