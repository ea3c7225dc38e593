# Shared pieces of the benchmarks in test/bench/ (sourced).
HERE_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE_LIB/../.." && pwd)
. "$ROOT/test/lib.sh"
wc_clean_env

# bench_options OPTION=VAR... -- ARGS...: parse a script's command line ARGS.
# OPTION=VAR is an option that takes a value into VAR (which holds its
# default), OPTION=VAR=VALUE a flag that sets VAR to VALUE; anything else on
# the command line is an error.  Then sets BENCH_ARGS to every option but
# --out with its value (flags only when given), for the run stage, and
# BENCH_OUT to the value of --out (empty without one).
bench_options() {
	local specs=() spec opt var val
	while [ "$1" != -- ]; do
		specs+=("$1")
		shift
	done
	shift
	while [ $# -gt 0 ]; do
		for spec in "${specs[@]}" ""; do
			[ -n "$spec" ] || wc_die "unknown argument $1"
			IFS='=' read -r opt var val <<<"$spec"
			[ "$1" = "$opt" ] || continue
			if [[ $spec == *=*=* ]]; then
				printf -v "$var" '%s' "$val"
				shift
			else
				[ $# -ge 2 ] || wc_die "$opt takes a value"
				printf -v "$var" '%s' "$2"
				shift 2
			fi
			break
		done
	done
	BENCH_ARGS=() BENCH_OUT=""
	for spec in "${specs[@]}"; do
		IFS='=' read -r opt var val <<<"$spec"
		if [ "$opt" = --out ]; then
			BENCH_OUT=${!var}
		elif [[ $spec != *=*=* ]]; then
			BENCH_ARGS+=("$opt" "${!var}")
		elif [ "${!var}" = "$val" ]; then
			BENCH_ARGS+=("$opt")
		fi
	done
}

# bench_main SCRIPT OPTION=VAR... -- ARGS...: bench_options, then, as root,
# install dependencies, build and install widecol from a copy of the tree,
# and re-run test/SCRIPT as user postgres with WIDECOL_BENCH_STAGE=run and
# BENCH_ARGS (and --out, made absolute); does not return then.  Returns
# (after creating the --out directory, if the script has one) when the
# caller should go on itself: the run stage, or a non-root user.
bench_main() {
	local script=$1 out
	shift
	bench_options "$@"
	out=$BENCH_OUT
	if ! wc_is_root || [ "${WIDECOL_BENCH_STAGE:-}" = run ]; then
		[ -z "$out" ] || mkdir -p "$out"
		return 0
	fi
	wc_install_deps python3 python3-matplotlib postgresql-contrib || wc_die "could not install dependencies"
	wc_ensure_user
	WORK=$(wc_make_workdir bench)
	trap 'wc_stop_postmasters_under "$WORK"; rm -rf "$WORK"' EXIT
	wc_copy_tree "$ROOT" "$WORK/tree"
	wc_build "$WORK/tree" "$WORK/build.log" >"$WORK/build.out" 2>&1 || { cat "$WORK/build.out"; wc_die "build failed"; }
	if [ -n "$out" ]; then
		out=$(realpath -m "$out")	# the run stage works in a copy of the tree
		mkdir -p "$out" && chown -R postgres "$out"	# and the results already there
		BENCH_ARGS+=(--out "$out")
	fi
	cd "$WORK"
	wc_as_user env WIDECOL_BENCH_STAGE=run WIDECOL_TMPDIR="$WC_TMPBASE" \
		bash "$WORK/tree/test/$script" "${BENCH_ARGS[@]}"
	exit $?
}

# bench_initdb DATADIR SOCKETDIR PORT SHARED_BUFFERS MAX_WAL_SIZE [LINE...]:
# initdb a benchmark server's data directory (widecol preloaded, Unix socket
# only, no autovacuum, checkpoints every 30 minutes or MAX_WAL_SIZE; data
# checksums if the script's DATA_CHECKSUMS is set) and append each LINE to
# its postgresql.conf.
bench_initdb() {
	local data=$1 sock=$2 port=$3 sb=$4 wal=$5
	shift 5
	"$WC_PG_BINDIR/initdb" -D "$data" --auth=trust --no-locale --encoding=UTF8 \
		${DATA_CHECKSUMS:+--data-checksums} >/dev/null
	{
		cat <<-EOF
			shared_preload_libraries = 'widecol'
			listen_addresses = ''
			unix_socket_directories = '$sock'
			port = $port
			shared_buffers = '$sb'
			max_wal_size = '$wal'
			checkpoint_timeout = '30min'
			autovacuum = off
		EOF
		printf '%s\n' "$@"
	} >>"$data/postgresql.conf"
}

# bench_instance: a throwaway instance sized for benchmarks; sets inst, bin, PSQL.
bench_instance() {
	bin=$WC_PG_BINDIR
	inst=$(mktemp -d "${WC_TMPBASE:-/tmp}/widecol-bench.XXXXXX")
	trap '"$bin/pg_ctl" -D "$inst/data" -m fast -w stop >/dev/null 2>&1 || true; rm -rf "$inst"' EXIT
	bench_initdb "$inst/data" "$inst" 5999 1GB 8GB "maintenance_work_mem = '256MB'" \
		"# benchmarks compact when they mean to (amplification.sh turns workers on)" \
		"widecol.max_workers = 0"
	"$bin/pg_ctl" -D "$inst/data" -l "$inst/server.log" -w start >/dev/null
	PSQL=("$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$inst" -p 5999 -d postgres)
}

# bench_copy_chunk TABLE FILE -> "seconds|walbytes" of COPY TABLE FROM FILE
# (CSV) after a CHECKPOINT, through PSQL
bench_copy_chunk() {
	"${PSQL[@]}" -At <<-EOF
		CHECKPOINT;
		SELECT pg_current_wal_insert_lsn() AS l0, clock_timestamp() AS t0 \gset
		COPY $1 FROM '$2' WITH (FORMAT csv);
		SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric, 3),
		       pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'l0'::pg_lsn);
	EOF
}

# bench_generate ROWS CHUNKS: image rows as CSV chunk files $inst/chunk.NNN
bench_generate() {
	local rows=$1 chunks=$2
	wc_section "Generating $rows rows in $chunks chunks"
	python3 "$ROOT/test/gen/image_rows.py" --rows "$rows" --devices 200 --days 30 \
		--seed 7 --table images |
		split -l $(((rows + chunks - 1) / chunks)) -d -a 3 - "$inst/chunk."
}

# The design brief's device_daily_images, as widecol and as heap + btree key.
bench_tables() {
	"${PSQL[@]}" <<-'EOF'
		CREATE EXTENSION widecol;
		CREATE TABLE heap_images (
		    device_id text, day_bucket date, capture_time timestamptz, image_id uuid,
		    object_store text, object_key text, width int, height int, content_hash text,
		    PRIMARY KEY (device_id, day_bucket, capture_time, image_id));
		CREATE TABLE wc_images (
		    device_id text, day_bucket date, capture_time timestamptz, image_id uuid,
		    object_store text, object_key text, width int, height int, content_hash text
		) USING widecol WITH (widecol.partition_key = 'device_id, day_bucket',
		                      widecol.clustering_key = 'capture_time DESC, image_id DESC');
	EOF
}

# bench_partition_scripts DIR TABLE: the pgbench scripts of the two read
# shapes reads.sh and smallruns.sh share, over device_daily_images rows:
# a.sql, the newest 100 rows of one partition (zipfian devices); b.sql, the
# newest 100 over 7 day buckets of one device.
bench_partition_scripts() {
	local d=$1 t=$2
	mkdir -p "$d"
	cat >"$d/a.sql" <<-EOF
		\set dev random_zipfian(1, 200, 1.1)
		\set day random(0, 29)
		SELECT capture_time, image_id, object_key FROM $t
		 WHERE device_id = 'cam-' || lpad(:dev::text, 4, '0') AND day_bucket = date '2025-01-01' + :day::int
		 ORDER BY capture_time DESC, image_id DESC LIMIT 100;
	EOF
	cat >"$d/b.sql" <<-EOF
		\set dev random(1, 200)
		\set day random(0, 23)
		SELECT capture_time, image_id, object_key FROM $t
		 WHERE device_id = 'cam-' || lpad(:dev::text, 4, '0')
		   AND day_bucket BETWEEN date '2025-01-01' + :day::int AND date '2025-01-01' + :day::int::int + 6
		 ORDER BY capture_time DESC, image_id DESC LIMIT 100;
	EOF
}
