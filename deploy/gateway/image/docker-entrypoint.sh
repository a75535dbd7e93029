#!/bin/sh
# Entrypoint of the gateway image: puts a TLS certificate and key at
# /run/gateway/tls.crt and tls.key, where nginx.conf expects them, then runs
# the command (nginx in the foreground).
#
#   GATEWAY_TLS_CERT, GATEWAY_TLS_KEY  PEM files to use (both or neither)
#   GATEWAY_TLS_NAMES   without them, a self-signed certificate is made for
#                       these comma-separated names and addresses
#                       (default localhost,127.0.0.1), valid GATEWAY_TLS_DAYS
#                       days (default 30)
set -eu

dir=/run/gateway
if [ -n "${GATEWAY_TLS_CERT:-}${GATEWAY_TLS_KEY:-}" ]; then
  if [ -z "${GATEWAY_TLS_CERT:-}" ] || [ -z "${GATEWAY_TLS_KEY:-}" ]; then
    echo "gateway: set both GATEWAY_TLS_CERT and GATEWAY_TLS_KEY, or neither" >&2
    exit 1
  fi
  cp "$GATEWAY_TLS_CERT" "$dir/tls.crt"
  cp "$GATEWAY_TLS_KEY" "$dir/tls.key"
else
  names=${GATEWAY_TLS_NAMES:-localhost,127.0.0.1}
  san=
  first=
  for n in $(echo "$names" | tr ',' ' '); do
    case "$n" in
      *[!0-9.]*) case "$n" in *:*) kind=IP ;; *) kind=DNS ;; esac ;;
      *) kind=IP ;;
    esac
    san="${san:+$san,}$kind:$n"
    first=${first:-$n}
  done
  [ -n "$san" ] || { echo "gateway: GATEWAY_TLS_NAMES is empty" >&2; exit 1; }
  # A fresh P-256 key every start: the certificate is for a local stack, and
  # clients trust it by fetching it (curl --cacert), never by pinning.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -days "${GATEWAY_TLS_DAYS:-30}" -subj "/CN=$first" -addext "subjectAltName=$san" \
    -keyout "$dir/tls.key" -out "$dir/tls.crt" 2>"$dir/openssl.log" ||
    { cat "$dir/openssl.log" >&2; exit 1; }
  echo "gateway: self-signed certificate for $san" >&2
fi
chmod 600 "$dir/tls.key"

exec "$@"
