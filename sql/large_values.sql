--
-- large_values: rows larger than a page.  Their large values are compressed
-- in line (PostgreSQL's compressed varlena, as TOAST's first step) until the
-- row fits, then moved out of line into the table's TOAST relation; a row
-- that still does not fit (STORAGE PLAIN) is refused with a clear error.
-- Every path compares with a heap copy.
--
\set VERBOSITY default
SET max_parallel_workers_per_gather = 0;
-- parallel scans of any size, and back
\set parallel_on 'SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;'
\set parallel_off 'RESET max_parallel_workers_per_gather; RESET parallel_setup_cost; RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;'

CREATE TABLE lv (device_id text, ts bigint, attrs jsonb, descr text, n int)
  USING widecol WITH (widecol.partition_key = 'device_id', widecol.clustering_key = 'ts');
CREATE TABLE lv_heap (device_id text, ts bigint, attrs jsonb, descr text, n int,
  PRIMARY KEY (device_id, ts));

-- md5 of every row of a table, in key order: equal means same rows
CREATE FUNCTION lv_sum(t regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE format($q$SELECT count(*) || ' rows, ' || md5(string_agg(md5(format('%%s|%%s|%%s|%%s|%%s', device_id, ts, attrs, descr, n)), ',' ORDER BY device_id, ts)) FROM %s$q$, t) INTO r;
  RETURN r;
END $$;
CREATE FUNCTION lv_same() RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN lv_sum('lv') = lv_sum('lv_heap') THEN 'same ' || split_part(lv_sum('lv'), ',', 1)
              ELSE 'DIFFERENT: ' || lv_sum('lv') || ' vs ' || lv_sum('lv_heap') END $$;

-- a jsonb attributes map of ~30 kB and a 300 kB description (single-row
-- INSERTs: level 0)
INSERT INTO lv VALUES ('cam-1', 1,
  (SELECT jsonb_object_agg('exif_tag_' || g, 'value of tag ' || (g % 50)) FROM generate_series(1, 1000) g),
  repeat('a long description of a cracked weld seam; ', 7000), 1);
INSERT INTO lv VALUES ('cam-1', 2, '{"small": true}', 'small', 2);
INSERT INTO lv_heap SELECT * FROM lv;
SELECT octet_length(descr), octet_length(attrs::text), pg_column_size(descr) < 100000 AS compressed
  FROM lv WHERE device_id = 'cam-1' AND ts = 1;
SELECT lv_same();

-- one large row among 5000 in a multi-row statement (a sorted run), and in a COPY
INSERT INTO lv SELECT 'cam-2', g, jsonb_build_object('g', g),
  CASE WHEN g = 2500 THEN repeat('x' || g, 100000) ELSE 'row ' || g END, g
  FROM generate_series(1, 5000) g;
INSERT INTO lv_heap SELECT * FROM lv WHERE device_id = 'cam-2';
\copy (SELECT 'cam-3', g, jsonb_build_object('tags', (SELECT jsonb_agg('tag' || (h % 9)) FROM generate_series(1, CASE WHEN g % 1000 = 0 THEN 20000 ELSE 3 END) h)), 'copied ' || g, g FROM generate_series(1, 5000) g) TO 'results/widecol_regress_large_values.csv' WITH (FORMAT csv)
\copy lv FROM 'results/widecol_regress_large_values.csv' WITH (FORMAT csv)
\copy lv_heap FROM 'results/widecol_regress_large_values.csv' WITH (FORMAT csv)
SELECT count(*) FROM widecol.runs('lv');
SELECT lv_same();

-- seeks (point, range, backward) and a full scan read them back exactly
SELECT ts, octet_length(descr) FROM lv WHERE device_id = 'cam-2' AND ts BETWEEN 2499 AND 2501 ORDER BY ts DESC;
SELECT ts, jsonb_array_length(attrs->'tags') FROM lv WHERE device_id = 'cam-3' AND ts IN (1000, 1001, 5000) ORDER BY ts;
SELECT count(*), sum(octet_length(descr)) FROM lv;
SELECT count(*), sum(octet_length(descr)) FROM lv_heap;

-- UPDATE to a large value and back, then flush and compact: the same rows
UPDATE lv SET descr = repeat('updated ', 50000) WHERE device_id = 'cam-2' AND ts = 7;
UPDATE lv_heap SET descr = repeat('updated ', 50000) WHERE device_id = 'cam-2' AND ts = 7;
UPDATE lv SET descr = 'small again' WHERE device_id = 'cam-2' AND ts = 2500;
UPDATE lv_heap SET descr = 'small again' WHERE device_id = 'cam-2' AND ts = 2500;
SELECT lv_same();
SELECT widecol.flush('lv') > 0 AS flushed;
SELECT widecol.compact('lv', true) > 0 AS compacted;
SELECT lv_same();
SELECT bool_and(ok) FROM widecol.verify('lv');

-- a parallel scan reads them too
:parallel_on
SELECT count(*), sum(octet_length(descr)), sum(octet_length(attrs::text)) FROM lv WHERE n > 0;
SELECT count(*), sum(octet_length(descr)), sum(octet_length(attrs::text)) FROM lv_heap WHERE n > 0;
:parallel_off

-- values that do not fit even compressed (hex digests: lz4 gains little)
-- go out of line, into the table's TOAST relation: single-row INSERTs
-- (level 0), one among 1000 in a multi-row INSERT and a COPY (runs), a
-- 4 MB value; they come back exactly through every path
CREATE FUNCTION lv_hex(n int, seed int) RETURNS text LANGUAGE sql AS
  $$ SELECT string_agg(md5((g * seed)::text), '') FROM generate_series(1, n / 32) g $$;
SELECT reltoastrelid <> 0 AS has_toast FROM pg_class WHERE relname = 'lv';
INSERT INTO lv VALUES ('cam-4', 1, '{}', lv_hex(19200, 1), 1);
INSERT INTO lv VALUES ('cam-4', 2, '{}', lv_hex(4000000, 2), 2);
INSERT INTO lv SELECT 'cam-4', g, '{}', CASE WHEN g = 900 THEN lv_hex(100000, g) ELSE 'fine' END, g
  FROM generate_series(3, 1000) g;
\copy (SELECT 'cam-5', g, '{}', CASE WHEN g % 100 = 0 THEN lv_hex(50000, g) ELSE 'fine' END, g FROM generate_series(1, 1000) g) TO 'results/widecol_regress_large_values_2.csv' WITH (FORMAT csv)
\copy lv FROM 'results/widecol_regress_large_values_2.csv' WITH (FORMAT csv)
INSERT INTO lv_heap SELECT * FROM lv WHERE device_id IN ('cam-4', 'cam-5');
SELECT lv_same();
SELECT ts, octet_length(descr), md5(descr) = md5(lv_hex(4000000, 2)) AS same FROM lv WHERE device_id = 'cam-4' AND ts = 2;
SELECT ts, octet_length(descr) FROM lv WHERE device_id = 'cam-4' AND ts BETWEEN 899 AND 901 ORDER BY ts DESC;
-- the runs count the versions whose values are out of line
SELECT sum(out_of_line) AS out_of_line FROM widecol.runs('lv');
-- UPDATE of another column keeps the value (a fresh copy: no two versions
-- share one); UPDATE to a small value, DELETE; then flush, compaction
-- (which deletes the values of the versions it drops), VACUUM FULL (which
-- copies them into a new TOAST relation) and verify
UPDATE lv SET n = -n WHERE device_id = 'cam-5' AND ts IN (100, 200);
UPDATE lv_heap SET n = -n WHERE device_id = 'cam-5' AND ts IN (100, 200);
UPDATE lv SET descr = 'small now' WHERE device_id = 'cam-5' AND ts = 300;
UPDATE lv_heap SET descr = 'small now' WHERE device_id = 'cam-5' AND ts = 300;
DELETE FROM lv WHERE device_id = 'cam-5' AND ts = 400;
DELETE FROM lv_heap WHERE device_id = 'cam-5' AND ts = 400;
SELECT lv_same();
SELECT widecol.flush('lv') > 0 AS flushed;
SELECT widecol.compact('lv', true) > 0 AS compacted;
SELECT sum(out_of_line) AS out_of_line FROM widecol.runs('lv');
SELECT lv_same();
VACUUM FULL lv;
SELECT lv_same();
SELECT bool_and(ok) FROM widecol.verify('lv');
:parallel_on
SELECT count(*), sum(octet_length(descr)) FROM lv WHERE n <> 0;
SELECT count(*), sum(octet_length(descr)) FROM lv_heap WHERE n <> 0;
:parallel_off
-- a column added with a default after the rows were written: VACUUM FULL
-- stores the default in every version it copies, those with out-of-line
-- values and the others (a rewrite makes PostgreSQL forget added columns'
-- defaults; before this fix the rows read NULL afterwards)
ALTER TABLE lv ADD COLUMN tag text DEFAULT 'untagged';
VACUUM FULL lv;
SELECT ts, octet_length(descr), tag FROM lv WHERE device_id = 'cam-4' AND ts IN (1, 2, 900) ORDER BY ts;
SELECT count(*) FILTER (WHERE tag = 'untagged') AS with_default, count(*) FROM lv;
ALTER TABLE lv DROP COLUMN tag;
SELECT lv_same();
-- a statement failing halfway leaves no row and no value behind
BEGIN;
INSERT INTO lv SELECT 'cam-6', g, '{}', lv_hex(20000, g), g FROM generate_series(1, 20) g;
SAVEPOINT s;
INSERT INTO lv SELECT 'cam-6', g, '{}', lv_hex(20000, g), 1 / (g - 15) FROM generate_series(21, 40) g;
ROLLBACK TO s;
SELECT count(*) FROM lv WHERE device_id = 'cam-6';
ROLLBACK;
SELECT count(*) FROM lv WHERE device_id = 'cam-6';

-- a column with STORAGE PLAIN stays in line: a row that does not fit then
-- is refused, naming the limit, and the statement leaves nothing behind
CREATE TABLE lv_plain (device_id text, ts bigint, descr text)
  USING widecol WITH (widecol.partition_key = 'device_id', widecol.clustering_key = 'ts');
ALTER TABLE lv_plain ALTER COLUMN descr SET STORAGE PLAIN;
INSERT INTO lv_plain SELECT 'cam-4', g, CASE WHEN g = 900 THEN lv_hex(19200, 1) ELSE 'fine' END
  FROM generate_series(1, 1000) g;
SELECT count(*) FROM lv_plain;

-- on a widecol partition of a partitioned table
CREATE TABLE lvp (day date, device_id text, ts bigint, descr text) PARTITION BY RANGE (day);
CREATE TABLE lvp_1 PARTITION OF lvp FOR VALUES FROM ('2025-01-01') TO ('2025-02-01')
  USING widecol WITH (widecol.partition_key = 'device_id, day', widecol.clustering_key = 'ts');
INSERT INTO lvp VALUES ('2025-01-05', 'cam-1', 1, repeat('partitioned ', 30000));
INSERT INTO lvp VALUES ('2025-01-05', 'cam-1', 2, lv_hex(300000, 7));
SELECT ts, octet_length(descr), md5(descr) IN (md5(repeat('partitioned ', 30000)), md5(lv_hex(300000, 7))) AS same
  FROM lvp WHERE device_id = 'cam-1' AND day = '2025-01-05' ORDER BY ts;

DROP TABLE lv, lv_heap, lvp, lv_plain;
DROP FUNCTION lv_same(), lv_sum(regclass), lv_hex(int, int);
