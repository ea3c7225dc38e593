
# 008_compaction_crash: a crash (immediate shutdown: no checkpoint, backends
# killed) in the middle of a compaction loses nothing and leaves no
# half-visible run.  The half-written output run was never published in the
# manifest, so after recovery the table reads exactly as before (row count
# and a checksum of the contents), widecol.verify() finds every run intact,
# the input runs are all still there, and the compaction can run again.
# Once for a major compaction started by hand (widecol.compact in a
# background psql), once for a compaction started by the background worker.
# widecol.compaction_throughput = 1 (MB/s) keeps each compaction running
# for several seconds so that the crash lands inside it.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;
use Time::HiRes qw(time);

my $node = widecol_node('ccrash', qq{
widecol.max_workers = 0
widecol.naptime = 1
});

sub sql { return $node->safe_psql('postgres', shift); }
sql('CREATE EXTENSION widecol');

my $csv = PostgreSQL::Test::Utils::tempdir . '/rows.csv';

# four runs of the same keys (COPY writes each as one run), then updates
# and deletes in level 0, flushed: a compaction has versions to drop
sub load
{
	my $t = shift;
	sql(qq{
		CREATE TABLE $t (pk int, ck int, v text) USING widecol
		  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck',
		        widecol.autocompact = off);});
	for my $round (1 .. 4)
	{
		sql(qq{
			COPY (SELECT g % 50, g, repeat(md5(g::text || '$round'), 2) FROM generate_series(1, 25000) g)
			  TO '$csv';
			COPY $t FROM '$csv';});
	}
	sql(qq{
		UPDATE $t SET v = 'updated ' || ck WHERE pk = 7;
		DELETE FROM $t WHERE pk = 8 AND v IS NOT NULL;  -- row by row: 500 tombstones
		SELECT widecol.flush('$t');});
}

sub contents
{
	my $t = shift;
	return sql(qq{SELECT count(*) || ':' || md5(string_agg(pk || ',' || ck || ',' || v, ';' ORDER BY pk, ck)) FROM $t});
}

sub runs
{
	my $t = shift;
	return sql(qq{SELECT count(*) || ' runs, ' || sum(nrows) || ' versions' FROM widecol.runs('$t')});
}

sub check_after_crash
{
	my ($t, $expected, $runs, $what) = @_;
	is(contents($t), $expected, "$t: contents unchanged after a crash during $what");
	is(runs($t), $runs, "$t: the input runs are still the runs (no half-written run visible)");
	is(sql(qq{SELECT bool_and(ok) AND count(*) FILTER (WHERE segment = 'run') =
	                 (SELECT count(*) FROM widecol.runs('$t')) FROM widecol.verify('$t')}),
		't', "$t: verify finds every run ok");
	is(sql(qq{SELECT count(*) FROM widecol.compactions WHERE "table" = '$t'::regclass}), '0',
		"$t: no compaction recorded");
}

# ---- a major compaction started by hand
load('m');
my $m_expected = contents('m');
my $m_runs = runs('m');
like($m_runs, qr/^5 runs/, 'm: four COPY runs and a flushed one');

my $bg = $node->background_psql('postgres', on_error_stop => 0);
$bg->query_until(qr/started/, q{
\echo started
SET widecol.compaction_throughput = 1;
SELECT widecol.compact('m', major => true);
});
ok($node->poll_query_until('postgres', q{
		SELECT count(*) = 1 FROM pg_stat_activity
		 WHERE state = 'active' AND query LIKE 'SELECT widecol.compact(''m''%'}),
	'the compaction of m is running');
sleep(3);    # about 3 MB merged, some output pages written
is(sql(q{SELECT count(*) FROM pg_stat_activity
		 WHERE state = 'active' AND query LIKE 'SELECT widecol.compact(''m''%'}), '1',
	'... and still running when the server crashes');
$node->stop('immediate');
eval { $bg->quit; };
$node->start;
check_after_crash('m', $m_expected, $m_runs, 'a manual major compaction');

# again, throttled to 4 MB/s: about 11 MB of row versions take at least 2s
my $t0 = time();
is(sql(q{SET widecol.compaction_throughput = 4; SELECT widecol.compact('m', major => true) > 0}),
	't', 'm: compacting again works');
my $elapsed = time() - $t0;
cmp_ok($elapsed, '>=', 2, sprintf('m: widecol.compaction_throughput held the compaction back (%.1fs)', $elapsed));
is(sql(q{SELECT (bytes_in IS NOT NULL)::text || ':' || (rows_in > 100000)::text FROM widecol.compactions
          WHERE "table" = 'm'::regclass}), 'true:true', 'm: the compaction is in the history');
is(contents('m'), $m_expected, 'm: same contents after the compaction');
is(runs('m'), '1 runs, 25000 versions', 'm: one run of the newest versions (and 500 tombstones)');
is(sql(q{SELECT bool_and(ok) FROM widecol.verify('m')}), 't', 'm: verify ok');

# ---- a compaction started by the background worker
load('w');
my $w_expected = contents('w');
my $w_runs = runs('w');
sql(q{
	ALTER TABLE w SET (widecol.autocompact = on);
	ALTER SYSTEM SET widecol.max_workers = 1;
	ALTER SYSTEM SET widecol.compaction_throughput = 1;
	SELECT pg_reload_conf();
});
ok($node->poll_query_until('postgres', q{
		SELECT count(*) = 1 FROM pg_stat_activity
		 WHERE backend_type = 'widecol worker' AND query LIKE 'widecol: compacting public.w %'}),
	'the worker is compacting w');
sleep(3);
is(sql(q{SELECT count(*) FROM pg_stat_activity
		 WHERE backend_type = 'widecol worker' AND query LIKE 'widecol: compacting public.w %'}), '1',
	'... and still is when the server crashes');
# no worker after the restart until the checks are done (read at startup)
sql(q{ALTER SYSTEM SET widecol.max_workers = 0});
$node->stop('immediate');
$node->start;
check_after_crash('w', $w_expected, $w_runs, "the worker's compaction");

# the worker, unthrottled, finishes the job after the restart
sql(q{
	ALTER SYSTEM SET widecol.compaction_throughput = 0;
	ALTER SYSTEM SET widecol.max_workers = 1;
	SELECT pg_reload_conf();
});
# the four COPY runs are one size tier; the small flushed run is another
ok($node->poll_query_until('postgres', q{
		SELECT (SELECT count(*) FROM widecol.runs('w')) = 2
		   AND EXISTS (SELECT FROM widecol.compactions
		               WHERE "table" = 'w'::regclass AND by_worker AND runs_in = 4 AND runs_out = 1)}),
	'w: compacted by the worker after the restart');
is(contents('w'), $w_expected, 'w: same contents after the compaction');
is(sql(q{SELECT bool_and(ok) FROM widecol.verify('w')}), 't', 'w: verify ok');

$node->stop;
done_testing();
