#!/usr/bin/env bash
# Seek costs against measured times: does the planner pick the faster of a
# WidecolSeek and a full scan?  The same rows (2,000 partitions of 50 rows)
# in 1, 10 and 100 runs, each run a slice of every partition (small INSERT
# batches before compaction); queries over the first k partitions, in no
# order and in clustering order.  For each: the plan chosen, the median time
# of the seek (enable_seqscan = off) and of the full scan
# (widecol.enable_seek = off), and the chosen plan's time over the faster's.
# The heap + btree copy of the data is timed too, for reference.
#
#   bash test/bench/seek_costs.sh [--rows N] [--repeat R] [--out DIR]
#
# Writes seek_costs.txt, seek_costs.csv and seek_costs.png into --out.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROWS=100000 REPEAT=9 OUT="$ROOT/test/bench/results"
bench_main bench/seek_costs.sh --rows=ROWS --repeat=REPEAT --out=OUT -- "$@"
bench_instance
wc_section "Loading $ROWS rows into tables of 1, 10 and 100 runs, and a heap copy"
"${PSQL[@]}" <<EOF
CREATE EXTENSION widecol;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE src AS SELECT 'd' || (g * 7919 % 2000) AS dev, g::bigint AS ts, g AS v,
       md5(g::text) AS pad FROM generate_series(1, $ROWS) g;
CREATE TABLE heap (LIKE src, PRIMARY KEY (dev, ts));
INSERT INTO heap SELECT * FROM src;
CREATE TABLE c1 (dev text, ts bigint, v int, pad text)
  USING widecol WITH (widecol.partition_key = 'dev', widecol.clustering_key = 'ts');
CREATE TABLE c10 (LIKE c1) USING widecol WITH (widecol.partition_key = 'dev', widecol.clustering_key = 'ts');
CREATE TABLE c100 (LIKE c1) USING widecol WITH (widecol.partition_key = 'dev', widecol.clustering_key = 'ts');
INSERT INTO c1 SELECT * FROM src;
DO \$\$ BEGIN
  FOR b IN 0..9 LOOP INSERT INTO c10 SELECT * FROM src WHERE ts > b * ($ROWS / 10) AND ts <= (b + 1) * ($ROWS / 10); END LOOP;
  FOR b IN 0..99 LOOP INSERT INTO c100 SELECT * FROM src WHERE ts > b * ($ROWS / 100) AND ts <= (b + 1) * ($ROWS / 100); END LOOP;
END \$\$;
VACUUM ANALYZE heap; ANALYZE c1, c10, c100;
-- median milliseconds of n runs of q (after two to warm the caches)
CREATE FUNCTION timeq(q text, n int) RETURNS numeric LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz; ts numeric[] := '{}';
BEGIN
  EXECUTE q; EXECUTE q;
  FOR i IN 1..n LOOP
    t0 := clock_timestamp();
    EXECUTE q;
    ts := ts || extract(epoch FROM clock_timestamp() - t0)::numeric * 1000;
  END LOOP;
  RETURN (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY v)::numeric, 3) FROM unnest(ts) v);
END \$\$;
EOF

csv=$OUT/seek_costs.csv
txt=$OUT/seek_costs.txt
echo "runs,partitions,ordered,chosen,seek_ms,full_ms,heap_ms,chosen_over_best" >"$csv"
wc_section "Timing (median of $REPEAT)"
for runs in 1 10 100; do
	for k in 1 3 10 30 100 300 1000; do
		for ordered in f t; do
			list=$(seq 0 $((k - 1)) | sed "s/.*/'d&'/" | paste -sd,)
			order=""; [ $ordered = t ] && order="ORDER BY ts"
			q="SELECT count(*) FROM (SELECT * FROM c$runs WHERE dev IN ($list) $order) x"
			hq="SELECT count(*) FROM (SELECT * FROM heap WHERE dev IN ($list) $order) x"
			chosen=$("${PSQL[@]}" -At -c "SET max_parallel_workers_per_gather = 0" -c "EXPLAIN $q" | grep -o 'WidecolSeek\|Seq Scan' | head -1)
			seek=$("${PSQL[@]}" -At -c "SET max_parallel_workers_per_gather = 0" -c "SET enable_seqscan = off" -c "SELECT timeq(\$q\$$q\$q\$, $REPEAT)")
			full=$("${PSQL[@]}" -At -c "SET max_parallel_workers_per_gather = 0" -c "SET widecol.enable_seek = off" -c "SELECT timeq(\$q\$$q\$q\$, $REPEAT)")
			heap=$("${PSQL[@]}" -At -c "SET max_parallel_workers_per_gather = 0" -c "SELECT timeq(\$q\$$hq\$q\$, $REPEAT)")
			ratio=$(python3 -c "s,f=$seek,$full; c=s if '$chosen'=='WidecolSeek' else f; print(f'{c/min(s,f):.2f}')")
			echo "$runs,$k,$ordered,$chosen,$seek,$full,$heap,$ratio" >>"$csv"
			printf '.'
		done
	done
done
echo
python3 - "$csv" "$txt" "$OUT/seek_costs.png" <<'EOF' || wc_warn "no plot (python3-matplotlib missing?)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
with open(sys.argv[2], "w") as out:
    out.write("%5s %6s %8s %12s %9s %9s %9s %8s\n" % ("runs", "parts", "ordered", "chosen", "seek ms", "full ms", "heap ms", "chosen/best"))
    for r in rows:
        out.write("%5s %6s %8s %12s %9s %9s %9s %8s\n" % (r["runs"], r["partitions"], r["ordered"], r["chosen"],
                  r["seek_ms"], r["full_ms"], r["heap_ms"], r["chosen_over_best"]))
    worst = max(float(r["chosen_over_best"]) for r in rows)
    out.write("\nworst chosen/best: %.2f\n" % worst)
print(open(sys.argv[2]).read())
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
for ax, ordered in zip(axes, ("f", "t")):
    for runs, color in (("1", "tab:blue"), ("10", "tab:orange"), ("100", "tab:red")):
        sel = [r for r in rows if r["runs"] == runs and r["ordered"] == ordered]
        ks = [int(r["partitions"]) for r in sel]
        ax.plot(ks, [float(r["seek_ms"]) for r in sel], "-o", color=color, label="seek, %s runs" % runs)
        ax.plot(ks, [float(r["full_ms"]) for r in sel], "--", color=color, label="full scan, %s runs" % runs)
        for r, k in zip(sel, ks):
            if r["chosen"] == "WidecolSeek":
                ax.plot([k], [float(r["seek_ms"])], "o", color="black", markersize=3)
    ax.set_xscale("log"); ax.set_yscale("log")
    ax.set_xlabel("partitions read"); ax.set_title("in clustering order" if ordered == "t" else "in no order")
axes[0].set_ylabel("median ms"); axes[1].legend(fontsize=7)
fig.suptitle("seek vs full scan (black dots: the planner chose the seek)")
fig.tight_layout(); fig.savefig(sys.argv[3], dpi=110)
print("plot:", sys.argv[3])
EOF
