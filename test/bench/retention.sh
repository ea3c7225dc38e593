#!/usr/bin/env bash
# Retention benchmark: DAYS day-windows of generated image rows, then the
# oldest EXPIRE days expire.  widecol: TTL + time-window compaction (runs
# whose rows have all expired are dropped whole, unread).  heap + btree:
# DELETE ... WHERE day_bucket < x, then VACUUM.  Same rows, one instance, one
# run; reports time, WAL bytes and rows touched by the expiry, and ratios.
#
#   bash test/bench/retention.sh [--rows-per-day N] [--days D] [--expire E] [--out DIR]
#
# widecol rows are written with the write clock moved back (test-only
# widecol.debug_clock_offset) so that day d is written d days after day 0,
# with a TTL that leaves exactly the first E days expired at the end.
# Writes retention.txt, retention.csv and retention.png into --out.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PER_DAY=100000 DAYS=30 EXPIRE=7 OUT="$ROOT/test/bench/results"
bench_main bench/retention.sh --rows-per-day=PER_DAY --days=DAYS --expire=EXPIRE --out=OUT -- "$@"
bench_instance
# the expiry is measured when we ask for it, not when a worker gets to it
"${PSQL[@]}" -c "ALTER SYSTEM SET widecol.max_workers = 0" -c "SELECT pg_reload_conf()" >/dev/null

# Day d (0-based) is written DAYS-1-d days before "now"; a TTL of
# DAYS - EXPIRE - 0.5 days leaves days 0 .. EXPIRE-1 expired at the end.
TTL_HOURS=$(((DAYS - EXPIRE) * 24 - 12))
bench_tables
"${PSQL[@]}" -c "ALTER TABLE wc_images SET (widecol.default_ttl = '$TTL_HOURS hours',
	widecol.compaction = 'time_window', widecol.compaction_window = '1 day')"

wc_section "Loading $DAYS days x $PER_DAY rows into both tables"
python3 "$ROOT/test/gen/image_rows.py" --rows $((PER_DAY * DAYS)) --devices 200 --days "$DAYS" \
	--seed 11 --table images --quiet >"$inst/all.csv"
t0=$(wc_now)
for ((d = 0; d < DAYS; d++)); do
	day=$(date -u -d "2025-01-01 + $d days" +%F)
	grep ",$day," "$inst/all.csv" >"$inst/day.csv" || true
	back=$((DAYS - 1 - d))
	"${PSQL[@]}" -c "COPY heap_images FROM '$inst/day.csv' WITH (FORMAT csv)" \
		-c "SET widecol.debug_clock_offset = '-${back}d'" \
		-c "COPY wc_images FROM '$inst/day.csv' WITH (FORMAT csv)"
	printf '\rday %d/%d loaded (%ds)' $((d + 1)) "$DAYS" $(($(wc_now) - t0))
done
echo
rm -f "$inst/all.csv" "$inst/day.csv"
# settle (not measured): one run per day window, statistics, a checkpoint
# (gc_grace as default: the expired days are not purged yet); a second,
# minor compaction reclaims the pages of the runs the first one replaced
"${PSQL[@]}" -c "SELECT widecol.compact('wc_images', true)" >/dev/null
"${PSQL[@]}" -c "SELECT widecol.compact('wc_images')" >/dev/null
"${PSQL[@]}" -c "VACUUM ANALYZE heap_images" -c "ANALYZE wc_images" -c CHECKPOINT
cutoff=$(date -u -d "2025-01-01 + $EXPIRE days" +%F)
"${PSQL[@]}" -At -c "SELECT 'before: widecol ' || (SELECT count(*) FROM wc_images) || ' live rows in ' ||
	(SELECT count(*) FROM widecol.runs('wc_images')) || ' runs; heap ' || (SELECT count(*) FROM heap_images) ||
	' rows, ' || (SELECT count(*) FROM heap_images WHERE day_bucket < '$cutoff') || ' of them before $cutoff'"

# measure SQL: "ms wal_bytes" of the statements, run in one session
measure() {
	"${PSQL[@]}" -At <<SQL
SELECT pg_current_wal_insert_lsn() AS l0 \gset
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
$1
SELECT round((extract(epoch FROM clock_timestamp()) - :t0) * 1000, 1) || ' ' ||
       pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'l0');
SQL
}

wc_section "Expiring the oldest $EXPIRE days"
# the expiry itself, then the reclaiming of the dropped runs' pages for
# reuse (the next flush does it once no snapshot can read them), as heap's
# VACUUM is counted too
read -r drop_ms drop_wal < <(measure "SET widecol.gc_grace = 0;
SELECT widecol.compact('wc_images') \\g /dev/null" | tail -1)
read -r recl_ms recl_wal < <(measure "SELECT widecol.flush('wc_images') \\g /dev/null" | tail -1)
wc_ms=$(awk -v a="$drop_ms" -v b="$recl_ms" 'BEGIN { printf "%.1f", a + b }')
wc_wal=$((drop_wal + recl_wal))
read -r wc_rows wc_dropped < <("${PSQL[@]}" -At -F' ' -c "SELECT coalesce(sum(rows_in), 0), coalesce(sum(runs_dropped_whole), 0)
	FROM widecol.compactions WHERE \"table\" = 'wc_images'::regclass AND kind = 'expired_runs'")
read -r heap_ms heap_wal < <(measure "DELETE FROM heap_images WHERE day_bucket < '$cutoff';
VACUUM heap_images;" | tail -1)
heap_rows=$("${PSQL[@]}" -At -c "SELECT n_tup_del FROM pg_stat_user_tables WHERE relname = 'heap_images'")

# both tables must answer the same afterwards
same=$("${PSQL[@]}" -At -c "SELECT (SELECT count(*) FROM wc_images) = (SELECT count(*) FROM heap_images)
	AND NOT EXISTS (SELECT device_id, day_bucket, count(*) FROM wc_images GROUP BY 1, 2
	                EXCEPT SELECT device_id, day_bucket, count(*) FROM heap_images GROUP BY 1, 2)")
[ "$same" = t ] || wc_die "widecol and heap disagree after the expiry"

csv=$OUT/retention.csv
{
	echo "table,ms,wal_bytes,rows_touched,runs_dropped"
	echo "widecol,$wc_ms,$wc_wal,$wc_rows,$wc_dropped"
	echo "widecol_drop_only,$drop_ms,$drop_wal,$wc_rows,$wc_dropped"
	echo "heap,$heap_ms,$heap_wal,$heap_rows,"
} >"$csv"
{
	printf 'retention: %d days x %d rows, oldest %d days expired; both tables hold the same rows afterwards\n' \
		"$DAYS" "$PER_DAY" "$EXPIRE"
	printf '%-8s %12s %14s %14s\n' table ms wal_bytes rows_touched
	printf '%-8s %12s %14s %14s  (%s runs dropped whole, unread; drop %s ms / %s bytes, page reclaim %s ms / %s bytes)\n' \
		widecol "$wc_ms" "$wc_wal" "$wc_rows" "$wc_dropped" "$drop_ms" "$drop_wal" "$recl_ms" "$recl_wal"
	printf '%-8s %12s %14s %14s\n' heap "$heap_ms" "$heap_wal" "$heap_rows"
	awk -v a="$heap_ms" -v b="$wc_ms" -v c="$heap_wal" -v d="$wc_wal" -v e="$drop_ms" -v f="$drop_wal" 'BEGIN {
		printf "heap / widecol: time %.0fx, WAL %.0fx (the drop alone: time %.0fx, WAL %.0fx)\n",
			a / (b > 0 ? b : 0.001), c / (d > 0 ? d : 1), a / (e > 0 ? e : 0.001), c / (f > 0 ? f : 1) }'
} | tee "$OUT/retention.txt"

python3 - "$csv" "$OUT/retention.png" <<'PY' || wc_warn "no plot (python3-matplotlib missing?)"
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = {r["table"]: r for r in csv.DictReader(open(sys.argv[1]))}
fig, axes = plt.subplots(1, 2, figsize=(8, 3.5))
for ax, col, label in [(axes[0], "ms", "time (ms)"), (axes[1], "wal_bytes", "WAL (bytes)")]:
    vals = [max(float(rows[t][col] or 0), 1e-3) for t in ("heap", "widecol")]
    ax.bar(["heap DELETE\n+ VACUUM", "widecol TTL +\ntime windows"], vals, color=["tab:gray", "tab:blue"])
    ax.set_yscale("log")
    ax.set_ylabel(label + ", log scale")
fig.suptitle("Expiring the oldest days (lower is better)")
plt.tight_layout()
plt.savefig(sys.argv[2], dpi=110)
print("plot:", sys.argv[2])
PY
