# Helpers shared by the TAP tests (test/t/*.pl): finding widecol pages in a
# relation file and damaging them.
package WidecolTest;

use strict;
use warnings;
use Exporter 'import';

our @EXPORT = qw(pages_of_type find_page flip_bytes xor_bytes);

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

1;
