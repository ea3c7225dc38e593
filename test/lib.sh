# shellcheck shell=bash
# Shared helpers for test/run-tests.sh and test/demo.sh.  Sourced, not run.
#
# The pattern both scripts follow:
#   as root:      install Debian packages (only the missing ones), create the
#                 unprivileged user, copy the tree to a temp dir it owns,
#                 build there as that user, `make install` as root;
#   as non-root:  no apt, no user switch; build in a temp copy and install
#                 only if the PostgreSQL directories are writable, else use
#                 the widecol that is already installed.
# initdb and pg_regress --temp-instance refuse to run as root, hence the user.

WC_PG_MAJOR=15
WC_PG_BINDIR=/usr/lib/postgresql/$WC_PG_MAJOR/bin
# pg_config of PG 15 itself: /usr/bin/pg_config may point at another major.
# A PG_CONFIG given in the environment (a relocated installation) also names
# the binaries the demo and the benchmarks start.
if [ -n "${PG_CONFIG:-}" ] && [ -x "$PG_CONFIG" ]; then
	WC_PG_BINDIR=$("$PG_CONFIG" --bindir)
elif [ -z "${PG_CONFIG:-}" ]; then
	if [ -x "$WC_PG_BINDIR/pg_config" ]; then
		PG_CONFIG=$WC_PG_BINDIR/pg_config
	else
		PG_CONFIG=pg_config
	fi
fi
WC_DEPS=("postgresql-server-dev-$WC_PG_MAJOR" liblz4-dev libzstd-dev libisal-dev libipc-run-perl make gcc)
WC_RUN_USER=${WIDECOL_TEST_USER:-postgres}
WC_TMPBASE=${WIDECOL_TMPDIR:-/tmp}

wc_section() { printf '\n==== %s ====\n' "$*"; }
wc_info()    { printf '%s\n' "$*"; }
wc_warn()    { printf 'WARNING: %s\n' "$*" >&2; }
wc_die()     { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

wc_is_root() { [ "$(id -u)" -eq 0 ]; }

# Elapsed-time helpers (whole seconds).
wc_now() { date +%s; }
wc_fmt_secs() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# Make runs reproducible: drop libpq variables that would redirect the
# clients, and use a locale that always exists on Debian (UTF8 encoding;
# tests that need byte order use COLLATE "C").  PostgreSQL's TAP modules
# delete LC_ALL themselves, so LANG is what reaches initdb there.
wc_clean_env() {
	unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGSERVICE PGSERVICEFILE \
		PGOPTIONS PGDATA PGPASSWORD PGPASSFILE PGAPPNAME PGSSLMODE PGTZ \
		PGDATESTYLE PGCLIENTENCODING PGTARGETSESSIONATTRS
	unset LC_ALL LC_COLLATE LC_CTYPE LC_MESSAGES LC_MONETARY LC_NUMERIC LC_TIME LANGUAGE
	export LANG=C.UTF-8
}

# wc_install_deps [extra-package...]
# Installs whatever is missing, quietly.  apt-get update runs only when there
# are no package lists yet, or when an install from the current lists fails.
wc_install_deps() {
	local pkgs=("${WC_DEPS[@]}" "$@") missing=() p log rc
	[ -x "$WC_PG_BINDIR/initdb" ] || pkgs+=("postgresql-$WC_PG_MAJOR")
	for p in "${pkgs[@]}"; do
		# shellcheck disable=SC2016  # ${...} is dpkg-query's format, not ours
		if [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" != installed ]; then
			missing+=("$p")
		fi
	done
	if [ ${#missing[@]} -eq 0 ]; then
		wc_info "dependencies: all installed (${pkgs[*]})"
		return 0
	fi
	wc_info "dependencies: installing ${missing[*]}"
	log=$(mktemp)
	export DEBIAN_FRONTEND=noninteractive
	rc=0
	if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
		apt-get -q update >>"$log" 2>&1 || rc=$?
	fi
	if [ $rc -eq 0 ] && ! apt-get -q install -y --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
		wc_info "dependencies: install failed with the current package lists; running apt-get update"
		{ apt-get -q update && apt-get -q install -y --no-install-recommends "${missing[@]}"; } >>"$log" 2>&1 || rc=$?
	fi
	if [ $rc -ne 0 ]; then
		tail -n 30 "$log" >&2
		rm -f "$log"
		wc_warn "could not install: ${missing[*]}"
		return 1
	fi
	rm -f "$log"
	wc_info "dependencies: installed"
}

# The unprivileged user that runs initdb and the suites (root only).
wc_ensure_user() {
	id -u "$WC_RUN_USER" >/dev/null 2>&1 && return 0
	wc_info "creating system user $WC_RUN_USER"
	useradd --system --user-group --home-dir /var/lib/postgresql \
		--shell /bin/bash "$WC_RUN_USER"
}

# wc_make_workdir NAME -> prints a fresh temp dir, owned by the run user.
wc_make_workdir() {
	local d
	d=$(mktemp -d "$WC_TMPBASE/widecol-$1.XXXXXX") || return 1
	chmod 755 "$d"
	if wc_is_root; then chown "$WC_RUN_USER:" "$d"; fi
	printf '%s\n' "$d"
}

# wc_copy_tree SRC DST: the source tree without .git and without build or
# test outputs (the copy is always built from scratch).
wc_copy_tree() {
	local src=$1 dst=$2
	mkdir -p "$dst"
	tar -C "$src" \
		--exclude=./.git --exclude=./test-results \
		--exclude='*.o' --exclude='*.so' --exclude='*.bc' --exclude=./.deps \
		--exclude=./results --exclude='./regression.*' --exclude='./tmp_*' \
		--exclude=./test/output_iso --exclude=./log \
		-cf - . | tar -C "$dst" --no-same-owner -xf - || return 1
	if wc_is_root; then chown -R "$WC_RUN_USER:" "$dst"; fi
}

# wc_as_user CMD...: run as the unprivileged user (HOME is the workdir so that
# no dotfiles of root or of the user leak in); plain exec if not root.
wc_as_user() {
	if wc_is_root; then
		runuser -u "$WC_RUN_USER" -- env HOME="${WC_HOME:-/tmp}" "$@"
	else
		"$@"
	fi
}

# wc_build DIR LOG: `make` as the run user, `make install` as root (or as the
# current user if the PostgreSQL directories are writable).  Output goes to
# stdout and to LOG.  Returns non-zero on failure.
wc_build() {
	local dir=$1 log=$2 jobs pkglib share
	jobs=$(nproc 2>/dev/null || echo 2)
	(cd "$dir" && wc_as_user make --no-print-directory -j"$jobs" PG_CONFIG="$PG_CONFIG") 2>&1 | tee "$log"
	[ "${PIPESTATUS[0]}" -eq 0 ] || return 1
	pkglib=$("$PG_CONFIG" --pkglibdir) share=$("$PG_CONFIG" --sharedir)
	if wc_is_root || { [ -w "$pkglib" ] && [ -w "$share/extension" ]; }; then
		(cd "$dir" && make --no-print-directory install PG_CONFIG="$PG_CONFIG") 2>&1 | tee -a "$log"
		[ "${PIPESTATUS[0]}" -eq 0 ] || return 1
	else
		wc_warn "not root and $pkglib is not writable: skipping 'make install';"
		wc_warn "testing the widecol already installed there (run as root to install this tree)"
	fi
}

# Stop every postmaster whose data directory lies under DIR (left behind by
# a suite that timed out or was interrupted).  pg_ctl signals exactly the pid
# in that directory's postmaster.pid.
wc_stop_postmasters_under() {
	local pidfile
	[ -d "$1" ] || return 0
	while IFS= read -r -d '' pidfile; do
		wc_as_user "$WC_PG_BINDIR/pg_ctl" -D "$(dirname "$pidfile")" -m immediate -w -t 30 stop \
			>/dev/null 2>&1 || true
	done < <(find "$1" -name postmaster.pid -print0 2>/dev/null)
}
