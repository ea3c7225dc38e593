
# 004_corruption: a byte flipped in a data block of a sorted run is detected
# by its CRC-32C: a query that reads the block fails with an ERROR naming
# the relation, the block and the run (no crash, no wrong rows), and
# widecol.verify() reports the block while the other runs stay ok.  The same
# for a value page (a run's tuples), which reads of key columns skip.
# verify reports a damaged key page alone, not what follows from it.  On a
# cluster with data checksums, where queries leave the CRC to PostgreSQL's
# check: PostgreSQL refuses the damaged pages, verify reports each, and
# with ignore_checksum_failure widecol's CRC catches them.
# Also: CREATE EXTENSION without shared_preload_libraries fails with a hint.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;

# no data checksums: widecol's own checksums must catch it; no background
# maintenance: this test counts runs (007 tests the workers)
my $node = widecol_node('corrupt', 'widecol.max_workers = 0');

$node->safe_psql('postgres', q{
	CREATE EXTENSION widecol;
	CREATE TABLE t (pk int, ck int, v text) USING widecol
	  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
	CREATE TABLE other (k int, v text) USING widecol WITH (widecol.partition_key = 'k');
	INSERT INTO other SELECT g, 'x' || g FROM generate_series(1, 1000) g;
	SELECT widecol.flush('other');
});
# two runs: COPY writes each as a run directly
my $csv = PostgreSQL::Test::Utils::tempdir . '/rows.csv';
for my $batch (0, 1)
{
	$node->safe_psql('postgres', qq{
		COPY (SELECT $batch, g, 'value-' || g || '-' || $batch FROM generate_series(1, 20000) g)
		  TO '$csv';
		COPY t FROM '$csv';
	});
}
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '40000', 'rows loaded');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM widecol.verify('t') WHERE segment = 'run' AND ok"), '2',
	'verify: both runs ok before');

# the first data block of run 1, found through the run's own index
my $run = $node->safe_psql('postgres',
	"SELECT min(run_id) FROM widecol.runs('t')");
my $blk = $node->safe_psql('postgres', q{
	SELECT min(b) FROM generate_series(1, pg_relation_size('t') / 8192 - 1) b
	WHERE (SELECT count(*) FROM t WHERE ctid = format('(%s,1)', b)::tid AND pk = 0) = 1});
ok($blk > 0, "found a data block of partition 0 (block $blk)");
my $path = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('t')");
$node->stop;

# flip bytes in the middle of the block's compressed payload
flip_payload($path, $blk, 16);
$node->start;

my ($ret, $stdout, $stderr) = $node->psql('postgres', 'SELECT count(*) FROM t');
isnt($ret, 0, 'a scan over the corrupt block fails');
like($stderr, qr/widecol: checksum mismatch in block $blk of relation "t" \(run \d+\)/,
	'the error names relation, block and run');
unlike($stdout, qr/\d/, 'no rows returned');

# the corruption is confined: a partition in the other run is still readable
is($node->safe_psql('postgres', 'SELECT count(*) FROM other'), '1000', 'other table unaffected');

my $report = $node->safe_psql('postgres',
	"SELECT segment, ok, coalesce(problems, '') FROM widecol.verify('t') ORDER BY id");
like($report, qr/run\|f\|.*block $blk: checksum mismatch/, 'verify reports the corrupt block');
like($report, qr/run\|t\|/, 'verify: the other run is ok');
# and only that: not every value page after it as out of place in the
# value directory, nor the counts and ranges its lost rows throw off
is($node->safe_psql('postgres', "SELECT problems FROM widecol.verify('t') WHERE NOT ok"),
	"block $blk: checksum mismatch", 'verify reports the damaged key page alone');
is($node->safe_psql('postgres', "SELECT bool_and(ok) FROM widecol.verify('other')"), 't',
	'verify: other table ok');
ok($node->safe_psql('postgres', 'SELECT 1') eq '1', 'server still up');

# a value page (a run's tuples, kept apart from its keys): a read of key
# columns only does not read it and succeeds; a read of the values fails
# naming it; verify reports it
$node->safe_psql('postgres', q{
	CREATE TABLE tv (pk int, ck int, v text) USING widecol
	  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
	INSERT INTO tv SELECT g % 10, g, repeat('v', 50) || g FROM generate_series(1, 20000) g;
});
my $tv_run = $node->safe_psql('postgres', "SELECT min(run_id) FROM widecol.runs('tv')");
ok($tv_run > 0, "tv has a run ($tv_run)");
my $tv_path = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('tv')");
$node->stop;
# the last one: an aggregate keeps a copy of its first input row
my ($vblk) = find_page($tv_path, 8, $tv_run, 'last');
ok(defined $vblk, 'found a value page of the run (block ' . ($vblk // '?') . ')');
# inside the payload (it starts after the 24-byte page header)
flip_bytes($tv_path, $vblk, 64, 16);
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT pk) FROM tv'), '20000|10',
	'a read of key columns only does not touch the value page');
($ret, $stdout, $stderr) = $node->psql('postgres', 'SELECT sum(length(v)) FROM tv');
isnt($ret, 0, 'a read of the values fails');
like($stderr, qr/widecol: checksum mismatch in block $vblk of relation "tv" \(run $tv_run\)/,
	'the error names relation, value page and run');
like($node->safe_psql('postgres', "SELECT problems FROM widecol.verify('tv') WHERE segment = 'run'"),
	qr/block $vblk: value page: checksum mismatch/, 'verify reports the value page');

# and the run's first key page too: verify reports the two pages, and goes
# on through the value directory from the next key page's value pages
$node->stop;
my ($tv_kblk) = find_page($tv_path, 4, $tv_run, 'first');
flip_payload($tv_path, $tv_kblk, 16);
$node->start;
is($node->safe_psql('postgres', "SELECT problems FROM widecol.verify('tv') WHERE segment = 'run'"),
	"block $tv_kblk: checksum mismatch; block $vblk: value page: checksum mismatch",
	'verify reports the damaged key page and value page, nothing that follows from them');

# a damaged row version on a level-0 page (single-row inserts): reads fail
# with an error naming the item and block instead of following its lengths
$node->safe_psql('postgres', q{
	CREATE TABLE tl (pk int, v text) USING widecol WITH (widecol.partition_key = 'pk');
	INSERT INTO tl VALUES (1, 'one');
	INSERT INTO tl VALUES (2, 'two');
});
is($node->safe_psql('postgres', 'SELECT count(*) FROM widecol.runs(\'tl\')'), '0', 'tl is all level 0');
my $tl_path = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('tl')");
$node->stop;
my ($lblk, $lpage) = find_page($tl_path, 2, undef, 'first');	# a level-0 page
ok(defined $lblk, 'found the level-0 page (block ' . ($lblk // '?') . ')');
# the first version's tuple offset (bytes 36-39 of its header) points far away
my $item = unpack('V', substr($lpage, 24, 4)) & 0x7fff;
open(my $lfh, '+<', $tl_path) or die "open $tl_path: $!";
binmode $lfh;
seek($lfh, $lblk * 8192 + $item + 36, 0) or die;
print $lfh pack('V', 0x7fff0000);
close $lfh;
$node->start;
($ret, $stdout, $stderr) = $node->psql('postgres', 'SELECT * FROM tl');
isnt($ret, 0, 'a read of the damaged version fails');
like($stderr, qr/malformed row version at item 1 of level-0 block $lblk of relation "tl"/,
	'the error names the item, block and relation');
like($node->safe_psql('postgres', "SELECT problems FROM widecol.verify('tl') WHERE segment = 'level0'"),
	qr/block $lblk: malformed row version at offset 1/, 'verify reports it');
ok($node->safe_psql('postgres', 'SELECT 1') eq '1', 'server still up');

# a table whose metapage is unreadable: reads fail clearly, DROP still works
$node->safe_psql('postgres', q{
	CREATE TABLE m_t (pk int, v text) USING widecol WITH (widecol.partition_key = 'pk');
	INSERT INTO m_t VALUES (1, 'one');
});
my $m_path = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('m_t')");
$node->stop;
open(my $mfh, '+<', $m_path) or die "open $m_path: $!";
binmode $mfh;
seek($mfh, 24, 0) or die;	# the metapage's magic, right after the page header
print $mfh ("\0" x 8);
close $mfh;
$node->start;
($ret, $stdout, $stderr) = $node->psql('postgres', 'SELECT * FROM m_t');
like($stderr, qr/bad metapage in relation "m_t"/, 'a bad metapage is reported, naming the table');
($ret, $stdout, $stderr) = $node->psql('postgres', 'DROP TABLE m_t');
is($ret, 0, 'a table with an unreadable metapage can still be dropped');
like($stderr, qr/metapage of "m_t" is unreadable/, 'with a WARNING about its manifest rows');
$node->stop;

# data checksums on: PostgreSQL verifies every page it reads from storage,
# so queries skip widecol's own CRC of the pages they decode (a second
# checksum of the same bytes).  A damaged key or value page is then
# reported by PostgreSQL's check, naming the block, before widecol reads
# it; with ignore_checksum_failure letting it in, widecol's CRC catches it;
# verify checks its CRCs whatever the setting.
my $sums = widecol_node('sums', 'widecol.max_workers = 0', extra => ['--data-checksums']);
is($sums->safe_psql('postgres', 'SHOW data_checksums'), 'on', 'a cluster with data checksums');
$sums->safe_psql('postgres', q{
	CREATE EXTENSION widecol;
	CREATE ROLE app LOGIN;
	GRANT CREATE ON SCHEMA public TO app;
	SET ROLE app;
	CREATE TABLE s (pk int, ck int, v text) USING widecol
	  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
	INSERT INTO s SELECT g % 10, g, repeat('v', 50) || g FROM generate_series(1, 20000) g;
});
my $app_sum = q{SET ROLE app; SELECT count(*), sum(length(v)), sum(ck) FROM s WHERE pk = 3};
is($sums->safe_psql('postgres', $app_sum),
	$sums->safe_psql('postgres', q{SELECT count(*), sum(length(repeat('v', 50) || g)), sum(g)
	  FROM generate_series(1, 20000) g WHERE g % 10 = 3}),
	'reads of key and value pages with their CRCs covered by data checksums');
is($sums->safe_psql('postgres', "SELECT bool_and(ok) FROM widecol.verify('s')"), 't', 'verify: ok');
# the same reads through a partitioned parent of two widecol partitions,
# a bigint key sought with int literals
is($sums->safe_psql('postgres', q{
	SET ROLE app;
	CREATE TABLE sp (k bigint, day int, v text) PARTITION BY RANGE (day);
	CREATE TABLE sp0 PARTITION OF sp FOR VALUES FROM (0) TO (10) USING widecol
	  WITH (widecol.partition_key = 'k');
	CREATE TABLE sp1 PARTITION OF sp FOR VALUES FROM (10) TO (20) USING widecol
	  WITH (widecol.partition_key = 'k');
	INSERT INTO sp SELECT g, g % 20, repeat('p', 40) || g FROM generate_series(1, 20000) g;
	SELECT count(*), sum(length(v)), (SELECT v FROM sp WHERE k = 12345 AND day = 5)
	  FROM sp WHERE k BETWEEN 100 AND 5000}),
	$sums->safe_psql('postgres', q{
	SELECT count(*), sum(length(repeat('p', 40) || g)), repeat('p', 40) || 12345
	  FROM generate_series(100, 5000) g}),
	'a partitioned parent of widecol partitions, int literals against a bigint key');
my $s_run = $sums->safe_psql('postgres', "SELECT min(run_id) FROM widecol.runs('s')");
my $s_path = $sums->data_dir . '/' . $sums->safe_psql('postgres', "SELECT pg_relation_filepath('s')");
$sums->stop;
my ($kblk) = find_page($s_path, 4, $s_run, 'last');
my ($sblk) = find_page($s_path, 8, $s_run, 'first');
ok(defined $kblk && defined $sblk, 'found a key page and a value page of the run');
flip_payload($s_path, $kblk, 16);
flip_payload($s_path, $sblk, 16);
$sums->start;
fails_like($sums, 'SET ROLE app; SELECT count(*) FROM s WHERE pk = 9',
	qr/XX001: invalid page in block $kblk of relation base\/\d+\/\d+/,
	'a scan over the damaged key page: PostgreSQL\'s checksum');
# verify checks each page in a subtransaction of its own: both pages
# PostgreSQL refuses are reported, with its message, and nothing else
$report = $sums->safe_psql('postgres', "SELECT problems FROM widecol.verify('s') WHERE segment = 'run'");
is(scalar(() = $report =~ /; /g), 1, 'verify on data checksums: two problems');
like($report, qr/block $kblk: invalid page in block $kblk of relation base\/\d+\/\d+/,
	'verify reports the key page PostgreSQL refused');
like($report, qr/block $sblk: value page: invalid page in block $sblk of relation base\/\d+\/\d+/,
	'and goes on to the value page');
($ret, $stdout, $stderr) = $sums->psql('postgres', q{
	SET ignore_checksum_failure = on; SELECT count(*) FROM s WHERE pk = 9});
like($stderr, qr/widecol: checksum mismatch in block $kblk of relation "s" \(run $s_run\)/,
	'with ignore_checksum_failure the damaged key page reaches widecol, whose CRC catches it');
unlike($stdout, qr/\d/, 'no rows returned');
($ret, $stdout, $stderr) = $sums->psql('postgres', q{
	SET ignore_checksum_failure = on; SELECT sum(length(v)) FROM s WHERE pk = 0});
like($stderr, qr/widecol: checksum mismatch in block $sblk of relation "s" \(run $s_run\)/,
	'and the damaged value page');
$report = $sums->safe_psql('postgres',
	"SET ignore_checksum_failure = on; SELECT problems FROM widecol.verify('s') WHERE segment = 'run'");
like($report, qr/block $kblk: checksum mismatch/, 'verify reports the key page');
like($report, qr/block $sblk: value page: checksum mismatch/, 'verify reports the value page');
# a lookup's bloom probe likewise leaves the checked block's CRC to
# PostgreSQL's checksum: a damaged bloom page is refused on its way in,
# and with ignore_checksum_failure the block's CRC catches it
$sums->stop;
my ($bblk) = find_page($s_path, 6, $s_run, 'first');
ok(defined $bblk, 'found a bloom page of the run');
flip_bytes($s_path, $bblk, 24, 8000);
$sums->start;
fails_like($sums, 'SET ROLE app; SELECT count(*) FROM s WHERE pk = 4',
	qr/XX001: invalid page in block $bblk of relation base\/\d+\/\d+/,
	'a lookup probing the damaged bloom page: PostgreSQL\'s checksum');
($ret, $stdout, $stderr) = $sums->psql('postgres', q{
	SET ignore_checksum_failure = on; SELECT count(*) FROM s WHERE pk = 4});
like($stderr, qr/widecol: bloom block checksum mismatch in block $bblk of relation "s" \(run $s_run\)/,
	'with ignore_checksum_failure the bloom block\'s CRC catches it');
unlike($stdout, qr/\d/, 'no count returned');
ok($sums->safe_psql('postgres', 'SELECT 1') eq '1', 'server still up');
$sums->stop;

# CREATE EXTENSION without preloading
my $bare = PostgreSQL::Test::Cluster->new('bare');
$bare->init;
$bare->start;
($ret, $stdout, $stderr) = $bare->psql('postgres', 'CREATE EXTENSION widecol');
isnt($ret, 0, 'CREATE EXTENSION fails without shared_preload_libraries');
like($stderr, qr/widecol must be loaded via shared_preload_libraries/, 'clear message');
like($stderr, qr/HINT:  Add 'widecol' to shared_preload_libraries/, 'with a hint');
$bare->stop;

done_testing();
