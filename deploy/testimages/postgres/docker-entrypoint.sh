#!/usr/bin/env bash
# Entrypoint of the postgres stand-in image, a reduced copy of the official
# image's docker-entrypoint.sh. It keeps what callers depend on:
#   - POSTGRES_USER (default postgres), POSTGRES_PASSWORD, POSTGRES_DB (default
#     $POSTGRES_USER), POSTGRES_INITDB_ARGS, POSTGRES_HOST_AUTH_METHOD and the
#     *_FILE variants;
#   - initdb runs as the postgres user (root steps down with setpriv, the
#     official image uses gosu);
#   - a temporary server on the Unix socket only creates the database and runs
#     /docker-entrypoint-initdb.d/*, then stops; the final server listens on
#     0.0.0.0:5432. Each start logs "database system is ready to accept
#     connections", so a fresh container prints it twice, which is what the
#     testcontainers postgres module waits for.
set -Eeo pipefail

# file_env VAR [DEFAULT] reads VAR or VAR_FILE, like the official image.
file_env() {
  local var="$1" file_var="${1}_FILE" def="${2:-}" val
  if [ "${!var:-}" ] && [ "${!file_var:-}" ]; then
    echo >&2 "error: both $var and $file_var are set (but are exclusive)"
    exit 1
  fi
  val="$def"
  if [ "${!var:-}" ]; then
    val="${!var}"
  elif [ "${!file_var:-}" ]; then
    val="$(<"${!file_var}")"
  fi
  export "$var"="$val"
  unset "$file_var"
}

setup_env() {
  file_env POSTGRES_PASSWORD
  file_env POSTGRES_USER postgres
  file_env POSTGRES_DB "$POSTGRES_USER"
  file_env POSTGRES_INITDB_ARGS
  : "${POSTGRES_HOST_AUTH_METHOD:=scram-sha-256}"
  export POSTGRES_HOST_AUTH_METHOD
  DATABASE_ALREADY_EXISTS=
  if [ -s "$PGDATA/PG_VERSION" ]; then DATABASE_ALREADY_EXISTS=true; fi
}

create_directories() {
  mkdir -p "$PGDATA"
  chmod 00700 "$PGDATA" || :
  mkdir -p /var/run/postgresql || :
  chmod 03775 /var/run/postgresql || :
  if [ "$(id -u)" = 0 ]; then
    find "$PGDATA" \! -user postgres -exec chown postgres '{}' +
    find /var/run/postgresql \! -user postgres -exec chown postgres '{}' +
  fi
}

verify_minimum_env() {
  if [ -z "$POSTGRES_PASSWORD" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
    cat >&2 <<'MSG'
Error: Database is uninitialized and superuser password is not specified.
       You must specify POSTGRES_PASSWORD to a non-empty value for the
       superuser. For example, "-e POSTGRES_PASSWORD=password" on "docker run".
       Or use POSTGRES_HOST_AUTH_METHOD=trust to allow all connections
       without a password (not recommended).
MSG
    exit 1
  fi
}

init_database_dir() {
  # shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a list of words.
  initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") \
    --encoding=UTF8 --locale=C.UTF-8 $POSTGRES_INITDB_ARGS
  # The official image ships listen_addresses='*' in its sample config.
  printf "\nlisten_addresses = '*'\n" >>"$PGDATA/postgresql.conf"
  {
    printf '\n'
    if [ "$POSTGRES_HOST_AUTH_METHOD" = trust ]; then
      printf '# warning trust is enabled for all connections\n'
    fi
    printf 'host all all all %s\n' "$POSTGRES_HOST_AUTH_METHOD"
  } >>"$PGDATA/pg_hba.conf"
}

psql_run() {
  PGHOST= PGHOSTADDR= psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc "$@"
}

temp_server_start() {
  if [ "$1" = postgres ]; then shift; fi
  set -- "$@" -c listen_addresses='' -p "${PGPORT:-5432}"
  PGUSER="${PGUSER:-$POSTGRES_USER}" pg_ctl -D "$PGDATA" -o "$(printf '%q ' "$@")" -w start
}

temp_server_stop() {
  PGUSER="${PGUSER:-postgres}" pg_ctl -D "$PGDATA" -m fast -w stop
}

setup_db() {
  local exists
  exists="$(POSTGRES_DB=postgres psql_run --dbname postgres --set db="$POSTGRES_DB" --tuples-only <<<"SELECT 1 FROM pg_database WHERE datname = :'db';")"
  if [ -z "$exists" ]; then
    psql_run --dbname postgres --set db="$POSTGRES_DB" <<<'CREATE DATABASE :"db" ;'
    printf '\n'
  fi
}

process_init_files() {
  local f
  printf '\n'
  for f in "$@"; do
    case "$f" in
      *.sh)
        if [ -x "$f" ]; then
          printf '%s: running %s\n' "$0" "$f"; "$f"
        else
          printf '%s: sourcing %s\n' "$0" "$f"; . "$f"
        fi ;;
      *.sql) printf '%s: running %s\n' "$0" "$f"; psql_run --dbname "$POSTGRES_DB" -f "$f"; printf '\n' ;;
      *.sql.gz) printf '%s: running %s\n' "$0" "$f"; gunzip -c "$f" | psql_run --dbname "$POSTGRES_DB"; printf '\n' ;;
      *) printf '%s: ignoring %s\n' "$0" "$f" ;;
    esac
    printf '\n'
  done
}

main() {
  if [ "${1:0:1}" = '-' ]; then set -- postgres "$@"; fi

  if [ "$1" = postgres ]; then
    setup_env
    create_directories
    if [ "$(id -u)" = 0 ]; then
      exec setpriv --reuid=postgres --regid=postgres --init-groups "$BASH_SOURCE" "$@"
    fi

    if [ -z "$DATABASE_ALREADY_EXISTS" ]; then
      verify_minimum_env
      init_database_dir
      export PGPASSWORD="${PGPASSWORD:-$POSTGRES_PASSWORD}"
      temp_server_start "$@"
      setup_db
      process_init_files /docker-entrypoint-initdb.d/*
      temp_server_stop
      unset PGPASSWORD
      printf '\nPostgreSQL init process complete; ready for start up.\n\n'
    else
      printf '\nPostgreSQL Database directory appears to contain a database; Skipping initialization\n\n'
    fi
  fi

  exec "$@"
}

main "$@"
