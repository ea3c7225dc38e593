#!/bin/bash
# worker_nice_ab.sh: what widecol.worker_nice does for queries beside a
# compaction.  A design measurement, not a benchmark of widecol against
# heap: point lookups (pgbench, 2 clients, prepared, a cached 200k-row
# table) for 8 s while a background worker compacts 4 runs of 1M rows,
# kept CPU-bound (compaction_throughput = 0, compaction_zstd_level = 19,
# so it outlasts the lookups; it is then terminated), six rounds
# alternating worker_nice 0 and 10, on the machine's 2 cores.
#
#   sudo -u postgres bash test/bench/micro/worker_nice_ab.sh [WORKDIR]
#
# (widecol installed for the PostgreSQL whose pg_config is on PATH.)
# Stop 48, two runs (2026-12-05): nice 0 rounds 22.2k, 15.3k, 15.0k,
# 23.8k, 20.4k, 16.2k lookups/s, p99 210, 2026, 1993, 261, 424, 1619 us;
# nice 10 rounds 16.0k, 17.4k, 19.5k, 22.2k, 24.4k, 21.7k lookups/s, p99
# 1871, 777, 456, 324, 226, 412 us (means 18.8k against 20.2k lookups/s,
# median p99 1,022 against 434 us).  A third run (the script as
# committed): nice 0 22.0k, 24.9k, 23.1k lookups/s, p99 266, 190, 206 us;
# nice 10 23.9k, 24.5k, 19.7k, p99 199, 195, 310 us: no difference.  So
# where the machine's other load made lookups slow the rounds at nice 10
# were the faster ones; where it did not, nice made no difference.
set -e
B=$(pg_config --bindir)
W=${1:-/tmp/widecol-nice-ab}
D=$W/data
P=5993
mkdir -p $W
rm -rf $D
$B/initdb -D $D --auth=trust --no-locale >/dev/null
cat >> $D/postgresql.conf <<CONF
shared_preload_libraries = 'widecol'
listen_addresses = ''
unix_socket_directories = '$W'
port = $P
shared_buffers = '512MB'
widecol.naptime = 1
widecol.compaction_throughput = 0
widecol.compaction_zstd_level = 19
autovacuum = off
CONF
$B/pg_ctl -D $D -l $W/log -w start >/dev/null
Q="$B/psql -X -q -At -h $W -p $P -d postgres"
$Q -c "CREATE EXTENSION widecol"
$Q -c "CREATE TABLE lk (id int, v text) USING widecol WITH (widecol.partition_key = 'id')"
$Q -c "INSERT INTO lk SELECT g, md5(g::text) FROM generate_series(1, 200000) g"
$Q -c "SELECT widecol.compact('lk', true)" >/dev/null
$Q -c "ALTER TABLE lk SET (widecol.autocompact = off)"
echo '\set k random(1, 200000)
SELECT v FROM lk WHERE id = :k;' > $W/lk.sql
for round in 1 2 3 4 5 6; do
  nice=$(( round % 2 == 1 ? 0 : 10 ))
  $Q -c "ALTER SYSTEM SET widecol.worker_nice = $nice" -c "SELECT pg_reload_conf()" >/dev/null
  $Q -c "DROP TABLE IF EXISTS big" -c "CREATE TABLE big (k int, v text) USING widecol WITH (widecol.partition_key = 'k', widecol.autocompact = off)"
  for i in 1 2 3 4; do $Q -c "COPY big FROM PROGRAM 'seq $((i*1000000+1)) $((i*1000000+1000000)) | sed s/\$/,abcdefghij$i/' WITH (FORMAT csv)"; done
  $Q -c "ALTER TABLE big SET (widecol.autocompact = on)"
  t0=$(date +%s.%N)
  n=0; until [ "$($Q -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'widecol worker' AND query LIKE 'widecol: compacting public.big%'")" = 1 ]; do sleep 0.1; n=$((n+1)); [ $n -lt 300 ] || { echo "no compaction seen"; exit 1; }; done
  wpid=$($Q -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'widecol worker' AND query LIKE 'widecol: compacting public.big%'")
  wn=$(awk '{sub(/^.*\) /, ""); print $17}' /proc/$wpid/stat)
  $B/pgbench -n -h $W -p $P -c 2 -j 2 -T 8 -M prepared -f $W/lk.sql -r -l --log-prefix=$W/pg$round postgres > $W/out$round 2>&1
  still=$($Q -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'widecol worker' AND query LIKE 'widecol: compacting public.big%'")
  $Q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'widecol worker'" >/dev/null
  $Q -c "ALTER TABLE big SET (widecol.autocompact = off)"
  tps=$(grep -oP 'tps = \K[0-9.]+' $W/out$round | head -1)
  pct=$(cat $W/pg$round.* | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {printf "p50 %d us p99 %d us", a[int(NR*0.5)], a[int(NR*0.99)]}')
  rm -f $W/pg$round.*
  echo "round $round worker_nice=$nice (worker's nice $wn): lookups tps $tps, $pct; worker still compacting after the lookups: $still"
done
$B/pg_ctl -D $D -m fast -w stop >/dev/null
