# 016_fuzz: damage random bytes of widecol pages and check that nothing
# reads them silently.  Each trial table holds the same rows as a heap table
# (two sorted runs, level 0 with updates, new rows and a delete over them);
# one page of each is damaged while the server is down: a level-0 page, a
# run's header, index, bloom, key, value or value-directory page, in turn.
# Then a full scan and a seek per partition must either return exactly the
# heap table's rows (the damage was harmless) or fail with an error naming
# the block and relation, and then widecol.verify() must report the table too.
# Silent wrong answers and crashes must be zero.
#
# WIDECOL_FUZZ_SEED picks the random sequence (printed); WIDECOL_FUZZ_TABLES
# the number of trials (default 49, 7 of each page kind; about 25 s).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;

my $seed = $ENV{WIDECOL_FUZZ_SEED} // time();
my $ntables = $ENV{WIDECOL_FUZZ_TABLES} // 49;
srand($seed);
note "fuzz seed $seed, $ntables trials";

# no data checksums: widecol's own checks must catch it all
my $node = widecol_node('fuzz', qq{
widecol.max_workers = 0
statement_timeout = '20s'
});

# the rows: 20 partitions; run 1, run 2 (newer values for a third of run 1's
# keys and new keys), then level 0: updates, new rows, deletes
my $load = q{
	INSERT INTO %1$s SELECT g %% 20, g, md5(g::text) || repeat('x', g %% 50) FROM generate_series(1, 3000) g;
	INSERT INTO %1$s SELECT g %% 20, g, 'two-' || md5(g::text) FROM generate_series(1, 4500, 3) g;
	INSERT INTO %1$s SELECT g %% 20, g, 'l0-' || g FROM generate_series(2, 600, 7) g;
	INSERT INTO %1$s SELECT g %% 20, g, 'l0new-' || g FROM generate_series(5001, 5150) g;
	DELETE FROM %1$s WHERE pk = 3 AND ck BETWEEN 100 AND 400;
	DELETE FROM %1$s WHERE pk = 7 AND ck = 5007;
};
$node->safe_psql('postgres', q{
	CREATE EXTENSION widecol;
	CREATE TABLE h (pk int, ck int, v text, PRIMARY KEY (pk, ck));
	INSERT INTO h SELECT g % 20, g, md5(g::text) || repeat('x', g % 50) FROM generate_series(1, 3000) g;
	INSERT INTO h SELECT g % 20, g, 'two-' || md5(g::text) FROM generate_series(1, 4500, 3) g
	  ON CONFLICT (pk, ck) DO UPDATE SET v = excluded.v;
	INSERT INTO h SELECT g % 20, g, 'l0-' || g FROM generate_series(2, 600, 7) g
	  ON CONFLICT (pk, ck) DO UPDATE SET v = excluded.v;
	INSERT INTO h SELECT g % 20, g, 'l0new-' || g FROM generate_series(5001, 5150) g;
	DELETE FROM h WHERE pk = 3 AND ck BETWEEN 100 AND 400;
	DELETE FROM h WHERE pk = 7 AND ck = 5007;
});

my $sql = '';
for my $i (1 .. $ntables)
{
	$sql .= "CREATE TABLE t$i (pk int, ck int, v text) USING widecol
	  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');\n";
	$sql .= sprintf($load, "t$i");
}
$node->safe_psql('postgres', $sql);

# what every read must return
my $scan = q{SELECT md5(string_agg(format('%%s|%%s|%%s', pk, ck, v), ',' ORDER BY pk, ck)) FROM %s};
my $seek = q{SELECT md5(string_agg(format('%%s|%%s|%%s', s.pk, s.ck, s.v), ',' ORDER BY s.pk, s.ck))
	FROM generate_series(0, 19) p, LATERAL (SELECT * FROM %s WHERE pk = p) s};
my $want_scan = $node->safe_psql('postgres', sprintf($scan, 'h'));
my $want_seek = $node->safe_psql('postgres', sprintf($seek, 'h'));
is($node->safe_psql('postgres', sprintf($scan, 't1')), $want_scan, 'undamaged: scan equals heap');
is($node->safe_psql('postgres', "SET enable_seqscan = off; " . sprintf($seek, 't1')), $want_seek,
	'undamaged: seeks equal heap');
like($node->safe_psql('postgres', "EXPLAIN SELECT * FROM t1 WHERE pk = 1"), qr/WidecolSeek/, 'seeks are planned');
is($node->safe_psql('postgres', "SELECT count(*) FROM widecol.runs('t1')"), '2', 'two runs');
ok($node->safe_psql('postgres', "SELECT widecol.level0_pages('t1')") > 0, 'and level 0');
is($node->safe_psql('postgres', "SELECT bool_and(ok) FROM widecol.verify('t1')"), 't', 'verify ok');

my %path;
$path{$_} = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('t$_')")
  for 1 .. $ntables;
$node->stop;

# damage: one page per table, the kinds in turn
my @kinds = ([2, 'level0'], [3, 'header'], [5, 'index'], [6, 'bloom'], [4, 'key'],
	[8, 'value'], [9, 'valuedir']);
my %trial;
for my $i (1 .. $ntables)
{
	my ($type, $kind) = @{ $kinds[($i - 1) % @kinds] };
	my @pages = pages_of_type($path{$i}, $type);
	next unless @pages;
	my ($blk, $page) = @{ $pages[int(rand(@pages))] };
	# bytes in use: the page header and line pointers, the items or payload, the special space
	my $lower = unpack('v', substr($page, 12, 2));
	my $upper = unpack('v', substr($page, 14, 2));
	my @used = (0 .. $lower - 1, $upper .. 8191);
	my @what;
	if (rand() < 0.5)
	{
		for (1 .. 1 + int(rand(4)))
		{
			my $at = $used[int(rand(@used))];
			my $x = 1 + int(rand(255));
			xor_bytes($path{$i}, $blk, $at, chr($x));
			push @what, sprintf('%d^%02x', $at, $x);
		}
	}
	else
	{
		my $at = $used[int(rand(@used))];
		my $n = 1 + int(rand(32));
		$n = 8192 - $at if $at + $n > 8192;
		for my $o ($at .. $at + $n - 1) { xor_bytes($path{$i}, $blk, $o, chr(1 + int(rand(255)))); }
		push @what, "$at+$n";
	}
	$trial{$i} = "$kind block $blk: " . join(',', @what);
}
$node->start;

my %tally = (trials => 0, harmless => 0, reported => 0, silent => 0, crashes => 0);
my @bad;
for my $i (sort { $a <=> $b } keys %trial)
{
	$tally{trials}++;
	my ($ok, $errors, $wrong) = (1, '', 0);
	for my $q (sprintf($scan, "t$i"), "SET enable_seqscan = off; " . sprintf($seek, "t$i"))
	{
		my ($ret, $out, $err) = $node->psql('postgres', $q);
		if ($ret != 0)
		{
			$errors .= $err;
			next;
		}
		$wrong = 1 if $out ne ($q =~ /LATERAL/ ? $want_seek : $want_scan);
	}
	if ($errors =~ /server closed the connection|terminated by signal|connection to server/)
	{
		$tally{crashes}++;
		push @bad, "t$i ($trial{$i}): crash: $errors";
		$node->restart;
		next;
	}
	my ($vret, $vout, $verr) = $node->psql('postgres', "SELECT bool_and(ok) FROM widecol.verify('t$i')");
	my $verified_bad = $vret != 0 || $vout ne 't';
	if ($errors eq '' && !$wrong)
	{
		$tally{harmless}++;
		next;
	}
	if ($errors ne '' && !$wrong && $errors =~ /block \d+ of relation/ && $verified_bad && $vret == 0)
	{
		$tally{reported}++;
		next;
	}
	$tally{silent}++;
	push @bad, "t$i ($trial{$i}): " . ($wrong ? 'wrong rows' : "error: $errors")
	  . "; verify: " . ($vret ? $verr : $vout);
}
note "fuzz tally (seed $seed): " . join(', ', map { "$_ $tally{$_}" } qw(trials reported harmless silent crashes));
diag($_) for @bad;
is($tally{crashes}, 0, 'no crash');
is($tally{silent}, 0, 'no damaged page read silently or missed by verify');
ok($tally{trials} >= $ntables - 2, "$tally{trials} pages damaged");
ok($tally{reported} > 0, "$tally{reported} reported");
ok($node->safe_psql('postgres', 'SELECT 1') eq '1', 'server still up');
$node->stop;
done_testing();

