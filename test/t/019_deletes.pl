
# Copyright: widecol authors.  TAP test, PostgreSQL 15.
#
# 019_deletes: the delete paths that write no tombstone per row through the
# row-by-row path -- a partition delete counted from a compacted run's leaf
# index (one range tombstone), a retention delete by a partition column
# (WidecolKeyDelete: tombstones streamed into a run), a key-only delete
# under a seek (tombstones buffered, few: level 0) -- must survive kill -9,
# replicate to a streaming standby (with wal_consistency_checking) and
# dump/restore, each compared with a heap copy that took the same
# committed statements.  In flight at the crash: an uncommitted retention
# delete (its run must vanish) and a statement that failed halfway.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;

my $primary = widecol_node('deletes', q{
widecol.max_workers = 0
wal_consistency_checking = 'all,widecol'
wal_keep_size = '1GB'
}, allows_streaming => 1);

sub p { return $primary->safe_psql('postgres', $_[0]); }

p(q{
CREATE EXTENSION widecol;
CREATE TABLE ev (dev text, day date, ts bigint, v int) USING widecol
  WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts');
CREATE TABLE ev_heap (dev text, day date, ts bigint, v int, PRIMARY KEY (dev, day, ts));
INSERT INTO ev_heap SELECT 'd' || (g % 30), date '2025-05-01' + (g / 30) % 10, g, g % 1000
  FROM generate_series(1, 6000) g;
INSERT INTO ev_heap SELECT 'big', date '2025-05-01', g, g FROM generate_series(1, 8000) g;
INSERT INTO ev SELECT * FROM ev_heap;
SELECT widecol.compact('ev', true);
});

$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('deletes_standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;

sub same
{
	my ($node, $db) = @_;
	my $q = "SELECT count(*) || ' ' || md5(string_agg(dev || day || ts || v, ',' ORDER BY dev, day, ts)) FROM";
	return $node->safe_psql($db, "$q ev") eq $primary->safe_psql('postgres', "$q ev_heap");
}

# Run a DELETE on both tables, then compare them.
sub both
{
	my ($sql, $name) = @_;
	(my $heap_sql = $sql) =~ s/\bev\b/ev_heap/g;
	p($sql);
	p($heap_sql);
	ok(same($primary, 'postgres'), $name);
}

# a compacted partition, counted from the leaf index: one range tombstone
my $plan = p(q{EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  DELETE FROM ev WHERE dev = 'big' AND day = '2025-05-01'});
like($plan, qr/Rows Deleted: 8000/, 'the partition delete counts its 8000 rows');
like($plan, qr/Key Pages Read: [0-3]\n/, '... from the leaf index (at most 3 key pages read)');
p(q{DELETE FROM ev_heap WHERE dev = 'big' AND day = '2025-05-01'});
ok(same($primary, 'postgres'), 'partition delete');

# a retention delete: WidecolKeyDelete streams its tombstones into a run
like(p(q{EXPLAIN (COSTS OFF) DELETE FROM ev WHERE day < '2025-05-03'}), qr/WidecolKeyDelete/,
	'a retention delete reads keys only');
both(q{DELETE FROM ev WHERE day < '2025-05-03'}, 'retention delete');
is(p(q{SELECT count(*) FROM widecol.runs('ev') WHERE ntombstones = nrows AND nrows = 1200}), '1',
	'its 1200 tombstones are one run');

# a key-only delete under a seek: few tombstones, level 0
both(q{DELETE FROM ev WHERE dev = 'd7' AND day = '2025-05-05' AND ts % 3 = 0}, 'key-only delete under a seek');

# failing halfway leaves nothing
my ($ret, $out, $err) = $primary->psql('postgres',
	q{DELETE FROM ev WHERE day >= '2025-05-08' AND 1 / (ts - 5910) <> 7});
like($err, qr/division by zero/, 'a retention delete that fails halfway');
ok(same($primary, 'postgres'), '... leaves no tombstone');

$primary->wait_for_catchup($standby);
ok(same($standby, 'postgres'), 'the standby has the same rows');

# kill -9 with an uncommitted retention delete in flight
my $inflight = $primary->background_psql('postgres');
$inflight->query_safe(q{BEGIN; DELETE FROM ev WHERE day >= '2025-05-06'});
is($inflight->query_safe(q{SELECT count(*) FROM ev WHERE day >= '2025-05-06'}), '0',
	'the open transaction sees its own delete');
$primary->stop('immediate');
$inflight->{run}->kill_kill;
$primary->start;
ok(same($primary, 'postgres'), 'after kill -9: committed deletes hold, the uncommitted one is gone');
is(p(q{SELECT bool_and(ok) FROM widecol.verify('ev')}), 't', 'verify after recovery');

# after recovery: delete again, compact, and follow on the standby
both(q{DELETE FROM ev WHERE day = '2025-05-09' AND dev > 'd2'}, 'retention delete after recovery');
p(q{SELECT widecol.compact('ev', true)});
ok(same($primary, 'postgres'), 'compaction drops what the tombstones cover');
$primary->wait_for_catchup($standby);
ok(same($standby, 'postgres'), 'the standby follows recovery and compaction');

# dump and restore
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $dump = "$tmp/deletes.dump";
$primary->command_ok([ 'pg_dump', '-Fc', '-t', 'ev', '-f', $dump, '-d', $primary->connstr('postgres') ],
	'pg_dump');
p('CREATE DATABASE restored');
$primary->safe_psql('restored', 'CREATE EXTENSION widecol');
$primary->command_ok([ 'pg_restore', '-d', $primary->connstr('restored'), $dump ], 'pg_restore');
ok(same($primary, 'restored'), 'restored rows are the live ones');

$standby->stop;
$primary->stop;
done_testing();
