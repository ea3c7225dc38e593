
# Copyright: widecol authors.  TAP test, PostgreSQL 15.
#
# 021_value_page_ring: point reads of a table whose runs are larger than
# the buffer pool take their value pages into a small ring of buffers
# (wc_value_page_ring, runread.c), so that they do not evict the key, index
# and bloom pages the next lookup needs; runs the pool can hold are read as
# before, their value pages staying cached.  On a server with 2 MB of shared buffers (256):
#
#  - 3,000 lookups by key (an ordinary role, a prepared plan) on a table of
#    one run of more pages than the pool return exactly the heap's rows,
#    and afterwards at most the ring's 32 buffers hold its value pages;
#  - the same lookups on a table whose run is smaller than the pool leave
#    more than 32 of its value pages cached (no ring);
#  - a table of four runs, each smaller than the pool and together larger,
#    takes the ring too;
#  - a partitioned parent with the large table as a partition routes its
#    lookups to the same reads, with the same results;
#  - a lookup failing halfway (an error raised after some rows) leaves
#    the ring usable: the next lookups are still right;
#  - full scans take a ring only for a table larger than a quarter of the
#    pool, as heap's do: a smaller table's pages stay cached after one;
#    "larger" counts the pages the scan reads, not the free pages a major
#    compaction left in the file (a table whose file is larger than a
#    quarter of the pool and its runs are not, scanned through a
#    partitioned parent, stays cached too);
#  - value hints (run format 13) prefetch the value page a lookup reads;
#  - a bloom probe that misses shared buffers reads its run's index and
#    bloom pages ahead, once per run and backend;
#  - effective_io_concurrency = 0 turns both off;
#  - a bulk write's extent larger than its ring stays in shared buffers.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;

my $node = widecol_node('ring', q{
shared_buffers = '2MB'
widecol.max_workers = 0
autovacuum = off
});

sub p { return $node->safe_psql('postgres', $_[0]); }

p(q{
CREATE EXTENSION widecol;
CREATE EXTENSION pg_buffercache;
CREATE ROLE reader LOGIN;
GRANT pg_monitor TO reader;
CREATE TABLE meta (image_id uuid, device_id text, object_key text, w int, h int, hash text)
  USING widecol WITH (widecol.partition_key = 'image_id');
CREATE TABLE small (LIKE meta) USING widecol WITH (widecol.partition_key = 'image_id');
CREATE TABLE split (LIKE meta) USING widecol WITH (widecol.partition_key = 'image_id');
CREATE TABLE meta_heap (LIKE meta, PRIMARY KEY (image_id));
CREATE TABLE parted (LIKE meta) PARTITION BY LIST (device_id);
CREATE TABLE parted_a PARTITION OF parted FOR VALUES IN ('cam-1')
  USING widecol WITH (widecol.partition_key = 'image_id');
CREATE TABLE parted_rest PARTITION OF parted DEFAULT
  USING widecol WITH (widecol.partition_key = 'image_id');
GRANT SELECT ON meta, small, split, meta_heap, parted TO reader;
});

my $rows = q{SELECT md5('img-' || n)::uuid, 'cam-' || (n % 7), 'raw/cam-' || (n % 7) || '/' || md5('k' || n) || '.jpg',
	1920, 1080, md5('c' || n) || md5('d' || n) FROM generate_series(1, %d) n};
my $big = copy_to_file($node, $node->basedir, 'big', sprintf($rows, 60000));
my $few = copy_to_file($node, $node->basedir, 'few', sprintf($rows, 12000));
p("COPY meta FROM '$big'; COPY meta_heap FROM '$big'; COPY small FROM '$few'; COPY parted FROM '$big'");
p("SELECT widecol.compact(t) FROM unnest('{meta,small,parted_a,parted_rest}'::regclass[]) t");
# four runs, each smaller than the pool, together larger
for my $i (0 .. 3)
{
	my $f = copy_to_file($node, $node->basedir, "split$i",
		sprintf($rows, 60000) . " WHERE n % 4 = $i");
	p("COPY split FROM '$f'");
}
p('CHECKPOINT');

my $nbuffers = p("SELECT setting FROM pg_settings WHERE name = 'shared_buffers'");
my ($big_pages, $big_runs) = split /\|/, p("SELECT sum(npages), count(*) FROM widecol.runs('meta')");
my $small_pages = p("SELECT sum(npages) FROM widecol.runs('small')");
my ($split_max, $split_sum, $split_runs) = split /\|/,
  p("SELECT max(npages), sum(npages), count(*) FROM widecol.runs('split')");
note "runs: meta $big_pages pages, small $small_pages pages";
is($big_runs, 1, 'the large table is one run');
cmp_ok($big_pages, '>', $nbuffers, "its run ($big_pages pages) is larger than the buffer pool ($nbuffers)");
cmp_ok($small_pages, '<', $nbuffers, "the small table's run ($small_pages pages) is not");
is($split_runs, 4, 'the split table is four runs');
cmp_ok($split_max, '<', $nbuffers, "each smaller than the pool (largest $split_max pages)");
cmp_ok($split_sum, '>', $nbuffers, "together larger ($split_sum pages)");

# blocks of a table's value pages, from its file
sub value_blocks
{
	my ($table) = @_;
	my $path = $node->data_dir . '/' . p("SELECT pg_relation_filepath('$table')");
	return join(',', map { $_->[0] } pages_of_type($path, 8));
}

sub cached_value_pages
{
	my ($table) = @_;
	my $blocks = value_blocks($table);
	return p("SELECT count(*) FROM pg_buffercache WHERE relfilenode = pg_relation_filenode('$table')
		AND reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND relblocknumber = ANY ('{$blocks}'::int[])");
}

# n lookups by key, each one statement (a seek), as reader; returns the
# number of rows that differ from the heap's and the number found
sub lookups
{
	my ($table, $n, $max) = @_;
	return $node->safe_psql('postgres', qq{
SET ROLE reader;
SELECT lookups('$table', $n, $max)});
}

p(q{
CREATE FUNCTION lookups(tbl regclass, n int, maxkey int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  k uuid; w text; h text; differ int := 0; found int := 0;
BEGIN
  FOR i IN 1 .. n LOOP
    k := md5('img-' || (1 + (i * 7919) % maxkey))::uuid;
    EXECUTE format('SELECT row(t.*)::text FROM %s t WHERE image_id = $1', tbl) INTO w USING k;
    SELECT row(m.*)::text INTO h FROM meta_heap m WHERE image_id = k;
    IF w IS DISTINCT FROM h THEN differ := differ + 1; END IF;
    IF w IS NOT NULL THEN found := found + 1; END IF;
  END LOOP;
  RETURN differ || ' ' || found;
END $$;
-- the same lookups without the heap's: what stays cached is the table's alone
CREATE FUNCTION lookups_only(tbl regclass, n int, maxkey int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  w text; found int := 0;
BEGIN
  FOR i IN 1 .. n LOOP
    EXECUTE format('SELECT row(t.*)::text FROM %s t WHERE image_id = $1', tbl) INTO w
      USING md5('img-' || (1 + (i * 7919) % maxkey))::uuid;
    IF w IS NOT NULL THEN found := found + 1; END IF;
  END LOOP;
  RETURN found;
END $$;
});

sub lookups_only
{
	my ($table, $n, $max) = @_;
	return $node->safe_psql('postgres', qq{
SET ROLE reader;
SELECT lookups_only('$table', $n, $max)});
}

like(p(q{EXPLAIN (COSTS OFF) SELECT * FROM meta WHERE image_id = md5('img-1')::uuid}),
	qr/WidecolSeek/, 'a lookup by key is a seek');
is(lookups('meta', 3000, 60000), '0 3000', '3,000 lookups in the large run return the heap rows');
is(lookups_only('meta', 3000, 60000), 3000, 'the same lookups again, without the heap');
my $cached = cached_value_pages('meta');
cmp_ok($cached, '<=', 32, "at most the ring's 32 buffers hold its value pages ($cached)");

is(lookups('small', 3000, 12000), '0 3000', '3,000 lookups in the small run return the heap rows');
is(lookups_only('small', 3000, 12000), 3000, 'the same lookups again, without the heap');
my $small_cached = cached_value_pages('small');
cmp_ok($small_cached, '>', 32, "the small run's value pages stay cached ($small_cached)");

is(lookups('split', 3000, 60000), '0 3000', '3,000 lookups in the four runs return the heap rows');
is(lookups_only('split', 3000, 60000), 3000, 'the same lookups again, without the heap');
my $split_cached = cached_value_pages('split');
cmp_ok($split_cached, '<=', 32, "runs together larger than the pool: their value pages in the ring ($split_cached)");

my ($pa_pages) = p("SELECT sum(npages) FROM widecol.runs('parted_rest')");
cmp_ok($pa_pages, '>', $nbuffers, 'the default partition\'s run is larger than the pool');
is(lookups('parted', 3000, 60000), '0 3000', 'lookups through the partitioned parent return the heap rows');
is(lookups_only('parted', 3000, 60000), 3000, 'the same lookups again, without the heap');
cmp_ok(cached_value_pages('parted_rest'), '<=', 32, "the partition's value pages went through the ring");

# a statement failing halfway, then lookups again in the same session
my ($ret, $out, $err) = $node->psql('postgres', q{
SET ROLE reader;
SELECT CASE WHEN n = 500 THEN (1/0)::text ELSE (SELECT hash FROM meta WHERE image_id = md5('img-' || n)::uuid) END
FROM generate_series(1, 1000) n;
SELECT count(*) FROM generate_series(1, 1000) n, meta m, meta_heap h
 WHERE m.image_id = md5('img-' || n * 13)::uuid AND h.image_id = m.image_id AND m.hash = h.hash;
}, on_error_stop => 0);
like($err, qr/division by zero/, 'a statement fails halfway through its lookups');
like($out, qr/^1000$/m, 'the next statement in the session finds all 1000 rows');

# full scans choose a ring as heap's do: a table of at most a quarter of
# the pool (here 64 blocks) is read into ordinary buffers and stays cached,
# a larger one goes through the ring (32 buffers); after a restart, so
# that only the scan has read them
p("CREATE TABLE tiny (LIKE meta) USING widecol WITH (widecol.partition_key = 'image_id'); GRANT SELECT ON tiny TO reader");
p("COPY tiny FROM '" . copy_to_file($node, $node->basedir, 'tiny', sprintf($rows, 4000)) . "'");
my ($tiny_blocks, $tiny_pages) = split /\|/,
  p("SELECT pg_relation_size('tiny') / 8192,
       (SELECT sum(pages) FROM widecol.run_pages('tiny') WHERE kind IN ('key', 'value', 'value_columns'))");
cmp_ok($tiny_blocks, '<=', $nbuffers / 4, "the tiny table ($tiny_blocks blocks) is at most a quarter of the pool");
cmp_ok($tiny_pages, '>', 40, "its run's key and value pages ($tiny_pages) are more than the ring holds");
# the same rows written twice, then compacted into one run: the file keeps
# the first two runs' pages, free
p("CREATE TABLE churn (LIKE meta) USING widecol WITH (widecol.partition_key = 'image_id')");
p("CREATE TABLE churn_parent (LIKE meta) PARTITION BY LIST (device_id)");
p("ALTER TABLE churn_parent ATTACH PARTITION churn DEFAULT; GRANT SELECT ON churn_parent TO reader");
p("COPY churn FROM '" . copy_to_file($node, $node->basedir, 'churn', sprintf($rows, 4000)) . "'") for 1 .. 2;
p("SELECT widecol.compact('churn', major => true)");
my ($churn_blocks, $churn_runs, $churn_live, $churn_pages) = split /\|/,
  p("SELECT pg_relation_size('churn') / 8192, (SELECT count(*) FROM widecol.runs('churn')),
       (SELECT sum(npages) FROM widecol.runs('churn')),
       (SELECT sum(pages) FROM widecol.run_pages('churn') WHERE kind IN ('key', 'value', 'value_columns'))");
is($churn_runs, 1, 'the churned table is one run after its major compaction');
cmp_ok($churn_blocks, '>', $nbuffers / 4, "its file ($churn_blocks blocks) is larger than a quarter of the pool");
cmp_ok($churn_live, '<=', $nbuffers / 4, "its run ($churn_live pages) is not");
cmp_ok($churn_pages, '>', 40, "the run's key and value pages ($churn_pages) are more than the ring holds");
$node->restart;
sub cached_pages
{
	my ($table) = @_;
	return p("SELECT count(*) FROM pg_buffercache WHERE relfilenode = pg_relation_filenode('$table')
		AND reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())");
}
is($node->safe_psql('postgres', "SET ROLE reader; SELECT count(*), sum(w) FROM tiny"), '4000|7680000',
	'a full scan of the tiny table as reader');
my $tiny_cached = cached_pages('tiny');
cmp_ok($tiny_cached, '>=', $tiny_pages, "all the key and value pages the scan read stay cached ($tiny_cached)");
is($node->safe_psql('postgres', "SET ROLE reader; SELECT count(*), sum(w) FROM churn_parent"), '4000|7680000',
	'a full scan of the churned table through its partitioned parent as reader');
my $churn_cached = cached_pages('churn');
cmp_ok($churn_cached, '>=', $churn_pages, "all the key and value pages that scan read stay cached ($churn_cached)");
is($node->safe_psql('postgres', "SET ROLE reader; SELECT count(*), sum(w) FROM meta"), '60000|115200000',
	'a full scan of the large table as reader');
my $meta_cached = cached_value_pages('meta');
cmp_ok($meta_cached, '<=', 32, "the large table's value pages went through the ring ($meta_cached)");

# Value hints (run format 13): a point read of a run the pool cannot hold
# asks the kernel for the value page its leaf entry names (PrefetchBuffer)
# before it reads the key page; the page it then loads is that one.  500
# lookups in a nested loop, as reader, counted by EXPLAIN ANALYZE.
sub hinted
{
	my ($table, $n, $max) = @_;
	my $plan = $node->safe_psql('postgres', qq{
SET ROLE reader;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT t.* FROM generate_series(1, $n) g, $table t
 WHERE t.image_id = md5('img-' || (1 + (g * 7919) % $max))::uuid});
	my ($pre, $used, $keypages) = (0, 0, 0);
	$pre += $_ for $plan =~ /Value Pages Prefetched: (\d+)/g;
	$used += $_ for $plan =~ /Value Prefetches Used: (\d+)/g;
	$keypages += $_ for $plan =~ /Key Pages Read: (\d+)/g;
	my ($rows) = $plan =~ /Nested Loop \(actual rows=(\d+)/;
	return ($pre, $used, $rows // -1, $keypages);
}
my ($pre, $used, $found) = hinted('meta', 500, 60000);
is("$found $pre $used", '500 500 500',
	'one run larger than the pool: every lookup prefetched the value page it then read');
# every key of the run, so also each key page's first and last: each
# lookup reads one key page (a key page's first key was sought from the
# page before until stop 48: a key page read for nothing) and the value
# page its hint named
my $keypages;
($pre, $used, $found, $keypages) = hinted('meta', 60000, 60000);
is("$found $keypages $pre $used", '60000 60000 60000 60000',
	'every key of that run looked up: each read one key page and used its prefetch');
($pre, $used, $found) = hinted('split', 500, 60000);
is("$found $used", '500 500', 'four bulk-written runs: each lookup used its prefetch');
cmp_ok($pre, '<=', 520, "prefetches past them only for bloom false positives ($pre)");
# through the parent, the keys of the default partition, whose run the pool
# cannot hold (the other partition's it can)
my $in_rest = p(q{SELECT count(*) FROM generate_series(1, 500) g WHERE (1 + (g * 7919) % 60000) % 7 <> 1});
($pre, $used, $found) = hinted('parted', 500, 60000);
is("$found $pre $used", "500 $in_rest $in_rest", 'through the partitioned parent: the large partition\'s lookups');
($pre, $used, $found) = hinted('small', 500, 12000);
is("$found $pre", '500 0', 'a run the pool holds: no prefetches');
is(p(q{SELECT string_agg(problems, '; ') FROM widecol.verify('meta') WHERE NOT ok}), '',
	'verify checks every hint of the large run against its key pages');

# a bigint key sought with int literals, and values over 8 kB (out of
# line) among the rows: the hint names the page of the row's tuple
p(q{CREATE TABLE b8 (id bigint, v text) USING widecol WITH (widecol.partition_key = 'id');
GRANT SELECT ON b8 TO reader;
INSERT INTO b8 SELECT g, CASE WHEN g % 1000 = 0 THEN repeat(md5(g::text), 700) ELSE repeat(md5(g::text), 4) END
  FROM generate_series(1, 60000) g;
SELECT widecol.compact('b8')});
cmp_ok(p(q{SELECT sum(npages) FROM widecol.runs('b8')}), '>', $nbuffers, 'b8: its run is larger than the pool');
my $b8 = $node->safe_psql('postgres', q{
SET ROLE reader;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT length(v) FROM b8 WHERE id = 7000;
SELECT length(v) FROM b8 WHERE id = 7000;
SELECT length(v) FROM b8 WHERE id = 7001});
like($b8, qr/Value Pages Prefetched: 1\s+Value Prefetches Used: 1/,
	'an int literal against a bigint key: the lookup prefetched the page it read');
like($b8, qr/\n22400\n128$/, 'the value over 8 kB and its neighbour read back whole');

# a run written as format 12 did (no hints) reads the same, without them
p(q{CREATE TABLE old12 (LIKE meta) USING widecol WITH (widecol.partition_key = 'image_id');
GRANT SELECT ON old12 TO reader;
SET widecol.debug_run_format = 12;
COPY old12 FROM '} . $big . q{';
RESET widecol.debug_run_format});
is(lookups('old12', 3000, 60000), '0 3000', 'format 12: 3,000 lookups return the heap rows');
($pre, $used, $found) = hinted('old12', 500, 60000);
is("$found $pre", '500 0', 'format 12: no hints, no prefetches');
is(p(q{SELECT bool_and(ok) FROM widecol.verify('old12')}), 't', 'verify: format 12');

# Read-ahead: a point read that finds a bloom or index page missing from
# shared buffers asks the kernel for the run's whole extent of them at once
# (wc_read_ahead), once per run and backend.  After a restart (shared buffers empty), as
# reader, directly and through a partitioned parent.
p(q{CREATE TABLE split_parent (LIKE meta) PARTITION BY LIST (device_id);
ALTER TABLE split_parent ATTACH PARTITION split DEFAULT;
GRANT SELECT ON split_parent TO reader});
# two lookups of different keys in one session: the filters each read
# ahead, the runs it probed (newest first, up to the one holding the key),
# and the two rows' hashes
sub two_lookups
{
	my ($table, $n1, $n2) = @_;
	my @out;
	for my $n ($n1, $n2)
	{
		push @out, qq{EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT * FROM $table WHERE image_id = md5('img-$n')::uuid;
SELECT hash FROM $table WHERE image_id = md5('img-$n')::uuid;
SELECT 'next';};
	}
	my $out = $node->safe_psql('postgres', "SET ROLE reader;\n" . join("\n", @out));
	my @res;
	for my $part ((split /^next$/m, $out)[0 .. 1])
	{
		my $ahead = $part =~ /Index and Bloom Pages Read Ahead: (\d+) runs/ ? $1 : 0;
		my ($checks) = $part =~ /Runs Considered: (\d+)/;
		my $newer = $part =~ /Runs Skipped by Write Time: (\d+)/ ? $1 : 0;
		my ($hash) = $part =~ /^([0-9a-f]{64})$/m;
		push @res, [ $ahead, $checks - $newer, $hash // '' ];
	}
	return @res;
}
my $hash_of = sub { p("SELECT md5('c$_[0]') || md5('d$_[0]')") };
$node->restart;
my ($l1, $l2) = two_lookups('split', 4242, 31337);
is("$l1->[0] $l1->[2]", "$l1->[1] " . $hash_of->(4242),
	"four runs, cold: each run probed had its index and bloom pages read ahead ($l1->[1]), the row found");
cmp_ok($l1->[1], '>=', 1, 'at least one run was probed');
# newest first, the runs a lookup probes are a prefix of the same order
my $more = $l2->[1] > $l1->[1] ? $l2->[1] - $l1->[1] : 0;
is("$l2->[0] $l2->[2]", "$more " . $hash_of->(31337),
	"another key in the same session: only those of runs not probed before ($more)");
$node->restart;
($l1, $l2) = two_lookups('split_parent', 31337, 4242);
is("$l1->[0] $l1->[2]", "$l1->[1] " . $hash_of->(31337), 'through the partitioned parent, cold: the same');
is("$l2->[0] $l2->[2]", '0 ' . $hash_of->(4242), '... and not again for the next key');
($l1, $l2) = two_lookups('split', 60001, 60002);
is("$l1->[2]$l2->[2]", '', 'keys in no run: found in none');
# effective_io_concurrency = 0 (PostgreSQL's switch for prefetching): no
# read-ahead and no hinted prefetch, the same rows
p(q{ALTER DATABASE postgres SET effective_io_concurrency = 0});
$node->restart;
($l1, $l2) = two_lookups('split', 4242, 31337);
is("$l1->[0] $l1->[2] $l2->[2]", '0 ' . $hash_of->(4242) . ' ' . $hash_of->(31337),
	'effective_io_concurrency = 0: nothing read ahead, the rows found');
($pre, $used, $found) = hinted('meta', 200, 60000);
is("$found $pre", '200 0', 'effective_io_concurrency = 0: no value page prefetched');
p(q{ALTER DATABASE postgres RESET effective_io_concurrency});
($pre, $used, $found) = hinted('meta', 200, 60000);
is("$found $pre $used", '200 200 200', 'reset: each lookup prefetches its value page again');
# a run of format 6, whose bloom pages a probe reads into the backend's
# cache: the first index page missing from shared buffers asks for them
p(q{CREATE TABLE old6 (LIKE meta) USING widecol WITH (widecol.partition_key = 'image_id');
GRANT SELECT ON old6 TO reader;
SET widecol.debug_run_format = 6;
COPY old6 FROM '} . $big . q{';
RESET widecol.debug_run_format});
$node->restart;
($l1, $l2) = two_lookups('old6', 4242, 31337);
is("$l1->[0] $l1->[2]", '1 ' . $hash_of->(4242), 'format 6, cold: a missing index page reads its run ahead');
is("$l2->[0] $l2->[2]", '0 ' . $hash_of->(31337), '... once');
# a run's extent (header, index, bloom, value directory) is written into
# ordinary buffers, not the writer's ring, when it is at most a quarter of
# the pool: after a bulk write whose extent is larger than the ring (32
# buffers here), all of it is still in shared buffers
sub extent_blocks
{
	my ($table) = @_;
	my $path = $node->data_dir . '/' . p("SELECT pg_relation_filepath('$table')");
	return map { $_->[0] } map { pages_of_type($path, $_) } (3, 5, 6, 9, 11);
}
p(q{CREATE TABLE warm (LIKE meta) USING widecol WITH (widecol.partition_key = 'image_id')});
$node->restart;
p("COPY warm FROM '" . copy_to_file($node, $node->basedir, 'warm', sprintf($rows, 150000)) . "'");
p('CHECKPOINT');
my @wext = extent_blocks('warm');
my $wlist = join(',', @wext);
my $wcached = p("SELECT count(*) FROM pg_buffercache WHERE relfilenode = pg_relation_filenode('warm')
	AND reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND relblocknumber = ANY ('{$wlist}'::int[])");
note 'warm: ' . scalar(@wext) . " extent pages, $wcached cached";
cmp_ok(scalar(@wext), '>', 32, 'the bulk write\'s extent is larger than its ring (' . scalar(@wext) . ' pages)');
cmp_ok(scalar(@wext), '<=', $nbuffers / 4, '... and at most a quarter of the pool');
is($wcached, scalar(@wext), 'all of it is in shared buffers after the write');
is(p(q{SELECT count(*) FROM warm WHERE image_id = md5('img-77777')::uuid}), '1', 'and a lookup finds its row');

# a bigint key sought with an int literal, cold: its one run read ahead;
# then a statement failing halfway through its lookups, and the session
# reads on (the run is not read ahead again), values over 8 kB whole
$node->restart;
my ($rret, $rout, $rerr) = $node->psql('postgres', q{
SET ROLE reader;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT length(v) FROM b8 WHERE id = 7000;
SELECT CASE WHEN g = 5 THEN (1/0)::text ELSE (SELECT v FROM b8 WHERE id = g * 1000) END
  FROM generate_series(1, 10) g;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT length(v) FROM b8 WHERE id = 9000;
SELECT length(v) FROM b8 WHERE id = 9000;}, on_error_stop => 0);
my @ahead = $rout =~ /Index and Bloom Pages Read Ahead: (\d+) runs/g;
is("@ahead", '1', 'bigint key, int literal, cold: its run read ahead once, not after the failed statement');
like($rerr, qr/division by zero/, 'the statement in between failed halfway');
like($rout, qr/\n22400$/, 'the next lookup reads its value over 8 kB whole');

done_testing();
