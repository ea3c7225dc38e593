#!/usr/bin/env bash
# Read benchmark: the image-metadata queries on the same generated rows in a
# widecol table (WidecolSeek) and in a heap table with the equivalent btree
# primary key, in one run, on one throwaway instance.
#
#   bash test/bench/reads.sh [--rows N] [--seconds S] [--data-checksums] [--out DIR]
#
# (a) latest 100 of one (device, day) partition, devices chosen with a
#     Zipfian skew; (b) latest 100 across 7 day buckets of one device;
# (c) a one-hour capture-time range inside one partition; each as a
#     prepared statement run by pgbench (one client) for S seconds per table,
#     reporting p50/p95/p99 latency and queries/s from pgbench's per-query log;
# (d), (e) full-table GROUP BY reports, 5 rounds alternating the two tables (median), serial and
#     with 2 parallel workers ((d) has a count(DISTINCT), which keeps its
#     aggregate serial; (e) aggregates in the workers);
# the query shapes users write (issue 19), each against heap + btree too:
# (f) a keyset page, (capture_time, image_id) < (...), of one partition;
# (g) a semi-join, device_id IN (SELECT 50 devices), on one day;
# (h) an int literal against a bigint clustering key (a telemetry table);
# (ia), (ib) (a) and (b) on partitioned tables of 30 daily partitions;
# (j) (b) on a sparse data set: --sparse-devices devices x 30 days, 3 rows
#     per device-day, as compaction left it, and (jc) after a major
#     compaction; (k) (a) and (b) on the same rows in 100 small runs,
#     against the compacted table.  Writes reads.txt, reads.csv and reads.png into --out.
# --data-checksums: the instance is initialised with data checksums (-k).
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROWS=5000000 SECONDS_EACH=15 SPARSE_DEVICES=10000 OUT="$ROOT/test/bench/results" DATA_CHECKSUMS=""
bench_main bench/reads.sh --rows=ROWS --sparse-devices=SPARSE_DEVICES --seconds=SECONDS_EACH --out=OUT \
	--data-checksums=DATA_CHECKSUMS=1 -- "$@"
bench_instance
bench_generate "$ROWS" 10
bench_tables
wc_section "Loading both tables"
for f in "$inst"/chunk.*; do
	"${PSQL[@]}" -c "COPY heap_images FROM '$f' WITH (FORMAT csv)" -c "COPY wc_images FROM '$f' WITH (FORMAT csv)"
	rm -f "$f"
	printf '.'
done
echo
# what the background workers would have done by now: the size-tiered
# strategy merges the similar runs the COPYs wrote (not a major compaction)
"${PSQL[@]}" -At -c "SELECT 'compacted: ' || widecol.compact('wc_images') || ' versions written'"
"${PSQL[@]}" -c "VACUUM ANALYZE heap_images" -c "ANALYZE wc_images" -c CHECKPOINT
"${PSQL[@]}" -At -c "SELECT 'rows: ' || count(*) FROM wc_images"

wc_section "Shapes: partitioned copies (30 daily partitions), a telemetry table, a sparse data set"
"${PSQL[@]}" <<-EOF
	CREATE TABLE heap_images_p (LIKE heap_images, PRIMARY KEY (device_id, day_bucket, capture_time, image_id))
	  PARTITION BY RANGE (day_bucket);
	CREATE TABLE wc_images_p (LIKE heap_images) PARTITION BY RANGE (day_bucket);
	DO \$\$
	BEGIN
	  FOR d IN 0..29 LOOP
	    EXECUTE format('CREATE TABLE heap_images_p_%s PARTITION OF heap_images_p FOR VALUES FROM (%L) TO (%L)',
	                   d, date '2025-01-01' + d, date '2025-01-02' + d);
	    EXECUTE format('CREATE TABLE wc_images_p_%s PARTITION OF wc_images_p FOR VALUES FROM (%L) TO (%L) USING widecol
	                    WITH (widecol.partition_key = %L, widecol.clustering_key = %L)',
	                   d, date '2025-01-01' + d, date '2025-01-02' + d, 'device_id, day_bucket', 'capture_time DESC, image_id DESC');
	  END LOOP;
	END \$\$;
	INSERT INTO heap_images_p SELECT * FROM heap_images;
	INSERT INTO wc_images_p SELECT * FROM wc_images;
	CREATE TABLE heap_metrics (device_id text, ts bigint, value float8, PRIMARY KEY (device_id, ts));
	CREATE TABLE wc_metrics (device_id text, ts bigint, value float8)
	  USING widecol WITH (widecol.partition_key = 'device_id', widecol.clustering_key = 'ts');
	INSERT INTO heap_metrics SELECT 'm-' || (g % 1000), g, random() FROM generate_series(1, $((ROWS / 5))) g;
	INSERT INTO wc_metrics SELECT * FROM heap_metrics;
	CREATE TABLE heap_sparse (LIKE heap_images, PRIMARY KEY (device_id, day_bucket, capture_time, image_id));
	CREATE TABLE wc_sparse (LIKE heap_images) USING widecol
	  WITH (widecol.partition_key = 'device_id, day_bucket', widecol.clustering_key = 'capture_time DESC, image_id DESC');
EOF
python3 "$ROOT/test/gen/image_rows.py" --rows $((SPARSE_DEVICES * 30 * 3)) --devices "$SPARSE_DEVICES" --days 30 \
	--seed 11 --table images --quiet >"$inst/sparse.csv"
"${PSQL[@]}" -c "COPY heap_sparse FROM '$inst/sparse.csv' WITH (FORMAT csv)" -c "COPY wc_sparse FROM '$inst/sparse.csv' WITH (FORMAT csv)"
rm -f "$inst/sparse.csv"
for t in wc_images_p wc_metrics wc_sparse; do
	"${PSQL[@]}" -At -c "SELECT '$t compacted: ' || sum(widecol.compact(p)) FROM widecol.partitions('$t') p"
done
"${PSQL[@]}" -c "VACUUM ANALYZE heap_images_p" -c "VACUUM ANALYZE heap_metrics" -c "VACUUM ANALYZE heap_sparse" \
	-c "ANALYZE wc_images_p" -c "ANALYZE wc_metrics" -c "ANALYZE wc_sparse" -c CHECKPOINT

# pgbench scripts: $T is the table
write_scripts() {
	local t=$1
	local d=$inst/scripts/$t
	bench_partition_scripts "$d" "$t"
	cat >"$d/c.sql" <<-EOF
		\set dev random(1, 200)
		\set day random(0, 29)
		\set hour random(0, 22)
		SELECT capture_time, image_id, object_key FROM $t
		 WHERE device_id = 'cam-' || lpad(:dev::text, 4, '0') AND day_bucket = date '2025-01-01' + :day::int
		   AND capture_time >= timestamptz '2025-01-01 00:00+00' + :day::int * interval '1 day' + :hour::int * interval '1 hour'
		   AND capture_time <  timestamptz '2025-01-01 00:00+00' + :day::int * interval '1 day' + (:hour::int + 1) * interval '1 hour'
		 ORDER BY capture_time DESC, image_id DESC;
	EOF
}
# the shapes users write, for a table prefix (heap or wc)
write_shape_scripts() {
	local p=$1
	local d=$inst/scripts/${p}_images
	mkdir -p "$d"
	cat >"$d/f.sql" <<-EOF
		\set dev random(1, 200)
		\set day random(0, 29)
		\set hour random(1, 23)
		SELECT capture_time, image_id, object_key FROM ${p}_images
		 WHERE device_id = 'cam-' || lpad(:dev::text, 4, '0') AND day_bucket = date '2025-01-01' + :day::int
		   AND (capture_time, image_id) < (timestamptz '2025-01-01 00:00+00' + :day::int * interval '1 day' + :hour::int * interval '1 hour',
		                                  'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid)
		 ORDER BY capture_time DESC, image_id DESC LIMIT 20;
	EOF
	cat >"$d/g.sql" <<-EOF
		\set dev random(1, 151)
		\set day random(0, 29)
		SELECT capture_time, image_id, device_id FROM ${p}_images
		 WHERE device_id IN (SELECT 'cam-' || lpad(g::text, 4, '0') FROM generate_series(:dev, :dev + 49) g)
		   AND day_bucket = date '2025-01-01' + :day::int
		 ORDER BY capture_time DESC LIMIT 100;
	EOF
	cat >"$d/h.sql" <<-EOF
		\set dev random(0, 999)
		\set from random(1, $((ROWS / 5)))
		SELECT ts, value FROM ${p}_metrics WHERE device_id = 'm-' || :dev AND ts > :from::int ORDER BY ts LIMIT 100;
	EOF
	sed "s/FROM ${p}_images\$/FROM ${p}_images_p/" "$d/a.sql" >"$d/ia.sql"
	sed "s/FROM ${p}_images\$/FROM ${p}_images_p/" "$d/b.sql" >"$d/ib.sql"
	cat >"$d/j.sql" <<-EOF
		\set dev random(1, $((SPARSE_DEVICES < 9999 ? SPARSE_DEVICES : 9999)))
		\set day random(0, 23)
		SELECT capture_time, image_id, object_key FROM ${p}_sparse
		 WHERE device_id = 'cam-' || lpad(:dev::text, 4, '0')
		   AND day_bucket BETWEEN date '2025-01-01' + :day::int AND date '2025-01-01' + :day::int + 6
		 ORDER BY capture_time DESC, image_id DESC LIMIT 100;
	EOF
}
write_scripts heap_images
write_scripts wc_images
write_shape_scripts heap
write_shape_scripts wc

# run_query TABLE QUERY -> "qps p50 p95 p99" (milliseconds)
run_query() {
	local t=$1 q=$2
	local dir=$inst/log/$t-$q
	mkdir -p "$dir"
	(cd "$dir" && "$bin/pgbench" -n -M prepared -c 1 -T "$SECONDS_EACH" -l \
		-h "$inst" -p 5999 -f "$inst/scripts/$t/$q.sql" postgres >"$dir/out.txt" 2>&1) ||
		{ cat "$dir/out.txt"; wc_die "pgbench failed"; }
	cat "$dir"/pgbench_log.* | awk '{ print $3 / 1000.0 }' | sort -n | awk -v s="$SECONDS_EACH" '
		{ v[NR] = $1 } END {
			p50 = v[int(NR * 0.50) + 1]; p95 = v[int(NR * 0.95) + 1]; p99 = v[int(NR * 0.99) + 1]
			printf "%.1f %.3f %.3f %.3f\n", NR / s, p50, p95, p99 }'
}

csv=$OUT/reads.csv
echo "query,table,qps,p50_ms,p95_ms,p99_ms" >"$csv"
wc_section "Queries (pgbench, 1 client, $SECONDS_EACH s each, prepared)"
printf '%-34s %10s %10s %10s %10s\n' query/table qps p50_ms p95_ms p99_ms
for q in a b c f g h ia ib j; do
	for t in heap_images wc_images; do
		read -r qps p50 p95 p99 < <(run_query "$t" "$q")
		echo "$q,$t,$qps,$p50,$p95,$p99" >>"$csv"
		printf '%-34s %10s %10s %10s %10s\n' "($q) $t" "$qps" "$p50" "$p95" "$p99"
	done
done

# (jc) (j) again once the sparse table is one run: size-tiered compaction
# left it as the runs its COPY wrote (value pages as rows); a major
# compaction writes them by column, of which (j) decodes the one it reads
wc_section "(jc) (j) after a major compaction of the sparse table"
"${PSQL[@]}" -At -c "SELECT 'wc_sparse: ' || count(*) || ' runs before' FROM widecol.runs('wc_sparse')" \
	-c "SELECT 'wc_sparse major compaction: ' || widecol.compact('wc_sparse', true) || ' versions written'" \
	-c "ANALYZE wc_sparse" -c CHECKPOINT
for t in heap_images wc_images; do
	read -r qps p50 p95 p99 < <(run_query "$t" j)
	echo "jc,$t,$qps,$p50,$p95,$p99" >>"$csv"
	printf '%-34s %10s %10s %10s %10s\n' "(jc) $t" "$qps" "$p50" "$p95" "$p99"
done

# (k) the same rows in many small runs: one INSERT and flush per 1% of
# them, in capture order (as a day of small writes leaves them before
# compaction catches up; the bench instance runs no workers)
wc_section "(k) the same rows in 100 small runs, against the compacted table"
"${PSQL[@]}" <<-EOF
	CREATE TABLE wc_small (LIKE heap_images) USING widecol
	  WITH (widecol.partition_key = 'device_id, day_bucket', widecol.clustering_key = 'capture_time DESC, image_id DESC');
	CREATE TABLE small_stage AS SELECT row_number() OVER (ORDER BY capture_time, image_id) AS rn, * FROM heap_images;
	DO \$\$
	BEGIN
	  FOR b IN 0..99 LOOP
	    INSERT INTO wc_small SELECT device_id, day_bucket, capture_time, image_id, object_store, object_key, width, height, content_hash
	      FROM small_stage WHERE rn > b * ($ROWS / 100) AND rn <= (b + 1) * ($ROWS / 100);
	    PERFORM widecol.flush('wc_small');
	  END LOOP;
	END \$\$;
	DROP TABLE small_stage;
	ANALYZE wc_small;
EOF
"${PSQL[@]}" -At -c "SELECT 'wc_small: ' || count(*) || ' runs, ' || sum(nrows) || ' versions' FROM widecol.runs('wc_small')"
write_scripts wc_small
for q in a b; do
	read -r qps p50 p95 p99 < <(run_query wc_small "$q")
	echo "k$q,wc_small,$qps,$p50,$p95,$p99" >>"$csv"
	printf '%-34s %10s %10s %10s %10s\n' "($q) wc_small" "$qps" "$p50" "$p95" "$p99"
done

wc_section "(d) full-table reports (5 rounds alternating the tables, median; serial and with 2 parallel workers)"
# d: images and devices per day (count(DISTINCT) keeps the aggregate serial)
# e: images per day (partial aggregates in parallel workers)
reports=(
	"d|SELECT day_bucket, count(*), count(DISTINCT device_id) FROM %s GROUP BY day_bucket ORDER BY 1"
	"e|SELECT day_bucket, count(*), sum(width::bigint * height) FROM %s GROUP BY day_bucket ORDER BY 1"
)
# report_ms SQL SETTINGS -> milliseconds of one run
report_ms() {
	"${PSQL[@]}" -At -c "$2" -c "\\timing on" -c "$1" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
}
# The rounds alternate heap and widecol, so that a change of this machine's
# speed (a shared 2-core VM: up to 1.5x within minutes) hits both alike.
for r in "${reports[@]}"; do
	q=${r%%|*} report=${r#*|}
	for mode in serial parallel; do
		workers=0
		[ "$mode" = parallel ] && workers=2
		heap_ms="" wc_ms=""
		for _ in 1 2 3 4 5; do
			heap_ms+="$(report_ms "$(printf "$report" heap_images)" "SET max_parallel_workers_per_gather = $workers") "
			wc_ms+="$(report_ms "$(printf "$report" wc_images)" "SET max_parallel_workers_per_gather = $workers") "
		done
		for t in heap_images wc_images; do
			[ "$t" = heap_images ] && all=$heap_ms || all=$wc_ms
			ms=$(printf '%s\n' $all | sort -n | sed -n 3p)
			echo "$q,${t}_$mode,,$ms,," >>"$csv"
			printf '(%s) %-12s %-9s %10s ms  (%s)\n' "$q" "$t" "$mode" "$ms" "${all% }"
		done
	done
done

wc_section "Ratios widecol / heap+btree"
awk -F, 'NR > 1 && $1 != "d" && $1 != "e" { k = $1; if ($2 == "heap_images") { h50[k] = $4; h99[k] = $6; hq[k] = $3 } else { w50[k] = $4; w99[k] = $6; wq[k] = $3 } }
	$1 == "d" || $1 == "e" { r[$1 "," $2] = $4 }
	END {
		for (k in h50) printf "(%s) p50 %.2fx  p99 %.2fx  qps %.2fx\n", k, w50[k] / h50[k], w99[k] / h99[k], wq[k] / hq[k]
		split("d e", qs, " ")
		for (i = 1; i <= 2; i++) {
			q = qs[i]
			printf "(%s) widecol serial %.2fx heap serial; widecol parallel %.2fx heap serial, %.2fx heap parallel\n", q,
				r[q ",wc_images_serial"] / r[q ",heap_images_serial"],
				r[q ",wc_images_parallel"] / r[q ",heap_images_serial"],
				r[q ",wc_images_parallel"] / r[q ",heap_images_parallel"]
		}
	}' "$csv" | sort | tee "$OUT/reads.txt"
awk -F, '$2 == "wc_images" && ($1 == "a" || $1 == "b") { c50[$1] = $4; c99[$1] = $6 }
	$2 == "wc_small" { s50[substr($1, 2)] = $4; s99[substr($1, 2)] = $6 }
	END { for (q in s50) printf "(k%s) 100 small runs / compacted: p50 %.2fx  p99 %.2fx\n", q, s50[q] / c50[q], s99[q] / c99[q] }' "$csv" |
	sort | tee -a "$OUT/reads.txt"
echo "data checksums: $("${PSQL[@]}" -At -c 'SHOW data_checksums')" | tee -a "$OUT/reads.txt"

python3 - "$csv" "$OUT/reads.png" <<'EOF' || wc_warn "no plot (python3-matplotlib missing?)"
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
labels = {"a": "(a) latest 100,\none partition", "b": "(b) latest 100,\n7 day buckets", "c": "(c) 1-hour range,\none partition",
          "f": "(f) keyset\npage", "g": "(g) semi-join,\n50 devices", "h": "(h) int literal,\nbigint key",
          "ia": "(a) on 30\npartitions", "ib": "(b) on 30\npartitions", "j": "(b) sparse:\n3 rows/device-day",
          "jc": "(b) sparse,\none run"}
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["query"] in labels]
qs = [q for q in labels if any(r["query"] == q for r in rows)]
fig, ax = plt.subplots(figsize=(13, 4.5))
w = 0.2
for i, (t, name) in enumerate([("heap_images", "heap+btree"), ("wc_images", "widecol")]):
    for j, p in enumerate(["p50_ms", "p99_ms"]):
        vals = [float(next(r[p] for r in rows if r["query"] == q and r["table"] == t)) for q in qs]
        ax.bar([x + (i * 2 + j - 1.5) * w for x in range(len(qs))], vals, w, label=f"{name} {p[:3]}")
ax.set_xticks(range(len(qs)))
ax.set_xticklabels([labels[q] for q in qs])
ax.set_yscale("log")
ax.set_ylabel("latency (ms, log scale)")
ax.set_title("Image-metadata queries, 1 client (lower is better)")
ax.legend()
plt.tight_layout()
plt.savefig(sys.argv[2], dpi=110)
print("plot:", sys.argv[2])
EOF
