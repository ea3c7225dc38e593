#!/usr/bin/env bash
# widecol: THE demo command.
#
#   sudo bash test/demo.sh [--rows N] [--seed S] [--devices D] [--days K] [--start-date YYYY-MM-DD]
#
# As root: installs the missing Debian packages, builds and installs widecol
# from a temp copy of this tree (as test/run-tests.sh does), then runs the
# demo as the user "postgres".  As a non-root user: runs the demo against
# the widecol already installed.
#
# The demo starts a throwaway PostgreSQL instance in a temp dir (widecol
# preloaded, a free port on 127.0.0.1, unix socket in the temp dir), creates
# the tables of test/demo/schema.sql, loads N generated images
# (test/gen/image_rows.py, default 200000) and their tags with \copy, runs
# test/demo/queries.sql with timing, prints table sizes, and stops and
# removes the instance on exit.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=test/lib.sh
. "$HERE/lib.sh"
wc_clean_env

ROWS=200000 SEED=42 DEVICES=50 DAYS=7 START_DATE=2025-01-01
ARGS=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	--rows) ROWS=${2:?--rows needs a number}; shift 2 ;;
	--seed) SEED=${2:?}; shift 2 ;;
	--devices) DEVICES=${2:?}; shift 2 ;;
	--days) DAYS=${2:?}; shift 2 ;;
	--start-date) START_DATE=${2:?}; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) wc_die "unknown argument '$1' (see --help)" ;;
	esac
done
for v in ROWS SEED DEVICES DAYS; do
	[[ ${!v} =~ ^[0-9]+$ ]] || wc_die "--${v,,} must be a non-negative integer"
done
date -d "$START_DATE" +%F >/dev/null 2>&1 || wc_die "--start-date must be YYYY-MM-DD"

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

	wc_section "Schema (test/demo/schema.sql)"
	"${PSQL[@]}" -f "$ROOT/test/demo/schema.sql"

	wc_section "Loading $ROWS images into device_daily_images"
	load device_daily_images "${gen[@]}" --table images
	wc_section "Loading the tags of those images into images_by_tag"
	load images_by_tag "${gen[@]}" --table tags

	# Query a day inside the generated range and the first camera.
	day=$(date -d "$START_DATE + $((DAYS > 1 ? 1 : 0)) day" +%F)
	device=cam-0001
	wc_section "Queries (test/demo/queries.sql, device $device, day $day)"
	"${PSQL[@]}" -v device="$device" -v day="$day" -f "$ROOT/test/demo/queries.sql"

	wc_section "Done in $(wc_fmt_secs $(($(wc_now) - T_DEMO)))"
}

# load TABLE GENERATOR-COMMAND...: pipe the generator's CSV into \copy.
load() {
	local table=$1 t0 t1 n
	shift
	t0=$EPOCHREALTIME
	"$@" | "${PSQL[@]}" -c "\\copy $table FROM pstdin WITH (FORMAT csv)"
	t1=$EPOCHREALTIME
	n=$("${PSQL[@]}" -Atc "SELECT count(*) FROM $table")
	awk -v n="$n" -v a="$t0" -v b="$t1" -v t="$table" 'BEGIN {
		s = b - a; printf "%s: %d rows in %.1f s (%d rows/s, generator included)\n", t, n, s, (s > 0 ? n / s : 0) }'
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
wc_install_deps python3 || wc_die "could not install the dependencies"
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

# The demo proper runs as the unprivileged user, from the copy it can read.
cd "$WORK"
wc_as_user env WIDECOL_DEMO_STAGE=instance WIDECOL_TMPDIR="$WC_TMPBASE" \
	bash "$WORK/tree/test/demo.sh" "${ARGS[@]}"
