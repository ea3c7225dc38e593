-- Query shapes users write that must still be seeks: cross-type literals and
-- parameters, keyset paging with row comparisons, semi-joins, and widecol
-- partitions of a partitioned table.  Each result is compared with a heap copy.
-- (in a schema of their own: the table names are those other files use)
CREATE SCHEMA shapes;
SET search_path = shapes, public;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE m (dev text, ts bigint, v int, note text)
  USING widecol WITH (widecol.partition_key = 'dev', widecol.clustering_key = 'ts');
CREATE TABLE m_heap (LIKE m);
INSERT INTO m_heap SELECT 'd' || d, t * 10, d * t, 'n' || t
  FROM generate_series(1, 8) d, generate_series(1, 500) t;
INSERT INTO m SELECT * FROM m_heap;
ANALYZE m;
ANALYZE m_heap;
SET enable_seqscan = off;

\i sql/compare.inc
-- same(q): q returns the rows of q on the heap copies of its tables
CREATE FUNCTION same(q text) RETURNS text LANGUAGE sql
  AS $$ SELECT same(q, regexp_replace(q, '\m(m|img|pm|ev|byday|sp|spd|spc)\M', '\1_heap', 'g')) $$;

-- (a) int literals against a bigint clustering column are clustering bounds
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE dev = 'd2' AND ts = 5000;
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE dev = 'd2' AND ts < 2000 AND ts >= 1000::int2;
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE dev = 'd2' AND ts > 1000 ORDER BY ts LIMIT 5;
SELECT same($$SELECT * FROM m WHERE dev = 'd2' AND ts = 5000$$);
SELECT same($$SELECT * FROM m WHERE dev = 'd2' AND ts < 2000 AND ts >= 1000::int2 ORDER BY ts$$);
SELECT same($$SELECT * FROM m WHERE dev = 'd2' AND ts > 1000 ORDER BY ts LIMIT 5$$);
SELECT same($$SELECT * FROM m WHERE dev = 'd2' AND ts IN (10, 20, 4990, 7) ORDER BY ts$$);
-- numeric is not in the integer family: a Filter, still the right rows
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE dev = 'd2' AND ts = 5000.0;
SELECT same($$SELECT * FROM m WHERE dev = 'd2' AND ts = 5000.0$$);
-- an int parameter (plpgsql variable, generic plan) in a single-row DELETE
CREATE FUNCTION del_one(tab regclass, d text, t int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('DELETE FROM %s WHERE dev = $1 AND ts = $2', tab) USING d, t;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $$;
SELECT del_one('m', 'd3', 2500), del_one('m_heap', 'd3', 2500);
PREPARE p(text, int) AS SELECT * FROM m WHERE dev = $1 AND ts = $2;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE p('d3', 2510);
EXECUTE p('d3', 2510);
EXECUTE p('d3', 2500);
RESET plan_cache_mode;
DEALLOCATE p;
-- out-of-range bounds: int8 values beyond int4 never match, never error
CREATE TABLE small (k int, c int2, v text)
  USING widecol WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
INSERT INTO small VALUES (1, 1, 'a'), (1, 32767, 'b'), (1, -32768, 'c');
SELECT v FROM small WHERE k = 1 AND c < 100000 ORDER BY c;
SELECT v FROM small WHERE k = 1 AND c > 40000;
SELECT v FROM small WHERE k = 1 AND c >= -99999 AND c < 0;
SELECT v FROM small WHERE k = 1 AND c = 99999;
SELECT v FROM small WHERE k = 5000000000 AND c = 1;
SELECT v FROM small WHERE k = 1::int8 AND c = 1::int8;
EXPLAIN (COSTS OFF) SELECT v FROM small WHERE k = 1::int8 AND c = 1::int8;

-- (b) keyset paging: row comparisons are clustering bounds, both directions
CREATE TABLE img (
    device_id text, day date, capture_time timestamptz, image_id int, object_key text
) USING widecol WITH (widecol.partition_key = 'device_id, day',
                      widecol.clustering_key = 'capture_time DESC, image_id DESC');
CREATE TABLE img_heap (LIKE img);
INSERT INTO img_heap SELECT 'cam-' || d, date '2025-03-01' + day,
       timestamptz '2025-03-01 00:00+00' + day * interval '1 day' + (i / 3) * interval '20 minutes',
       i, format('k/%s/%s/%s', d, day, i)
  FROM generate_series(1, 3) d, generate_series(0, 4) day, generate_series(0, 89) i;
INSERT INTO img SELECT * FROM img_heap;
ANALYZE img;
ANALYZE img_heap;
EXPLAIN (COSTS OFF) SELECT * FROM img WHERE device_id = 'cam-1' AND day = '2025-03-02'
   AND (capture_time, image_id) < ('2025-03-02 05:00+00', 80)
 ORDER BY capture_time DESC, image_id DESC LIMIT 20;
-- page through one partition 20 rows at a time, newest first, and back
CREATE FUNCTION pages(tab text, backward bool) RETURNS text LANGUAGE plpgsql AS $$
DECLARE t timestamptz; i int; n int := 0; total int := 0; got int; r record; out text := '';
BEGIN
  LOOP
    got := 0;
    FOR r IN EXECUTE format(
      'SELECT capture_time, image_id FROM %s WHERE device_id = ''cam-2'' AND day = ''2025-03-04''
          AND ($1 IS NULL OR (capture_time, image_id) %s ($1, $2))
        ORDER BY capture_time %s, image_id %s LIMIT 20',
      tab, CASE WHEN backward THEN '>' ELSE '<' END,
      CASE WHEN backward THEN 'ASC' ELSE 'DESC' END, CASE WHEN backward THEN 'ASC' ELSE 'DESC' END)
      USING t, i
    LOOP
      got := got + 1; t := r.capture_time; i := r.image_id;
    END LOOP;
    EXIT WHEN got = 0;
    n := n + 1; total := total + got; out := out || i || ' ';
  END LOOP;
  RETURN n || ' pages, ' || total || ' rows, last ids: ' || out;
END $$;
SELECT pages('img', false) = pages('img_heap', false) AS forward_same, pages('img', false);
SELECT pages('img', true) = pages('img_heap', true) AS backward_same, pages('img', true);
-- a late page reads its own rows, not every row of the pages before it
-- the number at the end of the first line of EXPLAIN ANALYZE q that matches
-- label (NULL: none), or with summed the sum over all such lines (0: none)
CREATE FUNCTION explain_number(q text, label text, summed bool DEFAULT false) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE l text; n bigint := CASE WHEN summed THEN 0 END;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    CONTINUE WHEN l !~ label;
    IF NOT summed THEN RETURN substring(l FROM '(\d+)\s*$')::bigint; END IF;
    n := n + substring(l FROM '(\d+)\s*$')::bigint;
  END LOOP;
  RETURN n;
END $$;
CREATE FUNCTION versions_read(q text) RETURNS bigint LANGUAGE sql AS $$ SELECT explain_number(q, 'Versions Merged') $$;
CREATE FUNCTION partitions_read(q text) RETURNS bigint LANGUAGE sql AS $$ SELECT explain_number(q, 'Partitions Read') $$;
SELECT versions_read($$SELECT * FROM img WHERE device_id = 'cam-2' AND day = '2025-03-04'
   AND (capture_time, image_id) < ('2025-03-04 02:00+00', 19) ORDER BY capture_time DESC, image_id DESC LIMIT 5$$) AS page_after_row_19,
       versions_read($$SELECT * FROM img WHERE device_id = 'cam-2' AND day = '2025-03-04'
   AND (capture_time, image_id) > ('2025-03-04 08:00+00', 70) ORDER BY capture_time, image_id LIMIT 5$$) AS backward_page_after_row_70,
       versions_read($$SELECT * FROM img WHERE device_id = 'cam-2' AND day = '2025-03-04'
   ORDER BY capture_time DESC, image_id DESC$$) AS whole_partition;
EXPLAIN (COSTS OFF) SELECT * FROM img WHERE device_id = 'cam-1' AND day = '2025-03-02'
   AND (capture_time, image_id) > ('2025-03-02 05:00+00', 80)
 ORDER BY capture_time, image_id LIMIT 20;
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-1' AND day = '2025-03-02'
   AND (capture_time, image_id) > ('2025-03-02 05:00+00', 80) ORDER BY capture_time, image_id LIMIT 20$$);
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-1' AND day = '2025-03-02'
   AND (capture_time, image_id) <= ('2025-03-02 05:00+00', 16) ORDER BY capture_time DESC, image_id DESC$$);
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-1' AND day = '2025-03-02'
   AND ('2025-03-02 05:00+00', 16) <= (capture_time, image_id) ORDER BY capture_time DESC, image_id DESC$$);
-- a row comparison combined with a plain bound, and against another day's range
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-1' AND day = '2025-03-02'
   AND (capture_time, image_id) < ('2025-03-02 05:00+00', 16) AND capture_time >= '2025-03-02 03:00+00'
 ORDER BY capture_time DESC, image_id DESC$$);
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-1' AND day BETWEEN '2025-03-01' AND '2025-03-03'
   AND (capture_time, image_id) < ('2025-03-02 05:00+00', 16) ORDER BY capture_time DESC, image_id DESC LIMIT 30$$);
-- date literal against the timestamptz clustering column (same btree family)
EXPLAIN (COSTS OFF) SELECT * FROM img WHERE device_id = 'cam-1' AND day = '2025-03-02'
   AND capture_time >= date '2025-03-02' ORDER BY capture_time DESC, image_id DESC LIMIT 3;
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-1' AND day = '2025-03-02'
   AND capture_time < date '2025-03-03' AND capture_time > timestamp '2025-03-01 20:00' ORDER BY capture_time DESC, image_id DESC$$);
-- a timestamp literal against a date partition key column
SELECT same($$SELECT * FROM img WHERE device_id = 'cam-3' AND day = timestamp '2025-03-03 00:00' ORDER BY capture_time DESC, image_id DESC LIMIT 4$$);

-- (c) semi-join on the partition key: a parameterized seek with int bounds
CREATE TABLE wanted (dev text);
INSERT INTO wanted VALUES ('d1'), ('d4'), ('d7');
ANALYZE wanted;
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE dev IN (SELECT dev FROM wanted) AND ts BETWEEN 100 AND 150;
SELECT same($$SELECT * FROM m WHERE dev IN (SELECT dev FROM wanted) AND ts BETWEEN 100 AND 150 ORDER BY dev, ts$$);
SELECT same($$SELECT * FROM m WHERE EXISTS (SELECT 1 FROM wanted w WHERE w.dev = m.dev) AND ts < 40 ORDER BY dev, ts$$);

-- (d) widecol partitions of a partitioned table
CREATE TABLE pm (day date, dev text, ts bigint, v int) PARTITION BY RANGE (day);
CREATE TABLE pm_heap (LIKE pm);
DO $$
BEGIN
  FOR d IN 0..3 LOOP
    EXECUTE format($f$CREATE TABLE pm_%s PARTITION OF pm FOR VALUES FROM (%L) TO (%L)
                      USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC')$f$,
                   d, date '2025-05-01' + d, date '2025-05-02' + d);
  END LOOP;
END $$;
INSERT INTO pm_heap SELECT date '2025-05-01' + d, 'dev' || k, d * 1000 + t, t
  FROM generate_series(0, 3) d, generate_series(1, 5) k, generate_series(1, 200) t;
INSERT INTO pm SELECT * FROM pm_heap;
ANALYZE pm;
ANALYZE pm_heap;
-- pruned to one partition: a seek, no Sort
EXPLAIN (COSTS OFF) SELECT * FROM pm WHERE day = '2025-05-02' AND dev = 'dev3' ORDER BY ts DESC LIMIT 5;
SELECT same($$SELECT * FROM pm WHERE day = '2025-05-02' AND dev = 'dev3' ORDER BY ts DESC LIMIT 5$$);
-- across partitions: a MergeAppend of seeks, no Sort
EXPLAIN (COSTS OFF) SELECT * FROM pm WHERE day IN ('2025-05-01', '2025-05-03', '2025-05-04') AND dev = 'dev2'
 ORDER BY ts DESC LIMIT 5;
SELECT same($$SELECT * FROM pm WHERE day IN ('2025-05-01', '2025-05-03', '2025-05-04') AND dev = 'dev2' ORDER BY ts DESC LIMIT 5$$);
SELECT same($$SELECT * FROM pm WHERE day >= '2025-05-02' AND dev = 'dev2' AND ts < 3100 ORDER BY ts DESC LIMIT 250$$);
-- partitionwise aggregate still works
SET enable_partitionwise_aggregate = on;
SELECT same($$SELECT day, count(*), sum(v) FROM pm GROUP BY day ORDER BY day$$);
RESET enable_partitionwise_aggregate;
-- ON CONFLICT through the parent is refused like on a plain widecol table
INSERT INTO pm VALUES ('2025-05-01', 'dev1', 1, 0) ON CONFLICT DO NOTHING;
SELECT v FROM pm WHERE day = '2025-05-01' AND dev = 'dev1' AND ts = 1;
-- a heap partition next to widecol ones: the heap partition is still a plain scan
CREATE TABLE pm_9 PARTITION OF pm FOR VALUES FROM ('2025-06-01') TO ('2025-06-02');
INSERT INTO pm VALUES ('2025-06-01', 'dev1', 9, 9);
INSERT INTO pm_heap VALUES ('2025-06-01', 'dev1', 9, 9);
SELECT same($$SELECT * FROM pm WHERE dev = 'dev1' AND day IN ('2025-05-01', '2025-06-01') AND ts < 12 ORDER BY ts DESC$$);

-- maintenance and stats through the partitioned table: each widecol partition
SELECT * FROM widecol.partitions('pm');
SELECT widecol.compact('pm', true) AS versions_written;
SELECT runs, runs_per_level, live_rows, partitions, level0_pages, damaged FROM widecol.table_stats('pm');
SELECT sum(runs) AS runs, sum(live_rows) AS live_rows
  FROM widecol.partitions('pm') p, widecol.table_stats(p);
SELECT segment, pages > 0 AS has_pages, rows, ok FROM widecol.verify('pm') ORDER BY segment;
INSERT INTO pm VALUES ('2025-05-02', 'dev9', 1, 1);
SELECT widecol.flush('pm') AS flushed;
CREATE TABLE no_wc (a int) PARTITION BY LIST (a);
CREATE TABLE no_wc_1 PARTITION OF no_wc FOR VALUES IN (1);
SELECT widecol.compact('no_wc');
SELECT * FROM widecol.table_stats('no_wc');
SELECT * FROM widecol.table_stats('no_wc_1');

-- (e) open-ended ranges on the last partition column read the buckets that exist
CREATE TABLE ev (dev text, day date, ts bigint, v int)
  USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC');
CREATE TABLE ev_heap (LIKE ev);
INSERT INTO ev_heap SELECT 'e' || k, date '2025-06-01' + d * 3, d * 100 + t, t
  FROM generate_series(1, 3) k, generate_series(0, 9) d, generate_series(1, 20) t;
INSERT INTO ev SELECT * FROM ev_heap;
-- a bucket whose rows are all deleted, one only in level 0
DELETE FROM ev WHERE dev = 'e2' AND day = '2025-06-10';
DELETE FROM ev_heap WHERE dev = 'e2' AND day = '2025-06-10';
INSERT INTO ev VALUES ('e2', '2030-01-01', 1, 1);
INSERT INTO ev_heap VALUES ('e2', '2030-01-01', 1, 1);
ANALYZE ev;
ANALYZE ev_heap;
EXPLAIN (COSTS OFF) SELECT * FROM ev WHERE dev = 'e2' AND day >= '2025-06-05' ORDER BY ts DESC LIMIT 10;
SELECT same($$SELECT * FROM ev WHERE dev = 'e2' AND day >= '2025-06-05' ORDER BY ts DESC LIMIT 10$$);
SELECT same($$SELECT * FROM ev WHERE dev = 'e2' AND day > '2025-06-07' ORDER BY ts$$);
SELECT same($$SELECT * FROM ev WHERE dev = 'e2' AND day < '2025-06-10' ORDER BY ts DESC$$);
SELECT same($$SELECT * FROM ev WHERE dev = 'e2' AND day <= '2025-06-10' ORDER BY ts DESC$$);
SELECT same($$SELECT * FROM ev WHERE dev IN ('e1', 'e3', 'e9') AND day >= '2025-06-20' ORDER BY ts DESC, dev$$);
SELECT same($$SELECT * FROM ev WHERE dev = 'e2' AND day >= timestamp '2025-06-09 12:00' ORDER BY ts DESC$$);
SELECT same($$SELECT * FROM ev WHERE dev = 'e2' AND day BETWEEN '2000-01-01' AND '2099-12-31' ORDER BY ts DESC, day$$);
SELECT same($$SELECT * FROM ev WHERE dev = 'e2' AND day > 'infinity' ORDER BY ts DESC$$);
SELECT same($$SELECT * FROM ev WHERE dev = 'e2' AND day >= '2025-06-05' AND ts < 200 ORDER BY ts DESC$$);
-- only the buckets that exist are read: from June 5 on, 7 in June (not the
-- deleted one) and 2030
SELECT partitions_read($$SELECT * FROM ev WHERE dev = 'e2' AND day >= '2025-06-05'$$) AS open_range,
       partitions_read($$SELECT * FROM ev WHERE dev = 'e2' AND day BETWEEN '2025-06-05' AND '2025-06-07'$$) AS short_closed_range,
       partitions_read($$SELECT * FROM ev WHERE dev = 'e2' AND day BETWEEN '2000-01-01' AND '2099-12-31'$$) AS long_closed_range;
-- a table keyed by the bucket alone, and an int bucket
CREATE TABLE byday (day int, id int, v text)
  USING widecol WITH (widecol.partition_key = 'day', widecol.clustering_key = 'id');
CREATE TABLE byday_heap (LIKE byday);
INSERT INTO byday_heap SELECT d, i, d || '/' || i FROM generate_series(-5, 50, 5) d, generate_series(1, 4) i;
INSERT INTO byday SELECT * FROM byday_heap;
EXPLAIN (COSTS OFF) SELECT * FROM byday WHERE day >= 20 ORDER BY id LIMIT 6;
SELECT same($$SELECT * FROM byday WHERE day >= 20 ORDER BY id, day LIMIT 6$$);
SELECT same($$SELECT * FROM byday WHERE day < 3::int8 ORDER BY id, day$$);
SELECT same($$SELECT * FROM byday WHERE day > -9999999999 ORDER BY day, id$$);
SELECT same($$SELECT * FROM byday WHERE day >= 9999999999 ORDER BY day, id$$);

-- (e2) small partitions in a bucket range: one key range read for all of
-- them (a seek per bucket would probe every run's bloom filter each time)
CREATE TABLE sp (dev text, day date, ts bigint, v int)
  USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC');
CREATE TABLE sp_heap (dev text, day date, ts bigint, v int, PRIMARY KEY (dev, day, ts));
-- three runs and level 0, a few rows per device and day, deletes among them
INSERT INTO sp SELECT 'e' || (g % 4), date '2025-06-01' + (g / 40) % 30, g, g % 7 FROM generate_series(0, 1199) g;
INSERT INTO sp SELECT 'e' || (g % 4), date '2025-06-01' + (g / 40) % 30, g, -g FROM generate_series(1, 1199, 5) g;
INSERT INTO sp SELECT 'e' || (g % 4), date '2025-06-01' + (g / 40) % 30, g + 5000, g FROM generate_series(0, 1199, 3) g;
INSERT INTO sp VALUES ('e1', '2025-06-09', 9999, 1), ('e2', '2025-06-09', 9998, 2);
DELETE FROM sp WHERE dev = 'e1' AND day = '2025-06-10' AND ts IN (361, 365, 369);
INSERT INTO sp_heap SELECT * FROM sp;
ANALYZE sp;
EXPLAIN (COSTS OFF) SELECT * FROM sp WHERE dev = 'e1' AND day BETWEEN '2025-06-04' AND '2025-06-16' ORDER BY ts DESC LIMIT 5;
SELECT same($$SELECT * FROM sp WHERE dev = 'e1' AND day BETWEEN '2025-06-04' AND '2025-06-16' ORDER BY ts DESC LIMIT 5$$);
SELECT same($$SELECT * FROM sp WHERE dev = 'e1' AND day BETWEEN '2025-06-04' AND '2025-06-16' ORDER BY ts$$);
SELECT same($$SELECT * FROM sp WHERE dev = 'e3' AND day >= '2025-06-10' AND ts BETWEEN 350 AND 720 ORDER BY ts DESC$$);
SELECT same($$SELECT count(*), sum(v) FROM sp WHERE dev = 'e2' AND day BETWEEN '2025-06-01' AND '2025-06-30'$$);
SELECT same($$SELECT * FROM sp WHERE dev IN ('e1', 'e2') AND day BETWEEN '2025-06-04' AND '2025-06-10' ORDER BY ts DESC, dev$$);
SELECT same($$SELECT w.dev, e.ts FROM (VALUES ('e1'), ('e3')) w(dev) JOIN sp e ON e.dev = w.dev AND e.day BETWEEN '2025-06-07' AND '2025-06-13' ORDER BY 1, 2$$);
-- a seek whose plan reads key columns only reads no stored tuple (no value
-- page); a filter or an output on a value column reads them again
SELECT same($$SELECT dev, day, ts FROM sp WHERE dev = 'e2' AND day BETWEEN '2025-06-03' AND '2025-06-20' ORDER BY ts DESC$$);
SELECT same($$SELECT day, count(*) FROM sp WHERE dev = 'e3' AND day >= '2025-06-10' GROUP BY day ORDER BY day$$);
SELECT same($$SELECT dev, ts FROM sp WHERE dev = 'e2' AND day BETWEEN '2025-06-03' AND '2025-06-20' AND v > 3 ORDER BY ts DESC$$);
SELECT same($$SELECT ts, v FROM sp WHERE dev = 'e1' AND day = '2025-06-09' ORDER BY ts$$);
CREATE FUNCTION value_pages(q text) RETURNS bigint LANGUAGE sql AS $$ SELECT explain_number(q, 'Value Pages Read', true) $$;
SELECT value_pages($$SELECT dev, ts FROM sp WHERE dev = 'e2' AND day BETWEEN '2025-06-03' AND '2025-06-20' ORDER BY ts DESC$$) = 0 AS keys_only_reads_no_value_page,
       value_pages($$SELECT dev, ts FROM sp WHERE dev = 'e2' AND day BETWEEN '2025-06-03' AND '2025-06-20' AND v > 3 ORDER BY ts DESC$$) > 0 AS a_value_filter_reads_them;
-- the one range read skips the runs whose key-column ranges (or bloom
-- filters) hold none of its partitions: one run per day, a three-day read
-- opens three of ten
CREATE TABLE spd (LIKE sp) USING widecol
  WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC');
CREATE TABLE spd_heap (LIKE sp_heap INCLUDING ALL);
DO $$
BEGIN
  FOR d IN 0..9 LOOP
    INSERT INTO spd SELECT 'e' || (g % 4), date '2025-06-01' + d, d * 100 + g, g FROM generate_series(0, 11) g;
    PERFORM widecol.flush('spd');
  END LOOP;
END $$;
INSERT INTO spd_heap SELECT * FROM spd;
ANALYZE spd;
SELECT count(*) AS runs FROM widecol.runs('spd');
SELECT explain_number($$SELECT * FROM spd WHERE dev = 'e1' AND day BETWEEN '2025-06-03' AND '2025-06-05'$$,
                      'Runs Skipped by Key Range') +
       explain_number($$SELECT * FROM spd WHERE dev = 'e1' AND day BETWEEN '2025-06-03' AND '2025-06-05'$$,
                      'Runs Skipped by Bloom Filter') AS runs_skipped;
SELECT same($$SELECT * FROM spd WHERE dev = 'e1' AND day BETWEEN '2025-06-03' AND '2025-06-05' ORDER BY ts DESC$$);
-- the same on widecol partitions of a partitioned table (pm's rows are in
-- runs: its multi-row INSERT wrote them)
SELECT same($$SELECT day, ts FROM pm WHERE dev = 'dev2' AND day BETWEEN '2025-05-01' AND '2025-05-04' ORDER BY day, ts$$);
SELECT value_pages($$SELECT day, ts FROM pm WHERE dev = 'dev2' AND day BETWEEN '2025-05-01' AND '2025-05-04'$$) = 0 AS keys_only_reads_no_value_page,
       value_pages($$SELECT day, v FROM pm WHERE dev = 'dev2' AND day BETWEEN '2025-05-01' AND '2025-05-04'$$) > 0 AS values_read;
-- partitions larger than the statistics said: past work_mem the buffers
-- are dropped and every bucket is sought on its own, with the same answer
INSERT INTO sp SELECT 'e1', '2025-06-05', g, g FROM generate_series(20000, 24000) g;
INSERT INTO sp_heap SELECT 'e1', '2025-06-05', g, g FROM generate_series(20000, 24000) g;
SET work_mem = '64kB';
SELECT same($$SELECT * FROM sp WHERE dev = 'e1' AND day BETWEEN '2025-06-04' AND '2025-06-16' ORDER BY ts DESC LIMIT 5$$);
SELECT same($$SELECT * FROM sp WHERE dev = 'e1' AND day BETWEEN '2025-06-04' AND '2025-06-16' ORDER BY day, ts$$);
RESET work_mem;
-- (e3) buffered rows from value pages in column layout (what compaction
-- writes) keep only the columns the query reads: every answer below is the
-- heap's, with a dropped column, a column added with a default after rows
-- were written, NULLs and values over 8 kB among them, on a table and on a
-- partitioned parent
CREATE TABLE spc (dev text, day date, ts bigint, a int, gone int, big text, h text)
  USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC');
INSERT INTO spc SELECT 'e' || (g % 3), date '2025-06-01' + (g / 30) % 20, g,
    CASE WHEN g % 11 = 0 THEN NULL ELSE g % 100 END, g,
    CASE WHEN g % 97 = 0 THEN (SELECT string_agg(md5(g || '/' || i), '') FROM generate_series(1, 300) i) ELSE 'path/' || g END, md5(g::text)
  FROM generate_series(0, 1799) g;
ALTER TABLE spc DROP COLUMN gone;
ALTER TABLE spc ADD COLUMN added int DEFAULT 7;
INSERT INTO spc SELECT 'e1', date '2025-06-05', 5000 + g, g, 'late/' || g, NULL, g FROM generate_series(1, 5) g;
SELECT widecol.compact('spc', true) > 0 AS compacted;
SELECT count(*) > 0 AS column_layout FROM widecol.run_pages('spc') WHERE kind = 'value_columns';
SELECT sum(out_of_line) > 0 AS values_out_of_line FROM widecol.runs('spc');
CREATE TABLE spc_heap AS SELECT * FROM spc;
ANALYZE spc;
EXPLAIN (COSTS OFF) SELECT ts, a FROM spc WHERE dev = 'e1' AND day BETWEEN '2025-06-03' AND '2025-06-09' ORDER BY ts DESC LIMIT 5;
SELECT same($$SELECT ts, a FROM spc WHERE dev = 'e1' AND day BETWEEN '2025-06-03' AND '2025-06-09' ORDER BY ts DESC$$);
SELECT same($$SELECT ts, md5(big), added FROM spc WHERE dev = 'e1' AND day BETWEEN '2025-06-01' AND '2025-06-20' ORDER BY ts DESC$$);
SELECT same($$SELECT * FROM spc WHERE dev = 'e2' AND day BETWEEN '2025-06-02' AND '2025-06-12' AND ts < 1500 ORDER BY ts$$);
SELECT same($$SELECT h, ts FROM spc WHERE dev = 'e0' AND day BETWEEN '2025-06-02' AND '2025-06-12' AND a IS NULL ORDER BY ts DESC$$);
SELECT same($$SELECT s::text FROM spc s WHERE dev = 'e1' AND day BETWEEN '2025-06-04' AND '2025-06-06' ORDER BY ts$$);
SELECT same($$SELECT ts FROM spc WHERE dev = 'e1' AND day BETWEEN '2025-06-01' AND '2025-06-20' AND length(big) > 8000 ORDER BY ts$$);
-- a statement failing halfway through its buffered rows; the next is right
SELECT ts, 1 / (ts - 300) FROM spc WHERE dev = 'e0' AND day BETWEEN '2025-06-01' AND '2025-06-20' ORDER BY ts;
SELECT same($$SELECT ts, a, h FROM spc WHERE dev = 'e0' AND day BETWEEN '2025-06-01' AND '2025-06-20' ORDER BY ts$$);
CREATE TABLE spcp (dev text, day date, ts bigint, a int, big text, h text) PARTITION BY RANGE (day);
CREATE TABLE spcp_1 PARTITION OF spcp FOR VALUES FROM ('2025-06-01') TO ('2025-07-01')
  USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC');
INSERT INTO spcp SELECT dev, day, ts, a, big, h FROM spc;
SELECT widecol.compact('spcp_1', true) > 0 AS compacted;
ANALYZE spcp;
SELECT same($$SELECT ts, a, length(big) FROM spcp WHERE dev = 'e1' AND day BETWEEN '2025-06-03' AND '2025-06-09' ORDER BY ts DESC$$,
            $$SELECT ts, a, length(big) FROM spc_heap WHERE dev = 'e1' AND day BETWEEN '2025-06-03' AND '2025-06-09' ORDER BY ts DESC$$);

-- (f) widecol.filtering: filtering without fixing the partition key
-- EXPLAIN says why a full scan is one
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE v = 5;
EXPLAIN (COSTS OFF) SELECT * FROM pm WHERE v = 5;
EXPLAIN (COSTS OFF) SELECT * FROM img WHERE day = '2025-03-02' AND image_id = 3;
SET enable_seqscan = on;
EXPLAIN (COSTS OFF) SELECT count(*) FROM m WHERE dev IN ('d1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7', 'd8');
SET enable_seqscan = off;
SHOW widecol.filtering;
SET widecol.filtering = warn;
SELECT count(*) FROM m WHERE v > 100;
UPDATE m SET note = 'x' WHERE v = -1;
SELECT count(*) FROM pm WHERE v = 7;
SELECT count(*) FROM m JOIN wanted USING (dev) WHERE v = 7;
-- not filtering, or filtering with the key fixed: no warning
SELECT count(*) FROM m;
SELECT count(*) FROM m WHERE dev = 'd1' AND v > 100;
SELECT count(*) FROM ev WHERE dev = 'e1' AND day >= '2025-06-20' AND v < 3;
SELECT count(*) FROM m_heap WHERE v > 100;
SET widecol.filtering = error;
SELECT count(*) FROM m WHERE v > 100;
DELETE FROM img WHERE image_id = 5;
SELECT count(*) FROM img WHERE device_id = 'cam-1' AND image_id = 5;
-- EXPLAIN without ANALYZE shows the plan; with ANALYZE it runs, so it fails
EXPLAIN (COSTS OFF) SELECT count(*) FROM m WHERE v > 100;
EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM m WHERE v > 100;
-- in a function too
DO $$ BEGIN PERFORM count(*) FROM m WHERE v > 100; END $$;
RESET widecol.filtering;
SET widecol.filtering = 'sometimes';

RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA shapes CASCADE;
RESET client_min_messages;
