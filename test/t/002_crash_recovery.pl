
# Copyright: widecol authors.  TAP test, PostgreSQL 15.
#
# 002_crash_recovery: immediate shutdowns ("crashes") with work in flight,
# then restart and check that every widecol table holds exactly the rows of
# committed transactions: counts and md5 of the ordered contents against an
# expected set computed without widecol (generate_series).
#
# Round 1 (one crash):
#   a_t  committed single-row inserts/upserts/deletes, a committed transaction
#        with a rolled-back savepoint, a rolled-back transaction, and an open
#        transaction (inserts, upserts, deletes, updates) interleaved with them;
#   b_t  committed COPYs (one after a rolled-back COPY in a savepoint), committed
#        and open range deletes, and a
#        COPY in a transaction still open at the crash;
#   c_t  committed flushes (level 0 -> runs), committed rows left in level 0,
#        and a widecol.flush() inside a transaction still open at the crash;
#   k_t  keyless table: hidden row ids must not be handed out again after the
#        crash (a new row would otherwise replace an old one);
#   e_t  CREATE TABLE + COPY + inserts + flush in one committed transaction,
#   e2_t TRUNCATE + COPY in one committed transaction,
#   e3_t TRUNCATE + COPY in a transaction open at the crash (old contents
#        must come back).  With the default wal_level = minimal of these test
#        nodes, e_t and e2_t exercise the skip-WAL path for new relfilenodes.
# After the restart: flush drops the crashed versions, new writes and
# flushes work.
#
# Round 2 (second crash): d_t with widecol.level0_max_size = 16kB so that
# flushes happen inside transactions: committed ones, and one left open at
# the crash (holding the flush lock, so a later committed transaction's
# flush attempts are skipped).  The round-1 tables, with their post-restart
# writes, are checked again.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;

# no background maintenance: this test counts runs (007 tests the workers)
my $node = widecol_node('crash', 'widecol.max_workers = 0', extra => ['--data-checksums']);
$node->safe_psql('postgres', 'CREATE EXTENSION widecol');

my $tmp = PostgreSQL::Test::Utils::tempdir;

# table => [ ORDER BY list, expected contents as SQL (no widecol involved) ]
my %expect;

my $fmt = "SELECT count(*) || ':' || coalesce(md5(string_agg(x::text, '|' ORDER BY %s)), '-') FROM %s x";

# Compare a table with its expected set, through $node or a background session.
sub check_table
{
	my ($t, $name, $session) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($order, $sql) = @{ $expect{$t} };
	my $got_q = sprintf($fmt, $order, $t);
	my $exp_q = sprintf($fmt, $order, "($sql)");
	my ($got, $exp);
	if ($session)
	{
		$got = $session->query_safe($got_q);
		$exp = $session->query_safe($exp_q);
	}
	else
	{
		$got = $node->safe_psql('postgres', $got_q);
		$exp = $node->safe_psql('postgres', $exp_q);
	}
	is($got, $exp, "$t: $name");
	return $got;
}

sub sql1 { return $node->safe_psql('postgres', $_[0]); }

# Server-generated COPY files.
sub make_file { return copy_to_file($node, $tmp, @_); }
my $f1 = make_file('f1',
	q{SELECT i % 40, i, 'copy1 ' || i FROM generate_series(1, 2000) i});
my $f2 = make_file('f2',
	q{SELECT i % 40, i, 'copy2 ' || i FROM generate_series(1001, 2500) i});
my $f3 = make_file('f3',
	q{SELECT i % 40, i, 'copy3 ' || i FROM generate_series(3001, 3200) i});
my $f4 = make_file('f4',
	q{SELECT i % 40, i, 'copy4 ' || i FROM generate_series(4001, 4100) i});
my $copy1 = q{SELECT i % 40 AS pk, i AS ck, 'copy1 ' || i AS v FROM generate_series(1, 2000) i};
my $copy3 = q{SELECT i % 40 AS pk, i AS ck, 'copy3 ' || i AS v FROM generate_series(3001, 3200) i};

sql1(q{
CREATE TABLE a_t (k int, v text) USING widecol WITH (widecol.partition_key = 'k');
CREATE TABLE b_t (pk int, ck int, v text) USING widecol
  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck DESC');
CREATE TABLE c_t (dev text, ts timestamptz, v int) USING widecol
  WITH (widecol.partition_key = 'dev', widecol.clustering_key = 'ts DESC');
CREATE TABLE k_t (a int, b text) USING widecol;
CREATE TABLE e2_t (pk int, ck int, v text) USING widecol
  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck DESC');
CREATE TABLE e3_t (pk int, ck int, v text) USING widecol
  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck DESC');
});
sql1("COPY e2_t FROM '$f1'");
sql1("COPY e3_t FROM '$f3'");

# ============================================================ round 1 ==

my $s = $node->background_psql('postgres');    # autocommit, committed work
my %open;                                        # one open transaction per table
$open{$_} = $node->background_psql('postgres') for qw(a b c k e3);

sub inserts
{
	my ($table, $from, $to, $val) = @_;
	return join '',
	  map { my $v = $val; $v =~ s/\$i/$_/g; "INSERT INTO $table VALUES ($_, $v);\n" }
	  ($from .. $to);
}

# ---- a_t: single-row writes, committed and open -------------------------
$s->query_safe(inserts('a_t', 1, 150, q{'v1 $i'}));
$open{a}->query_safe("BEGIN;\n"
	  . inserts('a_t', 1001, 1050, q{'uncommitted'})
	  . inserts('a_t', 1, 10, q{'uncommitted upsert'}));
$s->query_safe(inserts('a_t', 151, 300, q{'v1 $i'}));
$s->query_safe(inserts('a_t', 1, 50, q{'v2 $i'}));
$s->query_safe('DELETE FROM a_t WHERE k BETWEEN 200 AND 220');
$s->query_safe(q{
BEGIN;
INSERT INTO a_t VALUES (5000, 'sp');
SAVEPOINT s1;
INSERT INTO a_t VALUES (5001, 'rolled back');
INSERT INTO a_t VALUES (1, 'rolled back upsert');
DELETE FROM a_t WHERE k = 2;
ROLLBACK TO s1;
INSERT INTO a_t VALUES (5002, 'after sp');
COMMIT;});
$open{a}->query_safe(q{
DELETE FROM a_t WHERE k BETWEEN 51 AND 60;
UPDATE a_t SET v = 'uncommitted update' WHERE k BETWEEN 61 AND 70;}
	  . inserts('a_t', 1051, 1100, q{'uncommitted'}));
$s->query_safe(q{
BEGIN;
INSERT INTO a_t VALUES (6000, 'aborted');
DELETE FROM a_t WHERE k = 100;
ROLLBACK;});

$expect{a_t} = [
	'k', q{
	SELECT k, CASE WHEN k <= 50 THEN 'v2 ' || k ELSE 'v1 ' || k END AS v
	  FROM generate_series(1, 300) k WHERE k NOT BETWEEN 200 AND 220
	UNION ALL VALUES (5000, 'sp'), (5002, 'after sp')}
];
check_table('a_t', 'committed state before the crash', $s);
is($open{a}->query_safe('SELECT count(*) FROM a_t'),
	281 + 100 - 10, 'a_t: the open transaction sees its own writes');

# ---- b_t: COPY committed, COPY open --------------------------------------
$s->query_safe("COPY b_t FROM '$f1'");
$open{b}->query_safe("BEGIN; COPY b_t FROM '$f2';");
$s->query_safe("BEGIN; SAVEPOINT a; COPY b_t FROM '$f4'; ROLLBACK TO a; COPY b_t FROM '$f3'; COMMIT;");
$s->query_safe(q{INSERT INTO b_t VALUES (1, 1, 'single');});
# range deletes (range tombstones in the manifest): committed ones hold,
# an open one is gone after the crash
$s->query_safe(q{DELETE FROM b_t WHERE pk = 3; DELETE FROM b_t WHERE pk = 4 AND ck > 1000;});
$open{b}->query_safe(q{DELETE FROM b_t WHERE pk = 5;});
$expect{b_t} = [
	'pk, ck DESC', qq{
	SELECT pk, ck, CASE WHEN pk = 1 AND ck = 1 THEN 'single' ELSE v END AS v FROM ($copy1) c
	 WHERE pk <> 3 AND NOT (pk = 4 AND ck > 1000)
	UNION ALL SELECT * FROM ($copy3) c3 WHERE pk <> 3 AND NOT (pk = 4 AND ck > 1000)}
];
check_table('b_t', 'committed state before the crash', $s);
is($open{b}->query_safe(q{SELECT count(*) || ' ' || count(*) FILTER (WHERE v LIKE 'copy2%') FROM b_t}),
	'2521 1386', 'b_t: the open transaction sees its COPY and the range deletes (its rows of pk 3 and 4 written before them too)');
is($open{b}->query_safe(q{SELECT count(*) FROM widecol.range_tombstones('b_t')}),
	'3', 'b_t: the open transaction sees its range tombstone');

# ---- c_t: flushes committed, rows in level 0, flush in an open transaction
my $c_row = q{'dev-' || (i % 5), timestamptz '2024-01-01 00:00:00+00' + i * interval '1 second'};
$s->query_safe(qq{INSERT INTO c_t SELECT $c_row, i FROM generate_series(1, 100) i;});
is($s->query_safe(q{SELECT widecol.flush('c_t')}), '100', 'c_t: first flush writes 100 versions');
$s->query_safe(qq{
INSERT INTO c_t SELECT $c_row, i FROM generate_series(101, 200) i;
INSERT INTO c_t SELECT $c_row, -i FROM generate_series(1, 100) i;
SELECT widecol.flush('c_t');
DELETE FROM c_t WHERE v BETWEEN -50 AND -1;
INSERT INTO c_t SELECT $c_row, i FROM generate_series(201, 250) i;});
$open{c}->query_safe(qq{
BEGIN;
INSERT INTO c_t SELECT $c_row, 0 FROM generate_series(1001, 1020) i;
SELECT widecol.flush('c_t');
INSERT INTO c_t SELECT $c_row, 0 FROM generate_series(1021, 1030) i;
DELETE FROM c_t WHERE v BETWEEN 101 AND 110;});
$s->query_safe(qq{INSERT INTO c_t SELECT $c_row, i FROM generate_series(251, 260) i;});
$expect{c_t} = [
	'dev, ts DESC', q{
	SELECT 'dev-' || (i % 5) AS dev, timestamptz '2024-01-01 00:00:00+00' + i * interval '1 second' AS ts,
	       CASE WHEN i <= 100 THEN -i ELSE i END AS v
	  FROM generate_series(51, 260) i}
];
check_table('c_t', 'committed state before the crash', $s);
is( $s->query_safe(
		q{SELECT (SELECT count(*) FROM widecol.runs('c_t')), widecol.level0_pages('c_t') > 0}),
	'2|t', 'c_t: two committed runs, rows in level 0');
is( $open{c}->query_safe(
		q{SELECT (SELECT count(*) FROM widecol.runs('c_t')), (SELECT count(*) FROM c_t)}),
	'3|230', 'c_t: the open transaction sees its own run and writes');

# ---- k_t: keyless ---------------------------------------------------------
$s->query_safe(q{INSERT INTO k_t SELECT i % 10, 'r' || (i % 7) FROM generate_series(1, 300) i;});
$open{k}->query_safe(q{BEGIN; INSERT INTO k_t SELECT -1, 'open ' || i FROM generate_series(1, 50) i;});
$s->query_safe(q{INSERT INTO k_t SELECT 100 + i, NULL FROM generate_series(1, 10) i;});
$expect{k_t} = [
	'a, b', q{
	SELECT i % 10 AS a, 'r' || (i % 7) AS b FROM generate_series(1, 300) i
	UNION ALL SELECT 100 + i, NULL FROM generate_series(1, 10) i}
];
check_table('k_t', 'committed state before the crash', $s);

# ---- e_t, e2_t, e3_t: new relfilenodes written in their creating transaction
$s->query_safe(qq{
BEGIN;
CREATE TABLE e_t (pk int, ck int, v text) USING widecol
  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck DESC');
COPY e_t FROM '$f1';
INSERT INTO e_t SELECT 99, i, 'single ' || i FROM generate_series(1, 10) i;
SELECT widecol.flush('e_t');
INSERT INTO e_t SELECT 99, i, 'late ' || i FROM generate_series(1, 5) i;
COMMIT;});
$expect{e_t} = [
	'pk, ck DESC', qq{
	$copy1 UNION ALL
	SELECT 99, i, CASE WHEN i <= 5 THEN 'late ' ELSE 'single ' END || i FROM generate_series(1, 10) i}
];
$s->query_safe(qq{
BEGIN;
TRUNCATE e2_t;
COPY e2_t FROM '$f3';
INSERT INTO e2_t VALUES (1, 1, 'x');
COMMIT;});
$expect{e2_t} = [ 'pk, ck DESC', qq{$copy3 UNION ALL VALUES (1, 1, 'x')} ];
# (the open TRUNCATE below locks e3_t: look at it before)
$expect{e3_t} = [ 'pk, ck DESC', $copy3 ];
check_table('e3_t', 'committed state before the crash', $s);
my %runs_before;
$runs_before{e3_t} = $s->query_safe(
	"SELECT count(*) || '/' || coalesce(sum(nrows), 0) FROM widecol.runs('e3_t')");
$open{e3}->query_safe(qq{
BEGIN;
TRUNCATE e3_t;
COPY e3_t FROM '$f1';
INSERT INTO e3_t VALUES (1, 1, 'x');});
check_table($_, 'committed state before the crash', $s) for qw(e_t e2_t);

# ---- crash ------------------------------------------------------------------
for my $t (qw(a_t b_t c_t k_t e_t e2_t))
{
	$runs_before{$t} = $s->query_safe(
		"SELECT count(*) || '/' || coalesce(sum(nrows), 0) FROM widecol.runs('$t')");
}
my $log_offset = -s $node->logfile;
$node->stop('immediate');
for my $sess ($s, values %open)
{
	eval { $sess->quit; };
}
$node->start;

for my $t (qw(a_t b_t c_t k_t e_t e2_t e3_t))
{
	check_table($t, 'exactly the committed rows after crash recovery');
	is( sql1("SELECT count(*) || '/' || coalesce(sum(nrows), 0) FROM widecol.runs('$t')"),
		$runs_before{$t}, "$t: the manifest lists exactly the committed runs");
}
is(sql1('SELECT count(*) FROM a_t'), '281', 'a_t: 281 committed rows');
is(sql1('SELECT count(*) FROM b_t'), '2115', 'b_t: 2115 committed rows (2200 less the 85 range-deleted)');
is(sql1('SELECT count(*) FROM c_t'), '210', 'c_t: 210 committed rows');

# ---- after the restart: flushes drop the crashed versions, writes work ----
# a_t level 0 holds 300 + 50 + 21 (tombstones) + 2 committed versions; the
# open transaction's 130 versions, the savepoint's 3 and the rolled-back
# transaction's 2 are known aborted and must not be written into the run.
is(sql1(q{SELECT widecol.flush('a_t')}), '373',
	'a_t: flush after recovery writes only the committed versions');
# c_t: the generation sealed by the crashed flush is still in level 0 (its
# retirement was not committed): 50 deletes + 50 inserts + 10 later inserts.
is(sql1(q{SELECT widecol.flush('c_t')}), '110',
	'c_t: flush after recovery takes over the generation of the crashed flush');
sql1(q{SELECT widecol.flush('k_t')});
for my $t (qw(a_t c_t k_t))
{
	check_table($t, 'contents unchanged by the flush after recovery');
	is(sql1("SELECT widecol.level0_pages('$t')"), '0', "$t: level 0 empty after flush");
}

sql1(  inserts('a_t', 301, 310, q{'post ' || $i})
	  . q{INSERT INTO a_t VALUES (51, 'post upsert'); DELETE FROM a_t WHERE k = 52;});
$expect{a_t}[1] = qq{
	SELECT k, CASE WHEN k = 51 THEN 'post upsert' ELSE v END AS v
	  FROM ($expect{a_t}[1]) o WHERE k <> 52
	UNION ALL SELECT k, 'post ' || k FROM generate_series(301, 310) k};
sql1(q{INSERT INTO b_t VALUES (1, 41, 'post'); SELECT widecol.flush('b_t');});
$expect{b_t}[1] = qq{
	SELECT pk, ck, CASE WHEN pk = 1 AND ck = 41 THEN 'post' ELSE v END AS v
	  FROM ($expect{b_t}[1]) o};
sql1(qq{INSERT INTO c_t SELECT $c_row, i FROM generate_series(261, 270) i; SELECT widecol.flush('c_t');});
$expect{c_t}[1] =~ s/generate_series\(51, 260\)/generate_series(51, 270)/;
sql1(q{INSERT INTO k_t SELECT 200 + i, 'post' FROM generate_series(1, 100) i;});
$expect{k_t}[1] .= q{ UNION ALL SELECT 200 + i, 'post' FROM generate_series(1, 100) i};
# (7, 7) exists in e_t (copy1), (7, 3007) in e2_t and e3_t (copy3): upserts.
for my $t (qw(e_t e2_t e3_t))
{
	my $ck = $t eq 'e_t' ? 7 : 3007;
	sql1("INSERT INTO $t VALUES (7, $ck, 'post'), (7, -1, 'post'); SELECT widecol.flush('$t');");
	$expect{$t}[1] = qq{
	SELECT pk, ck, CASE WHEN pk = 7 AND ck = $ck THEN 'post' ELSE v END AS v FROM ($expect{$t}[1]) o
	UNION ALL SELECT 7, -1, 'post'};
}
for my $t (qw(a_t b_t c_t k_t e_t e2_t e3_t))
{
	check_table($t, 'new writes and flush after recovery');
}
is(sql1('SELECT count(*) FROM k_t'), '410',
	'k_t: rows inserted after the crash did not replace older rows (row ids not reused)');

# ============================================================ round 2 ==

sql1(q{CREATE TABLE d_t (pk int, ck int, v text) USING widecol
  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');});
$s = $node->background_psql('postgres');
my $o = $node->background_psql('postgres', on_error_stop => 0);
$s->query_safe(q{SET widecol.level0_max_size = 16;});
$o->query_safe(q{SET widecol.level0_max_size = 16;});

$s->query_safe(q{
BEGIN;
INSERT INTO d_t SELECT i % 10, i, repeat('d', 200) || i FROM generate_series(1, 400) i;
DO $$ BEGIN
  FOR i IN 401..600 LOOP
    INSERT INTO d_t VALUES (i % 10, i, 'loop ' || i);
  END LOOP;
END $$;
COMMIT;});
my $d_runs1 = $s->query_safe(q{SELECT count(*) FROM widecol.runs('d_t')});
cmp_ok($d_runs1, '>=', 2, 'd_t: flushes happened inside the first transaction');
$s->query_safe(q{
BEGIN;
UPDATE d_t SET v = 't2 ' || ck WHERE pk = 1;
DELETE FROM d_t WHERE pk = 2 AND v IS NOT NULL;  -- row tombstones in level 0
COMMIT;});
my $d_runs2 = $s->query_safe(
	q{SELECT count(*) || '/' || sum(nrows) FROM widecol.runs('d_t')});
$o->query_safe(q{
BEGIN;
INSERT INTO d_t SELECT i % 10, i, repeat('u', 200) FROM generate_series(601, 1000) i;});
# UPDATE and DELETE in the open transaction read rows of committed
# transactions and of their own, and their own writes trigger flushes that
# move those rows into runs while the statement runs.  Each runs under a
# savepoint so that a failure does not end the open transaction.
my %o_ok;
for my $stmt (q{UPDATE d_t SET v = 'uncommitted' WHERE pk = 3}, q{DELETE FROM d_t WHERE pk = 4})
{
	$o->query_safe('SAVEPOINT s');
	my (undef, $failed) = $o->query($stmt);
	ok(!$failed, "d_t: '$stmt' succeeds in the open transaction while flushes move rows")
	  or diag("stderr: $o->{stderr}");
	$o->{stderr} = '';    # BackgroundPsql keeps stderr across queries
	$o->query_safe($failed ? 'ROLLBACK TO s' : 'RELEASE s');
	$o_ok{ (split / /, $stmt)[0] } = !$failed;
}
cmp_ok(
	$o->query_safe(q{SELECT count(*) FROM widecol.runs('d_t')}),
	'>', (split m{/}, $d_runs2)[0],
	'd_t: the open transaction flushed level 0 into runs of its own');
# The open transaction holds the flush lock: this one cannot flush.
$s->query_safe(q{INSERT INTO d_t SELECT 5, i, 't4' FROM generate_series(2001, 2100) i;});
$expect{d_t} = [
	'pk, ck', q{
	SELECT i % 10 AS pk, i AS ck,
	       CASE WHEN i % 10 = 1 THEN 't2 ' || i
	            WHEN i <= 400 THEN repeat('d', 200) || i
	            ELSE 'loop ' || i END AS v
	  FROM generate_series(1, 600) i WHERE i % 10 <> 2
	UNION ALL SELECT 5, i, 't4' FROM generate_series(2001, 2100) i}
];
check_table('d_t', 'committed state before the crash', $s);
# committed 540 + 100, own 400 more, own DELETE of pk 4: 60 committed + 40 own
is( $o->query_safe(q{SELECT count(*) || ' ' || count(*) FILTER (WHERE v = 'uncommitted') FROM d_t}),
	(540 + 100 + 400 - ($o_ok{DELETE} ? 100 : 0)) . ' ' . ($o_ok{UPDATE} ? 100 : 0),
	'd_t: the open transaction sees its own writes');

$node->stop('immediate');
eval { $_->quit; } for ($s, $o);
$node->start;

for my $t (qw(d_t a_t b_t c_t k_t e_t e2_t e3_t))
{
	check_table($t, 'exactly the committed rows after the second crash');
}
is(sql1(q{SELECT count(*) || '/' || sum(nrows) FROM widecol.runs('d_t')}),
	$d_runs2, 'd_t: only the runs of committed flushes are listed');

# After recovery: flushes and new writes work with the small level 0, too.
sql1(q{
SET widecol.level0_max_size = 16;
INSERT INTO d_t SELECT 6, i, repeat('p', 100) FROM generate_series(3001, 3300) i;
SELECT widecol.flush('d_t');});
$expect{d_t}[1] .= q{ UNION ALL SELECT 6, i, repeat('p', 100) FROM generate_series(3001, 3300) i};
check_table('d_t', 'new writes and flushes after the second recovery');
is(sql1(q{SELECT widecol.level0_pages('d_t')}), '0', 'd_t: level 0 empty after flush');

# A clean restart keeps everything.
$node->restart;
for my $t (qw(d_t a_t b_t c_t k_t e_t e2_t e3_t))
{
	check_table($t, 'unchanged after a clean restart');
}

my $log = slurp_file($node->logfile, $log_offset);
unlike($log, qr/PANIC|widecol: (unexpected page|bad metapage|level-0 block)|checksum|DATA_CORRUPTED/,
	'server log has no widecol corruption or PANIC');

$node->stop;
done_testing();
