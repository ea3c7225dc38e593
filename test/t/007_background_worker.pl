
# 007_background_worker: the widecol launcher and its per-database workers.
# With widecol.naptime = 1s a worker, on its own and within a bounded time:
# flushes level 0, compacts four runs of one size into one, drops a run
# whose rows all expired (unread, recorded in the history); it shows what it
# does in pg_stat_activity, leaves a table with widecol.autocompact = off
# alone, stops promptly on a fast shutdown in the middle of a throttled
# compaction (which rolls back: nothing lost), and an error in one table (a
# corrupt data block) is logged as a WARNING naming it while the next table
# is still compacted.  History rows past widecol.compaction_history_retention
# are deleted.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;
use Time::HiRes qw(time);

my $node = widecol_node('bgw', qq{
widecol.naptime = 1
widecol.compaction_throughput = 1
});

sub sql { return $node->safe_psql('postgres', shift); }

ok($node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'widecol launcher'"),
	'the launcher runs (pg_stat_activity)');

# bad: four runs, left alone while widecol.autocompact = off (created first:
# the worker goes through the tables in OID order, so it meets bad first)
sql(q{
	CREATE EXTENSION widecol;
	CREATE TABLE bad (k int, v text) USING widecol
	  WITH (widecol.partition_key = 'k', widecol.autocompact = off);
	BEGIN;
	INSERT INTO bad SELECT g, 'one ' || g FROM generate_series(1, 2000) g;
	SELECT widecol.flush('bad');
	INSERT INTO bad SELECT g, 'two ' || g FROM generate_series(1, 2000) g;
	SELECT widecol.flush('bad');
	INSERT INTO bad SELECT g, 'three ' || g FROM generate_series(1, 2000) g;
	SELECT widecol.flush('bad');
	INSERT INTO bad SELECT g, 'four ' || g FROM generate_series(1, 2000) g;
	SELECT widecol.flush('bad');
	COMMIT;
	INSERT INTO bad VALUES (0, 'in level 0');
});

# level 0 is flushed and similar runs are compacted by the worker
sql(q{
	CREATE TABLE small (k int, v text) USING widecol WITH (widecol.partition_key = 'k');
	INSERT INTO small SELECT g, 'x' || g FROM generate_series(1, 100) g;
});
ok($node->poll_query_until('postgres',
		"SELECT widecol.level0_pages('small') = 0 AND (SELECT count(*) FROM widecol.runs('small')) = 1"),
	'the worker flushed level 0 of small');
for my $i (1 .. 3)
{
	sql("BEGIN; INSERT INTO small SELECT g, 'y$i' FROM generate_series(1, 100) g; SELECT widecol.flush('small'); COMMIT;");
}
ok($node->poll_query_until('postgres', q{
		SELECT (SELECT count(*) FROM widecol.runs('small')) = 1
		   AND EXISTS (SELECT FROM widecol.compactions
		               WHERE "table" = 'small'::regclass AND by_worker AND kind = 'minor' AND runs_in >= 4)}),
	'the worker compacted four runs of small into one');
is(sql(q{SELECT count(*), min(v), max(v) FROM small}), '100|y3|y3', 'small: newest versions');

# a run whose rows all expired is dropped whole by the worker
sql(q{
	CREATE TABLE ttl (k int, v text) USING widecol
	  WITH (widecol.partition_key = 'k', widecol.default_ttl = '1 day');
	SET widecol.debug_write_time = 1577836800;    -- 2020-01-01
	INSERT INTO ttl SELECT g, 'old' FROM generate_series(1, 500) g;
	SELECT widecol.flush('ttl');
});
ok($node->poll_query_until('postgres', q{
		SELECT (SELECT count(*) FROM widecol.runs('ttl')) = 0
		   AND EXISTS (SELECT FROM widecol.compactions
		               WHERE "table" = 'ttl'::regclass AND by_worker AND kind = 'expired_runs'
		                 AND runs_dropped_whole = 1 AND rows_in = 500 AND runs_out = 0)}),
	'the worker dropped the expired run of ttl whole');
is(sql('SELECT count(*) FROM ttl'), '0', 'ttl: nothing visible');

# history rows older than widecol.compaction_history_retention (30 days) go
sql(q{INSERT INTO widecol.compaction_history
	  VALUES ('ttl'::regclass, 'public.ttl', 'size_tiered', 'minor', now() - interval '60 days',
	          now() - interval '60 days', 2, 1, 2, 1, 100, 50, 0, 0, 1, 0, true)});
ok($node->poll_query_until('postgres', q{
		SELECT count(*) = 0 FROM widecol.compaction_history WHERE finished < now() - interval '59 days'}),
	'the worker deleted a history row older than the retention');
is(sql(q{SELECT count(*) FROM widecol.compactions WHERE "table" = 'ttl'::regclass}), '1',
	'recent history rows stay');

is(sql(q{SELECT count(*) || '/' || widecol.level0_pages('bad') FROM widecol.runs('bad')}), '4/1',
	'bad: autocompact = off, untouched by the worker');

# a compaction big enough to be seen: about 12 MB of row versions at
# widecol.compaction_throughput = 1 MB/s
sql(q{
	CREATE TABLE big (k int, v text) USING widecol
	  WITH (widecol.partition_key = 'k', widecol.autocompact = off);
	SET widecol.level0_max_size = '64MB';   -- four runs of the same size
	BEGIN;
	INSERT INTO big SELECT g, repeat(md5(g::text), 2) || ' a' FROM generate_series(1, 30000) g;
	SELECT widecol.flush('big');
	INSERT INTO big SELECT g, repeat(md5(g::text), 2) || ' b' FROM generate_series(1, 30000) g;
	SELECT widecol.flush('big');
	INSERT INTO big SELECT g, repeat(md5(g::text), 2) || ' c' FROM generate_series(1, 30000) g;
	SELECT widecol.flush('big');
	INSERT INTO big SELECT g, repeat(md5(g::text), 2) || ' d' FROM generate_series(1, 30000) g;
	SELECT widecol.flush('big');
	COMMIT;
	ALTER TABLE big SET (widecol.autocompact = on);
});
my $big_before = sql(q{SELECT count(*) || ':' || md5(string_agg(v, ',' ORDER BY k)) FROM big});
ok($node->poll_query_until('postgres', q{
		SELECT count(*) = 1 FROM pg_stat_activity
		 WHERE backend_type = 'widecol worker'
		   AND query = 'widecol: compacting public.big (size_tiered, 4 runs)'}),
	'pg_stat_activity shows the worker compacting big');

# reads and writes of big do not wait for the worker's compaction (it takes
# 14 s at this throughput; they must finish within 5 s)
is(sql(q{
	SET statement_timeout = '5s';
	INSERT INTO big VALUES (-1, 'written during the compaction');
	UPDATE big SET v = 'updated during the compaction' WHERE k = -1;
	SELECT v FROM big WHERE k = -1;
	DELETE FROM big WHERE k = -1;
	SELECT count(*) FROM big WHERE k = 5;
}), "updated during the compaction
1", 'DML and reads run while the worker compacts the table');
is(sql(q{SELECT count(*) FROM pg_stat_activity
		 WHERE backend_type = 'widecol worker' AND query LIKE 'widecol: compacting public.big%'}), '1',
	'... and the compaction was still running');

# the worker compacts at a lower CPU priority than the server's
# (widecol.worker_nice, default 10): field 19 of /proc/PID/stat
sub nice_of
{
	my $pid = shift;
	open(my $fh, '<', "/proc/$pid/stat") or return "no /proc/$pid/stat: $!";
	my $stat = <$fh>;
	close($fh);
	$stat =~ s/^.*\) //s;		# the command name may hold spaces
	return (split(/ /, $stat))[16];
}
my $worker_pid = sql(q{SELECT pid FROM pg_stat_activity
		 WHERE backend_type = 'widecol worker' AND query LIKE 'widecol: compacting public.big%'});
my ($postmaster_pid) = split(/\n/, slurp_file($node->data_dir . '/postmaster.pid'));
is(sql('SHOW widecol.worker_nice'), '10', 'widecol.worker_nice defaults to 10');
cmp_ok(nice_of($postmaster_pid), '<', 10, 'the postmaster runs below nice 10');
is(nice_of($worker_pid), '10', 'the compacting worker runs at nice 10');

# a data block of a run of bad to corrupt: the page type (4 = run data) is
# the first field of the special space, the last 24 bytes of the page
sql('CHECKPOINT');
my $blk = sql(q{
	SELECT min(b) FROM generate_series(1, pg_relation_size('bad') / 8192 - 1) b
	WHERE get_byte(pg_read_binary_file(pg_relation_filepath('bad'), b * 8192 + 8192 - 24, 1), 0) = 4});
ok($blk > 0, "found a data block of bad (block $blk)");
my $path = $node->data_dir . '/' . sql("SELECT pg_relation_filepath('bad')");

# a fast shutdown does not wait for the throttled compaction to finish
my $t0 = time();
$node->stop('fast');
my $elapsed = time() - $t0;
cmp_ok($elapsed, '<', 6, sprintf('fast shutdown during a compaction took %.1fs', $elapsed));

flip_payload($path, $blk, 16);

$node->append_conf('postgresql.conf', 'widecol.compaction_throughput = 0');
$node->start;
is(sql(q{SELECT count(*) || ':' || md5(string_agg(v, ',' ORDER BY k)) FROM big}), $big_before,
	'big: the interrupted compaction lost nothing');
is(sql(q{SELECT bool_and(ok) FROM widecol.verify('big')}), 't', 'big: verify ok');

# bad now fails on its damaged run and is skipped from then on; big, after it
# in OID order, is compacted
sql(q{ALTER TABLE bad SET (widecol.autocompact = on)});
# (the four runs become one; the writes made during the first attempt are
# flushed into a small run of another size tier)
ok($node->poll_query_until('postgres', q{
		SELECT EXISTS (SELECT FROM widecol.compactions
		               WHERE "table" = 'big'::regclass AND by_worker AND runs_in = 4 AND runs_out = 1
		                 AND rows_in = 120000 AND rows_out = 30000)}),
	'big compacted by the worker although bad fails');
is(sql(q{SELECT count(*) || ':' || md5(string_agg(v, ',' ORDER BY k)) FROM big}), $big_before,
	'big: same contents after the compaction');
ok($node->wait_for_log(
		qr/WARNING:  widecol worker: widecol table public\.bad is damaged: run \d+, block $blk: widecol: checksum mismatch in block $blk/),
	'the damage in bad is logged as a WARNING naming the table and block');
ok($node->wait_for_log(qr/WARNING:  widecol worker: skipping maintenance of damaged widecol table public\.bad/),
	'later rounds skip bad with a WARNING (011_damaged_table tests this in detail)');
is(sql(q{SELECT count(*) FROM widecol.runs('bad')}), '4', 'bad: its runs are still there');
is(sql(q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'widecol launcher'}), '1',
	'the launcher is still running');

$node->stop;
done_testing();
