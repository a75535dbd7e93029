#!/usr/bin/env bash
# Entrypoint of tickerdesk/test-patroni:15. One image plays each part of the
# drills' cluster (scripts/ha-cluster.sh starts them on a private network):
#
#   ha-entrypoint.sh etcd        the DCS: one etcd member (a test cluster
#                                needs no quorum of its own; production runs 3)
#   ha-entrypoint.sh patroni     a PostgreSQL 15 node under Patroni
#   ha-entrypoint.sh haproxy     routes :5000 to the node whose Patroni REST
#                                API answers 200 on /primary
#   ha-entrypoint.sh tools       pgBackRest configured and nothing running:
#                                a new host to restore a backup onto
#
# Settings come from the environment (defaults in brackets):
#   HA_SCOPE [tickerdesk], HA_NAME [hostname], HA_ETCD [etcd:2379],
#   HA_NODES [pg1 pg2 pg3] (haproxy's backends), HA_SYNC [true]
#   (synchronous_mode), HA_TTL [10], HA_LOOP_WAIT [2], HA_RETRY_TIMEOUT [4],
#   HA_MAX_LAG [1048576] (maximum_lag_on_failover, bytes),
#   HA_ARCHIVE [on]: WAL archived with pgBackRest into the repository
#   /var/lib/pgbackrest (a volume shared by every node), HA_ARCHIVE_TIMEOUT [5].
set -Eeo pipefail

name=${HA_NAME:-$(hostname)}
scope=${HA_SCOPE:-tickerdesk}
ip=$(hostname -i | awk '{print $1}')

pgbackrest_conf() {
  # One POSIX repository on a volume every node mounts: whichever node is
  # primary archives into it, and a restore reads it from a new node.
  cat >/etc/pgbackrest.conf <<CONF
[global]
repo1-path=/var/lib/pgbackrest
repo1-retention-full=2
repo1-retention-full-type=count
start-fast=y
archive-async=n
log-level-console=warn
log-level-file=off
lock-path=/tmp/pgbackrest

[${scope}]
pg1-path=/var/lib/postgresql/data/pg
pg1-socket-path=/var/run/postgresql
CONF
}

patroni_conf() {
  local sync=${HA_SYNC:-true} archive_cmd="/bin/true"
  if [ "${HA_ARCHIVE:-on}" = on ]; then archive_cmd="pgbackrest --stanza=${scope} archive-push %p"; fi
  cat >/etc/patroni.yml <<CONF
scope: ${scope}
name: ${name}
restapi:
  listen: 0.0.0.0:8008
  connect_address: ${ip}:8008
# etcd's v2 API: Patroni 3.0's v3 client can leave the /sync key stuck
# on a dead leader ("Synchronous replication key updated by someone
# else", on every cycle), so that no standby is ever made synchronous
# again after a failover.
etcd:
  hosts: ${HA_ETCD:-etcd:2379}
bootstrap:
  dcs:
    # A leader key lives ttl seconds; the leader renews it every loop_wait;
    # retry_timeout bounds a DCS or PostgreSQL call. Patroni needs
    # loop_wait + 2 * retry_timeout <= ttl. A dead primary is replaced
    # within ttl + loop_wait (12 s), well inside 30 s.
    ttl: ${HA_TTL:-10}
    loop_wait: ${HA_LOOP_WAIT:-2}
    retry_timeout: ${HA_RETRY_TIMEOUT:-4}
    maximum_lag_on_failover: ${HA_MAX_LAG:-1048576}
    synchronous_mode: ${sync}
    # Strict: with no standby to confirm, commits wait instead of being
    # acknowledged by the primary alone. Not strict, a frozen primary that
    # wakes mid-cycle still believing it leads finds no standby streaming,
    # empties synchronous_standby_names, acknowledges the commits that were
    # waiting, and is then demoted and rewound: the failover drill lost 68
    # acknowledged writes that way.
    synchronous_mode_strict: ${sync}
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_level: replica
        hot_standby: "on"
        wal_log_hints: "on"
        max_connections: 200
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
        archive_mode: "on"
        archive_command: '${archive_cmd}'
        archive_timeout: ${HA_ARCHIVE_TIMEOUT:-5}
        shared_buffers: 64MB
  initdb:
  - encoding: UTF8
  - locale: C.UTF-8
  - data-checksums
postgresql:
  listen: 0.0.0.0:5432
  connect_address: ${ip}:5432
  data_dir: /var/lib/postgresql/data/pg
  # A node that cannot be rewound onto the new primary's timeline (its
  # rewind was cut short by the next failover) is cloned again rather than
  # left stopped.
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true
  bin_dir: /usr/lib/postgresql/15/bin
  pgpass: /tmp/pgpass
  authentication:
    superuser: {username: postgres, password: postgres}
    replication: {username: replicator, password: replicator}
    rewind: {username: postgres, password: postgres}
  parameters:
    unix_socket_directories: /var/run/postgresql
  pg_hba:
  - local all all trust
  - host replication replicator all trust
  - host all all all trust
CONF
  chown postgres: /etc/patroni.yml
}

haproxy_conf() {
  local n
  {
    cat <<CONF
global
  maxconn 1000
defaults
  mode tcp
  timeout connect 2s
  timeout client 30m
  timeout server 30m
  timeout check 1s
listen primary
  bind *:5000
  # A node is the primary while its Patroni answers 200 on /primary;
  # two failed checks a second apart take it out, and its sessions are
  # cut so that no client keeps writing to a demoted or frozen node.
  option httpchk GET /primary
  http-check expect status 200
  default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions
CONF
    for n in ${HA_NODES:-pg1 pg2 pg3}; do
      echo "  server $n $n:5432 maxconn 300 check port 8008 resolvers docker init-addr last,libc,none"
    done
    cat <<CONF
resolvers docker
  nameserver dns 127.0.0.11:53
  hold valid 1s
CONF
  } >/etc/haproxy/haproxy.cfg
}

case "${1:-patroni}" in
  etcd)
    exec etcd --name etcd --data-dir /tmp/etcd --enable-v2=true \
      --listen-client-urls http://0.0.0.0:2379 --advertise-client-urls "http://${ip}:2379" \
      --listen-peer-urls http://0.0.0.0:2380 --initial-advertise-peer-urls "http://${ip}:2380" \
      --initial-cluster "etcd=http://${ip}:2380" --log-level warn ;;
  patroni)
    pgbackrest_conf
    patroni_conf
    mkdir -p /var/lib/postgresql/data /tmp/pgbackrest
    chown postgres: /var/lib/postgresql/data /var/lib/pgbackrest /tmp/pgbackrest
    chmod 700 /var/lib/postgresql/data
    exec setpriv --reuid=postgres --regid=postgres --init-groups patroni /etc/patroni.yml ;;
  tools)
    pgbackrest_conf
    mkdir -p /var/lib/postgresql/data /tmp/pgbackrest
    chown postgres: /var/lib/postgresql/data /var/lib/pgbackrest /tmp/pgbackrest
    chmod 700 /var/lib/postgresql/data
    exec sleep infinity ;;
  haproxy)
    haproxy_conf
    exec haproxy -W -db -f /etc/haproxy/haproxy.cfg ;;
  *) exec "$@" ;;
esac
