#!/usr/bin/env bash
# ha-cluster.sh runs the drills' PostgreSQL cluster: three PostgreSQL 15
# nodes under Patroni (synchronous_mode, so a commit is acknowledged only
# once a standby has it), one etcd as Patroni's store and HAProxy in front,
# all from tickerdesk/test-patroni:15 (scripts/testimages.sh ha) on a
# private Docker network, where each node has its own address and "the
# node" can be killed (docker kill) or frozen (docker pause) whole. The
# configuration is deploy/ha (Patroni, etcd, HAProxy, pgBackRest and the
# services' databases), mounted into every container as the compose ha
# profile mounts it, so that the drills test the configuration compose runs.
#
#   scripts/ha-cluster.sh up          start it; wait for a leader and a
#                                     streaming sync standby; create the
#                                     notes and marketdata databases
#                                     (deploy/ha/databases.sql); print
#                                     the URL of the primary (HAProxy)
#   scripts/ha-cluster.sh down        remove the containers, the network and
#                                     the volumes (data and backups)
#   scripts/ha-cluster.sh leader      print the leader's node name (pg1..pg3)
#   scripts/ha-cluster.sh wait [S [N [X]]]
#                                     wait up to S seconds for a leader (not
#                                     node X), a streaming (sync) standby and
#                                     N standbys running (after a failover)
#   scripts/ha-cluster.sh ctl ARGS    patronictl ARGS on a live node
#   scripts/ha-cluster.sh psql ARGS   psql on the leader, as postgres
#
# HA_PREFIX [td-ha] names the containers (<prefix>-pg1 ...), the network
# and the volumes, so that two clusters never meet; HA_PORT [55700] is
# HAProxy's port on 127.0.0.1; HA_SYNC [true] is Patroni's synchronous_mode
# (false only for the mutation check, which must lose writes); HA_ARCHIVE
# [on] archives WAL with pgBackRest into the shared repository volume;
# HA_NODES [pg1 pg2 pg3] names the nodes (one node for the backup drill;
# deploy/ha/haproxy.cfg knows pg1..pg3).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${HA_PREFIX:-td-ha}
port=${HA_PORT:-55700}
image=${TICKERDESK_TEST_PATRONI_IMAGE:-tickerdesk/test-patroni:15}
conf="$root/deploy/ha"
net="$prefix-net"
# shellcheck disable=SC2206 # a list of names
nodes=(${HA_NODES:-pg1 pg2 pg3})

log() { printf 'ha-cluster: %s\n' "$*" >&2; }

# live_node prints a node whose container runs and is not paused.
live_node() {
  local n
  for n in "${nodes[@]}"; do
    if [ "$(docker inspect -f '{{.State.Running}} {{.State.Paused}}' "$prefix-$n" 2>/dev/null)" = "true false" ]; then
      echo "$n"; return
    fi
  done
  return 1
}

ctl() {
  local n; n=$(live_node) || { log "no live node"; return 1; }
  docker exec "$prefix-$n" patronictl -c /etc/patroni.yml "$@"
}

# members prints "name role state lag" per member, from patronictl's JSON.
members() {
  ctl list -f json 2>/dev/null | tr -d '\n' | sed 's/},/}\n/g' |
    sed -nE 's/.*"Member": *"([^"]*)".*"Role": *"([^"]*)".*"State": *"([^"]*)".*/\1 \2 \3/p' | tr ' ' '\t' |
    sed 's/Sync\tStandby/Sync-Standby/'
}

leader() { members | awk -F'\t' '$2 == "Leader" && $3 == "running" {print $1; found=1} END {exit !found}'; }

# wait_healthy waits for a running leader and a standby that streams from
# it (a sync standby when synchronous_mode is on), and $2 [1] standbys
# running in all, up to $1 seconds; with $3, a leader other than node $3
# (a killed leader is listed as running until its key expires).
wait_healthy() {
  local limit=${1:-90} standbys=${2:-1} not=${3:-} want=Replica start=$SECONDS m
  [ "${HA_SYNC:-true}" = true ] && want=Sync-Standby
  while [ $((SECONDS - start)) -lt "$limit" ]; do
    m=$(members || true)
    if echo "$m" | awk -F'\t' -v want="$want" -v need="$standbys" -v not="$not" '
        $2 == "Leader" && $3 == "running" && $1 != not {l=1}
        $2 == want && ($3 == "streaming" || $3 == "running") || need == 0 {s=1}
        $2 != "Leader" && ($3 == "streaming" || $3 == "running") {n++}
        END {exit !(l && s && n >= need)}'; then
      return 0
    fi
    sleep 0.5
  done
  log "no healthy cluster after ${limit}s:"; echo "$m" >&2
  return 1
}

psql_leader() {
  local l; l=$(leader)
  docker exec -i "$prefix-$l" psql -X -v ON_ERROR_STOP=1 -h /var/run/postgresql -U postgres "$@"
}

up() {
  # Built once, rebuilt only when deploy/testimages/patroni changed.
  "$root/scripts/testimages.sh" ha
  docker network inspect "$net" >/dev/null 2>&1 || docker network create "$net" >/dev/null
  docker volume create "$prefix-repo" >/dev/null
  local common=(--network "$net" --label org.tickerdesk.ha="$prefix" -v "$conf:/etc/tickerdesk-ha:ro"
    -e HA_SCOPE=tickerdesk -e HA_ETCD=etcd:2379 -e HA_SYNC="${HA_SYNC:-true}"
    -e HA_ARCHIVE="${HA_ARCHIVE:-on}" -e HA_ARCHIVE_TIMEOUT="${HA_ARCHIVE_TIMEOUT:-5}" -e HA_MAX_LAG="${HA_MAX_LAG:-1048576}")
  if ! docker inspect "$prefix-etcd" >/dev/null 2>&1; then
    docker run -d --name "$prefix-etcd" --hostname etcd --network-alias etcd "${common[@]}" "$image" etcd >/dev/null
  fi
  local n
  for n in "${nodes[@]}"; do
    docker inspect "$prefix-$n" >/dev/null 2>&1 && continue
    docker run -d --name "$prefix-$n" --hostname "$n" --network-alias "$n" "${common[@]}" -e HA_NAME="$n" \
      -v "$prefix-repo:/var/lib/pgbackrest" --shm-size 128m "$image" patroni >/dev/null
    # The first node bootstraps alone, so that it is the one that does.
    if [ "$n" = pg1 ]; then
      local s=$SECONDS
      until leader >/dev/null 2>&1; do
        [ $((SECONDS - s)) -lt 90 ] || { docker logs --tail 40 "$prefix-pg1" >&2; log "pg1 did not bootstrap"; exit 1; }
        sleep 0.5
      done
    fi
  done
  if ! docker inspect "$prefix-haproxy" >/dev/null 2>&1; then
    docker run -d --name "$prefix-haproxy" --hostname haproxy "${common[@]}" -p "127.0.0.1:$port:5000" \
      "$image" haproxy >/dev/null
  fi
  wait_healthy 120 $((${#nodes[@]} - 1))
  if [ "${HA_ARCHIVE:-on}" = on ]; then
    docker exec -u postgres "$prefix-$(leader)" pgbackrest --stanza=tickerdesk stanza-create >/dev/null
  fi
  psql_leader -q -d postgres -f /etc/tickerdesk-ha/databases.sql >/dev/null
  # HAProxy's first checks may still be under way.
  local s=$SECONDS
  until docker exec "$prefix-haproxy" bash -c "exec 3<>/dev/tcp/127.0.0.1/5000" 2>/dev/null; do
    [ $((SECONDS - s)) -lt 30 ] || break; sleep 0.5
  done
  log "leader $(leader); primary at 127.0.0.1:$port"
  echo "postgres://postgres:postgres@127.0.0.1:$port"
}

down() {
  local ids
  ids=$(docker ps -aq --filter "label=org.tickerdesk.ha=$prefix")
  # shellcheck disable=SC2086 # a list of ids
  [ -z "$ids" ] || docker rm -f -v $ids >/dev/null
  docker network rm "$net" >/dev/null 2>&1 || true
  docker volume rm "$prefix-repo" >/dev/null 2>&1 || true
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  leader) leader ;;
  members) members ;;
  wait) wait_healthy "${2:-90}" "${3:-1}" "${4:-}" ;;
  ctl) shift; ctl "$@" ;;
  psql) shift; psql_leader "$@" ;;
  *) echo "usage: $0 up|down|leader|members|wait|ctl ARGS|psql ARGS" >&2; exit 2 ;;
esac
