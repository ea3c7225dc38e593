# Helpers shared by the TAP tests (test/t/*.pl): nodes with widecol
# preloaded, server-written COPY files, finding widecol pages in a relation
# file and damaging them.
package WidecolTest;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use Test::More;

our @EXPORT = qw(widecol_node shard_nodes copy_to_file fails_like pages_of_type find_page flip_bytes flip_payload xor_bytes);

# A new node NAME, initialized (with INIT ARGS, as Cluster->init takes them),
# with shared_preload_libraries = 'widecol' and then the postgresql.conf
# lines CONF, started.
sub widecol_node
{
	my ($name, $conf, @init) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(@init);
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'widecol'\n$conf");
	$node->start;
	return $node;
}

# A coordinator and two shards (nodes coord, shard1 and shard2, each a
# widecol_node with CONF and the extension created); on the coordinator
# postgres_fdw and dblink, foreign servers s1 and s2 for the shards and user
# mappings for them: ($coord, $shard1, $shard2).
sub shard_nodes
{
	my ($conf) = @_;
	my @nodes;
	for my $name (qw(coord shard1 shard2))
	{
		my $node = widecol_node($name, $conf);
		$node->safe_psql('postgres', 'CREATE EXTENSION widecol');
		push @nodes, $node;
	}
	my ($coord, $s1, $s2) = @nodes;
	$coord->safe_psql('postgres', qq{
CREATE EXTENSION postgres_fdw;
CREATE EXTENSION dblink;
CREATE SERVER s1 FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '@{[$s1->host]}', port '@{[$s1->port]}', dbname 'postgres');
CREATE SERVER s2 FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '@{[$s2->host]}', port '@{[$s2->port]}', dbname 'postgres');
CREATE USER MAPPING FOR CURRENT_USER SERVER s1;
CREATE USER MAPPING FOR CURRENT_USER SERVER s2;
});
	return @nodes;
}

# Two tests: SQL fails on NODE, with an error (verbose: with its SQLSTATE)
# that matches RE.
sub fails_like
{
	my ($node, $sql, $re, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	isnt($ret, 0, "$name fails");
	like($err, $re, "$name: error");
	return;
}

# The rows of QUERY written by NODE's server (COPY ... TO) into DIR/NAME.copy;
# returns that path.
sub copy_to_file
{
	my ($node, $dir, $name, $query) = @_;
	my $f = "$dir/$name.copy";
	$node->safe_psql('postgres', "COPY ($query) TO '$f'");
	return $f;
}

# Every page of a relation file whose widecol special space has this type
# (and segment: run id or level-0 generation, when defined):
# ([block, page image], ...).
sub pages_of_type
{
	my ($path, $type, $segment) = @_;
	my @found;
	open(my $fh, '<', $path) or die "open $path: $!";
	binmode $fh;
	for (my $b = 1; $b * 8192 < -s $path; $b++)
	{
		my $page;
		seek($fh, $b * 8192, 0) or die;
		read($fh, $page, 8192) == 8192 or die;
		my $special = unpack('v', substr($page, 16, 2));
		next if $special == 0 || $special > 8192 - 24;
		next unless unpack('v', substr($page, $special, 2)) == $type;
		next if defined $segment && unpack('Q<', substr($page, $special + 8, 8)) != $segment;
		push @found, [ $b, $page ];
	}
	close $fh;
	return @found;
}

# The first or last such page: (block, page image), or () when there is none.
sub find_page
{
	my ($path, $type, $segment, $which) = @_;
	my @all = pages_of_type($path, $type, $segment);
	return () unless @all;
	return @{ $which eq 'first' ? $all[0] : $all[-1] };
}

# XOR the bytes at byte $offset of block $blk of a file with $mask (a string).
sub xor_bytes
{
	my ($path, $blk, $offset, $mask) = @_;
	my $n = length($mask);
	my $buf;
	open(my $fh, '+<', $path) or die "open $path: $!";
	binmode $fh;
	seek($fh, $blk * 8192 + $offset, 0) or die;
	read($fh, $buf, $n) == $n or die;
	seek($fh, $blk * 8192 + $offset, 0) or die;
	print $fh ($buf ^ $mask);
	close $fh;
	return;
}

# Invert $n bytes at byte $offset of block $blk of a file.
sub flip_bytes
{
	my ($path, $blk, $offset, $n) = @_;
	xor_bytes($path, $blk, $offset, "\xff" x $n);
	return;
}

# Invert $n bytes in the middle of the payload of block $blk (between the
# page header and pd_lower), wherever the payload ends; returns pd_lower.
sub flip_payload
{
	my ($path, $blk, $n) = @_;
	my $page;
	open(my $fh, '<', $path) or die "open $path: $!";
	binmode $fh;
	seek($fh, $blk * 8192, 0) or die;
	read($fh, $page, 8192) == 8192 or die;
	close $fh;
	my $lower = unpack('v', substr($page, 12, 2));
	die "block $blk has no payload to damage ($lower)" if $lower < 24 + 2 * $n;
	flip_bytes($path, $blk, int((24 + $lower - $n) / 2), $n);
	return $lower;
}

1;
