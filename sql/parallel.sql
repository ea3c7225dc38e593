-- Parallel sequential scans: the key space is divided into ranges (split
-- at keys of the biggest run's index); each process merges level 0 and the
-- runs over the ranges it claims.  Every answer is compared with a serial
-- scan and with a heap copy.
SET widecol.level0_max_size = 256;
CREATE TABLE par (dev int, day date, seq int, v text, n int) USING widecol
  WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'seq');
CREATE TABLE par_h (dev int, day date, seq int, v text, n int, PRIMARY KEY (dev, day, seq));
-- a big run from COPY-like bulk insert, then single-row runs and level 0
INSERT INTO par SELECT g % 97, date '2026-01-01' + g % 11, g, md5(g::text), g % 10 FROM generate_series(1, 200000) g;
INSERT INTO par_h SELECT * FROM par;
UPDATE par SET n = n + 100 WHERE dev = 3;
UPDATE par_h SET n = n + 100 WHERE dev = 3;
DELETE FROM par WHERE dev = 5 AND seq % 2 = 0;
DELETE FROM par_h WHERE dev = 5 AND seq % 2 = 0;
INSERT INTO par VALUES (1000, '2026-02-01', 1, 'new', 1);
INSERT INTO par_h VALUES (1000, '2026-02-01', 1, 'new', 1);
ANALYZE par;
SELECT count(*) > 1 AS several_runs, widecol.level0_pages('par') > 0 AS level0_used FROM widecol.runs('par');

SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT count(*), sum(n) FROM par;
-- did a query run with parallel workers on widecol?
CREATE FUNCTION par_workers(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE l text; w int := 0;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ 'Workers Launched' THEN w := w + substring(l FROM '(\d+)')::int; END IF;
  END LOOP;
  RETURN w;
END $$;
SELECT par_workers('SELECT count(*), sum(n) FROM par') > 0 AS parallel_ran;
SELECT count(*), sum(n), count(DISTINCT (dev, day, seq)) AS keys FROM par;
SELECT count(*), sum(n), count(DISTINCT (dev, day, seq)) AS keys FROM par_h;
-- GROUP BY with partial aggregates in the workers
SELECT par_workers('SELECT dev, count(*), sum(n) FROM par GROUP BY dev') > 0 AS parallel_ran;
SELECT count(*) AS differing_groups FROM (
  (SELECT dev, count(*), sum(n) FROM par GROUP BY dev
   EXCEPT SELECT dev, count(*), sum(n) FROM par_h GROUP BY dev)
  UNION ALL
  (SELECT dev, count(*), sum(n) FROM par_h GROUP BY dev
   EXCEPT SELECT dev, count(*), sum(n) FROM par GROUP BY dev)) x;
-- every row exactly once: the ranges neither overlap nor leave gaps
SELECT count(*) AS only_widecol FROM (SELECT * FROM par EXCEPT ALL SELECT * FROM par_h) x;
SELECT count(*) AS only_heap FROM (SELECT * FROM par_h EXCEPT ALL SELECT * FROM par) x;
-- a parallel hash join of the two tables
SELECT count(*) AS joined FROM par p JOIN par_h h USING (dev, day, seq) WHERE p.v = h.v AND p.n = h.n;
-- the transaction's own uncommitted writes are seen by the workers
BEGIN;
INSERT INTO par SELECT 2000, '2026-03-01', g, 'mine', 7 FROM generate_series(1, 1000) g;
DELETE FROM par WHERE dev = 7;
SELECT par_workers('SELECT count(*) FROM par') > 0 AS parallel_ran;
SELECT count(*), sum(n) FROM par;
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT count(*), sum(n) FROM par;
ROLLBACK;
-- a table with only level 0 (no run to split at): one range
CREATE TABLE par_small (k int, v text) USING widecol WITH (widecol.partition_key = 'k');
INSERT INTO par_small VALUES (1, 'a'), (2, 'b'), (3, 'c');
SELECT count(*), string_agg(v, ',' ORDER BY k) FROM par_small;
-- a rescan of a parallel scan (the inner side of a nested loop under Gather)
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT count(*) FROM par_small s JOIN par p ON p.dev = s.k AND p.seq < 1000;
RESET enable_hashjoin;
RESET enable_mergejoin;
-- force_parallel_mode: a Gather over a whole scan
SET force_parallel_mode = on;
SELECT count(*) FROM par_small;
RESET force_parallel_mode;
-- a run of fewer key pages than ranges is split at every key page
CREATE TABLE par_mid (k int, seq int, v text) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'seq');
INSERT INTO par_mid SELECT g % 50, g, md5(g::text) FROM generate_series(1, 6000) g;
CREATE TABLE par_mid_h AS SELECT * FROM par_mid;
SELECT sum(pages) BETWEEN 2 AND 63 AS fewer_key_pages_than_ranges
  FROM widecol.run_pages('par_mid') WHERE kind = 'key';
SELECT par_workers('SELECT count(*) FROM par_mid') > 0 AS parallel_ran;
SELECT count(*) AS only_widecol FROM (SELECT * FROM par_mid EXCEPT ALL SELECT * FROM par_mid_h) x;
SELECT count(*) AS only_heap FROM (SELECT * FROM par_mid_h EXCEPT ALL SELECT * FROM par_mid) x;
-- a partitioned parent of widecol partitions, a bigint key against an int literal
CREATE TABLE par_p (dev bigint, day date, seq int, n int) PARTITION BY RANGE (day);
CREATE TABLE par_p1 PARTITION OF par_p FOR VALUES FROM ('2026-01-01') TO ('2026-01-06')
  USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'seq');
CREATE TABLE par_p2 PARTITION OF par_p FOR VALUES FROM ('2026-01-06') TO ('2026-01-12')
  USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'seq');
INSERT INTO par_p SELECT dev, day, seq, n FROM par WHERE day < '2026-01-12';
SELECT par_workers('SELECT count(*), sum(n) FROM par_p WHERE dev < 50') > 0 AS parallel_ran;
SELECT count(*), sum(n) FROM par_p WHERE dev < 50;
SELECT count(*), sum(n) FROM par_h WHERE dev < 50 AND day < '2026-01-12';
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET widecol.level0_max_size;
DROP FUNCTION par_workers(text);
DROP TABLE par, par_h, par_small, par_mid, par_mid_h, par_p;
