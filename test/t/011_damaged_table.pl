
# 011_damaged_table: a run whose page fails its checks is found by the
# background worker's compaction before any user reads it.  The worker
# records the damage (widecol.damage), says so in a WARNING with a HINT,
# and from then on skips the table every round with a WARNING instead of
# failing on it; table_stats shows the table as damaged, widecol.compact
# refuses it, other tables are still maintained.  A TRUNCATE (new storage)
# or a verify that finds nothing wrong clears the mark, and maintenance
# resumes.  With data checksums a page PostgreSQL refuses is recorded and
# skipped the same way.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use lib 'test/perl';
use WidecolTest;

my $node = widecol_node('damaged', qq{
widecol.naptime = 1
widecol.max_workers = 1
});
sub sql { return $node->safe_psql('postgres', shift); }

# wait until the server log matches $re (from byte $from on); the log text
sub wait_for_log
{
	my ($re, $from) = @_;
	for (my $i = 0; $i < 600; $i++)
	{
		my $log = slurp_file($node->logfile, $from);
		return $log if $log =~ $re;
		usleep(100_000);
	}
	return '';
}

# table $t with two runs, kept apart until the damage is in place
# (autocompact off), in a database with the extension
sub two_runs
{
	my $t = shift;
	sql(qq{
	CREATE EXTENSION widecol;
	CREATE TABLE $t (pk int, ck int, v text) USING widecol
	  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck',
	        widecol.min_threshold = 2, widecol.autocompact = false);
	INSERT INTO $t SELECT g % 10, g, repeat('v', 50) || g FROM generate_series(1, 20000) g;
	INSERT INTO $t SELECT g % 10, g, repeat('w', 50) || g FROM generate_series(20001, 40000) g;
});
	return;
}

two_runs('d');
sql(q{
	CREATE TABLE h (pk int, ck int, v text) USING widecol
	  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck', widecol.min_threshold = 2);
});
is(sql("SELECT count(*) FROM widecol.runs('d')"), '2', 'd has two runs');
my $run = sql("SELECT min(run_id) FROM widecol.runs('d')");
my $path = $node->data_dir . '/' . sql("SELECT pg_relation_filepath('d')");
$node->stop;

# flip bytes in the payload of the run's last value page
my ($vblk) = find_page($path, 8, $run, 'last');
flip_bytes($path, $vblk, 64, 16) if defined $vblk;
ok(defined $vblk, "damaged value page $vblk of run $run");
$node->start;

# the worker compacts d (two runs, min_threshold 2) and meets the damage
my $offset = -s $node->logfile;
sql("ALTER TABLE d SET (widecol.autocompact = true)");
my $log = wait_for_log(qr/widecol table public\.d is damaged/, $offset);
like($log, qr/WARNING:  widecol worker: widecol table public\.d is damaged: run $run, block $vblk: widecol: checksum mismatch/,
	'the worker reports the damaged run and block');
like($log, qr/DETAIL:  Maintenance of this table is suspended/, 'and that maintenance stops');
like($log, qr/HINT:  SELECT \* FROM widecol\.verify\('public\.d'\) WHERE NOT ok lists the damaged runs/,
	'with a hint');

# later rounds skip the table, saying so each time
$offset = -s $node->logfile;
$log = wait_for_log(qr/(skipping maintenance of damaged widecol table public\.d.*){2}/s, $offset);
like($log, qr/WARNING:  widecol worker: skipping maintenance of damaged widecol table public\.d: run $run, block $vblk/,
	'later rounds skip the table with a WARNING');
unlike($log, qr/maintenance of table public\.d failed/, 'instead of failing on it again');

is(sql("SELECT segment, id, block FROM widecol.damage('d')"), "run|$run|$vblk",
	'widecol.damage lists the run');
like(sql("SELECT damaged, damage FROM widecol.table_stats('d')"),
	qr/^t\|run $run, block $vblk: widecol: checksum mismatch/, 'table_stats shows the table as damaged');
is(sql("SELECT damaged FROM widecol.table_stats('h')"), 'f', 'another table is not damaged');
my ($ret, $out, $err) = $node->psql('postgres', "SELECT widecol.compact('d')");
like($err, qr/ERROR:  cannot compact damaged widecol table public\.d: run $run/,
	'widecol.compact refuses the damaged table');
like($err, qr/HINT:  .*Restore the table from a backup/, 'with the hint');
is(sql("SELECT count(*) FROM d"), '40000', 'key-only reads still work');

# other tables are still maintained
sql(q{
	INSERT INTO h SELECT g % 10, g, 'x' FROM generate_series(1, 5000) g;
	INSERT INTO h SELECT g % 10, g, 'y' FROM generate_series(5001, 10000) g;
});
my $compacted = 0;
for (my $i = 0; $i < 300 && !$compacted; $i++)
{
	$compacted = sql("SELECT count(*) FROM widecol.compaction_history WHERE relid = 'h'::regclass AND by_worker") > 0;
	usleep(100_000) unless $compacted;
}
ok($compacted, 'the worker still compacts the other table');

# verify finds the damage again and keeps the mark
like(sql("SELECT problems FROM widecol.verify('d') WHERE NOT ok"), qr/block $vblk: value page: checksum mismatch/,
	'verify reports the value page');
is(sql("SELECT count(*) FROM widecol.damage('d')"), '1', 'the mark stays');

# the operator restores the table: TRUNCATE (new storage) and a reload
sql(q{
	BEGIN;
	TRUNCATE d;
	INSERT INTO d SELECT g % 10, g, repeat('v', 50) || g FROM generate_series(1, 40000) g;
	COMMIT;
});
is(sql("SELECT damaged FROM widecol.table_stats('d')"), 'f', 'new storage: no longer damaged');
is(sql("SELECT bool_and(ok) FROM widecol.verify('d')"), 't', 'verify is clean');
is(sql("SELECT count(*) FROM widecol.damage('d')"), '0', 'and the old marks are gone');
is(sql("SELECT count(*) FROM widecol.compact('d')") , '1', 'widecol.compact works again');

# a damage found by verify alone marks the table too, and DROP clears it
sql(q{
	CREATE TABLE e (pk int, v text) USING widecol WITH (widecol.partition_key = 'pk', widecol.autocompact = false);
	INSERT INTO e SELECT g, 'e' || g FROM generate_series(1, 20000) g;
});
my $epath = $node->data_dir . '/' . sql("SELECT pg_relation_filepath('e')");
$node->stop;
{
	open(my $fh, '+<', $epath) or die;
	binmode $fh;
	seek($fh, 8192 * 2 + 100, 0) or die;
	print $fh ("\xAA" x 16);
	close $fh;
}
$node->start;
is(sql("SELECT count(*) > 0 FROM widecol.verify('e') WHERE NOT ok"), 't', 'verify finds the damage in e');
is(sql("SELECT count(*) > 0 FROM widecol.damage('e')"), 't', 'and records it');
my $eoid = sql("SELECT 'e'::regclass::oid");
sql('DROP TABLE e');
is(sql("SELECT count(*) FROM widecol.damage WHERE relid = $eoid"), '0', 'DROP TABLE removes the marks');

$node->stop;

# data checksums on: PostgreSQL's check refuses the damaged page before
# widecol sees it (its error names the block, widecol notes nothing); the
# worker records that damage as well, as "page", and skips the table
$node = widecol_node('damaged_sums', qq{
widecol.naptime = 1
widecol.max_workers = 1
}, extra => ['--data-checksums']);
two_runs('d2');
$run = sql("SELECT min(run_id) FROM widecol.runs('d2')");
$path = $node->data_dir . '/' . sql("SELECT pg_relation_filepath('d2')");
$node->stop;
my ($kblk) = find_page($path, 8, $run, 'last');	# a value page, as above
flip_payload($path, $kblk, 16);
$node->start;
$offset = -s $node->logfile;
sql("ALTER TABLE d2 SET (widecol.autocompact = true)");
$log = wait_for_log(qr/widecol table public\.d2 is damaged/, $offset);
like($log, qr/WARNING:  widecol worker: widecol table public\.d2 is damaged: page: invalid page in block $kblk of relation base\/\d+\/\d+/,
	'checksums on: the worker reports the page PostgreSQL refused');
$offset = -s $node->logfile;
$log = wait_for_log(qr/skipping maintenance of damaged widecol table public\.d2/, $offset);
like($log, qr/WARNING:  widecol worker: skipping maintenance of damaged widecol table public\.d2: page: invalid page in block $kblk/,
	'and skips the table in later rounds');
unlike($log, qr/maintenance of table public\.d2 failed/, 'instead of failing on it again');
is(sql("SELECT segment, id, block FROM widecol.damage('d2')"), 'page|0|', 'widecol.damage lists the page');
like(sql("SELECT damaged, damage FROM widecol.table_stats('d2')"), qr/^t\|page: invalid page in block $kblk/,
	'table_stats shows the table as damaged');
($ret, $out, $err) = $node->psql('postgres', "SELECT widecol.compact('d2')");
like($err, qr/ERROR:  cannot compact damaged widecol table public\.d2: page: invalid page in block $kblk/,
	'widecol.compact refuses it');
like(sql("SELECT problems FROM widecol.verify('d2') WHERE NOT ok"), qr/invalid page in block $kblk/,
	'verify reports the page');
$node->stop;
done_testing();
