-- widecol demo queries.  Run by test/demo.sh after loading, with psql
-- variables device and day; the defaults below match the generator's
-- defaults (test/gen/image_rows.py: cam-0001.., start 2025-01-01, 7 days).
\if :{?device}
\else
\set device cam-0001
\endif
\if :{?day}
\else
\set day 2025-01-02
\endif
\timing on

\echo
\echo '==== Latest 20 images of device' :'device' 'on' :'day' '===='
SELECT capture_time, image_id, object_key, width, height
  FROM device_daily_images
 WHERE device_id = :'device' AND day_bucket = :'day'
 ORDER BY capture_time DESC
 LIMIT 20;

\echo
\echo '==== Latest 10 images of device' :'device' 'across 3 days (merge of 3 partitions) ===='
SELECT day_bucket, capture_time, image_id, width, height
  FROM device_daily_images
 WHERE device_id = :'device'
   AND day_bucket IN (:'day'::date - 1, :'day'::date, :'day'::date + 1)
 ORDER BY capture_time DESC
 LIMIT 10;

\echo
\echo '==== Images per day for device' :'device' 'across the same 3 days ===='
SELECT day_bucket, count(*) AS images, min(capture_time) AS first, max(capture_time) AS last
  FROM device_daily_images
 WHERE device_id = :'device'
   AND day_bucket IN (:'day'::date - 1, :'day'::date, :'day'::date + 1)
 GROUP BY day_bucket
 ORDER BY day_bucket;

\echo
\echo '==== Latest 20 images tagged crack on' :'day' '===='
SELECT capture_time, device_id, object_key
  FROM images_by_tag
 WHERE tag = 'crack' AND day_bucket = :'day'
 ORDER BY capture_time DESC
 LIMIT 20;

\echo
\echo '==== Images tagged crack on' :'day' '(count) ===='
SELECT count(*) AS crack_images
  FROM images_by_tag
 WHERE tag = 'crack' AND day_bucket = :'day';

\echo
\echo '==== Images per day, all devices (full scan) ===='
SELECT day_bucket, count(*) AS images, count(DISTINCT device_id) AS devices
  FROM device_daily_images
 GROUP BY day_bucket
 ORDER BY day_bucket;

\echo
\echo '==== EXPLAIN ANALYZE: latest 20 images of one device on one day ===='
EXPLAIN (ANALYZE, BUFFERS)
SELECT capture_time, image_id, object_key, width, height
  FROM device_daily_images
 WHERE device_id = :'device' AND day_bucket = :'day'
 ORDER BY capture_time DESC
 LIMIT 20;

\timing off

\echo
\echo '==== Table sizes ===='
SELECT 'device_daily_images' AS "table", count(*) AS "rows",
       pg_size_pretty(pg_total_relation_size('device_daily_images')) AS total_size,
       round(pg_total_relation_size('device_daily_images')::numeric
             / greatest(count(*), 1), 1) AS bytes_per_row
  FROM device_daily_images
UNION ALL
SELECT 'images_by_tag', count(*),
       pg_size_pretty(pg_total_relation_size('images_by_tag')),
       round(pg_total_relation_size('images_by_tag')::numeric / greatest(count(*), 1), 1)
  FROM images_by_tag
 ORDER BY 1;

\echo
\echo '==== widecol statistics ===='
-- widecol.table_stats(regclass) and widecol.capacity_estimate(...) come
-- with later issues; call them only if this build has them.  Errors here
-- (for instance a different signature) are shown but do not stop the demo.
SELECT count(*) FILTER (WHERE p.proname = 'table_stats') > 0 AS has_table_stats,
       count(*) FILTER (WHERE p.proname = 'capacity_estimate') > 0 AS has_capacity_estimate
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'widecol' \gset
\set ON_ERROR_STOP 0
\set QUIET on
\x auto
\set QUIET off
\if :has_table_stats
SELECT 'device_daily_images' AS "table", * FROM widecol.table_stats('device_daily_images')
UNION ALL
SELECT 'images_by_tag', * FROM widecol.table_stats('images_by_tag');
\else
\echo 'widecol.table_stats() is not in this build: it arrives with a later issue.'
\endif
\if :has_capacity_estimate
SELECT p.oid::regprocedure AS "function" FROM pg_proc p
 WHERE p.pronamespace = 'widecol'::regnamespace AND p.proname = 'capacity_estimate';
SELECT * FROM widecol.capacity_estimate('device_daily_images');
\else
\echo 'widecol.capacity_estimate() is not in this build: it arrives with a later issue.'
\endif
\set QUIET on
\x off
\set QUIET off
\set ON_ERROR_STOP 1
