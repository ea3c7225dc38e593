
# 013_readme_examples: every SQL example of README.md marked runnable (a
# fence opened with ```sql runnable) runs as pasted, in the order of the
# README, in one database of a fresh instance, each block in its own psql
# session stopping at the first error.  A block that fails names its line.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;

my $readme = ($ENV{TESTDIR} // '.') . '/README.md';
open(my $fh, '<', $readme) or die "open $readme: $!";
my @blocks;
my ($start, $sql);
my $line = 0;
while (<$fh>)
{
	$line++;
	if (!defined $sql && /^\s*```sql runnable\s*$/)
	{
		($start, $sql) = ($line, '');
	}
	elsif (defined $sql && /^\s*```\s*$/)
	{
		push @blocks, [ $start, $sql ];
		undef $sql;
	}
	elsif (defined $sql)
	{
		s/^  // if /^  /;	# blocks indented under a list item
		$sql .= $_;
	}
}
close $fh;
ok(@blocks >= 5, 'README.md has runnable SQL examples (' . scalar(@blocks) . ')');

my $node = widecol_node('readme', "widecol.max_workers = 0\n");

for my $b (@blocks)
{
	my ($at, $text) = @$b;
	my ($rc, $stdout, $stderr) = $node->psql('postgres', $text, on_error_stop => 1);
	ok($rc == 0 && $stderr !~ /ERROR/, "README.md line $at runs as pasted")
	  or diag("line $at:\n$text\n$stderr");
}

$node->stop;
done_testing();
