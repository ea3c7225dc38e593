
# 006_xid_wraparound: a widecol table stays readable and correct across an
# xid epoch.  Versions carry raw xids; widecol.compact() freezes them and
# VACUUM then moves relfrozenxid up, so that the cluster can truncate the
# commit log and let the xid counter wrap.  The xid counter is advanced with
# pg_resetwal in jumps of 1.5 billion (freezing everything in between), past
# 2^31 and then past 2^32 into epoch 1; after every jump the table returns
# exactly the same rows, accepts writes, and its old commit log is gone.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;

my $node = widecol_node('wrap', qq{
widecol.max_workers = 0
autovacuum = off
});
$node->safe_psql('postgres', q{
	CREATE EXTENSION widecol;
	CREATE TABLE w (pk int, ck int, v text) USING widecol
	  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
	INSERT INTO w SELECT g % 20, g, 'copy ' || g FROM generate_series(1, 3000) g;
	SELECT widecol.flush('w');
	UPDATE w SET v = v || ' updated' WHERE pk = 3;
	DELETE FROM w WHERE pk = 4;
});
my $expected = $node->safe_psql('postgres',
	"SELECT count(*) || ':' || md5(string_agg(w::text, '|' ORDER BY pk, ck)) FROM w");

# freeze everything: widecol by compaction, then every database (template0
# too) so that datfrozenxid and the commit log can move on
sub freeze_all
{
	$node->safe_psql('postgres', q{
		SET widecol.gc_grace = 0;
		SELECT widecol.compact('w', major => true);
		UPDATE pg_database SET datallowconn = true WHERE datname = 'template0';
	});
	for my $db ('postgres', 'template0', 'template1')
	{
		$node->safe_psql($db, 'VACUUM FREEZE');
	}
	$node->safe_psql('postgres',
		"UPDATE pg_database SET datallowconn = false WHERE datname = 'template0'");
	$node->safe_psql('postgres', 'CHECKPOINT');
}

# jump the xid counter to (epoch, xid): pg_resetwal needs the commit log
# segment of the new xid to exist
sub jump_to
{
	my ($epoch, $xid) = @_;
	$node->stop;
	my $seg = sprintf('%04X', $xid >> 20);
	my $path = $node->data_dir . "/pg_xact/$seg";
	unless (-e $path)
	{
		open(my $fh, '>', $path) or die "create $path: $!";
		binmode $fh;
		print $fh ("\0" x 262144);
		close $fh;
	}
	command_ok([ 'pg_resetwal', '-e', $epoch, '-x', $xid, '-u', $xid - 1000,
		$node->data_dir ], "pg_resetwal to epoch $epoch xid $xid");
	$node->start;
}

my @jumps = ([ 0, 1_500_000_000 ], [ 0, 3_000_000_000 ], [ 1, 200_000_000 ]);
for my $j (@jumps)
{
	my ($epoch, $xid) = @$j;
	freeze_all();
	jump_to($epoch, $xid);
	is($node->safe_psql('postgres',
		"SELECT count(*) || ':' || md5(string_agg(w::text, '|' ORDER BY pk, ck)) FROM w"),
		$expected, "epoch $epoch xid $xid: same rows");
	like($node->safe_psql('postgres', 'SELECT txid_current()'),
		qr/^\d+$/, "epoch $epoch xid $xid: new xids are assigned");
	# new writes, committed and rolled back, are right too
	$node->safe_psql('postgres', q{
		INSERT INTO w VALUES (100, 1, 'new');
		BEGIN; INSERT INTO w VALUES (100, 2, 'rolled back'); ROLLBACK;
		SELECT widecol.flush('w');
	});
	is($node->safe_psql('postgres', "SELECT string_agg(v, ',') FROM w WHERE pk = 100"),
		'new', "epoch $epoch xid $xid: committed write visible, rolled back one not");
	$node->safe_psql('postgres', 'DELETE FROM w WHERE pk = 100');
	is($node->safe_psql('postgres', "SELECT bool_and(ok) FROM widecol.verify('w')"), 't',
		"epoch $epoch xid $xid: verify ok");
}

# the commit log of the first xids is long gone: had a version kept its raw
# xid, reading it would have failed above
my @segments = glob($node->data_dir . '/pg_xact/*');
ok(!grep({ m{/0000$} } @segments), 'the first commit log segment was truncated');
freeze_all();
is($node->safe_psql('postgres',
	"SELECT age(relfrozenxid) < 100000 FROM pg_class WHERE relname = 'w'"), 't',
	'relfrozenxid of the widecol table follows');

$node->stop;
done_testing();
