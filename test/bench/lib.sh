# Shared pieces of the benchmarks in test/bench/ (sourced).
HERE_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE_LIB/../.." && pwd)
. "$ROOT/test/lib.sh"
wc_clean_env

# bench_main SCRIPT OUT ARGS...: as root, install dependencies, build and
# install widecol from a copy of the tree, and re-run test/SCRIPT as user
# postgres with WIDECOL_BENCH_STAGE=run (with --out OUT unless OUT is
# empty); returns 1 when the caller should go on itself (the run stage, or a
# non-root user).
bench_main() {
	local script=$1 out=$2
	shift 2
	if ! wc_is_root || [ "${WIDECOL_BENCH_STAGE:-}" = run ]; then
		return 1
	fi
	wc_install_deps python3 python3-matplotlib postgresql-contrib || wc_die "could not install dependencies"
	wc_ensure_user
	WORK=$(wc_make_workdir bench)
	trap 'wc_stop_postmasters_under "$WORK"; rm -rf "$WORK"' EXIT
	wc_copy_tree "$ROOT" "$WORK/tree"
	wc_build "$WORK/tree" "$WORK/build.log" >"$WORK/build.out" 2>&1 || { cat "$WORK/build.out"; wc_die "build failed"; }
	if [ -n "$out" ]; then
		out=$(realpath -m "$out")	# the run stage works in a copy of the tree
		mkdir -p "$out" && chown postgres "$out"
		set -- "$@" --out "$out"
	fi
	cd "$WORK"
	wc_as_user env WIDECOL_BENCH_STAGE=run WIDECOL_TMPDIR="$WC_TMPBASE" \
		bash "$WORK/tree/test/$script" "$@"
	exit $?
}

# bench_instance: a throwaway instance sized for benchmarks; sets inst, bin, PSQL.
bench_instance() {
	bin=$WC_PG_BINDIR
	inst=$(mktemp -d "${WC_TMPBASE:-/tmp}/widecol-bench.XXXXXX")
	trap '"$bin/pg_ctl" -D "$inst/data" -m fast -w stop >/dev/null 2>&1 || true; rm -rf "$inst"' EXIT
	"$bin/initdb" -D "$inst/data" --auth=trust --no-locale --encoding=UTF8 >/dev/null
	cat >>"$inst/data/postgresql.conf" <<-EOF
		shared_preload_libraries = 'widecol'
		listen_addresses = ''
		unix_socket_directories = '$inst'
		port = 5999
		shared_buffers = '1GB'
		max_wal_size = '8GB'
		checkpoint_timeout = '30min'
		maintenance_work_mem = '256MB'
		autovacuum = off
		# benchmarks compact when they mean to (amplification.sh turns workers on)
		widecol.max_workers = 0
	EOF
	"$bin/pg_ctl" -D "$inst/data" -l "$inst/server.log" -w start >/dev/null
	PSQL=("$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$inst" -p 5999 -d postgres)
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
