# 020_zstd_runs: runs of format 5 (zstd pages) next to a run of format 4
# (lz4 pages, as builds before format 5 wrote it), on a primary with
# wal_consistency_checking and a streaming standby.  The format-5 runs mix
# codecs by page kind: by default a bulk write's key pages are lz4 and its
# value pages zstd, by column (one run here by row: widecol.
# ingest_value_layout = rows); with widecol.ingest_key_codec = zstd both
# are zstd.
# The standby reads all three kinds of run and the compaction that merges
# them into zstd pages.  Then damage: a zstd value page with bytes flipped
# fails its checksum, naming relation, block and run; a zstd frame damaged
# under a recomputed checksum (so only the decoder can tell) fails in zstd,
# also naming them, with no crash and no rows returned; widecol.verify
# reports both blocks.  Last, an lz4 key page of a run whose value pages
# are zstd, damaged under a recomputed checksum: the read and verify report
# it; a value page in column layout with one chunk damaged; a bloom page of
# checked blocks (run format 7) damaged under a recomputed checksum; which
# hex columns compaction packs; an index page with a malformed entry; a
# run's zstd dictionary (format 9), read on both servers, then damaged;
# packed key blocks (format 10) next to unpacked ones, then a packed row
# damaged; shared tuple headers (format 12) with their length mode, their
# length and their null bitmap damaged; value hints in a leaf index page
# (format 13) naming a wrong block, then malformed; the run of a bulk
# write in frames with a copy of the table's newest dictionary, then that
# dictionary damaged.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;

my $primary = widecol_node('zprimary', q{
widecol.max_workers = 0
wal_consistency_checking = 'all,widecol'
autovacuum = off
wal_keep_size = '256MB'
}, allows_streaming => 1);
$primary->safe_psql('postgres', 'CREATE EXTENSION widecol');
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('zstandby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;

sub p { return $primary->safe_psql('postgres', $_[0]); }

p(q{
CREATE TABLE t (dev text, day date, ts timestamptz, id uuid, key text, w int, hash text)
  USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC, id');
CREATE TABLE h (LIKE t);
-- (ids repeat every 1,000 rows: lz4 shrinks the packed key blocks by more
-- than the sixteenth below which they are stored as they are, whatever
-- write times the rows get)
CREATE VIEW rows AS
  SELECT 'cam-' || (g % 20) AS dev, date '2025-01-01' + g % 5 AS day,
         timestamptz '2025-01-01 00:00+00' + g * interval '7 s' AS ts, md5((g % 1000)::text)::uuid AS id,
         'raw/' || md5(g::text) || '.jpg' AS key, CASE WHEN g % 9 = 0 THEN NULL ELSE g % 4000 END AS w,
         md5(g::text) || md5((g + 1)::text) AS hash, g
    FROM generate_series(1, 30000) g;
SET widecol.debug_run_format = 4;
INSERT INTO t SELECT dev, day, ts, id, key, w, hash FROM rows WHERE g <= 10000;
RESET widecol.debug_run_format;
SET widecol.ingest_value_layout = rows;
INSERT INTO t SELECT dev, day, ts, id, key, w, hash FROM rows WHERE g > 10000 AND g <= 20000;
RESET widecol.ingest_value_layout;
SET widecol.ingest_key_codec = zstd;
INSERT INTO t SELECT dev, day, ts, id, key, w, hash FROM rows WHERE g > 20000;
RESET widecol.ingest_key_codec;
INSERT INTO h SELECT dev, day, ts, id, key, w, hash FROM rows;
DELETE FROM t WHERE w % 100 = 7;
DELETE FROM h WHERE w % 100 = 7;
});
is(p(q{SELECT string_agg(DISTINCT codec, ',' ORDER BY codec) FROM widecol.run_pages('t') WHERE kind LIKE 'value%' AND kind <> 'value_dir'}),
	'lz4,zstd', 'a run of lz4 pages next to runs of zstd pages');
is(p(q{SELECT string_agg(DISTINCT kind, ',' ORDER BY kind) FROM widecol.run_pages('t') WHERE kind LIKE 'value%' AND kind <> 'value_dir'}),
	'value,value_columns', 'value pages by row (format 4, widecol.ingest_value_layout = rows) and by column (the default)');
# codecs per run, key pages / value pages (a page that does not shrink is
# stored as is: 'none', left out)
my $percodec = q{SELECT string_agg(DISTINCT k.codec || '/' || v.codec, ',' ORDER BY k.codec || '/' || v.codec)
  FROM (SELECT run_id, codec FROM widecol.run_pages('t') WHERE kind = 'key' AND codec <> 'none') k
  JOIN (SELECT run_id, codec FROM widecol.run_pages('t') WHERE kind IN ('value', 'value_columns') AND codec <> 'none') v USING (run_id)};
is(p($percodec), 'lz4/lz4,lz4/zstd,zstd/zstd',
	'runs of lz4 pages, of lz4 key pages and zstd value pages, of zstd pages');
my $same = q{SELECT (SELECT md5(string_agg(x::text, ',' ORDER BY x::text)) FROM t x) =
                    (SELECT md5(string_agg(x::text, ',' ORDER BY x::text)) FROM h x)};
is(p($same), 't', 'primary: both formats read back the rows');
is(p(q{SELECT bool_and(ok) FROM widecol.verify('t')}), 't', 'primary: verify ok');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $same), 't', 'standby: both formats read back the rows');

# (value pages in row layout here: one zstd frame each; column layout below)
p(q{SET widecol.compaction_value_layout = rows; SELECT widecol.compact('t', true)});
is(p(q{SELECT string_agg(DISTINCT kind || ' ' || codec, ',' ORDER BY kind || ' ' || codec) FROM widecol.run_pages('t')
  WHERE kind IN ('key', 'value') AND codec <> 'none'}),
	'key lz4,value zstd', 'compaction writes zstd value pages and lz4 key pages (widecol.compaction_key_codec)');
is(p($same), 't', 'primary: rows after compaction');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $same), 't', 'standby: rows after compaction');
is($standby->safe_psql('postgres', q{SELECT bool_and(ok) FROM widecol.verify('t')}), 't',
	'standby: verify ok');
$standby->stop;

# damage: two value pages of the compacted run
p('CHECKPOINT');
my ($run, $path, @vpages) = stopped_run_pages('t', 8);
ok(@vpages >= 3, 'the run has value pages (' . scalar(@vpages) . ')');
my $flags = unpack('v', substr($vpages[-1][1], 8192 - 24 + 2, 2));
is($flags & 15, 2, 'its value pages are zstd (codec 2)');

sub crc32c
{
	my ($data) = @_;
	my $crc = 0xffffffff;
	for my $byte (unpack('C*', $data))
	{
		$crc ^= $byte;
		$crc = ($crc & 1) ? (($crc >> 1) ^ 0x82F63B78) : ($crc >> 1) for 1 .. 8;
	}
	return $crc ^ 0xffffffff;
}

# write page $page as block $blk of file $path, its widecol checksum
# recomputed (what a page damaged below the checksum looks like)
sub write_page_with_checksum
{
	my ($path, $blk, $page) = @_;
	my $lower = unpack('v', substr($page, 12, 2));
	my $special = 8192 - 24;
	my $crc = crc32c(substr($page, 24, $lower - 24) . substr($page, $special + 8, 8)
		. substr($page, $special + 16, 4) . substr($page, $special + 20, 4));
	substr($page, $special + 4, 4) = pack('V', $crc);
	open(my $fh, '+<', $path) or die "open $path: $!";
	binmode $fh;
	seek($fh, $blk * 8192, 0) or die;
	print $fh $page;
	close $fh;
}

# Where a key page's key block starts in its page image: after the page
# header, the key page header, the value references and, when the block is
# packed (format 10), its packed length.
sub key_block_start
{
	my ($page) = @_;
	my $packed = unpack('v', substr($page, 24 + 2, 2)) & 0x10;
	return 24 + 8 + 8 * unpack('v', substr($page, 24, 2)) + ($packed ? 4 : 0);
}

# After a page of $table is damaged: $query fails with $error and returns
# no rows, verify's report matches $report, and the server stays up.
sub damage_reported
{
	my ($query, $table, $error, $report, $fails, $verified) = @_;
	my ($ret, $out, $err) = $primary->psql('postgres', $query);
	isnt($ret, 0, $fails);
	like($err, $error, 'the error names the problem, relation, block and run');
	unlike($out, qr/\d/, 'no rows returned');
	like(p(qq{SELECT problems FROM widecol.verify('$table') WHERE segment = 'run'}), $report, $verified);
	is(p('SELECT 1'), '1', 'server still up');
	return;
}

# the one run of table $t: its id, the table's file, and (the primary
# stopped) the run's pages of type $type, each [block, page]
sub stopped_run_pages
{
	my ($t, $type) = @_;
	my $run = p(qq{SELECT run_id FROM widecol.runs('$t')});
	my $path = $primary->data_dir . '/' . p(qq{SELECT pg_relation_filepath('$t')});
	$primary->stop;
	return ($run, $path, pages_of_type($path, $type, $run));
}

# (1) the zstd frame of the last value page damaged, its checksum
# recomputed: only the decoder can tell (not the first value page: an
# aggregate keeps a copy of its first input row, so even count(*) reads it)
my $blk2 = $vpages[-1][0];
open(my $fh, '+<', $path) or die "open $path: $!";
binmode $fh;
seek($fh, $blk2 * 8192, 0) or die;
read($fh, my $page, 8192) == 8192 or die;
close $fh;
# the frame header (magic, descriptor, window, dictionary id, content size)
# stays; the first block's header after it claims a block larger than zstd
# allows (payload from byte 24)
is(unpack('V', substr($page, 24, 4)), 0xFD2FB528, 'the payload is a zstd frame');
my $fhd = unpack('C', substr($page, 28, 1));
my $fhsize = 4 + 1 + (($fhd >> 5) & 1 ? 0 : 1) + (0, 1, 2, 4)[$fhd & 3]
	+ ((($fhd >> 5) & 1) ? (1, 2, 4, 8) : (0, 2, 4, 8))[$fhd >> 6];
substr($page, 24 + $fhsize, 3) = "\xff\xff\xff";
write_page_with_checksum($path, $blk2, $page);
$primary->start;

is(p(q{SELECT count(*) > 0 FROM t}), 't', 'a read of key columns only does not touch value pages');
my ($ret, $stdout, $stderr) = $primary->psql('postgres', q{SELECT count(hash) FROM t});
isnt($ret, 0, 'a read of the damaged frame fails');
like($stderr, qr/widecol: zstd (decompression failed|frame of the wrong size) in block $blk2 of relation "t" \(run $run\)/,
	'the error names the problem, relation, block and run');
unlike($stdout, qr/\d/, 'no rows returned');
like(p(q{SELECT problems FROM widecol.verify('t') WHERE segment = 'run'}),
	qr/block $blk2: value page: zstd (decompression failed|frame of the wrong size)/,
	'verify: the damaged frame under a valid checksum');
$primary->stop;

# (2) bytes flipped in another value page: its checksum catches it
my $blk1 = $vpages[-2][0];
flip_bytes($path, $blk1, 100, 8);
$primary->start;
($ret, $stdout, $stderr) = $primary->psql('postgres', q{SELECT count(hash) FROM t});
isnt($ret, 0, 'a read of the values fails');
like($stderr, qr/widecol: (checksum mismatch|zstd decompression failed|zstd frame of the wrong size) in block ($blk1|$blk2) of relation "t" \(run $run\)/,
	'the error names the problem, relation, block and run');
my $report = p(q{SELECT problems FROM widecol.verify('t') WHERE segment = 'run'});
like($report, qr/block $blk1: value page: checksum mismatch/, 'verify: the flipped bytes');
like($report, qr/block $blk2: value page: zstd/, 'verify: and the damaged frame');
is(p('SELECT 1'), '1', 'server still up');

# (3) an lz4 key page of a run whose value pages are zstd (a bulk write's
# run with the default codecs), damaged under a recomputed checksum: the
# lz4 decoder reports it
p(q{CREATE TABLE k (LIKE h) USING widecol
  WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC, id');
INSERT INTO k SELECT dev, day, ts, id, key, w, hash FROM rows});
is(p(q{SELECT string_agg(kind || ' ' || codec, ',' ORDER BY kind) FROM widecol.run_pages('k')
  WHERE kind IN ('key', 'value', 'value_columns') AND codec <> 'none'}), 'key lz4,value_columns zstd',
	'a bulk write: lz4 key pages, zstd value pages by column');
is(p(q{SELECT bool_and(ok) FROM widecol.verify('k')}), 't', 'verify ok before the damage');
p('CHECKPOINT');
my ($krun, $kpath, @kpages) = stopped_run_pages('k', 4);
ok(@kpages >= 3, 'the run has key pages (' . scalar(@kpages) . ')');
# key pages lz4 shrinks by less than a sixteenth are stored as they are:
# one that is lz4
my ($klz4) = grep { (unpack('v', substr($_->[1], 24 + 2, 2)) & 15) == 0 } @kpages;
ok(defined $klz4, 'one of them is lz4');
my ($kblk, $kpage) = @{ $klz4 // $kpages[0] };
is(unpack('v', substr($kpage, 24 + 2, 2)) & 15, 0, 'its key block is lz4 (codec 0)');
is(unpack('v', substr($kpage, 24 + 2, 2)) & 0x10, 0x10, 'its rows are packed (format 10)');
# the lz4 block: 40 bytes of 0xff make the first literal run longer than
# the whole block
substr($kpage, key_block_start($kpage), 40) = "\xff" x 40;
write_page_with_checksum($kpath, $kblk, $kpage);
$primary->start;
damage_reported(q{SELECT count(id) FROM k}, 'k',
	qr/widecol: lz4 decompression failed in block $kblk of relation "k" \(run $krun\)/,
	qr/block $kblk: lz4 decompression failed/,
	'a read of the damaged key page fails', 'verify: the damaged lz4 key page');

# (4) a value page in column layout (what compaction writes by default) with
# one column's chunk damaged under a recomputed checksum: a read of that
# column fails, naming the page; a read of another column of the same
# page does not decode it; verify reports the page
p(q{CREATE TABLE c (LIKE h) USING widecol
  WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC, id');
INSERT INTO c SELECT dev, day, ts, id, key, w, hash FROM rows;
SELECT widecol.compact('c', true)});
is(p(q{SELECT string_agg(DISTINCT kind, ',') FROM widecol.run_pages('c') WHERE kind LIKE 'value%'}),
	'value_columns,value_dir', 'compaction: value pages in column layout');
my $wsum = p(q{SELECT sum(w) FROM c});
p('CHECKPOINT');
my ($crun, $cpath, @cpages) = stopped_run_pages('c', 8);
my ($cblk, $cpage) = @{ $cpages[-1] };
is(unpack('v', substr($cpage, 8192 - 24 + 2, 2)) & 0x0200, 0x0200, 'its flag says column layout');
# payload: tuple and chunk counts, then 12 bytes per chunk (codec, attalign,
# attlen, length, byval, raw length); chunk 7 is column 7 (hash): claim a
# raw length 8 bytes longer than its frame holds
my $nchunks = unpack('v', substr($cpage, 26, 2));
is($nchunks, 8, 'a chunk of tuple headers and one per column');
my $entry = 28 + 12 * 7;
# the hash column is lowercase hex: its chunk is hex-packed (codec 3, run
# format 8), two digits a byte; the path column (6) is not hex: zstd, on
# this page (the run's last) in frames with the run's dictionary (4, run
# format 9: see (8))
is(unpack('C', substr($cpage, $entry, 1)), 3, 'the hex hash column is hex-packed (codec 3)');
my ($hlen, $hraw) = (unpack('v', substr($cpage, $entry + 4, 2)), unpack('V', substr($cpage, $entry + 8, 4)));
cmp_ok($hlen * 2, '<=', $hraw + 200, "in about half its bytes ($hlen of $hraw)");
is(unpack('C', substr($cpage, 28 + 12 * 5, 1)), 4, 'the object path column is zstd frames (codec 4)');
substr($cpage, $entry + 8, 4) = pack('V', unpack('V', substr($cpage, $entry + 8, 4)) + 8);
write_page_with_checksum($cpath, $cblk, $cpage);
$primary->start;
is(p(q{SELECT sum(w) FROM c}), $wsum, 'a report on another column of the page decodes only that column');
($ret, $stdout, $stderr) = $primary->psql('postgres', q{SELECT sum(length(hash)) FROM c});
isnt($ret, 0, 'a report on the damaged column fails');
like($stderr, qr/widecol: column layout: hex-packed chunk of the wrong size in block $cblk of relation "c" \(run $crun\)/,
	'the error names the problem, relation, block and run');
($ret, $stdout, $stderr) = $primary->psql('postgres', q{SELECT count(*) FROM (SELECT * FROM c) x WHERE hash IS NOT NULL});
isnt($ret, 0, 'a read of whole rows fails too');
like(p(q{SELECT problems FROM widecol.verify('c') WHERE segment = 'run'}),
	qr/block $cblk: value page: column layout: hex-packed chunk of the wrong size/,
	'verify: the damaged column');
is(p('SELECT 1'), '1', 'server still up');
# another page's hex chunk with its first value's header byte zeroed (no
# short varlena header): reported as an invalid packed value
$primary->stop;
my ($c0blk, $c0page) = @{ (pages_of_type($cpath, 8, $crun))[0] };
isnt($c0blk, $cblk, 'the run has another value page');
my $c0start = 28 + 12 * 8;
$c0start += unpack('v', substr($c0page, 28 + 12 * $_ + 4, 2)) for 0 .. 6;
is(unpack('C', substr($c0page, 28 + 12 * 7, 1)), 3, 'its hash chunk is hex-packed too');
substr($c0page, $c0start, 1) = "\x00";
write_page_with_checksum($cpath, $c0blk, $c0page);
$primary->start;
($ret, $stdout, $stderr) = $primary->psql('postgres', q{SELECT sum(length(hash)) FROM c});
like($stderr, qr/widecol: column layout: invalid hex-packed value in block $c0blk of relation "c" \(run $crun\)/,
	'a damaged packed value: the error names the problem, relation, block and run');
like(p(q{SELECT problems FROM widecol.verify('c') WHERE segment = 'run'}),
	qr/block $c0blk: value page: column layout: invalid hex-packed value/, 'verify reports it too');
is(p('SELECT 1'), '1', 'server still up');

# (5) a bloom page of run format 7 (a key's probes in one 64-byte block with
# its own checksum, probed in the shared buffer) damaged under a recomputed
# page checksum, so only the block checksums can tell: a seek by partition
# fails naming relation, block and run, a full scan (which reads no bloom
# page) does not; verify reports the page
p(q{CREATE TABLE bl (k int, v text) USING widecol WITH (widecol.partition_key = 'k');
INSERT INTO bl SELECT g, 'v' || g FROM generate_series(1, 2000) g;
CHECKPOINT});
my ($brun, $bpath, @bpages) = stopped_run_pages('bl', 6);
is(scalar(@bpages), 1, 'the run has one bloom page');
my ($bblk, $bpage) = @{ $bpages[0] };
# 119 blocks of 64 bytes from the payload's start (byte 24): one bit of each
substr($bpage, 24 + 64 * $_, 1) = substr($bpage, 24 + 64 * $_, 1) ^ "\x01" for 0 .. 118;
write_page_with_checksum($bpath, $bblk, $bpage);
$primary->start;
is(p(q{SELECT count(*) FROM bl}), '2000', 'a full scan reads no bloom page');
($ret, $stdout, $stderr) = $primary->psql('postgres', q{SET enable_seqscan = off; SELECT v FROM bl WHERE k = 1234});
isnt($ret, 0, 'a seek probing a damaged bloom block fails');
like($stderr, qr/widecol: bloom block checksum mismatch in block $bblk of relation "bl" \(run $brun\)/,
	'the error names the problem, relation, block and run');
like(p(q{SELECT problems FROM widecol.verify('bl') WHERE segment = 'run'}),
	qr/block $bblk: bloom page: block 0 checksum mismatch/, 'verify: the damaged bloom page');
is(p('SELECT 1'), '1', 'server still up');

# (6) which hex columns compaction packs: a column of distinct hashes is
# packed; a column of seven hashes repeated is zstd (it removes the
# repeats, more than packing would; compaction tells by an lz4 probe before
# it tries zstd on a hex column at all)
p(q{CREATE TABLE hx (k int, id int, rep text, uniq text) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'id');
INSERT INTO hx SELECT g % 3, g, md5((g % 7)::text) || md5((g % 7 + 1)::text),
                      md5(g::text) || md5((g + 1)::text)
  FROM generate_series(1, 6000) g;
SELECT widecol.compact('hx', true);
CHECKPOINT});
my ($hrun, $hpath, @hpages) = stopped_run_pages('hx', 8);
cmp_ok(scalar(@hpages), '>', 1, 'hx: several value pages');
my ($hxblk, $hxpage) = @{ $hpages[0] };
is(unpack('v', substr($hxpage, 26, 2)), 5, 'hx: a chunk of tuple headers and one per column');
is(unpack('C', substr($hxpage, 28 + 12 * 3, 1)), 2, 'the repeated hashes: zstd (codec 2)');
is(unpack('C', substr($hxpage, 28 + 12 * 4, 1)), 3, 'the distinct hashes: hex-packed (codec 3)');
$primary->start;
is(p(q{SELECT count(DISTINCT rep) || ' ' || count(DISTINCT uniq) || ' ' || sum(length(rep) + length(uniq)) FROM hx}),
	'7 6000 768000', 'both read back');
is(p(q{SELECT bool_and(ok) FROM widecol.verify('hx')}), 't', 'verify: hx');

# (7) an index page whose first entry claims a key longer than the page,
# under a recomputed checksum: a seek fails naming relation, block and run,
# and so does the next seek of the same session (the backend keeps index
# pages parsed, not a page it could not parse); a full scan, which reads
# the leaves in order, fails too; verify reports the page
p(q{CREATE TABLE ix (k int, v text) USING widecol WITH (widecol.partition_key = 'k');
INSERT INTO ix SELECT g, 'v' || g FROM generate_series(1, 3000) g;
CHECKPOINT});
my ($irun, $ipath, @ipages) = stopped_run_pages('ix', 5);
is(scalar(@ipages), 1, 'ix: one index page (the root is the leaf)');
my ($iblk, $ipage) = @{ $ipages[0] };
substr($ipage, 24 + 4, 2) = pack('v', 0xffff);
write_page_with_checksum($ipath, $iblk, $ipage);
$primary->start;
($ret, $stdout, $stderr) = $primary->psql('postgres',
	q{SET enable_seqscan = off; SELECT v FROM ix WHERE k = 1234; SELECT v FROM ix WHERE k = 99},
	on_error_stop => 0);
my @imsgs = ($stderr =~ /widecol: malformed index page in block $iblk of relation "ix" \(run $irun\)/g);
is(scalar(@imsgs), 2, 'two seeks in one session: each fails, naming the problem, relation, block and run');
unlike($stdout, qr/v\d/, 'no rows returned');
($ret, $stdout, $stderr) = $primary->psql('postgres', q{SELECT count(*) FROM ix});
like($stderr, qr/widecol: malformed index page in block $iblk of relation "ix"/, 'a full scan fails too');
like(p(q{SELECT problems FROM widecol.verify('ix') WHERE segment = 'run'}),
	qr/block $iblk: malformed leaf index page/, 'verify: the damaged index page');
is(p('SELECT 1'), '1', 'server still up');

# (8) a zstd dictionary per run (run format 9): a run written in format 8
# (no dictionary) and a flush's run beside it, merged by a major compaction
# into a run of format 9 whose dictionary compaction trained on its first
# path chunks; the later chunks are zstd frames of 16 values with it (codec
# 4).  Every path read back on the primary and the standby, by scan and by
# key.  Then damage: bytes flipped in a dictionary page (its checksum
# catches it): a lookup by key and a scan fail naming the dictionary's
# block, the value page's block, relation and run, verify reports it; the
# dictionary's magic number zeroed under a recomputed checksum: zstd does
# not take it, reported as such
my $pathexpr = q{'raw/cam-' || lpad((k % 200)::text, 4, '0') || '/2025/01/' || lpad((1 + k % 28)::text, 2, '0') || '/' || md5(k::text)::uuid || '.jpg'};
(my $gpath = $pathexpr) =~ s/\bk\b/g/g;
p(qq{CREATE TABLE dp (k int, path text, w int) USING widecol WITH (widecol.partition_key = 'k');
SET widecol.debug_run_format = 8;
INSERT INTO dp SELECT g, $gpath, g % 1000 FROM generate_series(1, 20000) g;
SELECT widecol.compact('dp', true);
RESET widecol.debug_run_format;
INSERT INTO dp SELECT g, $gpath, g % 1000 FROM generate_series(20001, 40000) g;});
is(p(q{SELECT count(*) FROM widecol.run_pages('dp') WHERE kind = 'dictionary'}), '0',
	'a run of format 8 and a flush: no dictionary');
is(p(qq{SELECT count(*), count(*) FILTER (WHERE path = $pathexpr) FROM dp}), '40000|40000',
	'every path of both runs');
p(q{SELECT widecol.compact('dp', true); CHECKPOINT});
is(p(q{SELECT count(*) FROM widecol.runs('dp')}), '1', 'merged into one run');
cmp_ok(p(q{SELECT sum(pages) FROM widecol.run_pages('dp') WHERE kind = 'dictionary'}), '>', 0,
	'the merged run has a dictionary');
is(p(qq{SELECT count(*), count(*) FILTER (WHERE path = $pathexpr) FROM dp}), '40000|40000',
	'a scan reads every path');
my $lookups = qq{SET enable_hashjoin = off; SET enable_mergejoin = off;
SELECT count(*), count(*) FILTER (WHERE x.path = $gpath) FROM generate_series(1, 40000, 37) g,
  LATERAL (SELECT path FROM dp WHERE k = g) x};
is(p($lookups), '1082|1082', 'lookups by key read every path');
is(p(q{SELECT bool_and(ok) FROM widecol.verify('dp')}), 't', 'verify: sound');
$standby->start;
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $lookups), '1082|1082', 'the standby reads them too');
$standby->stop;
my ($drun, $dpath, @dpages) = stopped_run_pages('dp', 11);
cmp_ok(scalar(@dpages), '>=', 2, 'the dictionary takes two pages or more');
my @dvpages = pages_of_type($dpath, 8, $drun);
# the last value page's path chunk: directory entry 2 (tuple headers, k is a key)
is(unpack('C', substr($dvpages[-1][1], 24 + 4 + 12 * 2, 1)), 4,
	'the last value page holds its paths in frames (codec 4)');
is(unpack('C', substr($dvpages[0][1], 24 + 4 + 12 * 2, 1)), 2,
	'the first one, written before the dictionary was trained, in one zstd frame (codec 2)');
# and the pages after training hold them in frames too, full as they are:
# the writer cuts a page where its frames fit, not where one zstd frame per
# chunk would (which left every full page without frames before stop 45)
my @dcodecs = map { unpack('C', substr($_->[1], 24 + 4 + 12 * 2, 1)) } @dvpages;
my $dfirst = (grep { $dcodecs[$_] == 4 } 0 .. $#dcodecs)[0] // scalar(@dcodecs);
my $dafter = scalar(@dcodecs) - $dfirst;
my $dframed = grep { $_ == 4 } @dcodecs[$dfirst .. $#dcodecs];
cmp_ok($dafter, '>=', 20, "value pages after training ($dafter of " . scalar(@dcodecs) . ')');
cmp_ok($dframed, '>=', 0.9 * $dafter, "at least 9 in 10 of them in frames ($dframed of $dafter)");
my ($dblk, $dpage) = @{ $dpages[0] };
xor_bytes($dpath, $dblk, 1000, "\x01");
$primary->start;
($ret, $stdout, $stderr) = $primary->psql('postgres', q{SELECT path FROM dp WHERE k = 39999});
isnt($ret, 0, 'a lookup through a damaged dictionary fails');
like($stderr, qr/widecol: run dictionary \(block $dblk\): checksum mismatch in block \d+ of relation "dp" \(run $drun\)/,
	'the error names the dictionary block, the value page block, relation and run');
($ret, $stdout, $stderr) = $primary->psql('postgres', q{SELECT sum(length(path)) FROM dp});
like($stderr, qr/widecol: run dictionary \(block $dblk\): checksum mismatch/, 'a scan fails too');
like(p(q{SELECT problems FROM widecol.verify('dp') WHERE segment = 'run'}),
	qr/block $dblk: run dictionary \(block $dblk\): checksum mismatch/, 'verify: the damaged dictionary');
$primary->stop;
substr($dpage, 24, 4) = "\0\0\0\0";
write_page_with_checksum($dpath, $dblk, $dpage);
$primary->start;
($ret, $stdout, $stderr) = $primary->psql('postgres', q{SELECT path FROM dp WHERE k = 39999});
like($stderr, qr/widecol: run dictionary: not a zstd dictionary in block \d+ of relation "dp" \(run $drun\)/,
	'a dictionary zstd does not take, under a sound checksum: reported');
like(p(q{SELECT problems FROM widecol.verify('dp') WHERE segment = 'run'}),
	qr/block $dblk: run dictionary: not a zstd dictionary/, 'verify reports it');
is(p('SELECT 1'), '1', 'server still up');

# (9) packed key blocks (run format 10): a run written unpacked (format 9,
# widecol.debug_run_format) and a packed one, read on both servers and
# merged; then a packed block stored as is (random uuid keys: lz4 does not
# shrink it), its first row's tag byte damaged under a recomputed
# checksum: a scan and verify report the packed row, naming relation,
# block and run
p(q{CREATE TABLE ku (id uuid, n int) USING widecol WITH (widecol.partition_key = 'id');
SET widecol.debug_run_format = 9;
INSERT INTO ku SELECT md5(g::text)::uuid, g FROM generate_series(1, 20000) g;
RESET widecol.debug_run_format;
INSERT INTO ku SELECT md5((-g)::text)::uuid, -g FROM generate_series(1, 20000) g});
my $kuq = q{SELECT count(*), sum(n), sum(hashtext(id::text)::bigint) FROM ku};
my $kusum = q{SELECT '40000|0|' || sum(hashtext(md5(g::text)::uuid::text)::bigint + hashtext(md5((-g)::text)::uuid::text)::bigint)
  FROM generate_series(1, 20000) g};
is(p($kuq), p($kusum), 'format 9 and format 10 runs read together');
$standby->start;
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $kuq), p($kusum), 'the standby reads both');
is(p(q{SELECT n FROM ku WHERE id = md5('777')::uuid}) . ',' . p(q{SELECT n FROM ku WHERE id = md5('-777')::uuid}),
	'777,-777', 'a key found in each run');
p(q{SELECT widecol.compact('ku', major => true)});
is(p($kuq), p($kusum), 'merged into one format-10 run');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $kuq), p($kusum), 'the standby reads the merged run');
$standby->stop;
is(p(q{SELECT bool_and(ok) FROM widecol.verify('ku')}), 't', 'verify ok');
p('CHECKPOINT');
my ($kurun, $kupath, @kupages) = stopped_run_pages('ku', 4);
my ($kublk, $kupage) = @{ $kupages[ int(@kupages / 2) ] };
my $kuflags = unpack('v', substr($kupage, 24 + 2, 2));
is($kuflags & 0x10, 0x10, 'its key blocks are packed');
is($kuflags & 15, 1, 'and stored as is (codec none)');
substr($kupage, key_block_start($kupage), 1) = "\xff";	# the first row's tag
write_page_with_checksum($kupath, $kublk, $kupage);
$primary->start;
damage_reported(q{SELECT count(n) FROM ku}, 'ku',
	qr/widecol: invalid packed key row in block $kublk of relation "ku" \(run $kurun\)/,
	qr/block $kublk: invalid packed key row/,
	'a scan over the damaged packed row fails', 'verify: the damaged packed row');
$primary->stop;

# (10) shared tuple headers (run format 12): the value pages of rows with
# no NULL outside the key hold one tuple header and the tuples' lengths
# (chunk 0, codec 5); its length mode damaged on one page, its length on
# another, each under a recomputed checksum: reads and verify report the
# page, naming relation, block and run
$primary->start;
p(q{CREATE TABLE sh (LIKE h) USING widecol
  WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC, id');
INSERT INTO sh SELECT dev, day, ts, id, key, coalesce(w, 0), hash FROM rows;
SELECT widecol.compact('sh', true)});
is(p(q{SELECT count(*), sum(w), sum(length(hash)) FROM sh}),
	p(q{SELECT count(*), sum(coalesce(w, 0)), sum(length(hash)) FROM rows}), 'sh: the rows read back');
p('CHECKPOINT');
my ($shrun, $shpath, @shpages) = stopped_run_pages('sh', 8);
cmp_ok(scalar @shpages, '>=', 2, 'sh: more than one value page');
my $heads = 28 + 12 * unpack('v', substr($shpages[0][1], 26, 2));
is(join(',', map { unpack('C', substr($_->[1], 28, 1)) } @shpages), join(',', (5) x @shpages),
	'every value page stores its tuple headers shared (codec 5)');
# (infomask2, infomask, hoff, bitmap bytes, length mode, the bitmap: the
# key columns are NULL in a value tuple, the key holds them; then the length)
is(unpack('C', substr($shpages[0][1], $heads + 5, 1)), 1, 'a null bitmap of one byte');
is(unpack('C', substr($shpages[0][1], $heads + 7, 1)), 0x70, 'the three value columns not NULL');
is(unpack('C', substr($shpages[0][1], $heads + 6, 1)), 0, 'one length for every tuple');
my ($sha, $shapage) = @{ $shpages[0] };
my $shaorig = $shapage;
substr($shapage, $heads + 6, 1) = "\x09";		# no such length mode
write_page_with_checksum($shpath, $sha, $shapage);
$primary->start;
damage_reported(q{SELECT count(w) FROM sh}, 'sh',
	qr/widecol: column layout: invalid shared tuple header in block $sha of relation "sh" \(run $shrun\)/,
	qr/block $sha: value page: column layout: invalid shared tuple header/,
	'a report over the damaged header fails', 'verify: the damaged shared header');
$primary->stop;
write_page_with_checksum($shpath, $sha, $shaorig);
my ($shb, $shbpage) = @{ $shpages[-1] };
my $shborig = $shbpage;
substr($shbpage, $heads + 8, 2) = pack('v', unpack('v', substr($shbpage, $heads + 8, 2)) + 8);
write_page_with_checksum($shpath, $shb, $shbpage);
$primary->start;
damage_reported(q{SELECT count(*) FROM (SELECT * FROM sh) x WHERE hash IS NOT NULL}, 'sh',
	qr/widecol: column layout: tuple headers do not match the page in block $shb of relation "sh" \(run $shrun\)/,
	qr/block $shb: value page: column layout: invalid tuple header/,
	'a read of whole rows over the damaged length fails', 'verify: the damaged length');
unlike(p(q{SELECT problems FROM widecol.verify('sh') WHERE segment = 'run'}), qr/block $sha:/,
	'the first page, restored, is whole again');
# the bitmap claiming a value of a key column (id) in every tuple: a report
# on w decodes only w's chunk and the headers, and is right (a read takes
# the key columns from the key); verify finds the column that does not
# match its tuples
$primary->stop;
$shbpage = $shborig;
substr($shbpage, $heads + 7, 1) = "\x78";
write_page_with_checksum($shpath, $shb, $shbpage);
$primary->start;
is(p(q{SELECT count(*), sum(w) FROM sh}), p(q{SELECT count(*), sum(coalesce(w, 0)) FROM rows}),
	'a bitmap bit of a key column: a report on w is right');
like(p(q{SELECT problems FROM widecol.verify('sh') WHERE segment = 'run'}),
	qr/block $shb: value page: column layout: a column has fewer values than its tuples/,
	'verify: the bitmap that does not match the columns');
is(p('SELECT 1'), '1', 'server still up');
$primary->stop;

# (11) value hints (run format 13): after a leaf index page's entries and
# counts, each entry's hint names its key page's value pages and where each
# starts.  A hint naming the wrong block under a recomputed checksum is
# only bad advice: every read is right, and verify reports it; a hint whose
# page count is past the limit makes the leaf malformed: a seek fails
# naming relation, block and run, and verify reports the page.  A hint
# sending a page's rows to the wrong value page, and a format-13 leaf
# without hints, leave every lookup right; verify reports each.
$primary->start;
p(q{CREATE TABLE vh (k int, v text) USING widecol WITH (widecol.partition_key = 'k');
INSERT INTO vh SELECT g, repeat(md5(g::text), 6) FROM generate_series(1, 6000) g;
CHECKPOINT});
my ($vhrun, $vhpath, @vhleaves) = stopped_run_pages('vh', 5);
is(scalar(@vhleaves), 1, 'vh: one index page');
my ($vhblk, $vhpage) = @{ $vhleaves[0] };
my $vhorig = $vhpage;
my $vhflags = unpack('v', substr($vhpage, 8192 - 24 + 2, 2));
my $vhcount = unpack('V', substr($vhpage, 8192 - 24 + 16, 4));
is($vhflags & 0x0200, 0x0200, 'the leaf carries value hints');
# past the entries (child, key length, key) and their counts
my $at = 24;
$at += 6 + unpack('v', substr($vhpage, $at + 4, 2)) for 1 .. $vhcount;
$at += 4 * $vhcount if $vhflags & 0x0100;
my $nv = unpack('C', substr($vhpage, $at, 1));
cmp_ok($nv, '>', 1, "the first key page's tuples are in several value pages ($nv)");
my $hinted = unpack('V', substr($vhpage, $at + 1, 4));
my $keyblk = unpack('V', substr($vhpage, 24, 4));
substr($vhpage, $at + 1, 4) = pack('V', $keyblk);
write_page_with_checksum($vhpath, $vhblk, $vhpage);
$primary->start;
is(p(q{SET enable_seqscan = off; SELECT count(*) FROM generate_series(1, 6000) g, vh
	WHERE vh.k = g AND vh.v = repeat(md5(g::text), 6)}), '6000', 'a wrong hint: every lookup is right');
like(p(q{SELECT problems FROM widecol.verify('vh') WHERE segment = 'run'}),
	qr/block $keyblk: value hint names block $keyblk for value page 1, where the key page names $hinted/,
	'verify: the hint naming the wrong block');
$primary->stop;
$vhpage = $vhorig;
substr($vhpage, $at, 1) = pack('C', 200);
write_page_with_checksum($vhpath, $vhblk, $vhpage);
$primary->start;
($ret, $stdout, $stderr) = $primary->psql('postgres', q{SET enable_seqscan = off; SELECT v FROM vh WHERE k = 17},
	on_error_stop => 0);
like($stderr, qr/widecol: malformed value hints in block $vhblk of relation "vh" \(run $vhrun\)/,
	'a hint past the limit: a seek fails, naming relation, block and run');
like(p(q{SELECT problems FROM widecol.verify('vh') WHERE segment = 'run'}),
	qr/block $vhblk: malformed value hints/, 'verify: the malformed hints');
$primary->stop;
# the first separator made smaller than every key (int keys start 0x80):
# the hint sends the page's first rows to its second value page
$vhpage = $vhorig;
my $sepat = $at + 1 + 4 * $nv;
cmp_ok(unpack('C', substr($vhpage, $sepat, 1)), '>', 0, 'the second value page has a separator');
substr($vhpage, $sepat + 1, 1) = "\x00";
write_page_with_checksum($vhpath, $vhblk, $vhpage);
$primary->start;
is(p(q{SET enable_seqscan = off; SELECT count(*) FROM generate_series(1, 6000) g, vh
	WHERE vh.k = g AND vh.v = repeat(md5(g::text), 6)}), '6000', 'a hint placing rows on the wrong page: every lookup is right');
like(p(q{SELECT problems FROM widecol.verify('vh') WHERE segment = 'run'}),
	qr/block $keyblk: value hint names the wrong value page for row 1/,
	'verify: the hint naming the wrong page for a row');
$primary->stop;
# a format-13 leaf without hints: its flag cleared, its payload ending
# where they started (pd_lower)
$vhpage = $vhorig;
substr($vhpage, 8192 - 24 + 2, 2) = pack('v', $vhflags & ~0x0200);
substr($vhpage, 12, 2) = pack('v', $at);
write_page_with_checksum($vhpath, $vhblk, $vhpage);
$primary->start;
is(p(q{SET enable_seqscan = off; SELECT count(*) FROM generate_series(1, 6000) g, vh
	WHERE vh.k = g AND vh.v = repeat(md5(g::text), 6)}), '6000', 'a leaf without hints: every lookup is right');
like(p(q{SELECT problems FROM widecol.verify('vh') WHERE segment = 'run'}),
	qr/block $vhblk: leaf index page without value hints/,
	'verify: a format-13 leaf without hints');
$primary->stop;
write_page_with_checksum($vhpath, $vhblk, $vhorig);
$primary->start;
is(p(q{SELECT bool_and(ok) FROM widecol.verify('vh')}), 't', 'the leaf restored: verify is clean');

# (14) the run of a bulk write borrows the table's newest dictionary
# (widecol.ingest_zstd_dictionary): its paths in frames from its first
# value page, with a copy of the dictionary in its own extent, read back
# on both servers; still read when the run it borrowed from is damaged.
# A write whose newest dictionary is damaged goes without one (no error);
# and none with the setting off
sub dict_pages_of
{
	my ($t, $run) = @_;
	return p(qq{SELECT coalesce(sum(pages), 0) FROM widecol.run_pages('$t')
	            WHERE kind = 'dictionary' AND run_id = $run});
}
sub payload { my $pg = shift; return substr($pg, 24, unpack('v', substr($pg, 12, 2)) - 24); }
p(qq{CREATE TABLE ib (k int, path text, w int) USING widecol WITH (widecol.partition_key = 'k');
INSERT INTO ib SELECT g, $gpath, g % 1000 FROM generate_series(1, 20000) g;});
is(p(q{SELECT count(*) FROM widecol.run_pages('ib') WHERE kind = 'dictionary'}), '0',
	'a bulk write before any compaction: no dictionary to borrow');
p(q{SELECT widecol.compact('ib', true)});
my $ibsrc = p(q{SELECT run_id FROM widecol.runs('ib')});
cmp_ok(dict_pages_of('ib', $ibsrc), '>', 0, 'the compacted run has a dictionary');
p(qq{INSERT INTO ib SELECT g, $gpath, g % 1000 FROM generate_series(20001, 40000) g});
my $ibrun = p(q{SELECT max(run_id) FROM widecol.runs('ib')});
is(dict_pages_of('ib', $ibrun), dict_pages_of('ib', $ibsrc), 'the bulk write\'s run has a dictionary of as many pages');
p(qq{SET widecol.ingest_zstd_dictionary = off;
INSERT INTO ib SELECT g, $gpath, g % 1000 FROM generate_series(100001, 120000) g});
my $iboff = p(q{SELECT max(run_id) FROM widecol.runs('ib')});
is(dict_pages_of('ib', $iboff), '0', 'widecol.ingest_zstd_dictionary = off: none');
my $iblookups = qq{SET enable_hashjoin = off; SET enable_mergejoin = off;
SELECT count(*), count(*) FILTER (WHERE x.path = $gpath) FROM generate_series(20001, 40000, 7) g,
  LATERAL (SELECT path FROM ib WHERE k = g) x};
is(p($iblookups), '2858|2858', 'lookups by key in the bulk write\'s run read every path');
is(p(qq{SELECT count(*), count(*) FILTER (WHERE path = $pathexpr) FROM ib}), '60000|60000',
	'a scan reads every path of the three runs');
is(p(q{SELECT bool_and(ok) FROM widecol.verify('ib')}), 't', 'verify: sound');
$standby->start;
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $iblookups), '2858|2858', 'the standby reads them too');
$standby->stop;
my $ibpath = $primary->data_dir . '/' . p(q{SELECT pg_relation_filepath('ib')});
$primary->stop;
my @srcdict = pages_of_type($ibpath, 11, $ibsrc);
my @ibdict = pages_of_type($ibpath, 11, $ibrun);
is(join('', map { payload($_->[1]) } @ibdict), join('', map { payload($_->[1]) } @srcdict),
	'its dictionary is a copy of the compacted run\'s');
my @ibcodecs = map { unpack('C', substr($_->[1], 24 + 4 + 12 * 2, 1)) } pages_of_type($ibpath, 8, $ibrun);
is($ibcodecs[0], 4, 'its first value page holds its paths in frames (codec 4)');
cmp_ok(scalar(grep { $_ == 4 } @ibcodecs), '>=', 0.9 * scalar(@ibcodecs),
	'and at least 9 in 10 of its value pages (' . scalar(@ibcodecs) . ')');
xor_bytes($ibpath, $srcdict[0][0], 1000, "\x01");
$primary->start;
is(p($iblookups), '2858|2858', 'the compacted run\'s dictionary damaged: the bulk write\'s run still reads');
($ret, $stdout, $stderr) = $primary->psql('postgres', q{SELECT path FROM ib WHERE k = 19999});
like($stderr, qr/widecol: run dictionary \(block $srcdict[0][0]\): checksum mismatch/,
	'... while the compacted run fails naming its dictionary');
$primary->stop;
xor_bytes($ibpath, $ibdict[0][0], 1000, "\x01");
$primary->start;
p(qq{INSERT INTO ib SELECT g, $gpath, g % 1000 FROM generate_series(40001, 60000) g});
my $ibnext = p(q{SELECT max(run_id) FROM widecol.runs('ib')});
is(dict_pages_of('ib', $ibnext), '0', 'the newest dictionary damaged: the next bulk write goes without one');
is(p(qq{SET enable_hashjoin = off; SET enable_mergejoin = off;
SELECT count(*), count(*) FILTER (WHERE x.path = $gpath) FROM generate_series(40001, 60000, 7) g,
  LATERAL (SELECT path FROM ib WHERE k = g) x}), '2858|2858', 'and reads back');
my $ibproblems = p(q{SELECT string_agg(problems, '; ') FROM widecol.verify('ib') WHERE NOT ok});
like($ibproblems, qr/block $srcdict[0][0]: run dictionary/, 'verify: the compacted run\'s dictionary');
like($ibproblems, qr/block $ibdict[0][0]: run dictionary/, 'verify: the bulk write\'s dictionary');
$primary->stop;

done_testing();
