
# Copyright: widecol authors.  TAP test, PostgreSQL 15.
#
# 007_query_tables_dump: query tables and an image store survive pg_dump and
# restore.  The triggers on base tables are ordinary triggers of user tables
# (dumped with them, created after the data is loaded); the catalog rows in
# widecol.query_table are extension configuration data
# (pg_extension_config_dump), so the dump carries them.  After a restore
# (custom format with pg_restore, and plain format with psql) the catalog,
# the triggers and the contents are those of the source, writes keep the
# query tables in step, the daily counters (a counter table restored by
# COPY: one increment per key from zero) equal a recount, and a new query
# table gets a fresh id.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;

my $node = widecol_node('qtdump', '');

my $tmp = PostgreSQL::Test::Utils::tempdir;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql(
	'src', q{
SET TimeZone = 'UTC';
CREATE EXTENSION widecol;
SELECT count(*) FROM widecol.create_image_store('store');
INSERT INTO store.images
SELECT ('00000000-0000-4000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, 'cam-' || (i % 7),
       timestamptz '2025-01-01 00:00+00' + i * interval '4 minutes', 'batch-' || (i / 100),
       's3://b', 'raw/' || i || '.jpg', 1920, 1080, md5(i::text),
       (ARRAY['{crack,rust}', '{ok}', '{crack}', '{}', '{rust,leak,crack}'])[1 + i % 5]::text[]
  FROM generate_series(1, 2000) i;
UPDATE store.images SET tags = '{blur}' WHERE device_id = 'cam-3';
DELETE FROM store.images WHERE device_id = 'cam-4' AND capture_time < '2025-01-02';
-- a query table on a heap base, renamed after it was created
CREATE TABLE notes (id int PRIMARY KEY, author text, words text[]);
INSERT INTO notes SELECT i, 'a' || (i % 3), string_to_array('w' || (i % 4) || ' w' || (i % 5), ' ') FROM generate_series(1, 100) i;
SELECT widecol.create_query_table('notes_by_word', 'notes', 'SELECT w AS word, id, author FROM base, unnest(words) AS w', 'word', 'id');
ALTER TABLE notes_by_word RENAME TO words;
});

my $catalog_q = q{
	SELECT id, query_table::text, base::text, definition, partition_key, coalesce(clustering_key, '-'),
	       key_columns::text, columns::text, diff_update
	  FROM widecol.query_table ORDER BY id};
my $triggers_q = q{
	SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid) FROM pg_trigger
	 WHERE NOT tgisinternal ORDER BY 1, 2};
my $contents_q = q{
	SELECT t, count(*), md5(string_agg(x, '|' ORDER BY x)) FROM (
	  SELECT 'images' t, i::text x FROM store.images i UNION ALL
	  SELECT 'device_daily_images', d::text FROM store.device_daily_images d UNION ALL
	  SELECT 'images_by_tag', g::text FROM store.images_by_tag g UNION ALL
	  SELECT 'batch_images', b::text FROM store.batch_images b UNION ALL
	  SELECT 'daily_counts', c::text FROM store.daily_counts c UNION ALL
	  SELECT 'words', w::text FROM words w) s GROUP BY t ORDER BY t};
my $functions_q = q{
	SET TimeZone = 'UTC';
	SELECT (SELECT count(*) FROM store.device_images('cam-1', '2025-01-01', '2025-01-08', 1000)),
	       (SELECT count(*) FROM store.tag_images('crack', '2025-01-01', '2025-01-08', 1000)),
	       (SELECT count(*) FROM store.tag_images_all('{rust,crack}', '2025-01-01', '2025-01-08', 1000)),
	       (SELECT count(*) FROM store.batch_object_keys('batch-3')),
	       (SELECT sum(images) FROM store.daily_counts('2025-01-01', '2025-01-08', 'tag'))};
my $check_q = q{
	SELECT q.query_table::text, c.ok, c.expected_rows FROM widecol.query_table q,
	       widecol.check_query_table(q.query_table) c ORDER BY q.id};

my %src = map { $_ => $node->safe_psql('src', $_) } ($catalog_q, $triggers_q, $contents_q, $functions_q, $check_q);
like($src{$check_q}, qr/^store\.device_daily_images\|t\|\d+\nstore\.images_by_tag\|t\|\d+\nstore\.batch_images\|t\|\d+\nstore\.daily_counts\|t\|\d+\nwords\|t\|\d+$/,
	'source: five query tables (the daily counts one of them) in step');

my $dump_custom = "$tmp/src.dump";
my $dump_plain = "$tmp/src.sql";
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump_custom, '-d', 'src' ], 'pg_dump custom format');
$node->command_ok([ 'pg_dump', '-Fp', '-f', $dump_plain, '-d', 'src' ], 'pg_dump plain format');
$node->safe_psql('postgres', "CREATE DATABASE $_") for qw(r_custom r_plain);
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', 'r_custom', $dump_custom ],
	'pg_restore of the custom dump');
$node->command_ok(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', 'r_plain', '-f', $dump_plain ],
	'psql restore of the plain dump');

for my $db (qw(r_custom r_plain))
{
	is($node->safe_psql($db, $catalog_q), $src{$catalog_q}, "$db: widecol.query_table rows restored");
	is($node->safe_psql($db, $triggers_q), $src{$triggers_q}, "$db: base table triggers restored");
	is($node->safe_psql($db, $contents_q), $src{$contents_q}, "$db: contents restored");
	is($node->safe_psql($db, $functions_q), $src{$functions_q}, "$db: image store functions give the same answers");
	is($node->safe_psql($db, $check_q), $src{$check_q}, "$db: query tables in step after restore");

	# writes after the restore keep the query tables in step
	$node->safe_psql(
		$db, q{
		INSERT INTO store.images VALUES ('00000000-0000-4000-8000-00000000beef', 'cam-9', '2025-01-03 12:00+00',
		                                 'batch-new', 's3://b', 'raw/new.jpg', 1, 1, 'h', '{restored}');
		UPDATE store.images SET tags = '{again}' WHERE device_id = 'cam-2' AND capture_time < '2025-01-01 06:00+00';
		DELETE FROM store.images WHERE device_id = 'cam-5';
		INSERT INTO notes VALUES (1000, 'z', '{fresh}');
		DELETE FROM notes WHERE id < 10;
	});
	is( $node->safe_psql(
			$db, q{SELECT string_agg(c.ok::text, ',' ORDER BY q.id) FROM widecol.query_table q,
			              widecol.check_query_table(q.query_table) c}),
		'true,true,true,true,true', "$db: writes after restore keep the query tables in step");
	is( $node->safe_psql(
			$db, q{SELECT count(*) FROM store.tag_images('restored', '2025-01-03', '2025-01-04')}),
		'1', "$db: a new image is found by tag");
	# the daily counters were restored as they were and keep counting
	is( $node->safe_psql(
			$db, q{
			WITH c AS (SELECT day, dimension, value, images FROM store.daily_counts WHERE images <> 0),
			     r AS (SELECT widecol.day_bucket(capture_time) AS day, 'device' AS dimension, device_id AS value, count(*) AS images
			             FROM store.images GROUP BY 1, 3
			           UNION ALL
			           SELECT widecol.day_bucket(capture_time), 'tag', t, count(*) FROM store.images, unnest(tags) t GROUP BY 1, 3
			           UNION ALL
			           SELECT widecol.day_bucket(capture_time), 'total', '', count(*) FROM store.images GROUP BY 1)
			SELECT (SELECT count(*) FROM (SELECT * FROM c EXCEPT SELECT * FROM r) x)
			     + (SELECT count(*) FROM (SELECT * FROM r EXCEPT SELECT * FROM c) x)}),
		'0', "$db: daily counters equal a recount after restore and writes");
	# the id sequence was restored too: a new query table gets a new id
	is( $node->safe_psql(
			$db, q{
			SELECT widecol.create_query_table('by_author', 'notes', 'SELECT author, id FROM base', 'author', 'id')::text;
			SELECT count(DISTINCT id) = count(*) FROM widecol.query_table;}),
		"by_author\nt", "$db: new query table after restore");
}

$node->stop;
done_testing();
