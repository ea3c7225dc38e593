-- Value pages in column layout (run format 6, storage/columns.h): what
-- compaction writes by default.  Every column type shape (fixed by value and
-- by reference, short and long varlenas, NULLs, values moved out of line,
-- columns added and dropped later) read back whole, by reports that read a
-- few columns (an aggregate over a scan that does not project), by scans
-- and seeks that project, in parallel, and against the row layout; each
-- compared with a heap copy.
-- rows of query q (with %s for the table) on a but not on b, or the reverse
CREATE FUNCTION vl_diff(q text, a regclass, b regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x',
                 format(q, a), format(q, b), format(q, b), format(q, a)) INTO n;
  RETURN n;
END $$;
-- the same rows, whole
CREATE FUNCTION vl_same(a regclass, b regclass) RETURNS boolean LANGUAGE sql
  AS $$ SELECT vl_diff('SELECT t::text FROM %s t', a, b) = 0 $$;

SHOW widecol.compaction_value_layout;
SELECT current_user = 'regress_widecol' AS as_ordinary_role;
CREATE TABLE vl_h (k int, c int, i2 int2, i8 int8, f float8, n numeric, t text, b bytea,
                   u uuid, nm name, flag bool, d date, ts timestamptz, iv interval,
                   arr int4[], j jsonb, big text);
INSERT INTO vl_h
SELECT g % 7, g, (g % 300)::int2, g * 1000003::int8, g / 7.0, (g * 1.25)::numeric,
       CASE WHEN g % 5 = 0 THEN NULL ELSE repeat(chr(97 + g % 26), g % 300) END,
       CASE WHEN g % 11 = 0 THEN NULL ELSE decode(md5(g::text), 'hex') END,
       md5(g::text)::uuid, ('n' || g)::name, g % 2 = 0, date '2025-01-01' + g % 30,
       timestamptz '2025-01-01 00:00+00' + g * interval '1 minute', (g || ' seconds')::interval,
       CASE WHEN g % 13 = 0 THEN NULL ELSE ARRAY[g, g + 1] END, jsonb_build_object('g', g),
       CASE WHEN g % 700 = 0 THEN (SELECT string_agg(md5((g * 1000 + i)::text), '') FROM generate_series(1, 900) i) END
  FROM generate_series(1, 6000) g;
CREATE TABLE vl (LIKE vl_h) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
INSERT INTO vl SELECT * FROM vl_h;
SELECT widecol.compact('vl', true) AS versions_compacted;
-- value pages in column layout; a page whose columns do not fit where its
-- rows do (one large tuple) stays in row layout
SELECT kind, sum(pages) AS pages FROM widecol.run_pages('vl')
 WHERE kind LIKE 'value%' GROUP BY kind ORDER BY kind;
SELECT bool_and(ok) AS verified FROM widecol.verify('vl');
SELECT count(*), vl_same('vl', 'vl_h') AS same FROM vl;

-- reports: an aggregate reads a few columns of a scan that does not project
EXPLAIN (COSTS OFF) SELECT d, count(*), sum(i8) FROM vl GROUP BY d;
SELECT vl_diff('SELECT d, count(*), sum(i8), sum(length(t)), count(u), max(nm::text), bool_or(flag), sum(length(big)) FROM %s GROUP BY d', 'vl', 'vl_h') AS differences;
SELECT vl_diff('SELECT k, sum(i2), sum(f::numeric), sum(n), string_agg(b::text, '','' ORDER BY c) FROM %s GROUP BY k', 'vl', 'vl_h') AS differences;
SELECT vl_diff('SELECT count(*), sum(arr[2]), max(iv), min(ts), sum((j->>''g'')::int) FROM %s', 'vl', 'vl_h') AS differences;
-- a fixed-width column that every tuple of a page has is read at its index
-- times its width, without placing its values; one with NULLs in some
-- tuples of a page, or in all of them, value by value; a qual and the
-- target list reading different columns of each row
CREATE TABLE vl_fw_h (k int, c int, a int8, b int4, z int2, s text);
INSERT INTO vl_fw_h
SELECT g % 3, g, CASE WHEN g % 1000 = 7 THEN NULL ELSE g * 3 END,
       CASE WHEN g BETWEEN 2000 AND 3500 THEN NULL ELSE g END, (g % 100)::int2,
       CASE WHEN g % 4 = 0 THEN 'x' || g END
  FROM generate_series(1, 9000) g;
CREATE TABLE vl_fw (LIKE vl_fw_h) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
INSERT INTO vl_fw SELECT * FROM vl_fw_h;
SELECT widecol.compact('vl_fw', true) AS versions_compacted;
SELECT sum(pages) > 6 AS several_pages FROM widecol.run_pages('vl_fw')
 WHERE kind = 'value_columns';
SELECT vl_diff('SELECT k, count(a), sum(a), count(b), sum(b), sum(z) FROM %s GROUP BY k', 'vl_fw', 'vl_fw_h') AS differences;
SELECT vl_diff('SELECT c, b, s FROM %s WHERE a %% 5 = 1 OR a IS NULL', 'vl_fw', 'vl_fw_h') AS differences;
SELECT vl_diff('SELECT c, z, a FROM %s WHERE b IS NULL AND z < 50', 'vl_fw', 'vl_fw_h') AS differences;
SELECT vl_diff('SELECT c, s FROM %s WHERE z = 3', 'vl_fw', 'vl_fw_h') AS differences;
DROP TABLE vl_fw, vl_fw_h;
-- a page written before ten columns were added (its tuples have three):
-- a report reading all of them, the added ones taking their defaults
CREATE TABLE vl_add_h (k int, c int, v int);
INSERT INTO vl_add_h SELECT g % 5, g, g FROM generate_series(1, 3000) g;
CREATE TABLE vl_add (LIKE vl_add_h) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
INSERT INTO vl_add SELECT * FROM vl_add_h;
SELECT widecol.compact('vl_add', true) AS versions_compacted;
DO $$
BEGIN
  FOR i IN 1..10 LOOP
    EXECUTE format('ALTER TABLE vl_add ADD COLUMN a%s int DEFAULT %s', i, i);
    EXECUTE format('ALTER TABLE vl_add_h ADD COLUMN a%s int DEFAULT %s', i, i);
  END LOOP;
END $$;
SELECT vl_diff('SELECT k, sum(v), sum(a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10), sum(a10) FROM %s GROUP BY k', 'vl_add', 'vl_add_h') AS differences;
SELECT vl_diff('SELECT c, a3, a9 FROM %s WHERE v %% 7 = 0', 'vl_add', 'vl_add_h') AS differences;
DROP TABLE vl_add, vl_add_h;
-- scans that project, and filter on non-key columns
SELECT vl_diff('SELECT c, n, iv FROM %s WHERE f > 100 AND arr[1] %% 3 = 0', 'vl', 'vl_h') AS differences;
SELECT vl_diff('SELECT c, md5(big) FROM %s WHERE big IS NOT NULL', 'vl', 'vl_h') AS differences;
-- seeks that project
SELECT vl_diff('(SELECT c, j, t FROM %s WHERE k = 3 ORDER BY c DESC LIMIT 40)', 'vl', 'vl_h') AS differences;
SELECT vl_diff('SELECT c, u FROM %s WHERE k IN (1, 4) AND c BETWEEN 100 AND 2000', 'vl', 'vl_h') AS differences;
-- lookups of one row by its key (a seek decodes only the value it needs:
-- fixed width at its index, varlenas walked, columns added later), every
-- 7th row, the heap side by an index; then rows of one page one after the
-- other in one seek (the first alone, the next ones with the whole column)
CREATE INDEX vl_h_key ON vl_h (k, c);
SET enable_hashjoin = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT x.* FROM generate_series(1, 6000, 7) g,
  LATERAL (SELECT c, i2, t FROM vl WHERE k = g % 7 AND c = g) x;
SELECT vl_diff('SELECT x.* FROM generate_series(1, 6000, 7) g, LATERAL (SELECT c, i2, i8, f, n, t, b, u, nm, flag, d, ts, iv, arr, big FROM %s WHERE k = g %% 7 AND c = g) x', 'vl', 'vl_h') AS differences;
SELECT vl_diff('SELECT x.* FROM generate_series(1, 6000, 7) g, LATERAL (SELECT ts, j FROM %s WHERE k = g %% 7 AND c = g) x', 'vl', 'vl_h') AS differences;
SELECT vl_diff('SELECT c, n, u, t FROM %s WHERE k = 3 AND c IN (10, 17, 24, 31, 5995)', 'vl', 'vl_h') AS differences;
RESET enable_hashjoin;
RESET enable_mergejoin;
-- in parallel workers
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT d, count(*), sum(i8) FROM vl GROUP BY d;
SELECT vl_diff('SELECT d, count(*), sum(i8), sum(length(t)), max(nm::text) FROM %s GROUP BY d', 'vl', 'vl_h') AS differences;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- columns added (older tuples lack them: their default) and dropped later
ALTER TABLE vl ADD COLUMN extra int DEFAULT 42;
ALTER TABLE vl_h ADD COLUMN extra int DEFAULT 42;
INSERT INTO vl SELECT k, c + 100000, i2, i8, f, n, t, b, u, nm, flag, d, ts, iv, arr, j, big, c FROM vl_h WHERE c % 3 = 0;
INSERT INTO vl_h SELECT k, c + 100000, i2, i8, f, n, t, b, u, nm, flag, d, ts, iv, arr, j, big, c FROM vl_h WHERE c % 3 = 0;
ALTER TABLE vl DROP COLUMN i2;
ALTER TABLE vl_h DROP COLUMN i2;
SELECT widecol.compact('vl', true) AS versions_compacted;
SELECT count(*), vl_same('vl', 'vl_h') AS same FROM vl;
SELECT vl_diff('SELECT d, sum(extra), sum(i8) FROM %s GROUP BY d', 'vl', 'vl_h') AS differences;
SELECT vl_diff('SELECT c, extra FROM %s WHERE extra <> 42', 'vl', 'vl_h') AS differences;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT vl_diff('SELECT x.* FROM generate_series(1, 106000, 11) g, LATERAL (SELECT c, extra, ts, t FROM %s WHERE k = g %% 7 AND c = g) x', 'vl', 'vl_h') AS differences;
RESET enable_hashjoin;
RESET enable_mergejoin;
-- changed and deleted after compaction, then compacted again
UPDATE vl SET t = 'changed', extra = -1 WHERE c % 97 = 0;
UPDATE vl_h SET t = 'changed', extra = -1 WHERE c % 97 = 0;
DELETE FROM vl WHERE c % 89 = 0;
DELETE FROM vl_h WHERE c % 89 = 0;
SELECT vl_diff('SELECT d, sum(extra), count(t) FILTER (WHERE t = ''changed'') FROM %s GROUP BY d', 'vl', 'vl_h') AS differences;
SELECT widecol.compact('vl', true) AS versions_compacted;
SELECT count(*), vl_same('vl', 'vl_h') AS same FROM vl;
SELECT bool_and(ok) AS verified FROM widecol.verify('vl');

-- the row layout writes the same rows; both read back the same
SET widecol.compaction_value_layout = rows;
CREATE TABLE vl_rows (LIKE vl) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
INSERT INTO vl_rows SELECT * FROM vl;
SELECT widecol.compact('vl_rows', true) AS versions_compacted;
SELECT kind, sum(pages) > 0 AS some FROM widecol.run_pages('vl_rows')
 WHERE kind LIKE 'value%' GROUP BY kind ORDER BY kind;
SELECT vl_same('vl_rows', 'vl') AS same;
SELECT vl_diff('SELECT d, sum(extra), sum(i8), max(nm::text) FROM %s GROUP BY d', 'vl_rows', 'vl') AS differences;
RESET widecol.compaction_value_layout;
-- widecol partitions of a partitioned table, compacted by column: a report
-- and seeks through the parent, int literals against a bigint key
CREATE TABLE vl_ph (d date, id bigint, w int, note text);
INSERT INTO vl_ph SELECT date '2025-01-01' + g % 31, g, g % 1000, repeat('n', g % 50)
  FROM generate_series(1, 8000) g;
CREATE TABLE vl_p (LIKE vl_ph) PARTITION BY RANGE (d);
CREATE TABLE vl_p1 PARTITION OF vl_p FOR VALUES FROM ('2025-01-01') TO ('2025-01-16') USING widecol
  WITH (widecol.partition_key = 'd', widecol.clustering_key = 'id');
CREATE TABLE vl_p2 PARTITION OF vl_p FOR VALUES FROM ('2025-01-16') TO ('2025-02-01') USING widecol
  WITH (widecol.partition_key = 'd', widecol.clustering_key = 'id');
INSERT INTO vl_p SELECT * FROM vl_ph;
SELECT widecol.compact('vl_p1', true) + widecol.compact('vl_p2', true) AS versions_compacted;
SELECT kind, sum(pages) > 0 AS some FROM widecol.run_pages('vl_p2')
 WHERE kind LIKE 'value%' GROUP BY kind ORDER BY kind;
SELECT vl_diff('SELECT d, sum(w), sum(length(note)) FROM %s GROUP BY d', 'vl_p', 'vl_ph') AS differences;
SELECT vl_diff('SELECT id, w FROM %s WHERE d = ''2025-01-05'' AND id BETWEEN 100 AND 5000', 'vl_p', 'vl_ph') AS differences;
EXPLAIN (COSTS OFF) SELECT w, length(note) FROM vl_p WHERE d = '2025-01-17' AND id = 3643;
SELECT w, length(note) FROM vl_p WHERE d = '2025-01-17' AND id = 3643;
DROP TABLE vl_p, vl_ph;

-- hex-packed chunks (run format 8): a text column of lowercase hex digits
-- is stored two digits a byte; columns that are not (upper case, an odd
-- number of digits, one value that is not hex, values too long for a
-- one-byte header, binary bytea) are compressed as before.  Empty strings
-- and NULLs among the hex; every answer against a heap copy; verify agrees
CREATE TABLE vl_hexh (k int, id int, h text, up text, odd text, mixed text, longhex text, b bytea);
INSERT INTO vl_hexh
SELECT g % 5, g,
       CASE WHEN g % 13 = 0 THEN NULL WHEN g % 17 = 0 THEN '' ELSE md5(g::text) || md5((g + 1)::text) END,
       upper(md5(g::text)), left(md5(g::text), 31),
       CASE WHEN g = 777 THEN 'not hex' ELSE md5(g::text) END,
       repeat(md5(g::text), 5), decode(md5(g::text), 'hex')
FROM generate_series(1, 6000) g;
CREATE TABLE vl_hex (LIKE vl_hexh) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'id');
INSERT INTO vl_hex SELECT * FROM vl_hexh;
SELECT widecol.compact('vl_hex', true) AS versions_compacted;
SELECT vl_same('vl_hex', 'vl_hexh') AS same_rows;
SELECT vl_diff('SELECT k, count(h), sum(length(h)), count(*) FILTER (WHERE h = '''') FROM %s GROUP BY k', 'vl_hex', 'vl_hexh') AS differences;
SELECT vl_diff('SELECT id, h, mixed FROM %s WHERE k = 2 AND id BETWEEN 700 AND 900', 'vl_hex', 'vl_hexh') AS differences;
SELECT h, up, odd, mixed, length(longhex), encode(b, 'hex') FROM vl_hex WHERE k = 777 % 5 AND id = 777;
-- lookups of one row: a hex-packed value unpacked alone (NULLs and empty
-- strings before it), then rows of one page in one seek
CREATE INDEX vl_hexh_key ON vl_hexh (k, id);
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT vl_diff('SELECT x.* FROM generate_series(1, 6000, 3) g, LATERAL (SELECT id, h, odd, mixed, b FROM %s WHERE k = g %% 5 AND id = g) x', 'vl_hex', 'vl_hexh') AS differences;
SELECT vl_diff('SELECT id, h FROM %s WHERE k = 2 AND id IN (12, 17, 22, 27, 32, 5997)', 'vl_hex', 'vl_hexh') AS differences;
-- reads of a few rows from a seek unpack each row's value, going on from
-- the one before (in order, and in reverse from the start again)
SET enable_seqscan = off;
SELECT vl_diff('SELECT s, n, (SELECT string_agg(coalesce(x.h, ''-'') || coalesce(x.mixed, ''-''), '','' ORDER BY x.id)
                               FROM %s x WHERE x.k = s %% 5 AND x.id BETWEEN s AND s + 5 * n)
                  FROM generate_series(1, 6000, 73) s, unnest(ARRAY[0, 3, 20, 120]) n',
               'vl_hex', 'vl_hexh') AS differences;
SELECT vl_diff('SELECT s, (SELECT string_agg(coalesce(y.h, ''-''), '','') FROM
                            (SELECT x.h FROM %s x WHERE x.k = s %% 5 AND x.id <= s ORDER BY x.id DESC LIMIT 30) y)
                  FROM generate_series(1, 6000, 73) s',
               'vl_hex', 'vl_hexh') AS differences;
RESET enable_seqscan;
RESET enable_hashjoin;
RESET enable_mergejoin;
SELECT bool_and(ok) AS verified FROM widecol.verify('vl_hex');
-- (test/t/020_zstd_runs.pl reads the page: the chunk's codec is hex)
DROP TABLE vl_hex, vl_hexh;

-- a zstd dictionary per run (run format 9): compaction trains one on the
-- first text chunks of the run it writes and compresses the later ones in
-- frames of 16 values with it (a lookup decodes one frame).  Paths that
-- share their shape, with NULLs, empty strings and long values (4-byte
-- headers: such a chunk is not framed) among them; every answer against a
-- heap copy: reports, lookups of one row by key, rows of one page in one
-- seek, partitions in reverse; verify.  Without the setting the next
-- compaction writes none, and the rows stay the same.
CREATE TABLE vl_dh (k int, id int, path text, note text, w int);
INSERT INTO vl_dh
SELECT g % 3, g,
       CASE WHEN g % 101 = 0 THEN NULL WHEN g % 103 = 0 THEN ''
            ELSE 'raw/cam-' || lpad((g % 200)::text, 4, '0') || '/2025/01/' ||
                 lpad((1 + g % 28)::text, 2, '0') || '/' || md5(g::text)::uuid || '.jpg' END,
       CASE WHEN g % 1000 = 0 THEN repeat('long note ', 30) ELSE 'n' || g END,
       g % 1000
  FROM generate_series(1, 30000) g;
CREATE INDEX vl_dh_key ON vl_dh (k, id);
CREATE TABLE vl_d (LIKE vl_dh) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'id');
INSERT INTO vl_d SELECT * FROM vl_dh;
SHOW widecol.compaction_zstd_dictionary;
SELECT widecol.compact('vl_d', true) AS versions_compacted;
SELECT kind, codec, pages > 0 AS some FROM widecol.run_pages('vl_d')
 WHERE kind IN ('dictionary', 'value_columns') ORDER BY kind;
SELECT bool_and(ok) AS verified FROM widecol.verify('vl_d');
SELECT vl_same('vl_d', 'vl_dh') AS same_rows;
SELECT vl_diff('SELECT k, count(path), sum(length(path)), max(path), min(note) FROM %s GROUP BY k', 'vl_d', 'vl_dh') AS differences;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT vl_diff('SELECT x.* FROM generate_series(1, 30000, 7) g, LATERAL (SELECT id, path, w FROM %s WHERE k = g %% 3 AND id = g) x', 'vl_d', 'vl_dh') AS differences;
SELECT vl_diff('SELECT x.* FROM generate_series(1, 30000, 97) g, LATERAL (SELECT id, note, path FROM %s WHERE k = g %% 3 AND id = g) x', 'vl_d', 'vl_dh') AS differences;
SELECT vl_diff('SELECT id, path FROM %s WHERE k = 1 AND id IN (4, 7, 10, 13, 1000, 29998)', 'vl_d', 'vl_dh') AS differences;
SELECT vl_diff('(SELECT id, path FROM %s WHERE k = 2 ORDER BY id DESC LIMIT 300)', 'vl_d', 'vl_dh') AS differences;
-- a read of a few rows from a seek decodes the frames holding them, a
-- frame at a time (storage/columns.c point_value): ranges of 1 to 201
-- rows starting all over the partitions, in order and in reverse, and
-- over two partitions, as the heap copy has them
SET enable_seqscan = off;
SELECT vl_diff('SELECT s, n, (SELECT string_agg(coalesce(x.path, ''-'') || x.w, '','' ORDER BY x.id) FROM %s x
                               WHERE x.k = s %% 3 AND x.id BETWEEN s AND s + 3 * n)
                  FROM generate_series(1, 30000, 331) s, unnest(ARRAY[0, 5, 15, 16, 17, 40, 200]) n',
               'vl_d', 'vl_dh') AS differences;
SELECT vl_diff('SELECT s, n, (SELECT string_agg(coalesce(y.path, ''-''), '','') FROM
                               (SELECT x.path FROM %s x WHERE x.k = s %% 3 AND x.id <= s
                                 ORDER BY x.id DESC LIMIT n) y)
                  FROM generate_series(1, 30000, 331) s, unnest(ARRAY[1, 16, 17, 40]) n',
               'vl_d', 'vl_dh') AS differences;
SELECT vl_diff('SELECT s, (SELECT string_agg(coalesce(x.path, ''-''), '','' ORDER BY x.k, x.id) FROM %s x
                            WHERE x.k BETWEEN 0 AND 1 AND x.id BETWEEN s AND s + 60)
                  FROM generate_series(1, 30000, 997) s',
               'vl_d', 'vl_dh') AS differences;
RESET enable_seqscan;
RESET enable_hashjoin;
RESET enable_mergejoin;
-- a compaction failing halfway, after its dictionary was trained (as on a
-- full disk): nothing of it is left, the rows read back the same
SET ROLE NONE;
SELECT set_config('widecol.debug_fail_run_write',
                  (SELECT (sum(npages) * 4 / 5)::text FROM widecol.runs('vl_d')), false) IS NOT NULL AS set;
DO $$
BEGIN
  PERFORM widecol.compact('vl_d', true);
EXCEPTION WHEN disk_full THEN
  RAISE NOTICE 'the compaction failed halfway (%)', SQLSTATE;
END $$;
RESET widecol.debug_fail_run_write;
RESET ROLE;
SELECT count(*) AS runs FROM widecol.runs('vl_d');
SELECT vl_same('vl_d', 'vl_dh') AS same_rows;
SELECT bool_and(ok) AS verified FROM widecol.verify('vl_d');
-- ANALYZE's sample and UPDATE's fetch by tid read key pages without their
-- run's reader: they find the dictionary through the manifest
ANALYZE vl_d;
SELECT null_frac > 0 AS has_nulls, n_distinct <> 0 AS has_distinct
  FROM pg_stats WHERE tablename = 'vl_d' AND attname = 'path';
-- two runs, each with its own dictionary (a time_window table keeps one
-- run per day): ANALYZE's sample and UPDATE's fetches by tid go from one
-- run to the other (a key page read without its run's reader keeps no
-- other run's dictionary)
SET ROLE NONE;
CREATE FUNCTION vl_write_time(t timestamptz) RETURNS void LANGUAGE sql SECURITY DEFINER
  AS $$ SELECT set_config('widecol.debug_write_time', coalesce(extract(epoch FROM t), 0)::text, false) $$;
RESET ROLE;
CREATE TABLE vl_d2 (LIKE vl_dh) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'id',
        widecol.compaction = 'time_window', widecol.compaction_window = '1 day');
CREATE TABLE vl_dh2 AS SELECT * FROM vl_dh;
SELECT vl_write_time('2025-01-01 10:00');
INSERT INTO vl_d2 SELECT * FROM vl_dh WHERE id % 2 = 0;
SELECT vl_write_time('2025-01-02 10:00');
INSERT INTO vl_d2 SELECT * FROM vl_dh WHERE id % 2 = 1;
SELECT vl_write_time(NULL);
SELECT widecol.compact('vl_d2', true) AS versions_compacted;
SELECT count(*) AS runs FROM widecol.runs('vl_d2');
SELECT count(DISTINCT run_id) AS runs_with_a_dictionary FROM widecol.run_pages('vl_d2')
 WHERE kind = 'dictionary';
ANALYZE vl_d2;
SELECT null_frac > 0 AS has_nulls, n_distinct <> 0 AS has_distinct
  FROM pg_stats WHERE tablename = 'vl_d2' AND attname = 'path';
UPDATE vl_d2 SET w = w + 1, path = path || '?' WHERE id % 7 = 0;
UPDATE vl_dh2 SET w = w + 1, path = path || '?' WHERE id % 7 = 0;
DELETE FROM vl_d2 WHERE id % 11 = 0;
DELETE FROM vl_dh2 WHERE id % 11 = 0;
SELECT vl_same('vl_d2', 'vl_dh2') AS same_rows;
DROP TABLE vl_d2, vl_dh2;
SET ROLE NONE;
DROP FUNCTION vl_write_time(timestamptz);
RESET ROLE;
-- widecol partitions of a partitioned table, each compacted with its own
-- dictionary: lookups through the parent with int literals against its
-- bigint keys, against the heap copy
CREATE TABLE vl_dp (k bigint, id bigint, path text, note text, w int) PARTITION BY RANGE (k);
CREATE TABLE vl_dp_a PARTITION OF vl_dp FOR VALUES FROM (0) TO (2) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'id');
CREATE TABLE vl_dp_b PARTITION OF vl_dp FOR VALUES FROM (2) TO (3) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'id');
INSERT INTO vl_dp SELECT * FROM vl_dh;
SELECT widecol.compact('vl_dp_a', true) + widecol.compact('vl_dp_b', true) AS versions_compacted;
SELECT (SELECT count(*) FROM widecol.run_pages('vl_dp_a') WHERE kind = 'dictionary') > 0 AS a_has_one,
       (SELECT count(*) FROM widecol.run_pages('vl_dp_b') WHERE kind = 'dictionary') > 0 AS b_has_one;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT vl_diff('SELECT x.* FROM generate_series(1, 30000, 13) g, LATERAL (SELECT id, path FROM %s WHERE k = g %% 3 AND id = g) x', 'vl_dp', 'vl_dh') AS differences;
-- and reads of a few rows through it (the frames holding them), int
-- literals against the bigint keys
SET enable_seqscan = off;
SELECT vl_diff('SELECT s, (SELECT string_agg(coalesce(x.path, ''-''), '','' ORDER BY x.id) FROM %s x
                            WHERE x.k = s %% 3 AND x.id BETWEEN s AND s + 60)
                  FROM generate_series(1, 30000, 497) s',
               'vl_dp', 'vl_dh') AS differences;
RESET enable_seqscan;
RESET enable_hashjoin;
RESET enable_mergejoin;
SELECT vl_diff('SELECT k, count(path), max(path) FROM %s GROUP BY k', 'vl_dp', 'vl_dh') AS differences;
DROP TABLE vl_dp;
SET widecol.compaction_zstd_dictionary = off;
UPDATE vl_d SET w = -w WHERE id % 10 = 0;
UPDATE vl_dh SET w = -w WHERE id % 10 = 0;
SELECT widecol.compact('vl_d', true) AS versions_compacted;
SELECT count(*) AS dictionary_pages FROM widecol.run_pages('vl_d') WHERE kind = 'dictionary';
SELECT vl_same('vl_d', 'vl_dh') AS same_rows;
RESET widecol.compaction_zstd_dictionary;
SELECT bool_and(ok) AS verified FROM widecol.verify('vl_d');
-- VACUUM FULL writes the table again, with a dictionary
VACUUM FULL vl_d;
SELECT count(*) > 0 AS has_a_dictionary FROM widecol.run_pages('vl_d') WHERE kind = 'dictionary';
SELECT vl_same('vl_d', 'vl_dh') AS same_rows;
SELECT bool_and(ok) AS verified FROM widecol.verify('vl_d');
-- (test/t/020_zstd_runs.pl reads the pages, damages the dictionary, and
-- reads a run of format 8 beside one of format 9)
DROP TABLE vl_d, vl_dh;

-- Shared tuple headers (run format 12): the tuples of a page that differ
-- only in length keep one header and their lengths (one for all, a byte
-- over the shortest, or two bytes each); a page with NULLs in some tuples
-- or tuples written before a column was added keeps a header per tuple.
-- Each shape read by reports and lookups against a heap copy, beside the
-- same rows in run format 11 (test-only widecol.debug_run_format = 11).
CREATE TABLE vl_sh_h (k int, c int, a text, b int, n int);
INSERT INTO vl_sh_h
SELECT g % 4, g,
       CASE WHEN g <= 3000 THEN md5(g::text)                 -- one length
            WHEN g <= 6000 THEN repeat('x', 20 + g % 200)    -- within a byte
            WHEN g <= 9000 THEN repeat('y', (g * 37) % 1800) -- further apart
            ELSE md5(g::text) END,
       g * 3,
       CASE WHEN g > 9000 AND g % 17 = 0 THEN NULL           -- NULLs in some
            WHEN g BETWEEN 4001 AND 5000 THEN NULL            -- or in every one
            ELSE g END
  FROM generate_series(1, 12000) g;
CREATE TABLE vl_sh (k int, c int, a text, b int, n int) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
CREATE TABLE vl_sh11 (k int, c int, a text, b int, n int) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c',
        widecol.min_threshold = 2, widecol.max_threshold = 2);
INSERT INTO vl_sh SELECT * FROM vl_sh_h;
INSERT INTO vl_sh11 SELECT * FROM vl_sh_h;
SELECT widecol.compact('vl_sh', true) AS versions_compacted;
SET ROLE NONE;
SET widecol.debug_run_format = 11;
RESET ROLE;
SELECT widecol.compact('vl_sh11', true) AS versions_compacted;
SET ROLE NONE;
RESET widecol.debug_run_format;
RESET ROLE;
SELECT vl_same('vl_sh', 'vl_sh_h') AS same_rows, vl_same('vl_sh11', 'vl_sh_h') AS same_rows_11;
SELECT vl_diff('SELECT k, count(*), sum(b), sum(n), count(n), sum(length(a)) FROM %s GROUP BY k',
               'vl_sh', 'vl_sh_h') AS differences;
-- a lookup of every 7th row, each column alone and all of them
SET enable_seqscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT vl_diff('SELECT x.* FROM generate_series(1, 12000, 7) g, LATERAL (SELECT c, a FROM %s WHERE k = g %% 4 AND c = g) x',
               'vl_sh', 'vl_sh_h') AS differences,
       vl_diff('SELECT x.* FROM generate_series(3, 12000, 7) g, LATERAL (SELECT n FROM %s WHERE k = g %% 4 AND c = g) x',
               'vl_sh', 'vl_sh_h') AS differences_n,
       vl_diff('SELECT x.* FROM generate_series(5, 12000, 7) g, LATERAL (SELECT * FROM %s WHERE k = g %% 4 AND c = g) x',
               'vl_sh', 'vl_sh_h') AS differences_all;
-- and a few rows from each (a seek's page read row after row)
SELECT vl_diff('SELECT s, (SELECT string_agg(x.c || coalesce(x.n::text, ''-'') || length(x.a), '','' ORDER BY x.c)
                             FROM %s x WHERE x.k = s %% 4 AND x.c BETWEEN s AND s + 40)
                  FROM generate_series(1, 12000, 89) s', 'vl_sh', 'vl_sh_h') AS differences;
RESET enable_seqscan;
RESET enable_hashjoin;
RESET enable_mergejoin;
-- one header and lengths take fewer bytes than lz4's header per tuple
SELECT s12.bytes < s11.bytes AS fewer_bytes
  FROM (SELECT sum(stored_bytes) AS bytes FROM widecol.run_pages('vl_sh') WHERE kind = 'value_columns') s12,
       (SELECT sum(stored_bytes) AS bytes FROM widecol.run_pages('vl_sh11') WHERE kind = 'value_columns') s11;
-- a column added: the older tuples have fewer columns than the newer ones
-- of the same pages; a format-11 run and a format-12 run in one table
ALTER TABLE vl_sh ADD COLUMN z int DEFAULT 7;
ALTER TABLE vl_sh_h ADD COLUMN z int DEFAULT 7;
INSERT INTO vl_sh SELECT k, c + 100000, a, b, n, c FROM vl_sh_h WHERE c % 3 = 0;
INSERT INTO vl_sh_h SELECT k, c + 100000, a, b, n, c FROM vl_sh_h WHERE c % 3 = 0;
SELECT widecol.compact('vl_sh', true) AS versions_compacted;
-- (two runs of new rows, merged into one of format 12 beside the format-11 run)
INSERT INTO vl_sh11 SELECT k, c, a, b, n FROM vl_sh_h WHERE c > 100000 AND c % 2 = 0;
INSERT INTO vl_sh11 SELECT k, c, a, b, n FROM vl_sh_h WHERE c > 100000 AND c % 2 = 1;
SELECT widecol.compact('vl_sh11') AS versions_compacted;
SELECT vl_same('vl_sh', 'vl_sh_h') AS same_rows;
SELECT vl_diff('SELECT k, count(*), sum(b), sum(z), count(n), sum(length(a)) FROM %s GROUP BY k',
               'vl_sh', 'vl_sh_h') AS differences;
SELECT vl_diff('SELECT k, c, a, b, n FROM %s', 'vl_sh11', 'vl_sh_h') AS differences_two_formats;
SELECT count(*) AS runs FROM widecol.runs('vl_sh11');
SET enable_seqscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT vl_diff('SELECT x.* FROM generate_series(1, 12000, 5) g,
                  LATERAL (SELECT k, c, a, b, n FROM %s WHERE k = g %% 4 AND c IN (g, g + 100000)) x',
               'vl_sh11', 'vl_sh_h') AS differences;
RESET enable_seqscan;
RESET enable_hashjoin;
RESET enable_mergejoin;
SELECT bool_and(ok) AS verified FROM widecol.verify('vl_sh');
SELECT bool_and(ok) AS verified FROM widecol.verify('vl_sh11');
-- on a widecol partition of a partitioned table, with a bigint key sought by int literals
CREATE TABLE vl_shp (k bigint, c bigint, a text, b int, n int) PARTITION BY LIST (k);
CREATE TABLE vl_shp_0 PARTITION OF vl_shp FOR VALUES IN (0, 1) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
CREATE TABLE vl_shp_1 PARTITION OF vl_shp FOR VALUES IN (2, 3) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
INSERT INTO vl_shp SELECT k, c, a, b, n FROM vl_sh_h WHERE c <= 12000;
SELECT widecol.compact('vl_shp_0', true) + widecol.compact('vl_shp_1', true) AS versions_compacted;
SELECT count(*) AS found,
       count(*) FILTER (WHERE p.a = h.a AND p.n IS NOT DISTINCT FROM h.n) AS same
  FROM generate_series(1, 12000, 11) g,
       LATERAL (SELECT a, n FROM vl_shp WHERE k = (g % 4)::int AND c = g::int) p,
       LATERAL (SELECT a, n FROM vl_sh_h WHERE c = g) h;
-- a table without a key (hidden row ids): tuples without NULLs
CREATE TABLE vl_shk (a text, b int) USING widecol;
CREATE TABLE vl_shk_h (a text, b int);
INSERT INTO vl_shk SELECT a, b FROM vl_sh_h WHERE c <= 12000;
INSERT INTO vl_shk_h SELECT a, b FROM vl_sh_h WHERE c <= 12000;
SELECT widecol.compact('vl_shk', true) AS versions_compacted;
SELECT vl_same('vl_shk', 'vl_shk_h') AS same_rows;
SELECT bool_and(ok) AS verified FROM widecol.verify('vl_shk');
DROP TABLE vl_sh, vl_sh11, vl_sh_h, vl_shp, vl_shk, vl_shk_h;

-- the runs flushes and bulk writes write are by column too
-- (widecol.ingest_value_layout, default columns): read before any
-- compaction by reports, seeks of one row and whole partitions, against the
-- heap copy, beside a run written with the setting at rows and a run
-- flushed from level 0; a bulk write failing halfway leaves nothing
SHOW widecol.ingest_value_layout;
CREATE TABLE vl_in (LIKE vl_h) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
INSERT INTO vl_in SELECT * FROM vl_h WHERE c % 3 = 0;
SET widecol.ingest_value_layout = rows;
INSERT INTO vl_in SELECT * FROM vl_h WHERE c % 3 = 1;
RESET widecol.ingest_value_layout;
DO $$ DECLARE r record;
BEGIN
  FOR r IN SELECT c FROM vl_h WHERE c % 3 = 2 AND c < 600 LOOP
    INSERT INTO vl_in SELECT * FROM vl_h WHERE c = r.c;
  END LOOP;
END $$;
SELECT widecol.flush('vl_in') > 0 AS flushed;
INSERT INTO vl_in SELECT * FROM vl_h WHERE c % 3 = 2 AND c >= 600;
SELECT count(*) AS runs FROM widecol.runs('vl_in');
SELECT kind, count(DISTINCT run_id) AS runs FROM widecol.run_pages('vl_in')
 WHERE kind LIKE 'value%' GROUP BY kind ORDER BY kind;
SELECT count(*), vl_same('vl_in', 'vl_h') AS same FROM vl_in;
SELECT vl_diff('SELECT d, count(*), sum(i8), sum(length(t)), count(u), max(nm::text), bool_or(flag), sum(length(big)) FROM %s GROUP BY d', 'vl_in', 'vl_h') AS differences;
SET enable_seqscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT vl_diff('SELECT x.* FROM generate_series(1, 6000, 7) g,
                  LATERAL (SELECT c, t, b, u, big, extra FROM %s WHERE k = g %% 7 AND c = g) x', 'vl_in', 'vl_h') AS differences;
SELECT vl_diff('SELECT x.* FROM generate_series(0, 6) g, LATERAL (SELECT * FROM %s WHERE k = g) x', 'vl_in', 'vl_h') AS differences;
RESET enable_seqscan;
RESET enable_hashjoin;
RESET enable_mergejoin;
INSERT INTO vl_in SELECT * FROM vl_h WHERE c < 3000 OR 1 / (c - 5000) > 0;
SELECT count(*) AS runs, sum(nrows) AS versions FROM widecol.runs('vl_in');
SELECT bool_and(ok) AS verified FROM widecol.verify('vl_in');
-- through a partitioned parent, int literals against a bigint key
CREATE TABLE vl_inp (k bigint, c bigint, t text, w int) PARTITION BY LIST (k);
CREATE TABLE vl_inp_0 PARTITION OF vl_inp FOR VALUES IN (0, 1, 2) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
CREATE TABLE vl_inp_1 PARTITION OF vl_inp FOR VALUES IN (3, 4, 5, 6) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
INSERT INTO vl_inp SELECT k, c, t, c % 1000 FROM vl_h;
SELECT count(DISTINCT run_id) AS runs_by_column FROM widecol.run_pages('vl_inp_1') WHERE kind = 'value_columns';
SELECT count(*) AS found, count(*) FILTER (WHERE p.t IS NOT DISTINCT FROM h.t AND p.w = h.c % 1000) AS same
  FROM generate_series(1, 6000, 13) g,
       LATERAL (SELECT t, w FROM vl_inp WHERE k = (g % 7)::int AND c = g::int) p,
       LATERAL (SELECT t, c FROM vl_h WHERE c = g) h;
CREATE VIEW vl_inp_h AS SELECT k, c, t, c % 1000 AS w FROM vl_h;
SELECT vl_diff('SELECT k, sum(w), count(t), sum(c) FROM %s GROUP BY k', 'vl_inp', 'vl_inp_h') AS differences;
DROP VIEW vl_inp_h;
DROP TABLE vl_in, vl_inp;

-- a table of key columns only: value pages of NULL headers, by column too
CREATE TABLE vl_keys (a int, b int) USING widecol
  WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b');
INSERT INTO vl_keys SELECT g % 10, g FROM generate_series(1, 3000) g;
SELECT widecol.compact('vl_keys', true) AS versions_compacted;
SELECT count(*), sum(b) FROM vl_keys;
SELECT bool_and(ok) AS verified FROM widecol.verify('vl_keys');
-- Writers rebuild and compare whole only the first value pages of a run
-- and one in 16 of the rest; every tuple is checked to be as the reader
-- rebuilds it (storage/columns.c).  The suites set the test-only
-- widecol.debug_check_columns (every page compared, a page on which the
-- two checks disagree an ERROR); without it, as
-- users run, the rows of vl_h and hex columns, written and compacted: the
-- same rows, verify agrees
SHOW widecol.debug_check_columns;
SET widecol.debug_check_columns = off;
CREATE TABLE vl_sampled (LIKE vl_h) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
ALTER TABLE vl_sampled ADD COLUMN hash text;
INSERT INTO vl_sampled SELECT *, CASE WHEN c % 9 = 0 THEN NULL ELSE md5(c::text) || md5((c * 7)::text) END
  FROM vl_h;
SELECT sum(pages) > 40 AS many_pages_by_column FROM widecol.run_pages('vl_sampled')
 WHERE kind = 'value_columns';
CREATE VIEW vl_sampled_h AS
  SELECT *, CASE WHEN c % 9 = 0 THEN NULL ELSE md5(c::text) || md5((c * 7)::text) END AS hash FROM vl_h;
SELECT vl_same('vl_sampled', 'vl_sampled_h') AS same_rows;
SELECT widecol.compact('vl_sampled', true) > 0 AS compacted;
SELECT vl_same('vl_sampled', 'vl_sampled_h') AS same_rows;
SELECT bool_and(ok) AS verified FROM widecol.verify('vl_sampled');
RESET widecol.debug_check_columns;
DROP VIEW vl_sampled_h;
DROP TABLE vl_sampled;

DROP TABLE vl, vl_h, vl_rows, vl_keys;
DROP FUNCTION vl_same(regclass, regclass);
DROP FUNCTION vl_diff(text, regclass, regclass);
