# 016_wal_consistency: widecol's own WAL records are checked by
# wal_consistency_checking (the resource manager has an rm_mask).  The
# setting is 'all,widecol': PostgreSQL 15 expands 'all' when it reads the
# configuration at server start, before shared_preload_libraries registers
# widecol's resource manager, so 'all' alone covers only the built-in ones
# (and heap, generic WAL and full-page images are all widecol writes
# besides its own records); naming widecol defers the check until it is
# loaded.
# A primary with the setting and a streaming standby; on the primary:
# level-0 appends and flushes (a generation leaving the metapage frees its
# pages with widecol FREE_PAGES records), bulk writes, a major compaction,
# the reclaim of the compacted runs' pages and their reuse by new runs, and
# a whole-run drop of expired rows.  The standby must replay it all without
# an inconsistent page and return the same rows; pg_waldump must show
# widecol records carrying a page image for WAL verification (without
# rm_mask PostgreSQL adds none and checks nothing).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;

my $primary = widecol_node('primary', q{
widecol.max_workers = 0
wal_consistency_checking = 'all,widecol'
autovacuum = off
}, allows_streaming => 1);
$primary->safe_psql('postgres', 'CREATE EXTENSION widecol');
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;

sub p { return $primary->safe_psql('postgres', $_[0]); }
my $start_lsn = p('SELECT pg_current_wal_insert_lsn()');

p(q{
CREATE TABLE t (pk int, ck int, v text) USING widecol
  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
CREATE TABLE ex (k int, v text) USING widecol
  WITH (widecol.partition_key = 'k', widecol.default_ttl = '1 day');
});
# level 0, flushed three times: the second and third flush free the pages
# of generations the first ones retired (no snapshot needs them any more)
for my $round (1 .. 3)
{
	p(join('', map { "INSERT INTO t VALUES ($_ % 10, $_, 'l0 $round $_');" } 1 .. 200));
	# a statement's few rows: as many as fit on the tail page in one
	# record (L0_ADD_ITEMS), the rest on new pages
	p("INSERT INTO t SELECT g % 10, g, repeat('many $round ', 20) || g FROM generate_series(1000, 1200) g");
	p("SELECT widecol.flush('t')");
}
# bulk writes: runs; a major compaction drops them; the next passes free
# their pages and new runs reuse them
p(q{INSERT INTO t SELECT g % 10, g, repeat('bulk', 20) || g FROM generate_series(1, 20000) g});
p(q{INSERT INTO t SELECT g % 10, g, 'bulk2 ' || g FROM generate_series(10000, 30000) g});
p(q{SELECT widecol.compact('t', true)});
p(q{SELECT widecol.compact('t')});
p(q{INSERT INTO t SELECT g % 10, g, 'reuse ' || g FROM generate_series(40000, 45000) g});
p(q{SELECT widecol.compact('t', true)});
p(q{SELECT widecol.compact('t')});
is(p(q{SELECT count(*) > 0 FROM widecol.compactions WHERE "table" = 't'::regclass AND kind = 'major'}), 't',
	'major compactions ran');
# whole-run drop: rows written (test clock) long ago with a 1-day TTL
p(q{
SET widecol.debug_write_time = 1577836800;  -- 2020-01-01
INSERT INTO ex SELECT g, 'expired' FROM generate_series(1, 500) g;
SELECT widecol.flush('ex');
RESET widecol.debug_write_time;
INSERT INTO ex SELECT g, 'live' FROM generate_series(1001, 1010) g;
SELECT widecol.flush('ex');
});
p(q{SET widecol.gc_grace = 0; SELECT widecol.compact('ex')});
is(p(q{SELECT sum(runs_dropped_whole) FROM widecol.compactions WHERE "table" = 'ex'::regclass}), '1',
	'an expired run was dropped whole');
p(q{SELECT widecol.compact('ex'); SELECT widecol.compact('t')});
my $end_lsn = p('SELECT pg_current_wal_insert_lsn()');

$primary->wait_for_catchup($standby, 'replay', $end_lsn);
for my $q ('SELECT count(*), md5(string_agg(format(\'%s|%s|%s\', pk, ck, v), \',\' ORDER BY pk, ck)) FROM t',
	'SELECT count(*), md5(string_agg(v, \',\' ORDER BY k)) FROM ex')
{
	is($standby->safe_psql('postgres', $q), p($q), "standby equals primary: $q");
}
is($standby->safe_psql('postgres', "SELECT bool_and(ok) FROM widecol.verify('t')"), 't', 'verify on the standby');

# the widecol records were checked: they carry a page image for verification
my ($stdout, $stderr);
IPC::Run::run [ 'pg_waldump', '-p', $primary->data_dir . '/pg_wal', '-s', $start_lsn, '-e', $end_lsn ],
  '>', \$stdout, '2>', \$stderr;
my @free = grep { /rmgr: (widecol|custom147)/ && /FPW for WAL verification/ } split /\n/, $stdout;
ok(@free > 0, scalar(@free) . ' widecol records checked by wal_consistency_checking');
my @items = grep { /rmgr: (widecol|custom147)/ && /L0_ADD_ITEMS|\(30\)/ && /FPW for WAL verification/ } split /\n/, $stdout;
ok(@items >= 3, scalar(@items) . ' records of several level-0 versions checked');
my @newpages = grep { /rmgr: (widecol|custom147)/ && /L0_NEW_PAGE|\(40\)/ && /FPW for WAL verification/ } split /\n/, $stdout;
ok(@newpages >= 3, scalar(@newpages) . ' records of new level-0 pages checked');

$primary->stop;
$standby->stop;
my $log = slurp_file($standby->logfile);
unlike($log, qr/inconsistent page/, 'no inconsistent page on the standby');
unlike($log, qr/PANIC|FATAL:  .*startup/, 'the standby replayed without failing');
done_testing();
