
# Copyright: widecol authors.  TAP test, PostgreSQL 15.
#
# 003_standby: physical replication of widecol tables.
#
# The primary runs with wal_consistency_checking = 'all,widecol' (this covers the
# generic WAL records of level 0 and the metapage, the full-page records of
# runs, and the heap records of the manifest): every replayed record is
# checked against the page image the primary had.  A streaming hot standby
# replays a workload of single-row inserts, COPY, updates (incl. key
# changes), deletes, flushes (explicit, and inside writes with a 16kB level
# 0, incl. a rolled-back transaction), subtransactions, TRUNCATE (committed
# and rolled back), DROP TABLE and ALTER TABLE SET TABLESPACE.  After each
# catch-up, every table on the standby must equal the primary's: row count
# and md5 of the full contents with their TIDs, in scan order (a physical
# replica has the same pages, so the same TIDs and the same key order).
#
# A pg_basebackup of the primary, taken while a transaction with
# uncommitted inserts and COPY is open and followed by more writes, is
# restored into a third node without streaming: it must start and return
# exactly the data committed at backup time.
#
# On the standby, widecol.flush() must fail cleanly with a read-only error,
# and INSERT/UPDATE/DELETE/COPY/TRUNCATE with PostgreSQL's normal read-only
# errors; the standby keeps replaying afterwards.  The primary is then
# crashed and restarted (crash recovery also runs the consistency checks),
# and the standby follows it.  No log may report an inconsistent page.
#
# Last, a REPEATABLE READ transaction on the standby must keep seeing its
# snapshot (or be cancelled by a recovery conflict) while the primary
# flushes the table twice.
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
allow_in_place_tablespaces = on
# no autovacuum snapshots holding back the primary's horizon (last section)
autovacuum = off
# the standby has no slot: a checkpoint (the pg_basebackup's) must not
# recycle a segment it has not received yet when its replay lags (seen on
# a loaded machine: "requested WAL segment ... has already been removed")
wal_keep_size = '256MB'
}, allows_streaming => 1, extra => ['--data-checksums']);
$primary->safe_psql('postgres', 'CREATE EXTENSION widecol');

my $tmp = PostgreSQL::Test::Utils::tempdir;

sub p { return $primary->safe_psql('postgres', $_[0]); }

# Server-generated COPY files.
sub make_file { return copy_to_file($primary, $tmp, @_); }

# Data present before the standby's base backup.
p(q{
CREATE TABLE pre_t (pk int, ck int, v text) USING widecol
  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck DESC');
INSERT INTO pre_t SELECT i % 7, i, 'pre ' || i FROM generate_series(1, 300) i;
SELECT widecol.flush('pre_t');
INSERT INTO pre_t SELECT i % 7, i, 'pre0 ' || i FROM generate_series(250, 350) i;
});

$primary->backup('sb');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'sb', has_streaming => 1);
$standby->append_conf(
	'postgresql.conf', q{
hot_standby = on
max_standby_streaming_delay = 3s
});
$standby->start;

# table => ORDER BY list for the full ordered contents
my %order = (
	pre_t => 'pk, ck DESC',
	t1    => 'pk, ck DESC',
	t2    => 'a, b',
	t3    => 'name COLLATE "C", seq DESC',
	t4    => 'pk, ck DESC',
	t6    => 'k',
);

# count, md5 of the scan-order contents with TIDs, md5 of the key-ordered contents
sub state_of
{
	my ($node, $t, $db) = @_;
	return $node->safe_psql($db // 'postgres',
		    "SELECT count(*) || ' ' || coalesce(md5(string_agg(ctid::text || x::text, '|')), '-')"
		  . " || ' ' || coalesce(md5(string_agg(x::text, '|' ORDER BY $order{$t})), '-') FROM $t x");
}

sub compare_standby
{
	my ($what) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	$primary->wait_for_catchup($standby);
	for my $t (sort keys %order)
	{
		my $p = state_of($primary, $t);
		is(state_of($standby, $t), $p, "standby = primary for $t ($what)");
	}
}

# ------------------------------------------------------------ workload 1 --

my $f_t1 = make_file('t1',
	q{SELECT i % 20, i, 'copy ' || i || ' ✓', decode(md5(i::text), 'hex') FROM generate_series(1, 3000) i});
my $f_t4 = make_file('t4',
	q{SELECT i % 5, i, 'four ' || i FROM generate_series(1, 1000) i});
my $f_sp = make_file('sp',
	q{SELECT 19, i, 'rolled back copy', NULL::bytea FROM generate_series(90001, 90100) i});

p(q{
CREATE TABLE t1 (pk int, ck int, v text, b bytea) USING widecol
  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck DESC');
CREATE TABLE t2 (a int, b text) USING widecol;
CREATE TABLE t3 (name text COLLATE "C", seq bigint, payload text) USING widecol
  WITH (widecol.partition_key = 'name', widecol.clustering_key = 'seq DESC');
CREATE TABLE t4 (pk int, ck int, v text) USING widecol
  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck DESC');
CREATE TABLE t5 (pk int, v text) USING widecol WITH (widecol.partition_key = 'pk');
CREATE TABLE t6 (k int, v text) USING widecol WITH (widecol.partition_key = 'k');
});

# t1: single rows, COPY, updates (incl. key changes), deletes, flush, subxacts
p(join('', map { "INSERT INTO t1 VALUES ($_ % 20, -$_, 'single $_', NULL);\n" } 1 .. 200));
p("COPY t1 FROM '$f_t1'");
p(q{
UPDATE t1 SET v = 'updated' WHERE pk = 3;
UPDATE t1 SET ck = ck + 10000 WHERE pk = 4 AND ck BETWEEN 1 AND 500;
DELETE FROM t1 WHERE pk = 5;
INSERT INTO t1 VALUES (1, 1, 'upsert', '\x00');
SELECT widecol.flush('t1');
INSERT INTO t1 VALUES (2, 2, 'level0 upsert', NULL), (6, 123456, 'level0 new', '\xff');
DELETE FROM t1 WHERE pk = 7 AND ck < 0;
});
p(qq{
BEGIN;
INSERT INTO t1 VALUES (19, 80000, 'in xact', NULL);
SAVEPOINT s1;
COPY t1 FROM '$f_sp';
INSERT INTO t1 VALUES (19, 80001, 'rolled back', NULL);
DELETE FROM t1 WHERE pk = 8;
ROLLBACK TO s1;
INSERT INTO t1 VALUES (19, 80002, 'after savepoint', NULL);
COMMIT;});

# t2: keyless
p(q{
INSERT INTO t2 SELECT i % 13, 'b' || (i % 4) FROM generate_series(1, 500) i;
DELETE FROM t2 WHERE a = 0;
UPDATE t2 SET b = 'changed' WHERE a = 1;
SELECT widecol.flush('t2');
INSERT INTO t2 SELECT 100, NULL FROM generate_series(1, 5);
});

# t3: flushes inside writes (small level 0), also in a rolled-back
# transaction; single-row INSERTs (a multi-row INSERT would write a run)
p(q{
SET widecol.level0_max_size = 16;
DO $$ BEGIN FOR i IN 1..600 LOOP
  INSERT INTO t3 VALUES ('n' || (i % 9), i, repeat('p', 150) || i);
END LOOP; END $$;
BEGIN;
DO $$ BEGIN FOR i IN 1..400 LOOP
  INSERT INTO t3 VALUES ('n' || (i % 9), i, repeat('r', 150));
END LOOP; END $$;
DELETE FROM t3 WHERE name = 'n1';
ROLLBACK;
UPDATE t3 SET payload = 'upd' WHERE name = 'n2';
DELETE FROM t3 WHERE name = 'n3' AND seq > 300;
});

# t4: TRUNCATE committed, then a TRUNCATE rolled back
p(qq{
COPY t4 FROM '$f_t4';
TRUNCATE t4;
INSERT INTO t4 SELECT i % 5, i, 'after truncate ' || i FROM generate_series(1, 50) i;
COPY t4 FROM '$f_t4';
BEGIN;
TRUNCATE t4;
INSERT INTO t4 VALUES (1, 1, 'rolled back');
ROLLBACK;
INSERT INTO t4 VALUES (1, 1, 'kept');});

# t5: filled and dropped;  t6: single rows
p(q{
INSERT INTO t5 SELECT i, 'five' FROM generate_series(1, 100) i;
SELECT widecol.flush('t5');
DROP TABLE t5;
INSERT INTO t6 SELECT i, 'six ' || i FROM generate_series(1, 100) i;
});

# The primary holds what the workload wrote (so that equality means something).
is( p(q{
	SELECT (SELECT count(*) FROM t1) || ' ' || (SELECT count(*) FROM t2) || ' ' ||
	       (SELECT count(*) FROM t3) || ' ' || (SELECT count(*) FROM t4) || ' ' ||
	       (SELECT count(*) FROM t6) || ' ' || (SELECT count(*) FROM pre_t) || ' ' ||
	       (SELECT string_agg(v, ',' ORDER BY ck) FROM t1 WHERE pk = 19 AND ck >= 80000) || ' ' ||
	       (SELECT v FROM t4 WHERE pk = 1 AND ck = 1)}),
	# t1: 200 + 3000 - 160 (pk 5) - 10 (pk 7, ck < 0) + 1 (6,123456) + 2 (pk 19)
	# t2: 500 - 38 (a = 0) + 5;  t3: 600 - 33 (n3, seq > 300);  t4: 1000
	# pre_t: 350
	'3033 467 567 1000 100 350 in xact,after savepoint kept',
	'primary: expected row counts after workload 1');
cmp_ok(p(q{SELECT count(*) FROM widecol.runs('t3')}), '>=', 3,
	'primary: t3 was flushed inside writes');
ok(p(q{SELECT widecol.level0_pages('t1') > 0 AND widecol.level0_pages('pre_t') > 0}) eq 't',
	'primary: t1 and pre_t have rows in level 0 as well as in runs');

compare_standby('workload 1');
is($standby->safe_psql('postgres', q{SELECT count(*) FROM pg_class WHERE relname = 't5'}),
	'0', 'standby: dropped table is gone');
is( $standby->safe_psql('postgres', q{SELECT v FROM t1 WHERE pk = 2 AND ck = 2}),
	'level0 upsert', 'standby: point query sees the level-0 upsert');
is($standby->safe_psql('postgres', 'SHOW wal_consistency_checking'),
	'all,widecol', 'standby replays with wal_consistency_checking = all,widecol');

# ---------------------------------------------------------- base backup --

# A transaction with uncommitted writes is open during the backup.
my $open = $primary->background_psql('postgres');
$open->query_safe(qq{
BEGIN;
INSERT INTO t1 VALUES (0, 777777, 'uncommitted at backup', NULL);
INSERT INTO t2 SELECT -1, 'uncommitted' FROM generate_series(1, 10);
COPY t4 FROM '$f_t4';
INSERT INTO t6 VALUES (1000, 'uncommitted');});

my %at_backup;
$at_backup{$_} = state_of($primary, $_) for sort keys %order;
$primary->backup('bb');
$open->query_safe('COMMIT');
$open->quit;

# ------------------------------------------------------------ workload 2 --

p(q{CREATE TABLESPACE ts LOCATION ''});
p(q{
INSERT INTO t1 SELECT 11, i, 'w2', NULL FROM generate_series(1, 100) i;
SELECT widecol.flush('t1');
UPDATE t2 SET b = 'w2' WHERE a = 2;
TRUNCATE t3;
INSERT INTO t3 SELECT 'w2-' || (i % 3), i, 'after truncate' FROM generate_series(1, 30) i;
ALTER TABLE t6 SET TABLESPACE ts;
INSERT INTO t6 VALUES (1, 'after move'), (500, 'new after move');
SELECT widecol.flush('t6');
INSERT INTO t6 VALUES (2, 'level0 after move');
});
is(p(q{SELECT count(*) FROM t1 WHERE ck = 777777}), '1',
	'primary: the transaction open during the backup committed afterwards');
compare_standby('workload 2');

# ------------------------------------------------ restored base backup --

my $restored = PostgreSQL::Test::Cluster->new('restored');
$restored->init_from_backup($primary, 'bb');
$restored->start;
for my $t (sort keys %order)
{
	is(state_of($restored, $t), $at_backup{$t},
		"restored base backup: $t as committed at backup time");
}
is( $restored->safe_psql(
		'postgres', q{
		SELECT (SELECT count(*) FROM t1 WHERE ck = 777777) + (SELECT count(*) FROM t2 WHERE a = -1)
		     + (SELECT count(*) FROM t6 WHERE k = 1000)}),
	'0', 'restored base backup: uncommitted writes of the open transaction are absent');
# The restored node is a working primary of its own.
$restored->safe_psql('postgres',
	q{INSERT INTO t1 VALUES (1, 1, 'restored node'); SELECT widecol.flush('t1');});
is($restored->safe_psql('postgres', q{SELECT v FROM t1 WHERE pk = 1 AND ck = 1}),
	'restored node', 'restored base backup: accepts writes and flushes');
$restored->stop;

# ---------------------------------------------------- standby is read-only --

sub standby_fails
{
	my ($sql, $re, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($ret, $out, $err) =
	  $standby->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	isnt($ret, 0, "standby: $name fails");
	like($err, $re, "standby: $name fails with the expected read-only error");
}

standby_fails(q{SELECT widecol.flush('t1')},
	qr/ERROR:\s+25006: .*(recovery|read-only)/, 'widecol.flush()');
standby_fails(q{INSERT INTO t1 VALUES (1, 1, 'x')},
	qr/ERROR:\s+25006: cannot execute INSERT in a read-only transaction/, 'INSERT');
standby_fails(q{UPDATE t1 SET v = 'x' WHERE pk = 1},
	qr/ERROR:\s+25006: cannot execute UPDATE in a read-only transaction/, 'UPDATE');
standby_fails(q{DELETE FROM t1 WHERE pk = 1},
	qr/ERROR:\s+25006: cannot execute DELETE in a read-only transaction/, 'DELETE');
standby_fails("COPY t4 FROM '$f_t4'",
	qr/ERROR:\s+25006: cannot execute COPY (FROM in a read-only transaction|during recovery)/,
	'COPY FROM');
standby_fails(q{TRUNCATE t4},
	qr/ERROR:\s+25006: cannot execute TRUNCATE TABLE in a read-only transaction/, 'TRUNCATE');

# The standby is unharmed and keeps replaying.
p(q{INSERT INTO t1 VALUES (12, 1, 'after read-only errors', NULL); SELECT widecol.flush('t2');});
compare_standby('after the read-only errors');

# ------------------------------------------------------- page reclaim --
# A major compaction drops the table's runs; the next one (no snapshot
# reads the dropped runs any more) frees their pages, without reading the
# data pages, in FREE_PAGES records the standby replays; new runs then
# reuse the pages.  The crash below replays them once more.

p(q{
CREATE TABLE recl_t (k int, c int, v text) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
INSERT INTO recl_t SELECT i % 50, i, repeat(md5(i::text), 4) FROM generate_series(1, 20000) i;
INSERT INTO recl_t SELECT i % 50, i, 'second ' || i FROM generate_series(10001, 30000) i;
INSERT INTO recl_t SELECT i % 50, i, 'third ' || i FROM generate_series(25001, 40000) i;
SELECT widecol.compact('recl_t', true);
});
$order{recl_t} = 'k, c';
p(q{SELECT widecol.compact('recl_t')});	# a maintenance pass frees the pages
is(p(q{SELECT count(*) FROM widecol.segment WHERE storage_id = widecol.storage_id('recl_t') AND kind = 'd'}),
	'0', 'page reclaim: the dropped runs are forgotten once their pages are free');
my $size0 = p(q{SELECT pg_relation_size('recl_t') / 8192});
p(q{INSERT INTO recl_t SELECT i % 50, i, 'fourth ' || i FROM generate_series(40001, 50000) i});
my ($grown, $run_pages) = split /\|/, p(qq{
SELECT pg_relation_size('recl_t') / 8192 - $size0,
       (SELECT npages FROM widecol.segment WHERE storage_id = widecol.storage_id('recl_t') AND kind = 'r'
         ORDER BY segment_id DESC LIMIT 1)});
cmp_ok($grown, '<', $run_pages / 2,
	"page reclaim: the new run ($run_pages pages) mostly reuses freed pages (table grew by $grown)");
compare_standby('after page reclaim');
is($standby->safe_psql('postgres', q{SELECT bool_and(ok) FROM widecol.verify('recl_t')}), 't',
	'standby: verify() finds every page of recl_t sound after replaying the reclaim');

# ------------------------------------------------------ primary crash --

$open = $primary->background_psql('postgres');
$open->query_safe(q{BEGIN; INSERT INTO t1 VALUES (13, 999991, 'lost in crash', NULL); SELECT widecol.flush('t1');});
p(q{INSERT INTO t2 VALUES (200, 'before crash'); INSERT INTO t1 VALUES (14, 999992, 'before crash', NULL);});
$primary->stop('immediate');
eval { $open->quit; };
$primary->start;
is(p(q{SELECT string_agg(v, ',') FROM t1 WHERE ck IN (999991, 999992)}), 'before crash',
	'primary after crash: committed row present, uncommitted row absent');
p(q{INSERT INTO t6 VALUES (3, 'after primary crash'); SELECT widecol.flush('t6');});
compare_standby('after the primary crashed and restarted');

# -------------------------------------- standby snapshot vs. primary flushes --

p(q{
CREATE TABLE snap_t (k int, v text) USING widecol WITH (widecol.partition_key = 'k');
INSERT INTO snap_t SELECT i, 'x' FROM generate_series(1, 100) i;});
$primary->wait_for_catchup($standby);
my $rr = $standby->background_psql('postgres', on_error_stop => 0);
$rr->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($rr->query_safe('SELECT count(*) FROM snap_t'), '100',
	'standby: repeatable read snapshot sees 100 rows');
p(q{SELECT widecol.flush('snap_t');
INSERT INTO snap_t VALUES (1000, 'y');
SELECT widecol.flush('snap_t');});
$primary->wait_for_catchup($standby);
# (a recovery conflict may also terminate the idle session: psql then dies)
my ($out, $failed) = ('', 1);
my $died = !eval { ($out, $failed) = $rr->query('SELECT count(*) FROM snap_t'); 1 };
my $err = $rr->{stderr} // '';
ok( (!$died && !$failed && $out eq '100') || $err =~ /conflict with recovery/,
	'standby: repeatable read snapshot still sees its 100 rows after primary flushes (or is cancelled)')
  or diag("got count '$out', stderr '$err'");
eval { $rr->quit; };

# -------------------------------------------------------------------- logs --

for my $node ($primary, $standby, $restored)
{
	my $log = slurp_file($node->logfile);
	unlike($log,
		qr/inconsistent page found|PANIC|widecol: (unexpected page|bad metapage|level-0 block)|checksum verification failed|page verification failed/,
		$node->name . ': no inconsistent page, PANIC or corruption in the log');
}

$standby->stop;
$primary->stop;
done_testing();
