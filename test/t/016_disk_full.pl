
# Copyright: widecol authors.  TAP test, PostgreSQL 15.
#
# 016_disk_full: what a full disk does to a widecol table.  No root is
# needed: the server is started under `ulimit -f` (RLIMIT_FSIZE), and since
# PostgreSQL ignores SIGXFSZ, a write that would grow a file past the limit
# fails with EFBIG ("could not extend file ... File too large") exactly
# where a full disk fails with ENOSPC: when the relation is extended.
#
# Asserted: a bulk write (COPY into runs), single-row writes (level 0) and a
# compaction that hit the limit fail with a clear error and leave the table
# as it was (rows equal a heap copy, verify ok); once a maintenance pass
# ran, every page is accounted for (live + free = the relation's size);
# writes go on at the limit while the failed writers' pages last (runs'
# extents included), and after the limit is lifted the file does not grow
# while free pages remain.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;

my $node = widecol_node('full', q{
widecol.max_workers = 0
autovacuum = off
});
sub sq { return $node->safe_psql('postgres', $_[0]); }
sub usage { return sq("SELECT pages, level0_pages + run_pages + dropped_run_pages + free_pages + 1, free_pages, unaccounted_pages FROM widecol.page_usage('t')"); }
sub same { return sq("SELECT count(*) FROM ((TABLE t EXCEPT ALL TABLE h) UNION ALL (TABLE h EXCEPT ALL TABLE t)) d") eq '0'; }

my $tmp = PostgreSQL::Test::Utils::tempdir;
sq(qq{
	CREATE EXTENSION widecol;
	CREATE TABLE t (pk int, ck int, v text) USING widecol
	  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
	CREATE TABLE h (pk int, ck int, v text);
	INSERT INTO h SELECT g % 50, g, md5(g::text) FROM generate_series(1, 20000) g;
	INSERT INTO t SELECT * FROM h;
	SELECT widecol.flush('t');
	COPY (SELECT g % 50, g, md5(g::text) || md5((g * 7)::text) || md5((g * 13)::text)
	        FROM generate_series(100001, 700000) g) TO '$tmp/big.csv';
	CHECKPOINT;
});
my $size0 = sq("SELECT pg_relation_size('t')");

# restart with a file size limit a little above the table's size: WAL
# segments (16 MB) and the catalogs stay below it
my $limit_kb = int($size0 / 1024) + 4096;
$limit_kb = 20480 if $limit_kb < 20480;
$node->stop;
my $pgdata = $node->data_dir;
my $log = $node->logfile;
system('bash', '-c', "ulimit -f $limit_kb && pg_ctl -D '$pgdata' -l '$log' -w start >/dev/null") == 0
  or die "could not start the server under ulimit -f";
$node->_update_pid(1);
note "file size limit $limit_kb kB; table at $size0 bytes";

# a COPY that needs more room than the limit allows
my ($ret, $out, $err) = $node->psql('postgres', "COPY t FROM '$tmp/big.csv'");
isnt($ret, 0, 'a COPY past the file size limit fails');
like($err, qr/could not (extend|write to) file|File too large|No space left/, "with PostgreSQL's error: $err");
ok(same(), 'the table holds exactly the rows it had');

# single-row writes (level 0) until the file is full
($ret, $out, $err) = $node->psql('postgres', q{
DO $$ BEGIN
  FOR i IN 1..400000 LOOP
    INSERT INTO t VALUES (i % 50, 1000000 + i, md5(i::text) || md5((i * 3)::text));
  END LOOP;
END $$;});
isnt($ret, 0, 'single-row writes fail once the file cannot grow');
ok(same(), 'none of that transaction is visible');

# a maintenance pass (under the limit still) finds the failed writers'
# pages again: nothing is lost
($ret, $out, $err) = $node->psql('postgres', "SELECT widecol.compact('t')");
is($ret, 0, 'a maintenance pass runs under the limit') or diag $err;
ok(same(), 'after the pass the rows are the same');
my ($pages, $sum, $free, $unacc) = split /\|/, usage();
is($unacc, 0, 'every page is accounted for');
is($sum, $pages, "live + free = relation size ($pages pages, $free free)");

# writes go on under the limit while free pages last (a run's data pages
# and its extent of header, index and bloom pages all reuse them); a major
# compaction that needs more room than there is fails cleanly
sq("INSERT INTO t SELECT * FROM h WHERE ck <= 5000");	# same rows again: something to merge
($ret, $out, $err) = $node->psql('postgres', "SELECT widecol.compact('t', true)");
note "major compaction under the limit: " . ($ret == 0 ? 'done' : "failed: $err");
ok(same(), 'after the compaction the rows are the same');
is(sq("SELECT bool_and(ok) FROM widecol.verify('t')"), 't', 'verify ok');

# the limit lifted: a pass accounts for the compaction's pages too, and new
# writes reuse free pages before growing the file
$node->restart;
sq("SELECT widecol.compact('t')");
my ($pages1, $sum1, $free1, $unacc1) = split /\|/, usage();
is($unacc1, 0, 'after the restart and a pass every page is accounted for');
is($sum1, $pages1, "live + free = relation size ($pages1 pages, $free1 free)");
sq("INSERT INTO h SELECT g % 50, g, md5(g::text) FROM generate_series(20001, 30000) g");
sq("INSERT INTO t SELECT * FROM h WHERE ck > 20000");
sq("SELECT widecol.flush('t')");
ok(same(), 'new writes land');
my ($pages2, $sum2, $free2) = split /\|/, usage();
ok($free1 == 0 || $free2 < $free1, "they reused free pages ($free1 -> $free2 free)");
is($pages2, $pages1, 'the file did not grow: run headers, indexes and bloom pages too took free pages');
is($sum2, $pages2, 'live + free = relation size');
is(sq("SELECT bool_and(ok) FROM widecol.verify('t')"), 't', 'verify ok');

$node->stop;
done_testing();
