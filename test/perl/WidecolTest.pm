# Helpers shared by the TAP tests (test/t/*.pl): finding widecol pages in a
# relation file and damaging them.
package WidecolTest;

use strict;
use warnings;
use Exporter 'import';

our @EXPORT = qw(find_page flip_bytes);

# The first or last page of a relation file whose widecol special space has
# this type (and segment: run id or level-0 generation, when defined):
# (block, page image), or () when there is none.
sub find_page
{
	my ($path, $type, $segment, $which) = @_;
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
		@found = ($b, $page);
		last if $which eq 'first';
	}
	close $fh;
	return @found;
}

# Invert $n bytes at byte $offset of block $blk of a file.
sub flip_bytes
{
	my ($path, $blk, $offset, $n) = @_;
	my $buf;
	open(my $fh, '+<', $path) or die "open $path: $!";
	binmode $fh;
	seek($fh, $blk * 8192 + $offset, 0) or die;
	read($fh, $buf, $n) == $n or die;
	seek($fh, $blk * 8192 + $offset, 0) or die;
	print $fh ($buf ^ ("\xff" x $n));
	close $fh;
	return;
}

1;
