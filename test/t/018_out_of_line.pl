
# Copyright: widecol authors.  TAP test, PostgreSQL 15.
#
# 018_out_of_line: values too large for a page even compressed live in the
# table's TOAST relation (src/storage/outofline.c).  As a superuser this
# test counts the values in the TOAST relation, so it can assert that:
#
#  - every committed large value (up to 64 MB) comes back exactly (md5
#    against a heap copy) from level 0, from runs (a COPY), after UPDATE, flush and
#    compaction, on a streaming standby (with wal_consistency_checking),
#    after kill -9 and crash recovery, and after pg_dump/pg_restore;
#  - no space leaks: an UPDATE writes a fresh copy (one more value), and
#    the compaction that drops the old version deletes its value; DELETE +
#    compaction deletes the value; a run whose rows all expired is dropped
#    whole and its values deleted; VACUUM FULL leaves exactly the live
#    values; two sessions replaying a key with different values each write
#    a copy and compaction deletes the loser's; a rolled-back or crashed
#    writer's values are dead TOAST rows
#    (VACUUM removes them) and no version points to them.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;

my $primary = widecol_node('ool', q{
widecol.max_workers = 0
wal_consistency_checking = 'all,widecol'
autovacuum = off
}, allows_streaming => 1);

sub p { return $primary->safe_psql('postgres', $_[0]); }

p(q{
CREATE EXTENSION widecol;
-- hex digests: lz4 gains little, so these go out of line
CREATE FUNCTION hex(n int, seed int) RETURNS text LANGUAGE sql AS
  $$ SELECT string_agg(md5((g * seed)::text), '') FROM generate_series(1, n / 32) g $$;
CREATE TABLE docs (tenant text, id int, body text, rev int) USING widecol
  WITH (widecol.partition_key = 'tenant', widecol.clustering_key = 'id');
CREATE TABLE docs_heap (tenant text, id int, body text, rev int, PRIMARY KEY (tenant, id));
});
my $toast = p("SELECT reltoastrelid::regclass FROM pg_class WHERE relname = 'docs'");
like($toast, qr/^pg_toast\.pg_toast_\d+$/, 'a widecol table with text columns has a TOAST relation');

sub values_in_toast { return p("SELECT count(DISTINCT chunk_id) FROM $toast"); }

sub same
{
	my ($node, $db) = @_;
	my $q = "SELECT count(*) || ' ' || md5(string_agg(md5(tenant || id || body || rev), ',' ORDER BY tenant, id)) FROM";
	return $node->safe_psql($db, "$q docs") eq $primary->safe_psql('postgres', "$q docs_heap");
}

# level 0 (single-row INSERTs), a run (COPY of 40 rows, 20 large)
p("INSERT INTO docs VALUES ('t1', 1, hex(50000, 1), 0), ('t1', 2, hex(2000000, 2), 0)");
p("INSERT INTO docs VALUES ('t1', 3, 'small', 0)");
my $tmp = PostgreSQL::Test::Utils::tempdir;
p("COPY (SELECT 't2', g, CASE WHEN g % 2 = 0 THEN hex(30000, g) ELSE 'small' END, 0 FROM generate_series(1, 40) g) TO '$tmp/docs.copy'");
p("COPY docs FROM '$tmp/docs.copy'");
p("INSERT INTO docs_heap SELECT * FROM docs");
ok(same($primary, 'postgres'), 'large values come back exactly from level 0 and runs');
is(values_in_toast(), 22, '22 values out of line');
is(p("SELECT sum(out_of_line) FROM widecol.runs('docs')"), 20, 'the COPY run counts its 20');

# the standby follows
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('ool_standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;

# UPDATE keeps a large value as a fresh copy; DELETE; then compaction
p("UPDATE docs SET rev = 1 WHERE tenant = 't2' AND id IN (2, 4)");
p("UPDATE docs_heap SET rev = 1 WHERE tenant = 't2' AND id IN (2, 4)");
p("DELETE FROM docs WHERE tenant = 't2' AND id = 6");
p("DELETE FROM docs_heap WHERE tenant = 't2' AND id = 6");
is(values_in_toast(), 24, 'an UPDATE writes a fresh copy of the value it keeps');
ok(same($primary, 'postgres'), 'same rows after UPDATE and DELETE');
p("SET widecol.gc_grace = 0; SELECT widecol.compact('docs', true)");
is(values_in_toast(), 21, 'compaction deletes the values of the versions it drops (2 old versions, 1 deleted row)');
ok(same($primary, 'postgres'), 'same rows after compaction');

$primary->wait_for_catchup($standby);
ok(same($standby, 'postgres'), 'the standby returns the same large values');

# a run whose rows all expired is dropped whole, and its values deleted
p("SET widecol.ttl = 1; INSERT INTO docs SELECT 't3', g, hex(20000, g), 0 FROM generate_series(1, 10) g");
p("SELECT widecol.flush('docs')");
is(values_in_toast(), 31, '10 more values with a TTL of 1 s');
sleep 2;
my $before = p("SELECT count(*) FROM widecol.runs('docs')");
p("SET widecol.gc_grace = 0; SELECT widecol.compact('docs')");
is(p("SELECT count(*) FROM widecol.runs('docs')"), $before - 1, 'the expired run was dropped whole');
is(values_in_toast(), 21, 'and its values deleted');

# a rolled-back writer leaves dead TOAST rows that no version points to
p("BEGIN; INSERT INTO docs SELECT 't4', g, hex(20000, g), 0 FROM generate_series(1, 5) g; ROLLBACK");
is(p("SELECT count(*) FROM docs WHERE tenant = 't4'"), 0, 'no row of a rolled-back INSERT');
p("VACUUM docs");
is(values_in_toast(), 21, 'VACUUM removes the values of a rolled-back INSERT');

# two sessions replay the same key with different large values: the later
# write wins, and the loser's value goes with its version at compaction
my $s1 = $primary->background_psql('postgres');
my $s2 = $primary->background_psql('postgres');
$s1->query_safe("BEGIN; INSERT INTO docs VALUES ('t8', 1, hex(30000, 81), 1)");
$s2->query_safe("BEGIN; INSERT INTO docs VALUES ('t8', 1, hex(30000, 82), 2)");
$s1->query_safe('COMMIT');
$s2->query_safe('COMMIT');
$s1->quit;
$s2->quit;
is(p("SELECT rev, body = hex(30000, 82) FROM docs WHERE tenant = 't8' AND id = 1"), '2|t',
	'concurrent replays of a key: the later write wins');
is(values_in_toast(), 23, 'each replay wrote its own copy');
p("SET widecol.gc_grace = 0; SELECT widecol.compact('docs', true)");
is(values_in_toast(), 22, "compaction deleted the losing replay's value");
p("INSERT INTO docs_heap SELECT * FROM docs WHERE tenant = 't8'");
ok(same($primary, 'postgres'), 'same rows after the replays');

# kill -9 with a writer in flight: committed values survive, the rest is gone
my $inflight = $primary->background_psql('postgres');
$inflight->query_safe("BEGIN; INSERT INTO docs SELECT 't5', g, hex(20000, g), 0 FROM generate_series(1, 5) g");
p("INSERT INTO docs VALUES ('t6', 1, hex(40000, 6), 0)");
p("INSERT INTO docs_heap VALUES ('t6', 1, hex(40000, 6), 0)");
$primary->stop('immediate');
eval { $inflight->quit; };
$primary->start;
ok(same($primary, 'postgres'), 'after kill -9: every committed large value, nothing uncommitted');
p("VACUUM docs");
is(values_in_toast(), 23, 'after recovery and VACUUM: only the live values remain');
p("SET widecol.gc_grace = 0; SELECT widecol.compact('docs', true)");
p("VACUUM FULL docs");
ok(same($primary, 'postgres'), 'same rows after VACUUM FULL');
$toast = p("SELECT reltoastrelid::regclass FROM pg_class WHERE relname = 'docs'");
is(values_in_toast(), 23, 'VACUUM FULL copies exactly the live values');

$primary->wait_for_catchup($standby);
ok(same($standby, 'postgres'), 'the standby still agrees after the crash and VACUUM FULL');
my $log = slurp_file($standby->logfile) . slurp_file($primary->logfile);
unlike($log, qr/inconsistent page found/, 'no WAL consistency failure');

$standby->stop;

# a 64 MB value (PostgreSQL's limit is 1 GB), read back through a seek
# (without the standby, and without wal_consistency_checking's full-page
# image of every TOAST chunk)
p("SET wal_consistency_checking = ''; INSERT INTO docs VALUES ('t7', 1, hex(64000000, 11), 0)");
p("SET wal_consistency_checking = ''; INSERT INTO docs_heap SELECT * FROM docs WHERE tenant = 't7'");
is(p("SELECT octet_length(body) FROM docs WHERE tenant = 't7' AND id = 1"), 64000000, 'a 64 MB value');
ok(same($primary, 'postgres'), 'the 64 MB value comes back exactly');

# dump and restore
my $dump = "$tmp/docs.dump";
$primary->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $primary->connstr('postgres') ], 'pg_dump');
p('CREATE DATABASE restored');
$primary->command_ok([ 'pg_restore', '-d', $primary->connstr('restored'), $dump ], 'pg_restore');
ok(same($primary, 'restored'), 'the restored database has the same large values');

$primary->stop;
done_testing();
