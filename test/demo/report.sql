-- widecol demo report: storage, consistency, capacity, and what was loaded.
-- Run by test/demo.sh after queries.sql; writes the daily counts to the
-- file named by the psql variable counts_csv (for the chart).
SET TimeZone = 'UTC';
\set QUIET on
SET client_min_messages = warning;
\set QUIET off

\echo
\echo '==== Storage: widecol.table_stats after a flush of level 0 ===='
SELECT t AS "table", widecol.flush(t) AS flushed_versions
  FROM unnest(ARRAY['img.images', 'img.device_daily_images', 'img.images_by_tag', 'img.batch_images']::regclass[]) t;
SELECT t AS "table", s.runs, s.versions, s.partitions, pg_size_pretty(s.raw_bytes) AS raw,
       pg_size_pretty(s.compressed_bytes) AS compressed, s.compression_ratio AS ratio,
       pg_size_pretty(s.total_bytes) AS on_disk,
       round(s.total_bytes::numeric / greatest(s.versions, 1), 1) AS bytes_per_row
  FROM unnest(ARRAY['img.images', 'img.device_daily_images', 'img.images_by_tag', 'img.batch_images']::regclass[]) t,
       widecol.table_stats(t) s;

\echo
\echo '==== Query tables in step with img.images: widecol.check_query_table ===='
SELECT c.query_table, c.expected_rows, c.actual_rows, c.missing, c.extra, c.different, c.ok
  FROM widecol.query_table q, widecol.check_query_table(q.query_table) c ORDER BY q.id;

\echo
\echo '==== Capacity: the worked example (300-byte rows, 50 million a day, RF 3, 30 days, 2.25x) ===='
SELECT step, figure, pretty, pretty_binary, formula
  FROM widecol.capacity_estimate(300, 50000000, 30, 3, 2.25, 1.5);

\echo
\echo '==== Capacity of this store at 50 million images a day, 30 days, RF 3 (measured row sizes and compression) ===='
SELECT count(*) AS images, count(*) / greatest(count(DISTINCT widecol.day_bucket(capture_time)), 1) AS images_per_day
  FROM img.images \gset
SELECT step, figure, pretty, formula
  FROM widecol.capacity_estimate('img.device_daily_images'::regclass, 50e6, 30, 3);
WITH t(rel, rows_per_image) AS (
  SELECT r, (SELECT versions FROM widecol.table_stats(r))::numeric / greatest(:images, 1)
    FROM unnest(ARRAY['img.images', 'img.device_daily_images', 'img.images_by_tag', 'img.batch_images']::regclass[]) r)
SELECT t.rel::text AS "table", round(t.rows_per_image, 2) AS rows_per_image,
       widecol.pretty_bytes(e.bytes) AS disk_to_provision
  FROM t, widecol.capacity_estimate(t.rel, 50e6 * t.rows_per_image, 30, 3) e WHERE e.step = 7
UNION ALL
SELECT 'whole store', NULL, widecol.pretty_bytes(sum(e.bytes))
  FROM t, widecol.capacity_estimate(t.rel, 50e6 * t.rows_per_image, 30, 3) e WHERE e.step = 7;

\echo
\echo '==== Report: images per day (all devices) ===='
SELECT c.day, sum(c.images) AS images, count(*) AS devices,
       min(c.images) AS min_per_device, round(avg(c.images), 1) AS avg_per_device, max(c.images) AS max_per_device
  FROM img.daily_counts('2000-01-01', '2100-01-01', 'device') c GROUP BY c.day ORDER BY c.day;

\echo
\echo '==== Report: images per device per day (the 10 busiest devices) ===='
WITH c AS (SELECT * FROM img.daily_counts('2000-01-01', '2100-01-01', 'device')),
     top AS (SELECT key FROM c GROUP BY key ORDER BY sum(images) DESC, key LIMIT 10)
SELECT c.key AS device, to_char(c.day, 'MM-DD') AS day, c.images
  FROM c JOIN top USING (key) ORDER BY c.key, c.day \crosstabview device day images

\echo
\echo '==== Report: tag distribution ===='
WITH c AS (SELECT key AS tag, sum(images) AS images FROM img.daily_counts('2000-01-01', '2100-01-01', 'tag') GROUP BY key)
SELECT tag, images, round(100.0 * images / :images, 1) AS pct_of_images,
       repeat('#', (50.0 * images / max(images) OVER ())::int) AS histogram
  FROM c ORDER BY images DESC;
SELECT cardinality(tags) AS tags_per_image, count(*) AS images, round(100.0 * count(*) / :images, 1) AS pct
  FROM img.images GROUP BY 1 ORDER BY 1;

-- daily counts by tag and in total, for the chart
\if :{?counts_csv}
\set QUIET on
\o :counts_csv
COPY (SELECT day, key, images FROM img.daily_counts('2000-01-01', '2100-01-01', 'tag')
      UNION ALL
      SELECT day, 'all images', images FROM img.daily_counts('2000-01-01', '2100-01-01', 'total')
      ORDER BY 1, 2) TO STDOUT WITH (FORMAT csv, HEADER);
\o
\set QUIET off
\endif
