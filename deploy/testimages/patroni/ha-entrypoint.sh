#!/usr/bin/env bash
# Entrypoint of tickerdesk/test-patroni:15. One image plays each part of the
# high-availability cluster, in the drills (scripts/ha-cluster.sh) and in
# the compose ha profile (deploy/compose/compose.yaml):
#
#   ha-entrypoint.sh etcd        the DCS: one etcd member
#   ha-entrypoint.sh patroni     a PostgreSQL 15 node under Patroni
#   ha-entrypoint.sh haproxy     routes :5000 to the node whose Patroni REST
#                                API answers 200 on /primary
#   ha-entrypoint.sh tools       pgBackRest configured and nothing running:
#                                a new host to restore a backup onto
#
# The configuration is not in the image: deploy/ha is mounted read-only at
# /etc/tickerdesk-ha, so that the drills and compose run the same files and
# a change needs a restart, not a new image. patroni.yml, etcd.yml and
# pgbackrest.conf are templates whose ${HA_...} are filled in from the
# environment (defaults in brackets):
#   HA_SCOPE [tickerdesk], HA_NAME [hostname], HA_ETCD [etcd:2379],
#   HA_SYNC [true] (synchronous_mode), HA_TTL [10], HA_LOOP_WAIT [2],
#   HA_RETRY_TIMEOUT [4], HA_MAX_LAG [1048576] (maximum_lag_on_failover,
#   bytes), HA_ARCHIVE [on]: WAL archived with pgBackRest into the
#   repository /var/lib/pgbackrest (a volume shared by every node),
#   HA_ARCHIVE_TIMEOUT [5]; HA_IP is the container's own address.
set -Eeo pipefail

conf=/etc/tickerdesk-ha
export HA_SCOPE=${HA_SCOPE:-tickerdesk} HA_NAME=${HA_NAME:-$(hostname)} HA_ETCD=${HA_ETCD:-etcd:2379} \
  HA_SYNC=${HA_SYNC:-true} HA_TTL=${HA_TTL:-10} HA_LOOP_WAIT=${HA_LOOP_WAIT:-2} \
  HA_RETRY_TIMEOUT=${HA_RETRY_TIMEOUT:-4} HA_MAX_LAG=${HA_MAX_LAG:-1048576} \
  HA_ARCHIVE_TIMEOUT=${HA_ARCHIVE_TIMEOUT:-5}
HA_IP=$(hostname -i | awk '{print $1}')
HA_ARCHIVE_COMMAND=/bin/true
if [ "${HA_ARCHIVE:-on}" = on ]; then HA_ARCHIVE_COMMAND="pgbackrest --stanza=${HA_SCOPE} archive-push %p"; fi
export HA_IP HA_ARCHIVE_COMMAND

# render TEMPLATE OUT writes the template with each ${HA_X} replaced by the
# variable's value; a variable that is not set stops the container rather
# than leaving a hole in the configuration.
render() {
  [ -r "$conf/$1" ] || { echo "ha-entrypoint: $conf/$1 missing: mount deploy/ha at $conf" >&2; exit 1; }
  perl -pe 's/\$\{(HA_[A-Z0-9_]+)\}/defined $ENV{$1} ? $ENV{$1} : die "$ARGV: $1 is not set\n"/ge' "$conf/$1" >"$2"
}

# data_dirs makes the directories PostgreSQL and pgBackRest write, owned by
# postgres (a fresh volume mounted over them is root's).
data_dirs() {
  mkdir -p /var/lib/postgresql/data /tmp/pgbackrest
  chown postgres: /var/lib/postgresql/data /var/lib/pgbackrest /tmp/pgbackrest
  chmod 700 /var/lib/postgresql/data
}

case "${1:-patroni}" in
  etcd)
    render etcd.yml /etc/etcd.yml
    exec etcd --config-file /etc/etcd.yml ;;
  patroni)
    render pgbackrest.conf /etc/pgbackrest.conf
    render patroni.yml /etc/patroni.yml
    chown postgres: /etc/patroni.yml
    data_dirs
    exec setpriv --reuid=postgres --regid=postgres --init-groups patroni /etc/patroni.yml ;;
  tools)
    render pgbackrest.conf /etc/pgbackrest.conf
    data_dirs
    exec sleep infinity ;;
  haproxy)
    [ -r "$conf/haproxy.cfg" ] || { echo "ha-entrypoint: $conf/haproxy.cfg missing: mount deploy/ha at $conf" >&2; exit 1; }
    exec haproxy -W -db -f "$conf/haproxy.cfg" ;;
  databases)
    # The services' role and databases (databases.sql), through HAProxy
    # (HA_PRIMARY [haproxy:5000]) once a primary answers there: the compose
    # profile's one-shot ha-init. Under strict synchronous mode each commit
    # also waits for a synchronous standby, so this returns once the
    # cluster can acknowledge writes.
    primary=${HA_PRIMARY:-haproxy:5000}
    for _ in $(seq 1 300); do
      pg_isready -q -h "${primary%:*}" -p "${primary##*:}" -U postgres && break
      sleep 1
    done
    exec psql -X -q -v ON_ERROR_STOP=1 -h "${primary%:*}" -p "${primary##*:}" -U postgres -d postgres -f "$conf/databases.sql" ;;
  *) exec "$@" ;;
esac
