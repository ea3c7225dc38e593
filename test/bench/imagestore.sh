#!/usr/bin/env bash
# Image-store benchmark: widecol.create_image_store() (a widecol images table
# whose query tables are kept in step by widecol) against the same schema on
# heap tables with btree primary keys, kept in step by statement-level
# triggers of the same shape.  Same rows, one instance, one run:
#
#   ingest      COPY of the generated images into each store's images table
#               (base and query tables written in the same transaction), and
#               into "hw": three plain widecol tables (images,
#               device_daily_images, images_by_tag) that the application
#               fills itself, one COPY each from rows it derived beforehand
#   writes      single-image transactions (pgbench, 1 client, new image ids,
#               the three paths in turn, --rounds times, means compared):
#               INSERT into the store's images, the same INSERT into heap +
#               triggers, and CALL hw.put_image(...), a hand-written plpgsql
#               procedure writing the three hw tables (defined below)
#   queries     p50/p99 latency (pgbench, prepared, 1 client) of the query
#               list of an image platform: (1) an image by id, (2) a device's
#               images over 3 days, newest 100, (3) a tag's images over a
#               week, newest 100, and images carrying two tags, (4) the
#               object keys of one upload batch, (5) images per device per
#               day over a week
#
#   bash test/bench/imagestore.sh [--rows N] [--seconds S] [--rounds R] [--out DIR] [--no-queries]
#
# Writes imagestore.txt, imagestore.csv and imagestore.png into --out.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROWS=1000000 SECONDS_EACH=10 ROUNDS=3 OUT="$ROOT/test/bench/results" QUERIES=1
bench_main bench/imagestore.sh --rows=ROWS --seconds=SECONDS_EACH --rounds=ROUNDS --no-queries=QUERIES=0 --out=OUT -- "$@"

DAYS=30
bench_instance
"${PSQL[@]}" <<'SQL'
CREATE EXTENSION widecol;
SELECT count(*) AS objects FROM widecol.create_image_store('wc');
-- the same model on heap tables, kept in step by triggers
CREATE SCHEMA hp;
CREATE TABLE hp.images (LIKE wc.images, PRIMARY KEY (image_id));
CREATE TABLE hp.device_daily_images (LIKE wc.device_daily_images,
    PRIMARY KEY (device_id, day, capture_time, image_id));
CREATE TABLE hp.images_by_tag (LIKE wc.images_by_tag, PRIMARY KEY (tag, day, capture_time, image_id));
CREATE TABLE hp.batch_images (LIKE wc.batch_images, PRIMARY KEY (batch_id, image_id));
CREATE FUNCTION hp.derive() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO hp.device_daily_images
    SELECT device_id, widecol.day_bucket(capture_time), capture_time, image_id, batch_id,
           object_store, object_key, width, height, content_hash, tags FROM new_rows;
    INSERT INTO hp.images_by_tag
    SELECT DISTINCT t.tag, widecol.day_bucket(b.capture_time), b.capture_time, b.image_id,
           b.device_id, b.object_store, b.object_key, b.tags
      FROM new_rows AS b CROSS JOIN LATERAL unnest(b.tags) AS t(tag) WHERE t.tag IS NOT NULL;
    INSERT INTO hp.batch_images
    SELECT batch_id, image_id, object_store, object_key, device_id, capture_time
      FROM new_rows WHERE batch_id IS NOT NULL;
    RETURN NULL;
END $$;
CREATE TRIGGER derive AFTER INSERT ON hp.images REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hp.derive();
-- "hand-written": three plain widecol tables the application writes itself
CREATE SCHEMA hw;
CREATE TABLE hw.images (LIKE wc.images) USING widecol WITH (widecol.partition_key = 'image_id');
CREATE TABLE hw.device_daily_images (LIKE wc.device_daily_images) USING widecol
    WITH (widecol.partition_key = 'device_id, day', widecol.clustering_key = 'capture_time DESC, image_id DESC');
CREATE TABLE hw.images_by_tag (LIKE wc.images_by_tag) USING widecol
    WITH (widecol.partition_key = 'tag, day', widecol.clustering_key = 'capture_time DESC, image_id DESC');
-- the hand-written write path: three INSERTs (static SQL: plans kept), no
-- read of what an upsert replaces, no counts
CREATE PROCEDURE hw.put_image(p_id uuid, p_device text, p_time timestamptz, p_batch text, p_store text,
                              p_key text, p_w int, p_h int, p_hash text, p_tags text[])
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO hw.images VALUES (p_id, p_device, p_time, p_batch, p_store, p_key, p_w, p_h, p_hash, p_tags);
    INSERT INTO hw.device_daily_images VALUES (p_device, widecol.day_bucket(p_time), p_time, p_id, p_batch,
                                               p_store, p_key, p_w, p_h, p_hash, p_tags);
    INSERT INTO hw.images_by_tag
    SELECT DISTINCT t, widecol.day_bucket(p_time), p_time, p_id, p_device, p_store, p_key, p_tags
      FROM unnest(p_tags) AS t WHERE t IS NOT NULL;
END $$;
SQL

wc_section "Generating $ROWS images over $DAYS days"
python3 "$ROOT/test/gen/image_rows.py" --rows "$ROWS" --devices 200 --days "$DAYS" --seed 5 \
	--table store --quiet | split -l 100000 -d -a 3 - "$inst/chunk."

wc_section "Deriving the hand-written path's rows (not timed)"
for f in "$inst"/chunk.*; do
	"${PSQL[@]}" <<-SQL
		CREATE TEMP TABLE s (LIKE wc.images);
		COPY s FROM '$f' WITH (FORMAT csv);
		COPY (SELECT device_id, widecol.day_bucket(capture_time), capture_time, image_id, batch_id,
		             object_store, object_key, width, height, content_hash, tags FROM s) TO '$f.dd' WITH (FORMAT csv);
		COPY (SELECT DISTINCT t.tag, widecol.day_bucket(b.capture_time), b.capture_time, b.image_id,
		             b.device_id, b.object_store, b.object_key, b.tags
		        FROM s AS b CROSS JOIN LATERAL unnest(b.tags) AS t(tag) WHERE t.tag IS NOT NULL) TO '$f.tag' WITH (FORMAT csv);
	SQL
	printf '.'
done
echo

wc_section "Ingest (COPY into images; query tables kept in step; hw: three COPYs per chunk)"
csv=$OUT/imagestore.csv
echo "what,store,value1,value2" >"$csv"
for store in hp hw wc; do
	t0=$("${PSQL[@]}" -At -c "SELECT extract(epoch FROM clock_timestamp())")
	l0=$("${PSQL[@]}" -At -c "SELECT pg_current_wal_insert_lsn()")
	for f in "$inst"/chunk.???; do
		if [ "$store" = hw ]; then
			"${PSQL[@]}" -c "COPY hw.images FROM '$f' WITH (FORMAT csv)" \
				-c "COPY hw.device_daily_images FROM '$f.dd' WITH (FORMAT csv)" \
				-c "COPY hw.images_by_tag FROM '$f.tag' WITH (FORMAT csv)"
		else
			"${PSQL[@]}" -c "COPY $store.images FROM '$f' WITH (FORMAT csv)"
		fi
		printf '.'
	done
	read -r secs wal < <("${PSQL[@]}" -At -F' ' -c "SELECT round((extract(epoch FROM clock_timestamp()) - $t0)::numeric, 2),
		pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$l0')")
	bytes=$("${PSQL[@]}" -At -c "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '$store' AND c.relkind = 'r'")
	echo "ingest,$store,$secs,$wal" >>"$csv"
	echo "bytes,$store,$bytes," >>"$csv"
	printf ' %s: %s s, %s rows/s, WAL %s bytes, %s bytes on disk\n' "$store" "$secs" \
		"$(awk -v r="$ROWS" -v s="$secs" 'BEGIN { printf "%.0f", r / s }')" "$wal" "$bytes"
done
rm -f "$inst"/chunk.*
"${PSQL[@]}" -c "VACUUM ANALYZE" -c CHECKPOINT
# values the queries pick from: image ids and batches by number
"${PSQL[@]}" <<'SQL'
CREATE TABLE ids AS SELECT row_number() OVER () AS n, image_id FROM (SELECT image_id FROM hp.images ORDER BY hashtext(image_id::text) LIMIT 100000) x;
ALTER TABLE ids ADD PRIMARY KEY (n);
CREATE TABLE batches AS SELECT row_number() OVER () AS n, batch_id FROM (SELECT DISTINCT batch_id FROM hp.batch_images) x;
ALTER TABLE batches ADD PRIMARY KEY (n);
ANALYZE ids, batches;
SQL
nbatches=$("${PSQL[@]}" -At -c "SELECT count(*) FROM batches")
# the two stores must answer alike
diffs=$("${PSQL[@]}" -At -c "SELECT
	(SELECT count(*) FROM (SELECT * FROM wc.device_daily_images EXCEPT SELECT * FROM hp.device_daily_images) x) +
	(SELECT count(*) FROM (SELECT * FROM wc.images_by_tag EXCEPT SELECT * FROM hp.images_by_tag) x) +
	(SELECT count(*) FROM (SELECT * FROM wc.batch_images EXCEPT SELECT * FROM hp.batch_images) x)")
[ "$diffs" = 0 ] || wc_die "the stores' query tables differ ($diffs rows)"

# recount (widecol.check_image_store, where the build under test has it)
check_store() {
	local ok
	[ "$("${PSQL[@]}" -At -c "SELECT to_regprocedure('widecol.check_image_store(name,date,date)') IS NOT NULL")" = t ] || return 0
	ok=$("${PSQL[@]}" -At -c "SELECT bool_and(ok) FROM widecol.check_image_store('wc')")
	[ "$ok" = t ] || wc_die "the image store does not equal a recount $1"
}
check_store "after the COPYs"

# Single-image transactions: a new image per transaction, as a consumer of
# an upload queue writes them.  Same generated values for every path.
wc_section "Single-image transactions (pgbench, 1 client, $SECONDS_EACH s each, $ROUNDS rounds)"
mkdir -p "$inst/writes"
vals="gen_random_uuid(), 'cam-' || lpad(:dev::text, 4, '0'),
      timestamptz '2025-01-01 00:00+00' + :sec * interval '1 second', 'upload-' || :b, 's3://bench',
      'raw/' || :sec || '.jpg', 1920, 1080, md5(:sec::text),
      ARRAY[(ARRAY['crack','rust','corrosion','leak','ok','blur'])[:t1], (ARRAY['crack','rust','corrosion','leak','ok','blur'])[:t2]]"
setvars="\\set dev random(1, 200)
\\set sec random(0, $((DAYS * 86400 - 1)))
\\set b random(1, 5000)
\\set t1 random(1, 6)
\\set t2 random(1, 6)"
for s in hp wc; do
	printf '%s\nINSERT INTO %s.images VALUES (%s);\n' "$setvars" "$s" "$vals" >"$inst/writes/$s.sql"
done
printf '%s\nCALL hw.put_image(%s);\n' "$setvars" "$vals" >"$inst/writes/hw.sql"
# the three paths in turn, ROUNDS times: a disk or a neighbour that is busy
# for a while then weighs on all of them alike (ratios are of the means)
for ((round = 1; round <= ROUNDS; round++)); do
	for s in hw wc hp; do
		"$bin/pgbench" -n -M prepared -c 1 -T "$SECONDS_EACH" -h "$inst" -p 5999 -f "$inst/writes/$s.sql" postgres \
			>"$inst/writes/$s.out" 2>&1 || { cat "$inst/writes/$s.out"; wc_die "pgbench failed"; }
		tps=$(awk '/^tps/ { print $3 }' "$inst/writes/$s.out")
		lat=$(awk '/^latency average/ { print $4 }' "$inst/writes/$s.out")
		echo "single,$s,$tps,$lat" >>"$csv"
		printf ' round %s, %s: %s transactions/s, %s ms average\n' "$round" "$s" "$tps" "$lat"
	done
done
check_store "after the single-image writes"
python3 - "$csv" "$OUT/imagestore-writes.png" <<'PY' || wc_warn "no plot (python3-matplotlib missing?)"
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["what"] in ("ingest", "single")]
v = {}
for k in {(r["what"], r["store"]) for r in rows}:
    vals = [float(r["value1"]) for r in rows if (r["what"], r["store"]) == k]
    v[k] = sum(vals) / len(vals)   # the mean over rounds
names = {"hp": "heap + triggers", "hw": "3 plain widecol tables\n(hand-written)", "wc": "widecol image store"}
fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
order = ["hp", "hw", "wc"]
a.bar([names[s] for s in order], [v[("ingest", s)] for s in order], color=["grey", "tab:blue", "tab:orange"])
a.set_ylabel("seconds (lower is better)")
a.set_title("COPY of the images")
b.bar([names[s] for s in order], [v[("single", s)] for s in order], color=["grey", "tab:blue", "tab:orange"])
b.set_ylabel("transactions/s (higher is better)")
b.set_title("one new image per transaction, 1 client")
for ax in (a, b):
    ax.tick_params(axis="x", labelsize=8)
plt.tight_layout()
plt.savefig(sys.argv[2], dpi=110)
print("plot:", sys.argv[2])
PY
if [ "$QUERIES" = 0 ]; then
	wc_section "Ratios"
	awk -F, 'NR > 1 { k = $1 "," $2; n[k]++; s1[k] += $3; s2[k] += $4; v1[k] = s1[k] / n[k]; v2[k] = s2[k] / n[k] }
		END {
			printf "COPY time: store / three plain widecol tables %.2fx (target <= 1.5), store / heap + triggers %.2fx (target < 1)\n",
				v1["ingest,wc"] / v1["ingest,hw"], v1["ingest,wc"] / v1["ingest,hp"]
			printf "single-image transactions/s: store / hand-written procedure %.2fx (target >= 0.8), store / heap + triggers %.2fx\n",
				v1["single,wc"] / v1["single,hw"], v1["single,wc"] / v1["single,hp"]
		}' "$csv" | tee "$OUT/imagestore.txt"
	exit 0
fi

# pgbench scripts per store: widecol calls the store's functions, heap runs
# the same questions as plain SQL.  Values are looked up first (\gset), as
# an application would have them: a subquery as a function argument would
# keep PostgreSQL from inlining the store's SQL functions.
write_scripts() {
	local s=$1 d=$inst/scripts/$1
	mkdir -p "$d"
	local dev="'cam-' || lpad(:dev::text, 4, '0')"
	local from="timestamptz '2025-01-01 00:00+00' + :day::int * interval '1 day'"
	if [ "$s" = wc ]; then
		cat >"$d/q1.sql" <<-EOF
			\set i random(1, 100000)
			SELECT image_id AS id FROM ids WHERE n = :i \gset
			SELECT * FROM wc.image(:id);
		EOF
		cat >"$d/q2.sql" <<-EOF
			\set dev random(1, 200)
			\set day random(0, $((DAYS - 3)))
			SELECT * FROM wc.device_images($dev, $from, $from + interval '3 days', 100);
		EOF
		cat >"$d/q3.sql" <<-EOF
			\set t random(1, 6)
			\set day random(0, $((DAYS - 7)))
			SELECT * FROM wc.tag_images((ARRAY['crack','rust','corrosion','leak','ok','blur'])[:t], $from, $from + interval '7 days', 100);
		EOF
		cat >"$d/q3b.sql" <<-EOF
			\set day random(0, $((DAYS - 7)))
			SELECT * FROM wc.tag_images_all(ARRAY['leak','crack'], $from, $from + interval '7 days', 100);
		EOF
		cat >"$d/q4.sql" <<-EOF
			\set b random(1, $nbatches)
			SELECT batch_id AS batch FROM batches WHERE n = :b \gset
			SELECT * FROM wc.batch_object_keys(:batch);
		EOF
		cat >"$d/q5.sql" <<-EOF
			\set day random(0, $((DAYS - 7)))
			SELECT * FROM wc.daily_counts(date '2025-01-01' + :day::int, date '2025-01-01' + :day::int + 6, 'device');
		EOF
	else
		cat >"$d/q1.sql" <<-EOF
			\set i random(1, 100000)
			SELECT image_id AS id FROM ids WHERE n = :i \gset
			SELECT * FROM hp.images WHERE image_id = :id;
		EOF
		cat >"$d/q2.sql" <<-EOF
			\set dev random(1, 200)
			\set day random(0, $((DAYS - 3)))
			SELECT * FROM hp.device_daily_images
			 WHERE device_id = $dev AND day BETWEEN date '2025-01-01' + :day::int AND date '2025-01-01' + :day::int + 3
			   AND capture_time >= $from AND capture_time < $from + interval '3 days'
			 ORDER BY capture_time DESC, image_id DESC LIMIT 100;
		EOF
		cat >"$d/q3.sql" <<-EOF
			\set t random(1, 6)
			\set day random(0, $((DAYS - 7)))
			SELECT * FROM hp.images_by_tag
			 WHERE tag = (ARRAY['crack','rust','corrosion','leak','ok','blur'])[:t]
			   AND day BETWEEN date '2025-01-01' + :day::int AND date '2025-01-01' + :day::int + 7
			   AND capture_time >= $from AND capture_time < $from + interval '7 days'
			 ORDER BY capture_time DESC, image_id DESC LIMIT 100;
		EOF
		cat >"$d/q3b.sql" <<-EOF
			\set day random(0, $((DAYS - 7)))
			SELECT * FROM hp.images_by_tag
			 WHERE tag = 'leak' AND tags @> ARRAY['leak','crack']
			   AND day BETWEEN date '2025-01-01' + :day::int AND date '2025-01-01' + :day::int + 7
			   AND capture_time >= $from AND capture_time < $from + interval '7 days'
			 ORDER BY capture_time DESC, image_id DESC LIMIT 100;
		EOF
		cat >"$d/q4.sql" <<-EOF
			\set b random(1, $nbatches)
			SELECT batch_id AS batch FROM batches WHERE n = :b \gset
			SELECT image_id, object_store, object_key FROM hp.batch_images
			 WHERE batch_id = :batch ORDER BY image_id;
		EOF
		cat >"$d/q5.sql" <<-EOF
			\set day random(0, $((DAYS - 7)))
			SELECT day, device_id, count(*) FROM hp.device_daily_images
			 WHERE day BETWEEN date '2025-01-01' + :day::int AND date '2025-01-01' + :day::int + 6
			 GROUP BY 1, 2 ORDER BY 1, 2;
		EOF
	fi
}
write_scripts hp
write_scripts wc

# run_query STORE QUERY -> "qps p50 p99" (milliseconds)
run_query() {
	local s=$1 q=$2 dir=$inst/log/$1-$2
	mkdir -p "$dir"
	(cd "$dir" && "$bin/pgbench" -n -M prepared -c 1 -T "$SECONDS_EACH" -l -h "$inst" -p 5999 \
		-f "$inst/scripts/$s/$q.sql" postgres >"$dir/out.txt" 2>&1) || { cat "$dir/out.txt"; wc_die "pgbench failed"; }
	cat "$dir"/pgbench_log.* | awk '{ print $3 / 1000.0 }' | sort -n | awk -v s="$SECONDS_EACH" '
		{ v[NR] = $1 } END { printf "%.1f %.3f %.3f\n", NR / s, v[int(NR * 0.50) + 1], v[int(NR * 0.99) + 1] }'
}

wc_section "Queries (pgbench, 1 client, $SECONDS_EACH s each, prepared)"
printf '%-6s %-6s %10s %10s %10s\n' query store qps p50_ms p99_ms
for q in q1 q2 q3 q3b q4 q5; do
	for s in hp wc; do
		read -r qps p50 p99 < <(run_query "$s" "$q")
		echo "$q,$s,$p50,$p99" >>"$csv"
		printf '%-6s %-6s %10s %10s %10s\n' "$q" "$s" "$qps" "$p50" "$p99"
	done
done

wc_section "Ratios widecol / heap"
awk -F, 'NR > 1 { k = $1 "," $2; n[k]++; s1[k] += $3; s2[k] += $4; v1[k] = s1[k] / n[k]; v2[k] = s2[k] / n[k] }
	END {
		printf "ingest time %.2fx, WAL %.2fx; bytes on disk %.2fx\n",
			v1["ingest,wc"] / v1["ingest,hp"], v2["ingest,wc"] / v2["ingest,hp"], v1["bytes,wc"] / v1["bytes,hp"]
		printf "COPY time: store / three plain widecol tables %.2fx (target <= 1.5), store / heap + triggers %.2fx (target < 1)\n",
			v1["ingest,wc"] / v1["ingest,hw"], v1["ingest,wc"] / v1["ingest,hp"]
		printf "single-image transactions/s: store / hand-written procedure %.2fx (target >= 0.8), store / heap + triggers %.2fx\n",
			v1["single,wc"] / v1["single,hw"], v1["single,wc"] / v1["single,hp"]
		split("q1 q2 q3 q3b q4 q5", qs, " ")
		for (i = 1; i <= 6; i++)
			printf "%-4s p50 %.2fx  p99 %.2fx\n", qs[i], v1[qs[i] ",wc"] / v1[qs[i] ",hp"], v2[qs[i] ",wc"] / v2[qs[i] ",hp"]
	}' "$csv" | tee "$OUT/imagestore.txt"

python3 - "$csv" "$OUT/imagestore.png" <<'PY' || wc_warn "no plot (python3-matplotlib missing?)"
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["what"].startswith("q")]
qs = ["q1", "q2", "q3", "q3b", "q4", "q5"]
labels = ["(1) image\nby id", "(2) device,\n3 days", "(3) tag,\n1 week", "(3) two tags,\n1 week",
          "(4) batch\nkeys", "(5) counts per\ndevice/day"]
fig, ax = plt.subplots(figsize=(10, 4))
w = 0.2
for i, (s, name) in enumerate([("hp", "heap + triggers"), ("wc", "widecol image store")]):
    for j, (col, p) in enumerate([("value1", "p50"), ("value2", "p99")]):
        vals = [float(next(r[col] for r in rows if r["what"] == q and r["store"] == s)) for q in qs]
        ax.bar([x + (i * 2 + j - 1.5) * w for x in range(len(qs))], vals, w, label=f"{name} {p}")
ax.set_xticks(range(len(qs)))
ax.set_xticklabels(labels)
ax.set_yscale("log")
ax.set_ylabel("latency (ms, log scale)")
ax.set_title("Image-platform queries, 1 client (lower is better)")
ax.legend(fontsize=8)
plt.tight_layout()
plt.savefig(sys.argv[2], dpi=110)
print("plot:", sys.argv[2])
PY
