-- Range tombstones: a DELETE of whole partitions or clustering ranges writes
-- one tombstone per partition (a manifest row), not one per row.  Every
-- read honours them; compaction drops what they cover and purges them after
-- gc_grace.  Each result is compared with a heap copy.
SET max_parallel_workers_per_gather = 0;
CREATE TABLE rd (dev text, day date, ts bigint, v int)
  USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC');
CREATE TABLE rd_heap (LIKE rd);
INSERT INTO rd_heap SELECT 'd' || (g % 4), date '2025-01-01' + (g / 1000), g, g
  FROM generate_series(1, 8000) g;
INSERT INTO rd SELECT * FROM rd_heap;

\i sql/compare.inc
-- same(q): q on rd and rc returns the rows of q on rd_heap and rc_heap
CREATE FUNCTION same(q text) RETURNS text LANGUAGE sql
  AS $$ SELECT same(q, regexp_replace(q, '\m(rd|rc)\M', '\1_heap', 'g')) $$;
CREATE FUNCTION on_both(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE a bigint; b bigint;
BEGIN
  EXECUTE q; GET DIAGNOSTICS a = ROW_COUNT;
  EXECUTE regexp_replace(q, '\m(rd|rc)\M', '\1_heap', 'g'); GET DIAGNOSTICS b = ROW_COUNT;
  RETURN a || ' rows' || CASE WHEN a = b THEN '' ELSE ', heap ' || b END;
END $$;

-- the shapes that become range tombstones
EXPLAIN (COSTS OFF) DELETE FROM rd WHERE dev = 'd1' AND day = '2025-01-02';
EXPLAIN (COSTS OFF) DELETE FROM rd WHERE dev IN ('d1', 'd2') AND day BETWEEN '2025-01-03' AND '2025-01-04' AND ts >= 3500;
SELECT on_both($$DELETE FROM rd WHERE dev = 'd1' AND day = '2025-01-02'$$);
SELECT on_both($$DELETE FROM rd WHERE dev IN ('d1', 'd2') AND day BETWEEN '2025-01-03' AND '2025-01-04' AND ts >= 3500$$);
SELECT on_both($$DELETE FROM rd WHERE dev = 'd3' AND day = '2025-01-07' AND ts > 6100 AND ts < 6200$$);
SELECT on_both($$DELETE FROM rd WHERE dev = 'd0' AND day = '2025-01-07' AND ts <= 7500::int$$);
SELECT on_both($$DELETE FROM rd WHERE dev = 'd0' AND day = '2025-01-09' AND ts > 0$$);
SELECT partition_key, whole_partition, rows_deleted FROM widecol.range_tombstones('rd') ORDER BY 1, 2, 3;
-- reads: full scan, forward and backward seeks, a parallel scan
SELECT same($$SELECT dev, day, count(*), sum(v) FROM rd GROUP BY dev, day ORDER BY dev, day$$);
SELECT same($$SELECT * FROM rd WHERE dev = 'd2' AND day = '2025-01-03' ORDER BY ts DESC$$);
SELECT same($$SELECT * FROM rd WHERE dev = 'd2' AND day = '2025-01-03' ORDER BY ts LIMIT 7$$);
SELECT same($$SELECT * FROM rd WHERE dev = 'd3' AND day = '2025-01-07' AND ts BETWEEN 6090 AND 6210 ORDER BY ts$$);
SELECT same($$SELECT * FROM rd WHERE dev IN ('d0', 'd1') AND day BETWEEN '2025-01-01' AND '2025-01-08' ORDER BY ts DESC LIMIT 20$$);
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT same($$SELECT dev, count(*), sum(v) FROM rd GROUP BY dev ORDER BY dev$$);
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;
-- what a range tombstone deleted stays deleted; later writes live
SELECT on_both($$UPDATE rd SET v = -1 WHERE dev = 'd1' AND day = '2025-01-02' AND ts = 1001$$);
INSERT INTO rd VALUES ('d1', '2025-01-02', 1001, 42), ('d1', '2025-01-02', 9999, 43);
INSERT INTO rd_heap VALUES ('d1', '2025-01-02', 1001, 42), ('d1', '2025-01-02', 9999, 43);
SELECT same($$SELECT * FROM rd WHERE dev = 'd1' AND day = '2025-01-02' ORDER BY ts DESC$$);
SELECT on_both($$UPDATE rd SET v = v + 1 WHERE dev = 'd1' AND day = '2025-01-02' AND ts = 1001$$);
SELECT same($$SELECT * FROM rd WHERE dev = 'd1' AND day = '2025-01-02' ORDER BY ts DESC$$);
-- rollback, savepoints, and snapshots taken before the delete
BEGIN;
SELECT on_both($$DELETE FROM rd WHERE dev = 'd2' AND day = '2025-01-05'$$);
SELECT count(*) FROM rd WHERE dev = 'd2' AND day = '2025-01-05';
ROLLBACK;
SELECT count(*) FROM rd WHERE dev = 'd2' AND day = '2025-01-05';
BEGIN;
SAVEPOINT a;
DELETE FROM rd WHERE dev = 'd2' AND day = '2025-01-05' AND ts < 5500;
SELECT count(*) FROM rd WHERE dev = 'd2' AND day = '2025-01-05';
ROLLBACK TO a;
SELECT count(*) FROM rd WHERE dev = 'd2' AND day = '2025-01-05';
COMMIT;
-- these stay row by row (something needs the rows, or the WHERE is not
-- exactly a key range): no "Delete:" line
EXPLAIN (COSTS OFF) DELETE FROM rd WHERE dev = 'd1' AND day = '2025-01-05' RETURNING ts;
EXPLAIN (COSTS OFF) DELETE FROM rd WHERE dev = 'd1' AND day = '2025-01-05' AND v > 10;
EXPLAIN (COSTS OFF) DELETE FROM rd WHERE dev = 'd1' AND day = '2025-01-05' AND ts IN (5001, 5005);
EXPLAIN (COSTS OFF) DELETE FROM rd WHERE dev = 'd1' AND day = '2025-01-05' AND ts = 5001;
SELECT on_both($$DELETE FROM rd WHERE dev = 'd1' AND day = '2025-01-06' AND v % 3 = 0$$);
SELECT on_both($$DELETE FROM rd WHERE dev = 'd1' AND day = '2025-01-06' AND ts IN (5001, 5005)$$);
CREATE FUNCTION rd_log() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN OLD; END $$;
CREATE TRIGGER rd_row BEFORE DELETE ON rd FOR EACH ROW EXECUTE FUNCTION rd_log();
EXPLAIN (COSTS OFF) DELETE FROM rd WHERE dev = 'd1' AND day = '2025-01-05';
DROP TRIGGER rd_row ON rd;
-- a statement trigger still fires
CREATE FUNCTION rd_stmt() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE 'statement trigger fired'; RETURN NULL; END $$;
CREATE TRIGGER rd_stmt AFTER DELETE ON rd FOR EACH STATEMENT EXECUTE FUNCTION rd_stmt();
SELECT on_both($$DELETE FROM rd WHERE dev = 'd3' AND day = '2025-01-03'$$);
DROP TRIGGER rd_stmt ON rd;
SELECT same($$SELECT dev, day, count(*), sum(v) FROM rd GROUP BY dev, day ORDER BY dev, day$$);

-- stats and verify know them
SELECT range_tombstones FROM widecol.table_stats('rd');
SELECT segment, bool_and(ok) AS ok, count(*) FROM widecol.verify('rd') GROUP BY segment ORDER BY segment;

-- VACUUM FULL rewrites the table and keeps them (it copies what they cover)
VACUUM FULL rd;
SELECT count(*) AS range_tombstones_after_vacuum_full FROM widecol.range_tombstones('rd');
SELECT same($$SELECT dev, day, count(*), sum(v) FROM rd GROUP BY dev, day ORDER BY dev, day$$);

-- compaction drops the versions they cover; gc_grace keeps the tombstones
SELECT widecol.compact('rd', true) AS versions_written;
SELECT (SELECT sum(nrows - ntombstones) FROM widecol.runs('rd')) = (SELECT count(*) FROM rd_heap) AS only_live_rows_left;
SELECT count(*) AS range_tombstones_kept FROM widecol.range_tombstones('rd');
SELECT same($$SELECT dev, day, count(*), sum(v) FROM rd GROUP BY dev, day ORDER BY dev, day$$);
-- past gc_grace, a major compaction purges them
ALTER TABLE rd SET (widecol.gc_grace = '0');
SELECT widecol.compact('rd', true) >= 0 AS compacted;
SELECT count(*) AS range_tombstones_left FROM widecol.range_tombstones('rd');
SELECT kind, tombstones_purged FROM widecol.compactions WHERE "table" = 'rd'::regclass AND kind = 'range_tombstones';
SELECT same($$SELECT dev, day, count(*), sum(v) FROM rd GROUP BY dev, day ORDER BY dev, day$$);

-- counters: a range delete resets the counters of the keys it covers
CREATE TABLE rc (k text, c int, n bigint)
  USING widecol WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c', widecol.counter_columns = 'n');
CREATE TABLE rc_heap (k text, c int, n bigint);
INSERT INTO rc SELECT 'a', c, 1 FROM generate_series(1, 10) c;
INSERT INTO rc SELECT 'a', c, 5 FROM generate_series(1, 10) c;
INSERT INTO rc_heap SELECT 'a', c, 6 FROM generate_series(1, 10) c;
SELECT on_both($$DELETE FROM rc WHERE k = 'a' AND c <= 4$$);
INSERT INTO rc VALUES ('a', 1, 100), ('a', 9, 100);
INSERT INTO rc_heap VALUES ('a', 1, 100);
UPDATE rc_heap SET n = n + 100 WHERE k = 'a' AND c = 9;
SELECT same($$SELECT * FROM rc ORDER BY c$$);
SELECT same($$SELECT * FROM rc WHERE k = 'a' ORDER BY c DESC$$);

-- Counted unread: after a major compaction the rows are frozen and every
-- key page of a run is "settled", so a delete counts the rows of the pages
-- inside its range from the run's leaf index (EXPLAIN: few key pages read)
-- and decodes only the pages at its ends.  Anything else in the range (a
-- level-0 row, another run, an older range tombstone, a row with a TTL)
-- sends it back to merging the keys.  The counts must be exact either way.
DROP TABLE rd, rd_heap;
CREATE TABLE rd (dev text, day date, ts bigint, v int)
  USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts');
CREATE TABLE rd_heap (LIKE rd);
INSERT INTO rd_heap SELECT 'd' || (g % 3), date '2025-02-01', g, g FROM generate_series(1, 60000) g;
INSERT INTO rd_heap SELECT 'e', date '2025-02-01' + (g % 5), g, g FROM generate_series(1, 5000) g;
INSERT INTO rd_heap SELECT 'f', date '2025-02-01', g, g FROM generate_series(1, 20000) g;
INSERT INTO rd SELECT * FROM rd_heap;
SELECT widecol.compact('rd', true) > 0 AS compacted;
CREATE FUNCTION key_pages(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE l text; pages int; deleted bigint;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ 'Key Pages Read' THEN pages := substring(l from '\d+')::int; END IF;
    IF l ~ 'Rows Deleted' THEN deleted := substring(l from '\d+')::bigint; END IF;
  END LOOP;
  RETURN deleted || ' rows, ' || CASE WHEN pages <= 3 THEN 'counted from the leaf index' ELSE 'keys merged' END;
END $$;
BEGIN;
SELECT key_pages($$DELETE FROM rd WHERE dev = 'd1' AND day = '2025-02-01'$$);
ROLLBACK;
SELECT on_both($$DELETE FROM rd WHERE dev = 'd1' AND day = '2025-02-01'$$);
SELECT on_both($$DELETE FROM rd WHERE dev = 'd2' AND day = '2025-02-01' AND ts BETWEEN 3000 AND 40000$$);
-- exclusive ends: the rows equal to an end are counted and taken off
SELECT on_both($$DELETE FROM rd WHERE dev = 'd0' AND day = '2025-02-01' AND ts > 3000 AND ts < 45000$$);
SELECT on_both($$DELETE FROM rd WHERE dev = 'd0' AND day = '2025-02-01' AND ts > 59997$$);
SELECT on_both($$DELETE FROM rd WHERE dev = 'd0' AND day = '2025-02-01' AND ts > 59999$$);
SELECT on_both($$DELETE FROM rd WHERE dev IN ('e', 'nobody') AND day BETWEEN '2025-02-01' AND '2025-02-02'$$);
-- the range tombstone just written sends the same partition back to merging
BEGIN;
SELECT key_pages($$DELETE FROM rd WHERE dev = 'd2' AND day = '2025-02-01'$$);
ROLLBACK;
-- a level-0 row in the partition, and a row with a TTL: merged, exact
SELECT on_both($$UPDATE rd SET v = -3 WHERE dev = 'f' AND day = '2025-02-01' AND ts = 7$$);
INSERT INTO rd VALUES ('f', '2025-02-01', 0, 0);
INSERT INTO rd_heap VALUES ('f', '2025-02-01', 0, 0);
BEGIN;
SELECT key_pages($$DELETE FROM rd WHERE dev = 'f' AND day = '2025-02-01'$$);
ROLLBACK;
SELECT on_both($$DELETE FROM rd WHERE dev = 'f' AND day = '2025-02-01' AND ts <= 10000$$);
SET widecol.ttl = '1h';
INSERT INTO rd VALUES ('ttl', '2025-02-01', 1, 1), ('ttl', '2025-02-01', 2, 2);
RESET widecol.ttl;
INSERT INTO rd_heap VALUES ('ttl', '2025-02-01', 1, 1), ('ttl', '2025-02-01', 2, 2);
SELECT widecol.compact('rd', true) > 0 AS compacted;
SELECT on_both($$DELETE FROM rd WHERE dev = 'ttl' AND day = '2025-02-01'$$);
SELECT same($$SELECT dev, day, count(*), sum(v) FROM rd GROUP BY dev, day ORDER BY dev, day$$);
SELECT segment, bool_and(ok) AS ok FROM widecol.verify('rd') GROUP BY segment ORDER BY segment;

-- many range tombstones written in no key order, several per partition
-- (whole partitions and clustering ranges): a backend keeps them sorted
-- by partition key once, and reads look their partition's up
CREATE TABLE rm (p int, c int, v int) USING widecol
  WITH (widecol.partition_key = 'p', widecol.clustering_key = 'c');
CREATE TABLE rm_heap (p int, c int, v int, PRIMARY KEY (p, c));
INSERT INTO rm SELECT p, c, p * c FROM generate_series(1, 300) p, generate_series(1, 20) c;
INSERT INTO rm_heap SELECT * FROM rm;
SELECT widecol.compact('rm', true) > 0 AS compacted;
DO $$
BEGIN
  FOR i IN 0..299 LOOP
    -- a permutation of 1..300
    CASE (i * 7) % 3
    WHEN 0 THEN
      EXECUTE format('DELETE FROM rm WHERE p = %s', 1 + (i * 37) % 300);
      EXECUTE format('DELETE FROM rm_heap WHERE p = %s', 1 + (i * 37) % 300);
    WHEN 1 THEN
      EXECUTE format('DELETE FROM rm WHERE p = %s AND c BETWEEN 3 AND 9', 1 + (i * 37) % 300);
      EXECUTE format('DELETE FROM rm_heap WHERE p = %s AND c BETWEEN 3 AND 9', 1 + (i * 37) % 300);
      EXECUTE format('DELETE FROM rm WHERE p = %s AND c > 15', 1 + (i * 37) % 300);
      EXECUTE format('DELETE FROM rm_heap WHERE p = %s AND c > 15', 1 + (i * 37) % 300);
    ELSE NULL;
    END CASE;
  END LOOP;
END $$;
-- rows written again after their partition's tombstone live
INSERT INTO rm SELECT p, c, -1 FROM generate_series(1, 300, 9) p, generate_series(1, 20, 5) c;
INSERT INTO rm_heap SELECT p, c, -1 FROM generate_series(1, 300, 9) p, generate_series(1, 20, 5) c
  ON CONFLICT (p, c) DO UPDATE SET v = -1;
SELECT count(*) AS range_tombstones FROM widecol.range_tombstones('rm');
SELECT same($$SELECT p, count(*), sum(v) FROM rm GROUP BY p ORDER BY p$$, $$SELECT p, count(*), sum(v) FROM rm_heap GROUP BY p ORDER BY p$$);
SELECT same($$SELECT * FROM rm WHERE p = 38 ORDER BY c$$, $$SELECT * FROM rm_heap WHERE p = 38 ORDER BY c$$);
SELECT same($$SELECT * FROM rm WHERE p = 75 ORDER BY c$$, $$SELECT * FROM rm_heap WHERE p = 75 ORDER BY c$$);
SELECT same($$SELECT * FROM rm WHERE p = 1 ORDER BY c$$, $$SELECT * FROM rm_heap WHERE p = 1 ORDER BY c$$);
SELECT same($$SELECT * FROM rm WHERE p = ANY('{2,38,75,112,149,186,223,260,297}') ORDER BY p, c$$,
            $$SELECT * FROM rm_heap WHERE p = ANY('{2,38,75,112,149,186,223,260,297}') ORDER BY p, c$$);
DROP TABLE rm, rm_heap;

DROP TABLE rd, rd_heap, rc, rc_heap;
DROP FUNCTION same(text), on_both(text), rd_log(), rd_stmt(), rows_diff(regclass, regclass), same(text, text),
  key_pages(text);
