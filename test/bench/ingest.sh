#!/usr/bin/env bash
# Ingest benchmark: COPY of the same generated image-metadata rows into a
# widecol table and into a heap table with the equivalent btree primary key,
# in one run, on one throwaway instance.
#
#   bash test/bench/ingest.sh [--rows N] [--chunks K] [--out DIR] [--ingest-zstd-level L]
#                             [--ingest-key-codec lz4|zstd]
#
# Rows (design brief's device_daily_images, keys arriving in capture-time
# order) are generated once into CSV chunks; chunk i is loaded into heap, then
# into widecol, so both see the same cache and checkpoint conditions.  Prints
# rows/s per chunk (does ingest stay flat as the table grows?), totals, bytes
# on disk and WAL bytes, as ratios widecol/heap, then the bytes of widecol's
# runs after a major compaction (as the workers would leave them); writes results.csv and
# ingest.png into --out (default test/bench/results).
#
# --ingest-zstd-level sets widecol.ingest_zstd_level for the COPYs (0 = lz4,
# as runs were written before run format 5; default: the setting's default),
# --ingest-key-codec widecol.ingest_key_codec (zstd: key pages zstd too, as
# runs were written before it; default: the setting's default, lz4).
#
# As root it installs what it needs (python3-matplotlib for the plot), builds
# and installs widecol and runs as user postgres; as another user it uses the
# widecol already installed.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROWS=5000000 CHUNKS=10 OUT="$ROOT/test/bench/results" LEVEL="" KEYCODEC=""
bench_main bench/ingest.sh --rows=ROWS --chunks=CHUNKS --out=OUT --ingest-zstd-level=LEVEL \
	--ingest-key-codec=KEYCODEC -- "$@"
bench_instance
if [ -n "$LEVEL" ]; then
	"${PSQL[@]}" -c "ALTER SYSTEM SET widecol.ingest_zstd_level = $LEVEL" -c "SELECT pg_reload_conf()" >/dev/null
fi
if [ -n "$KEYCODEC" ]; then
	"${PSQL[@]}" -c "ALTER SYSTEM SET widecol.ingest_key_codec = $KEYCODEC" -c "SELECT pg_reload_conf()" >/dev/null
fi
bench_generate "$ROWS" "$CHUNKS"
bench_tables

csv="$OUT/ingest.csv"
echo "chunk,rows_before,rows,heap_s,widecol_s,heap_wal,widecol_wal" >"$csv"
wc_section "Loading (rows/s per chunk; ratio = widecol / heap)"
printf '%6s %12s %12s %12s %7s\n' chunk rows_before heap_rows/s wc_rows/s ratio
before=0
i=0
for f in "$inst"/chunk.*; do
	n=$(wc -l <"$f")
	read -r hs hw < <(bench_copy_chunk heap_images "$f" | tr '|' ' ')
	read -r ws ww < <(bench_copy_chunk wc_images "$f" | tr '|' ' ')
	echo "$i,$before,$n,$hs,$ws,$hw,$ww" >>"$csv"
	awk -v i="$i" -v b="$before" -v n="$n" -v hs="$hs" -v ws="$ws" 'BEGIN {
		printf "%6d %12d %12.0f %12.0f %7.2f\n", i, b, n / hs, n / ws, hs / ws }'
	before=$((before + n))
	i=$((i + 1))
	rm -f "$f"
done

wc_section "Totals"
"${PSQL[@]}" -c "CHECKPOINT" >/dev/null
hsize=$("${PSQL[@]}" -At -c "SELECT pg_total_relation_size('heap_images')")
wsize=$("${PSQL[@]}" -At -c "SELECT pg_total_relation_size('wc_images')")
hcount=$("${PSQL[@]}" -At -c "SELECT count(*) FROM heap_images")
wcount=$("${PSQL[@]}" -At -c "SELECT count(*) FROM wc_images")
nruns=$("${PSQL[@]}" -At -c "SELECT count(*) FROM widecol.runs('wc_images')")
[ "$hcount" = "$wcount" ] || wc_die "row counts differ: heap $hcount, widecol $wcount"
awk -F, -v hsize="$hsize" -v wsize="$wsize" -v rows="$hcount" -v runs="$nruns" 'NR > 1 {
	hs += $4; ws += $5; hw += $6; ww += $7 } END {
	printf "%-22s %14s %14s %8s\n", "", "heap+btree", "widecol", "ratio"
	printf "%-22s %14.0f %14.0f %8.2f\n", "rows/s", rows / hs, rows / ws, hs / ws
	printf "%-22s %14.1f %14.1f %8.2f\n", "load seconds", hs, ws, ws / hs
	printf "%-22s %14.1f %14.1f %8.2f\n", "bytes on disk (MB)", hsize / 1048576, wsize / 1048576, wsize / hsize
	printf "%-22s %14.1f %14.1f %8.2f\n", "WAL written (MB)", hw / 1048576, ww / 1048576, ww / hw
	printf "%-22s %14.1f %14.1f\n", "bytes per row", hsize / rows, wsize / rows
	printf "rows: %d, widecol runs: %d\n", rows, runs
}' "$csv" | tee "$OUT/ingest.txt"

# What production keeps once the workers have compacted: one major
# compaction (zstd level 1 by default), then the pages of the live runs
# (the file keeps the input runs' pages as free space for reuse).
"${PSQL[@]}" -c "SET widecol.compaction_throughput = 0" -c "SELECT widecol.compact('wc_images', true)" >/dev/null
"${PSQL[@]}" -At -c "SELECT run_pages FROM widecol.page_usage('wc_images')" |
	awk -v hsize="$hsize" -v rows="$hcount" '{
	printf "%-22s %14.1f %14.1f %8.2f\n", "run bytes compacted", hsize / 1048576, $1 * 8192 / 1048576, $1 * 8192 / hsize
	printf "%-22s %14.1f %14.1f\n", "  per row", hsize / rows, $1 * 8192 / rows }' | tee -a "$OUT/ingest.txt"

python3 - "$csv" "$OUT/ingest.png" <<'EOF' || wc_warn "no plot (python3-matplotlib missing?)"
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
x = [(int(r["rows_before"]) + int(r["rows"])) / 1e6 for r in rows]
h = [int(r["rows"]) / float(r["heap_s"]) / 1e3 for r in rows]
w = [int(r["rows"]) / float(r["widecol_s"]) / 1e3 for r in rows]
plt.figure(figsize=(7, 4))
plt.plot(x, h, "o-", label="heap + btree primary key")
plt.plot(x, w, "s-", label="widecol")
plt.xlabel("table size after chunk (million rows)")
plt.ylabel("COPY throughput (thousand rows/s)")
plt.title("Ingest of image metadata: COPY per chunk")
plt.ylim(bottom=0)
plt.grid(alpha=0.3)
plt.legend()
plt.tight_layout()
plt.savefig(sys.argv[2], dpi=110)
print("plot:", sys.argv[2])
EOF
