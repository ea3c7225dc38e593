-- widecol demo queries over the image store of schema.sql.  Run by
-- test/demo.sh after loading, with psql variables device, day and tag; the
-- defaults below match the generator's defaults (test/gen/image_rows.py:
-- cam-0001.., start 2025-01-01, 7 days).  Every query goes through one of
-- the store's functions; each is shown with its result and its time.
\if :{?device}
\else
\set device cam-0001
\endif
\if :{?day}
\else
\set day 2025-01-02
\endif
\if :{?tag}
\else
\set tag crack
\endif
SET TimeZone = 'UTC';
-- one image of the device on that day, for the point lookup below
SELECT image_id AS some_image, batch_id AS some_batch
  FROM img.device_images(:'device', :'day', :'day'::date + 1, 1) \gset
\timing on

\echo
\echo '==== 1. One image by id: img.image(' :'some_image' ') ===='
SELECT image_id, device_id, capture_time, object_key, width, height, tags
  FROM img.image(:'some_image');

\echo
\echo '==== 2. Latest 10 images of' :'device' 'on' :'day' ': img.device_images ===='
SELECT capture_time, image_id, object_key, width, height, tags
  FROM img.device_images(:'device', :'day', :'day'::date + 1, 10);

\echo
\echo '==== 3. The next page: after the last row of query 2 ===='
SELECT capture_time AS last_time, image_id AS last_id
  FROM img.device_images(:'device', :'day', :'day'::date + 1, 10) OFFSET 9 \gset
SELECT capture_time, image_id, object_key
  FROM img.device_images(:'device', :'day', :'day'::date + 1, 10, (:'last_time', :'last_id'));

\echo
\echo '==== 4. Latest 10 images of' :'device' 'over 3 days (one seek over 3 day buckets) ===='
SELECT day, capture_time, image_id, object_key
  FROM img.device_images(:'device', :'day'::date - 1, :'day'::date + 2, 10);

\echo
\echo '==== 5. Latest 10 images tagged' :'tag' 'on' :'day' ': img.tag_images ===='
SELECT capture_time, device_id, image_id, tags
  FROM img.tag_images(:'tag', :'day', :'day'::date + 1, 10);

\echo
\echo '==== 6. Latest 10 images tagged both leak and' :'tag' 'over 7 days: img.tag_images_all ===='
SELECT capture_time, device_id, image_id, tags
  FROM img.tag_images_all(ARRAY['leak', :'tag'], :'day'::date - 1, :'day'::date + 6, 10);

\echo
\echo '==== 7. Object keys of upload batch' :'some_batch' '(first 5 of them): img.batch_object_keys ===='
SELECT count(*) AS images_in_batch FROM img.batch_object_keys(:'some_batch');
SELECT * FROM img.batch_object_keys(:'some_batch') LIMIT 5;

\echo
\echo '==== 8. Daily counts on' :'day' 'by tag and in total: img.daily_counts (a counter table) ===='
SELECT * FROM img.daily_counts(:'day', :'day', 'tag');
SELECT * FROM img.daily_counts(:'day', :'day', 'total');

\echo
\echo '==== 9. EXPLAIN ANALYZE of a bucketed query: 20 latest images of' :'device' 'over 7 days ===='
\echo 'img.device_images is inlined: one WidecolSeek over the 7 (device, day) partitions,'
\echo 'merged lazily in capture-time order, no Sort, stopped after 20 rows.'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
SELECT capture_time, image_id, object_key
  FROM img.device_images(:'device', :'day'::date - 3, :'day'::date + 4, 20);

\timing off
