
# Copyright: widecol authors.  TAP test, PostgreSQL 15.
#
# 017_sharded_image_store: widecol.create_sharded_image_store on
# 1 coordinator + 2 shards, against an image store on one node (on the
# coordinator) holding the same images.
#
# - An image store on each shard, on the coordinator the store's tables
#   hash-partitioned by device over them and a view of the shards' counters;
#   check_shards finds the images tables equal; bad calls fail clearly and
#   leave nothing behind.
# - Images written through the coordinator (COPY, INSERT, UPDATE, DELETE)
#   land on their device's shard, whose triggers keep its query tables and
#   counters.
# - Every query function returns what the one-node store's returns:
#   device_images (one shard, LIMIT sent), tag_images and tag_images_all
#   (every shard, each sending its newest max_rows), pages by page key,
#   image by id and batch_object_keys (every shard), daily_counts by device,
#   tag and total (summed across shards), rebuild_daily_counts.
# - An UPDATE of device_id is refused; a shard down fails the fan-out
#   queries clearly while device_images of the other shard's devices work.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;

my ($coord, $s1, $s2) = shard_nodes(q{
widecol.max_workers = 0
max_connections = 20
timezone = 'UTC'
});
sub c { return $coord->safe_psql('postgres', $_[0]); }

# ------------------------------------------------------------- create --

fails_like($coord, q{SELECT * FROM widecol.create_sharded_image_store('st', '{}')},
	qr/22023: shards must name at least one foreign server/, 'no shards');
fails_like($coord, q{SELECT * FROM widecol.create_sharded_image_store('st', '{s1,nosuch}')},
	qr/42704: foreign server "nosuch" does not exist/, 'unknown server');
$s2->safe_psql('postgres', 'CREATE SCHEMA st');
fails_like($coord, q{SELECT * FROM widecol.create_sharded_image_store('st', '{s1,s2}')},
	qr/42P06: schema st already exists on shard "s2"/, 'the schema exists on a shard');
is($s1->safe_psql('postgres', q{SELECT to_regnamespace('st') IS NULL}), 't',
	'a failed create drops the store it had made on the other shard');
is(c(q{SELECT to_regnamespace('st') IS NULL}), 't', '... and leaves nothing on the coordinator');
$s2->safe_psql('postgres', 'DROP SCHEMA st');

like(c(q{SELECT string_agg(object || ':' || kind, ',') FROM widecol.create_sharded_image_store('st', '{s1,s2}', ttl => '3650 days')}),
	qr/^st.images:sharded table,st.device_daily_images:sharded query table,.*st.daily_counts\(date, date, text\)/,
	'create_sharded_image_store lists what it made');
for my $s ($s1, $s2)
{
	is($s->safe_psql('postgres', q{SELECT count(*) FROM widecol.query_table WHERE base = 'st.images'::regclass}),
		'4', $s->name . ': an image store with its four query tables (daily_counts is a counter query table)');
}
is(c(q{SELECT string_agg(c.relname, ',' ORDER BY c.relname) FROM pg_class c WHERE c.relnamespace = 'st'::regnamespace AND c.relkind = 'f'}),
	'batch_images_shard_0,batch_images_shard_1,daily_counts_shard_0,daily_counts_shard_1,device_daily_images_shard_0,device_daily_images_shard_1,'
	  . 'images_by_tag_shard_0,images_by_tag_shard_1,images_shard_0,images_shard_1',
	'coordinator: a foreign table per shard of every table');
is(c(q{SELECT bool_and(ok) FROM widecol.check_shards('st.images')}), 't', 'check_shards: both shards hold the images table');

# ------------------------------------------------------------- load --

# the same images into the sharded store and a one-node store
c(q{SELECT count(*) FROM widecol.create_image_store('one')});
my $rows = q{
SELECT ('00000000-0000-4000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, 'cam-' || mod(i, 13),
       timestamptz '2025-01-01 00:00+00' + i * interval '3 minutes', 'batch-' || (i / 100),
       's3://b', 'raw/' || i || '.jpg', 1920, 1080, md5(i::text),
       (ARRAY['{crack,rust}', '{ok}', '{crack}', '{}', '{rust,leak,crack}'])[1 + mod(i, 5)]::text[]
  FROM generate_series(%s, %s) i};
my $csv = $coord->basedir . '/images.csv';
c(sprintf("COPY ($rows) TO '$csv' (FORMAT csv)", 1, 3000));
c(qq{COPY st.images FROM '$csv' (FORMAT csv); COPY one.images FROM '$csv' (FORMAT csv)});
c(sprintf("INSERT INTO st.images $rows; INSERT INTO one.images $rows", 3001, 4000, 3001, 4000));
is(c(q{SELECT count(*) FROM st.images}), '4000', 'COPY and INSERT through the coordinator');
my $n1 = $s1->safe_psql('postgres', q{SELECT count(*) FROM st.images});
my $n2 = $s2->safe_psql('postgres', q{SELECT count(*) FROM st.images});
ok($n1 > 500 && $n2 > 500 && $n1 + $n2 == 4000, "both shards hold images ($n1 + $n2)");
is( $s1->safe_psql('postgres', q{SELECT count(*) FROM st.images i JOIN st.device_daily_images d USING (image_id)}),
	$n1, 'shard 1: its device_daily_images rows kept by its triggers');
is( c(q{SELECT count(*) FROM (SELECT DISTINCT device_id, tableoid FROM st.images) r
         WHERE (widecol.shard_for('st.images', r.device_id)).partition <> r.tableoid}),
	'0', 'shard_for names the shard of every device');
is( c(q{SELECT count(*) FROM st.device_daily_images d WHERE d.tableoid::regclass::text <> replace((widecol.shard_for('st.images', d.device_id)).partition::text, 'images_shard', 'device_daily_images_shard')}),
	'0', 'a device\'s device/day rows are on its images\' shard');

# writes that fan out or touch one shard, on both stores
for my $sql (
	q{UPDATE %s.images SET tags = '{blur}' WHERE device_id = 'cam-3'},
	q{DELETE FROM %s.images WHERE device_id = 'cam-4' AND capture_time < '2025-01-03'},
	q{DELETE FROM %s.images WHERE image_id = '00000000-0000-4000-8000-000000000101'},
	q{UPDATE %s.images SET tags = tags || '{leak}' WHERE width = 1920 AND image_id < '00000000-0000-4000-8000-000000000200'})
{
	c(sprintf($sql, 'st') . '; ' . sprintf($sql, 'one'));
}
pass('UPDATEs and DELETEs through the coordinator');

# ------------------------------------------------ same answers as one node --

my @calls = (
	[ 'device_images, one day', q{SELECT * FROM %s.device_images('cam-5', '2025-01-02', '2025-01-03', 20)} ],
	[ 'device_images, a week, all', q{SELECT * FROM %s.device_images('cam-3', '2025-01-01', '2025-01-08', 1000)} ],
	[ 'device_images, second page',
		q{SELECT * FROM %s.device_images('cam-7', '2025-01-01', '2025-01-08', 10,
		     (SELECT (capture_time, image_id)::%s.image_page_key FROM %s.device_images('cam-7', '2025-01-01', '2025-01-08', 10) OFFSET 9))} ],
	[ 'tag_images, newest 25', q{SELECT * FROM %s.tag_images('crack', '2025-01-01', '2025-01-10', 25)} ],
	[ 'tag_images, all of a rare tag', q{SELECT * FROM %s.tag_images('blur', '2025-01-01', '2025-01-10', 10000)} ],
	[ 'tag_images, second page',
		q{SELECT * FROM %s.tag_images('rust', '2025-01-01', '2025-01-10', 30,
		     (SELECT (capture_time, image_id)::%s.image_page_key FROM %s.tag_images('rust', '2025-01-01', '2025-01-10', 30) OFFSET 29))} ],
	[ 'tag_images_all', q{SELECT * FROM %s.tag_images_all('{leak,crack}', '2025-01-01', '2025-01-10', 40)} ],
	[ 'image by id (each shard)',
		q{SELECT (%s.image(('00000000-0000-4000-8000-' || lpad(to_hex(i), 12, '0'))::uuid)).* FROM generate_series(95, 110) i} ],
	[ 'batch_object_keys', q{SELECT * FROM %s.batch_object_keys('batch-7')} ],
	[ 'daily_counts by device', q{SELECT * FROM %s.daily_counts('2025-01-01', '2025-01-10', 'device')} ],
	[ 'daily_counts by tag', q{SELECT * FROM %s.daily_counts('2025-01-01', '2025-01-10', 'tag')} ],
	[ 'daily_counts total', q{SELECT * FROM %s.daily_counts('2025-01-01', '2025-01-10', 'total')} ],
);
for my $q (@calls)
{
	my ($name, $sql) = @$q;
	(my $one = $sql) =~ s/%s/one/g;
	(my $st = $sql) =~ s/%s/st/g;
	my $local = c($one);
	isnt($local, '', "one node: $name returns rows");
	is(c($st), $local, "sharded = one node: $name");
}
like(c(q{SELECT images FROM st.daily_counts('2025-01-01', '2025-01-10', 'total') LIMIT 1}), qr/^\d+$/, 'daily_counts returns counts');
is( c(q{SELECT (SELECT count(*) > 0 FROM st.daily_counts_shard_0 WHERE dimension = 'total')
            AND (SELECT count(*) > 0 FROM st.daily_counts_shard_1 WHERE dimension = 'total')}),
	't', 'the daily totals are summed from both shards\' counters');

# what is sent
my ($ret, $out, $err) = $coord->psql('postgres', q{
	LOAD 'auto_explain';
	SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_verbose = on;
	SET auto_explain.log_level = notice;
	SELECT count(*) FROM st.device_images('cam-5', '2025-01-02', '2025-01-03', 20);
	SELECT count(*) FROM st.tag_images('crack', '2025-01-01', '2025-01-10', 25);});
like($err, qr/Remote SQL: SELECT [^\n]* FROM st.device_daily_images WHERE [^\n]*\(\(device_id = 'cam-5'\)\) ORDER BY capture_time DESC NULLS FIRST, image_id DESC NULLS FIRST LIMIT 20::bigint/,
	'device_images: one shard, WHERE, ORDER BY and LIMIT sent');
my @tag_scans = $err =~ /(Async Foreign Scan on st.images_by_tag_shard_\d.*?Remote SQL: [^\n]*LIMIT 25::bigint)/sg;
is(scalar(@tag_scans), 2, 'tag_images: both shards at once, each sending at most 25 rows');
unlike($err, qr/JIT:/, 'no JIT for these plans');

# ----------------------------------------------------- counters, rebuild --

$s1->safe_psql('postgres', q{SET widecol.allow_query_table_writes = on; TRUNCATE st.daily_counts});
isnt(c(q{SELECT * FROM st.daily_counts('2025-01-01', '2025-01-10', 'device')}),
	c(q{SELECT * FROM one.daily_counts('2025-01-01', '2025-01-10', 'device')}), 'counters lost on shard 1');
is(c(q{SELECT st.rebuild_daily_counts() > 0}), 't', 'rebuild_daily_counts on every shard');
is(c(q{SELECT * FROM st.daily_counts('2025-01-01', '2025-01-10', 'device')}),
	c(q{SELECT * FROM one.daily_counts('2025-01-01', '2025-01-10', 'device')}), 'counters right again');
fails_like($coord, q{SELECT * FROM st.daily_counts('2025-01-01', '2025-01-10', 'colour')},
	qr/22023: daily_counts: by must be device, tag or total/, 'daily_counts by an unknown dimension');

# ------------------------------------------------ shard key, a shard down --

fails_like($coord, q{UPDATE st.images SET device_id = 'cam-99' WHERE device_id = 'cam-1'},
	qr/0A000: cannot update the shard key \(device_id\) of sharded table images/, 'UPDATE of device_id');

my $dev_s1 = c(q{SELECT min(device_id) FROM st.images WHERE tableoid = 'st.images_shard_0'::regclass});
my $expect = c(qq{SELECT * FROM one.device_images('$dev_s1', '2025-01-01', '2025-01-10', 50)});
$s2->stop('immediate');
is(c(qq{SELECT * FROM st.device_images('$dev_s1', '2025-01-01', '2025-01-10', 50)}), $expect,
	'shard 2 down: device_images of a shard-1 device works');
fails_like($coord, q{SELECT * FROM st.tag_images('crack', '2025-01-01', '2025-01-10', 25)},
	qr/08001: could not connect to server "s2"/, 'shard 2 down: tag_images');
fails_like($coord, q{SELECT * FROM st.daily_counts('2025-01-01', '2025-01-10')},
	qr/08001: could not connect to server "s2"/, 'shard 2 down: daily_counts');
$s2->start;
is(c(q{SELECT count(*) FROM st.images}), c(q{SELECT count(*) FROM one.images}), 'shard 2 back: all images readable');

$_->stop for ($coord, $s1, $s2);
done_testing();
