
# 012_image_store_replays: a message-queue consumer's write pattern on an
# image store.  pgbench clients replay a small set of image ids at once:
# identical replays, replays that move an image to another device, day and
# tags, deletes, updates, statements of many images (which lock the whole
# table), and transactions that roll back.  At the end every query table
# and the daily counts must equal a recount (widecol.check_image_store),
# and the counts must equal the images.
#
# WIDECOL_REPLAY_SECONDS lengthens the run (the issue's figure: 15 s).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/perl';
use WidecolTest;

my $seconds = $ENV{WIDECOL_REPLAY_SECONDS} // 6;
my $clients = 4;

my $node = widecol_node('replays', qq{
widecol.max_workers = 0
widecol.level0_max_size = 64
deadlock_timeout = 100ms
});
$node->safe_psql('postgres', q{
	CREATE EXTENSION widecol;
	SELECT count(*) FROM widecol.create_image_store('img');
	-- one image as message n would carry it; v varies device, day and tags
	CREATE FUNCTION put(n int, v int) RETURNS void LANGUAGE sql AS $$
	  INSERT INTO img.images (image_id, device_id, capture_time, batch_id, object_store, object_key, tags)
	  VALUES (md5(n::text)::uuid, 'cam-' || (v % 3), timestamptz '2025-02-01 08:00+00' + (v % 2) * interval '1 day',
	          'batch-' || (n % 4), 's3://b', 'k/' || n || '/' || v, ARRAY['t' || (v % 4), 'all'])
	$$;
});

my $tmp = PostgreSQL::Test::Utils::tempdir;
my %scripts = (
	# the same message again (v fixed per id)
	identical => "\\set n random(1, 50)\nSELECT put(:n, :n);\n",
	# a changed message: another device, day and tags
	changed => "\\set n random(1, 50)\n\\set v random(1, 12)\nSELECT put(:n, :v);\n",
	delete => "\\set n random(1, 50)\nDELETE FROM img.images WHERE image_id = md5(:n::text)::uuid;\n",
	update => "\\set n random(1, 50)\n"
	  . "UPDATE img.images SET device_id = 'cam-u', tags = tags || 'u'::text WHERE image_id = md5(:n::text)::uuid;\n",
	# more images than the key locks a statement takes: one lock for the table
	many => "\\set v random(1, 12)\nSELECT put(n, :v) FROM generate_series(1, 50) n;\n"
	  . "INSERT INTO img.images (image_id, device_id, capture_time, tags)\n"
	  . "  SELECT md5(n::text)::uuid, 'cam-m', timestamptz '2025-02-01 09:00+00', ARRAY['m'] FROM generate_series(1, 50, 3) n;\n",
	rollback => "\\set n random(1, 50)\nBEGIN;\nSELECT put(:n, 99);\nDELETE FROM img.images WHERE image_id = md5((:n % 50 + 1)::text)::uuid;\nROLLBACK;\n",
);
my @args;
for my $name (sort keys %scripts)
{
	PostgreSQL::Test::Utils::append_to_file("$tmp/$name.sql", $scripts{$name});
	my $weight = $name eq 'many' ? 1 : ($name =~ /identical|changed/ ? 6 : 2);
	push @args, '-f', "$tmp/$name.sql\@$weight";
}

# Deadlocks between two statements of many images may abort one of them
# (as with heap); pgbench retries them.
my ($out, $err) = run_command([
	'pgbench', '-n', '-c', $clients, '-j', 2, '-T', $seconds,
	'--max-tries=20', @args, '-h', $node->host, '-p', $node->port, 'postgres' ]);
note($out);
like($out, qr/number of transactions actually processed: [1-9]/, 'pgbench ran');
like($out, qr/number of failed transactions: 0 /, 'no transaction failed');

is($node->safe_psql('postgres',
	q{SELECT string_agg(object || ': ' || expected_rows || ' expected, ' || actual_rows || ' stored', '; ')
	    FILTER (WHERE NOT ok) FROM widecol.check_image_store('img')}),
	'', 'every query table and the daily counts equal a recount');
is($node->safe_psql('postgres', q{
	SELECT (SELECT count(*) FROM img.images) = (SELECT coalesce(sum(images), 0) FROM img.daily_counts WHERE dimension = 'total')
	   AND (SELECT count(*) FROM img.images) = (SELECT coalesce(sum(images), 0) FROM img.daily_counts WHERE dimension = 'device')}),
	't', 'the daily counts count each image once');
is($node->safe_psql('postgres',
	q{SELECT count(*) FROM img.device_daily_images}),
	$node->safe_psql('postgres', q{SELECT count(*) FROM img.images}),
	'one device row per image');

$node->stop;
done_testing();
