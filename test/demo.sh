#!/usr/bin/env bash
# widecol: THE demo command.
#
#   sudo bash test/demo.sh [--rows N] [--seed S] [--devices D] [--days K] [--start-date YYYY-MM-DD]
#                          [--out DIR]
#
# As root: installs the missing Debian packages (python3-matplotlib for the
# chart too), builds and installs widecol from a temp copy of this tree (as
# test/run-tests.sh does), then runs the demo as the user "postgres".  As a
# non-root user: runs the demo against the widecol already installed.
#
# The demo starts a throwaway PostgreSQL instance in a temp dir (widecol
# preloaded, a free port on 127.0.0.1, unix socket in the temp dir), builds an
# image store with widecol.create_image_store (test/demo/schema.sql), loads N
# generated images (test/gen/image_rows.py --table store, default 1000000)
# into img.images with \copy in chunks of 25000 rows (a progress bar with
# rows/s; the store's query tables are filled by its triggers in each
# chunk's transaction), runs the queries of test/demo/queries.sql (each with
# its result and time, and an EXPLAIN ANALYZE of a bucketed query), then the
# report of test/demo/report.sql (widecol.table_stats, reconciliation of the
# query tables, capacity estimates, images per device per day, tag
# distribution), draws a PNG chart of the daily counts into DIR (default
# demo-output/ in this tree) with test/demo/chart.py, and stops and removes
# the instance on exit.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=test/lib.sh
. "$HERE/lib.sh"
wc_clean_env

ROWS=1000000 SEED=42 DEVICES=50 DAYS=7 START_DATE=2025-01-01 OUT=$ROOT/demo-output CHUNK=25000
ARGS=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	--rows) ROWS=${2:?--rows needs a number}; shift 2 ;;
	--seed) SEED=${2:?}; shift 2 ;;
	--devices) DEVICES=${2:?}; shift 2 ;;
	--days) DAYS=${2:?}; shift 2 ;;
	--start-date) START_DATE=${2:?}; shift 2 ;;
	--out) OUT=${2:?}; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) wc_die "unknown argument '$1' (see --help)" ;;
	esac
done
for v in ROWS SEED DEVICES DAYS; do
	[[ ${!v} =~ ^[0-9]+$ ]] || wc_die "--${v,,} must be a non-negative integer"
done
date -d "$START_DATE" +%F >/dev/null 2>&1 || wc_die "--start-date must be YYYY-MM-DD"
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac

# ------------------------------------------------------------ instance --
# Runs as the unprivileged user, from the tree in $ROOT.
run_demo() {
	local bin=$WC_PG_BINDIR inst port day device
	local gen=(python3 "$ROOT/test/gen/image_rows.py" --seed "$SEED" --devices "$DEVICES"
		--days "$DAYS" --start-date "$START_DATE" --rows "$ROWS")
	T_DEMO=$(wc_now)

	wc_section "Starting a throwaway PostgreSQL $WC_PG_MAJOR instance"
	inst=$(mktemp -d "$WC_TMPBASE/widecol-demo-pg.XXXXXX")
	INST=$inst
	trap stop_instance EXIT
	trap 'exit 130' INT TERM
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$bin/initdb" -D "$inst/data" --auth=trust --no-locale --encoding=UTF8 --no-instructions \
		>"$inst/initdb.log" 2>&1 || { cat "$inst/initdb.log"; wc_die "initdb failed"; }
	cat >>"$inst/data/postgresql.conf" <<-EOF
		# widecol demo
		shared_preload_libraries = 'widecol'
		listen_addresses = '127.0.0.1'
		port = $port
		unix_socket_directories = '$inst'
		max_wal_size = '2GB'
	EOF
	if ! "$bin/pg_ctl" -D "$inst/data" -l "$inst/server.log" -w -t 60 start >/dev/null; then
		wc_die "the instance did not start (is widecol installed? run as root to build and install it)"
	fi
	wc_info "data dir $inst/data, port $port, socket dir $inst"
	wc_info "connect while it runs: psql -h $inst -p $port postgres"
	PSQL=("$bin/psql" -X -v ON_ERROR_STOP=1 -P pager=off -h "$inst" -p "$port" -d postgres)

	wc_section "Schema: an image store (test/demo/schema.sql)"
	"${PSQL[@]}" -f "$ROOT/test/demo/schema.sql"

	wc_section "Loading $ROWS images into img.images (and its query tables)"
	load_store "${gen[@]}" --table store

	# Query a day inside the generated range and the first camera.
	day=$(date -d "$START_DATE + $((DAYS > 1 ? 1 : 0)) day" +%F)
	device=cam-0001
	wc_section "Queries (test/demo/queries.sql, device $device, day $day, tag crack)"
	"${PSQL[@]}" -v device="$device" -v day="$day" -v tag=crack -f "$ROOT/test/demo/queries.sql"

	wc_section "Report (test/demo/report.sql)"
	mkdir -p "$OUT"
	"${PSQL[@]}" -v counts_csv="$OUT/daily_counts.csv" -f "$ROOT/test/demo/report.sql"

	wc_section "Chart of the daily counts"
	if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
		/usr/bin/python3 "$ROOT/test/demo/chart.py" "$OUT/daily_counts.csv" "$OUT/daily_counts.png"
	else
		wc_info "no chart: matplotlib is missing (apt-get install python3-matplotlib); the counts are in $OUT/daily_counts.csv"
	fi

	wc_section "Done in $(wc_fmt_secs $(($(wc_now) - T_DEMO)))"
}

# load_store GENERATOR-COMMAND...: the generator's CSV into img.images, one
# \copy (one transaction, one run of the query table triggers) per chunk of
# $CHUNK rows, with a progress bar.
load_store() {
	local t0=$EPOCHREALTIME t1 n
	export DEMO_T0=$t0 DEMO_ROWS=$ROWS DEMO_CHUNK=$CHUNK DEMO_TTY=0
	[ -t 1 ] && DEMO_TTY=1
	DEMO_PSQL=$(printf '%q ' "${PSQL[@]}")
	export DEMO_PSQL
	export -f load_chunk
	"$@" --quiet | SHELL=/bin/bash split -l "$CHUNK" -a 6 -d --filter=load_chunk -
	[ "$DEMO_TTY" = 1 ] && echo
	t1=$EPOCHREALTIME
	n=$("${PSQL[@]}" -Atc "SELECT count(*) FROM img.images")
	awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN {
		s = b - a; printf "img.images: %d rows in %.1f s (%d rows/s, generator and query tables included)\n", n, s, (s > 0 ? n / s : 0) }'
	"${PSQL[@]}" -Atc "SELECT 'img.device_daily_images: ' || count(*) || ' rows' FROM img.device_daily_images
	                   UNION ALL SELECT 'img.images_by_tag: ' || count(*) || ' rows' FROM img.images_by_tag
	                   UNION ALL SELECT 'img.batch_images: ' || count(*) || ' rows' FROM img.batch_images"
}

# load_chunk: run by split for each chunk (stdin; $FILE = x000000, x000001...)
load_chunk() {
	eval "$DEMO_PSQL" -q -c "'\\copy img.images FROM pstdin WITH (FORMAT csv)'" || return 1
	awk -v k="${FILE#x}" -v c="$DEMO_CHUNK" -v total="$DEMO_ROWS" -v t0="$DEMO_T0" -v now="$EPOCHREALTIME" -v tty="$DEMO_TTY" 'BEGIN {
		done = (k + 1) * c; if (done > total) done = total
		pct = total ? done / total : 1; w = 30; bar = ""
		for (i = 0; i < w; i++) bar = bar (i < int(pct * w + 0.5) ? "#" : "-")
		s = now - t0
		printf "%s[%s] %9d / %d images (%3d%%)  %7d rows/s  %6.1f s%s", (tty ? "\r" : ""), bar, done, total, pct * 100, (s > 0 ? done / s : 0), s, (tty ? "" : "\n")
	}'
}

stop_instance() {
	local rc=$?
	[ -n "${INST:-}" ] || return 0
	if [ "$rc" -ne 0 ]; then
		printf -- '---- server log (last 30 lines) ----\n'
		tail -n 30 "$INST/server.log" 2>/dev/null
		printf 'demo FAILED (exit status %d)\n' "$rc"
	fi
	if [ -f "$INST/data/postmaster.pid" ]; then
		"$WC_PG_BINDIR/pg_ctl" -D "$INST/data" -m fast -w -t 60 stop >/dev/null 2>&1 ||
			"$WC_PG_BINDIR/pg_ctl" -D "$INST/data" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$INST"
	wc_info "instance stopped and removed"
}

if [ "${WIDECOL_DEMO_STAGE:-}" = instance ]; then
	run_demo
	exit 0
fi

# ------------------------------------------------------------ build ----
if ! wc_is_root; then
	wc_info "not root: using the widecol installed in $("$PG_CONFIG" --pkglibdir)"
	run_demo
	exit 0
fi

wc_section "Dependencies"
wc_install_deps python3 python3-matplotlib || wc_die "could not install the dependencies"
wc_ensure_user
WORK=$(wc_make_workdir demo)
export WC_HOME=$WORK
trap 'wc_stop_postmasters_under "$WORK"; rm -rf "$WORK"' EXIT
wc_copy_tree "$ROOT" "$WORK/tree"
wc_section "Build and install"
wc_build "$WORK/tree" "$WORK/build.log" >"$WORK/build.out" 2>&1 || {
	cat "$WORK/build.out"
	wc_die "build failed"
}
grep -E ': (warning|error):' "$WORK/build.out" || true
wc_info "built and installed into $("$PG_CONFIG" --pkglibdir)"

# The demo proper runs as the unprivileged user, from the copy it can read;
# it writes the chart into $OUT, which it must be able to write.
mkdir -p "$OUT"
chown "$WC_RUN_USER:" "$OUT"
cd "$WORK"
wc_as_user env WIDECOL_DEMO_STAGE=instance WIDECOL_TMPDIR="$WC_TMPBASE" \
	bash "$WORK/tree/test/demo.sh" "${ARGS[@]}" --out "$OUT"
