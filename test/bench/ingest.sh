#!/usr/bin/env bash
# Ingest benchmark: COPY of the same generated image-metadata rows into a
# widecol table, into a heap table with the equivalent btree primary key and
# into a heap table with no index at all, in one run, on one throwaway
# instance.
#
#   bash test/bench/ingest.sh [--rows N] [--chunks K] [--out DIR] [--ingest-zstd-level L]
#                             [--ingest-key-codec lz4|zstd]
#
# Rows (design brief's device_daily_images, keys arriving in capture-time
# order) are generated once into CSV chunks; chunk i is loaded into heap +
# btree, then heap with no index, then widecol, so all see the same cache and
# checkpoint conditions.  Prints rows/s per chunk (does ingest stay flat as
# the table grows?  the last chunk's rate against the first's), totals, bytes
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

ROWS=10000000 CHUNKS=10 OUT="$ROOT/test/bench/results" LEVEL="" KEYCODEC=""
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
# the floor: the same rows appended to a heap with no index
"${PSQL[@]}" -c "CREATE TABLE heapn_images (LIKE heap_images)" >/dev/null

csv="$OUT/ingest.csv"
echo "chunk,rows_before,rows,heap_s,widecol_s,heap_wal,widecol_wal,heapn_s,heapn_wal" >"$csv"
wc_section "Loading (rows/s per chunk; ratios = widecol / heap + btree, widecol / heap with no index)"
printf '%6s %12s %12s %12s %12s %7s %7s\n' chunk rows_before heap_rows/s heapn_rows/s wc_rows/s ratio ratio_n
before=0
i=0
for f in "$inst"/chunk.*; do
	n=$(wc -l <"$f")
	read -r hs hw < <(bench_copy_chunk heap_images "$f" | tr '|' ' ')
	read -r ns nw < <(bench_copy_chunk heapn_images "$f" | tr '|' ' ')
	read -r ws ww < <(bench_copy_chunk wc_images "$f" | tr '|' ' ')
	echo "$i,$before,$n,$hs,$ws,$hw,$ww,$ns,$nw" >>"$csv"
	awk -v i="$i" -v b="$before" -v n="$n" -v hs="$hs" -v ns="$ns" -v ws="$ws" 'BEGIN {
		printf "%6d %12d %12.0f %12.0f %12.0f %7.2f %7.2f\n", i, b, n / hs, n / ns, n / ws, hs / ws, ns / ws }'
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
nsize=$("${PSQL[@]}" -At -c "SELECT pg_total_relation_size('heapn_images')")
awk -F, -v hsize="$hsize" -v wsize="$wsize" -v nsize="$nsize" -v rows="$hcount" -v runs="$nruns" 'NR > 1 {
	hs += $4; ws += $5; hw += $6; ww += $7; ns += $8; nw += $9
	if (NR == 2) { first = $3 / $5; firsth = $3 / $4 }
	last = $3 / $5; lasth = $3 / $4; nlast = $3 } END {
	printf "%-30s %12s %12s %12s %8s %8s\n", "", "heap+btree", "heap noidx", "widecol", "wc/heap", "wc/noidx"
	printf "%-30s %12.0f %12.0f %12.0f %8.2f %8.2f\n", "rows/s", rows / hs, rows / ns, rows / ws, hs / ws, ns / ws
	printf "%-30s %12.1f %12.1f %12.1f %8.2f %8.2f\n", "load seconds", hs, ns, ws, ws / hs, ws / ns
	printf "%-30s %12.1f %12.1f %12.1f %8.2f %8.2f\n", "bytes on disk (MB)", hsize / 1048576, nsize / 1048576, wsize / 1048576, wsize / hsize, wsize / nsize
	printf "%-30s %12.1f %12.1f %12.1f %8.2f %8.2f\n", "WAL written (MB)", hw / 1048576, nw / 1048576, ww / 1048576, ww / hw, ww / nw
	printf "%-30s %12.1f %12.1f %12.1f\n", "bytes per row", hsize / rows, nsize / rows, wsize / rows
	printf "%-30s %12.0f %12s %12.0f %8.2f\n", "last chunk rows/s / first", lasth, "", last, last / first
	printf "rows: %d, widecol runs: %d\n", rows, runs
	printf "targets (issue 18): rows/s >= 2.0x heap + btree: %s; >= 1.0x heap with no index: %s; last chunk >= 0.9x the first: %s\n",
		(hs / ws >= 2 ? "met" : "MISSED"), (ns / ws >= 1 ? "met" : "MISSED"), (last / first >= 0.9 ? "met" : "MISSED")
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
n = [int(r["rows"]) / float(r["heapn_s"]) / 1e3 for r in rows]
plt.figure(figsize=(7, 4))
plt.plot(x, h, "o-", label="heap + btree primary key")
plt.plot(x, n, "^--", label="heap, no index")
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
