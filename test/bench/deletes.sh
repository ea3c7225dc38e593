#!/usr/bin/env bash
# Delete benchmark, widecol against heap + btree on the same rows, in one run:
# (a) delete one partition of --partition-rows rows (compacted; timed in a
#     session that has run a query and a DELETE, as a pooled connection has);
# (b) a retention delete of --retention-rows rows over many partitions, by
#     day_bucket (every device's oldest days);
# (c) --singles single-row deletes by full key in one partition, timed per
#     thousand (is the per-row time flat from the first to the last?).
# Reports seconds, rows/s, WAL bytes and widecol/heap ratios.
#
#   bash test/bench/deletes.sh [--partition-rows N] [--retention-rows N] [--singles N] [--out DIR]
#
# Writes deletes.txt, deletes.csv and deletes.png (per-thousand times of (c)) into --out.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PART=100000 RETENTION=1000000 SINGLES=10000 OUT="$ROOT/test/bench/results"
bench_main bench/deletes.sh --partition-rows=PART --retention-rows=RETENTION --singles=SINGLES --out=OUT -- "$@"
bench_instance
"${PSQL[@]}" -c "CREATE EXTENSION widecol"

# Run SQL after WARM-UP SQL in the same session (as a pooled connection
# would have run it: catalogs and caches loaded); print "seconds wal_bytes",
# timed in the server (client round trips and scheduling on a busy machine
# are not the statement's).  With REPEATS > 1 the statement first runs
# REPEATS - 1 times in transactions that roll back, and the median time
# is printed (one run on a shared 2-core machine is noise at a millisecond).
timed() {
	local sql=$1 warm=${2:-} repeats=${3:-1} block
	block="DO \$\$
		DECLARE l0 pg_lsn := pg_current_wal_insert_lsn(); t0 timestamptz := clock_timestamp();
		BEGIN
		  EXECUTE \$q\$ $sql \$q\$;
		  RAISE NOTICE 'timed: % %', round(extract(epoch FROM clock_timestamp() - t0)::numeric, 5),
		    pg_wal_lsn_diff(pg_current_wal_insert_lsn(), l0);
		END \$\$;"
	{
		echo "$warm"
		for ((i = 1; i < repeats; i++)); do echo "BEGIN;"; echo "$block"; echo "ROLLBACK;"; done
		echo "$block"
	} | "${PSQL[@]}" -At 2>&1 | sed -n 's/.*timed: //p' |
		sort -n | awk '{ t[NR] = $1; w = $2 } END { print t[int((NR + 1) / 2)], w }'
}

csv=$OUT/deletes.csv
echo "case,table,rows,seconds,wal_bytes" >"$csv"

for t in heap wc; do
	if [ $t = heap ]; then
		using="" ; pk=", PRIMARY KEY (device_id, day_bucket, capture_time)"
	else
		using="USING widecol WITH (widecol.partition_key = 'device_id, day_bucket', widecol.clustering_key = 'capture_time')"; pk=""
	fi
	"${PSQL[@]}" -c "CREATE TABLE ${t}_images (device_id text, day_bucket date, capture_time timestamptz, object_key text $pk) $using"
done

wc_section "(a) one partition of $PART rows"
for t in heap wc; do
	"${PSQL[@]}" -c "INSERT INTO ${t}_images SELECT 'cam-big', date '2025-01-01', timestamptz '2025-01-01' + g * interval '1 ms', 'k/' || g FROM generate_series(1, $PART) g"
	"${PSQL[@]}" -c "INSERT INTO ${t}_images SELECT 'cam-' || d, date '2025-01-01', timestamptz '2025-01-01' + g * interval '1 s', 'k/' || g FROM generate_series(1, 50) d, generate_series(1, 1000) g"
	[ $t = heap ] && "${PSQL[@]}" -c "VACUUM ANALYZE heap_images" || "${PSQL[@]}" -c "SELECT widecol.compact('wc_images', true)" -c "ANALYZE wc_images" >/dev/null
	read -r secs wal < <(timed "DELETE FROM ${t}_images WHERE device_id = 'cam-big' AND day_bucket = '2025-01-01'" \
		"SELECT count(*) FROM ${t}_images WHERE device_id = 'cam-1' AND day_bucket = '2025-01-01' \\g /dev/null
		 DELETE FROM ${t}_images WHERE device_id = 'nobody' AND day_bucket = '2025-01-01';" 9)
	echo "partition,$t,$PART,$secs,$wal" >>"$csv"
	printf '  %-5s %8ss  WAL %s bytes\n' "$t" "$secs" "$wal"
done

wc_section "(b) retention: $RETENTION rows by day_bucket"
days=10		# 100 rows per device and day; the 3 oldest days go
devices=$(((RETENTION + 299) / 300))
for t in heap wc; do
	"${PSQL[@]}" -c "TRUNCATE ${t}_images"
	"${PSQL[@]}" -c "INSERT INTO ${t}_images SELECT 'cam-' || d, date '2025-01-01' + day, timestamptz '2025-01-01' + day * interval '1 day' + g * interval '1 s', 'k/' || g FROM generate_series(1, $devices) d, generate_series(0, $((days - 1))) day, generate_series(1, 100) g"
	[ $t = heap ] && "${PSQL[@]}" -c "VACUUM ANALYZE heap_images" || "${PSQL[@]}" -c "SELECT widecol.compact('wc_images', true)" -c "ANALYZE wc_images" >/dev/null
	n=$("${PSQL[@]}" -At -c "SELECT count(*) FROM ${t}_images WHERE day_bucket < date '2025-01-04'")
	read -r secs wal < <(timed "DELETE FROM ${t}_images WHERE day_bucket < date '2025-01-04'")
	echo "retention,$t,$n,$secs,$wal" >>"$csv"
	printf '  %-5s %s rows %8ss  WAL %s bytes\n' "$t" "$n" "$secs" "$wal"
done

wc_section "(c) $SINGLES single-row deletes in one partition"
for t in heap wc; do
	"${PSQL[@]}" -c "TRUNCATE ${t}_images"
	"${PSQL[@]}" -c "INSERT INTO ${t}_images SELECT 'cam-1', date '2025-01-01', timestamptz '2025-01-01' + g * interval '1 s', 'k/' || g FROM generate_series(1, $SINGLES) g"
	[ $t = heap ] && "${PSQL[@]}" -c "VACUUM ANALYZE heap_images" || "${PSQL[@]}" -c "SELECT widecol.compact('wc_images', true)" >/dev/null
	"${PSQL[@]}" -c "
		DO \$\$
		DECLARE t0 timestamptz := clock_timestamp();
		BEGIN
		  FOR i IN 1..$SINGLES LOOP
		    DELETE FROM ${t}_images WHERE device_id = 'cam-1' AND day_bucket = '2025-01-01'
		       AND capture_time = timestamptz '2025-01-01' + i * interval '1 s';
		    IF i % 1000 = 0 THEN
		      RAISE NOTICE 'k=% ms=%', i / 1000, round(extract(epoch FROM clock_timestamp() - t0)::numeric * 1000, 1);
		      t0 := clock_timestamp();
		    END IF;
		  END LOOP;
		END \$\$;" 2>&1 | sed -n 's/.*k=\([0-9]*\) ms=\([0-9.]*\).*/\1 \2/p' |
		while read -r k ms; do echo "singles_k$k,$t,1000,$(python3 -c "print($ms/1000)"),0" >>"$csv"; printf '  %-5s thousand %2s: %s ms\n' "$t" "$k" "$ms"; done
done

python3 - "$csv" "$OUT/deletes.txt" "$OUT/deletes.png" <<'EOF' || wc_warn "no plot (python3-matplotlib missing?)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
get = lambda case, t: next((r for r in rows if r["case"] == case and r["table"] == t), None)
with open(sys.argv[2], "w") as out:
    for case in ("partition", "retention"):
        h, w = get(case, "heap"), get(case, "wc")
        if h and w:
            hs, ws = float(h["seconds"]), max(float(w["seconds"]), 1e-5)
            out.write("%-10s %8s rows: heap %9.5f s (WAL %d), widecol %9.5f s (WAL %d): widecol/heap time %.4f (%.1fx faster)\n" % (
                case, w["rows"], hs, int(h["wal_bytes"]), ws, int(w["wal_bytes"]), ws / max(hs, 1e-9), hs / ws))
    for t in ("heap", "wc"):
        ks = [r for r in rows if r["case"].startswith("singles_k") and r["table"] == t]
        if ks:
            # seconds per thousand deletes = milliseconds per delete
            first, last = float(ks[0]["seconds"]) * 1000, float(ks[-1]["seconds"]) * 1000
            out.write("singles    %s: first thousand %.1f us/row, last thousand %.1f us/row (last/first %.2f)\n" % (
                t, first, last, last / max(first, 1e-9)))
print(open(sys.argv[2]).read())
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(7, 4))
for t, label in (("heap", "heap + btree"), ("wc", "widecol")):
    ks = [r for r in rows if r["case"].startswith("singles_k") and r["table"] == t]
    ax.plot([int(r["case"][9:]) for r in ks], [float(r["seconds"]) * 1e3 for r in ks], "-o", label=label)
ax.set_xlabel("thousand deletes"); ax.set_ylabel("us per single-row delete"); ax.legend()
ax.set_title("single-row deletes in one partition")
fig.tight_layout(); fig.savefig(sys.argv[3], dpi=110)
print("plot:", sys.argv[3])
EOF
