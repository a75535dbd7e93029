#!/usr/bin/env bash
# backup-drill.sh proves that a backup restores: point-in-time recovery with
# pgBackRest from its POSIX repository, on tickerdesk/test-patroni:15
# (scripts/ha-cluster.sh, one Patroni node archiving WAL).
#
#   1. write notes, take a full backup;
#   2. write more notes, record time T (the server's clock);
#   3. write more notes after T;
#   4. destroy the node, data directory and all (the repository survives on
#      its own volume);
#   5. restore to T on a new host (`pgbackrest restore --type=time`), start
#      PostgreSQL, let it replay the archived WAL to T and promote.
#
# It passes when the restored notes are exactly those committed before T,
# byte for byte (no note from after T), and reports the RPO (how long after
# T the WAL holding T was archived: bounded by archive_timeout) and the RTO
# (restore start to a primary accepting writes). Every container, network
# and volume it made is removed on exit.
#
# BACKUP_DRILL_PREFIX [td-backup] and BACKUP_DRILL_PORT [55711] keep it
# apart from other clusters; BACKUP_DRILL_ROWS [200] notes per batch.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export HA_PREFIX=${BACKUP_DRILL_PREFIX:-td-backup}
export HA_PORT=${BACKUP_DRILL_PORT:-55711}
export HA_NODES=pg1 HA_SYNC=false HA_ARCHIVE=on HA_ARCHIVE_TIMEOUT=5
rows=${BACKUP_DRILL_ROWS:-200}
image=${TICKERDESK_TEST_PATRONI_IMAGE:-tickerdesk/test-patroni:15}
cluster="$root/scripts/ha-cluster.sh"
restore="$HA_PREFIX-restore"
work=$(mktemp -d)

log() { printf 'backup-drill: %s\n' "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

cleanup() {
  local rc=$?
  docker rm -f -v "$restore" >/dev/null 2>&1 || true
  "$cluster" down || true
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# sql runs a statement on the cluster's node, as postgres, in database notes.
sql() { docker exec -i "$HA_PREFIX-pg1" psql -X -q -v ON_ERROR_STOP=1 -h /var/run/postgresql -U postgres -d notes -At "$@"; }
# rsql is sql on the restored host.
rsql() { docker exec -i "$restore" psql -X -q -v ON_ERROR_STOP=1 -h /var/run/postgresql -U postgres -d notes -At "$@"; }
now_ms() { date +%s%3N; }

# write BATCH inserts $rows notes, one transaction (one acknowledged
# commit) each, with content that no two notes share.
write() {
  local batch=$1
  for i in $(seq 1 "$rows"); do
    echo "insert into notes (title, content) values ('$batch-$i', md5(random()::text) || ' ' || repeat(chr(65 + $i % 26), $i % 50) || ' é✓');"
  done | sql >/dev/null
}

"$root/scripts/testimages.sh" ha
"$cluster" down
"$cluster" up >/dev/null
sql -c "create table notes (id bigserial primary key, title text not null, content text not null, created_at timestamptz not null default clock_timestamp())"

log "1. writing $rows notes, then a full backup"
write before-backup
start=$(now_ms)
docker exec -u postgres "$HA_PREFIX-pg1" pgbackrest --stanza=tickerdesk --type=full backup
log "full backup in $(( $(now_ms) - start )) ms"
# pgBackRest restores to a time from the newest backup whose stop time, in
# whole seconds, is before the target: T must fall in a later second than
# the backup's end, or no backup set qualifies (a fast machine writes the
# next batch within the same second).
backup_stop=$(docker exec -u postgres "$HA_PREFIX-pg1" pgbackrest --stanza=tickerdesk --output=json info |
  grep -o '"stop":[0-9][0-9]*' | tail -n 1 | cut -d: -f2)
[ -n "$backup_stop" ] || fail "pgbackrest info shows no backup stop time"

log "2. writing $rows notes, then T"
write after-backup
until [ "$(sql -c "select floor(extract(epoch from clock_timestamp()))::bigint > $backup_stop")" = t ]; do
  sleep 0.1
done
# T is taken on the server, after the last acknowledged commit before it;
# the notes committed by then are the ones the restore must bring back.
IFS='|' read -r T t_lsn <<<"$(sql -c "select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00', pg_current_wal_lsn()")"
t_wall=$(now_ms)
sql -c "select id, title, content, created_at from notes order by id" >"$work/expected"
sleep 1

log "3. writing $rows notes after T ($T)"
write after-t
sql -c "select id, title, content from notes where created_at > '$T' order by id" >"$work/after"
[ -s "$work/after" ] || fail "no note was written after T"

# RPO: the WAL holding T reaches the repository within archive_timeout of
# the last write, without being forced.
t_seg=$(sql -c "select pg_walfile_name('$t_lsn')")
until [ "$(sql -c "select coalesce(last_archived_wal, '') >= '$t_seg' from pg_stat_archiver")" = t ]; do
  [ $(( $(now_ms) - t_wall )) -lt 60000 ] || fail "WAL segment $t_seg not archived within 60 s"
  sleep 0.2
done
rpo_ms=$(( $(now_ms) - t_wall ))
failed=$(sql -c "select failed_count from pg_stat_archiver")

log "4. destroying the node and its data directory"
docker rm -f -v "$HA_PREFIX-pg1" >/dev/null

log "5. restoring to T on a new host"
start=$(now_ms)
docker run -d --name "$restore" --hostname restore --network "$HA_PREFIX-net" --label org.tickerdesk.ha="$HA_PREFIX" \
  -v "$HA_PREFIX-repo:/var/lib/pgbackrest" -v "$root/deploy/ha:/etc/tickerdesk-ha:ro" --shm-size 128m "$image" tools >/dev/null
docker exec -u postgres "$restore" pgbackrest --stanza=tickerdesk --type=time "--target=$T" \
  --target-action=promote restore
# The node's own configuration came back with the backup (Patroni wrote
# it); archiving stays off on the restored copy until it is made the new
# cluster's primary and backed up again (docs/OPERATIONS.md).
docker exec -u postgres "$restore" pg_ctl -D /var/lib/postgresql/data/pg -l /tmp/restore.log -w -t 300 \
  -o "-c archive_mode=off -c listen_addresses=localhost -c unix_socket_directories=/var/run/postgresql" start >/dev/null
until [ "$(rsql -c 'select not pg_is_in_recovery()' 2>/dev/null)" = t ]; do
  [ $(( $(now_ms) - start )) -lt 300000 ] || { docker exec "$restore" tail -n 20 /tmp/restore.log >&2; fail "restored server not promoted within 300 s"; }
  sleep 0.2
done
rsql -c "create table drill_written_after_restore (x int)" # accepts writes
rto_ms=$(( $(now_ms) - start ))

rsql -c "select id, title, content, created_at from notes order by id" >"$work/restored"
expected=$(wc -l <"$work/expected")
restored=$(wc -l <"$work/restored")
after_t=$(wc -l <"$work/after")
if ! cmp -s "$work/expected" "$work/restored"; then
  diff "$work/expected" "$work/restored" | head -n 10 >&2
  fail "restored notes differ from those acknowledged before T ($expected expected, $restored restored)"
fi
leaked=$(rsql -c "select count(*) from notes where created_at > '$T'")
[ "$leaked" = 0 ] || fail "$leaked notes from after T were restored"

echo "backup-drill: PASS: restored to T = $T: $restored notes, byte for byte those acknowledged before T ($expected); 0 of the $after_t written after T"
echo "backup-drill: RPO: the WAL holding T archived $(awk "BEGIN {printf \"%.1f\", $rpo_ms / 1000}") s after T (archive_timeout 5 s; $failed failed archive attempts)"
echo "backup-drill: RTO: restore and recovery to a primary accepting writes in $(awk "BEGIN {printf \"%.1f\", $rto_ms / 1000}") s"
