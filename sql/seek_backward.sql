-- Backward seeks: ORDER BY the reverse of the clustering order reads the
-- partitions from their end (level 0 and every run), with no Sort node, and
-- stops after LIMIT rows.  Each result is compared with a heap copy.
SET widecol.level0_max_size = 64;   -- many runs, plus level 0
CREATE TABLE bw (d int, day date, ts int, id int, v text) USING widecol
  WITH (widecol.partition_key = 'd, day', widecol.clustering_key = 'ts DESC, id');
CREATE TABLE bw_h (d int, day date, ts int, id int, v text, PRIMARY KEY (d, day, ts, id));
-- twenty statements: twenty runs (a multi-row INSERT writes one run)
DO $$ BEGIN FOR i IN 0..19 LOOP
  INSERT INTO bw SELECT g % 5, date '2026-01-01' + (g % 7), g % 1000, g, 'v' || g
    FROM generate_series(1, 20000) g WHERE g % 20 = i;
END LOOP; END $$;
INSERT INTO bw_h SELECT * FROM bw;
-- updates and deletes leave newer versions and tombstones in later runs
UPDATE bw SET v = v || 'u' WHERE d = 1 AND day = '2026-01-02' AND ts < 300;
UPDATE bw_h SET v = v || 'u' WHERE d = 1 AND day = '2026-01-02' AND ts < 300;
DELETE FROM bw WHERE d = 1 AND day = '2026-01-02' AND ts BETWEEN 100 AND 150;
DELETE FROM bw_h WHERE d = 1 AND day = '2026-01-02' AND ts BETWEEN 100 AND 150;
INSERT INTO bw VALUES (1, '2026-01-02', 999, 0, 'level 0');
INSERT INTO bw_h VALUES (1, '2026-01-02', 999, 0, 'level 0');
SELECT count(*) > 10 AS many_runs FROM widecol.runs('bw');
SELECT widecol.level0_pages('bw') > 0 AS level0_used;
-- same(query): the widecol result equals the heap result, row for row
CREATE FUNCTION same(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE a text[]; b text[];
BEGIN
  EXECUTE format('SELECT array_agg(x::text) FROM (%s) x', q) INTO a;
  EXECUTE format('SELECT array_agg(x::text) FROM (%s) x', replace(q, 'FROM bw ', 'FROM bw_h ')) INTO b;
  IF a IS DISTINCT FROM b THEN
    RAISE NOTICE 'widecol % rows, heap % rows', cardinality(a), cardinality(b);
  END IF;
  RETURN a IS NOT DISTINCT FROM b;
END $$;

-- one partition, whole and with clustering ranges
EXPLAIN (COSTS OFF) SELECT * FROM bw WHERE d = 1 AND day = '2026-01-02' ORDER BY ts, id DESC LIMIT 5;
SELECT same($$SELECT * FROM bw WHERE d = 1 AND day = '2026-01-02' ORDER BY ts, id DESC$$);
SELECT same($$SELECT * FROM bw WHERE d = 1 AND day = '2026-01-02' ORDER BY ts, id DESC LIMIT 7$$);
SELECT same($$SELECT * FROM bw WHERE d = 1 AND day = '2026-01-02' AND ts > 500 ORDER BY ts, id DESC LIMIT 7$$);
SELECT same($$SELECT * FROM bw WHERE d = 1 AND day = '2026-01-02' AND ts <= 120 ORDER BY ts, id DESC$$);
SELECT same($$SELECT * FROM bw WHERE d = 1 AND day = '2026-01-02' AND ts BETWEEN 90 AND 160 ORDER BY ts, id DESC$$);
SELECT same($$SELECT * FROM bw WHERE d = 1 AND day = '2026-01-02' AND ts = 42 ORDER BY ts, id DESC$$);
SELECT same($$SELECT * FROM bw WHERE d = 1 AND day = '2026-01-02' AND ts > 5000 ORDER BY ts, id DESC$$);
-- LIMIT stops the read early
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT * FROM bw WHERE d = 1 AND day = '2026-01-02' AND ts > 500 ORDER BY ts, id DESC LIMIT 5;
-- several partitions (IN list and a bucket range) merged backward
EXPLAIN (COSTS OFF) SELECT * FROM bw WHERE d = 1 AND day IN ('2026-01-02', '2026-01-05') ORDER BY ts, id DESC LIMIT 5;
SELECT same($$SELECT * FROM bw WHERE d = 1 AND day IN ('2026-01-02', '2026-01-05') AND ts BETWEEN 120 AND 700 ORDER BY ts, id DESC LIMIT 50$$);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM bw WHERE d = 1 AND day BETWEEN '2026-01-01' AND '2026-01-07' ORDER BY ts, id DESC LIMIT 5;
SELECT same($$SELECT * FROM bw WHERE d = 1 AND day BETWEEN '2026-01-01' AND '2026-01-07' ORDER BY ts, id DESC LIMIT 100$$);
SELECT same($$SELECT * FROM bw WHERE d = 1 AND day BETWEEN '2026-01-01' AND '2026-01-07' ORDER BY ts, id DESC$$);
-- sparse partitions (a few rows per device and day; bw's hold ~570): the
-- buckets are read backward as one key range
CREATE TABLE bws (LIKE bw) USING widecol
  WITH (widecol.partition_key = 'd, day', widecol.clustering_key = 'ts DESC, id');
INSERT INTO bws SELECT * FROM bw WHERE id % 50 = 0 AND ts < 500;
INSERT INTO bws SELECT * FROM bw WHERE id % 50 = 0 AND ts >= 500;
EXPLAIN (COSTS OFF) SELECT * FROM bws WHERE d = 1 AND day BETWEEN '2026-01-01' AND '2026-01-07' ORDER BY ts, id DESC LIMIT 5;
SELECT (SELECT array_agg(x::text) FROM (SELECT * FROM bws WHERE d = 1 AND day BETWEEN '2026-01-01' AND '2026-01-07'
                                        ORDER BY ts, id DESC LIMIT 6) x) =
       (SELECT array_agg(x::text) FROM (SELECT * FROM bw_h WHERE id % 50 = 0 AND d = 1 AND day BETWEEN '2026-01-01' AND '2026-01-07'
                                        ORDER BY ts, id DESC LIMIT 6) x) AS same_rows;
DROP TABLE bws;
RESET enable_seqscan;
-- a prepared statement
PREPARE q(int, date) AS SELECT ts, id, v FROM bw WHERE d = $1 AND day = $2 ORDER BY ts, id DESC LIMIT 3;
EXECUTE q(1, '2026-01-02');
EXECUTE q(4, '2026-01-07');
DEALLOCATE q;
-- the forward order still uses a forward seek
EXPLAIN (COSTS OFF) SELECT * FROM bw WHERE d = 1 AND day = '2026-01-02' ORDER BY ts DESC, id LIMIT 5;
SELECT same($$SELECT * FROM bw WHERE d = 1 AND day = '2026-01-02' ORDER BY ts DESC, id LIMIT 20$$);

-- ascending declared order, a text clustering prefix with equality, and a
-- partition big enough for several index leaf pages per run
CREATE TABLE bt (p int, a text COLLATE "C", b int, v text) USING widecol
  WITH (widecol.partition_key = 'p', widecol.clustering_key = 'a, b');
CREATE TABLE bt_h (p int, a text COLLATE "C", b int, v text, PRIMARY KEY (p, a, b));
INSERT INTO bt SELECT 1, 'k' || (g % 50), g, md5(g::text) FROM generate_series(1, 150000) g;
INSERT INTO bt SELECT 2, 'k' || (g % 3), g, 'two' FROM generate_series(1, 100) g;
INSERT INTO bt_h SELECT * FROM bt;
DELETE FROM bt WHERE p = 1 AND a = 'k7' AND b % 3 = 0;
DELETE FROM bt_h WHERE p = 1 AND a = 'k7' AND b % 3 = 0;
SELECT widecol.flush('bt') >= 0 AS flushed;
EXPLAIN (COSTS OFF) SELECT * FROM bt WHERE p = 1 AND a = 'k7' ORDER BY a DESC, b DESC LIMIT 3;
SELECT b, v FROM bt WHERE p = 1 AND a = 'k7' ORDER BY a DESC, b DESC LIMIT 3;
SELECT same($$SELECT * FROM bt WHERE p = 1 AND a = 'k7' ORDER BY a DESC, b DESC$$);
SELECT same($$SELECT * FROM bt WHERE p = 1 AND a = 'k7' AND b < 1000 ORDER BY a DESC, b DESC$$);
SELECT same($$SELECT * FROM bt WHERE p = 1 AND a > 'k45' ORDER BY a DESC, b DESC LIMIT 500$$);
SELECT same($$SELECT * FROM bt WHERE p = 1 AND a <= 'k1' ORDER BY a DESC, b DESC LIMIT 500$$);
SELECT same($$SELECT * FROM bt WHERE p IN (1, 2) AND a = 'k1' ORDER BY a DESC, b DESC$$);
-- the whole big partition backward (across run index leaf pages)
SELECT same($$SELECT p, a, b, v FROM bt WHERE p = 1 ORDER BY a DESC, b DESC$$);
SELECT same($$SELECT p, a, b, v FROM bt WHERE p = 2 ORDER BY a DESC, b DESC$$);
DROP TABLE bw, bw_h, bt, bt_h;
DROP FUNCTION same(text);
RESET widecol.level0_max_size;
