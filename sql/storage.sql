--
-- storage: the storage engine as seen from SQL (widecol.flush, level 0,
-- sorted runs and their summaries, COPY into runs) and large, varied data
-- compared with the same data in heap tables.
--
\set VERBOSITY default
SET max_parallel_workers_per_gather = 0;
-- COPY files go through the client (\copy): a server file needs a superuser

\i sql/compare.inc

---------------------------------------------------------------------------
-- widecol.flush moves level 0 into a run
---------------------------------------------------------------------------
CREATE TABLE s_t (pk int, ck int, v text) USING widecol
    WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
-- a new table: no level-0 page, no run
SELECT widecol.level0_pages('s_t'), count(*) AS runs FROM widecol.runs('s_t');
SELECT widecol.flush('s_t');
SELECT count(*) AS runs FROM widecol.runs('s_t');
-- single-row writes go to level 0
INSERT INTO s_t VALUES (1, 1, 'a');
INSERT INTO s_t VALUES (1, 2, 'b');
INSERT INTO s_t VALUES (2, 1, 'c');
INSERT INTO s_t VALUES (1, 2, 'b2');
DELETE FROM s_t WHERE pk = 2 AND v IS NOT NULL;  -- row by row: a tombstone
SELECT widecol.level0_pages('s_t'), count(*) AS runs FROM widecol.runs('s_t');
CREATE TABLE s_before AS SELECT * FROM s_t;
SELECT array_agg(ck ORDER BY pk, ck) AS keys_before FROM s_t \gset
-- flush returns the number of versions written: 4 rows and 1 tombstone
SELECT widecol.flush('s_t');
SELECT widecol.level0_pages('s_t'), count(*) AS runs FROM widecol.runs('s_t');
SELECT run_id, level, nrows, ntombstones, npartitions, npages > 0 AS has_pages,
       raw_bytes > 0 AS has_raw_bytes, compressed_bytes > 0 AS has_compressed_bytes,
       min_write_ts <= max_write_ts AS ts_ordered
  FROM widecol.runs('s_t');
-- the same data, in the same order, after the flush
SELECT rows_diff('s_t', 's_before') AS differences;
SELECT * FROM s_t;
-- an empty level 0 flushes to nothing
SELECT widecol.flush('s_t');
SELECT count(*) AS runs FROM widecol.runs('s_t');
-- writes after the flush go to a new level 0; a second flush makes a second run
INSERT INTO s_t VALUES (3, 1, 'd');
UPDATE s_t SET v = 'a2' WHERE pk = 1 AND ck = 1;
SELECT widecol.level0_pages('s_t');
SELECT widecol.flush('s_t');
SELECT run_id, nrows, ntombstones, npartitions FROM widecol.runs('s_t');
SELECT * FROM s_t;
-- flush of a keyless table
CREATE TABLE s_bag (a int) USING widecol;
INSERT INTO s_bag VALUES (1), (1), (2);
SELECT widecol.flush('s_bag');
SELECT nrows, ntombstones, npartitions FROM widecol.runs('s_bag');
SELECT * FROM s_bag;
DROP TABLE s_bag;
-- flush as a function in a query, and of a table by a qualified name
SELECT widecol.flush(c.oid) FROM pg_class c WHERE c.relname = 's_t';
SELECT widecol.flush('public.s_t'::regclass);
-- NULL argument: the functions are strict
SELECT widecol.flush(NULL), widecol.level0_pages(NULL);

---------------------------------------------------------------------------
-- widecol.level0_max_size: single-row writes flush level 0 by themselves
---------------------------------------------------------------------------
SHOW widecol.level0_max_size;
SET widecol.level0_max_size = 8;
SET widecol.level0_max_size = 16;
SHOW widecol.level0_max_size;
-- n single-row INSERTs into t (pk int, ck int, v text), in 4 partitions
CREATE PROCEDURE s_insert_rows(t regclass, n int) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..n LOOP
    EXECUTE format('INSERT INTO %s VALUES ($1, $2, $3)', t) USING i % 4, i, repeat('x', 100);
  END LOOP;
END $$;
CREATE TABLE s_auto (pk int, ck int, v text) USING widecol
    WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
CALL s_insert_rows('s_auto', 400);
SELECT count(*) > 1 AS several_runs, sum(nrows) < 400 AS rest_in_level0, bool_and(level = 1) AS level1
  FROM widecol.runs('s_auto');
SELECT widecol.level0_pages('s_auto') BETWEEN 1 AND 3 AS small_level0;
SELECT count(*), sum(ck), count(DISTINCT pk) FROM s_auto;
SELECT (SELECT array_agg(ck) FROM s_auto) = (SELECT array_agg(ck ORDER BY pk, ck) FROM s_auto) AS in_key_order;
RESET widecol.level0_max_size;
-- with the default (4MB) the same writes stay in level 0
CREATE TABLE s_noauto (pk int, ck int, v text) USING widecol
    WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
CALL s_insert_rows('s_noauto', 400);
SELECT count(*) AS runs FROM widecol.runs('s_noauto');
SELECT widecol.level0_pages('s_noauto') > 3 AS big_level0;
SELECT rows_diff('s_auto', 's_noauto') AS differences;
DROP TABLE s_auto, s_noauto;
DROP PROCEDURE s_insert_rows(regclass, int);

---------------------------------------------------------------------------
-- COPY writes a run directly, without level 0
---------------------------------------------------------------------------
CREATE TABLE s_copy (pk int, ck int, v text) USING widecol
    WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
\copy (SELECT g % 7, g, 'row ' || g FROM generate_series(1, 5000) g) TO 'results/widecol_regress_storage.csv' WITH (FORMAT csv)
\copy s_copy FROM 'results/widecol_regress_storage.csv' WITH (FORMAT csv)
SELECT widecol.level0_pages('s_copy');
SELECT count(*) AS runs, sum(nrows) AS nrows, sum(ntombstones) AS ntombstones,
       sum(npartitions) AS npartitions, bool_and(compressed_bytes < raw_bytes) AS compressed
  FROM widecol.runs('s_copy');
SELECT count(*), count(DISTINCT pk), min(ck), max(ck) FROM s_copy;
-- a second COPY is a second run; the rows it repeats replace the old ones
\copy (SELECT g % 7, g, 'again ' || g FROM generate_series(4001, 6000) g) TO 'results/widecol_regress_storage.csv' WITH (FORMAT csv)
\copy s_copy FROM 'results/widecol_regress_storage.csv' WITH (FORMAT csv)
SELECT widecol.level0_pages('s_copy');
SELECT run_id, nrows FROM widecol.runs('s_copy');
SELECT count(*), count(*) FILTER (WHERE v LIKE 'again%') AS replaced FROM s_copy;
-- COPY with a small widecol.bulk_write_mem writes several runs
TRUNCATE s_copy;
SET widecol.bulk_write_mem = 1024;
\copy (SELECT g % 7, g, repeat(md5(g::text), 4) FROM generate_series(1, 20000) g) TO 'results/widecol_regress_storage.csv' WITH (FORMAT csv)
\copy s_copy FROM 'results/widecol_regress_storage.csv' WITH (FORMAT csv)
RESET widecol.bulk_write_mem;
SELECT widecol.level0_pages('s_copy');
SELECT count(*) > 1 AS several_runs, sum(nrows) AS nrows FROM widecol.runs('s_copy');
SELECT count(*), count(DISTINCT ck) FROM s_copy;
SELECT (SELECT array_agg(ck) FROM s_copy) = (SELECT array_agg(ck ORDER BY pk, ck) FROM s_copy) AS in_key_order;
-- rows are formed in the COPY's buffer, which writes a run when it is full
-- (in the middle of forming the next row): a COPY failing after several
-- such runs leaves none of its rows, and the table as it was
SET widecol.bulk_write_mem = 1024;
\copy (SELECT g % 7, CASE WHEN g = 35000 THEN 'x' ELSE g::text END, repeat(md5(g::text), 4) FROM generate_series(20001, 40000) g) TO 'results/widecol_regress_storage.csv' WITH (FORMAT csv)
\copy s_copy FROM 'results/widecol_regress_storage.csv' WITH (FORMAT csv)
RESET widecol.bulk_write_mem;
SELECT count(*), count(DISTINCT ck), max(ck) FROM s_copy;
SELECT bool_and(ok) AS verified FROM widecol.verify('s_copy');
-- INSERT ... SELECT is a bulk write: its rows go into one run written when
-- the statement ends
CREATE TABLE s_ins (pk int, ck int, v text) USING widecol
    WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
INSERT INTO s_ins SELECT g % 7, g, 'row ' || g FROM generate_series(1, 500) g;
SELECT widecol.level0_pages('s_ins') > 0 AS in_level0, (SELECT count(*) FROM widecol.runs('s_ins')) AS runs;
SELECT count(*), sum(ck) FROM s_ins;
-- a small one stays in level 0; RETURNING works either way
WITH r AS (INSERT INTO s_ins SELECT 100, g, 'small' FROM generate_series(1, 100) g RETURNING ck)
SELECT count(*) AS returned, sum(ck) FROM r;
SELECT (SELECT count(*) FROM widecol.runs('s_ins')) AS runs, count(*) FILTER (WHERE pk = 100) AS small_rows FROM s_ins;
-- an AFTER STATEMENT trigger already sees the rows of its statement
CREATE FUNCTION s_ins_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE 'statement trigger sees % rows with pk 200', (SELECT count(*) FROM s_ins WHERE pk = 200);
  RETURN NULL;
END $$;
CREATE TRIGGER s_ins_count AFTER INSERT ON s_ins FOR EACH STATEMENT EXECUTE FUNCTION s_ins_count();
INSERT INTO s_ins SELECT 200, g, 'seen' FROM generate_series(1, 1000) g;
DROP TRIGGER s_ins_count ON s_ins;
DROP FUNCTION s_ins_count();
-- rolled back with its transaction, also when it wrote a run
BEGIN;
INSERT INTO s_ins SELECT 300, g, 'gone' FROM generate_series(1, 1000) g;
SELECT count(*) AS inside FROM s_ins WHERE pk = 300;
ROLLBACK;
SELECT count(*) AS after_rollback FROM s_ins WHERE pk = 300;
DROP TABLE s_ins;

-- Run summaries: tombstones, partitions, compression of compressible data
CREATE TABLE s_sum (pk text, ck int, v text) USING widecol
    WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
INSERT INTO s_sum SELECT 'p' || (g % 10), g, repeat('compressible ', 20) FROM generate_series(1, 1000) g;
DELETE FROM s_sum WHERE ck % 10 = 0;
SELECT widecol.flush('s_sum');
SELECT nrows, ntombstones, npartitions, compressed_bytes < raw_bytes / 4 AS well_compressed
  FROM widecol.runs('s_sum');
SELECT count(*) FROM s_sum;
DROP TABLE s_sum;

---------------------------------------------------------------------------
-- Large and varied data, compared with heap
---------------------------------------------------------------------------
-- 20000 rows via INSERT ... SELECT and via COPY, with a flush in between
CREATE TABLE s_big (dev text, day date, ts timestamptz, id uuid, n bigint, payload text, blob bytea) USING widecol
    WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC, id');
CREATE TABLE s_big_h (LIKE s_big);
INSERT INTO s_big_h
SELECT 'dev-' || (g % 37), date '2025-01-01' + (g % 5),
       timestamptz '2025-01-01 00:00+00' + g * interval '1 second',
       md5(g::text)::uuid, g * 7919 - 50000,
       CASE WHEN g % 100 = 0 THEN NULL ELSE 'payload ' || g END,
       decode(lpad(to_hex(g % 65536), 4, '0'), 'hex')
  FROM generate_series(1, 20000) g;
INSERT INTO s_big SELECT * FROM s_big_h WHERE n % 2 = 0;
SELECT widecol.flush('s_big') >= 0 AS flushed;
\copy (SELECT * FROM s_big_h WHERE n % 2 <> 0) TO 'results/widecol_regress_storage.csv' WITH (FORMAT csv)
\copy s_big FROM 'results/widecol_regress_storage.csv' WITH (FORMAT csv)
SELECT count(*) FROM s_big;
SELECT rows_diff('s_big', 's_big_h') AS differences;
SELECT (SELECT array_agg(n) FROM s_big) =
       (SELECT array_agg(n ORDER BY dev COLLATE "C", day, ts DESC, id) FROM s_big_h) AS in_key_order;
-- the same after flushing everything
SELECT widecol.flush('s_big') >= 0 AS flushed;
SELECT rows_diff('s_big', 's_big_h') AS differences;
-- updates and deletes over many rows, on both sides
UPDATE s_big SET payload = upper(payload) WHERE day = '2025-01-03';
UPDATE s_big_h SET payload = upper(payload) WHERE day = '2025-01-03';
DELETE FROM s_big WHERE dev = 'dev-5';
DELETE FROM s_big_h WHERE dev = 'dev-5';
SELECT rows_diff('s_big', 's_big_h') AS differences, (SELECT count(*) FROM s_big) AS nrows;
DROP TABLE s_big, s_big_h;

-- Rows whose long (4-byte header) varlena follows short ones at an
-- unaligned offset: the alignment padding must read back as padding
CREATE TABLE s_pad (p text, c text, v text) USING widecol
    WITH (widecol.partition_key = 'p', widecol.clustering_key = 'c');
INSERT INTO s_pad SELECT 'p' || g, repeat('c', g % 7), repeat(chr(97 + g % 26), 130 + g)
  FROM generate_series(1, 400) g;
SELECT count(*) AS nrows, count(*) FILTER (WHERE length(v) <> 130 + substr(p, 2)::int) AS bad_length,
       sum(length(v)) AS total_v FROM s_pad;
SELECT widecol.flush('s_pad') >= 0 AS flushed;
SELECT count(*) AS nrows, count(*) FILTER (WHERE length(v) <> 130 + substr(p, 2)::int) AS bad_length,
       sum(length(v)) AS total_v FROM s_pad;
DROP TABLE s_pad;

-- Unicode text (no NUL) in keys and values, bytea keys with 0x00 bytes
CREATE TABLE s_uni (p text, c text COLLATE "C", b bytea, v text) USING widecol
    WITH (widecol.partition_key = 'p', widecol.clustering_key = 'c, b');
CREATE TABLE s_uni_h (LIKE s_uni);
INSERT INTO s_uni_h VALUES
  ('日本語', 'ä', '\x00', 'umlaut'),
  ('日本語', 'a', '\x0000', 'ascii'),
  ('日本語', 'a', '\x00', 'ascii 0'),
  ('日本語', 'a', '\x01', 'ascii 1'),
  ('日本語', 'a', '\x', 'ascii empty'),
  ('日本語', 'a', '\x00ff00', 'ascii 00ff00'),
  ('日本語', '😀', '\xff', 'emoji'),
  ('日本語', U&'\00E9', '\x00', 'precomposed e acute'),
  ('日本語', U&'e\0301', '\x00', 'e + combining acute'),
  ('Ελληνικά', 'Ω', '\x00', 'omega'),
  ('', '', '\x', 'empty key parts'),
  ('tab	and
newline', 'x', '\x00', 'control characters'),
  ('mixed 日本 abc', 'z', '\x00', repeat('値', 1000));
INSERT INTO s_uni SELECT * FROM s_uni_h;
SELECT rows_diff('s_uni', 's_uni_h') AS differences;
SELECT p, c, b, left(v, 20) AS v FROM s_uni WHERE p = '日本語';
SELECT (SELECT array_agg(v) FROM s_uni) =
       (SELECT array_agg(v ORDER BY p COLLATE "C", c, b) FROM s_uni_h) AS in_key_order;
SELECT widecol.flush('s_uni') > 0 AS flushed;
SELECT rows_diff('s_uni', 's_uni_h') AS differences;
SELECT length(v), octet_length(v) FROM s_uni WHERE p = 'mixed 日本 abc';
-- equality lookups on the keys find exactly the matching rows
SELECT v FROM s_uni WHERE p = '日本語' AND c = 'a' AND b = '\x00';
SELECT v FROM s_uni WHERE b = '\x0000';
-- COPY round trip
\copy s_uni TO 'results/widecol_regress_storage.csv' WITH (FORMAT csv)
TRUNCATE s_uni;
\copy s_uni FROM 'results/widecol_regress_storage.csv' WITH (FORMAT csv)
SELECT rows_diff('s_uni', 's_uni_h') AS differences;
DROP TABLE s_uni, s_uni_h;

-- Values that heap would TOAST: 3000-byte compressible values are stored
-- whole (detoasted) and come back identical; incompressible ones too.
CREATE TABLE s_toast (pk int, ck int, v text, b bytea) USING widecol
    WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
CREATE TABLE s_toast_h (pk int, ck int, v text, b bytea);
INSERT INTO s_toast_h
SELECT g % 3, g, repeat(chr(65 + g % 26), 3000),
       decode(string_agg(md5(g::text || i::text), ''), 'hex')
  FROM generate_series(1, 60) g, generate_series(1, 90) i
 GROUP BY g;
SELECT count(*), min(octet_length(b)), bool_and(pg_column_size(v) < 3000) AS v_compressed_in_heap FROM s_toast_h;
INSERT INTO s_toast SELECT * FROM s_toast_h;
SELECT rows_diff('s_toast', 's_toast_h') AS differences;
SELECT widecol.flush('s_toast') > 0 AS flushed;
SELECT rows_diff('s_toast', 's_toast_h') AS differences;
SELECT sum(raw_bytes) > 60 * 4000 AS stored_detoasted FROM widecol.runs('s_toast');
-- an UPDATE that leaves the big values alone keeps them
UPDATE s_toast SET ck = ck + 1000 WHERE pk = 1;
UPDATE s_toast_h SET ck = ck + 1000 WHERE pk = 1;
SELECT rows_diff('s_toast', 's_toast_h') AS differences;
-- a value that needs TOAST in heap and still fits a widecol row
CREATE TABLE s_toast2 (pk int, v text) USING widecol WITH (widecol.partition_key = 'pk');
INSERT INTO s_toast2 SELECT 1, string_agg(md5(i::text), '') FROM generate_series(1, 240) i;
SELECT length(v), md5(v) = (SELECT md5(string_agg(md5(i::text), '')) FROM generate_series(1, 240) i) AS same
  FROM s_toast2;
DROP TABLE s_toast, s_toast_h, s_toast2;

DROP TABLE s_t, s_before, s_copy;
DROP FUNCTION rows_diff(regclass, regclass), same(text, text);

-- storage functions check privileges: flush needs ownership, reading the
-- storage metadata (runs, verify, storage_id) needs SELECT
CREATE TABLE s_priv (pk int, v text) USING widecol WITH (widecol.partition_key = 'pk');
INSERT INTO s_priv VALUES (1, 'a');
SET ROLE NONE;  -- roles are made by a superuser
CREATE ROLE widecol_s_reader;
RESET ROLE;
SET ROLE widecol_s_reader;
SELECT widecol.flush('s_priv');
SELECT * FROM widecol.runs('s_priv');
SELECT ok FROM widecol.verify('s_priv');
SELECT count(*) FROM widecol.segment;
RESET ROLE;
GRANT SELECT ON s_priv TO widecol_s_reader;
SET ROLE widecol_s_reader;
SELECT count(*) FROM widecol.runs('s_priv');
SELECT bool_and(ok) FROM widecol.verify('s_priv');
SELECT widecol.flush('s_priv');
RESET ROLE;
SELECT widecol.flush('s_priv');
DROP TABLE s_priv;
SET ROLE NONE;
DROP ROLE widecol_s_reader;
RESET ROLE;

-- Runs keep keys and tuples on separate pages (key pages, value pages).  A
-- read that asks for key columns only (count(*), grouping by the partition
-- key) reads no value page; a read of any other column reads them.  Shown by
-- the table's buffer accesses (here a value is 64 hex digits, so values
-- are most of a run: about 2.5 times the key pages' bytes with zstd), and
-- every answer against a heap copy.
CREATE TABLE s_kv (dev text, day date, ts int, note text, size int, extra text)
  USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC',
                      autovacuum_enabled = false);  -- its ANALYZE would count reads too
CREATE TABLE s_kv_h (LIKE s_kv);
INSERT INTO s_kv_h SELECT 'd' || (g % 7), date '2025-01-01' + g % 5, g,
       md5(g::text) || md5((-g)::text), g % 1000, CASE WHEN g % 3 = 0 THEN NULL ELSE md5(g::text) END
  FROM generate_series(1, 20000) g;
INSERT INTO s_kv SELECT * FROM s_kv_h;
-- an older version of some rows, shadowed: its tuple must not be returned
UPDATE s_kv SET size = -1 WHERE ts % 10 = 0;
UPDATE s_kv SET size = ts % 1000 WHERE ts % 10 = 0;
SELECT widecol.flush('s_kv') > 0 AS flushed;
SELECT bool_and(ok) AS verified FROM widecol.verify('s_kv');
-- (statistics reach pg_statio_* when a statement ends, hence one per step)
SET max_parallel_workers_per_gather = 0;
SELECT pg_stat_force_next_flush();
SET ROLE NONE;  -- resetting statistics is a superuser's
SELECT pg_stat_reset_single_table_counters('s_kv'::regclass);
RESET ROLE;
SELECT count(*) FROM s_kv;
SELECT pg_stat_force_next_flush();
SELECT heap_blks_read + heap_blks_hit AS count_blocks FROM pg_statio_user_tables WHERE relid = 's_kv'::regclass \gset
SELECT count(*) FROM (SELECT day, count(DISTINCT dev) FROM s_kv GROUP BY day) r;
SELECT pg_stat_force_next_flush();
SELECT heap_blks_read + heap_blks_hit AS report_blocks FROM pg_statio_user_tables WHERE relid = 's_kv'::regclass \gset
SELECT sum(size) FROM s_kv;
SELECT pg_stat_force_next_flush();
SELECT heap_blks_read + heap_blks_hit AS sum_blocks FROM pg_statio_user_tables WHERE relid = 's_kv'::regclass \gset
SELECT :count_blocks > 0 AS read_something,
       :count_blocks * 2 < :sum_blocks - :report_blocks AS count_reads_under_half,
       (:report_blocks - :count_blocks) * 2 < :sum_blocks - :report_blocks AS report_reads_under_half;
RESET max_parallel_workers_per_gather;
-- answers: key-only, value columns, a column after the values, NULLs
SELECT (SELECT array_agg(x ORDER BY x) FROM (SELECT day || ':' || count(*) || ':' || count(DISTINCT dev) x FROM s_kv GROUP BY day) a)
     = (SELECT array_agg(x ORDER BY x) FROM (SELECT day || ':' || count(*) || ':' || count(DISTINCT dev) x FROM s_kv_h GROUP BY day) a) AS keys_same,
       (SELECT sum(size) FROM s_kv) = (SELECT sum(size) FROM s_kv_h) AS sizes_same,
       (SELECT count(extra) || ':' || md5(string_agg(extra, ',' ORDER BY dev, day, ts)) FROM s_kv)
     = (SELECT count(extra) || ':' || md5(string_agg(extra, ',' ORDER BY dev, day, ts)) FROM s_kv_h) AS extras_same,
       (SELECT md5(string_agg(s_kv::text, ',' ORDER BY dev, day, ts)) FROM s_kv)
     = (SELECT md5(string_agg(s_kv_h::text, ',' ORDER BY dev, day, ts)) FROM s_kv_h s_kv_h) AS rows_same;
-- a seek reading keys only, and one reading values, backward too
SELECT count(*), min(ts), max(ts) FROM s_kv WHERE dev = 'd3' AND day = date '2025-01-04';
SELECT ts, note, size FROM s_kv WHERE dev = 'd3' AND day = date '2025-01-04' ORDER BY ts LIMIT 3;
SELECT ts, note, size FROM s_kv WHERE dev = 'd3' AND day = date '2025-01-04' ORDER BY ts DESC LIMIT 3;
-- fetch by ctid (UPDATE ... WHERE CURRENT OF style) reads the tuple
SELECT note FROM s_kv WHERE ctid = (SELECT ctid FROM s_kv WHERE dev = 'd1' AND day = date '2025-01-02' ORDER BY ts LIMIT 1);
DROP TABLE s_kv, s_kv_h;
