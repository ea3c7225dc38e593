
# Copyright: widecol authors.  TAP test, PostgreSQL 15.
#
# 017_sharding: a sharded widecol table on 1 coordinator + 2 shards
# (postgres_fdw foreign partitions, dblink for the shards' DDL).
#
# - widecol.create_sharded_table creates the widecol table on both shards
#   and the hash-partitioned parent with one foreign partition per shard;
#   check_shards finds them equal, then finds an option and a column that a
#   shard changed; bad calls fail with clear errors.
# - COPY through the coordinator, as an ordinary role, is streamed to the
#   shards (the shards get runs, not one level-0 row per remote INSERT; with
#   widecol.batch_copy = off they get level-0 rows): every row lands on the
#   shard widecol.shard_for names; a COPY that fails halfway (a bad row on
#   the coordinator, a row a shard rejects), or that is rolled back (the
#   transaction, a savepoint) leaves nothing on any shard; a column list
#   with defaults and a WHERE give what they give on a single node; the
#   INSERT ... SELECT path (widecol.stream_copy = off) gives the same rows;
#   privileges are checked as COPY checks them.
# - Queries through the coordinator return what the same queries return on a
#   single-node copy of the data (a widecol table on the coordinator): one
#   partition newest first with LIMIT, 7 day buckets, counts, the whole
#   table; a report through a shard view equals GROUP BY on the copy.
# - Single-shard queries are sent whole: EXPLAIN VERBOSE shows Remote SQL
#   with WHERE, ORDER BY and LIMIT (also for a prepared statement), and a
#   count(*) is computed on the shard.
# - Direct reads (WidecolShardRead): outside a transaction block a read is
#   one autocommit statement on the shard, equal to postgres_fdw's read and
#   the single node (custom and generic plans, an ordinary role); postgres_fdw
#   reads in a transaction block and after a write of the transaction (a DO
#   block reads its own INSERT), and where a statement reads a server twice;
#   so does a read at REPEATABLE READ, a function's read, a rescanned scan
#   (correlated subquery, lateral join: same rows as the single node) and a
#   cursor in a DO block fetched across a failed subtransaction (every row);
#   a generic plan sends its LIMIT (+ OFFSET) to the shards and the plan
#   cache keeps it (not with a local filter or WITH TIES);
#   a remote error keeps its SQLSTATE; a read stopped early, or cancelled by
#   statement_timeout while the shard waits on a lock (the shard's statement
#   is cancelled too), leaves the session reading on; text comes back
#   unchanged to a client of another encoding; a shard column of another
#   type is refused clearly (postgres_fdw still reads it); a bigint shard
#   key with an int literal reads a 32 kB value whole; a session whose
#   connection to a shard died with the shard reads again once it is back.
# - widecol.shard_for names the partition that holds each device, and its
#   connection string reaches the shard that returns the same rows.
# - An UPDATE of the shard key is refused (through the parent and through a
#   partition); other UPDATEs and DELETEs work, including ones postgres_fdw
#   cannot send whole (WHERE ... now()): it locks every candidate row with
#   FOR UPDATE on the shard, which without row-lock escalation runs the
#   shard's lock table out (shown with widecol.row_lock_escalation = 0).
# - Row-lock escalation on one node: FOR UPDATE of many rows holds a table
#   lock instead of a lock per row, and a writer waits for it.
# - A shard down: queries that touch only the other shard work (simple and
#   generic prepared plans), the others fail with postgres_fdw's connection
#   error, a COPY too (leaving nothing on the live shard); check_shards
#   reports it; after a restart everything works again.
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
max_locks_per_transaction = 32
});
sub c { return $coord->safe_psql('postgres', $_[0]); }

# ------------------------------------------------------------- create --

my $cols = 'dev text, day date, ts timestamptz, id int, v text';
is( c(qq{SELECT widecol.create_sharded_table('img', '$cols',
	partition_key => 'dev, day', clustering_key => 'ts DESC, id DESC',
	shards => '{s1,s2}', shard_key => 'dev', options => 'widecol.default_ttl = ''3650 days''')}),
	'img', 'create_sharded_table returns the parent');
for my $s ($s1, $s2)
{
	is( $s->safe_psql('postgres',
			q{SELECT a.amname || ' ' || array_to_string(c.reloptions, ';') FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = 'img'::regclass}),
		"widecol widecol.partition_key=dev, day;widecol.clustering_key=ts DESC, id DESC;widecol.default_ttl=3650 days",
		$s->name . ': the widecol table with the same options');
}
is( c(q{SELECT string_agg(foreign_table || ' ' || server || ' ' || remote_table || ' ' || modulus || '/' || remainder, ', ' ORDER BY shard) FROM widecol.shards('img')}),
	'img_shard_0 s1 public.img 2/0, img_shard_1 s2 public.img 2/1',
	'one foreign partition per shard');
like(c(q{SELECT array_to_string(ftoptions, ',') FROM pg_foreign_table WHERE ftrelid = 'img_shard_0'::regclass}),
	qr/fetch_size=1000,batch_size=10000,async_capable=true/, 'foreign partitions: fetch_size, batch_size, async_capable');
is(c(q{SELECT bool_and(ok) FROM widecol.check_shards('img')}), 't', 'check_shards: all shards match');

$s2->safe_psql('postgres', q{ALTER TABLE img SET (widecol.default_ttl = '1 day')});
like(c(q{SELECT shard || ' ' || problem FROM widecol.check_shards('img') WHERE NOT ok}),
	qr/^1 widecol options differ: shard has \(.*widecol.default_ttl=1 day/, 'check_shards: an option changed on a shard');
$s2->safe_psql('postgres', q{ALTER TABLE img SET (widecol.default_ttl = '3650 days'); ALTER TABLE img ADD COLUMN extra int});
like(c(q{SELECT shard || ' ' || problem FROM widecol.check_shards('img') WHERE NOT ok}),
	qr/^1 columns differ: shard has \(.*extra integer\)/, 'check_shards: a column added on a shard');
$s2->safe_psql('postgres', q{ALTER TABLE img DROP COLUMN extra});
# a shard on another widecol version (as if not upgraded with the others)
$s2->safe_psql('postgres', q{UPDATE pg_extension SET extversion = '0.0.9' WHERE extname = 'widecol'});
like(c(q{SELECT shard || ' ' || problem FROM widecol.check_shards('img') WHERE NOT ok}),
	qr/^1 widecol version differs: shard has 0\.0\.9, coordinator 0\.1\.0/, 'check_shards: a shard on another widecol version');
$s2->safe_psql('postgres', q{UPDATE pg_extension SET extversion = '0.1.0' WHERE extname = 'widecol'});
is(c(q{SELECT bool_and(ok) FROM widecol.check_shards('img')}), 't', 'check_shards: all match again');

fails_like($coord, qq{SELECT widecol.create_sharded_table('t2', '$cols', 'dev, day', shards => '{s1,s2}', shard_key => 'ts')},
	qr/22023: shard key column ts is not a partition key column/, 'shard key outside the partition key');
fails_like($coord, qq{SELECT widecol.create_sharded_table('img2', '$cols', 'dev', shards => '{s1,nosuch}')},
	qr/42704: foreign server "nosuch" does not exist/, 'unknown server');
$s2->safe_psql('postgres', q{CREATE TABLE dup (k int)});
fails_like($coord, qq{SELECT widecol.create_sharded_table('dup', 'k int', 'k', shards => '{s1,s2}')},
	qr/42P07: relation public.dup already exists on shard "s2"/, 'a table of that name on a shard');
is($s1->safe_psql('postgres', q{SELECT to_regclass('dup') IS NULL}), 't',
	'a failed create drops the table it had made on the other shard');
is(c(q{SELECT to_regclass('dup') IS NULL}), 't', '... and leaves nothing on the coordinator');

# --------------------------------------------------------------- load --

# an ordinary role loads: INSERT on the parent, its own user mappings (no
# password on this test cluster), the shards' table granted to it there
for my $s ($s1, $s2)
{
	$s->safe_psql('postgres', q{CREATE ROLE loader LOGIN; GRANT SELECT, INSERT, UPDATE, DELETE ON img TO loader});
}
c(q{CREATE ROLE loader LOGIN;
    GRANT SELECT, INSERT, UPDATE, DELETE ON img TO loader;
    GRANT USAGE ON FOREIGN SERVER s1, s2 TO loader;
    CREATE USER MAPPING FOR loader SERVER s1 OPTIONS (user 'loader', password_required 'false');
    CREATE USER MAPPING FOR loader SERVER s2 OPTIONS (user 'loader', password_required 'false');});
sub as_loader { return $coord->safe_psql('postgres', "SET ROLE loader;\n$_[0]"); }
sub loader_fails_like { fails_like($coord, "SET ROLE loader;\n$_[0]", $_[1], $_[2]); }
# rows on each shard, read there (not through the coordinator)
sub on_shards
{
	return join ' ', map { $_->safe_psql('postgres', $_[0] // q{SELECT count(*) FROM img}) } ($s1, $s2);
}

my $dir = $coord->basedir;
sub write_rows
{
	my ($file, $from, $to) = @_;
	c(qq{COPY (SELECT 'cam-' || (i % 60), date '2025-01-01' + (i / 60) % 10,
	                  timestamptz '2025-01-01' + ((i / 60) % 10) * interval '1 day' + i * interval '1 s',
	                  i, md5(i::text)
	             FROM generate_series($from, $to) i) TO '$dir/$file' (FORMAT csv)});
	return "$dir/$file";
}
my $csv = write_rows('img.csv', 1, 12000);
is(as_loader(qq{\\copy img FROM '$csv' (FORMAT csv)}), '', 'COPY through the coordinator, as an ordinary role');
is(c(q{SELECT count(*) FROM img}), '12000', 'all rows arrived');
is(on_shards(), c(q{SELECT string_agg(n::text, ' ' ORDER BY s) FROM (SELECT tableoid::regclass::text s, count(*) n FROM img GROUP BY 1) x}),
	'the shards hold them (counted on the shards)');
is( c(q{SELECT count(*) FROM img r WHERE (widecol.shard_for('img', r.dev)).partition <> r.tableoid}),
	'0', 'every row is on the shard that widecol.shard_for names');
for my $s ($s1, $s2)
{
	like(slurp_file($s->logfile), qr/statement: COPY public\.img \(dev, day, ts, id, v\) FROM STDIN \(FORMAT binary\)/,
		$s->name . ': the rows came with COPY FROM STDIN, in binary format');
	is( $s->safe_psql('postgres', q{SELECT (SELECT count(*) > 0 FROM widecol.runs('img')) AND widecol.level0_pages('img') = 0}),
		't', $s->name . ': the streamed COPY wrote sorted runs (no row-by-row level-0 inserts)');
}
# a shard whose column has another type than the coordinator's gets text
$s2->safe_psql('postgres', q{ALTER TABLE img ALTER COLUMN v TYPE varchar});
as_loader(qq{\\copy img FROM PROGRAM 'head -n 600 $csv' (FORMAT csv)});
like(slurp_file($s2->logfile), qr/statement: COPY public\.img \(dev, day, ts, id, v\) FROM STDIN\n/,
	'a shard with a column of another type: COPY in text format');
$s2->safe_psql('postgres', q{ALTER TABLE img ALTER COLUMN v TYPE text});
is(c(q{SELECT count(*) FROM img}), '12000', '... the same rows again replace themselves');
c(qq{SET widecol.batch_copy = off; COPY img FROM PROGRAM 'head -n 30 $csv' (FORMAT csv)});
is( $s1->safe_psql('postgres', q{SELECT widecol.level0_pages('img') > 0})
	  . $s2->safe_psql('postgres', q{SELECT widecol.level0_pages('img') > 0}),
	'tt', 'with widecol.batch_copy = off, PostgreSQL\'s row-by-row COPY');
is(c(q{SELECT count(*) FROM img}), '12000', 'the same 30 rows again replace themselves');

# the single-node copy
c(qq{CREATE TABLE img_local ($cols) USING widecol
       WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC, id DESC');
     COPY img_local FROM '$csv' (FORMAT csv);
     ANALYZE img;});
my $whole = q{SELECT count(*), md5(string_agg(x::text, '|' ORDER BY dev, day, ts, id)) FROM %s x};
is(c(sprintf($whole, 'img')), c(sprintf($whole, 'img_local')), 'COPY through the coordinator = COPY on a single node');

# failures halfway leave nothing on any shard (rows of ids 20001.. are new)
my $before = on_shards();
my $bad = write_rows('bad.csv', 20001, 32000);
system_or_bail('sed', '-i', '6000s/,[0-9]*,\([0-9a-f]*\)$/,six thousand,\1/', $bad);
loader_fails_like(qq{\\copy img FROM '$bad' (FORMAT csv)},
	qr/22P02: invalid input syntax for type integer: "six thousand".*COPY img, line 6000, column id/s,
	'COPY with a bad row in the middle');
is(on_shards(), $before, '... leaves no row on any shard');
my $rejected = write_rows('rejected.csv', 20001, 32000);
system_or_bail('sed', '-i', '9000s/^\([^,]*\),[^,]*,/\1,,/', $rejected);
loader_fails_like(qq{\\copy img FROM '$rejected' (FORMAT csv)},
	qr/23502: null value in column "day".*remote COPY on server "s[12]"/s,
	'COPY of a row that a shard rejects (NULL key column)');
is(on_shards(), $before, '... leaves no row on any shard');
is(c(q{SELECT count(*) FROM img}), '12000', '... and the coordinator reads what it did before');

# rolled back: the transaction, a savepoint
my $more = write_rows('more.csv', 20001, 26000);
is(as_loader(qq{BEGIN; \\copy img FROM '$more' (FORMAT csv)
               SELECT count(*) FROM img; ROLLBACK;}), '18000', 'COPY in a transaction sees its rows');
is(on_shards(), $before, '... and a ROLLBACK leaves none on any shard');
is(as_loader(qq{BEGIN; SAVEPOINT a; \\copy img FROM '$more' (FORMAT csv)
               ROLLBACK TO a; \\copy img FROM PROGRAM 'head -n 60 $more' (FORMAT csv)
               COMMIT; SELECT count(*) FROM img;}), '12060', 'COPY rolled back to a savepoint, then another committed');
is( c(q{SELECT count(*) FROM img r WHERE id > 20000 AND (widecol.shard_for('img', r.dev)).partition = r.tableoid}),
	'60', '... only the committed rows are on the shards, each on its own');
c(q{DELETE FROM img WHERE id > 20000});

# a row trigger on a foreign partition fires as in PostgreSQL's COPY (such
# a COPY goes through INSERT ... SELECT)
c(q{CREATE FUNCTION mark() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN NEW.v := 'trg'; RETURN NEW; END$$;
    CREATE TRIGGER mark BEFORE INSERT ON img_shard_0 FOR EACH ROW EXECUTE FUNCTION mark()});
my (undef, undef, $debug) = $coord->psql('postgres',
	qq{SET client_min_messages = debug1; SET ROLE loader; \\copy img FROM PROGRAM 'head -n 100 $more' (FORMAT csv)});
like($debug, qr/COPY into "img" is not streamed to the shards: a partition has INSERT triggers/,
	'a row trigger on a foreign partition: not streamed (DEBUG1 says why)');
is( c(q{SELECT count(*) || ' ' || bool_and((v = 'trg') = (tableoid = 'img_shard_0'::regclass)) || ' ' || bool_or(v = 'trg')
          FROM img WHERE id > 20000}),
	'100 true true', 'a row trigger on a foreign partition fires for its rows only');
c(q{DROP TRIGGER mark ON img_shard_0; DELETE FROM img WHERE id > 20000});

# a column list (with a default evaluated on the coordinator) and WHERE
c(q{ALTER TABLE img ALTER COLUMN v SET DEFAULT 'dflt'; ALTER TABLE img_local ALTER COLUMN v SET DEFAULT 'dflt'});
c(qq{COPY (SELECT 'cam-' || (i % 7), date '2025-02-01', timestamptz '2025-02-01' + i * interval '1 s', i
             FROM generate_series(40001, 40300) i) TO '$dir/four.csv' (FORMAT csv)});
# (the row count COPY returns, through a function)
c(q{CREATE FUNCTION copy_count(cmd text) RETURNS bigint LANGUAGE plpgsql
      AS $$DECLARE n bigint; BEGIN EXECUTE cmd; GET DIAGNOSTICS n = ROW_COUNT; RETURN n; END$$});
is(c(qq{SELECT copy_count(\$\$COPY img (dev, day, ts, id) FROM '$dir/four.csv' (FORMAT csv) WHERE id % 3 = 0 AND dev <> 'cam-2'\$\$)}),
	c(q{SELECT count(*) FROM generate_series(40001, 40300) i WHERE i % 3 = 0 AND i % 7 <> 2}),
	'COPY with a column list and WHERE: the row count');
c(qq{COPY img_local (dev, day, ts, id) FROM '$dir/four.csv' (FORMAT csv) WHERE id % 3 = 0 AND dev <> 'cam-2'});
is(c(sprintf($whole, 'img')), c(sprintf($whole, 'img_local')), '... gives the rows a single node gets (defaults, filter)');
is(c(q{SELECT count(*) FROM img WHERE v = 'dflt'}), c(q{SELECT count(*) FROM img WHERE id > 40000}), '... the unlisted column has its default');
c(q{ALTER TABLE img ALTER COLUMN v DROP DEFAULT; ALTER TABLE img_local ALTER COLUMN v DROP DEFAULT;
    DELETE FROM img WHERE id > 40000; DELETE FROM img_local WHERE id > 40000});

# the INSERT ... SELECT path gives the same
c(qq{SET widecol.stream_copy = off; COPY img FROM '$csv' (FORMAT csv)});
is(c(sprintf($whole, 'img')), c(sprintf($whole, 'img_local')), 'widecol.stream_copy = off: INSERT ... SELECT, same rows');

# privileges: COPY's own
loader_fails_like(qq{COPY img FROM '$csv' (FORMAT csv)},
	qr/42501: must be superuser or have privileges of the pg_read_server_files role/, 'an ordinary role: no COPY from a server file');
c(q{REVOKE INSERT ON img FROM loader});
loader_fails_like(qq{\\copy img FROM '$csv' (FORMAT csv)}, qr/42501: permission denied for table img/,
	'COPY without INSERT privilege');
c(q{GRANT INSERT ON img TO loader});

# ------------------------------------------------ same answers as one node --

my @queries = (
	[ 'one partition, newest 5',
		q{SELECT ts, id, v FROM %s WHERE dev = 'cam-7' AND day = '2025-01-03' ORDER BY ts DESC, id DESC LIMIT 5} ],
	[ 'one device, 7 day buckets, newest 20',
		q{SELECT day, ts, id FROM %s WHERE dev = 'cam-11' AND day BETWEEN '2025-01-02' AND '2025-01-08' ORDER BY ts DESC, id DESC LIMIT 20} ],
	[ 'oldest 3 of a partition (backward)',
		q{SELECT ts, id FROM %s WHERE dev = 'cam-8' AND day = '2025-01-05' ORDER BY ts, id LIMIT 3} ],
	[ 'count of one device',
		q{SELECT count(*), min(ts), max(id) FROM %s WHERE dev = 'cam-3'} ],
	[ 'two devices, ordered',
		q{SELECT dev, ts FROM %s WHERE dev IN ('cam-1', 'cam-2') AND day = '2025-01-04' ORDER BY ts DESC, id DESC LIMIT 7} ],
	[ 'images per day',
		q{SELECT day, count(*) FROM %s GROUP BY day ORDER BY day} ],
	[ 'the whole table',
		q{SELECT count(*), md5(string_agg(x::text, '|' ORDER BY dev, day, ts, id)) FROM %s x} ],
);
for my $q (@queries)
{
	my ($name, $sql) = @$q;
	my $local = c(sprintf($sql, 'img_local'));
	isnt($local, '', "single node: $name returns rows");
	is(c(sprintf($sql, 'img')), $local, "coordinator = single node: $name");
	is(c("SET widecol.route_single_shard = off; " . sprintf($sql, 'img')), $local,
		"coordinator, not routed = single node: $name");
}

# a report as the shards' partial counts, summed
c(q{SELECT widecol.create_shard_view('img_per_day', 'img',
	$$SELECT day, count(*) AS images FROM {shard} GROUP BY day$$)});
is( c(q{SELECT day, sum(images) FROM img_per_day GROUP BY day ORDER BY day}),
	c(q{SELECT day, count(*) FROM img_local GROUP BY day ORDER BY day}),
	'shard view: per-shard counts summed = GROUP BY on the single node');
my $plan = c(q{SET widecol.shard_direct_reads = off; EXPLAIN (VERBOSE, COSTS OFF) SELECT day, sum(images) FROM img_per_day WHERE day >= '2025-01-05' GROUP BY day});
like($plan, qr/Async Foreign Scan.*Remote SQL: SELECT day, count\(\*\) FROM public.img WHERE \(\(day >= '2025-01-05'\)\) GROUP BY 1.*Async Foreign Scan/s,
	'shard view through postgres_fdw: each shard counts (filter pushed), both at once');
$plan = c(q{EXPLAIN (VERBOSE, COSTS OFF) SELECT day, sum(images) FROM img_per_day WHERE day >= '2025-01-05' GROUP BY day});
like($plan, qr/WidecolShardRead.*Sent As: one statement.*Remote SQL: SELECT day, count\(\*\) FROM public.img WHERE \(\(day >= '2025-01-05'\)\) GROUP BY 1.*WidecolShardRead.*Sent As: one statement/s,
	'shard view: each shard counts in one statement (both sent when the scan starts)');

# ------------------------------------------------------------ pushdown --

$plan = c(q{EXPLAIN (VERBOSE, COSTS OFF) SELECT ts, v FROM img WHERE dev = 'cam-7' AND day = '2025-01-03' ORDER BY ts DESC, id DESC LIMIT 5});
like($plan, qr/Remote SQL: SELECT ts, id, v FROM public.img WHERE \(\(dev = 'cam-7'\)\) AND \(\(day = '2025-01-03'\)\) ORDER BY ts DESC NULLS FIRST, id DESC NULLS FIRST LIMIT 5::bigint/,
	'single-partition query: WHERE, ORDER BY and LIMIT sent to the shard');
unlike($plan, qr/Limit|Sort|Append/, '... with nothing left to do on the coordinator');
$plan = c(q{PREPARE q(text, date, int) AS SELECT ts, v FROM img WHERE dev = $1 AND day = $2 ORDER BY ts DESC, id DESC LIMIT $3;
            EXPLAIN (VERBOSE, COSTS OFF) EXECUTE q('cam-9', '2025-01-06', 3)});
like($plan, qr/Remote SQL: .* ORDER BY ts DESC NULLS FIRST, id DESC NULLS FIRST LIMIT 3::bigint/,
	'prepared statement (custom plan): LIMIT sent too');
# a LIMIT above the rows the WHERE is estimated to match is sent too (the
# partition holds 20 rows, postgres_fdw would not think it worth sending)
like(c(q{EXPLAIN (VERBOSE, COSTS OFF) SELECT ts FROM img WHERE dev = 'cam-7' AND day = '2025-01-03' ORDER BY ts DESC, id DESC LIMIT 1000}),
	qr/Remote SQL: .* ORDER BY ts DESC NULLS FIRST, id DESC NULLS FIRST LIMIT 1000::bigint/,
	'a LIMIT larger than the estimated rows is sent');
# a prepared statement run many times keeps custom (routed) plans
$plan = c(q{PREPARE r(text, date) AS SELECT ts FROM img WHERE dev = $1 AND day = $2 ORDER BY ts DESC, id DESC LIMIT 100;
            EXECUTE r('cam-1', '2025-01-02'); EXECUTE r('cam-2', '2025-01-02'); EXECUTE r('cam-3', '2025-01-02');
            EXECUTE r('cam-4', '2025-01-02'); EXECUTE r('cam-5', '2025-01-02'); EXECUTE r('cam-6', '2025-01-02');
            EXECUTE r('cam-7', '2025-01-02'); EXECUTE r('cam-8', '2025-01-02');
            EXPLAIN (VERBOSE, COSTS OFF) EXECUTE r('cam-9', '2025-01-02')});
like($plan, qr/Remote SQL: .* LIMIT 100::bigint/, 'prepared statement, 9th execution: still routed, LIMIT sent');
like(c(q{EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*) FROM img WHERE dev = 'cam-3'}),
	qr/Remote SQL: SELECT count\(\*\) FROM public.img WHERE \(\(dev = 'cam-3'\)\)/,
	'single-shard aggregate computed on the shard');
like(c(q{SET widecol.route_single_shard = off; EXPLAIN (VERBOSE, COSTS OFF) SELECT ts FROM img WHERE dev = 'cam-7' AND day = '2025-01-03' ORDER BY ts DESC, id DESC LIMIT 5}),
	qr/Limit\n.*\n\s+->  Custom Scan \(WidecolShardRead\).*\n(.*\n)*\s+->  Foreign Scan.*\n.*\n\s+Remote SQL: [^\n]*NULLS FIRST$/,
	'without routing, PostgreSQL 15 keeps the LIMIT on the coordinator');

# ------------------------------------------------------- direct reads --
# A read-only statement outside a transaction block reads a shard with one
# autocommit statement (WidecolShardRead); postgres_fdw reads wherever a
# second connection could see something else.

my $q7 = q{SELECT ts, id, v FROM img WHERE dev = 'cam-7' AND day = '2025-01-03' ORDER BY ts DESC, id DESC LIMIT 5};
like(c("EXPLAIN (VERBOSE, COSTS OFF) $q7"), qr/Custom Scan \(WidecolShardRead\).*\n(.*\n)*\s+Sent As: one statement/,
	'direct read: a single-partition query is sent as one statement');
is(c($q7), c(sprintf($q7 =~ s/FROM img/FROM %s/r, 'img_local')), 'direct read = single node');
is(c("SET widecol.shard_direct_reads = off; $q7"), c($q7), 'direct read = postgres_fdw read');
like(c("BEGIN; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $q7; COMMIT"),
	qr/Sent As: postgres_fdw cursor \(in a transaction block\)/, 'in a transaction block postgres_fdw reads');
# read-your-writes: the write is in postgres_fdw's open remote transaction
is(c(q{BEGIN; INSERT INTO img VALUES ('cam-7', '2025-01-03', '2030-01-01', -1, 'mine');
       SELECT v FROM img WHERE dev = 'cam-7' AND day = '2025-01-03' ORDER BY ts DESC, id DESC LIMIT 1; ROLLBACK}),
	'mine', 'a transaction block reads its own write through the coordinator');
my ($do_ret, $do_out, $do_err) = $coord->psql('postgres', q{
       CREATE TABLE seen (v text);
       DO $$ BEGIN
         INSERT INTO img VALUES ('cam-7', '2025-01-03', '2030-01-01', -2, 'in do');
         INSERT INTO seen SELECT v FROM img WHERE dev = 'cam-7' AND day = '2025-01-03' ORDER BY ts DESC, id DESC LIMIT 1;
       END $$;
       SELECT v FROM seen;
       DELETE FROM img WHERE dev = 'cam-7' AND day = '2025-01-03' AND ts = '2030-01-01' AND id = -2;
       DROP TABLE seen;});
is($do_out, 'in do', 'a DO block (no transaction block) reads its own earlier write: postgres_fdw reads after a write');
# a generic plan (parameters sent as text, partitions pruned at run time)
is(c(q{SET plan_cache_mode = force_generic_plan;
       PREPARE g(text, date) AS SELECT ts, id, v FROM img WHERE dev = $1 AND day = $2 ORDER BY ts DESC, id DESC LIMIT 5;
       EXECUTE g('cam-7', '2025-01-03')}), c($q7), 'direct read with a generic plan and parameters = custom plan');
like(c(q{SET plan_cache_mode = force_generic_plan;
       PREPARE g(text, date) AS SELECT ts, id, v FROM img WHERE dev = $1 AND day = $2 ORDER BY ts DESC, id DESC LIMIT 5;
       EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE g('cam-7', '2025-01-03')}),
	qr/Subplans Removed: 1\n.*WidecolShardRead.*\n.*\n\s+Sent As: one statement/, '... the pruned shard is not read');
# a generic plan's LIMIT (with OFFSET) is sent to each shard it reads, and
# the plan cache keeps that plan; not where rows are filtered after the
# shard, nor for WITH TIES
my $gen = q{PREPARE l(text, date) AS SELECT ts, id, v FROM %s WHERE dev = $1 AND day = $2 ORDER BY ts DESC, id DESC LIMIT 5 OFFSET 1;};
like(c(sprintf($gen, 'img') . q{SET plan_cache_mode = force_generic_plan; EXPLAIN (VERBOSE, COSTS OFF) EXECUTE l('cam-7', '2025-01-03')}),
	qr/WidecolShardRead.*\n(.*\n)*\s+Remote SQL: [^\n]*NULLS FIRST LIMIT 6::bigint\n/, 'a generic plan sends LIMIT + OFFSET to the shard');
is(c(sprintf($gen, 'img') . q{SET plan_cache_mode = force_generic_plan; EXECUTE l('cam-7', '2025-01-03')}),
	c(sprintf($gen, 'img_local') . q{EXECUTE l('cam-7', '2025-01-03')}), '... with the single node\'s rows');
is(c(sprintf($gen, 'img') . q{EXECUTE l('cam-7', '2025-01-03'); EXECUTE l('cam-7', '2025-01-03'); EXECUTE l('cam-7', '2025-01-03');
       EXECUTE l('cam-7', '2025-01-03'); EXECUTE l('cam-7', '2025-01-03'); EXECUTE l('cam-7', '2025-01-03'); EXECUTE l('cam-8', '2025-01-03');
       SELECT generic_plans FROM pg_prepared_statements WHERE name = 'l'}) =~ s/.*\n//sr, '2',
	'... and the plan cache keeps it after five custom plans');
# a generic plan that sorts on the coordinator (the planner expects fewer
# rows than the LIMIT: a read over several days) sends the Sort's ORDER BY
# with the LIMIT, to one shard or to all
my $days = q{PREPARE m(text, date, date) AS SELECT ts, id, v FROM %s WHERE dev = $1 AND day BETWEEN $2 AND $3 ORDER BY ts DESC, id DESC LIMIT 5 OFFSET 1;};
like(c(sprintf($days, 'img') . q{SET plan_cache_mode = force_generic_plan; EXPLAIN (VERBOSE, COSTS OFF) EXECUTE m('cam-7', '2025-01-01', '2025-01-07')}),
	qr/Sort\n(.*\n)*\s+->  Append\n(.*\n)*\s+Remote SQL: [^\n]*\) ORDER BY ts DESC NULLS FIRST, id DESC NULLS FIRST LIMIT 6::bigint\n/,
	'a generic plan sorting on the coordinator sends ORDER BY and LIMIT + OFFSET to the shard');
is(c(sprintf($days, 'img') . q{SET plan_cache_mode = force_generic_plan; EXECUTE m('cam-7', '2025-01-01', '2025-01-07')}),
	c(sprintf($days, 'img_local') . q{EXECUTE m('cam-7', '2025-01-01', '2025-01-07')}), '... with the single node\'s rows');
is(c(sprintf($days, 'img') . join('', map { "EXECUTE m('cam-7', '2025-01-01', '2025-01-07');" } 1 .. 7)
	  . q{SELECT generic_plans FROM pg_prepared_statements WHERE name = 'm'}) =~ s/.*\n//sr, '2',
	'... and the plan cache keeps it after five custom plans');
is(as_loader(sprintf($days, 'img') . q{SET plan_cache_mode = force_generic_plan; EXECUTE m('cam-7', '2025-01-01', '2025-01-07')}),
	c(sprintf($days, 'img_local') . q{EXECUTE m('cam-7', '2025-01-01', '2025-01-07')}), '... and the ordinary role reads the same rows');
# ... and nothing where the shard could order otherwise: another collation
# than the column's, an expression the coordinator computes
unlike(c(q{PREPARE o(text, date, date) AS SELECT v FROM img WHERE dev = $1 AND day BETWEEN $2 AND $3 ORDER BY v COLLATE "C" LIMIT 5;
       SET plan_cache_mode = force_generic_plan; EXPLAIN (VERBOSE, COSTS OFF) EXECUTE o('cam-7', '2025-01-01', '2025-01-07')}),
	qr/LIMIT 5::bigint/, 'no ORDER BY sent in another collation than the column\'s');
my $expr_plan = c(q{PREPARE e(text, date, date) AS SELECT v FROM img WHERE dev = $1 AND day BETWEEN $2 AND $3 ORDER BY lower(v) LIMIT 5;
       SET plan_cache_mode = force_generic_plan; EXPLAIN (VERBOSE, COSTS OFF) EXECUTE e('cam-7', '2025-01-01', '2025-01-07')});
ok($expr_plan =~ /Sort Key: \(lower\(img.v\)\)\n\s+->  Append\n/ && $expr_plan !~ /LIMIT 5::bigint/,
	'nor ordered by an expression the coordinator computes') or diag($expr_plan);
is(c(q{PREPARE e(text, date, date) AS SELECT v FROM img WHERE dev = $1 AND day BETWEEN $2 AND $3 ORDER BY lower(v), v LIMIT 5;
       SET plan_cache_mode = force_generic_plan; EXECUTE e('cam-7', '2025-01-01', '2025-01-07')}),
	c(q{SELECT v FROM img_local WHERE dev = 'cam-7' AND day BETWEEN '2025-01-01' AND '2025-01-07' ORDER BY lower(v), v LIMIT 5}),
	'... with the single node\'s rows');
unlike(c(q{PREPARE f(text, date) AS SELECT ts FROM img WHERE dev = $1 AND day = $2 AND random() >= 0 ORDER BY ts DESC, id DESC LIMIT 5;
       SET plan_cache_mode = force_generic_plan; EXPLAIN (VERBOSE, COSTS OFF) EXECUTE f('cam-7', '2025-01-03')}),
	qr/LIMIT 5::bigint/, 'no LIMIT sent where the coordinator filters the rows');
unlike(c(q{PREPARE t(text, date) AS SELECT ts FROM img WHERE dev = $1 AND day = $2 ORDER BY ts DESC FETCH FIRST 5 ROWS WITH TIES;
       SET plan_cache_mode = force_generic_plan; EXPLAIN (VERBOSE, COSTS OFF) EXECUTE t('cam-7', '2025-01-03')}),
	qr/LIMIT 5::bigint/, 'nor for WITH TIES');
my $union = q{SELECT ts FROM ((SELECT ts FROM img_shard_0 ORDER BY ts DESC LIMIT 5 OFFSET 1)
    UNION ALL (SELECT ts FROM img_shard_1 ORDER BY ts DESC LIMIT 5 OFFSET 2)) x ORDER BY ts DESC LIMIT 7};
# (ordered: the Append may return either shard's rows first)
is(c($union), c("SET widecol.shard_direct_reads = off; $union"), '... nor to reads with a LIMIT and OFFSET of their own');
# a remote error keeps its SQLSTATE; the next read reconnects
my ($r2, $o2, $e2) = $coord->psql('postgres',
	q{\set VERBOSITY verbose
	  SELECT * FROM img WHERE dev = 'cam-7' AND id / (id - id) = 1});
like($e2, qr/22012: division by zero.*read of server "s\d"/s, 'a remote error is raised with its SQLSTATE and the server');
# a read stopped early (LIMIT kept on the coordinator), a read cancelled by
# statement_timeout: the same session reads on
is(c(q{SELECT count(*) FROM (SELECT * FROM img LIMIT 3) x;
       SELECT count(*) FROM img WHERE dev = 'cam-7'}), "3\n" . c(q{SELECT count(*) FROM img_local WHERE dev = 'cam-7'}),
	'a read stopped early leaves the connection usable');
# a read waiting on the shard (its table locked there) is cancelled by
# statement_timeout: the shard's statement is cancelled too, and the
# session reads on
my $dev_s1_direct = c(q{SELECT min(dev) FROM img WHERE tableoid = (SELECT foreign_table FROM widecol.shards('img') WHERE server = 's1')});
# cancelled_while_waiting(SETTINGS, WHAT): with shard 1's table locked, a
# direct read under SETTINGS (a statement_timeout) is cancelled, on the
# shard too, and its session reads on
sub cancelled_while_waiting
{
	my ($settings, $what) = @_;
	my $blocker = $s1->background_psql('postgres');
	$blocker->query_safe(q{BEGIN; LOCK TABLE img IN ACCESS EXCLUSIVE MODE});
	my $reader = $coord->background_psql('postgres', on_error_stop => 0);
	$reader->query(qq{$settings SELECT count(*) FROM img WHERE dev = '$dev_s1_direct'});
	like($reader->{stderr}, qr/canceling statement due to statement timeout/, "statement_timeout cancels a direct read $what");
	ok( $s1->poll_query_until('postgres',
			q{SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'widecol' AND wait_event_type = 'Lock'}),
		'... and the shard is not left running it');
	$blocker->query_safe(q{COMMIT});
	$blocker->quit;
	is($reader->query(q{RESET statement_timeout; SELECT count(*) FROM img WHERE dev = 'cam-7'}),
		c(q{SELECT count(*) FROM img_local WHERE dev = 'cam-7'}), '... and the session reads on');
	$reader->quit;
}
cancelled_while_waiting(q{SET statement_timeout = '1s';}, 'waiting on the shard');
# widecol.shard_read_spin: a read polls for the shard's first rows for up
# to 300 µs by default before it sleeps; polling or sleeping at once reads
# the same rows, and a statement_timeout shorter than the polling still
# cancels a read while it polls
is(c(q{SHOW widecol.shard_read_spin}), '300', 'a direct read polls for 300 µs by default');
is(c("SET widecol.shard_read_spin = 0; $q7"), c($q7), 'a read that sleeps at once reads the same rows');
is(c("SET widecol.shard_read_spin = 100000; $q7"), c($q7), '... and so does one that polls for up to 100 ms');
cancelled_while_waiting(q{SET widecol.shard_read_spin = 100000; SET statement_timeout = '20ms';},
	'while it polls for the first rows');
# where a second connection could see another snapshot, postgres_fdw reads:
# a transaction snapshot, a function's query, a rescanned scan, a DO block
like(c("SET default_transaction_isolation = 'repeatable read'; EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $q7"),
	qr/Sent As: postgres_fdw cursor \(a transaction snapshot\)/, 'at REPEATABLE READ postgres_fdw reads');
c(q{CREATE FUNCTION plan_of(q text) RETURNS text LANGUAGE plpgsql AS $$
      DECLARE l text; r text := '';
      BEGIN FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP r := r || l || E'\n'; END LOOP; RETURN r; END $$});
like(c(qq{SELECT plan_of(\$q\$$q7\$q\$)}), qr/Sent As: postgres_fdw cursor \(in a function\)/,
	'a function\'s query is read through postgres_fdw');
my $corr = q{SELECT l.dev, (SELECT count(*) FROM %s i WHERE i.dev = l.dev AND i.day = '2025-01-03') FROM (VALUES ('cam-7'), ('cam-8'), ('cam-7')) l(dev)};
unlike(c('EXPLAIN (COSTS OFF) ' . sprintf($corr, 'img')), qr/WidecolShardRead/, 'a correlated subquery (rescanned) is left to postgres_fdw');
is(c(sprintf($corr, 'img')), c(sprintf($corr, 'img_local')), '... and returns what the single node returns');
my $lat = q{SELECT l.dev, x.n FROM (VALUES ('cam-7'), ('cam-8')) l(dev) CROSS JOIN LATERAL (SELECT count(*) n FROM %s i WHERE i.dev = l.dev) x ORDER BY 1};
is(c(sprintf($lat, 'img')), c(sprintf($lat, 'img_local')), 'a lateral join (inner side rescanned) returns what the single node returns');
# a cursor read across a subtransaction that fails: every row comes
is(c(q{CREATE TEMP TABLE n (n int);
       DO $$DECLARE c CURSOR FOR SELECT id FROM img WHERE dev = 'cam-7'; r record; k int := 0;
       BEGIN OPEN c;
         BEGIN FETCH c INTO r; k := 1; PERFORM 1 / 0; EXCEPTION WHEN division_by_zero THEN NULL; END;
         LOOP FETCH c INTO r; EXIT WHEN NOT FOUND; k := k + 1; END LOOP;
         INSERT INTO n VALUES (k); END $$;
       SELECT n FROM n}), c(q{SELECT count(*) FROM img_local WHERE dev = 'cam-7'}),
	'a cursor fetched across a failed subtransaction reads every row');
# the same server twice in one statement: postgres_fdw's one snapshot
unlike(c(q{EXPLAIN (COSTS OFF) SELECT * FROM img a JOIN img b USING (id) WHERE a.dev = 'cam-7' AND b.dev = 'cam-7'}),
	qr/WidecolShardRead/, 'a statement reading one server twice is left to postgres_fdw');
# text of another encoding than the client's: rows in binary are converted as text is
c(q{INSERT INTO img VALUES ('cam-7', '2025-01-03', '2031-01-01', -3, 'café ü');
    INSERT INTO img_local VALUES ('cam-7', '2025-01-03', '2031-01-01', -3, 'café ü')});
is(c(q{SET client_encoding = 'LATIN1'; SELECT convert_to(v, 'LATIN1') FROM img WHERE dev = 'cam-7' AND day = '2025-01-03' AND id = -3})
	 . ' ' . c(q{SET client_encoding = 'LATIN1'; SELECT convert_to(v, 'LATIN1') FROM img WHERE dev = 'cam-7' AND day = '2025-01-03' ORDER BY ts DESC, id DESC LIMIT 1}),
	'\x636166e920fc \x636166e920fc', 'a direct read with client_encoding LATIN1 returns the text unchanged');
c(q{DELETE FROM img WHERE dev = 'cam-7' AND day = '2025-01-03' AND id = -3;
    DELETE FROM img_local WHERE dev = 'cam-7' AND day = '2025-01-03' AND id = -3});
# a shard whose column has another type than the coordinator's (what
# check_shards reports): binary rows are refused with a clear error,
# postgres_fdw's text rows still read
c(q{SELECT widecol.create_sharded_table('typ', 'k text, n int', partition_key => 'k',
      shards => '{s1,s2}', create_on_shards => false)});
$_->safe_psql('postgres', q{CREATE TABLE typ (k text NOT NULL, n bigint) USING widecol WITH (widecol.partition_key = 'k');
    INSERT INTO typ VALUES ('a', 7), ('b', 8), ('c', 9)}) for ($s1, $s2);
fails_like($coord, q{SELECT n FROM typ WHERE k = 'a' ORDER BY n LIMIT 1},
	qr/42804: column 1 of a row from server "s\d" has type 20, not integer/, 'a direct read of a shard column of another type');
is(c(q{SET widecol.shard_direct_reads = off; SELECT n FROM typ WHERE k = 'a' ORDER BY n LIMIT 1}), '7',
	'... which postgres_fdw reads as text');
c(q{SELECT widecol.drop_sharded_table('typ')});
# a bigint shard key queried with an int literal (a cross-type operator: not
# routed by the key's hash, pruned by the planner), and a value over 8 kB
c(q{SELECT widecol.create_sharded_table('bk', 'id bigint, v text', partition_key => 'id', shards => '{s1,s2}');
    INSERT INTO bk SELECT i, repeat(md5(i::text), 1000) FROM generate_series(1, 20) i});
is(c(q{SELECT length(v), md5(v) = md5(repeat(md5('5'), 1000)) FROM bk WHERE id = 5 ORDER BY v LIMIT 1}), '32000|t',
	'a bigint shard key with an int literal reads its 32 kB value whole');
like(c(q{EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT v FROM bk WHERE id = 5 ORDER BY v LIMIT 1}),
	qr/Sent As: one statement/, '... in one statement');
c(q{SELECT widecol.drop_sharded_table('bk')});
# an ordinary role reads through its own user mapping
is(as_loader($q7), c($q7), 'an ordinary role reads directly through its user mapping');
like(as_loader("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $q7"), qr/Sent As: one statement/,
	'... in one statement');

# ------------------------------------------------------------ shard_for --

is( c(q{SELECT count(*) FROM (SELECT DISTINCT dev, tableoid FROM img) r
          WHERE (widecol.shard_for('img', r.dev)).partition <> r.tableoid}),
	'0', 'shard_for: the partition of every device is where its rows are');
my ($srv, $conninfo, $remote) = split /\|/, c(q{SELECT server, conninfo, remote_table FROM widecol.shard_for('img', 'cam-7')});
my $shard = $srv eq 's1' ? $s1 : $s2;
like($conninfo, qr/port='@{[$shard->port]}'/, 'shard_for: the connection string names the shard\'s port');
my $direct = $shard->safe_psql('postgres',
	"SELECT ts, id, v FROM $remote WHERE dev = 'cam-7' AND day = '2025-01-03' ORDER BY ts DESC, id DESC LIMIT 5");
is($direct, c(q{SELECT ts, id, v FROM img_local WHERE dev = 'cam-7' AND day = '2025-01-03' ORDER BY ts DESC, id DESC LIMIT 5}),
	'shard_for: the shard answers the partition alone');
is(c(q{SELECT partition FROM widecol.shard_for('img', 'cam-7'::varchar)}),
	c(q{SELECT partition FROM widecol.shard_for('img', 'cam-7')}), 'shard_for: a varchar key routes like text');
fails_like($coord, q{SELECT * FROM widecol.shard_for('img', 'cam-7', '2025-01-03')},
	qr/22023: table "img" is sharded by 1 column\(s\), got 2 key value\(s\)/, 'shard_for with too many values');

# --------------------------------------------------------- UPDATE, DELETE --

fails_like($coord, q{UPDATE img SET dev = 'cam-999' WHERE dev = 'cam-7'},
	qr/0A000: cannot update the shard key \(dev\) of sharded table img/, 'UPDATE of the shard key');
fails_like($coord, q{UPDATE img_shard_0 SET dev = 'cam-999'},
	qr/0A000: cannot update the shard key \(dev\) of sharded table img_shard_0/, 'UPDATE of the shard key through a partition');
is(c(q{SELECT count(*) FROM img WHERE dev = 'cam-999'}), '0', 'no row moved');

# sent whole to the shards
c(q{UPDATE img SET v = 'upd' WHERE id % 7 = 0; UPDATE img_local SET v = 'upd' WHERE id % 7 = 0;});
# not sent whole (now() is not immutable): FOR UPDATE of every candidate row on
# the shards, more rows than their lock tables hold
like(c(q{EXPLAIN (VERBOSE, COSTS OFF) UPDATE img SET v = 'old' WHERE ts < now()}),
	qr/Remote SQL: SELECT .* FOR UPDATE/, 'UPDATE ... WHERE now(): postgres_fdw locks the candidate rows');
$s2->safe_psql('postgres', q{ALTER DATABASE postgres SET widecol.row_lock_escalation = 0});
fails_like($coord, q{UPDATE img SET v = 'old' WHERE ts < now()},
	qr/out of shared memory/, 'without row-lock escalation: the shard runs out of lock table');
$s2->safe_psql('postgres', q{ALTER DATABASE postgres RESET widecol.row_lock_escalation});
is(c(q{UPDATE img SET v = 'old' WHERE ts < now() AND id % 2 = 0}), '', 'with it: UPDATE of 6000 rows by a non-key predicate');
c(q{UPDATE img_local SET v = 'old' WHERE ts < now() AND id % 2 = 0});
c(q{DELETE FROM img WHERE ts < now() AND id % 5 = 0; DELETE FROM img_local WHERE ts < now() AND id % 5 = 0;});
is( c(q{SELECT count(*), md5(string_agg(x::text, '|' ORDER BY dev, day, ts, id)) FROM img x}),
	c(q{SELECT count(*), md5(string_agg(x::text, '|' ORDER BY dev, day, ts, id)) FROM img_local x}),
	'after UPDATEs and DELETEs: coordinator = single node');
cmp_ok(c(q{SELECT count(*) FROM img WHERE v = 'old'}), '>', 4000, 'the UPDATE through FOR UPDATE changed its rows');

# ------------------------------------------- row-lock escalation, one node --

my $locker = $coord->background_psql('postgres');
$locker->query_safe(q{BEGIN; SELECT count(*) FROM (SELECT * FROM img_local FOR UPDATE) x});
is( c(q{SELECT count(*) FILTER (WHERE locktype = 'tuple') <= 1000 AND bool_or(locktype = 'relation' AND mode = 'ExclusiveLock' AND granted)
          FROM pg_locks WHERE relation = 'img_local'::regclass}),
	't', 'FOR UPDATE of 9600 rows: at most 1000 row locks, then a table lock');
my ($ret, $out, $err) = $coord->psql('postgres',
	q{SET lock_timeout = '200ms'; UPDATE img_local SET v = 'blocked' WHERE dev = 'cam-1' AND day = '2025-01-01'});
like($err, qr/canceling statement due to lock timeout/, 'a writer waits for the escalated lock');
$locker->query_safe('COMMIT');
$locker->quit;
is(c(q{SELECT count(*) FROM pg_locks WHERE relation = 'img_local'::regclass}), '0', 'released at commit');

# ------------------------------------------- a COPY terminated midway --
# A slow shard (a trigger sleeping per row) keeps the COPY streaming; the
# coordinator's backend is terminated mid-COPY.  It must exit: a FATAL
# skips the COPY's error handling, and postgres_fdw's abort cleanup waited
# forever on a connection left in COPY_IN.  Nothing may stay on the shards.
my $rows_before = on_shards();
$_->safe_psql('postgres', q{CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS $f$
                              BEGIN PERFORM pg_sleep(0.002); RETURN NEW; END $f$;
                            CREATE TRIGGER slow BEFORE INSERT ON img FOR EACH ROW EXECUTE FUNCTION slow()})
  for ($s1, $s2);
my $big = write_rows('big.csv', 300001, 360000);
my $copier = $coord->background_psql('postgres', on_error_stop => 0);
$copier->query_until(qr/started/, qq{\\echo started\n\\copy img FROM '$big' (FORMAT csv)\n});
$coord->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity WHERE query LIKE 'COPY%img%STDIN%' AND wait_event IS NOT NULL})
  or die 'the COPY did not start';
$s1->poll_query_until('postgres', q{SELECT count(*) = 1 FROM pg_stat_activity WHERE query LIKE 'COPY%' AND state = 'active'})
  or die 'the COPY did not reach shard 1';
c(q{SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'COPY%img%STDIN%'});
ok( $coord->poll_query_until('postgres',
		q{SELECT count(*) = 0 FROM pg_stat_activity WHERE query LIKE 'COPY%img%STDIN%'}),
	'a backend terminated mid-COPY exits');
eval { $copier->quit };
ok( $s1->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_stat_activity WHERE query LIKE 'COPY%'})
	  && $s2->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_stat_activity WHERE query LIKE 'COPY%'}),
	'... its COPYs on the shards end');
is(on_shards(), $rows_before, '... and leave no row there');
$_->safe_psql('postgres', q{DROP TRIGGER slow ON img; DROP FUNCTION slow()}) for ($s1, $s2);
is(c(q{SELECT count(*) FROM img}), c(q{SELECT count(*) FROM img_local}), 'the coordinator goes on');

# ------------------------------ direct-read connections, listed and closed --

my $dev_on1 = c(q{SELECT min(dev) FROM img WHERE tableoid = (SELECT foreign_table FROM widecol.shards('img') WHERE server = 's1')});
my $n_on1 = c(qq{SELECT count(*) FROM img_local WHERE dev = '$dev_on1'});
my $ours_on_s1 = q{SELECT count(*) FROM pg_stat_activity WHERE application_name = 'widecol'};
my $before_on_s1 = $s1->safe_psql('postgres', $ours_on_s1);
my $sess = $coord->background_psql('postgres');
is($sess->query_safe(q{SELECT count(*) FROM widecol.shard_connections()}), '0',
	'a new session has no direct-read connections');
is($sess->query_safe(qq{SELECT count(*) FROM img WHERE dev = '$dev_on1'}), $n_on1, 'it reads shard 1 directly');
is($sess->query_safe(q{SELECT string_agg(server_name || ' ' || busy || ' ' || valid, ',') FROM widecol.shard_connections()}),
	's1 false true', 'shard_connections lists its connection to s1, idle and usable');
is($s1->safe_psql('postgres', $ours_on_s1), $before_on_s1 + 1, '... the one shard 1 sees');
is($sess->query_safe(q{SELECT widecol.shard_disconnect('s2')}), '0', 'shard_disconnect(s2) closes nothing');
is($sess->query_safe(q{SELECT widecol.shard_disconnect('s1')}), '1', 'shard_disconnect(s1) closes it');
ok($s1->poll_query_until('postgres', "SELECT ($ours_on_s1) = $before_on_s1"), '... and shard 1 sees it gone');
is($sess->query_safe(q{SELECT count(*) FROM widecol.shard_connections()}), '0', '... and the list is empty');
is($sess->query_safe(qq{SELECT count(*) FROM img WHERE dev = '$dev_on1'}), $n_on1, 'the next read connects again');
is($sess->query_safe(q{SELECT widecol.shard_disconnect()}), '1', 'shard_disconnect() closes every connection');
$sess->quit;
fails_like($coord, q{SELECT widecol.shard_disconnect('nosuch')}, qr/server "nosuch" does not exist/,
	'shard_disconnect of an unknown server');
is(as_loader(qq{SELECT count(*) FROM img WHERE dev = '$dev_on1'; SELECT server_name FROM widecol.shard_connections(); SELECT widecol.shard_disconnect()}),
	"$n_on1\ns1\n1", 'an ordinary role lists and closes its own connections');
# a read still streaming on the connection: left open, with a warning
($ret, $out, $err) = $coord->psql('postgres',
	qq{SELECT max(d) FROM (SELECT widecol.shard_disconnect('s1') AS d FROM img WHERE dev = '$dev_on1') x});
is($out, '0', 'shard_disconnect while a read streams on the connection closes nothing');
like($err, qr/connection to shard server "s1" is in use: not closed/, '... and warns');

# A statement the shard prepared for a session, whose result type changed
# since (its table altered there): the shard answers 0A000 "cached plan must
# not change result type"; the read prepares it again, once, and gets the rows.
my $day_on1 = c(qq{SELECT min(day) FROM img WHERE dev = '$dev_on1'});
my $rows_on1 = c(qq{SELECT string_agg(v, ',' ORDER BY ts, id) FROM img_local WHERE dev = '$dev_on1' AND day = '$day_on1'});
my $prep = $coord->background_psql('postgres');
$prep->query_safe(q{SET plan_cache_mode = force_generic_plan});	# its remote SQL keeps $1, $2
$prep->query_safe(q{PREPARE pv(text, date) AS SELECT string_agg(v, ',' ORDER BY ts, id) FROM (SELECT ts, id, v FROM img WHERE dev = $1 AND day = $2) x});
my $exec_pv = qq{EXECUTE pv('$dev_on1', '$day_on1')};
is($prep->query_safe($exec_pv), $rows_on1, 'a prepared read of one partition on shard 1 (prepared there too)');
is($prep->query_safe($exec_pv), $rows_on1, '... again');
my $log_at = -s $s1->logfile;
$s1->safe_psql('postgres', q{ALTER TABLE img ALTER COLUMN v TYPE text COLLATE "C"});
is($prep->query_safe($exec_pv), $rows_on1,
	'after its table changed on the shard the read prepares it again and reads the same rows');
my $log = substr(slurp_file($s1->logfile), $log_at);
like($log, qr/cached plan must not change result type/, '... after the shard refused the stale prepared statement');
like($log, qr/cached plan must not change result type.*execute widecol_\d+: SELECT ts, id, v FROM public\.img WHERE \(\(dev = \$1::text\)\) AND \(\(day = \$2::date\)\)/s,
	'... and executed a new prepared form');
is($prep->query_safe($exec_pv), $rows_on1, '... and goes on with the new one');
$prep->quit;
$s1->safe_psql('postgres', q{ALTER TABLE img ALTER COLUMN v TYPE text COLLATE "default"});
is(c(q{SELECT bool_and(ok) FROM widecol.check_shards('img')}), 't', 'shard 1 as it was');

# ----------------------------------------------------------- a shard down --

my $dev_s1 = c(q{SELECT min(dev) FROM img WHERE tableoid = (SELECT foreign_table FROM widecol.shards('img') WHERE server = 's1')});
my $dev_s2 = c(q{SELECT min(dev) FROM img WHERE tableoid = (SELECT foreign_table FROM widecol.shards('img') WHERE server = 's2')});
my $expect_s1 = c(qq{SELECT count(*) FROM img_local WHERE dev = '$dev_s1'});
my $expect_s2 = c(qq{SELECT count(*) FROM img_local WHERE dev = '$dev_s2'});
# a session whose direct-read connection to shard 2 outlives the shard
my $long = $coord->background_psql('postgres');
is($long->query_safe(qq{SELECT count(*) FROM img WHERE dev = '$dev_s2'}), $expect_s2,
	'a long session reads shard 2 directly');
$s2->stop('immediate');
is(c(qq{SELECT count(*) FROM img WHERE dev = '$dev_s1'}), $expect_s1, 'shard 2 down: a query of shard 1 works');
is(c(qq{SELECT ts FROM img WHERE dev = '$dev_s1' ORDER BY ts DESC, id DESC LIMIT 1}),
	c(qq{SELECT ts FROM img_local WHERE dev = '$dev_s1' ORDER BY ts DESC, id DESC LIMIT 1}),
	'shard 2 down: a routed LIMIT query of shard 1 works');
is( c(qq{SET plan_cache_mode = force_generic_plan; PREPARE g(text) AS SELECT count(*) FROM img WHERE dev = \$1; EXECUTE g('$dev_s1')}),
	$expect_s1, 'shard 2 down: a generic prepared plan prunes the dead shard at run time');
fails_like($coord, qq{SELECT count(*) FROM img WHERE dev = '$dev_s2'},
	qr/08001: could not connect to server "s2"/, 'shard 2 down: a query of shard 2');
fails_like($coord, q{SELECT count(*) FROM img}, qr/08001: could not connect to server "s2"/, 'shard 2 down: a full scan');
fails_like($coord, qq{INSERT INTO img VALUES ('$dev_s2', '2025-01-01', now(), -1, 'x')},
	qr/08001: could not connect to server "s2"/, 'shard 2 down: an INSERT for it');
is(c(qq{INSERT INTO img VALUES ('$dev_s1', '2025-01-01', now(), -1, 'x'); SELECT count(*) FROM img WHERE dev = '$dev_s1' AND id = -1}),
	'1', 'shard 2 down: an INSERT for shard 1 works');
my $s1_rows = $s1->safe_psql('postgres', q{SELECT count(*) FROM img});
loader_fails_like(qq{\\copy img FROM '$more' (FORMAT csv)},
	qr/08001: could not connect to server "s2"/, 'shard 2 down: a COPY with rows for it');
is($s1->safe_psql('postgres', q{SELECT count(*) FROM img}), $s1_rows, '... leaves nothing on shard 1');
like(c(q{SELECT shard || ' ' || ok || ' ' || coalesce(problem, '') FROM widecol.check_shards('img') ORDER BY shard}),
	qr/^0 true \n1 false shard unreachable: could not establish connection/, 'check_shards reports the dead shard');
$s2->start;
is(c(q{SELECT count(*) FROM img}), c(q{SELECT count(*) + 1 FROM img_local}), 'shard 2 back: everything readable');
is($long->query_safe(qq{SELECT count(*) FROM img WHERE dev = '$dev_s2'}), $expect_s2,
	'... and the long session reads it again at once (its dead connection is made again)');
$long->quit;

# ---------------------------------------------------------------- drop --

c(q{DROP VIEW img_per_day; SELECT widecol.drop_sharded_table('img')});
is($s1->safe_psql('postgres', q{SELECT to_regclass('img') IS NULL}) . $s2->safe_psql('postgres', q{SELECT to_regclass('img') IS NULL}),
	'tt', 'drop_sharded_table drops the shards\' tables');
is(c(q{SELECT count(*) FROM widecol.sharded_table}), '0', '... and forgets the table');

$_->stop for ($coord, $s1, $s2);
done_testing();
