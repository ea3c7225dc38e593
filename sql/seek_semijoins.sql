--
-- seek_semijoins: `pk IN (SELECT ...)` on a widecol partition key is also
-- planned as `pk = ANY(ARRAY(SELECT ...))` (src/executor/semijoin.c): the
-- keys come from an initplan and one seek merges the partitions in
-- clustering order, so `ORDER BY clustering LIMIT n` needs no Sort.  The
-- planner keeps that form only when it is cheaper and its array feeds a
-- seek.  Every result is compared with a heap copy, including NULLs,
-- duplicates and empty subqueries.
--
\i sql/compare.inc
CREATE SCHEMA semi;
SET search_path = semi, public;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE ev (dev text, day date, ts bigint, v int)
  USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC');
CREATE TABLE ev_heap (dev text, day date, ts bigint, v int, PRIMARY KEY (dev, day, ts));
INSERT INTO ev_heap SELECT 'd' || d, date '2025-01-01' + k, k * 10000 + t * 100 + d, t
  FROM generate_series(1, 40) d, generate_series(0, 2) k, generate_series(1, 50) t;
INSERT INTO ev SELECT * FROM ev_heap;
ANALYZE ev;
ANALYZE ev_heap;
CREATE TABLE wanted (dev text);
INSERT INTO wanted VALUES ('d3'), ('d5'), ('d5'), ('d9'), (NULL);
ANALYZE wanted;

-- the newest rows of three devices' day: one seek, no Sort
EXPLAIN (COSTS OFF)
SELECT * FROM ev WHERE dev IN (SELECT dev FROM wanted) AND day = '2025-01-02' ORDER BY ts DESC LIMIT 20;
-- results equal the heap copy's (duplicates and a NULL in the subquery, an
-- empty subquery, NOT IN and IN under OR, which are not rewritten)
SELECT same(q, replace(q, 'FROM ev ', 'FROM ev_heap ')) FROM (VALUES
  ($$SELECT * FROM ev WHERE dev IN (SELECT dev FROM wanted) AND day = '2025-01-02' ORDER BY ts DESC LIMIT 20$$),
  ($$SELECT count(*), sum(v) FROM ev WHERE dev IN (SELECT dev FROM wanted) AND day = '2025-01-02'$$),
  ($$SELECT count(*) FROM ev WHERE dev IN (SELECT dev FROM wanted WHERE false) AND day = '2025-01-02'$$),
  ($$SELECT count(*) FROM ev WHERE dev NOT IN (SELECT dev FROM wanted WHERE dev IS NOT NULL) AND day = '2025-01-02'$$),
  ($$SELECT count(*) FROM ev WHERE (dev IN (SELECT dev FROM wanted) OR v = 7) AND day = '2025-01-02'$$),
  ($$SELECT dev, ts FROM ev WHERE dev IN (SELECT 'd' || g FROM generate_series(1, 3) g)
       AND day BETWEEN '2025-01-01' AND '2025-01-03' ORDER BY ts DESC LIMIT 7$$)
) t(q);
-- a NULL key is in no subquery's result
INSERT INTO wanted VALUES ('d1');
SELECT count(*) FROM ev WHERE dev IN (SELECT dev FROM wanted) AND day = '2025-01-01';
SELECT count(*) FROM ev_heap WHERE dev IN (SELECT dev FROM wanted) AND day = '2025-01-01';

-- a correlated subquery stays a semi-join; so does one too large for an
-- array of keys (every row of the heap copy)
EXPLAIN (COSTS OFF)
SELECT count(*) FROM ev e WHERE dev IN (SELECT w.dev FROM wanted w WHERE w.dev < e.dev || 'z') AND day = '2025-01-02';
EXPLAIN (COSTS OFF)
SELECT count(*) FROM ev WHERE dev IN (SELECT dev FROM ev_heap) AND day = '2025-01-02';
SELECT same($$SELECT count(*) FROM ev e WHERE dev IN (SELECT w.dev FROM wanted w WHERE w.dev < e.dev || 'z') AND day = '2025-01-02'$$,
            $$SELECT count(*) FROM ev_heap e WHERE dev IN (SELECT w.dev FROM wanted w WHERE w.dev < e.dev || 'z') AND day = '2025-01-02'$$);

-- int keys from the subquery against a bigint partition key
CREATE TABLE tel (sensor bigint, ts bigint, x float8)
  USING widecol WITH (widecol.partition_key = 'sensor', widecol.clustering_key = 'ts');
INSERT INTO tel SELECT s, t, s * t FROM generate_series(1, 30) s, generate_series(1, 100) t;
ANALYZE tel;
EXPLAIN (COSTS OFF)
SELECT sensor, ts FROM tel WHERE sensor IN (SELECT g FROM generate_series(4, 6) g) ORDER BY ts DESC LIMIT 5;
SELECT sensor, ts FROM tel WHERE sensor IN (SELECT g FROM generate_series(4, 6) g) ORDER BY ts DESC, sensor LIMIT 5;

-- a prepared statement whose subquery takes a parameter: custom plans use
-- the array; the generic plan cannot know how many keys the subquery
-- returns (1,000 by default) and keeps the semi-join; both are right
PREPARE newest(int) AS
  SELECT dev, ts FROM ev WHERE dev IN (SELECT 'd' || g FROM generate_series($1, $1 + 2) g)
     AND day = '2025-01-03' ORDER BY ts DESC LIMIT 4;
PREPARE newest_heap(int) AS
  SELECT dev, ts FROM ev_heap WHERE dev IN (SELECT 'd' || g FROM generate_series($1, $1 + 2) g)
     AND day = '2025-01-03' ORDER BY ts DESC LIMIT 4;
SET plan_cache_mode = force_custom_plan;
EXPLAIN (COSTS OFF) EXECUTE newest(10);
EXECUTE newest(10);
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE newest(10);
EXECUTE newest(10);
EXECUTE newest_heap(10);
RESET plan_cache_mode;

-- on widecol partitions of a partitioned table: the array feeds each
-- partition's seek, merged in order
CREATE TABLE evp (dev text, day date, ts bigint, v int) PARTITION BY RANGE (day);
CREATE TABLE evp_1 PARTITION OF evp FOR VALUES FROM ('2025-01-01') TO ('2025-01-02')
  USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC');
CREATE TABLE evp_2 PARTITION OF evp FOR VALUES FROM ('2025-01-02') TO ('2025-01-04')
  USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC');
INSERT INTO evp SELECT * FROM ev_heap;
ANALYZE evp;
EXPLAIN (COSTS OFF)
SELECT dev, ts FROM evp WHERE dev IN (SELECT dev FROM wanted) AND day IN ('2025-01-01', '2025-01-02')
 ORDER BY ts DESC LIMIT 5;
SELECT same($$SELECT dev, ts FROM evp WHERE dev IN (SELECT dev FROM wanted) AND day IN ('2025-01-01', '2025-01-02')
               ORDER BY ts DESC LIMIT 5$$,
            $$SELECT dev, ts FROM ev_heap WHERE dev IN (SELECT dev FROM wanted) AND day IN ('2025-01-01', '2025-01-02')
               ORDER BY ts DESC LIMIT 5$$);
-- (a range of days is costed as a week of partitions per key: there the
-- semi-join of one-range reads stays cheaper, and is kept)
SELECT same($$SELECT dev, ts FROM evp WHERE dev IN (SELECT dev FROM wanted) AND day BETWEEN '2025-01-01' AND '2025-01-02'
               ORDER BY ts DESC LIMIT 5$$,
            $$SELECT dev, ts FROM ev_heap WHERE dev IN (SELECT dev FROM wanted) AND day BETWEEN '2025-01-01' AND '2025-01-02'
               ORDER BY ts DESC LIMIT 5$$);

-- widecol.enable_seek = off: the query is planned as written
SET widecol.enable_seek = off;
EXPLAIN (COSTS OFF)
SELECT * FROM ev WHERE dev IN (SELECT dev FROM wanted) AND day = '2025-01-02' ORDER BY ts DESC LIMIT 20;
RESET widecol.enable_seek;

DROP SCHEMA semi CASCADE;
DROP FUNCTION rows_diff(regclass, regclass), same(text, text);
