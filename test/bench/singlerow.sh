#!/usr/bin/env bash
# Single-row autocommit INSERTs, widecol against heap + btree, in one run:
# the design brief's device_daily_images rows, both tables preloaded with
# --preload rows, then pgbench (prepared, one INSERT of a new image per
# transaction, commits flushed) with 1 and with 4 clients, S seconds each,
# heap and widecol alternating, --rounds times.  Workers flush and compact
# as in production (widecol.max_workers = 2).  Reports transactions/s,
# p50/p99 latency from pgbench's per-transaction log, WAL bytes per row and
# the widecol/heap ratio of each (issue 18's target: rows/s >= 1.0x with 1
# and 4 clients).
#
#   bash test/bench/singlerow.sh [--preload N] [--seconds S] [--rounds R] [--out DIR]
#
# Writes singlerow.txt, singlerow.csv and singlerow.png into --out.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PRELOAD=1000000 SECONDS_EACH=10 ROUNDS=2 OUT="$ROOT/test/bench/results"
bench_main bench/singlerow.sh --preload=PRELOAD --seconds=SECONDS_EACH --rounds=ROUNDS --out=OUT -- "$@"
bench_instance
"${PSQL[@]}" -c "ALTER SYSTEM SET widecol.max_workers = 2" -c "ALTER SYSTEM SET widecol.naptime = '1s'" \
	-c "SELECT pg_reload_conf()" >/dev/null
bench_tables

wc_section "Preloading $PRELOAD rows into both tables"
if [ "$PRELOAD" -gt 0 ]; then
	bench_generate "$PRELOAD" $(((PRELOAD + 499999) / 500000))
	for f in "$inst"/chunk.*; do
		"${PSQL[@]}" -c "COPY heap_images FROM '$f' WITH (FORMAT csv)" -c "COPY wc_images FROM '$f' WITH (FORMAT csv)"
		printf '.'
	done
	echo
	rm -f "$inst"/chunk.*
fi
"${PSQL[@]}" -c "VACUUM ANALYZE" -c "SELECT widecol.compact('wc_images', true)" -c CHECKPOINT >/dev/null

# one new image per transaction: a random device, day and time, a new id
mkdir -p "$inst/single"
for t in heap_images wc_images; do
	cat >"$inst/single/$t.sql" <<-EOF
		\set dev random(1, 200)
		\set sec random(0, 30 * 86400 - 1)
		INSERT INTO $t VALUES ('cam-' || lpad(:dev::text, 4, '0'),
		    widecol.day_bucket(timestamptz '2025-01-01 00:00+00' + :sec * interval '1 second'),
		    timestamptz '2025-01-01 00:00+00' + :sec * interval '1 second', gen_random_uuid(),
		    's3://bench', 'raw/' || :sec || '.jpg', 1920, 1080, md5(:sec::text));
	EOF
done

# run TABLE CLIENTS -> "tps p50_ms p99_ms wal_bytes_per_row"
run() {
	local t=$1 c=$2 dir l0 n
	dir=$(mktemp -d "$inst/run.XXXXXX")
	l0=$("${PSQL[@]}" -At -c "SELECT pg_current_wal_insert_lsn()")
	(cd "$dir" && "$bin/pgbench" -n -M prepared -c "$c" -j "$c" -T "$SECONDS_EACH" -l -h "$inst" -p 5999 \
		-f "$inst/single/$t.sql" postgres >"$dir/out.txt" 2>&1) || { cat "$dir/out.txt"; wc_die "pgbench failed"; }
	n=$(cat "$dir"/pgbench_log.* | wc -l)
	wal=$("${PSQL[@]}" -At -c "SELECT round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$l0') / greatest($n, 1))")
	cat "$dir"/pgbench_log.* | awk '{ print $3 / 1000.0 }' | sort -n | awk -v s="$SECONDS_EACH" -v w="$wal" '
		{ v[NR] = $1 }
		END { printf "%.1f %.3f %.3f %s\n", NR / s, v[int(NR * 0.50) + 1], v[int(NR * 0.99) + 1], w }'
	rm -rf "$dir"
}

csv=$OUT/singlerow.csv
echo "round,clients,table,tps,p50_ms,p99_ms,wal_bytes_per_row" >"$csv"
wc_section "Single-row INSERTs (pgbench, prepared, $SECONDS_EACH s per run, $ROUNDS rounds)"
printf '%-6s %-8s %-12s %10s %9s %9s %10s\n' round clients table tps p50_ms p99_ms wal/row
for ((r = 1; r <= ROUNDS; r++)); do
	for c in 1 4; do
		for t in heap_images wc_images; do
			read -r tps p50 p99 wal < <(run "$t" "$c")
			echo "$r,$c,$t,$tps,$p50,$p99,$wal" >>"$csv"
			printf '%-6s %-8s %-12s %10s %9s %9s %10s\n' "$r" "$c" "$t" "$tps" "$p50" "$p99" "$wal"
		done
	done
done
"${PSQL[@]}" -At -c "SELECT 'widecol runs after the runs: ' || count(*) FROM widecol.runs('wc_images')"

wc_section "Ratios (widecol / heap + btree, mean over rounds)"
awk -F, 'NR > 1 { k = $2 "," $3; tps[k] += $4; p50[k] += $5; p99[k] += $6; wal[k] += $7; n[k]++ }
	END {
		for (c = 1; c <= 4; c += 3) {
			h = c ",heap_images"; w = c ",wc_images"
			printf "%d client(s): rows/s %.2fx (target >= 1.0), p50 %.2fx, p99 %.2fx, WAL per row %.2fx\n", c,
				(tps[w] / n[w]) / (tps[h] / n[h]), (p50[w] / n[w]) / (p50[h] / n[h]),
				(p99[w] / n[w]) / (p99[h] / n[h]), (wal[w] / n[w]) / (wal[h] / n[h])
		}
	}' "$csv" | tee "$OUT/singlerow.txt"
python3 - "$csv" "$OUT/singlerow.png" <<'PY' || wc_warn "no plot (python3-matplotlib missing?)"
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
for ax, c in zip(axes, ("1", "4")):
    for i, (t, name, color) in enumerate((("heap_images", "heap + btree", "grey"), ("wc_images", "widecol", "tab:orange"))):
        v = [float(r["tps"]) for r in rows if r["clients"] == c and r["table"] == t]
        ax.bar([x * 3 + i for x in range(len(v))], v, color=color, label=name)
    ax.set_title(f"{c} client(s): transactions/s per round")
    ax.set_xticks([x * 3 + 0.5 for x in range(len(v))], [f"round {x + 1}" for x in range(len(v))])
    ax.legend()
plt.tight_layout()
plt.savefig(sys.argv[2], dpi=110)
print("plot:", sys.argv[2])
PY
