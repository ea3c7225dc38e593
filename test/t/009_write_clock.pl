
# Copyright: widecol authors.  TAP test, PostgreSQL 15.
#
# 009_write_clock: last-write-wins needs write times that keep increasing
# across a clean restart, a crash and a failover, even when the wall clock
# steps back in between (NTP, a standby with a slower clock).  The clock is
# stepped back with the test-only widecol.debug_clock_offset; each time, a
# new write of a key must win over the one written before the step.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;

my $primary = widecol_node('clock_primary', '', allows_streaming => 1);
$primary->safe_psql('postgres', q{
	CREATE EXTENSION widecol;
	CREATE TABLE kv (k int, v text) USING widecol WITH (widecol.partition_key = 'k');
	INSERT INTO kv VALUES (1, 'first'), (2, 'first');
	COPY kv FROM PROGRAM 'echo 3,first' WITH (FORMAT csv);
});

# WRITETIME of each key, and its value.
sub state
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		'SELECT string_agg(k || $$=$$ || v, $$ $$ ORDER BY k) FROM kv');
}

sub writetime
{
	my ($node, $k) = @_;
	return $node->safe_psql('postgres',
		"SELECT widecol.writetime(tableoid, ctid) FROM kv WHERE k = $k");
}

# Write every key again (single-row, update and COPY paths) and check that
# the new values win.
sub overwrite_all
{
	my ($node, $value, $what) = @_;
	my %before = map { $_ => writetime($node, $_) } 1 .. 3;
	$node->safe_psql('postgres', qq{
		INSERT INTO kv VALUES (1, '$value');
		UPDATE kv SET v = '$value' WHERE k = 2;
		COPY kv FROM PROGRAM 'echo 3,$value' WITH (FORMAT csv);
	});
	is(state($node), "1=$value 2=$value 3=$value", "$what: the newest write of every key wins");
	for my $k (1 .. 3)
	{
		my $newer = $node->safe_psql('postgres',
			"SELECT widecol.writetime(tableoid, ctid) > '$before{$k}' FROM kv WHERE k = $k");
		is($newer, 't', "$what: key $k has a later write time than before");
	}
}

is(state($primary), '1=first 2=first 3=first', 'initial rows');

# Clean restart, clock one hour behind.
$primary->append_conf('postgresql.conf', "widecol.debug_clock_offset = '-1h'");
$primary->restart;
overwrite_all($primary, 'after_restart', 'clean restart, clock 1h back');

# Crash, clock two hours behind; one flush so that runs take part too.
$primary->safe_psql('postgres', "SELECT widecol.flush('kv')");
$primary->append_conf('postgresql.conf', "widecol.debug_clock_offset = '-2h'");
$primary->stop('immediate');
$primary->start;
is(state($primary), '1=after_restart 2=after_restart 3=after_restart', 'crash lost nothing');
overwrite_all($primary, 'after_crash', 'crash, clock 2h back');

# Failover to a standby whose clock is three hours behind the primary's.
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('clock_standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->append_conf('postgresql.conf', "widecol.debug_clock_offset = '-3h'");
$standby->start;
$primary->safe_psql('postgres', "INSERT INTO kv VALUES (1, 'before_failover')");
$primary->wait_for_catchup($standby);
is(state($standby), '1=before_failover 2=after_crash 3=after_crash', 'standby has the primary\'s rows');
$primary->stop('immediate');
$standby->promote;
overwrite_all($standby, 'after_failover', 'failover, clock 3h back');

$standby->stop;
done_testing();
