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
