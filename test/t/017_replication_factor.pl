
# Copyright: widecol authors.  TAP test, PostgreSQL 15.
#
# 017_replication_factor: replication factor 3 with PostgreSQL's streaming
# replication, the recipe of README.md ("Scaling out"):
#
#   primary + 2 streaming standbys,
#   synchronous_standby_names = 'ANY 1 (standby1, standby2)'  (a commit is
#     acknowledged once one of the two has it: QUORUM-like with RF 3),
#   synchronous_commit = remote_apply  (and applied it: a read on that
#     standby sees the write).
#
# Writers insert into a widecol table under load (single rows into level 0,
# multi-row INSERTs written as sorted runs, a flush now and then), each
# printing what the primary acknowledged.  The primary is killed (immediate
# stop) in the middle; the standby that received the most WAL is promoted
# (every acknowledged commit is on at least one standby, and WAL is one
# line, so the furthest one has them all); every acknowledged write must be
# on it.  The other standby is then pointed at the new primary and follows
# it, and both verify() clean and hold the same rows.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;
use Time::HiRes qw(usleep);

my $primary = widecol_node('primary', q{
widecol.max_workers = 0
max_connections = 20
}, allows_streaming => 1);
$primary->safe_psql('postgres', q{
CREATE EXTENSION widecol;
CREATE TABLE events (writer int, seq int, payload text) USING widecol
  WITH (widecol.partition_key = 'writer', widecol.clustering_key = 'seq');
});
$primary->backup('b');
my @standbys;
for my $name (qw(standby1 standby2))
{
	my $s = PostgreSQL::Test::Cluster->new($name);
	$s->init_from_backup($primary, 'b', has_streaming => 1);
	$s->start;
	push @standbys, $s;
}
# synchronous only now: with no standby yet, the setup's commits would wait
$primary->append_conf(
	'postgresql.conf', q{
synchronous_standby_names = 'ANY 1 (standby1, standby2)'
synchronous_commit = remote_apply
});
$primary->reload;
$primary->poll_query_until('postgres',
	q{SELECT count(*) = 2 FROM pg_stat_replication WHERE sync_state = 'quorum' AND state = 'streaming'})
  or die 'standbys did not become quorum standbys';
pass('both standbys stream as quorum standbys');

# remote_apply: a write acknowledged by the primary is visible on a standby
# at once (with ANY 1, on at least one of them: the quorum; ANY 2 would
# make it every standby, Cassandra's ALL)
my $seen = 0;
for my $i (1 .. 20)
{
	$primary->safe_psql('postgres', "INSERT INTO events VALUES (0, $i, 'read your writes')");
	$seen++ if $standbys[0]->safe_psql('postgres', "SELECT count(*) FROM events WHERE writer = 0 AND seq = $i")
	  + $standbys[1]->safe_psql('postgres', "SELECT count(*) FROM events WHERE writer = 0 AND seq = $i") >= 1;
}
is($seen, 20, 'remote_apply: each acknowledged write is readable on a standby right away');

# a commit is not acknowledged without a standby: with both down it waits
# (statement_timeout does not cover the commit's wait: cancel it; PostgreSQL
# then says it committed only locally)
$_->stop for @standbys;
my ($w_out, $w_err) = ('', '');
my $waiter = IPC::Run::start(
	[ $primary->installed_command('psql'), '-XAtq', '-d', $primary->connstr('postgres'),
	  '-c', q{INSERT INTO events VALUES (0, 100, 'no standby')} ],
	'<', \undef, '>', \$w_out, '2>', \$w_err);
my $waiting = 0;
for (1 .. 100)
{
	$waiting = $primary->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND query LIKE 'INSERT INTO events%'});
	last if $waiting;
	usleep(100_000);
}
is($waiting, 1, 'with both standbys down, a commit waits for one');
$primary->safe_psql('postgres',
	q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'});
$waiter->finish;
like($w_err, qr/canceling wait for synchronous replication.*committed locally, but might not have been replicated/s,
	'cancelled, it is committed on the primary only');
$_->start for @standbys;
$primary->poll_query_until('postgres',
	q{SELECT count(*) = 2 FROM pg_stat_replication WHERE sync_state = 'quorum' AND state = 'streaming'})
  or die 'standbys did not come back as quorum standbys';

# ------------------------------------------------------------ load --

# Writer w prints "w seq" for each acknowledged single-row INSERT and
# "w b first last" for each acknowledged multi-row INSERT (a sorted run).
my @writers;
for my $w (1 .. 3)
{
	my $script = "\\set ON_ERROR_STOP 1\n";
	for my $i (1 .. 4000)
	{
		if ($w == 3 && $i % 20 == 0)
		{
			my ($first, $last) = (100000 + $i * 300, 100000 + $i * 300 + 299);
			$script .= "WITH ins AS (INSERT INTO events SELECT $w, g, 'bulk' FROM generate_series($first, $last) g RETURNING 1) "
			  . "SELECT '$w b $first $last' FROM ins LIMIT 1;\n";
			$script .= "SELECT widecol.flush('events') IS NOT NULL AND false;\n" if $i % 100 == 0;
		}
		else
		{
			$script .= "INSERT INTO events VALUES ($w, $i, repeat('x', 50)) RETURNING '$w ' || seq;\n";
		}
	}
	# from a file: psql exits when the primary dies, a pipe would break
	my $file = $primary->basedir . "/writer$w.sql";
	open(my $fh, '>', $file) or die "$file: $!";
	print $fh $script;
	close($fh);
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ $primary->installed_command('psql'), '-XAtq', '-d', $primary->connstr('postgres'), '-f', $file ],
		'<', \undef, '>', \$out, '2>', \$err);
	push @writers, { h => $h, out => \$out, err => \$err };
}

# let them write for a while, then kill the primary
my $acked = sub {	# lines the writers printed
	my $n = 0;
	$n += () = ${ $_->{out} } =~ /\n/g for @writers;
	return $n;
};
my $deadline = time + 60;
my $bulk_acked = sub { return scalar(() = ${ $writers[2]{out} } =~ / b /g); };
while (($acked->() < 600 || $bulk_acked->() < 3) && time < $deadline)
{
	$_->{h}->pump_nb for @writers;
	usleep(50_000);
}
$primary->stop('immediate');
for my $wr (@writers)
{
	$wr->{h}->finish;
}
my (%single, @bulk);
for my $wr (@writers)
{
	for my $line (split /\n/, ${ $wr->{out} })
	{
		if ($line =~ /^(\d+) b (\d+) (\d+)$/) { push @bulk, [ $1, $2, $3 ]; }
		elsif ($line =~ /^(\d+) (\d+)$/) { $single{"$1 $2"} = 1; }
		elsif ($line eq 'f') { }
		else { die "unexpected writer output '$line'"; }
	}
}
cmp_ok(scalar(keys %single), '>', 300, 'writers had acknowledged single-row writes when the primary died (' . scalar(keys %single) . ')');
cmp_ok(scalar(@bulk), '>', 0, 'and multi-row writes (' . scalar(@bulk) . ' sorted runs of 300)');
like(join('', map { ${ $_->{err} } } @writers), qr/(server closed the connection|terminating connection|connection to server)/,
	'the writers lost their connection to the killed primary');

# ------------------------------------------------------------ failover --

# promote the standby that received the most WAL
my @lsn = map { $_->safe_psql('postgres', q{SELECT pg_last_wal_receive_lsn() - '0/0'}) } @standbys;
my ($new, $other) = $lsn[0] >= $lsn[1] ? @standbys : reverse @standbys;
$new->promote;
$new->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'promotion did not finish';
pass($new->name . ' promoted (received up to ' . ($lsn[0] >= $lsn[1] ? $lsn[0] : $lsn[1]) . ')');

# every acknowledged write is there
my %present = map { $_ => 1 } split /\n/,
  $new->safe_psql('postgres', q{SELECT writer || ' ' || seq FROM events WHERE writer BETWEEN 1 AND 3 AND seq < 100000});
my @lost = grep { !$present{$_} } sort keys %single;
is(scalar(@lost), 0, 'every acknowledged single-row write is on the new primary')
  or diag('lost: ' . join(', ', @lost[0 .. ($#lost < 9 ? $#lost : 9)]));
my $bulk_lost = 0;
for my $b (@bulk)
{
	my ($w, $first, $last) = @$b;
	$bulk_lost++ unless $new->safe_psql('postgres',
		"SELECT count(*) FROM events WHERE writer = $w AND seq BETWEEN $first AND $last") == $last - $first + 1;
}
is($bulk_lost, 0, 'every acknowledged multi-row write is on the new primary, whole');
is($new->safe_psql('postgres', q{SELECT bool_and(ok) FROM widecol.verify('events')}), 't',
	'new primary: verify() finds the table sound');

# the new primary takes writes; the other standby follows it
$new->safe_psql('postgres', q{INSERT INTO events VALUES (9, 1, 'after failover'); SELECT widecol.flush('events');});
$other->enable_streaming($new);
$other->restart;
$new->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_replication WHERE state = 'streaming'})
  or die 'the other standby does not stream from the new primary';
$new->wait_for_catchup($other, 'replay', $new->lsn('insert'));
is( $other->safe_psql('postgres', q{SELECT count(*) || ' ' || md5(string_agg(e::text, '|' ORDER BY writer, seq)) FROM events e}),
	$new->safe_psql('postgres', q{SELECT count(*) || ' ' || md5(string_agg(e::text, '|' ORDER BY writer, seq)) FROM events e}),
	'the other standby follows the new primary: same rows');
is($other->safe_psql('postgres', q{SELECT bool_and(ok) FROM widecol.verify('events')}), 't',
	'the other standby: verify() finds the table sound');

$other->stop;
$new->stop;
done_testing();
