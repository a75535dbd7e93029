#!/bin/sh
# Entrypoint of the redis stand-in image, modelled on the official one:
# options alone ("--port 1234") or a config file are handed to redis-server,
# protected mode is off unless the caller sets it, and the server runs as the
# redis user.
set -e

case "$1" in
  -*|*.conf) set -- redis-server "$@" ;;
esac

if [ "$1" = redis-server ]; then
  # The official image compiles protected mode off; Debian's binary has it
  # on, which refuses every connection from outside the container.
  protected=
  for arg in "$@"; do
    case "$arg" in --protected-mode) protected=set ;; esac
  done
  case "$2" in
    *.conf) if grep -qs '^[[:space:]]*protected-mode' "$2"; then protected=set; fi ;;
  esac
  if [ -z "$protected" ]; then set -- "$@" --protected-mode no; fi

  if [ "$(id -u)" = 0 ]; then
    find . \! -user redis -exec chown redis '{}' + 2>/dev/null || true
    exec setpriv --reuid=redis --regid=redis --init-groups "$@"
  fi
fi

exec "$@"
