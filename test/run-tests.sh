#!/usr/bin/env bash
# shellcheck disable=SC2317,SC2119  # SC2317: functions reached via traps and "suite_$s"
# widecol: THE test command.
#
#   sudo bash test/run-tests.sh [regress] [isolation] [tap]
#
# As root: installs the missing Debian packages, copies the tree (without
# .git) to a temp dir owned by the user "postgres", builds it there as that
# user, runs `make install`, then runs each suite as "postgres" (initdb
# refuses root).  As a non-root user: no apt and no user switch; builds in a
# temp copy and installs only if it can (see test/lib.sh).
#
# Suites (all options live in the Makefile; this script only switches the
# other two suites off on the make command line):
#   regress    make installcheck ISOLATION= TAP_TESTS=   (tests in test/regress_schedule)
#   isolation  make installcheck REGRESS= TAP_TESTS=     (if test/isolation_schedule is non-empty)
#   tap        make installcheck REGRESS= ISOLATION=     (if test/t/*.pl exist)
# Each suite runs even if an earlier one failed.  Failure artifacts are
# copied to test-results/<suite>/ in this tree and the diffs are printed.
#
# Output ends with exactly one line "N passed, N failed" (sum over suites);
# the exit status is non-zero if anything failed, including a failed build
# or a suite that could not run at all (each counts as one failure).
#
# Environment knobs:
#   WIDECOL_KEEP_WORKDIR=1        keep the temp copy (path is printed)
#   WIDECOL_DIFF_LINES=400        lines of each diff/log printed on failure
#   WIDECOL_TIMEOUT_REGRESS=1500  per-suite time limits, seconds
#   WIDECOL_TIMEOUT_ISOLATION=900
#   WIDECOL_TIMEOUT_TAP=2100
#   PROVE_FLAGS=...               extra prove flags (default --timer)
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=test/lib.sh
. "$HERE/lib.sh"
wc_clean_env

DIFF_LINES=${WIDECOL_DIFF_LINES:-400}
RESULTS=$ROOT/test-results
T_START=$(wc_now)

SUITES=()
for a in "$@"; do
	case $a in
	regress | isolation | tap) SUITES+=("$a") ;;
	-h | --help)
		sed -n '3,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0 ;;
	*) wc_die "unknown argument '$a' (expected: regress, isolation, tap)" ;;
	esac
done
[ ${#SUITES[@]} -gt 0 ] || SUITES=(regress isolation tap)

TOTAL_PASS=0
TOTAL_FAIL=0
SUMMARY=() # "name|passed|failed|seconds|status"

finish() {
	local line name p f s st
	wc_section "Summary"
	printf '%-10s %7s %7s %8s  %s\n' suite passed failed time status
	for line in "${SUMMARY[@]}"; do
		IFS='|' read -r name p f s st <<<"$line"
		printf '%-10s %7s %7s %8s  %s\n' "$name" "$p" "$f" "$s" "$st"
	done
	printf 'total time %s\n' "$(wc_fmt_secs $(($(wc_now) - T_START)))"
	[ -d "$RESULTS" ] && printf 'failure artifacts: %s\n' "$RESULTS"
	printf '%d passed, %d failed\n' "$TOTAL_PASS" "$TOTAL_FAIL"
	[ "$TOTAL_FAIL" -eq 0 ]
	exit $?
}

WORK=
cleanup() {
	[ -n "$WORK" ] || return 0
	wc_stop_postmasters_under "$WORK"
	if [ "${WIDECOL_KEEP_WORKDIR:-0}" = 1 ]; then
		wc_info "kept work dir: $WORK" >&2
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT TERM

# save_artifacts SUITE PATH...: copy the PATHs that exist (files or dirs)
# into test-results/SUITE/, owned like the tree.
save_artifacts() {
	local dest=$RESULTS/$1 f
	shift
	mkdir -p "$dest"
	for f in "$@"; do
		[ -e "$f" ] && cp -r "$f" "$dest/" 2>/dev/null
	done
	if wc_is_root; then chown -R --reference="$ROOT" "$RESULTS" 2>/dev/null; fi
}
print_head() { # FILE [TITLE]
	local f=$1 n
	[ -s "$f" ] || return 0
	n=$(wc -l <"$f")
	printf -- '---- %s (%d lines%s) ----\n' "${2:-$f}" "$n" \
		"$([ "$n" -gt "$DIFF_LINES" ] && echo ", first $DIFF_LINES shown")"
	head -n "$DIFF_LINES" "$f"
}
print_tail() { # FILE LINES [TITLE]
	[ -s "$1" ] || return 0
	printf -- '---- %s (last %d lines) ----\n' "${3:-$1}" "$2"
	tail -n "$2" "$1"
}

# ---------------------------------------------------------------- setup --
rm -rf "$RESULTS"
wc_section "Setup ($(id -un), PG_CONFIG=$PG_CONFIG)"
setup_failed() { # a setup step that fails counts as one failure
	SUMMARY+=("setup|-|1|-|FAILED ($1)")
	TOTAL_FAIL=$((TOTAL_FAIL + 1))
	finish
}
if wc_is_root; then
	wc_install_deps || setup_failed "apt-get install"
	wc_ensure_user || setup_failed "useradd $WC_RUN_USER"
fi
WORK=$(wc_make_workdir test) || setup_failed "cannot create a temp dir in $WC_TMPBASE"
export WC_HOME=$WORK
# Temp files of the suites (pg_regress and TAP socket dirs) go under WORK too,
# so that nothing is left in /tmp.
mkdir -p "$WORK/tmp" && { ! wc_is_root || chown "$WC_RUN_USER:" "$WORK/tmp"; }
export TMPDIR=$WORK/tmp
TREE=$WORK/tree
wc_copy_tree "$ROOT" "$TREE" || setup_failed "cannot copy $ROOT to $TREE"
if wc_is_root; then RUN_AS=$WC_RUN_USER; else RUN_AS=$(id -un); fi
wc_info "work dir: $TREE (suites run as $RUN_AS)"

# ---------------------------------------------------------------- build --
wc_section "Build"
t0=$(wc_now)
if ! wc_build "$TREE" "$WORK/build.log"; then
	printf -- '---- build errors (from %s) ----\n' "test-results/build.log"
	grep -E ': (fatal )?error:|No rule to make target|undefined reference' "$WORK/build.log" |
		sort -u | head -n 40
	mkdir -p "$RESULTS" && cp "$WORK/build.log" "$RESULTS/"
	if wc_is_root; then chown -R --reference="$ROOT" "$RESULTS" 2>/dev/null; fi
	SUMMARY+=("build|-|1|$(wc_fmt_secs $(($(wc_now) - t0)))|FAILED (see output above)")
	TOTAL_FAIL=1
	finish
fi
SUMMARY+=("build|-|-|$(wc_fmt_secs $(($(wc_now) - t0)))|ok")

# ---------------------------------------------------------------- suites --
# run_suite NAME TIMEOUT MAKE-ARGS...  -> sets RC, SECS; output in $WORK/NAME.log
run_suite() {
	local name=$1 limit=$2 t
	shift 2
	wc_section "Suite: $name"
	t=$(wc_now)
	(cd "$TREE" && wc_as_user timeout -k 60 "$limit" \
		make --no-print-directory installcheck PG_CONFIG="$PG_CONFIG" "$@") 2>&1 |
		tee "$WORK/$name.log"
	RC=${PIPESTATUS[0]}
	SECS=$(($(wc_now) - t))
	wc_stop_postmasters_under "$TREE"
	if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then wc_info "$name: timed out after ${limit}s"; fi
	wc_info "$name: finished in $(wc_fmt_secs "$SECS") (exit status $RC)"
}

# record NAME PASSED FAILED: add to totals.  A timeout adds one failure (the
# test that hung); a non-zero exit with no failed test, or no test result at
# all, means the suite itself broke: one failure.
record() {
	local name=$1 p=$2 f=$3 status=ok
	if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then
		f=$((f + 1)) status="ERROR: timed out" # the test that hung
	elif [ "$RC" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1 status="ERROR: suite did not run to completion (exit $RC)"
	elif [ "$RC" -eq 0 ] && [ $((p + f)) -eq 0 ]; then
		f=1 status="ERROR: no test results found in the output"
	elif [ "$f" -gt 0 ]; then
		status="FAILED"
	fi
	[ "$status" = ok ] || status="$status (artifacts: test-results/$name)"
	wc_info "$name: $p passed, $f failed"
	TOTAL_PASS=$((TOTAL_PASS + p))
	TOTAL_FAIL=$((TOTAL_FAIL + f))
	SUMMARY+=("$name|$p|$f|$(wc_fmt_secs "$SECS")|$status")
	[ "$status" = ok ]
}

# pg_regress / pg_isolation_regress (PG 15) print one line per test:
#   "test NAME                     ... ok           41 ms"
#   "test NAME                     ... FAILED       29 ms"
#   "     NAME                     ... ok  ..."   (inside a parallel group)
#   "test NAME ... FAILED (test process exited with exit code 2) ..."
#   "test NAME ... failed (ignored)"              (counted as passed)
# and end with " All N tests passed." or " M of N tests failed.".
count_pg_regress() { # LOG -> "passed failed"
	local p f
	p=$(grep -cE '^(test |     )?[[:space:]]*[^[:space:]]+[[:space:]]+\.\.\. (ok|failed \(ignored\))' "$1")
	f=$(grep -cE '^(test |     )?[[:space:]]*[^[:space:]]+[[:space:]]+\.\.\. FAILED' "$1")
	echo "$p $f"
}

# suite_pg_regress NAME SCHEDULE WHY-SKIPPED TIMEOUT OUTDIR MAKE-ARGS...: a
# suite driven by pg_regress (which writes its results into OUTDIR); skipped
# when SCHEDULE lists no test.
suite_pg_regress() {
	local name=$1 schedule=$2 why=$3 limit=$4 out=$5 p f
	shift 5
	if ! grep -q '[^[:space:]]' "$schedule" 2>/dev/null; then
		SUMMARY+=("$name|-|-|-|skipped ($why)")
		return 0
	fi
	run_suite "$name" "$limit" "$@"
	read -r p f < <(count_pg_regress "$WORK/$name.log")
	record "$name" "$p" "$f" && return 0
	save_artifacts "$name" "$WORK/$name.log" "$out/regression.diffs" "$out/regression.out" \
		"$out/results" "$out/log"
	print_head "$out/regression.diffs" "$name: regression.diffs"
	print_tail "$out/log/postmaster.log" 60 "$name: postmaster.log"
}

suite_regress() {
	suite_pg_regress regress "$TREE/test/regress_schedule" "test/regress_schedule empty" \
		"${WIDECOL_TIMEOUT_REGRESS:-1500}" "$TREE" ISOLATION= TAP_TESTS=
}

suite_isolation() {
	suite_pg_regress isolation "$TREE/test/isolation_schedule" "no test/isolation_schedule" \
		"${WIDECOL_TIMEOUT_ISOLATION:-900}" "$TREE/test/output_iso" REGRESS= TAP_TESTS=
}

# prove (TAP) is counted at the level of individual assertions ("ok N" /
# "not ok N"), from prove's summary rather than from verbose output:
#   "Files=2, Tests=5,  2 wallclock secs ..."         -> Tests = assertions run
#   "t/001_a.pl (Wstat: 256 (exited 1) Tests: 3 Failed: 1)"  (Test Summary Report)
# failed = sum of "Failed: n"; a file listed in the report with "Failed: 0"
# (died, bad plan, non-zero exit) adds one failure; passed = Tests - failed
# assertions.  No "Files=" line (bail out, prove did not start) is an error.
suite_tap() {
	if ! compgen -G "$TREE/test/t/*.pl" >/dev/null; then
		SUMMARY+=("tap|-|-|-|skipped (no test/t/*.pl)")
		return 0
	fi
	run_suite tap "${WIDECOL_TIMEOUT_TAP:-2100}" REGRESS= ISOLATION= PROVE_FLAGS="${PROVE_FLAGS:---timer}"
	local log=$WORK/tap.log total failed_asserts broken_files p f files file base
	total=$(sed -nE 's/^Files=[0-9]+, Tests=([0-9]+),.*/\1/p' "$log" | tail -n 1)
	failed_asserts=$(sed -nE 's/^[^ ].* \(Wstat: .*Tests: [0-9]+ Failed: ([0-9]+)\)$/\1/p' "$log" |
		awk '{s += $1} END {print s + 0}')
	broken_files=$(grep -cE '^[^ ].* \(Wstat: .*Tests: [0-9]+ Failed: 0\)$' "$log")
	if [ -z "$total" ]; then
		p=0 f=$((failed_asserts + broken_files))
		[ "$RC" -eq 0 ] && RC=1 # no summary: prove did not finish
	else
		p=$((total - failed_asserts)) f=$((failed_asserts + broken_files))
	fi
	record tap "$p" "$f" && return 0
	save_artifacts tap "$log" "$TREE/tmp_check/log"
	# Failing files from the report; for each, the end of its regress_log
	# and of the server logs of its nodes.
	files=$(sed -nE 's/^([^ ].*\.pl) \(Wstat: .*/\1/p' "$log")
	for file in $files; do
		base=$(basename "$file" .pl)
		print_tail "$TREE/tmp_check/log/regress_log_$base" 80 "tap: regress_log_$base"
		for f in "$TREE/tmp_check/log/${base}"_*.log; do
			[ -e "$f" ] && print_tail "$f" 40 "tap: $(basename "$f")"
		done
	done
}

for s in "${SUITES[@]}"; do
	"suite_$s"
done
finish
