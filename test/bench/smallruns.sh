#!/usr/bin/env bash
# Reads over many small runs not compacted yet, by codec of their key pages:
# reads.sh's shape (k) as an A/B test on one instance.  The same rows (the
# design brief's device_daily_images) in a compacted table (zstd pages, as
# compaction writes them) and twice in 100 small runs written as reads.sh
# writes them (one INSERT and flush per 1% of the rows, in capture order):
# once with widecol.ingest_key_codec = lz4 (the default), once with zstd;
# the value pages of both are zstd.  Prints each table's bytes of key and
# value pages, then runs queries (a) and (b) of reads.sh, each table in
# turn (every other round in reverse order), for R rounds (pgbench, 1
# client, prepared) and reports the median over the rounds of each table's
# p50 and p99, and of its ratio to the compacted table's and of lz4's to
# zstd's in the same round: taking the tables in turn keeps a machine's
# drifting load from favouring one of them.
#
#   bash test/bench/smallruns.sh [--rows N] [--seconds S] [--rounds R] [--out DIR]
#
# Writes smallruns.txt and smallruns.csv into --out.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROWS=1000000 SECONDS_EACH=5 ROUNDS=5 OUT="$ROOT/test/bench/results"
bench_main bench/smallruns.sh --rows=ROWS --seconds=SECONDS_EACH --rounds=ROUNDS --out=OUT -- "$@"
bench_instance
bench_generate "$ROWS" 10
bench_tables
wc_section "Loading"
for f in "$inst"/chunk.*; do
	"${PSQL[@]}" -c "COPY heap_images FROM '$f' WITH (FORMAT csv)" -c "COPY wc_images FROM '$f' WITH (FORMAT csv)"
	rm -f "$f"
done
# as reads.sh: the size-tiered strategy merges the similar runs the COPYs wrote
"${PSQL[@]}" -At -c "SET widecol.compaction_throughput = 0" \
	-c "SELECT 'compacted: ' || widecol.compact('wc_images') || ' versions written'"
"${PSQL[@]}" -c "CREATE TABLE small_stage AS SELECT row_number() OVER (ORDER BY capture_time, image_id) AS rn, * FROM heap_images"

csv=$OUT/smallruns.csv
echo "table,round,query,qps,p50_ms,p99_ms" >"$csv"
wc_section "100 small runs per key-page codec (value pages zstd)"
printf '%-18s %12s %12s %12s\n' table key_MB value_MB file_MB
tables=(wc_images)
for codec in lz4 zstd; do
	t=wc_small_$codec
	tables+=("$t")
	"${PSQL[@]}" <<-EOF
		SET widecol.ingest_key_codec = $codec;
		CREATE TABLE $t (LIKE heap_images) USING widecol
		  WITH (widecol.partition_key = 'device_id, day_bucket', widecol.clustering_key = 'capture_time DESC, image_id DESC');
		DO \$\$
		BEGIN
		  FOR b IN 0..99 LOOP
		    INSERT INTO $t SELECT device_id, day_bucket, capture_time, image_id, object_store, object_key, width, height, content_hash
		      FROM small_stage WHERE rn > b * ($ROWS / 100) AND rn <= (b + 1) * ($ROWS / 100);
		    PERFORM widecol.flush('$t');
		  END LOOP;
		END \$\$;
	EOF
	"${PSQL[@]}" -At -F ' ' -c "SELECT
	    round(sum(stored_bytes) FILTER (WHERE kind = 'key') / 1048576.0, 1),
	    round(sum(stored_bytes) FILTER (WHERE kind = 'value') / 1048576.0, 1),
	    round(pg_relation_size('$t') / 1048576.0, 1) FROM widecol.run_pages('$t')" |
		while read -r k v total; do printf '%-18s %12s %12s %12s\n' "$t" "$k" "$v" "$total"; done
done
"${PSQL[@]}" -c "DROP TABLE small_stage" -c "ANALYZE" -c CHECKPOINT

# pgbench scripts: reads.sh's (a) and (b)
for t in "${tables[@]}"; do
	d=$inst/scripts/$t
	bench_partition_scripts "$d" "$t"
done

# run_query TABLE QUERY -> "qps p50 p99" (milliseconds)
run_query() {
	local dir=$inst/log/$1-$2-$3
	mkdir -p "$dir"
	(cd "$dir" && "$bin/pgbench" -n -M prepared -c 1 -T "$SECONDS_EACH" -l \
		-h "$inst" -p 5999 -f "$inst/scripts/$1/$2.sql" postgres >"$dir/out.txt" 2>&1) ||
		{ cat "$dir/out.txt"; wc_die "pgbench failed"; }
	cat "$dir"/pgbench_log.* | awk '{ print $3 / 1000.0 }' | sort -n | awk -v s="$SECONDS_EACH" '
		{ v[NR] = $1 } END { printf "%.1f %.3f %.3f\n", NR / s, v[int(NR * 0.50) + 1], v[int(NR * 0.99) + 1] }'
}

wc_section "Queries (pgbench, 1 client, $SECONDS_EACH s each, prepared; $ROUNDS rounds, tables in turn)"
for r in $(seq 1 "$ROUNDS"); do
	order=("${tables[@]}")
	[ $((r % 2)) -eq 1 ] || order=("${tables[2]}" "${tables[1]}" "${tables[0]}")
	for q in a b; do
		for t in "${order[@]}"; do
			read -r qps p50 p99 < <(run_query "$t" "$q" "$r")
			echo "$t,$r,$q,$qps,$p50,$p99" >>"$csv"
			printf 'round %d (%s) %-16s %9s qps  p50 %s ms  p99 %s ms\n' "$r" "$q" "$t" "$qps" "$p50" "$p99"
		done
	done
done

wc_section "Medians over the rounds"
python3 - "$csv" <<'EOF' | tee "$OUT/smallruns.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
val = {(r["table"], r["round"], r["query"]): (float(r["p50_ms"]), float(r["p99_ms"])) for r in rows}
tables = list(dict.fromkeys(r["table"] for r in rows))
rounds = list(dict.fromkeys(r["round"] for r in rows))
def med(f):
    return statistics.median(f(r) for r in rounds)
# medians over the rounds; ratios are medians of each round's ratio (the
# tables of one round ran within seconds of each other, under the same load)
for q in ("a", "b"):
    for t in tables:
        print(f"({q}) {t:16s} p50 {med(lambda r: val[t, r, q][0]):.3f} ms  p99 {med(lambda r: val[t, r, q][1]):.3f} ms"
              + ("" if t == "wc_images" else
                 f"  / compacted: p50 {med(lambda r: val[t, r, q][0] / val['wc_images', r, q][0]):.2f}x"
                 f"  p99 {med(lambda r: val[t, r, q][1] / val['wc_images', r, q][1]):.2f}x"))
    print(f"({q}) lz4 key pages / zstd key pages: p50 "
          f"{med(lambda r: val['wc_small_lz4', r, q][0] / val['wc_small_zstd', r, q][0]):.2f}x  p99 "
          f"{med(lambda r: val['wc_small_lz4', r, q][1] / val['wc_small_zstd', r, q][1]):.2f}x")
EOF
