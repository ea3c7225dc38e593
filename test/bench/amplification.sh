#!/usr/bin/env bash
# Amplification benchmark: the same ingest with 10% upserts and 5% deletes
# into a widecol table per compaction strategy (size_tiered, time_window),
# with the background workers compacting as they go, and into a heap table
# with its btree primary key for reference.  For each table:
#
#   write amplification  WAL bytes of the ingest's statements / bytes of CSV
#                        ingested; for widecol also bytes written into runs
#                        (the workers' compactions included) / bytes that
#                        entered them (widecol.compaction_stats)
#   read amplification   pages a point query touches (latest 100 rows of one
#                        partition), mean over 200 partitions
#   space amplification  size of the runs / size after a major compaction
#                        (heap: table size / size after VACUUM FULL)
#
#   bash test/bench/amplification.sh [--rows N] [--chunks K] [--out DIR]
#
# Chunk i of new rows is copied in, then 10% of chunk i-1's rows are written
# again (upserts, new object keys) and 5% deleted.  Writes
# amplification.txt, amplification.csv and amplification.png into --out.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROWS=2000000 CHUNKS=20 OUT="$ROOT/test/bench/results"
bench_main bench/amplification.sh --rows=ROWS --chunks=CHUNKS --out=OUT -- "$@"
bench_instance
"${PSQL[@]}" -c "ALTER SYSTEM SET widecol.naptime = '1s'" -c "ALTER SYSTEM SET widecol.max_workers = 2" \
	-c "ALTER SYSTEM SET widecol.compaction_throughput = 0" -c "SELECT pg_reload_conf()" >/dev/null
bench_generate "$ROWS" "$CHUNKS"
bench_tables
TABLES=(heap_images st_images tw_images)
"${PSQL[@]}" <<SQL
ALTER TABLE wc_images RENAME TO st_images;
ALTER TABLE st_images SET (widecol.compaction = 'size_tiered');
CREATE TABLE tw_images (LIKE st_images) USING widecol
  WITH (widecol.partition_key = 'device_id, day_bucket',
        widecol.clustering_key = 'capture_time DESC, image_id DESC',
        widecol.compaction = 'time_window', widecol.compaction_window = '1 day');
CREATE UNLOGGED TABLE prev_chunk (LIKE heap_images);
CREATE UNLOGGED TABLE wal_per_table (t text PRIMARY KEY, wal numeric DEFAULT 0);
INSERT INTO wal_per_table SELECT unnest(ARRAY['heap_images', 'st_images', 'tw_images']);
SQL

# run SQL for table T, adding its WAL to wal_per_table (one table at a time)
with_wal() {
	local t=$1 sql=$2
	"${PSQL[@]}" <<SQL
SELECT pg_current_wal_insert_lsn() AS l0 \gset
$sql
UPDATE wal_per_table SET wal = wal + pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'l0') WHERE t = '$t';
SQL
}

wc_section "Ingest: $ROWS rows in $CHUNKS chunks, then 10% upserts and 5% deletes of the chunk before"
csv_bytes=0
i=0
t0=$(wc_now)
for f in "$inst"/chunk.*; do
	csv_bytes=$((csv_bytes + $(stat -c %s "$f")))
	for t in "${TABLES[@]}"; do
		with_wal "$t" "COPY $t FROM '$f' WITH (FORMAT csv);
INSERT INTO $t SELECT device_id, day_bucket, capture_time, image_id, object_store,
       object_key || '.v2', width, height, content_hash
  FROM prev_chunk WHERE abs(hashtext(image_id::text)) % 100 < 10
$([ "$t" = heap_images ] && echo "ON CONFLICT (device_id, day_bucket, capture_time, image_id) DO UPDATE SET object_key = excluded.object_key");
DELETE FROM $t w USING prev_chunk p
 WHERE abs(hashtext(p.image_id::text)) % 100 BETWEEN 10 AND 14
   AND w.device_id = p.device_id AND w.day_bucket = p.day_bucket
   AND w.capture_time = p.capture_time AND w.image_id = p.image_id;"
	done
	# bytes of the upserted rows count as ingested too
	csv_bytes=$((csv_bytes + $(stat -c %s "$f") / 10))
	"${PSQL[@]}" -c "TRUNCATE prev_chunk" -c "COPY prev_chunk FROM '$f' WITH (FORMAT csv)"
	rm -f "$f"
	i=$((i + 1))
	printf '\rchunk %d/%d (%ds)' "$i" "$CHUNKS" $(($(wc_now) - t0))
done
echo
# let the workers finish what the last chunk started
sleep 5
"${PSQL[@]}" -c "ALTER SYSTEM SET widecol.max_workers = 0" -c "SELECT pg_reload_conf()" >/dev/null
"${PSQL[@]}" -c "VACUUM ANALYZE heap_images" -c "ANALYZE st_images" -c "ANALYZE tw_images" -c CHECKPOINT

same=$("${PSQL[@]}" -At -c "SELECT (SELECT count(*) FROM st_images) = (SELECT count(*) FROM heap_images)
	AND (SELECT count(*) FROM tw_images) = (SELECT count(*) FROM heap_images)")
[ "$same" = t ] || wc_die "the tables disagree after the ingest"

# read amplification: buffers (pages of every kind: data, index, bloom,
# level 0) a point query touches, mean over 200 partitions, same for all
blocks_per_query() {
	local t=$1
	"${PSQL[@]}" -At <<SQL
DO \$\$
DECLARE r record; l text; total numeric := 0; seen boolean;
BEGIN
  FOR r IN SELECT * FROM (SELECT DISTINCT device_id, day_bucket FROM heap_images) p
            ORDER BY hashtext(device_id || day_bucket) LIMIT 200 LOOP
    seen := false;
    FOR l IN EXECUTE format('EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF)
        SELECT * FROM $t WHERE device_id = %L AND day_bucket = %L
        ORDER BY capture_time DESC, image_id DESC LIMIT 100', r.device_id, r.day_bucket) LOOP
      IF NOT seen AND l ~ 'Buffers: shared' THEN
        total := total + coalesce(substring(l FROM 'hit=(\d+)')::numeric, 0)
                       + coalesce(substring(l FROM 'read=(\d+)')::numeric, 0);
        seen := true;
      END IF;
    END LOOP;
  END LOOP;
  PERFORM set_config('bench.blocks', round(total / 200, 1)::text, false);
END \$\$;
SELECT current_setting('bench.blocks');
SQL
}

wc_section "Measuring"
out_csv=$OUT/amplification.csv
echo "table,strategy,write_amp,read_blocks_per_query,space_amp,wal_bytes,ingested_bytes,size_bytes,min_size_bytes,runs,run_write_amp" >"$out_csv"
for t in "${TABLES[@]}"; do
	wal=$("${PSQL[@]}" -At -c "SELECT wal FROM wal_per_table WHERE t = '$t'")
	reads=$(blocks_per_query "$t")
	if [ "$t" = heap_images ]; then
		strategy=heap
		runamp=
		size=$("${PSQL[@]}" -At -c "SELECT pg_total_relation_size('$t')")
		runs=
		"${PSQL[@]}" -c "VACUUM FULL $t"
		min=$("${PSQL[@]}" -At -c "SELECT pg_total_relation_size('$t')")
	else
		strategy=$("${PSQL[@]}" -At -c "SELECT CASE WHEN '$t' = 'st_images' THEN 'size_tiered' ELSE 'time_window' END")
		size=$("${PSQL[@]}" -At -c "SELECT coalesce(sum(compressed_bytes), 0) FROM widecol.runs('$t')")
		runs=$("${PSQL[@]}" -At -c "SELECT count(*) FROM widecol.runs('$t')")
		# bytes written into runs (flushes, bulk writes, the workers' compactions)
		# per byte that entered them: the WAL above misses the workers' writes
		runamp=$("${PSQL[@]}" -At -c "SELECT write_amplification FROM widecol.compaction_stats('$t')")
		"${PSQL[@]}" -c "SET widecol.gc_grace = 0" -c "SELECT widecol.compact('$t', true)" >/dev/null
		min=$("${PSQL[@]}" -At -c "SELECT coalesce(sum(compressed_bytes), 0) FROM widecol.runs('$t')")
	fi
	awk -v t="$t" -v s="$strategy" -v w="$wal" -v c="$csv_bytes" -v r="$reads" -v z="$size" -v m="$min" -v n="$runs" -v a="$runamp" \
		'BEGIN { printf "%s,%s,%.2f,%s,%.2f,%.0f,%.0f,%.0f,%.0f,%s,%s\n", t, s, w / c, r, z / (m > 0 ? m : 1), w, c, z, m, n, a }' >>"$out_csv"
done
{
	printf 'amplification: %d rows in %d chunks, 10%% upserts, 5%% deletes, workers compacting during the ingest\n' "$ROWS" "$CHUNKS"
	column -s, -t "$out_csv"
} | tee "$OUT/amplification.txt"

python3 - "$out_csv" "$OUT/amplification.png" <<'PY' || wc_warn "no plot (python3-matplotlib missing?)"
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
names = [r["strategy"] for r in rows]
fig, axes = plt.subplots(1, 3, figsize=(10, 3.5))
for ax, col, title in [(axes[0], "write_amp", "write (WAL / ingested)"),
                       (axes[1], "read_blocks_per_query", "read (blocks per query)"),
                       (axes[2], "space_amp", "space (size / compacted)")]:
    ax.bar(names, [float(r[col]) for r in rows], color=["tab:gray", "tab:blue", "tab:green"][:len(rows)])
    ax.set_title(title)
fig.suptitle("Amplification by compaction strategy (lower is better)")
plt.tight_layout()
plt.savefig(sys.argv[2], dpi=110)
print("plot:", sys.argv[2])
PY
