-- widecol.compact(rel, major => true): all runs become one; shadowed and aborted versions go,
-- xids are frozen, tombstones and expired rows past widecol.gc_grace are
-- purged; the pages of dropped runs are reused once no snapshot reads them.
CREATE TABLE k (pk int, ck int, v text) USING widecol
  WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
CREATE TABLE k_heap (pk int, ck int, v text, PRIMARY KEY (pk, ck));
CREATE FUNCTION k_diff() RETURNS bigint LANGUAGE sql AS $$
  SELECT (SELECT count(*) FROM (SELECT * FROM k EXCEPT ALL SELECT * FROM k_heap) a)
       + (SELECT count(*) FROM (SELECT * FROM k_heap EXCEPT ALL SELECT * FROM k) b) $$;
INSERT INTO k_heap SELECT g % 10, g, repeat('v', 40) || g FROM generate_series(1, 6000) g;
\copy (SELECT * FROM k_heap) TO 'results/widecol_compact.csv'
\copy k FROM 'results/widecol_compact.csv'
\copy k FROM 'results/widecol_compact.csv'
UPDATE k SET v = v || '!' WHERE pk = 3;
UPDATE k_heap SET v = v || '!' WHERE pk = 3;
DELETE FROM k WHERE pk = 4 AND ck < 3000 AND v IS NOT NULL;  -- row by row: tombstones
DELETE FROM k_heap WHERE pk = 4 AND ck < 3000;
BEGIN;
INSERT INTO k VALUES (99, 1, 'aborted');
SELECT widecol.flush('k') > 0 AS flushed_in_aborted_xact;
ROLLBACK;
SELECT widecol.flush('k') > 0 AS flushed;
SELECT count(*) AS runs, sum(nrows) AS versions, sum(ntombstones) AS tombstones FROM widecol.runs('k');
SELECT k_diff() AS differences_before;
SELECT runs, runs_per_level, versions, tombstones, live_rows, deleted_rows, partitions, compressed_bytes < raw_bytes AS compressed,
       compression_ratio > 1 AS ratio_above_1, level0_pages, total_bytes > 0 AS has_bytes
  FROM widecol.table_stats('k');

-- tombstones younger than gc_grace stay (they shadow nothing any more, but
-- the grace period is the user's promise)
SELECT widecol.compact('k', major => true) AS kept;
SELECT count(*) AS runs, sum(nrows) AS versions, sum(ntombstones) AS tombstones, min(level) AS level
  FROM widecol.runs('k');
SELECT k_diff() AS differences_after;
SET widecol.gc_grace = 0;
SELECT widecol.compact('k', major => true) AS kept;
SELECT count(*) AS runs, sum(nrows) AS versions, sum(ntombstones) AS tombstones FROM widecol.runs('k');
SELECT k_diff() AS differences_after_purge;
SELECT runs, runs_per_level, versions, tombstones, live_rows, deleted_rows FROM widecol.table_stats('k');
SELECT bool_and(ok) AS verified FROM widecol.verify('k');

-- compacted versions are frozen: VACUUM can move relfrozenxid up to now
VACUUM k;
SELECT age(relfrozenxid) < 10 AS relfrozenxid_recent FROM pg_class WHERE relname = 'k';

-- the pages of dropped runs come back: loading and compacting again and
-- again keeps the table at a steady size
SELECT pg_relation_size('k') AS size_before \gset
\copy k FROM 'results/widecol_compact.csv'
SELECT widecol.compact('k', major => true) > 0;
\copy k FROM 'results/widecol_compact.csv'
SELECT widecol.compact('k', major => true) > 0;
\copy k FROM 'results/widecol_compact.csv'
SELECT widecol.compact('k', major => true) > 0;
SELECT widecol.compact('k', major => true) > 0;
SELECT pg_relation_size('k') < 2 * :size_before AS size_steady;
-- every COPY wrote the same rows again: the contents did not change
UPDATE k_heap SET v = repeat('v', 40) || ck WHERE pk = 3;
INSERT INTO k_heap SELECT g % 10, g, repeat('v', 40) || g FROM generate_series(1, 6000) g
  WHERE g % 10 = 4 AND g < 3000;
SELECT k_diff() AS differences_after_reloads;
SELECT bool_and(ok) AS verified FROM widecol.verify('k');
-- freed pages keep their old contents until reused: ANALYZE samples only
-- runs the manifest lists (here every block, the table is small)
\copy k FROM 'results/widecol_compact.csv'
SELECT widecol.compact('k', major => true) > 0;
ANALYZE k;
SELECT reltuples = (SELECT count(*) FROM k) AS reltuples_exact FROM pg_class WHERE relname = 'k';

-- a reader's snapshot keeps the runs it started with across a compaction
-- (the old runs' pages are not reused while it runs)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM k;
SELECT count(*) FROM k WHERE pk = 5;
COMMIT;

-- expired rows (TTL) are invisible at once and purged by compaction
CREATE TABLE k_ttl (pk int, v text) USING widecol
  WITH (widecol.partition_key = 'pk', widecol.default_ttl = '1 second');
INSERT INTO k_ttl SELECT g, 'x' FROM generate_series(1, 100) g;
SELECT count(*) AS live_now FROM k_ttl;
SELECT pg_sleep(1.2);
SELECT count(*) AS live_after_ttl FROM k_ttl;
SELECT widecol.compact('k_ttl') AS kept_after_expiry;
ALTER TABLE k_ttl RESET (widecol.default_ttl);
INSERT INTO k_ttl VALUES (1, 'forever');
SELECT * FROM k_ttl;

-- compact by a non-owner, on a non-widecol table, during nothing to do
CREATE TABLE k_empty (pk int) USING widecol WITH (widecol.partition_key = 'pk');
SELECT widecol.compact('k_empty');
SELECT widecol.compact('k_heap');
RESET widecol.gc_grace;
DROP TABLE k, k_heap, k_ttl, k_empty;
DROP FUNCTION k_diff();
