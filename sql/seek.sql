-- WidecolSeek: partition-key seeks, clustering ranges, ordered output,
-- bucketed multi-partition merges.  Every result is compared with the same
-- query on a heap copy of the data.
SET max_parallel_workers_per_gather = 0;
CREATE TABLE img (
    device_id text, day_bucket date, capture_time timestamptz, image_id int,
    object_key text
) USING widecol WITH (widecol.partition_key = 'device_id, day_bucket',
                      widecol.clustering_key = 'capture_time DESC, image_id DESC');
CREATE TABLE img_heap (LIKE img);
-- 6 devices x 10 days x 40 images, keys in capture-time order, in two COPY runs
-- and some single-row writes (level 0), upserts and deletes
INSERT INTO img_heap
SELECT 'cam-' || d, date '2025-01-01' + day, timestamptz '2025-01-01 00:00+00' + day * interval '1 day' + i * interval '30 minutes',
       i, format('raw/cam-%s/%s/%s.jpg', d, day, i)
  FROM generate_series(0, 9) day, generate_series(0, 39) i, generate_series(1, 6) d;
\copy (SELECT * FROM img_heap WHERE day_bucket < '2025-01-06') TO 'results/widecol_seek_a.csv'
\copy (SELECT * FROM img_heap WHERE day_bucket >= '2025-01-06') TO 'results/widecol_seek_b.csv'
\copy img FROM 'results/widecol_seek_a.csv'
\copy img FROM 'results/widecol_seek_b.csv'
UPDATE img SET object_key = object_key || '?v2' WHERE device_id = 'cam-2' AND day_bucket = '2025-01-03' AND image_id % 5 = 0;
UPDATE img_heap SET object_key = object_key || '?v2' WHERE device_id = 'cam-2' AND day_bucket = '2025-01-03' AND image_id % 5 = 0;
DELETE FROM img WHERE device_id = 'cam-3' AND image_id % 7 = 0;
DELETE FROM img_heap WHERE device_id = 'cam-3' AND image_id % 7 = 0;
INSERT INTO img VALUES ('cam-1', '2025-01-02', '2025-01-02 23:59+00', 99, 'late');
INSERT INTO img_heap VALUES ('cam-1', '2025-01-02', '2025-01-02 23:59+00', 99, 'late');
SELECT (SELECT count(*) FROM widecol.runs('img')) AS runs, widecol.level0_pages('img') > 0 AS level0_has_rows;
ANALYZE img;
ANALYZE img_heap;
-- the tables are small: make the plans those of a large table
SET enable_seqscan = off;

\i sql/compare.inc
-- compare a query on img with the same query on img_heap (same rows, same order)
CREATE FUNCTION same(q text) RETURNS text LANGUAGE sql
  AS $$ SELECT same(q, replace(replace(q, 'FROM img ', 'FROM img_heap '), 'JOIN img ', 'JOIN img_heap ')) $$;

-- (a) latest images of one (device, day) partition: a seek, no Sort
EXPLAIN (COSTS OFF) SELECT * FROM img WHERE device_id = 'cam-1' AND day_bucket = '2025-01-02'
 ORDER BY capture_time DESC, image_id DESC LIMIT 5;
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-1' AND day_bucket = '2025-01-02' ORDER BY capture_time DESC, image_id DESC LIMIT 5$$);
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-2' AND day_bucket = '2025-01-03' ORDER BY capture_time DESC LIMIT 50$$);
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-3' AND day_bucket = '2025-01-04' ORDER BY capture_time DESC$$);
-- a partition that does not exist, and a NULL key value
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-9' AND day_bucket = '2025-01-02'$$);
SELECT count(*) FROM img WHERE device_id = NULL AND day_bucket = '2025-01-02';
-- the reverse order is a backward seek (no Sort)
EXPLAIN (COSTS OFF) SELECT * FROM img WHERE device_id = 'cam-1' AND day_bucket = '2025-01-02'
 ORDER BY capture_time ASC LIMIT 5;
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-1' AND day_bucket = '2025-01-02' ORDER BY capture_time ASC, image_id LIMIT 5$$);

-- (b) one device across day buckets: one seek per bucket, merged in order
EXPLAIN (COSTS OFF) SELECT * FROM img WHERE device_id = 'cam-4' AND day_bucket BETWEEN '2025-01-03' AND '2025-01-09'
 ORDER BY capture_time DESC, image_id DESC LIMIT 10;
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-4' AND day_bucket BETWEEN '2025-01-03' AND '2025-01-09' ORDER BY capture_time DESC, image_id DESC LIMIT 10$$);
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-3' AND day_bucket > '2025-01-03' AND day_bucket < '2025-01-09' ORDER BY capture_time DESC, image_id DESC$$);
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-1' AND day_bucket IN ('2025-01-02', '2025-01-05', '2025-01-02') ORDER BY capture_time DESC, image_id DESC$$);
-- partitions with equal clustering keys: order ties by device for the comparison
SELECT same($$SELECT * FROM img WHERE device_id IN ('cam-1', 'cam-2') AND day_bucket = '2025-01-03' ORDER BY capture_time DESC, image_id DESC, device_id$$);
SELECT same($$SELECT * FROM img WHERE device_id = ANY (ARRAY['cam-5', 'cam-6', NULL]) AND day_bucket = ANY ('{2025-01-01,2025-01-10}') ORDER BY capture_time DESC, image_id DESC, device_id$$);
-- an empty bucket range
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-4' AND day_bucket BETWEEN '2025-01-05' AND '2025-01-04'$$);

-- (c) a clustering range inside one partition
EXPLAIN (COSTS OFF) SELECT * FROM img WHERE device_id = 'cam-5' AND day_bucket = '2025-01-07'
  AND capture_time >= '2025-01-07 05:00+00' AND capture_time < '2025-01-07 09:00+00' ORDER BY capture_time DESC;
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-5' AND day_bucket = '2025-01-07' AND capture_time >= '2025-01-07 05:00+00' AND capture_time < '2025-01-07 09:00+00' ORDER BY capture_time DESC, image_id DESC$$);
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-5' AND day_bucket = '2025-01-07' AND capture_time > '2025-01-07 05:00+00' ORDER BY capture_time DESC, image_id DESC$$);
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-5' AND day_bucket = '2025-01-07' AND '2025-01-07 03:00+00' >= capture_time ORDER BY capture_time DESC, image_id DESC$$);
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-5' AND day_bucket = '2025-01-07' AND capture_time = '2025-01-07 05:00+00' AND image_id >= 10 ORDER BY capture_time DESC, image_id DESC$$);
-- bounds from parameters of a prepared statement
PREPARE latest(text, date, int) AS
  SELECT * FROM img WHERE device_id = $1 AND day_bucket = $2 ORDER BY capture_time DESC, image_id DESC LIMIT $3;
EXPLAIN (COSTS OFF) EXECUTE latest('cam-2', '2025-01-03', 3);
EXECUTE latest('cam-2', '2025-01-03', 3);
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-2' AND day_bucket = '2025-01-03' ORDER BY capture_time DESC, image_id DESC LIMIT 3$$);

-- a join on the partition key: a nested loop seeks once per outer row
CREATE TABLE devs (id text);
INSERT INTO devs VALUES ('cam-2'), ('cam-5'), ('cam-9');
ANALYZE devs;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT d.id, i.capture_time FROM devs d JOIN img i
  ON i.device_id = d.id AND i.day_bucket = '2025-01-06' ORDER BY 1, 2 DESC;
SELECT same($$SELECT d.id, i.image_id FROM devs d JOIN img i ON i.device_id = d.id AND i.day_bucket = '2025-01-06' ORDER BY 1, 2 DESC$$);
-- a correlated LATERAL subquery: latest 2 images of each device
SELECT same($$SELECT d.id, l.image_id FROM devs d, LATERAL (SELECT image_id FROM img i WHERE i.device_id = d.id AND i.day_bucket = '2025-01-06' ORDER BY capture_time DESC, image_id DESC LIMIT 2) l ORDER BY 1, 2$$);
RESET enable_hashjoin;
RESET enable_mergejoin;
DROP TABLE devs;

-- no partition key equality: a sequential scan
RESET enable_seqscan;
EXPLAIN (COSTS OFF) SELECT * FROM img WHERE day_bucket = '2025-01-02';
SELECT same($$SELECT * FROM img WHERE day_bucket = '2025-01-02' ORDER BY device_id, capture_time DESC, image_id DESC$$);

-- UPDATE and DELETE through a seek
UPDATE img SET object_key = 'moved' WHERE device_id = 'cam-6' AND day_bucket = '2025-01-08' AND image_id < 3 RETURNING image_id;
UPDATE img_heap SET object_key = 'moved' WHERE device_id = 'cam-6' AND day_bucket = '2025-01-08' AND image_id < 3;
DELETE FROM img WHERE device_id = 'cam-6' AND day_bucket = '2025-01-09' AND capture_time < '2025-01-09 02:00+00';
DELETE FROM img_heap WHERE device_id = 'cam-6' AND day_bucket = '2025-01-09' AND capture_time < '2025-01-09 02:00+00';
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-6' AND day_bucket IN ('2025-01-08', '2025-01-09') ORDER BY capture_time DESC, image_id DESC$$);
SELECT same($$SELECT * FROM img ORDER BY device_id, day_bucket, capture_time DESC, image_id DESC$$);

-- tombstone guard rails
SET widecol.tombstone_warn_threshold = 5;
DELETE FROM img WHERE device_id = 'cam-1' AND day_bucket = '2025-01-04' AND image_id < 20;
SELECT count(*) FROM img WHERE device_id = 'cam-1' AND day_bucket = '2025-01-04';
SET widecol.tombstone_failure_threshold = 10;
SELECT count(*) FROM img WHERE device_id = 'cam-1' AND day_bucket = '2025-01-04';
RESET widecol.tombstone_warn_threshold;
RESET widecol.tombstone_failure_threshold;

DROP FUNCTION same(text), rows_diff(regclass, regclass), same(text, text);
DROP TABLE img, img_heap;

-- the backend's caches answered the seeks above (storage/cache.c)
SELECT cache, limit_bytes, hits > 0 AS answered FROM widecol.backend_caches() ORDER BY cache;
-- widecol.run_page_cache_size bounds that cache; with none, a seek still
-- reads its index pages (each checked on every use; bloom pages of run
-- format 7 are probed in shared buffers, not kept)
SET widecol.run_page_cache_size = 0;
CREATE TABLE pc (k int, v text) USING widecol WITH (widecol.partition_key = 'k');
INSERT INTO pc SELECT g, 'v' || g FROM generate_series(1, 3000) g;
SELECT count(*) AS runs FROM widecol.runs('pc');
SET enable_seqscan = off;
SELECT v FROM pc WHERE k = 1234;
SELECT count(*) FROM generate_series(1, 3000, 7) g JOIN pc ON k = g;
RESET enable_seqscan;
SELECT cache, limit_bytes, entries <= 1 AS at_most_the_page_in_use
  FROM widecol.backend_caches() WHERE cache = 'index and bloom pages';
RESET widecol.run_page_cache_size;
DROP TABLE pc;
