-- Honest seek costs: the same 100,000 rows (2,000 partitions of 50 rows) in
-- 1 run, 10 runs and 100 runs, each run a slice of every partition, as
-- small INSERT batches leave them before compaction.  A seek over k
-- partitions pays for every run that holds them; the plan flips to a full
-- scan where that is faster, earlier the more runs there are (measured in
-- test/bench/seek_costs.sh: the flips below are within 1.3x of the times).
SET max_parallel_workers_per_gather = 0;
CREATE TABLE sc_src AS SELECT 'd' || (g * 7919 % 2000) AS dev, g::bigint AS ts, g AS v,
       repeat('x', 40) AS pad FROM generate_series(1, 100000) g;
CREATE TABLE sc1 (dev text, ts bigint, v int, pad text)
  USING widecol WITH (widecol.partition_key = 'dev', widecol.clustering_key = 'ts');
CREATE TABLE sc10 (LIKE sc1) USING widecol WITH (widecol.partition_key = 'dev', widecol.clustering_key = 'ts');
CREATE TABLE sc100 (LIKE sc1) USING widecol WITH (widecol.partition_key = 'dev', widecol.clustering_key = 'ts');
INSERT INTO sc1 SELECT * FROM sc_src;
DO $$ BEGIN
  FOR b IN 0..9 LOOP INSERT INTO sc10 SELECT * FROM sc_src WHERE ts > b * 10000 AND ts <= (b + 1) * 10000; END LOOP;
  FOR b IN 0..99 LOOP INSERT INTO sc100 SELECT * FROM sc_src WHERE ts > b * 1000 AND ts <= (b + 1) * 1000; END LOOP;
END $$;
SELECT (SELECT count(*) FROM widecol.runs('sc1')) AS runs_1, (SELECT count(*) FROM widecol.runs('sc10')) AS runs_10,
       (SELECT count(*) FROM widecol.runs('sc100')) AS runs_100;
ANALYZE sc1, sc10, sc100;

-- 'seek' or 'full scan' for a query over the first k partitions
CREATE FUNCTION plan_for(tab text, k int, ordered bool) RETURNS text LANGUAGE plpgsql AS $$
DECLARE l text; list text;
BEGIN
  SELECT string_agg(quote_literal('d' || i), ',') INTO list FROM generate_series(0, k - 1) i;
  FOR l IN EXECUTE format('EXPLAIN SELECT * FROM %s WHERE dev IN (%s) %s', tab, list,
                          CASE WHEN ordered THEN 'ORDER BY ts' ELSE '' END) LOOP
    IF l ~ 'WidecolSeek' THEN RETURN 'seek'; END IF;
    IF l ~ 'Seq Scan' THEN RETURN 'full scan'; END IF;
  END LOOP;
  RETURN l;
END $$;
SELECT t AS runs, k AS partitions, plan_for('sc' || t, k, false) AS plan,
       plan_for('sc' || t, k, true) AS plan_in_clustering_order
  FROM unnest(ARRAY[1, 10, 100]) t, unnest(ARRAY[1, 10, 100, 1000]) k ORDER BY t, k;
-- a single partition is a seek however many runs hold it
EXPLAIN (COSTS OFF) SELECT * FROM sc100 WHERE dev = 'd7' ORDER BY ts DESC LIMIT 10;
-- after a major compaction the table reads like sc1 again
SELECT widecol.compact('sc100', true) AS versions_written;
ANALYZE sc100;
SELECT k AS partitions, plan_for('sc100', k, false) AS plan FROM unnest(ARRAY[100, 1000]) k;
-- widecol.enable_seek = off leaves only the full scan, and EXPLAIN says why
SET widecol.enable_seek = off;
EXPLAIN (COSTS OFF) SELECT * FROM sc1 WHERE dev = 'd7';
RESET widecol.enable_seek;
-- an unordered seek over many partitions reads them one after another
SELECT count(*), sum(v) FROM sc10 WHERE dev IN ('d1', 'd2', 'd3', 'd4', 'd5');
SELECT count(*), sum(v) FROM sc_src WHERE dev IN ('d1', 'd2', 'd3', 'd4', 'd5');
DROP TABLE sc1, sc10, sc100, sc_src;
DROP FUNCTION plan_for(text, int, bool);

-- Never analyzed: how many rows a key selects is estimated from the runs
-- (each counts its partitions), not from the planner's default selectivity
-- (0.5% of the table for an equality, 200 distinct values per column);
-- after ANALYZE the statistics decide.
CREATE FUNCTION est_rows(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
  RETURN (j->0->'Plan'->>'Plan Rows')::float8;
END $$;
CREATE TABLE na (id uuid, dev text, v int) USING widecol WITH (widecol.partition_key = 'id');
INSERT INTO na SELECT md5(g::text)::uuid, 'd' || g % 10, g FROM generate_series(1, 20000) g;
SELECT est_rows($$SELECT * FROM na$$) AS table_rows,
       est_rows($$SELECT * FROM na WHERE id = md5('7')::uuid$$) AS one_key,
       est_rows($$SELECT * FROM na WHERE id IN (md5('7')::uuid, md5('8')::uuid, md5('9')::uuid)$$) AS three_keys,
       est_rows($$SELECT * FROM na WHERE id = md5('7')::uuid AND v > 0$$) <= 1 AS one_key_filtered;
-- a statement that failed halfway (its transaction rolled back after its
-- run was written) adds no rows to the estimate
BEGIN;
INSERT INTO na SELECT md5(g::text)::uuid, 'x', g FROM generate_series(20001, 30000) g;
SELECT count(*) AS runs_in_transaction, est_rows($$SELECT * FROM na$$) AS rows_in_transaction
  FROM widecol.runs('na');
SELECT 1 / 0;
ROLLBACK;
SELECT est_rows($$SELECT * FROM na$$) AS table_rows_after_rollback;
-- a prepared lookup gets its generic plan after five executions (its
-- estimate no longer makes the custom plan look cheaper than the generic)
PREPARE na_get(int) AS SELECT v FROM na WHERE id = md5($1::text)::uuid;
EXECUTE na_get(1); EXECUTE na_get(2); EXECUTE na_get(3); EXECUTE na_get(4); EXECUTE na_get(5);
EXPLAIN (COSTS OFF) EXECUTE na_get(6);
EXECUTE na_get(6);
DEALLOCATE na_get;
-- a join on the key seeks per outer row, estimated one row each
CREATE TABLE na_keys AS SELECT md5(g::text)::uuid AS id FROM generate_series(1, 30) g;
ANALYZE na_keys;
EXPLAIN (COSTS OFF) SELECT count(*), sum(na.v) FROM na_keys k JOIN na ON na.id = k.id;
SELECT count(*), sum(na.v) FROM na_keys k JOIN na ON na.id = k.id;
-- and the join itself is estimated at one row per key (the runs say the
-- key is unique, as a unique index would), not 0.5% of the product
SELECT est_rows($$SELECT * FROM na_keys k JOIN na ON na.id = k.id$$) AS join_rows;
-- partitions of (device, day) with a clustering column: the partition key
-- selects a partition's rows (20000 / 70), the whole primary key one row
CREATE TABLE nb (dev text, day date, ts int, v int) USING widecol
  WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts');
INSERT INTO nb SELECT 'd' || g % 10, date '2026-01-01' + g % 7, g, g FROM generate_series(1, 20000) g;
SELECT est_rows($$SELECT * FROM nb WHERE dev = 'd1' AND day = '2026-01-02'$$) AS one_partition,
       est_rows($$SELECT * FROM nb WHERE dev IN ('d1', 'd2') AND day = '2026-01-02'$$) AS two_partitions,
       est_rows($$SELECT * FROM nb WHERE dev = 'd1' AND day = '2026-01-02' AND ts = 71$$) AS one_row;
-- skewed partitions: after ANALYZE the statistics say how big the big one is
CREATE TABLE nc (dev text, ts int) USING widecol WITH (widecol.partition_key = 'dev', widecol.clustering_key = 'ts');
INSERT INTO nc SELECT CASE WHEN g % 10 < 9 THEN 'big' ELSE 'd' || g END, g FROM generate_series(1, 20000) g;
SELECT est_rows($$SELECT * FROM nc WHERE dev = 'big'$$) AS average_partition,
       est_rows($$SELECT dev, count(*) FROM nc GROUP BY dev$$) AS partitions;
ANALYZE nc;
SELECT est_rows($$SELECT * FROM nc WHERE dev = 'big'$$) > 15000 AS from_statistics;
-- widecol partitions of a partitioned table, a bigint key looked up with
-- int literals: each partition estimates its own rows, the parent sums them
CREATE TABLE np (id bigint, v int) PARTITION BY HASH (id);
CREATE TABLE np0 PARTITION OF np FOR VALUES WITH (MODULUS 2, REMAINDER 0) USING widecol WITH (widecol.partition_key = 'id');
CREATE TABLE np1 PARTITION OF np FOR VALUES WITH (MODULUS 2, REMAINDER 1) USING widecol WITH (widecol.partition_key = 'id');
INSERT INTO np SELECT g, g FROM generate_series(1, 20000) g;
SELECT est_rows($$SELECT * FROM np WHERE id = 42$$) AS one_key,
       est_rows($$SELECT * FROM np WHERE id IN (1, 2, 3, 4, 5, 6)$$) AS six_keys;
EXPLAIN (COSTS OFF) SELECT * FROM np WHERE id IN (1, 2, 3, 4, 5, 6);
SELECT count(*), sum(v) FROM np WHERE id IN (1, 2, 3, 4, 5, 6);
DROP TABLE na, na_keys, nb, nc, np;
DROP FUNCTION est_rows(text);
