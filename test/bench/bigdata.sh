#!/usr/bin/env bash
# Data larger than memory: COPY of the same image_metadata rows, keyed by a
# random uuid, into a heap table with a uuid PRIMARY KEY and into a widecol
# table (partition key image_id, no clustering key), in one run, on one
# throwaway instance whose postmaster runs in a cgroup v1 memory group with
# a memory limit (page cache included); widecol's background workers on,
# compacting as in production (the default widecol.naptime, max_workers and
# compaction_throughput).  Then the bytes of both tables and point-lookup
# latency by key, right after the load (the workers still compacting) and
# once the workers have settled.  The lookups of both tables run
# interleaved, one pgbench client picking either table's statement for
# each transaction, so that both meet the same moments of the machine (see
# run_mixed), with each table's shared-buffer misses per lookup.  Then,
# with the memory group, the lookups right after a restart with the group's
# page cache emptied (a cold start: a reboot, a failover), each table's
# lookups in a steady state (each table on a server of its own, a copy of
# the instance in a second memory group of the same limit, both servers'
# lookups at the same time, after their own lookups have filled the
# caches), with what a lookup costs the backend that serves it (Linux
# /proc: user and system CPU time, bytes read from storage rather than the
# page cache, read system calls), which tells CPU from I/O in the latency,
# and the settled lookups again at other memory limits (--sweep).  Every
# phase also reports the share of lookups over 1 ms: a p99 near 1 ms lies
# where that share crosses 1% and moves with it.
#
#   bash test/bench/bigdata.sh [--rows N] [--chunk N] [--memory SIZE]
#                              [--seconds S] [--settle S] [--sweep SIZES] [--data-checksums]
#                              [--out DIR]
#
# --rows     rows loaded (default 16000000)
# --chunk    rows per COPY (default 1000000); rows/s is reported per chunk
# --memory   memory limit of the server's cgroup (default 1GB; K, M, G);
#            shared_buffers is a quarter of it
# --seconds  pgbench seconds of each of a phase's two runs (default 30); the
#            steady state runs twice as long first, not counted
# --settle   the second phase of lookups waits at most this long for the
#            workers to have no runs left to merge (default 900)
# --sweep    memory limits to measure the settled lookups again at, after
#            the main phases (default 4GB,2GB,640MB; none to skip): the
#            group's limit is changed and shared_buffers stays, so only the
#            page cache grows or shrinks; the curve goes to
#            bigdata-memory.png.  Needs the memory group
# --data-checksums  initdb the instance with data checksums (-k, the
#            default from PostgreSQL 18): both tables' pages are verified on
#            their way in from storage, and widecol's reads skip their own CRC
# --out      where bigdata.txt, bigdata.csv and bigdata.png go
#            (default test/bench/results)
# WIDECOL_BIGDATA_CONF (environment): a line for the server's
#            postgresql.conf, e.g. "widecol.worker_nice = 0" to compare
#
# Row n (1..N) has image_id = md5('img-' || n)::uuid, so keys arrive in
# random order and the lookups (pgbench, 1 client, a prepared statement,
# n = random(1, N)) ask both tables for the same existing keys.  Chunk i is
# generated just before it is loaded (generation is not timed) and loaded
# into heap, then into widecol, each after a CHECKPOINT.
#
# The memory group: as root the script creates
# /sys/fs/cgroup/memory/<its own memory group>/widecol-bigdata.PID (or one
# under /sys/fs/cgroup/memory), sets memory.limit_in_bytes, lets user
# postgres write its cgroup.procs, and the run stage starts the postmaster
# from a shell that first moved itself into the group; the group is removed
# at the end.  When no group can be made (cgroup v2 only, read-only
# /sys/fs/cgroup, not root) the run goes on with only the small
# shared_buffers, and says so in the results.  As root it also installs
# what it needs, builds and installs widecol (PG_CONFIG in the environment
# names another installation, e.g. a relocated copy) and runs as postgres.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROWS=16000000 CHUNK=1000000 MEMORY=1GB SECONDS_EACH=30 SETTLE=900 OUT="$ROOT/test/bench/results" CGROUP="" CGROUP2="" DATA_CHECKSUMS=""
SWEEP=4GB,2GB,640MB
# --cgroup and --cgroup2 (the steady state's second server) are set by the root stage
bench_options --rows=ROWS --chunk=CHUNK --memory=MEMORY --seconds=SECONDS_EACH --settle=SETTLE --sweep=SWEEP --out=OUT --cgroup=CGROUP --cgroup2=CGROUP2 \
	--data-checksums=DATA_CHECKSUMS=1 -- "$@"

# SIZE (e.g. 1GB, 256MB, 512M) -> bytes
to_bytes() {
	local v=${1^^}
	v=${v%B}
	case $v in
	*K) echo $((${v%K} * 1024)) ;;
	*M) echo $((${v%M} * 1024 * 1024)) ;;
	*G) echo $((${v%G} * 1024 * 1024 * 1024)) ;;
	*) echo "$v" ;;
	esac
}
MEM_BYTES=$(to_bytes "$MEMORY")
[[ $MEM_BYTES =~ ^[0-9]+$ ]] && [ "$MEM_BYTES" -ge $((64 * 1024 * 1024)) ] ||
	wc_die "--memory must be at least 64MB (got $MEMORY)"
[ "$ROWS" -ge "$CHUNK" ] && [ "$CHUNK" -gt 0 ] || wc_die "--rows must be >= --chunk > 0"
[ "$SWEEP" = none ] && SWEEP=""
for size in ${SWEEP//,/ }; do
	b=$(to_bytes "$size")
	[[ $b =~ ^[0-9]+$ ]] && [ "$b" -gt $((MEM_BYTES / 4 + 256 * 1024 * 1024)) ] ||
		wc_die "--sweep: $size leaves no room for shared_buffers ($((MEM_BYTES / 4 / 1048576))MB) and the page cache"
done

# make_cgroup [SUFFIX] -> prints the path of a new memory group limited to
# MEM_BYTES that user postgres may join, or nothing (and a reason on stderr)
make_cgroup() {
	local base parent g
	base=/sys/fs/cgroup/memory
	if [ ! -d "$base" ] || [ ! -e "$base/cgroup.procs" ]; then
		echo "no cgroup v1 memory controller at $base" >&2
		return 0
	fi
	parent=$base$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
	for p in "$parent" "$base"; do
		g=$p/widecol-bigdata.$$${1:+.$1}
		if mkdir "$g" 2>/dev/null; then
			if echo "$MEM_BYTES" >"$g/memory.limit_in_bytes" 2>/dev/null &&
				chown "$WC_RUN_USER" "$g/cgroup.procs" "$g/tasks" "$g/memory.limit_in_bytes" "$g/memory.force_empty"; then
				echo "$g"
				return 0
			fi
			rmdir "$g" 2>/dev/null || true
		fi
	done
	echo "could not create a memory group with a limit under $parent or $base (read-only?)" >&2
}

# Root stage: dependencies, user, the memory group, build and install, then
# the run stage as postgres (as bench_main in lib.sh, plus the group).
if wc_is_root && [ "${WIDECOL_BENCH_STAGE:-}" != run ]; then
	wc_install_deps python3 python3-matplotlib postgresql-contrib || wc_die "could not install dependencies"
	wc_ensure_user
	WORK=$(wc_make_workdir bench)
	CG=$(make_cgroup) || true
	CG2=$(make_cgroup two) || true
	trap 'wc_stop_postmasters_under "$WORK"; rm -rf "$WORK"; for g in "$CG" "$CG2"; do [ -z "$g" ] || rmdir "$g" 2>/dev/null || true; done' EXIT
	wc_copy_tree "$ROOT" "$WORK/tree"
	wc_section "Building widecol for $("$PG_CONFIG" --bindir)"
	wc_build "$WORK/tree" "$WORK/build.log" >"$WORK/build.out" 2>&1 || { cat "$WORK/build.out"; wc_die "build failed"; }
	OUT=$(realpath -m "$OUT")	# the run stage works in a copy of the tree
	mkdir -p "$OUT" && chown "$WC_RUN_USER" "$OUT"
	cd "$WORK"
	rc=0
	wc_as_user env WIDECOL_BENCH_STAGE=run WIDECOL_TMPDIR="$WC_TMPBASE" PG_CONFIG="$PG_CONFIG" \
		WIDECOL_BIGDATA_KEEP_LOGS="${WIDECOL_BIGDATA_KEEP_LOGS:-}" WIDECOL_BIGDATA_CONF="${WIDECOL_BIGDATA_CONF:-}" \
		bash "$WORK/tree/test/bench/bigdata.sh" --rows "$ROWS" --chunk "$CHUNK" --memory "$MEMORY" \
		--seconds "$SECONDS_EACH" --settle "$SETTLE" --sweep "${SWEEP:-none}" --out "$OUT" --cgroup "${CG:-none}" --cgroup2 "${CG2:-none}" \
		${DATA_CHECKSUMS:+--data-checksums} || rc=$?
	exit $rc
fi

# Run stage (user postgres, or any non-root user)
if [ -z "$CGROUP" ]; then
	CGROUP=$(make_cgroup) || true	# works only where the user may create groups
fi
[ "$CGROUP" = none ] && CGROUP=""
if [ -z "$CGROUP2" ] && [ -n "$CGROUP" ]; then
	CGROUP2=$(make_cgroup two) || true
fi
[ "$CGROUP2" = none ] && CGROUP2=""
# can_join GROUP: this user may move a process into GROUP
can_join() { sh -c 'echo $$ >"$1/cgroup.procs"' sh "$1" 2>/dev/null; }
if [ -n "$CGROUP" ] && ! can_join "$CGROUP"; then
	wc_warn "cannot join $CGROUP"
	CGROUP=""
fi
if [ -n "$CGROUP2" ] && ! can_join "$CGROUP2"; then
	wc_warn "cannot join $CGROUP2"
	CGROUP2=""
fi
SB_MB=$((MEM_BYTES / 4 / 1024 / 1024))
if [ -n "$CGROUP" ]; then
	LIMIT_NOTE="server in cgroup v1 memory group $CGROUP, memory.limit_in_bytes = $(cat "$CGROUP/memory.limit_in_bytes") ($MEMORY, page cache included), shared_buffers = ${SB_MB}MB"
else
	LIMIT_NOTE="NO MEMORY LIMIT: the cgroup v1 memory controller was not writable; only shared_buffers = ${SB_MB}MB is small, the page cache is the machine's"
fi

mkdir -p "$OUT"
bin=$WC_PG_BINDIR
inst=$(mktemp -d "${WC_TMPBASE:-/tmp}/widecol-bigdata.XXXXXX")
cleanup() {
	local rc=$?
	if [ $rc -ne 0 ] && [ -f "$inst/server.log" ]; then
		wc_warn "failed ($rc); the end of the server log:"
		tail -n 30 "$inst/server.log" >&2
		[ -z "$CGROUP" ] || grep -E 'oom_kill|under_oom' "$CGROUP/memory.oom_control" >&2 || true
	fi
	for d in "$inst/data" "$inst/two/data"; do
		[ ! -f "$d/postmaster.pid" ] || "$bin/pg_ctl" -D "$d" -m fast -w stop >/dev/null 2>&1 || true
	done
	# WIDECOL_BIGDATA_KEEP_LOGS=DIR keeps pgbench's per-lookup logs
	[ -z "${WIDECOL_BIGDATA_KEEP_LOGS:-}" ] || cp -r "$inst/log" "$WIDECOL_BIGDATA_KEEP_LOGS" 2>/dev/null || true
	rm -rf "$inst"
}
trap cleanup EXIT
bench_initdb "$inst/data" "$inst" 5998 "${SB_MB}MB" 4GB \
	"# widecol's background workers compact as in production: the defaults" \
	"# widecol.max_workers = 2, widecol.naptime = 60s, compaction_throughput = 64," \
	"# worker_nice = 10, idle_compaction_delay = 1min" ${WIDECOL_BIGDATA_CONF:+"$WIDECOL_BIGDATA_CONF"}
wc_section "Starting the server"
wc_info "$LIMIT_NOTE"
if [ -n "$CGROUP" ]; then
	sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2/pg_ctl" -D "$3/data" -l "$3/server.log" -w start' \
		sh "$CGROUP" "$bin" "$inst" >/dev/null
	ppid_=$(head -1 "$inst/data/postmaster.pid")
	grep -q "memory:.*$(basename "$CGROUP")\$" "/proc/$ppid_/cgroup" || wc_die "the postmaster is not in $CGROUP"
	wc_info "postmaster $ppid_: $(grep memory: "/proc/$ppid_/cgroup")"
else
	"$bin/pg_ctl" -D "$inst/data" -l "$inst/server.log" -w start >/dev/null
fi
PSQL=("$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$inst" -p 5998 -d postgres)
# psql_at SOCKET-DIR ARGS...: psql on the server at SOCKET-DIR (the main
# one, or the steady state's copy)
psql_at() { "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$1" -p 5998 -d postgres "${@:2}"; }
"${PSQL[@]}" <<-'EOF'
	CREATE EXTENSION widecol;
	CREATE TABLE heap_image_metadata (
	    image_id uuid PRIMARY KEY, device_id text, capture_time timestamptz,
	    object_store text, object_key text, width int, height int, content_hash text);
	CREATE TABLE wc_image_metadata (
	    image_id uuid, device_id text, capture_time timestamptz,
	    object_store text, object_key text, width int, height int, content_hash text
	) USING widecol WITH (widecol.partition_key = 'image_id');
EOF
wc_info "widecol settings: $("${PSQL[@]}" -At -c "SELECT string_agg(name || '=' || setting, ' ' ORDER BY name) FROM pg_settings WHERE name IN ('widecol.max_workers', 'widecol.naptime', 'widecol.idle_compaction_delay', 'widecol.compaction_throughput', 'widecol.level0_max_size', 'widecol.bulk_write_mem')")"

# gen_chunk FIRST COUNT FILE: rows FIRST .. FIRST+COUNT-1 as CSV
gen_chunk() {
	python3 - "$1" "$2" >"$3" <<-'EOF'
		import hashlib, sys
		first, count = int(sys.argv[1]), int(sys.argv[2])
		sizes = ["1920,1080"] * 8 + ["1280,720"] * 5 + ["3840,2160"] * 3 + ["2592,1944"] * 2 + ["640,480"] * 2
		md5, sha = hashlib.md5, hashlib.sha256
		days = {}
		out = []
		for n in range(first, first + count):
		    h = md5(b"img-%d" % n).hexdigest()
		    u = "%s-%s-%s-%s-%s" % (h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])
		    s = sha(b"c%d" % n).hexdigest()
		    dev = 1 + int(s[0:4], 16) % 200
		    us = n * 50000 + int(s[4:8], 16)          # 2025-01-01 + 50 ms per row
		    d, r = divmod(us, 86400000000)
		    if d not in days:
		        import datetime as dt
		        x = dt.date(2025, 1, 1) + dt.timedelta(days=d)
		        days[d] = (x.isoformat(), x.strftime("%Y/%m/%d"))
		    iso, path = days[d]
		    sec, frac = divmod(r, 1000000)
		    out.append("%s,cam-%04d,%s %02d:%02d:%02d.%06d+00,s3://bucket-eu-1,raw/cam-%04d/%s/%s.jpg,%s,%s\n" % (
		        u, dev, iso, sec // 3600, sec // 60 % 60, sec % 60, frac, dev, path, u, sizes[int(s[8:10], 16) % 20], s))
		    if len(out) >= 10000:
		        sys.stdout.write("".join(out)); out = []
		sys.stdout.write("".join(out))
	EOF
}

cg_stat() {	# cg_stat FILE -> value, or n/a
	if [ -n "$CGROUP" ] && [ -r "$CGROUP/$1" ]; then cat "$CGROUP/$1"; else echo n/a; fi
}
oom_kills() {
	if [ -n "$CGROUP" ]; then awk '$1 == "oom_kill" { print $2 }' "$CGROUP/memory.oom_control"; else echo n/a; fi
}

chunks=$(((ROWS + CHUNK - 1) / CHUNK))
csv=$OUT/bigdata.csv
echo "section,table,million,metric,value" >"$csv"
wc_section "Loading $ROWS rows in $chunks chunks of $CHUNK (rows/s per chunk; ratio = widecol / heap)"
printf '%6s %12s %12s %12s %7s %8s %10s %10s\n' chunk rows_after heap_rows/s wc_rows/s ratio wc_runs cg_mem_MB t
start=$(wc_now)
loaded=0
for ((i = 0; i < chunks; i++)); do
	n=$((ROWS - loaded < CHUNK ? ROWS - loaded : CHUNK))
	f=$inst/chunk.csv
	gen_chunk $((loaded + 1)) "$n" "$f"
	read -r hs hw < <(bench_copy_chunk heap_image_metadata "$f" | tr '|' ' ')
	read -r ws ww < <(bench_copy_chunk wc_image_metadata "$f" | tr '|' ' ')
	rm -f "$f"
	loaded=$((loaded + n))
	runs=$("${PSQL[@]}" -At -c "SELECT count(*) FROM widecol.runs('wc_image_metadata')")
	mem=$(cg_stat memory.usage_in_bytes)
	m=$(awk -v l="$loaded" 'BEGIN { printf "%.3f", l / 1e6 }')
	{
		echo "ingest,heap,$m,rows,$n"; echo "ingest,widecol,$m,rows,$n"
		echo "ingest,heap,$m,seconds,$hs"; echo "ingest,widecol,$m,seconds,$ws"
		echo "ingest,heap,$m,wal_bytes,$hw"; echo "ingest,widecol,$m,wal_bytes,$ww"
		echo "ingest,widecol,$m,runs,$runs"
		echo "ingest,server,$m,cgroup_usage_bytes,$mem"
	} >>"$csv"
	awk -v i="$i" -v l="$loaded" -v n="$n" -v hs="$hs" -v ws="$ws" -v runs="$runs" -v mem="$mem" \
		-v t="$(wc_fmt_secs $(($(wc_now) - start)))" 'BEGIN {
		printf "%6d %12d %12.0f %12.0f %7.2f %8d %10s %10s\n", i, l, n / hs, n / ws, hs / ws, runs,
			(mem == "n/a" ? mem : sprintf("%.0f", mem / 1048576)), t }'
done

load_done=$(wc_now)
load_done_at=$("${PSQL[@]}" -At -c "SELECT clock_timestamp()")
wc_section "After loading"
"${PSQL[@]}" -c CHECKPOINT -c "VACUUM ANALYZE heap_image_metadata" -c "ANALYZE wc_image_metadata" -c CHECKPOINT
hcount=$("${PSQL[@]}" -At -c "SELECT count(*) FROM heap_image_metadata")
wcount=$("${PSQL[@]}" -At -c "SELECT count(*) FROM wc_image_metadata")
[ "$hcount" = "$wcount" ] && [ "$hcount" = "$ROWS" ] || wc_die "row counts differ: heap $hcount, widecol $wcount, expected $ROWS"
hsize=$("${PSQL[@]}" -At -c "SELECT pg_total_relation_size('heap_image_metadata')")
hidx=$("${PSQL[@]}" -At -c "SELECT pg_indexes_size('heap_image_metadata')")
wsize=$("${PSQL[@]}" -At -c "SELECT pg_total_relation_size('wc_image_metadata')")
runs_before=$("${PSQL[@]}" -At -c "SELECT count(*) FROM widecol.runs('wc_image_metadata')")
# the pages of the runs that compaction dropped stay in the file for reuse:
# the live runs alone
wlive=$("${PSQL[@]}" -At -c "SELECT coalesce(sum(compressed_bytes), 0) FROM widecol.runs('wc_image_metadata')")
wc_info "rows: $hcount in both; heap $((hsize / 1048576)) MB (index $((hidx / 1048576)) MB), widecol $((wsize / 1048576)) MB in $runs_before runs"
"${PSQL[@]}" -c "SELECT * FROM widecol.compaction_stats('wc_image_metadata')" || true
# what the workers did during the load
compactions=$("${PSQL[@]}" -At -c "SELECT count(*) || ' compactions (' || coalesce(sum(runs_in), 0) || ' runs in, '
  || coalesce(sum(runs_out), 0) || ' out, ' || coalesce(round(sum(extract(epoch FROM finished - started))::numeric, 1), 0) || ' s)'
  FROM widecol.compaction_history WHERE relname LIKE '%wc_image_metadata'")
wc_info "compactions during the load: $compactions"
{
	echo "size,heap,$m,bytes,$hsize"; echo "size,heap,$m,index_bytes,$hidx"
	echo "size,widecol,$m,bytes,$wsize"; echo "size,widecol,$m,runs,$runs_before"
	echo "size,widecol,$m,live_run_bytes,$wlive"
} >>"$csv"

# the lookups: the same keys for both tables
for t in heap_image_metadata wc_image_metadata; do
	cat >"$inst/$t.sql" <<-EOF
		\set n random(1, $ROWS)
		SELECT device_id, capture_time, object_key, width, height, content_hash
		  FROM $t WHERE image_id = md5('img-' || :n)::uuid;
	EOF
	"${PSQL[@]}" -c "SET plan_cache_mode = force_generic_plan" \
		-c "PREPARE p(text) AS SELECT device_id, capture_time, object_key, width, height, content_hash FROM $t WHERE image_id = md5('img-' || \$1)::uuid" \
		-c "EXPLAIN (COSTS OFF) EXECUTE p('1')"
	got=$("${PSQL[@]}" -At -c "SELECT count(*) FROM $t WHERE image_id = md5('img-' || '$ROWS')::uuid")
	[ "$got" = 1 ] || wc_die "$t: the key of row $ROWS is not found"
done

# proc_sample PID: "epoch_seconds utime_ticks stime_ticks read_bytes syscr"
# of a backend (Linux /proc; the backend runs as this user): its CPU time,
# the bytes it had fetched from storage (page-cache misses), not from
# memory, and its read system calls (a buffer-pool miss is a pread, from
# the page cache or storage; the client's socket is read with recv, which
# syscr does not count)
proc_sample() {
	local t
	t=$(date +%s.%N)
	awk -v t="$t" 'FNR == 1 && FILENAME ~ /stat$/ { sub(/^.*\) /, ""); u = $12; s = $13 }
		FILENAME ~ /io$/ && $1 == "read_bytes:" { r = $2 } FILENAME ~ /io$/ && $1 == "syscr:" { c = $2 }
		END { print t, u, s, r, c }' "/proc/$1/stat" "/proc/$1/io"
}
# statio [SOCKET-DIR] -> "table blocks" lines: the blocks each table's
# lookups asked of the kernel (shared-buffer misses; pg_statio, heap and
# indexes), of the server at SOCKET-DIR (default the main one)
statio() {
	psql_at "${1:-$inst}" -At -F ' ' -c "SELECT relname, heap_blks_read + coalesce(idx_blks_read, 0) FROM pg_statio_user_tables
		WHERE relname IN ('heap_image_metadata', 'wc_image_metadata')"
}
# misses_file DIR ROUND-DIR: "lookups blocks" of the table in ROUND-DIR from
# DIR's statio.0 and statio.1 (a backend hands in its statistics when it
# exits: pgbench's has a second to)
misses_file() {
	local n
	n=$(cat "$2"/pgbench_log.* | wc -l)
	awk -v t="$(basename "$(dirname "$2")")" -v n="$n" '$1 == t { b = $2 - b } END { print n, b }' \
		"$1/statio.0" "$1/statio.1" >"$2/misses"
}
# run_lookups TABLE ROUND SECONDS [SOCKET-DIR]: pgbench per-transaction log
# into $inst/log/TABLE/ROUND, and proc.0 / proc.1, samples of the backend
# serving pgbench one second into the run and one second before its end; on
# the server at SOCKET-DIR (default the main one)
run_lookups() {
	local dir=$inst/log/$1/$2 host=${4:-$inst} pg pid="" i
	mkdir -p "$dir"
	statio "$host" >"$dir/statio.0"
	(cd "$dir" && exec "$bin/pgbench" -n -M prepared -c 1 -T "$3" -l \
		-h "$host" -p 5998 -f "$inst/$1.sql" postgres >"$dir/out.txt" 2>&1) &
	pg=$!
	sleep 1
	for ((i = 0; i < 50 && ${#pid} == 0; i++)); do
		pid=$(psql_at "$host" -At -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench' LIMIT 1")
		[ -n "$pid" ] || sleep 0.1
	done
	if [ -n "$pid" ] && proc_sample "$pid" >"$dir/proc.0" 2>/dev/null; then
		sleep $(($3 > 2 ? $3 - 2 : 0))
		proc_sample "$pid" >"$dir/proc.1" 2>/dev/null || rm -f "$dir/proc.0"
	fi
	wait "$pg" || { cat "$dir/out.txt"; wc_die "pgbench failed"; }
	sleep 1
	statio "$host" >"$dir/statio.1"
	misses_file "$dir" "$dir"
}
# run_mixed ROUND SECONDS: both tables' lookups in one pgbench run of one
# client, each transaction picking one table's script at random (-f twice),
# so that both tables meet the same moments of the machine: a slow spell of
# the virtual disk, a merge of the workers, a checkpoint.  Tables measured
# one after the other in rounds were not: the p99 of two 15-s rounds of one
# table in one phase differed by up to 2.3x (stop 51's kept logs), more than
# the difference the target is about.  The log is split by script into
# $inst/log/TABLE/ROUND as run_lookups writes it, with each table's
# shared-buffer misses; one backend serves both, so its CPU and storage
# reads are not split (the steady state, each table on its own server, has them).
run_mixed() {
	local dir=$inst/log/mixed/$1 s t tables=(heap_image_metadata wc_image_metadata)
	mkdir -p "$dir"
	statio >"$dir/statio.0"
	(cd "$dir" && "$bin/pgbench" -n -M prepared -c 1 -T "$2" -l -h "$inst" -p 5998 \
		-f "$inst/${tables[0]}.sql" -f "$inst/${tables[1]}.sql" postgres >"$dir/out.txt" 2>&1) ||
		{ cat "$dir/out.txt"; wc_die "pgbench failed"; }
	sleep 1
	statio >"$dir/statio.1"
	# pgbench numbers the scripts from 0 in the order of the -f options
	for s in 0 1; do
		t=${tables[s]}
		mkdir -p "$inst/log/$t/$1"
		cat "$dir"/pgbench_log.* | awk -v s="$s" '$4 == s' >"$inst/log/$t/$1/pgbench_log.mixed"
		misses_file "$dir" "$inst/log/$t/$1"
	done
}
# lookup_rounds PHASE: 2 runs of both tables' lookups interleaved (run_mixed),
# logs under PHASE.1, PHASE.2
lookup_rounds() {
	for r in 1 2; do
		run_mixed "$1.$r" "$SECONDS_EACH"
		printf '.'
	done
	echo
}
# latency TABLE PHASE -> "qps p50 p95 p99" (milliseconds); qps is lookups
# per second of the table's own lookup time (1 / mean latency), which
# interleaved runs and rounds of one table give alike
latency() {
	cat "$inst/log/$1/$2".*/pgbench_log.* | awk '{ print $3 / 1000.0 }' | sort -n | awk '
		{ v[NR] = $1; t += $1 } END {
			printf "%.1f %.3f %.3f %.3f\n", NR * 1000 / t, v[int(NR * 0.50) + 1], v[int(NR * 0.95) + 1], v[int(NR * 0.99) + 1] }'
}
# misses TABLE PHASE -> shared-buffer misses per lookup over the phase's runs
misses() {
	cat "$inst/log/$1/$2".*/misses 2>/dev/null | awk '{ n += $1; b += $2 } END { if (n) printf "%.2f\n", b / n; else print "n/a" }'
}
# warmup TABLE PHASE -> "p99_first p99_rest" (milliseconds): p99 of the
# lookups in the first 2 s of each run (a new connection, whose backend's
# own caches start empty; in the cold start, a server just restarted) and
# of the rest
warmup() {
	local d part
	for part in first rest; do
		for d in "$inst/log/$1/$2".*; do
			cat "$d"/pgbench_log.* | awk -v part="$part" 'NR == 1 { t0 = $5 + $6 / 1e6 }
				{ first = $5 + $6 / 1e6 - t0 < 2 } (part == "first") == first { print $3 / 1000.0 }'
		done | sort -n | awk '{ v[NR] = $1 } END { printf "%.3f ", NR ? v[int(NR * 0.99) + 1] : 0 }'
	done
	echo
}
# slow_share TABLE PHASE -> the percentage of the lookups over 1 ms
slow_share() {
	cat "$inst/log/$1/$2".*/pgbench_log.* | awk '{ n++ } $3 > 1000 { s++ } END { printf "%.2f\n", n ? 100 * s / n : 0 }'
}
# backend_costs TABLE PHASE -> "user_us sys_us storage_kb reads" per lookup
# between the samples of each round (the lookups pgbench logged as completed
# between them), over the rounds; "n/a n/a n/a n/a" without samples (rounds
# shorter than 5 s take none)
backend_costs() {
	local d t0 u0 s0 r0 c0 t1 u1 s1 r1 c1 n tk
	tk=$(getconf CLK_TCK)
	for d in "$inst/log/$1/$2".*; do
		[ -f "$d/proc.0" ] && [ -f "$d/proc.1" ] || continue
		read -r t0 u0 s0 r0 c0 <"$d/proc.0"
		read -r t1 u1 s1 r1 c1 <"$d/proc.1"
		# CPU time comes in clock ticks (10 ms): a few seconds at least
		awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 3) }' || continue
		n=$(cat "$d"/pgbench_log.* | awk -v t0="$t0" -v t1="$t1" '{ t = $5 + $6 / 1e6 } t >= t0 && t <= t1 { n++ } END { print n + 0 }')
		echo "$n $((u1 - u0)) $((s1 - s0)) $((r1 - r0)) $((c1 - c0))"
	done | awk -v tk="$tk" '{ n += $1; u += $2; s += $3; r += $4; c += $5 } END {
		if (n == 0) print "n/a n/a n/a n/a"; else printf "%.1f %.1f %.2f %.2f\n", u / tk / n * 1e6, s / tk / n * 1e6, r / n / 1024, c / n }'
}
# mark PHASE start|end: the server's clock at a phase's edges, to tell which
# compactions ran beside its lookups (beside, below)
declare -A PHASE_AT
mark() { PHASE_AT[$1.$2]=$("${PSQL[@]}" -At -c "SELECT clock_timestamp()"); }
# compactions_beside SOCKET-DIR PHASE: the widecol table's compactions on
# that server that ran (in part) between the PHASE's marks; BESIDE holds
# those counted before the server went away (the steady state's copy)
declare -A BESIDE
compactions_beside() {
	psql_at "$1" -At -c "SELECT count(*) FROM widecol.compaction_history WHERE relname LIKE '%wc_image_metadata'
		AND started < '${PHASE_AT[$2.end]}' AND finished > '${PHASE_AT[$2.start]}'"
}
wc_section "Point lookups by key right after loading, the workers still compacting (pgbench, 1 client, prepared, random existing keys; 2 runs of ${SECONDS_EACH}s, the tables' lookups interleaved)"
mark load start
lookup_rounds load
mark load end
runs_after=$("${PSQL[@]}" -At -c "SELECT count(*) FROM widecol.runs('wc_image_metadata')")
read -r hq h50 h95 h99 < <(latency heap_image_metadata load)
read -r wq w50 w95 w99 < <(latency wc_image_metadata load)
read -r hwf hwr < <(warmup heap_image_metadata load)
read -r wwf wwr < <(warmup wc_image_metadata load)

# The same once the workers have nothing left to merge, as a table is
# between loads: in two polls 10 s apart no runs pending, no worker busy
# with the table (pg_stat_activity: the runs of a merge under way are not
# pending any more) and the same runs; and not before the workers can have
# found the table idle (widecol.idle_compaction_delay after the load, plus
# two naptimes: one pass to note the last write, one to find nothing new);
# at most SETTLE s.
idle_after=$("${PSQL[@]}" -At -c "SELECT CASE WHEN current_setting('widecol.idle_compaction_delay')::interval > '0'
	THEN extract(epoch FROM current_setting('widecol.idle_compaction_delay')::interval + 2 * current_setting('widecol.naptime')::interval)::int ELSE 0 END")
wc_section "Waiting for the workers to settle (at most ${SETTLE}s; not before ${idle_after}s after the load: the idle merge)"
settle_start=$(wc_now)
quiet=0 last=""
while [ $(($(wc_now) - settle_start)) -lt "$SETTLE" ]; do
	read -r pending busy runs < <("${PSQL[@]}" -At -F ' ' -c "SELECT (SELECT pending_runs FROM widecol.compaction_stats('wc_image_metadata')),
		(SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'widecol: %wc_image_metadata%'),
		(SELECT string_agg(run_id::text, ',' ORDER BY run_id) FROM widecol.runs('wc_image_metadata'))")
	if [ "$pending" = 0 ] && [ "$busy" = 0 ] && [ "$runs" = "$last" ] &&
		[ $(($(wc_now) - load_done)) -ge "$idle_after" ]; then quiet=$((quiet + 1)); else quiet=0; fi
	last=$runs
	[ "$quiet" -ge 2 ] && break
	sleep 10
done
settled_after=$(($(wc_now) - settle_start))
[ "$quiet" -ge 2 ] && settled_note="settled after ${settled_after} s" || settled_note="NOT settled after ${settled_after} s ($pending runs pending)"
runs_settled=$("${PSQL[@]}" -At -c "SELECT count(*) FROM widecol.runs('wc_image_metadata')")
wc_info "workers $settled_note; $runs_settled runs"
# what the workers did between the end of the load and the settled lookups
# (kind idle: the idle merge of the runs size-tiered compaction left)
after_load=$("${PSQL[@]}" -At -c "SELECT coalesce(string_agg(format('%s %s->%s runs (%s MB in, %s s)', kind, runs_in, runs_out,
	round(bytes_in / 1048576.0), round(extract(epoch FROM finished - started)::numeric, 1)), '; ' ORDER BY started), 'none')
	FROM widecol.compaction_history WHERE relname LIKE '%wc_image_metadata' AND finished > '$load_done_at' AND started < clock_timestamp()")
wc_info "compactions after the load until settled: $after_load"
# settled means written out too: the workers' last merges leave their
# output to the checkpointer and the kernel, whose writes would share the
# device with the lookups (heap + btree's load was checkpointed above)
ck0=$(wc_now)
"${PSQL[@]}" -c CHECKPOINT >/dev/null
wc_info "checkpoint after the workers settled: $(($(wc_now) - ck0)) s"
wc_section "Point lookups by key, the workers settled"
mark settled start
lookup_rounds settled
mark settled end
read -r shq sh50 sh95 sh99 < <(latency heap_image_metadata settled)
read -r swq sw50 sw95 sw99 < <(latency wc_image_metadata settled)
read -r shwf shwr < <(warmup heap_image_metadata settled)
read -r swwf swwr < <(warmup wc_image_metadata settled)
for k in "heap $hq $h50 $h95 $h99 $shq $sh50 $sh95 $sh99" \
	"widecol $wq $w50 $w95 $w99 $swq $sw50 $sw95 $sw99"; do
	set -- $k
	echo "lookup,$1,$m,qps,$2"; echo "lookup,$1,$m,p50_ms,$3"; echo "lookup,$1,$m,p95_ms,$4"; echo "lookup,$1,$m,p99_ms,$5"
	echo "settled,$1,$m,qps,$6"; echo "settled,$1,$m,p50_ms,$7"; echo "settled,$1,$m,p95_ms,$8"; echo "settled,$1,$m,p99_ms,$9"
done >>"$csv"
for t in heap widecol; do
	table=$([ $t = heap ] && echo heap_image_metadata || echo wc_image_metadata)
	echo "lookup,$t,$m,over1ms_pct,$(slow_share "$table" load)"
	echo "settled,$t,$m,over1ms_pct,$(slow_share "$table" settled)"
	echo "lookup,$t,$m,misses,$(misses "$table" load)"
	echo "settled,$t,$m,misses,$(misses "$table" settled)"
done >>"$csv"
maxmem=$(cg_stat memory.max_usage_in_bytes)
failcnt=$(cg_stat memory.failcnt)
ooms=$(oom_kills)
restarts=$(grep -c 'terminated by signal\|all server processes terminated' "$inst/server.log" || true)
echo "server,server,$m,cgroup_max_usage_bytes,$maxmem" >>"$csv"

# phase_rows SECTION KEY PHASE: the csv rows of both tables' lookups of a
# phase (latency, p99 of the rounds' first 2 s, backend costs)
phase_rows() {
	local t table q p50 p95 p99 wf wr cu cs kb rc
	for t in heap widecol; do
		table=$([ $t = heap ] && echo heap_image_metadata || echo wc_image_metadata)
		read -r q p50 p95 p99 < <(latency "$table" "$3")
		read -r wf wr < <(warmup "$table" "$3")
		read -r cu cs kb rc < <(backend_costs "$table" "$3")
		echo "$1,$t,$2,qps,$q"; echo "$1,$t,$2,p50_ms,$p50"; echo "$1,$t,$2,p95_ms,$p95"; echo "$1,$t,$2,p99_ms,$p99"
		echo "$1,$t,$2,p99_first2s_ms,$wf"; echo "$1,$t,$2,user_us,$cu"; echo "$1,$t,$2,sys_us,$cs"; echo "$1,$t,$2,storage_kb,$kb"
		echo "$1,$t,$2,over1ms_pct,$(slow_share "$table" "$3")"
		echo "$1,$t,$2,misses,$(misses "$table" "$3")"
	done >>"$csv"
}

# Cold start: each table's lookups right after a restart of the server with
# the group's page cache emptied (memory.force_empty while the group has no
# process), as after a reboot or a failover to a standby; twice, each
# followed by a run of both tables' lookups interleaved.  Only with the
# memory group (dropping the page cache otherwise needs root).
# restart_cold GROUP DIR: the server of DIR/data, stopped if it runs,
# started again in GROUP with the group's page cache emptied
restart_cold() {
	local g=$1 d=$2
	[ ! -f "$d/data/postmaster.pid" ] || "$bin/pg_ctl" -D "$d/data" -m fast -w stop >/dev/null
	echo 0 >"$g/memory.force_empty" || wc_warn "could not empty the memory group's page cache"
	sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2/pg_ctl" -D "$3/data" -l "$3/server.log" -w start' \
		sh "$g" "$bin" "$d" >/dev/null
}
if [ -n "$CGROUP" ] && [ -w "$CGROUP/memory.force_empty" ]; then
	wc_section "Point lookups from a cold start (server restarted, its page cache emptied; twice, then ${SECONDS_EACH}s of the tables' lookups interleaved)"
	mark cold start
	for r in 1 2; do
		restart_cold "$CGROUP" "$inst"
		run_mixed "cold.$r" "$SECONDS_EACH"
		printf '.'
	done
	echo
	mark cold end
	phase_rows cold "$m" cold
fi

# Steady state: each table on a server of its own, as a user running one of
# them has it.  In the interleaved runs above the two tables share shared
# buffers and the page cache; here each has them to itself: the instance is
# copied (stopped, cp -a) into a second memory group of the same limit, the
# main server serves the heap table's lookups and the copy widecol's, both
# at the same time, so that the machine's slow spells (the virtual disk's,
# a worker's merge, the checkpointer) fall on both, as in the interleaved
# runs.  Tables measured one after the other on one server did not: three
# blocks of each, taking turns, gave widecol's p99 at 0.70-1.23x heap +
# btree's in stop 53's seven runs, and a user CPU time per lookup that
# moved by half between two blocks of the same table; two servers of
# widecol side by side are level within 4% (stop 54).  Two lookups are in
# flight here (one per server) where the other phases have one, on 2
# cores, so both tables' latencies are higher than theirs.  Both servers
# start with their page cache emptied, then 2 x SECONDS_EACH s of lookups
# not counted fill the caches, then 2 runs of SECONDS_EACH s are counted.
# One backend serves one table here, so this phase also tells what a
# lookup costs it (CPU, storage reads).
steady_note=""
if [ -n "$CGROUP" ] && [ -n "$CGROUP2" ] && [ -w "$CGROUP2/memory.force_empty" ]; then
	wc_section "Point lookups in a steady state (each table on a server of its own, a copy in a second memory group of $MEMORY; both servers' lookups at the same time, 2 x ${SECONDS_EACH}s not counted, then 2 runs of ${SECONDS_EACH}s)"
	"$bin/pg_ctl" -D "$inst/data" -m fast -w stop >/dev/null
	need_kb=$(du -sk "$inst/data" | cut -f1)
	free_kb=$(df -Pk "$inst" | awk 'NR == 2 { print $4 }')
	if [ "$free_kb" -gt $((need_kb + 1048576)) ]; then
		mkdir -p "$inst/two"
		# copied from inside the second group: the page cache the copy
		# fills is charged to a group (and emptied with it), not left
		# outside both limits for both servers to read for free (it was, in
		# the first run of this phase: 0.01 kB a lookup from storage)
		sh -c 'echo $$ >"$1/cgroup.procs" && exec cp -a "$2/data" "$2/two/data"' sh "$CGROUP2" "$inst"
		echo "unix_socket_directories = '$inst/two'" >>"$inst/two/data/postgresql.conf"
		wc_info "copied the instance ($((need_kb / 1024)) MB) to $inst/two"
		restart_cold "$CGROUP" "$inst"
		restart_cold "$CGROUP2" "$inst/two"
		mark steady start
		for r in warmup.steady.1 warmup.steady.2 steady.1 steady.2; do
			run_lookups heap_image_metadata "$r" "$SECONDS_EACH" "$inst" &
			p1=$!
			run_lookups wc_image_metadata "$r" "$SECONDS_EACH" "$inst/two" &
			p2=$!
			wait "$p1" && wait "$p2" || wc_die "the steady state's lookups failed"
			printf '.'
		done
		echo
		mark steady end
		# the compactions beside it are the copy's (it serves widecol's lookups)
		BESIDE[steady]=$(compactions_beside "$inst/two" steady)
		"$bin/pg_ctl" -D "$inst/two/data" -m fast -w stop >/dev/null
		rm -rf "$inst/two"
		phase_rows steady "$m" steady
	else
		restart_cold "$CGROUP" "$inst"
		steady_note="skipped: $((free_kb / 1024)) MB free for a copy of $((need_kb / 1024)) MB"
	fi
else
	steady_note="skipped: needs a second memory group"
fi
[ -z "$steady_note" ] || wc_warn "steady state $steady_note"

# The settled lookups again at other memory limits (--sweep): the group's
# limit changes, shared_buffers stays, so the page cache alone grows or
# shrinks; the main limit's settled rounds are the curve's point at MEMORY
# (csv: section memory, the limit in MB where the other sections have the
# million).
if [ -n "$SWEEP" ] && [ -n "$CGROUP" ]; then
	phase_rows memory $((MEM_BYTES / 1048576)) settled
	mark sweep start
	wc_section "Point lookups, workers settled, at other memory limits (shared_buffers stays ${SB_MB}MB; 2 runs of ${SECONDS_EACH}s per limit, the tables' lookups interleaved)"
	for size in ${SWEEP//,/ }; do
		if ! echo "$(to_bytes "$size")" >"$CGROUP/memory.limit_in_bytes" 2>/dev/null; then
			wc_warn "could not set the memory limit to $size; skipped"
			continue
		fi
		printf '%8s ' "$size"
		lookup_rounds "mem$size"
		phase_rows memory $(($(to_bytes "$size") / 1048576)) "mem$size"
	done
	mark sweep end
	echo "$MEM_BYTES" >"$CGROUP/memory.limit_in_bytes" 2>/dev/null || wc_warn "could not set the memory limit back to $MEMORY"
elif [ -n "$SWEEP" ]; then
	wc_warn "--sweep skipped: no memory group"
fi
# the compactions that ran (in part) beside each phase's lookups: a
# "settled" table can still start a merge later (the workers look every
# naptime), and its lookups then share the 2 cores and the device with it
beside=""
for ph in load settled cold steady sweep; do
	[ -n "${PHASE_AT[$ph.start]:-}" ] && [ -n "${PHASE_AT[$ph.end]:-}" ] || continue
	beside+="${beside:+, }$ph ${BESIDE[$ph]:-$(compactions_beside "$inst" "$ph")}"
done
# a crash or OOM kill during the sweep counts too
ooms=$(oom_kills)
restarts=$(grep -c 'terminated by signal\|all server processes terminated' "$inst/server.log" || true)

wc_section "Results"
awk -F, -v rows="$ROWS" -v chunk="$CHUNK" -v note="$LIMIT_NOTE" -v sums="$([ -n "$DATA_CHECKSUMS" ] && echo on || echo off)" -v conf="${WIDECOL_BIGDATA_CONF:-}" -v hsize="$hsize" -v hidx="$hidx" -v wsize="$wsize" -v wlive="$wlive" \
	-v rb="$runs_before" -v ra="$runs_after" -v hq="$hq" -v wq="$wq" -v h50="$h50" -v w50="$w50" \
	-v h95="$h95" -v w95="$w95" -v h99="$h99" -v w99="$w99" -v maxmem="$maxmem" -v failcnt="$failcnt" \
	-v ooms="$ooms" -v restarts="$restarts" -v secs="$SECONDS_EACH" -v steady_note="$steady_note" -v compactions="$compactions" \
	-v shq="$shq" -v swq="$swq" -v sh50="$sh50" -v sw50="$sw50" -v sh95="$sh95" -v sw95="$sw95" -v sh99="$sh99" -v sw99="$sw99" \
	-v rs="$runs_settled" -v settled="$settled_note" -v beside="$beside" -v after_load="$after_load" \
	-v warm="$hwf $wwf $hwr $wwr $shwf $swwf $shwr $swwr" '
	$1 == "ingest" && $4 == "seconds" { s[$2, ++k[$2]] = $5; tot[$2] += $5 }
	$1 == "ingest" && $4 == "rows" && $2 == "heap" { r[++kr] = $5 }
	$1 == "ingest" && $4 == "wal_bytes" { wal[$2] += $5 }
	$1 == "cold" || $1 == "steady" { ph[$1, $2, $4] = $5; has[$1] = 1 }
	$4 == "misses" { ph[$1, $2, $4] = $5 }
	$4 == "over1ms_pct" { slow[$1, $2] = $5 }
	# the share of lookups over 1 ms of a phase (lookup, settled, cold, steady)
	function slow_row(phase) {
		if ((phase, "heap") in slow)
			printf "%-34s %14.2f %14.2f %8.2f\n", "  lookups over 1 ms (%)", slow[phase, "heap"], slow[phase, "widecol"],
				(slow[phase, "heap"] > 0 ? slow[phase, "widecol"] / slow[phase, "heap"] : 0)
	}
	# one line of a phase that phase_rows wrote: heap + btree, widecol, ratio
	function ratio_row(label, phase, metric, fmt) {
		printf "%-34s " fmt " " fmt " %8.2f\n", label, ph[phase, "heap", metric], ph[phase, "widecol", metric],
			ph[phase, "widecol", metric] / ph[phase, "heap", metric]
	}
	# a phase that phase_rows wrote (cold, steady)
	function phase_block(phase, title, first2s) {
		printf "%s:\n", title
		ratio_row("  p50 (ms)", phase, "p50_ms", "%14.3f")
		ratio_row("  p99 (ms)", phase, "p99_ms", "%14.3f")
		if (first2s)
			ratio_row("    p99, first 2 s of each run (ms)", phase, "p99_first2s_ms", "%14.3f")
		slow_row(phase)
		ratio_row("  lookups per second (1 / mean)", phase, "qps", "%14.1f")
		measured_row("  shared-buffer misses per lookup", phase, "misses", "%14.2f")
		measured_row("  backend CPU per lookup, user (us)", phase, "user_us", "%14.1f")
		measured_row("  storage reads per lookup (kB)", phase, "storage_kb", "%14.2f")
	}
	# ratio_row where the phase measured the metric (the interleaved runs
	# have no backend costs, short rounds none at all)
	function measured_row(label, phase, metric, fmt) {
		if (ph[phase, "heap", metric] != "n/a" && ph[phase, "heap", metric] + 0 > 0)
			ratio_row(label, phase, metric, fmt)
	}
	# p99 of the first 2 s of each run and of the rest (i = 0: after loading, 4: settled)
	function warm_rows(i,   w) {
		split(warm, w, " ")
		printf "%-34s %14.3f %14.3f %8.2f\n", "    p99, first 2 s of each run (ms)", w[i + 1], w[i + 2], w[i + 2] / w[i + 1]
		printf "%-34s %14.3f %14.3f %8.2f\n", "    p99, the rest (ms)", w[i + 3], w[i + 4], w[i + 4] / w[i + 3]
	}
	END {
		n = kr
		printf "bigdata: %d image_metadata rows keyed by md5 uuids (random key order), COPY in chunks of %d\n", rows, chunk
		printf "%s; data checksums %s\n", note, sums
		printf "widecol background workers on (production defaults%s); heap: uuid PRIMARY KEY, autovacuum off, VACUUM ANALYZE before the lookups\n\n", conf == "" ? "" : ", then " conf
		printf "%-34s %14s %14s %8s %10s\n", "", "heap+btree", "widecol", "ratio", "target"
		fh = r[1] / s["heap", 1]; fw = r[1] / s["widecol", 1]
		lh = r[n] / s["heap", n]; lw = r[n] / s["widecol", n]
		printf "%-34s %14.0f %14.0f %8.2f\n", "ingest rows/s, first chunk", fh, fw, fw / fh
		printf "%-34s %14.0f %14.0f %8.2f %10s\n", "ingest rows/s, last chunk", lh, lw, lw / lh, (lw / lh >= 5 ? ">= 5 met" : ">= 5 MISSED")
		for (j = (n > 3 ? n - 2 : 1); j <= n; j++) { r3 += r[j]; h3 += s["heap", j]; w3 += s["widecol", j] }
		printf "%-34s %14.0f %14.0f %8.2f\n", "ingest rows/s, last 3 chunks", r3 / h3, r3 / w3, h3 / w3
		printf "%-34s %14.0f %14.0f %8.2f\n", "ingest rows/s, all rows", rows / tot["heap"], rows / tot["widecol"], tot["heap"] / tot["widecol"]
		printf "%-34s %14.1f %14.1f %8.2f\n", "load seconds", tot["heap"], tot["widecol"], tot["widecol"] / tot["heap"]
		printf "%-34s %14.1f %14.1f %8.2f\n", "WAL written (MB)", wal["heap"] / 1048576, wal["widecol"] / 1048576, wal["widecol"] / wal["heap"]
		printf "%-34s %14.1f %14.1f %8.2f\n", "bytes (MB, pg_total_relation_size)", hsize / 1048576, wsize / 1048576, wsize / hsize
		printf "%-34s %14s %14.1f %8.2f\n", "  widecol live runs only (MB)", "", wlive / 1048576, wlive / hsize
		printf "%-34s %14.1f %14.1f\n", "bytes per row", hsize / rows, wsize / rows
		printf "point lookups right after loading (workers compacting):\n"
		printf "%-34s %14.3f %14.3f %8.2f %10s\n", "  p50 (ms)", h50, w50, w50 / h50, (w50 / h50 <= 1 ? "<= 1 met" : "<= 1 MISSED")
		printf "%-34s %14.3f %14.3f %8.2f\n", "  p95 (ms)", h95, w95, w95 / h95
		printf "%-34s %14.3f %14.3f %8.2f %10s\n", "  p99 (ms)", h99, w99, w99 / h99, (w99 / h99 <= 1 ? "<= 1 met" : "<= 1 MISSED")
		warm_rows(0)
		slow_row("lookup")
		printf "%-34s %14.1f %14.1f %8.2f\n", "  lookups per second (1 / mean)", hq, wq, wq / hq
		measured_row("  shared-buffer misses per lookup", "lookup", "misses", "%14.2f")
		printf "point lookups, workers settled (%s):\n", settled
		printf "%-34s %14.3f %14.3f %8.2f %10s\n", "  p50 (ms)", sh50, sw50, sw50 / sh50, (sw50 / sh50 <= 1 ? "<= 1 met" : "<= 1 MISSED")
		printf "%-34s %14.3f %14.3f %8.2f\n", "  p95 (ms)", sh95, sw95, sw95 / sh95
		printf "%-34s %14.3f %14.3f %8.2f %10s\n", "  p99 (ms)", sh99, sw99, sw99 / sh99, (sw99 / sh99 <= 1 ? "<= 1 met" : "<= 1 MISSED")
		warm_rows(4)
		slow_row("settled")
		printf "%-34s %14.1f %14.1f %8.2f\n", "  lookups per second (1 / mean)", shq, swq, swq / shq
		measured_row("  shared-buffer misses per lookup", "settled", "misses", "%14.2f")
		if ("cold" in has)
			phase_block("cold", "point lookups from a cold start (server restarted, its page cache emptied)", 1)
		if ("steady" in has)
			phase_block("steady", "point lookups in a steady state (each table on a server of its own, both at the same time, after their own lookups filled the caches)", 0)
		else if (steady_note != "")
			printf "\nsteady state %s\n", steady_note
		printf "\nheap index %.1f MB; widecol runs: %d after loading, %d after the first lookups, %d settled\n", hidx / 1048576, rb, ra, rs
		printf "lookups: 2 runs of %d s a phase, each transaction picking one table at random (the steady state: each table on a server of its own with the same memory limit, both servers at the same time, 2 x %d s not counted, then 2 runs of %d s)\n", secs, secs, secs
		printf "widecol background workers during the load: %s\n", compactions
		printf "compactions after the load until settled: %s\n", after_load
		printf "compactions beside the lookups (running during part of the lookups of a phase): %s\n", beside
		printf "server memory group: max usage %s MB, limit hits (failcnt) %s, OOM kills %s; server crash restarts %d\n",
			(maxmem == "n/a" ? maxmem : sprintf("%.0f", maxmem / 1048576)), failcnt, ooms, restarts
	}' "$csv" | tee "$OUT/bigdata.txt"
{
	echo
	echo "per chunk (rows/s; ratio = widecol / heap):"
	printf '%8s %12s %12s %7s %8s\n' million heap_rows/s wc_rows/s ratio wc_runs
	awk -F, '$1 == "ingest" { v[$3, $2, $4] = $5; if (!($3 in seen)) { seen[$3] = 1; o[++n] = $3 } }
		END { for (i = 1; i <= n; i++) { m = o[i]; h = v[m, "heap", "rows"] / v[m, "heap", "seconds"]; w = v[m, "widecol", "rows"] / v[m, "widecol", "seconds"]
			printf "%8s %12.0f %12.0f %7.2f %8d\n", m, h, w, w / h, v[m, "widecol", "runs"] } }' "$csv"
} | tee -a "$OUT/bigdata.txt"

if grep -q '^memory,' "$csv"; then
	{
		echo
		echo "point lookups by memory limit, workers settled (shared_buffers ${SB_MB}MB throughout; ratio = widecol / heap):"
		printf '%9s %9s %9s %7s %9s %9s %7s %9s %9s\n' limit_MB heap_p50 wc_p50 ratio heap_p99 wc_p99 ratio heap_miss wc_miss
		awk -F, '$1 == "memory" { v[$3, $2, $4] = $5; lim[$3] = 1 }
			END { n = 0; for (l in lim) o[++n] = l + 0
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (o[j] > o[i]) { x = o[i]; o[i] = o[j]; o[j] = x }
				for (i = 1; i <= n; i++) { l = o[i]
					printf "%9d %9.3f %9.3f %7.2f %9.3f %9.3f %7.2f %9s %9s\n", l,
						v[l, "heap", "p50_ms"], v[l, "widecol", "p50_ms"], v[l, "widecol", "p50_ms"] / v[l, "heap", "p50_ms"],
						v[l, "heap", "p99_ms"], v[l, "widecol", "p99_ms"], v[l, "widecol", "p99_ms"] / v[l, "heap", "p99_ms"],
						v[l, "heap", "misses"], v[l, "widecol", "misses"] } }' "$csv"
	} | tee -a "$OUT/bigdata.txt"
	python3 - "$csv" "$OUT/bigdata-memory.png" "$SB_MB" <<'EOF' || wc_warn "no memory plot (python3-matplotlib missing?)"
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
v = {}
for r in csv.DictReader(open(sys.argv[1])):
    if r["section"] == "memory":
        v[(r["table"], int(r["million"]), r["metric"])] = r["value"]
lims = sorted({k[1] for k in v})
fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
for ax, (m, name) in zip(axes, [("p50_ms", "p50 (ms)"), ("p99_ms", "p99 (ms)"), ("misses", "shared-buffer misses per lookup")]):
    for t, label, mk in [("heap", "heap + btree", "o-"), ("widecol", "widecol", "s-")]:
        pts = [(l, float(v[(t, l, m)])) for l in lims if v.get((t, l, m), "n/a") not in ("n/a", "")]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], mk, label=label)
    ax.set_xlabel("server memory limit (MB, page cache included)")
    ax.set_title(name, fontsize=10)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
axes[0].legend()
fig.suptitle("Point lookups by key, workers settled, by memory limit (shared_buffers %s MB throughout)" % sys.argv[3], fontsize=10)
plt.tight_layout()
plt.savefig(sys.argv[2], dpi=110)
print("plot:", sys.argv[2])
EOF
fi

python3 - "$csv" "$OUT/bigdata.png" "$MEMORY" "${CGROUP:+cgroup}" <<'EOF' || wc_warn "no plot (python3-matplotlib missing?)"
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
v = {}
for r in csv.DictReader(open(sys.argv[1])):
    v[(r["section"], r["table"], r["million"], r["metric"])] = r["value"]
ms = sorted({k[2] for k in v if k[0] == "ingest"}, key=float)
fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(15, 4.5), gridspec_kw={"width_ratios": [2.2, 1, 1]})
for t, name, mk in [("heap", "heap + btree (uuid primary key)", "o-"), ("widecol", "widecol", "s-")]:
    a1.plot([float(m) for m in ms],
            [float(v[("ingest", t, m, "rows")]) / float(v[("ingest", t, m, "seconds")]) / 1e3 for m in ms], mk, label=name)
limit = ("server under a %s memory limit" % sys.argv[3]) if sys.argv[4] else "no memory limit (cgroup not writable)"
a1.set_xlabel("rows loaded (millions)")
a1.set_ylabel("COPY throughput of the chunk (thousand rows/s)")
a1.set_title("Ingest, random uuid keys, %s" % limit, fontsize=10)
a1.set_ylim(bottom=0)
a1.grid(alpha=0.3)
a1.legend()
last = ms[-1]
labels = ["p50", "p95", "p99"]
bars = [("lookup", "heap", "heap + btree, after load"), ("lookup", "widecol", "widecol, after load (compacting)"),
        ("settled", "heap", "heap + btree, settled"), ("settled", "widecol", "widecol, workers settled"),
        ("steady", "heap", "heap + btree, steady state"), ("steady", "widecol", "widecol, steady state")]
# the steady state only where the run measured it
bars = [b for b in bars if all((b[0], b[1], last, p + "_ms") in v for p in labels)]
w = 0.8 / len(bars)
for i, (phase, t, name) in enumerate(bars):
    vals = [float(v[(phase, t, last, p + "_ms")]) for p in labels]
    a2.bar([x + (i - (len(bars) - 1) / 2) * w for x in range(3)], vals, w, label=name)
a2.set_xticks(range(3))
a2.set_xticklabels(labels)
a2.set_ylabel("latency (ms)")
a2.set_title("Point lookup by key", fontsize=10)
a2.legend(fontsize=7)
# what a lookup costs the backend serving it, settled (rounds too short give none)
def num(k):
    try:
        return float(v.get(k, "n/a"))
    except ValueError:
        return None
costs = [("user_us", "user CPU (µs)"), ("sys_us", "system CPU (µs)"), ("storage_kb", "storage reads (kB)")]
for i, (t, name) in enumerate([("heap", "heap + btree"), ("widecol", "widecol")]):
    vals = [num(("steady", t, last, m)) for m, _ in costs]
    if None in vals:
        continue
    a3.bar([x + (i - 0.5) * 0.35 for x in range(3)], vals, 0.35, label=name,
           color=["tab:green", "tab:red"][i])
a3.set_xticks(range(3))
a3.set_xticklabels([n for _, n in costs], fontsize=8)
a3.set_title("Per lookup, steady state (each table on a server of its own)", fontsize=10)
a3.legend(fontsize=7)
plt.tight_layout()
plt.savefig(sys.argv[2], dpi=110)
print("plot:", sys.argv[2])
EOF
