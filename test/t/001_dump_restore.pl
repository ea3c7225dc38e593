
# Copyright: widecol authors.  TAP test, PostgreSQL 15.
#
# 001_dump_restore: a database with several widecol tables (partition and
# clustering keys incl. DESC and text COLLATE "C", a quoted mixed-case key
# column, a keyless table, a table with widecol.default_ttl), filled with
# COPY, single-row upserts, deletes and updates, a flush, and more writes
# left in level 0, is dumped with pg_dump and restored three ways:
#
#   custom format   -> pg_restore                       (database r_custom)
#   custom format   -> pg_restore --single-transaction  (database r_single;
#                      CREATE TABLE + COPY in one transaction, which with
#                      wal_level = minimal skips WAL for the new files)
#   plain format    -> psql                             (database r_plain)
#
# For each restored database the test checks that the schema is the same
# (\d+ output, pg_class.reloptions, access method widecol), that the data is
# the same (row counts and md5 of the ordered full contents, including
# NULLs, unicode, bytea, control characters), that no stale manifest rows
# were carried over, and that the widecol key semantics still work after
# the restore (an INSERT of an existing key replaces the row, key order of
# scans, DESC clustering, flush).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;

# no background maintenance: this test counts runs (007 tests the workers)
my $node = widecol_node('dump', 'widecol.max_workers = 0');

my $tmp = PostgreSQL::Test::Utils::tempdir;

# table name => ORDER BY list giving the table's full, deterministic order
my %order = (
	'events'        => 'pk, ck DESC',
	'docs'          => 'tenant COLLATE "C", name, ver DESC',
	'logs'          => 'a, msg COLLATE "C" NULLS FIRST',
	'sessions'      => 'user_id, day, sid',
	'"Mixed Case"'  => '"Dev Id" COLLATE "C", seq DESC',
	'level0_only'   => 'k',
);
my @tables = sort keys %order;

# md5 of the ordered contents of every table, with its row count
sub contents
{
	my ($db) = @_;
	my %r;
	for my $t (@tables)
	{
		$r{$t} = $node->safe_psql($db,
			"SELECT count(*) || ' ' || coalesce(md5(string_agg(x::text, '|' ORDER BY $order{$t})), 'empty')"
			  . " FROM $t AS x");
	}
	return \%r;
}

# \d+ of every table, and reloptions + access method from the catalog
sub schema
{
	my ($db) = @_;
	my %r;
	for my $t (@tables)
	{
		$r{"d+ $t"} = $node->safe_psql($db, "\\d+ public.$t");
	}
	$r{catalog} = $node->safe_psql(
		$db, q{
		SELECT c.relname, a.amname, c.relkind, c.relpersistence,
		       coalesce(array_to_string(c.reloptions, ' ; '), '<none>')
		  FROM pg_class c JOIN pg_am a ON a.oid = c.relam
		 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
		 ORDER BY c.relname COLLATE "C"});
	return \%r;
}

# --------------------------------------------------------------- source --

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', 'CREATE EXTENSION widecol');

$node->safe_psql(
	'src', q{
CREATE TABLE events (pk int, ck int, v text, b bytea, n numeric, ts timestamptz, flag boolean)
  USING widecol WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck DESC');

CREATE TABLE docs (tenant text, name text COLLATE "C", ver bigint, body text, tags text[])
  USING widecol WITH (widecol.partition_key = 'tenant', widecol.clustering_key = 'name, ver DESC');

CREATE TABLE logs (a int, msg text) USING widecol;

CREATE TABLE sessions (user_id bigint, day date, sid uuid, payload jsonb, note varchar(20))
  USING widecol WITH (widecol.partition_key = 'user_id, day', widecol.clustering_key = 'sid',
                      widecol.default_ttl = '30 days');

CREATE TABLE "Mixed Case" ("Dev Id" text, seq smallint, val double precision)
  USING widecol WITH (widecol.partition_key = '"Dev Id"', widecol.clustering_key = 'seq DESC');

CREATE TABLE level0_only (k int, v text)
  USING widecol WITH (widecol.partition_key = 'k');
});

# Bulk data through COPY (written as sorted runs): generated deterministically
# by the server into files, then loaded with COPY FROM.
my %gen = (
	events => q{
		SELECT i % 50, i,
		       CASE WHEN i % 7 = 0 THEN NULL
		            WHEN i % 11 = 0 THEN ''
		            WHEN i % 13 = 0 THEN E'tab\there\nnew line\\\\back\\\\slash "q" ' || i
		            ELSE 'ev ' || i || ' ünïcødé ✓ 日本語 🎉' END,
		       CASE WHEN i % 5 = 0 THEN NULL ELSE decode(md5(i::text), 'hex') || '\x00ff00'::bytea END,
		       CASE WHEN i % 9 = 0 THEN NULL ELSE (i * 1.25)::numeric END,
		       timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute',
		       CASE WHEN i % 17 = 0 THEN NULL ELSE i % 3 = 0 END
		  FROM generate_series(1, 3000) i},
	docs => q{
		SELECT CASE WHEN i % 20 = 19 THEN 'ténant-ü' ELSE 'tenant-' || (i % 20) END,
		       CASE WHEN i % 10 = 3 THEN 'Doc/' ELSE 'doc/' END || lpad((i / 20)::text, 4, '0')
		         || CASE WHEN i % 10 = 4 THEN 'é' ELSE '' END,
		       (i * 7) % 5,
		       CASE WHEN i % 6 = 0 THEN NULL ELSE repeat('body ' || i || ' ', 1 + i % 5) END,
		       CASE WHEN i % 4 = 0 THEN NULL ELSE ARRAY['t' || (i % 3), 'Ω' || (i % 5)] END
		  FROM generate_series(1, 1500) i},
	logs => q{
		SELECT i % 10, CASE WHEN i % 4 = 0 THEN NULL ELSE 'msg ' || (i % 25) END
		  FROM generate_series(1, 500) i},
	sessions => q{
		SELECT 1000000000000 + i % 30, date '2024-03-01' + i % 7, md5(i::text)::uuid,
		       jsonb_build_object('i', i, 'k', 'välue', 'nested', jsonb_build_array(i, NULL, true)),
		       CASE WHEN i % 9 = 0 THEN NULL ELSE 'n' || i END
		  FROM generate_series(1, 500) i},
);
for my $t (sort keys %gen)
{
	my $file = "$tmp/$t.copy";
	$node->safe_psql('src', "COPY ($gen{$t}) TO '$file'");
	$node->safe_psql('src', "COPY $t FROM '$file'");
}
# A second COPY that overwrites 100 existing keys of events (COPY upserts).
$node->safe_psql(
	'src', q{
	COPY (SELECT i % 50, i, 'copy-upsert ' || i, NULL::bytea, -i::numeric, NULL::timestamptz, true
	        FROM generate_series(1, 3000, 30) i) TO '} . "$tmp/events2.copy" . q{';
	COPY events FROM '} . "$tmp/events2.copy" . q{';});

# Single-row writes to level 0: upserts, deletes, updates (incl. a
# key-changing one), then a flush of every table.
$node->safe_psql(
	'src', q{
INSERT INTO events VALUES (1, 1, 'upserted one', '\x', 0, NULL, NULL);
INSERT INTO events VALUES (2, 2, 'upserted two', '\xdeadbeef', 2.5, '2030-01-01 00:00:00+00', false);
INSERT INTO events VALUES (49, 99999, 'new key', NULL, NULL, NULL, NULL);
DELETE FROM events WHERE pk = 3 AND ck < 1000;
UPDATE events SET v = 'updated ' || ck, flag = NULL WHERE pk = 4;
UPDATE events SET ck = ck + 100000 WHERE pk = 5 AND ck < 1500;

INSERT INTO docs VALUES ('tenant-1', 'doc/0000', 2, 'upserted', NULL);
DELETE FROM docs WHERE tenant = 'tenant-7';
UPDATE docs SET body = NULL, tags = '{}' WHERE name LIKE 'doc/000%';

DELETE FROM logs WHERE a = 3;
UPDATE logs SET msg = 'changed' WHERE a = 4 AND msg IS NULL;
INSERT INTO logs VALUES (1, 'msg 1'), (1, 'msg 1'), (NULL, NULL);

UPDATE sessions SET payload = payload || '{"upd": true}' WHERE day = '2024-03-02';
DELETE FROM sessions WHERE user_id = 1000000000005;

INSERT INTO "Mixed Case" SELECT 'dev-' || (i % 4), i, i / 3.0 FROM generate_series(1, 200) i;
INSERT INTO "Mixed Case" VALUES ('dev-1', 1, -1), ('DEV-1', 1, NULL);

SELECT widecol.flush('events'), widecol.flush('docs'), widecol.flush('logs'),
       widecol.flush('sessions'), widecol.flush('"Mixed Case"');
});

# More single-row writes after the flush: these stay in level 0.
$node->safe_psql(
	'src', q{
INSERT INTO events VALUES (1, 51, 'level0 upsert', NULL, 1, NULL, true);
INSERT INTO events VALUES (7, -5, 'level0 new', '\x00', NULL, NULL, NULL);
DELETE FROM events WHERE pk = 8 AND ck % 2 = 0;
UPDATE events SET ck = -ck WHERE pk = 9 AND ck < 200;
INSERT INTO docs VALUES ('ténant-ü', 'zzz', 1, E'multi\nline', ARRAY[NULL, 'x']);
DELETE FROM docs WHERE tenant = 'tenant-2' AND ver = 0;
INSERT INTO logs VALUES (99, 'after flush'), (99, 'after flush');
UPDATE sessions SET note = 'level0 ✓' WHERE user_id = 1000000000001;
UPDATE "Mixed Case" SET val = val * 2 WHERE "Dev Id" = 'dev-2';
INSERT INTO level0_only SELECT i, 'row ' || i FROM generate_series(1, 100) i;
INSERT INTO level0_only VALUES (5, 'five again');
});

# Preconditions: the source really has data in runs and in level 0.
is( $node->safe_psql(
		'src', q{
		SELECT (SELECT count(*) FROM widecol.runs('events')) >= 3,
		       widecol.level0_pages('events') > 0,
		       widecol.level0_pages('docs') > 0,
		       widecol.level0_pages('level0_only') > 0,
		       (SELECT count(*) FROM widecol.runs('level0_only')) = 0}),
	't|t|t|t|t',
	'source: data both in sorted runs and in level 0');

my $src_data = contents('src');
my $src_schema = schema('src');
note "source contents (count md5): ", explain $src_data;

# Spot checks on the source itself, so that equality below means something.
# 3000 copied keys, + (49,99999) + (7,-5), - 20 (pk 3, ck < 1000), - 60 (pk 8,
# even ck); the other writes replace or move rows.
is($node->safe_psql('src', 'SELECT count(*) FROM events'),
	'2922', 'source: events row count after upserts/deletes');
is( $node->safe_psql(
		'src', q{SELECT v FROM events WHERE pk = 1 AND ck IN (1, 51) ORDER BY ck}),
	"upserted one\nlevel0 upsert",
	'source: single-row upserts replaced the rows');
is($node->safe_psql('src', q{SELECT count(*) FROM logs WHERE a = 99}),
	'2', 'source: keyless table keeps duplicate rows');

# ------------------------------------------------------------------ dump --

my $dump_custom = "$tmp/src.dump";
my $dump_plain = "$tmp/src.sql";
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump_custom, '-d', 'src' ],
	'pg_dump custom format');
$node->command_ok([ 'pg_dump', '-Fp', '-f', $dump_plain, '-d', 'src' ],
	'pg_dump plain format');

like(slurp_file($dump_plain),
	qr/WITH \("widecol\.partition_key"=pk, "widecol\.clustering_key"='ck DESC'\)/,
	'plain dump carries the widecol options of events');

for my $db (qw(r_custom r_single r_plain))
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
}
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', 'r_custom', $dump_custom ],
	'pg_restore of the custom dump');
$node->command_ok(
	[
		'pg_restore', '--exit-on-error', '--single-transaction',
		'-d', 'r_single', $dump_custom
	],
	'pg_restore --single-transaction of the custom dump');
$node->command_ok(
	[
		'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', 'r_plain',
		'-f', $dump_plain
	],
	'psql restore of the plain dump');

# --------------------------------------------------------------- compare --

for my $db (qw(r_custom r_single r_plain))
{
	my $s = schema($db);
	for my $k (sort keys %$src_schema)
	{
		is($s->{$k}, $src_schema->{$k}, "$db: schema ($k) identical");
	}
	like($s->{catalog}, qr/^events\|widecol\|r\|p\|widecol\.partition_key=pk ; widecol\.clustering_key=ck DESC$/m,
		"$db: events keeps access method and options");
	like($s->{catalog}, qr/^sessions\|widecol\|r\|p\|.*widecol\.default_ttl=30 days$/m,
		"$db: sessions keeps its default_ttl");
	like($s->{catalog}, qr/^logs\|widecol\|r\|p\|<none>$/m,
		"$db: keyless logs stays keyless widecol");

	my $d = contents($db);
	for my $t (@tables)
	{
		is($d->{$t}, $src_data->{$t}, "$db: $t count and ordered contents identical");
	}

	# The restored data went in through COPY: the manifest only has rows of
	# the restored tables (nothing of the source's manifest came along).
	is( $node->safe_psql(
			$db, q{
			SELECT count(*) FROM widecol.segment
			 WHERE storage_id NOT IN (SELECT widecol.storage_id(c.oid)
			                            FROM pg_class c JOIN pg_am a ON a.oid = c.relam
			                           WHERE a.amname = 'widecol')}),
		'0', "$db: no foreign manifest rows");

	# Scans still return rows in key order (partition asc, clustering DESC).
	is( $node->safe_psql(
			$db, q{
			SELECT string_agg(x::text, '|') = string_agg(x::text, '|' ORDER BY pk, ck DESC)
			  FROM events x}),
		't', "$db: events scans in key order (ck DESC)");
	is( $node->safe_psql(
			$db, q{
			SELECT string_agg(x::text, '|') = string_agg(x::text, '|' ORDER BY "Dev Id" COLLATE "C", seq DESC)
			  FROM "Mixed Case" x}),
		't', "$db: \"Mixed Case\" scans in key order");

	# Key semantics after restore: INSERT of an existing key replaces the row.
	$node->safe_psql(
		$db, q{
		INSERT INTO events VALUES (1, 1, 'after restore', NULL, NULL, NULL, NULL);
		INSERT INTO docs VALUES ('tenant-1', 'doc/0000', 2, 'after restore', NULL);
		INSERT INTO sessions SELECT user_id, day, sid, '{"re": 1}', 'again' FROM sessions
		 WHERE user_id = 1000000000002;
		INSERT INTO "Mixed Case" VALUES ('dev-1', 1, 42);
		INSERT INTO logs VALUES (99, 'after flush');});
	is( $node->safe_psql(
			$db, q{
			SELECT (SELECT count(*) FROM events) || ',' ||
			       (SELECT string_agg(v, ';') FROM events WHERE pk = 1 AND ck = 1) || ',' ||
			       (SELECT count(*) FROM docs) || ',' ||
			       (SELECT string_agg(body, ';') FROM docs
			         WHERE tenant = 'tenant-1' AND name = 'doc/0000' AND ver = 2) || ',' ||
			       (SELECT count(*) FROM sessions) || ',' ||
			       (SELECT count(*) FROM sessions WHERE note = 'again') || ',' ||
			       (SELECT count(*) FROM "Mixed Case") || ',' ||
			       (SELECT string_agg(val::text, ';') FROM "Mixed Case" WHERE "Dev Id" = 'dev-1' AND seq = 1) || ',' ||
			       (SELECT count(*) FROM logs WHERE a = 99)}),
		join(',',
			(split / /, $src_data->{events})[0], 'after restore',
			(split / /, $src_data->{docs})[0], 'after restore',
			(split / /, $src_data->{sessions})[0],
			$node->safe_psql('src', 'SELECT count(*) FROM sessions WHERE user_id = 1000000000002'),
			(split / /, $src_data->{'"Mixed Case"'})[0], '42', '3'),
		"$db: INSERT of existing keys upserts (keyed tables), appends (keyless)");

	# Flush after restore keeps the contents.
	my $before = $node->safe_psql($db,
		"SELECT md5(string_agg(x::text, '|' ORDER BY pk, ck DESC)) FROM events x");
	$node->safe_psql($db, "SELECT widecol.flush('events')");
	is( $node->safe_psql(
			$db,
			"SELECT widecol.level0_pages('events'), md5(string_agg(x::text, '|' ORDER BY pk, ck DESC)) FROM events x"
		),
		"0|$before",
		"$db: flush after restore empties level 0 and keeps the contents");
}

$node->stop;
done_testing();
