#!/usr/bin/env bash
# Stress test (not part of the suite's time budget): C clients run mixed
# upserts, updates, deletes and reads on one widecol table for M minutes
# while a maintenance loop flushes and compacts it; every write transaction
# also appends what it did to a heap log table, so the log holds exactly the
# committed operations (some transactions roll back on purpose).  At the end
# the table must equal the log replayed, and widecol.verify() must pass.
#
#   bash test/stress.sh [--minutes M] [--clients C] [--keys K]
#
# Each client owns the keys k with k % C = its client id, so the log's
# order is the commit order per key.  As root it builds and installs
# widecol first (like the benchmarks) and runs as user postgres.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/bench/lib.sh"

MINUTES=10 CLIENTS=4 KEYS=2000
bench_main stress.sh --minutes=MINUTES --clients=CLIENTS --keys=KEYS -- "$@"

bench_instance
echo "widecol.level0_max_size = 64" >>"$inst/data/postgresql.conf"
"$bin/pg_ctl" -D "$inst/data" -w reload >/dev/null
"${PSQL[@]}" -c "CREATE EXTENSION widecol" \
	-c "CREATE TABLE s (k int, v bigint, pad text) USING widecol WITH (widecol.partition_key = 'k')" \
	-c "CREATE TABLE log (id bigserial PRIMARY KEY, client int, k int, op text, v bigint)"

cat >"$inst/client.sql" <<CLIENT
\set r random(1, 100)
\set k :client_id + $CLIENTS * random(0, $KEYS / $CLIENTS)
\set v random(1, 1000000)
\set abort random(1, 10)
BEGIN;
\if :r <= 45
INSERT INTO s VALUES (:k, :v, repeat('p', :v % 200));
INSERT INTO log (client, k, op, v) VALUES (:client_id, :k, 'set', :v);
\elif :r <= 75
WITH u AS (UPDATE s SET v = v + 1 WHERE k = :k RETURNING k, v) INSERT INTO log (client, k, op, v) SELECT :client_id, k, 'set', v FROM u;
\elif :r <= 90
WITH d AS (DELETE FROM s WHERE k = :k RETURNING k) INSERT INTO log (client, k, op, v) SELECT :client_id, k, 'del', NULL FROM d;
\else
SELECT count(*) FROM s WHERE k = :k;
\endif
\if :abort = 1
ROLLBACK;
\else
COMMIT;
\endif
CLIENT

wc_section "Stress: $CLIENTS clients, $MINUTES minutes, $KEYS keys; flush or compaction every 3 s"
end=$(($(date +%s) + MINUTES * 60))
(
	n=0
	while [ "$(date +%s)" -lt "$end" ]; do
		sleep 3
		if [ $((n % 4)) -eq 3 ]; then
			"${PSQL[@]}" -At -c "SET widecol.gc_grace = 0" -c "SELECT 'compact', widecol.compact('s', true)" || true
		else
			"${PSQL[@]}" -At -c "SELECT 'flush', widecol.flush('s')" || true
		fi
		n=$((n + 1))
	done
) >"$inst/maintenance.log" 2>&1 &
maint=$!
"$bin/pgbench" -n -c "$CLIENTS" -j 2 -T $((MINUTES * 60)) -P 60 -h "$inst" -p 5999 \
	-f "$inst/client.sql" postgres 2>&1 | grep -E "^progress|processed|failed|tps" || true
wait "$maint" || true
printf 'compactions: %s, flushes: %s\n' "$(grep -c '^compact' "$inst/maintenance.log" || true)" \
	"$(grep -c '^flush' "$inst/maintenance.log" || true)"
grep -i error "$inst/maintenance.log" | head -5 || true

wc_section "Verification"
"${PSQL[@]}" -At -f - <<'VERIFY'
CREATE TEMP TABLE expected AS SELECT DISTINCT ON (k) k, op, v FROM log ORDER BY k, id DESC;
SELECT 'committed write operations logged: ' || count(*) FROM log;
SELECT 'keys live (expected): ' || count(*) FROM expected WHERE op = 'set';
SELECT 'rows in the widecol table: ' || count(*) FROM s;
SELECT 'missing or different: ' || count(*) FROM (SELECT k, v FROM expected WHERE op = 'set' EXCEPT SELECT k, v FROM s) x;
SELECT 'unexpected: ' || count(*) FROM (SELECT k, v FROM s EXCEPT SELECT k, v FROM expected WHERE op = 'set') y;
SELECT 'runs: ' || count(*) FROM widecol.runs('s');
SELECT 'verify: ' || bool_and(ok) FROM widecol.verify('s');
\o /dev/null
VERIFY
bad=$("${PSQL[@]}" -At -c "
	WITH e AS (SELECT DISTINCT ON (k) k, op, v FROM log ORDER BY k, id DESC)
	SELECT (SELECT count(*) FROM (SELECT k, v FROM e WHERE op = 'set' EXCEPT SELECT k, v FROM s) x)
	     + (SELECT count(*) FROM (SELECT k, v FROM s EXCEPT SELECT k, v FROM e WHERE op = 'set') y)
	     + (SELECT count(*) FROM widecol.verify('s') WHERE NOT ok)")
if [ "$bad" = 0 ]; then
	echo "stress: PASSED"
else
	echo "stress: FAILED ($bad differences)"
	exit 1
fi
