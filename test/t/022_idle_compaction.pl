# 022_idle_compaction: the workers merge the smaller runs of a table that
# has stopped taking writes (widecol.idle_compaction_delay), so that a point
# read probes one run or two instead of what size-tiered compaction left:
# three similar runs of a widecol partition end as one; a large run and two
# small ones end as two, the large one untouched; the current window of a
# time_window table ends as one run; the rows read the same before and
# after.  A table written every fraction of a second with write times a
# year old (widecol.write_time) is not taken for idle while it is written,
# and is merged once it stops; with the setting 0 nothing is merged.  The
# tables are an ordinary role's.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;
use Time::HiRes qw(time usleep);

my $node = widecol_node('idle', qq{
widecol.naptime = 1
widecol.idle_compaction_delay = 4
});

sub sql { return $node->safe_psql('postgres', shift, extra_params => [ '-U', 'app' ]); }

$node->safe_psql('postgres', q{
	CREATE ROLE app LOGIN;
	CREATE EXTENSION widecol;
	GRANT CREATE ON SCHEMA public TO app;
});

# runs written in one transaction each, so a worker pass sees them all at once
sub runs_of
{
	my ($table, @inserts) = @_;
	sql('BEGIN; ' . join(' ', map { "$_; SELECT widecol.flush('$table');" } @inserts) . ' COMMIT;');
}
sub nruns { return sql("SELECT count(*) FROM widecol.runs('$_[0]')"); }
sub content { return sql("SELECT count(*), md5(string_agg(t::text, ',' ORDER BY t::text)) FROM $_[0] t"); }
sub idle_merges
{
	return sql(qq{SELECT count(*) FROM widecol.compactions
	              WHERE "table" = '$_[0]'::regclass AND kind = 'idle' AND by_worker});
}

# images_1: three runs of one size, a widecol partition of a partitioned table
sql(q{
	CREATE TABLE images (device int, shot int, path text) PARTITION BY LIST (device);
	CREATE TABLE images_1 PARTITION OF images FOR VALUES IN (1) USING widecol
	  WITH (widecol.partition_key = 'device', widecol.clustering_key = 'shot');
});
runs_of('images_1', map { "INSERT INTO images SELECT 1, g, 'img/$_/' || g FROM generate_series($_ * 1000, $_ * 1000 + 999) g" } 1 .. 3);

# tiered: a large run and two small ones updating some of its rows
sql(q{CREATE TABLE tiered (k int, v text) USING widecol WITH (widecol.partition_key = 'k')});
runs_of('tiered',
	"INSERT INTO tiered SELECT g, md5(g::text) || md5((-g)::text) FROM generate_series(1, 50000) g",
	"UPDATE tiered SET v = 'small one' WHERE k <= 200",
	"UPDATE tiered SET v = 'small two' WHERE k <= 100");
my $large = sql(q{SELECT run_id FROM widecol.runs('tiered') ORDER BY compressed_bytes DESC LIMIT 1});

# tw: three runs in the current window of a time_window table
sql(q{CREATE TABLE tw (k int, v text) USING widecol
	  WITH (widecol.partition_key = 'k', widecol.compaction = 'time_window', widecol.compaction_window = '1 day')});
runs_of('tw', map { "INSERT INTO tw SELECT g, 'tw $_' FROM generate_series($_ * 100, $_ * 100 + 99) g" } 1 .. 3);

my %before = map { $_ => content($_) } qw(images_1 tiered tw);
is(nruns('images_1') . nruns('tiered') . nruns('tw'), '333', 'three runs in each table to begin with');

ok($node->poll_query_until('postgres', q{
		SELECT (SELECT count(*) FROM widecol.runs('images_1')) = 1
		   AND (SELECT count(*) FROM widecol.runs('tiered')) = 2
		   AND (SELECT count(*) FROM widecol.runs('tw')) = 1}),
	'the quiet tables were merged: images_1 and tw to one run, tiered to two');
is(idle_merges('images_1') . idle_merges('tiered') . idle_merges('tw'), '111', 'each by one idle merge of the workers');
is(sql(q{SELECT runs_in FROM widecol.compactions WHERE "table" = 'tiered'::regclass AND kind = 'idle'}),
	'2', 'tiered: the idle merge took the two small runs');
is(sql(q{SELECT count(*) FROM widecol.runs('tiered') WHERE run_id = } . $large), '1', 'tiered: its large run was left as it was');
is(sql(q{SELECT count(*) FROM widecol.compactions WHERE kind <> 'idle'}), '0', 'no other compaction ran');
is(content($_), $before{$_}, "$_: the same rows after the merge") for qw(images_1 tiered tw);
is(sql(q{SELECT string_agg(v, ',' ORDER BY k) FROM tiered WHERE k IN (1, 150)}
	  . q{ UNION ALL SELECT (v = md5('300') || md5('-300'))::text FROM tiered WHERE k = 300}),
	"small two,small one\ntrue", 'tiered: the newest version of each key');
cmp_ok(sql(qq{SELECT compressed_bytes FROM widecol.runs('tiered') WHERE run_id = $large}), '>=', 256 * 1024,
	'tiered: its large run is not a small one (those are merged whole)');
is(sql(q{SELECT count(*) FROM images WHERE device = 1 AND shot BETWEEN 2500 AND 2509}), '10', 'images_1: a seek through the parent');

# nothing more to do: a second look a few passes later finds the same runs
my $runs = sql(q{SELECT string_agg(run_id::text, ',' ORDER BY run_id) FROM widecol.runs('tiered')});
sleep 3;
is(sql(q{SELECT string_agg(run_id::text, ',' ORDER BY run_id) FROM widecol.runs('tiered')}), $runs,
	'tiered: no further merge of a quiet table at two runs');

# busy: written every 0.3 s with write times of 2020; never idle meanwhile
sql(q{CREATE TABLE busy (k int, v text) USING widecol WITH (widecol.partition_key = 'k')});
my $until = time + 10;
my $i = 0;
while (time < $until)
{
	$i++;
	sql("SET widecol.write_time = '2020-01-01 00:00:00+00'; INSERT INTO busy SELECT g, 'w$i' FROM generate_series(1, 50) g");
	usleep(300_000);
}
cmp_ok(sql(q{SELECT count(*) FROM widecol.compactions WHERE "table" = 'busy'::regclass}), '>=', 1,
	'busy: the workers compacted it while it was written');
is(idle_merges('busy'), '0', 'busy: no idle merge while it took writes (old write times notwithstanding)');
# (its last runs are small: merged whole, or by size-tiered compaction if four)
ok($node->poll_query_until('postgres', q{SELECT count(*) = 1 FROM widecol.runs('busy')}),
	'busy: one run once it stopped taking writes')
  or diag(sql(q{SELECT string_agg(compressed_bytes::text, ',') FROM widecol.runs('busy')}));
is(sql('SELECT count(*), min(v), max(v) FROM busy'), "50|w$i|w$i", 'busy: the newest versions');

# the setting 0: no idle merge
$node->safe_psql('postgres', 'ALTER SYSTEM SET widecol.idle_compaction_delay = 0; SELECT pg_reload_conf()');
sql(q{CREATE TABLE off (k int, v text) USING widecol WITH (widecol.partition_key = 'k')});
runs_of('off', map { "INSERT INTO off SELECT g, 'off $_' FROM generate_series(1, 100) g" } 1 .. 2);
# a row in level 0: the workers' flush shows they passed over the table
sql(q{INSERT INTO off VALUES (0, 'level 0')});
ok($node->poll_query_until('postgres', q{SELECT widecol.level0_pages('off') = 0}), 'off: a worker flushed it');
sleep 6;
is(nruns('off'), '3', 'off: three runs stay (widecol.idle_compaction_delay = 0)');
is(idle_merges('off'), '0', 'off: no idle merge');

$node->stop;
done_testing();
