-- image store: widecol.create_image_store builds the image-metadata model
-- (images keyed by id, device/day and tag/day query tables, batch table,
-- daily counter table)
-- and its functions.  Every function's answer is compared with the same
-- question asked in plain SQL of a heap copy of the images.
\set VERBOSITY default
\set SHOW_CONTEXT never
SET max_parallel_workers_per_gather = 0;
SET TimeZone = 'UTC';

-- time buckets
SELECT widecol.day_bucket('2025-01-01 23:30-05');
SELECT * FROM widecol.day_buckets('2025-01-01 10:00+00', '2025-01-04 00:00+00');
SELECT * FROM widecol.day_buckets('2025-01-01 10:00+00', '2025-01-04 00:00:00.000001+00');
SELECT count(*) FROM widecol.day_buckets('2025-01-02', '2025-01-02');
SELECT * FROM widecol.buckets('2025-01-01 10:20+00', '2025-01-01 12:00+00', '30 minutes');
SELECT * FROM widecol.buckets('2025-01-01 10:20+00', '2025-01-15 00:00+00', '1 week');

SELECT * FROM widecol.create_image_store('img');
SELECT c.relname, a.amname, c.reloptions FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relnamespace = 'img'::regnamespace ORDER BY 1;
SELECT query_table, base, partition_key, clustering_key FROM widecol.query_table ORDER BY id;
-- a store with a TTL: every table gets it
SELECT count(*) FROM widecol.create_image_store('img_ttl', '90 days');
SELECT c.relname, c.reloptions FROM pg_class c
 WHERE c.relnamespace = 'img_ttl'::regnamespace AND c.relkind = 'r' ORDER BY 1;
DROP SCHEMA img_ttl CASCADE;
-- not twice in one schema
SELECT * FROM widecol.create_image_store('img');

-- 8 cameras x 6 days, an image every 20 minutes per camera, 0-3 tags,
-- batches of 50; loaded by COPY (one statement) and by single-row inserts
CREATE TABLE images_heap AS
SELECT ('00000000-0000-4000-8000-' || lpad(to_hex(d * 100000 + i), 12, '0'))::uuid AS image_id,
       'cam-' || d AS device_id,
       timestamptz '2025-01-01 00:07+00' + i * interval '20 minutes' + d * interval '1 minute' AS capture_time,
       'batch-' || (i / 50) AS batch_id,
       's3://images' AS object_store,
       format('raw/cam-%s/%s.jpg', d, i) AS object_key,
       1920 AS width, 1080 AS height, md5(d || '/' || i) AS content_hash,
       (ARRAY['{crack}', '{rust,crack}', '{}', '{ok}', '{crack,leak,rust}', NULL, '{rust}'])[1 + (i * 3 + d) % 7]::text[] AS tags
  FROM generate_series(1, 8) d, generate_series(0, 6 * 72 - 1) i;
\copy (SELECT * FROM images_heap WHERE device_id <> 'cam-8') TO 'results/widecol_image_store.csv'
\copy img.images FROM 'results/widecol_image_store.csv'
DO $$
DECLARE r images_heap;
BEGIN
  FOR r IN SELECT * FROM images_heap WHERE device_id = 'cam-8' AND capture_time < '2025-01-02' LOOP
    INSERT INTO img.images SELECT r.*;
  END LOOP;
END $$;
INSERT INTO img.images SELECT * FROM images_heap WHERE device_id = 'cam-8' AND capture_time >= '2025-01-02';
-- changes: tags edited, images deleted, an image moved to another batch and time
UPDATE img.images SET tags = '{crack,blur}' WHERE device_id = 'cam-3' AND capture_time BETWEEN '2025-01-03' AND '2025-01-03 06:00+00';
UPDATE images_heap SET tags = '{crack,blur}' WHERE device_id = 'cam-3' AND capture_time BETWEEN '2025-01-03' AND '2025-01-03 06:00+00';
DELETE FROM img.images WHERE device_id = 'cam-5' AND capture_time BETWEEN '2025-01-04 10:00+00' AND '2025-01-04 14:00+00';
DELETE FROM images_heap WHERE device_id = 'cam-5' AND capture_time BETWEEN '2025-01-04 10:00+00' AND '2025-01-04 14:00+00';
UPDATE img.images SET batch_id = 'batch-moved', capture_time = capture_time + interval '1 day' WHERE object_key = 'raw/cam-2/10.jpg';
UPDATE images_heap SET batch_id = 'batch-moved', capture_time = capture_time + interval '1 day' WHERE object_key = 'raw/cam-2/10.jpg';
-- upserts: images written again under their id (an INSERT replaces the
-- row): another device, time and tags for many, another batch for one
INSERT INTO img.images
SELECT image_id, 'cam-1', capture_time + interval '2 hours', batch_id, object_store, object_key || '.v2',
       width, height, content_hash, '{rust,again}'
  FROM images_heap WHERE device_id = 'cam-6' AND capture_time < '2025-01-01 12:00+00';
UPDATE images_heap SET device_id = 'cam-1', capture_time = capture_time + interval '2 hours',
       object_key = object_key || '.v2', tags = '{rust,again}'
 WHERE device_id = 'cam-6' AND capture_time < '2025-01-01 12:00+00';
INSERT INTO img.images VALUES ('00000000-0000-4000-8000-0000000493ea', 'cam-3', '2025-01-01 03:30+00', 'batch-up',
                               's3://images', 'raw/cam-3/10.jpg', 1920, 1080, 'c10863b901ee45e6e5885e2c1c69f5c0', NULL);
UPDATE images_heap SET batch_id = 'batch-up', tags = NULL WHERE image_id = '00000000-0000-4000-8000-0000000493ea';
ANALYZE img.images, img.device_daily_images, img.images_by_tag, img.batch_images, img.daily_counts, images_heap;
SELECT (SELECT count(*) FROM img.images) AS images, (SELECT count(*) FROM images_heap) AS heap,
       (SELECT count(*) FROM img.device_daily_images) AS device_rows,
       (SELECT count(*) FROM img.images_by_tag) AS tag_rows,
       (SELECT count(*) FROM img.batch_images) AS batch_rows;
SELECT q.query_table, c.ok, c.expected_rows, c.missing, c.extra, c.different
  FROM widecol.query_table q, widecol.check_query_table(q.query_table) c ORDER BY q.id;

-- compare a query with its heap counterpart: same rows in the same order
\i sql/compare.inc
-- and as sets, both ways
CREATE FUNCTION same_set(q text, h text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE a bigint; b bigint; n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x', q, h) INTO a;
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x', h, q) INTO b;
  EXECUTE format('SELECT count(*) FROM (%s) x', q) INTO n;
  RETURN format('%s rows, %s not in heap, %s missing', n, a, b);
END $$;

-- image(id)
SELECT * FROM img.image('00000000-0000-4000-8000-0000000493ea');
SELECT same($$SELECT * FROM img.image('00000000-0000-4000-8000-0000000493ea')$$,
            $$SELECT * FROM images_heap WHERE image_id = '00000000-0000-4000-8000-0000000493ea'$$);
SELECT count(*) FROM img.image('00000000-0000-4000-8000-000000000000');

-- device_images: newest first across day buckets, [from, to)
SELECT capture_time, image_id, object_key, tags
  FROM img.device_images('cam-3', '2025-01-02 22:00+00', '2025-01-03 02:00+00', 5);
SELECT same($$SELECT image_id FROM img.device_images('cam-3', '2025-01-02 22:00+00', '2025-01-03 02:00+00', 5)$$,
            $$SELECT image_id FROM images_heap WHERE device_id = 'cam-3' AND capture_time >= '2025-01-02 22:00+00'
                AND capture_time < '2025-01-03 02:00+00' ORDER BY capture_time DESC, image_id DESC LIMIT 5$$);
SELECT same($$SELECT device_id, capture_time, image_id, batch_id, object_store, object_key, width, height, content_hash, tags
                FROM img.device_images('cam-5', '2025-01-01', '2025-01-07', 1000)$$,
            $$SELECT device_id, capture_time, image_id, batch_id, object_store, object_key, width, height, content_hash, tags
                FROM images_heap WHERE device_id = 'cam-5' ORDER BY capture_time DESC, image_id DESC$$);
-- the range ends at an image's capture time: that image is not included
SELECT same($$SELECT image_id FROM img.device_images('cam-1', '2025-01-01 00:00+00', '2025-01-01 01:08+00')$$,
            $$SELECT image_id FROM images_heap WHERE device_id = 'cam-1' AND capture_time < '2025-01-01 01:08+00'
                ORDER BY capture_time DESC$$);
SELECT count(*) FROM img.device_images('cam-9', '2025-01-01', '2025-01-07');
SELECT count(*) FROM img.device_images('cam-1', '2025-01-05', '2025-01-02');

-- keyset paging: pages of 7, each after the last key of the one before,
-- give the whole range in order, with no row twice
CREATE FUNCTION all_pages(fn text, arg text, from_time timestamptz, to_time timestamptz, page int)
RETURNS TABLE (pageno int, capture_time timestamptz, image_id uuid) LANGUAGE plpgsql AS $$
DECLARE after img.image_page_key; n int := 0; got int;
BEGIN
  LOOP
    n := n + 1;
    RETURN QUERY EXECUTE format('SELECT %s, capture_time, image_id FROM img.%I(%L, %L, %L, %s, %L)',
                                n, fn, arg, from_time, to_time, page, after);
    GET DIAGNOSTICS got = ROW_COUNT;
    EXIT WHEN got < page;
    EXECUTE format('SELECT capture_time, image_id FROM img.%I(%L, %L, %L, %s, %L) OFFSET %s',
                   fn, arg, from_time, to_time, page, after, page - 1) INTO after;
  END LOOP;
END $$;
SELECT max(pageno) AS pages, count(*) AS rows, count(DISTINCT image_id) AS distinct_rows
  FROM all_pages('device_images', 'cam-2', '2025-01-02 07:00+00', '2025-01-04 09:00+00', 7);
SELECT same($$SELECT capture_time, image_id FROM all_pages('device_images', 'cam-2', '2025-01-02 07:00+00', '2025-01-04 09:00+00', 7)$$,
            $$SELECT capture_time, image_id FROM images_heap WHERE device_id = 'cam-2' AND capture_time >= '2025-01-02 07:00+00'
                AND capture_time < '2025-01-04 09:00+00' ORDER BY capture_time DESC, image_id DESC$$);
-- a page after a key: strictly older rows
SELECT capture_time, image_id FROM img.device_images('cam-2', '2025-01-01', '2025-01-07', 3,
       ('2025-01-03 10:02+00', '00000000-0000-4000-8000-00000003038a'));

-- tag_images and paging over tag partitions
SELECT same($$SELECT tag, capture_time, image_id, device_id, object_key, tags
                FROM img.tag_images('crack', '2025-01-02 12:00+00', '2025-01-05', 20)$$,
            $$SELECT 'crack', capture_time, image_id, device_id, object_key, tags FROM images_heap
               WHERE 'crack' = ANY (tags) AND capture_time >= '2025-01-02 12:00+00' AND capture_time < '2025-01-05'
               ORDER BY capture_time DESC, image_id DESC LIMIT 20$$);
SELECT same($$SELECT capture_time, image_id FROM all_pages('tag_images', 'blur', '2025-01-01', '2025-01-07', 4)$$,
            $$SELECT capture_time, image_id FROM images_heap WHERE 'blur' = ANY (tags)
               ORDER BY capture_time DESC, image_id DESC$$);
SELECT same($$SELECT capture_time, image_id FROM all_pages('tag_images', 'leak', '2025-01-01 05:00+00', '2025-01-06 17:00+00', 25)$$,
            $$SELECT capture_time, image_id FROM images_heap WHERE 'leak' = ANY (tags)
               AND capture_time >= '2025-01-01 05:00+00' AND capture_time < '2025-01-06 17:00+00'
               ORDER BY capture_time DESC, image_id DESC$$);
SELECT count(*) FROM img.tag_images('nope', '2025-01-01', '2025-01-07');

-- tag_images_all: images carrying every tag
SELECT same($$SELECT capture_time, image_id, tags FROM img.tag_images_all('{rust,crack}', '2025-01-01', '2025-01-07', 1000)$$,
            $$SELECT capture_time, image_id, tags FROM images_heap WHERE tags @> '{rust,crack}'
               ORDER BY capture_time DESC, image_id DESC$$);
SELECT same($$SELECT capture_time, image_id FROM img.tag_images_all('{leak,crack,rust}', '2025-01-03', '2025-01-04', 10)$$,
            $$SELECT capture_time, image_id FROM images_heap WHERE tags @> '{leak,crack,rust}'
               AND capture_time >= '2025-01-03' AND capture_time < '2025-01-04'
               ORDER BY capture_time DESC, image_id DESC LIMIT 10$$);
SELECT same($$SELECT capture_time, image_id FROM img.tag_images_all('{blur,crack}', '2025-01-01', '2025-01-07', 5,
                                                                    ('2025-01-03 03:00+00', NULL))$$,
            $$SELECT capture_time, image_id FROM images_heap WHERE tags @> '{blur,crack}'
               AND capture_time < '2025-01-03 03:00+00' ORDER BY capture_time DESC, image_id DESC LIMIT 5$$);
SELECT count(*) FROM img.tag_images_all('{}', '2025-01-01', '2025-01-07');

-- batch_object_keys
SELECT * FROM img.batch_object_keys('batch-moved');
SELECT same($$SELECT * FROM img.batch_object_keys('batch-3')$$,
            $$SELECT image_id, object_store, object_key FROM images_heap WHERE batch_id = 'batch-3' ORDER BY image_id$$);

-- daily_counts by device, tag and in total
SELECT * FROM img.daily_counts('2025-01-04', '2025-01-04', 'device');
SELECT same_set($$SELECT * FROM img.daily_counts('2025-01-01', '2025-01-07')$$,
                $$SELECT widecol.day_bucket(capture_time), device_id, count(*) FROM images_heap GROUP BY 1, 2$$);
SELECT same($$SELECT * FROM img.daily_counts('2025-01-02', '2025-01-05', 'tag')$$,
            $$SELECT widecol.day_bucket(capture_time), tag, count(DISTINCT image_id) FROM images_heap, unnest(tags) tag
               WHERE widecol.day_bucket(capture_time) BETWEEN '2025-01-02' AND '2025-01-05' GROUP BY 1, 2 ORDER BY 1, 2$$);
SELECT * FROM img.daily_counts('2025-01-01', '2025-01-07', 'total');
SELECT * FROM img.daily_counts('2025-01-01', '2025-01-07', 'camera');
-- the counters (increments of every statement above) equal a recount
SELECT same_set($$SELECT day, dimension, value, images FROM img.daily_counts WHERE images <> 0$$,
                $$SELECT widecol.day_bucket(capture_time), 'device', device_id, count(*) FROM images_heap GROUP BY 1, 3
                  UNION ALL
                  SELECT widecol.day_bucket(capture_time), 'tag', tag, count(DISTINCT image_id) FROM images_heap, unnest(tags) tag GROUP BY 1, 3
                  UNION ALL
                  SELECT widecol.day_bucket(capture_time), 'total', '', count(*) FROM images_heap GROUP BY 1$$);
SELECT img.rebuild_daily_counts();
SELECT same_set($$SELECT * FROM img.daily_counts('2025-01-01', '2025-01-07')$$,
                $$SELECT widecol.day_bucket(capture_time), device_id, count(*) FROM images_heap GROUP BY 1, 2$$);
-- ten years or more: a scan instead of a seek over more than 3650 day partitions
SELECT same_set($$SELECT * FROM img.daily_counts('2000-01-01', '2100-01-01', 'tag')$$,
                $$SELECT * FROM img.daily_counts('2025-01-01', '2025-01-07', 'tag')$$);

-- the functions are inlined into the caller's query: the device (or tag)
-- and the day range are a WidecolSeek over the day buckets, merged in
-- capture-time order, under the LIMIT
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM img.device_images('cam-3', '2025-01-02 22:00+00', '2025-01-05 02:00+00', 5);
EXPLAIN (COSTS OFF) SELECT * FROM img.tag_images('rust', '2025-01-02', '2025-01-05', 5,
                                                 ('2025-01-03 10:02+00', '00000000-0000-4000-8000-00000003038a'));
EXPLAIN (COSTS OFF) SELECT * FROM img.tag_images_all('{rust,crack}', '2025-01-02', '2025-01-05', 5);
EXPLAIN (COSTS OFF) SELECT * FROM img.image('00000000-0000-4000-8000-0000000493ea');
EXPLAIN (COSTS OFF) SELECT * FROM img.batch_object_keys('batch-3');
-- daily_counts reads the counter table's day partitions (its query, as
-- the function runs it)
EXPLAIN (COSTS OFF) SELECT c.day, c.value, c.images FROM img.daily_counts AS c
 WHERE c.day BETWEEN '2025-01-02' AND '2025-01-05' AND c.dimension = 'tag' AND c.images <> 0 ORDER BY 1, 2;
-- the lazy merge stops early: 5 rows from the 4 day buckets
CREATE FUNCTION seek_stats(q text) RETURNS TABLE (node text, actual_rows numeric, partitions_read numeric)
LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
  RETURN QUERY
  WITH RECURSIVE n(p) AS (SELECT j -> 0 -> 'Plan' UNION ALL SELECT c FROM n, json_array_elements(n.p -> 'Plans') c)
  SELECT concat(p ->> 'Node Type', ' ' || (p ->> 'Custom Plan Provider')), (p ->> 'Actual Rows')::numeric,
         (p ->> 'Partitions Read')::numeric FROM n;
END $$;
SELECT * FROM seek_stats($$SELECT * FROM img.device_images('cam-3', '2025-01-02 22:00+00', '2025-01-05 02:00+00', 5)$$);
SELECT * FROM seek_stats($$SELECT * FROM img.tag_images('crack', '2025-01-01', '2025-01-07', 3)$$);
DROP FUNCTION seek_stats(text);
RESET enable_seqscan;

-- store rows of an application written with SQL only: the query tables follow
BEGIN;
INSERT INTO img.images VALUES ('00000000-0000-4000-8000-00000000beef', 'cam-1', '2025-01-06 12:00+00', 'batch-x',
                               's3://images', 'raw/new.jpg', 640, 480, 'h', '{new}');
SELECT tag, image_id FROM img.tag_images('new', '2025-01-06', '2025-01-07');
ROLLBACK;
SELECT count(*) FROM img.tag_images('new', '2025-01-06', '2025-01-07');
SELECT q.query_table, c.ok FROM widecol.query_table q, widecol.check_query_table(q.query_table) c ORDER BY q.id;
-- a per-write TTL applies to the derived rows the same statement writes
BEGIN;
SET LOCAL widecol.ttl = '1h';
INSERT INTO img.images VALUES ('00000000-0000-4000-8000-00000000cafe', 'cam-1', '2025-01-06 12:00+00', 'batch-x',
                               's3://images', 'raw/ttl.jpg', 640, 480, 'h', '{short}');
COMMIT;
-- (the write clock may run ahead of now() after earlier tests: compare
-- with the base row's TTL rather than with an hour)
SELECT widecol.ttl(tableoid, ctid) AS base_ttl FROM img.images WHERE image_id = '00000000-0000-4000-8000-00000000cafe' \gset
SELECT :'base_ttl'::interval > '0' AS base_row_expires,
       (SELECT abs(extract(epoch FROM widecol.ttl(tableoid, ctid) - :'base_ttl')) < 60 FROM img.device_daily_images
         WHERE device_id = 'cam-1' AND day = '2025-01-06' AND image_id = '00000000-0000-4000-8000-00000000cafe') AS device_row_too,
       (SELECT abs(extract(epoch FROM widecol.ttl(tableoid, ctid) - :'base_ttl')) < 60 FROM img.images_by_tag
         WHERE tag = 'short' AND day = '2025-01-06') AS tag_row_too,
       (SELECT widecol.ttl(tableoid, ctid) IS NULL FROM img.images_by_tag
         WHERE tag = 'crack' AND day = '2025-01-02' LIMIT 1) AS others_never_expire;

-- tags listed twice, NULL tags and a NULL array: the tag helpers behind
-- images_by_tag and daily_counts count a tag once per image, as DISTINCT would
SELECT widecol.distinct_tags('{rust,NULL,crack,rust,crack,leak}') AS distinct_tags,
       widecol.distinct_tags(NULL) AS of_null, widecol.distinct_tags('{NULL,NULL}') AS of_nulls,
       widecol.distinct_tags('{{a,b},{b,c}}') AS flattened;
SELECT * FROM widecol.image_dimensions('cam-1', '{rust,NULL,rust,Rust}');
SELECT * FROM widecol.image_dimensions(NULL, NULL);
SELECT day, dimension, value, images FROM img.daily_counts WHERE day = '2025-01-07' ORDER BY 2, 3;
INSERT INTO img.images VALUES
  ('00000000-0000-4000-8000-0000000dd001', 'cam-1', '2025-01-07 01:00+00', NULL, 's3://images', 'raw/d1.jpg', 1, 1, 'h',
   '{dup,dup,NULL,other}'),
  ('00000000-0000-4000-8000-0000000dd002', 'cam-2', '2025-01-07 02:00+00', NULL, 's3://images', 'raw/d2.jpg', 1, 1, 'h',
   '{NULL}'),
  ('00000000-0000-4000-8000-0000000dd003', 'cam-2', '2025-01-07 03:00+00', NULL, 's3://images', 'raw/d3.jpg', 1, 1, 'h',
   NULL);
INSERT INTO images_heap SELECT * FROM img.images WHERE image_id::text LIKE '00000000-0000-4000-8000-0000000dd%';
-- written by hand the way the store was first defined (SELECT DISTINCT over unnest)
SELECT same_set($$SELECT tag, day, capture_time, image_id FROM img.images_by_tag WHERE day = '2025-01-07'$$,
                $$SELECT DISTINCT t, widecol.day_bucket(capture_time), capture_time, image_id
                    FROM images_heap, unnest(tags) AS t WHERE t IS NOT NULL AND widecol.day_bucket(capture_time) = '2025-01-07'$$);
SELECT day, dimension, value, images FROM img.daily_counts WHERE day = '2025-01-07' ORDER BY 2, 3;
SELECT bool_and(ok) AS store_equals_recount FROM widecol.check_image_store('img', '2025-01-07', '2025-01-07');

DROP FUNCTION same(text, text), rows_diff(regclass, regclass);
DROP FUNCTION same_set(text, text);
DROP FUNCTION all_pages(text, text, timestamptz, timestamptz, int);
DROP TABLE images_heap;
DROP SCHEMA img CASCADE;
SELECT count(*) FROM widecol.query_table;
