--
-- keys: CREATE EXTENSION, key declaration and its validation at CREATE
-- TABLE, key checks at write time (NULL key, key too large, row too large),
-- and the order rows come back in for every supported key type.
--
\set VERBOSITY default
\set HIDE_TABLEAM off
-- COPY files go through the client (\copy): a server file needs a superuser

-- The library is preloaded (test/widecol.conf), so CREATE EXTENSION works.
-- pg_regress created it already; drop and create it again to prove it
-- (as a superuser: the extension creates an access method).
SET ROLE NONE;
DROP EXTENSION widecol;
CREATE EXTENSION widecol;
RESET ROLE;
SELECT extname, extversion, extnamespace::regnamespace FROM pg_extension WHERE extname = 'widecol';
SELECT amname, amtype FROM pg_am WHERE amname = 'widecol';
SELECT name, unit, context FROM pg_settings
 WHERE name IN ('widecol.level0_max_size', 'widecol.bulk_write_mem') ORDER BY name;

---------------------------------------------------------------------------
-- Declaring keys
---------------------------------------------------------------------------

-- widecol.x = ... as written by hand
CREATE TABLE k_img (
    device_id text, day_bucket date, capture_time timestamptz, image_id uuid,
    object_key text, width int
) USING widecol WITH (
    widecol.partition_key  = 'device_id, day_bucket',
    widecol.clustering_key = 'capture_time DESC, image_id DESC');
-- "widecol.x" = ... as pg_dump writes it
CREATE TABLE k_dump (a int, b int, c text) USING widecol
    WITH ("widecol.partition_key" = 'a', "widecol.clustering_key" = 'b ASC');
-- case-insensitive ASC/DESC, odd spacing
CREATE TABLE k_space (a int, b int, c int) USING widecol
    WITH (widecol.partition_key = '  a  ', widecol.clustering_key = 'b desc ,c   Asc');
SELECT c.relname, a.amname, c.reloptions
  FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname IN ('k_img', 'k_dump', 'k_space') ORDER BY c.relname;
\d+ k_img
DROP TABLE k_img, k_dump, k_space;

-- Quoted identifiers keep their case; unquoted ones are folded to lower case.
CREATE TABLE k_case ("DevId" text, "Seq" int, v int) USING widecol
    WITH (widecol.partition_key = 'DevId');
CREATE TABLE k_case ("DevId" text, "Seq" int, v int) USING widecol
    WITH (widecol.partition_key = '"DevId"', widecol.clustering_key = '"Seq" DESC');
-- a doubled quote inside a quoted identifier
CREATE TABLE k_quote ("a""b" int, c int) USING widecol
    WITH (widecol.partition_key = '"a""b"');
-- unquoted names are folded: V matches column v
CREATE TABLE k_fold (v int, w int) USING widecol WITH (widecol.partition_key = 'V');
INSERT INTO k_case VALUES ('x', 1, 1), ('x', 2, 2), ('x', 1, 3);
SELECT * FROM k_case;
SELECT relname, reloptions FROM pg_class
 WHERE relname IN ('k_case', 'k_quote', 'k_fold') ORDER BY relname;
DROP TABLE k_case, k_quote, k_fold;

-- Validation errors
CREATE TABLE k_bad (a int, b int) USING widecol WITH (widecol.partition_key = 'x');
CREATE TABLE k_bad (a int, b int) USING widecol
    WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b, nope');
CREATE TABLE k_bad (a int, b int) USING widecol WITH (widecol.partition_key = 'a, a');
CREATE TABLE k_bad (a int, b int) USING widecol
    WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b, a');
CREATE TABLE k_bad (a int, b int) USING widecol
    WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b ASC, b DESC');
-- unsupported key types, with the list of supported ones
CREATE TABLE k_bad (a numeric, b int) USING widecol WITH (widecol.partition_key = 'a');
CREATE TABLE k_bad (a int, b float8) USING widecol
    WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b');
CREATE TABLE k_bad (a jsonb) USING widecol WITH (widecol.partition_key = 'a');
CREATE TABLE k_bad (a int, b int[]) USING widecol
    WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b');
CREATE TABLE k_bad (a char(3)) USING widecol WITH (widecol.partition_key = 'a');
-- a non-key column of any type is fine
CREATE TABLE k_ok (a int, b numeric, c jsonb, d float8[]) USING widecol
    WITH (widecol.partition_key = 'a');
INSERT INTO k_ok VALUES (1, 1.5, '{"x": 1}', '{1.5,2}');
SELECT * FROM k_ok;
DROP TABLE k_ok;

-- Domains over supported types are accepted, over others refused.
CREATE DOMAIN k_dev AS text;
CREATE DOMAIN k_seq AS bigint CHECK (VALUE >= 0);
CREATE DOMAIN k_ctext AS text COLLATE "C";
CREATE DOMAIN k_num AS numeric;
CREATE TABLE k_dom (d k_dev, s k_seq, n k_ctext, v int) USING widecol
    WITH (widecol.partition_key = 'd', widecol.clustering_key = 's DESC, n');
INSERT INTO k_dom VALUES ('a', 1, 'x', 1), ('a', 2, 'x', 2), ('a', 1, 'y', 3), ('a', 1, 'x', 4);
SELECT * FROM k_dom;
INSERT INTO k_dom VALUES ('a', -1, 'x', 5);
CREATE TABLE k_bad (a k_num) USING widecol WITH (widecol.partition_key = 'a');
DROP TABLE k_dom;
DROP DOMAIN k_dev, k_seq, k_ctext, k_num;

-- Text clustering columns need COLLATE "C"; partition columns may use any
-- deterministic collation.  (This database's default collation is C,
-- because pg_regress runs with --no-locale, so a plain text column is a C
-- column here.)
CREATE TABLE k_bad (a int, b text COLLATE "en-x-icu") USING widecol
    WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b');
CREATE TABLE k_bad (a int, b varchar(20) COLLATE "en-x-icu") USING widecol
    WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b DESC');
CREATE TABLE k_coll (a text COLLATE "en-x-icu", b text COLLATE "C", c text) USING widecol
    WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b, c');
SELECT datcollate FROM pg_database WHERE datname = current_database();
INSERT INTO k_coll VALUES ('a', 'b', 'B'), ('a', 'b', 'a'), ('a', 'B', 'b'), ('b', 'a', 'a');
SELECT * FROM k_coll;
DROP TABLE k_coll;
CREATE COLLATION k_nd (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE k_bad (a text COLLATE k_nd, b int) USING widecol WITH (widecol.partition_key = 'a');
CREATE TABLE k_bad (a int, b text COLLATE k_nd) USING widecol
    WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b');
DROP COLLATION k_nd;

-- A clustering key needs a partition key; the partition key takes no order.
CREATE TABLE k_bad (a int, b int) USING widecol WITH (widecol.clustering_key = 'b');
CREATE TABLE k_bad (a int, b int) USING widecol WITH (widecol.partition_key = 'a DESC');
CREATE TABLE k_bad (a int, b int) USING widecol WITH (widecol.partition_key = 'b, a ASC');

-- Unknown widecol.* option names (also in the quoted form)
CREATE TABLE k_bad (a int) USING widecol WITH (widecol.partition_key = 'a', widecol.bogus = 'x');
CREATE TABLE k_bad (a int) USING widecol WITH ("widecol.partitionkey" = 'a');
-- other reloptions pass through to PostgreSQL
CREATE TABLE k_bad (a int) USING widecol WITH (widecol.partition_key = 'a', nonsense = 1);
CREATE TABLE k_ff (a int) USING widecol WITH (fillfactor = 70, widecol.partition_key = 'a');
SELECT reloptions FROM pg_class WHERE relname = 'k_ff';
DROP TABLE k_ff;

-- Malformed key lists
CREATE TABLE k_bad (a int, b int) USING widecol WITH (widecol.partition_key = '"a');
CREATE TABLE k_bad (a int, b int) USING widecol
    WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b "');
CREATE TABLE k_bad (a int, b int) USING widecol WITH (widecol.partition_key = 'a b');
CREATE TABLE k_bad (a int, b int) USING widecol
    WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b DESC ASC');
CREATE TABLE k_bad (a int, b int) USING widecol WITH (widecol.partition_key = 'a; b');
CREATE TABLE k_bad (a int, b int) USING widecol WITH (widecol.partition_key = '');
CREATE TABLE k_bad (a int, b int) USING widecol WITH (widecol.partition_key = '   ');
CREATE TABLE k_bad (a int, b int) USING widecol WITH (widecol.partition_key = 'a,');
CREATE TABLE k_bad (a int, b int) USING widecol WITH (widecol.partition_key = ',a');
CREATE TABLE k_bad (a int, b int) USING widecol WITH (widecol.partition_key = 'a,,b');
CREATE TABLE k_bad (a int, b int) USING widecol WITH (widecol.partition_key = '""');
-- none of the failed statements left a table behind
SELECT count(*) FROM pg_class WHERE relname = 'k_bad';

-- At most 32 key columns
SELECT format('CREATE TABLE k_32 (%s) USING widecol WITH (widecol.partition_key = %L, widecol.clustering_key = %L)',
              string_agg('c' || i || ' int', ', '),
              string_agg('c' || i, ', ') FILTER (WHERE i <= 2),
              string_agg('c' || i, ', ') FILTER (WHERE i > 2))
  FROM generate_series(1, 32) i \gexec
SELECT format('CREATE TABLE k_33 (%s) USING widecol WITH (widecol.partition_key = %L, widecol.clustering_key = %L)',
              string_agg('c' || i || ' int', ', '),
              string_agg('c' || i, ', ') FILTER (WHERE i <= 2),
              string_agg('c' || i, ', ') FILTER (WHERE i > 2))
  FROM generate_series(1, 33) i \gexec
SELECT count(*) FROM pg_class WHERE relname IN ('k_32', 'k_33');
DROP TABLE k_32;

---------------------------------------------------------------------------
-- Where widecol.* options are allowed
---------------------------------------------------------------------------

-- not on heap tables
CREATE TABLE k_heap (a int) WITH (widecol.partition_key = 'a');
CREATE TABLE k_heap (a int) USING heap WITH ("widecol.partition_key" = 'a');
-- not on temporary or unlogged widecol tables (with or without options)
CREATE TEMP TABLE k_tmp (a int) USING widecol WITH (widecol.partition_key = 'a');
CREATE TEMP TABLE k_tmp (a int) USING widecol;
CREATE UNLOGGED TABLE k_unl (a int) USING widecol WITH (widecol.partition_key = 'a');
CREATE UNLOGGED TABLE k_unl (a int) USING widecol;
-- CREATE TABLE AS takes no widecol options ...
CREATE TABLE k_ctas USING widecol WITH (widecol.partition_key = 'a') AS SELECT 1 AS a;
CREATE TABLE k_ctas WITH (widecol.partition_key = 'a') AS SELECT 1 AS a;
CREATE TEMP TABLE k_ctas USING widecol AS SELECT 1 AS a;
CREATE UNLOGGED TABLE k_ctas USING widecol AS SELECT 1 AS a;
-- ... but works without them: a keyless widecol table
CREATE TABLE k_ctas USING widecol AS SELECT g AS a, g % 2 AS b FROM generate_series(1, 6) g;
SELECT a.amname, c.reloptions FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'k_ctas';
SELECT * FROM k_ctas;
INSERT INTO k_ctas VALUES (1, 1);
SELECT count(*), count(DISTINCT a) FROM k_ctas;
DROP TABLE k_ctas;
-- SELECT INTO and CREATE MATERIALIZED VIEW ... USING widecol
SET default_table_access_method = widecol;
SELECT g AS a INTO k_into FROM generate_series(1, 3) g;
RESET default_table_access_method;
SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'k_into';
SELECT * FROM k_into;
DROP TABLE k_into;
CREATE MATERIALIZED VIEW k_mv USING widecol AS SELECT g AS a FROM generate_series(1, 3) g;
SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'k_mv';
SELECT * FROM k_mv;
REFRESH MATERIALIZED VIEW k_mv;
SELECT count(*) FROM k_mv;
CREATE MATERIALIZED VIEW k_mv2 USING widecol WITH (widecol.partition_key = 'a') AS SELECT 1 AS a;
DROP MATERIALIZED VIEW k_mv;

-- default_table_access_method = widecol: options work without USING
SET default_table_access_method = widecol;
CREATE TABLE k_def (a int, b int, c text) WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b DESC');
-- and USING heap still refuses them
CREATE TABLE k_def2 (a int) USING heap WITH (widecol.partition_key = 'a');
RESET default_table_access_method;
SELECT a.amname, c.reloptions FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'k_def';
INSERT INTO k_def VALUES (1, 1, 'x'), (1, 2, 'y'), (1, 1, 'z');
SELECT * FROM k_def;

-- CREATE TABLE IF NOT EXISTS on an existing table: a notice, nothing changes
CREATE TABLE IF NOT EXISTS k_def (a int, b int, c text) USING widecol
    WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b DESC');
CREATE TABLE IF NOT EXISTS k_def (x int) USING widecol WITH (widecol.partition_key = 'x');
SELECT reloptions FROM pg_class WHERE relname = 'k_def';
SELECT * FROM k_def;
-- IF NOT EXISTS on a new table creates it with its key
CREATE TABLE IF NOT EXISTS k_new (a int, b int) USING widecol
    WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b DESC');
INSERT INTO k_new VALUES (1, 1), (1, 3), (1, 2), (1, 3);
SELECT * FROM k_new;
DROP TABLE k_def, k_new;

---------------------------------------------------------------------------
-- Key checks at write time
---------------------------------------------------------------------------
CREATE TABLE k_w (p text, c int, v text) USING widecol
    WITH (widecol.partition_key = 'p', widecol.clustering_key = 'c');
INSERT INTO k_w VALUES ('a', 1, 'ok');
-- NULL key values: INSERT, multi-row INSERT, INSERT ... SELECT, COPY, UPDATE
INSERT INTO k_w VALUES (NULL, 1, 'x');
INSERT INTO k_w VALUES ('a', NULL, 'x');
INSERT INTO k_w VALUES ('a', 2, 'x'), ('a', NULL, 'x');
INSERT INTO k_w SELECT 'a', NULL::int, 'x';
INSERT INTO k_w (p, v) VALUES ('a', 'x');
-- (CONTEXT hidden: COPY reports the line number of the end of its batch)
\set SHOW_CONTEXT never
COPY k_w FROM stdin;
a	3	x
\N	4	x
\.
\set SHOW_CONTEXT errors
UPDATE k_w SET c = NULL;
UPDATE k_w SET p = NULL WHERE c = 1;
-- NULL in non-key columns is fine
INSERT INTO k_w VALUES ('a', 5, NULL);
-- nothing of the failed statements is visible
SELECT * FROM k_w;

-- Encoded key at most 1024 bytes: text is its bytes + 2, int4 is 4 bytes.
INSERT INTO k_w VALUES (repeat('k', 1018), 1, 'fits exactly');
INSERT INTO k_w VALUES (repeat('k', 1019), 1, 'one byte too many');
INSERT INTO k_w VALUES (repeat('k', 5000), 1, 'far too long');
-- a two-byte character counts two bytes
INSERT INTO k_w VALUES (repeat('k', 1017) || 'é', 1, 'too long');
-- bytea: a 0x00 byte is escaped as two bytes, so 511 zero bytes take 1024
CREATE TABLE k_wb (p bytea) USING widecol WITH (widecol.partition_key = 'p');
INSERT INTO k_wb VALUES (decode(repeat('00', 511), 'hex'));
INSERT INTO k_wb VALUES (decode(repeat('00', 512), 'hex'));
INSERT INTO k_wb VALUES (decode(repeat('01', 1022), 'hex'));
INSERT INTO k_wb VALUES (decode(repeat('01', 1023), 'hex'));
SELECT length(p) FROM k_wb ORDER BY 1;
DROP TABLE k_wb;
UPDATE k_w SET p = p || 'k' WHERE c = 1 AND v = 'fits exactly';
\copy (SELECT repeat('q', 1100), 7, 'x') TO 'results/widecol_regress_keys.data'
\set SHOW_CONTEXT never
\copy k_w FROM 'results/widecol_regress_keys.data'
\set SHOW_CONTEXT errors
SELECT length(p), c, v FROM k_w ORDER BY 1, 2;

-- Rows larger than about 8 kB have their large values compressed in line,
-- and moved out of line into the TOAST relation when that is not enough
-- (see large_values).  md5 hex strings do not compress.
CREATE FUNCTION k_noise(n int) RETURNS text LANGUAGE sql AS
  $$SELECT string_agg(md5(g::text), '') FROM generate_series(1, n) g$$;
INSERT INTO k_w VALUES ('big', 1, k_noise(320));
-- compressible: a heap table keeps it compressed inline, and so does widecol
CREATE TABLE k_src (v text);
INSERT INTO k_src VALUES (repeat('x', 10000)), (repeat('y', 7000)), (k_noise(320));
SELECT pg_column_size(v) < 1000 AS compressed_in_heap, length(v) FROM k_src ORDER BY 2;
INSERT INTO k_w SELECT 'big', 2, v FROM k_src WHERE length(v) = 10000;
INSERT INTO k_w SELECT 'big', 3, v FROM k_src WHERE length(v) = 7000;
INSERT INTO k_w SELECT 'big', 6, v FROM k_src WHERE length(v) = 10240;
UPDATE k_w SET v = k_noise(290) WHERE p = 'big' AND c = 3;
\copy (SELECT 'big', 4, k_noise(290)) TO 'results/widecol_regress_keys.data'
\set SHOW_CONTEXT never
\copy k_w FROM 'results/widecol_regress_keys.data'
\set SHOW_CONTEXT errors
INSERT INTO k_w VALUES ('big', 5, repeat('x', 7900));
SELECT p, c, length(v), v = repeat('x', 10000) AS xs, v = k_noise(320) AS noise320,
       v = k_noise(290) AS noise290 FROM k_w WHERE p = 'big' ORDER BY c;
DROP FUNCTION k_noise(int);
DROP TABLE k_w, k_src;

---------------------------------------------------------------------------
-- Key order: SELECT * returns rows in (partition key, clustering key) order,
-- with the partition key in byte order.  Each table gets rows in level 0
-- and in a run (flushed), inserted in scrambled order.
---------------------------------------------------------------------------

-- Integers: negative values, extremes, ASC and DESC, multi-column
CREATE TABLE k_int (p int, c1 smallint, c2 bigint, v text) USING widecol
    WITH (widecol.partition_key = 'p', widecol.clustering_key = 'c1, c2 DESC');
INSERT INTO k_int
SELECT p, c1, c2, p || '/' || c1 || '/' || c2
  FROM unnest(ARRAY[2147483647, -1, 0, -2147483648, 1]) p,
       unnest(ARRAY[5, -32768, 0, 32767, -5]::smallint[]) c1,
       unnest(ARRAY[0, 9223372036854775807, -1, -9223372036854775808, 1]) c2
 WHERE (p::bigint + c1 + c2 % 7) % 2 = 0;
SELECT widecol.flush('k_int') > 0 AS flushed;
INSERT INTO k_int
SELECT p, c1, c2, p || '/' || c1 || '/' || c2
  FROM unnest(ARRAY[1, -2147483648, 0, -1, 2147483647]) p,
       unnest(ARRAY[-5, 32767, 0, -32768, 5]::smallint[]) c1,
       unnest(ARRAY[1, -9223372036854775808, -1, 9223372036854775807, 0]) c2
 WHERE (p::bigint + c1 + c2 % 7) % 2 <> 0;
SELECT count(*) FROM k_int;
SELECT (SELECT array_agg(v) FROM k_int) =
       (SELECT array_agg(v ORDER BY p, c1, c2 DESC) FROM k_int) AS in_key_order;
SELECT p, c1, c2 FROM k_int WHERE p = 0 AND c1 IN (-32768, 0, 32767);
SELECT p, min(pos), max(pos) FROM (SELECT p, row_number() OVER () AS pos FROM k_int) s GROUP BY p ORDER BY min(pos);
DROP TABLE k_int;

-- Text: byte order (C) in the clustering key, ASC and DESC; partition text
-- columns in byte order too, whatever their collation.
CREATE TABLE k_text (p text COLLATE "en-x-icu", c text COLLATE "C", d varchar(10) COLLATE "C", v int) USING widecol
    WITH (widecol.partition_key = 'p', widecol.clustering_key = 'c, d DESC');
INSERT INTO k_text VALUES ('b', 'ab', 'x', 1), ('B', 'a', 'x', 2), ('a', '', 'x', 3), ('A', 'a b', 'x', 4);
SELECT widecol.flush('k_text') > 0 AS flushed;
INSERT INTO k_text VALUES ('a', 'a', 'x', 5), ('a', 'B', 'x', 6), ('a', 'é', 'x', 7), ('a', 'z', 'x', 8),
                          ('a', 'a b', 'x', 9), ('a', 'ab', 'x', 10), ('a', 'a', 'y', 11), ('a', 'a', '', 12),
                          ('a', 'a', 'xx', 13), ('a', 'A', 'x', 14), ('a', 'Ä', 'x', 15), ('a', '日本', 'x', 16);
SELECT * FROM k_text;
-- partitions come back in byte order, not in the column's (en) order
SELECT array_agg(DISTINCT p ORDER BY p) AS en_order,
       array_agg(DISTINCT p COLLATE "C" ORDER BY p COLLATE "C") AS byte_order FROM k_text;
SELECT (SELECT array_agg(v) FROM k_text) =
       (SELECT array_agg(v ORDER BY p COLLATE "C", c, d DESC) FROM k_text) AS in_key_order;
DROP TABLE k_text;

-- Multi-column partition key: byte order of the concatenated encodings
CREATE TABLE k_mp (p1 text, p2 int, c int, v int) USING widecol
    WITH (widecol.partition_key = 'p1, p2', widecol.clustering_key = 'c');
INSERT INTO k_mp VALUES ('b', -1, 1, 1), ('a', 2, 1, 2), ('ab', -5, 1, 3), ('a', -3, 2, 4), ('a', -3, 1, 5), ('', 0, 1, 6);
SELECT * FROM k_mp;
DROP TABLE k_mp;

-- Dates and timestamps, including infinities and dates before 2000-01-01
CREATE TABLE k_time (d date, ts timestamp, tz timestamptz, v int) USING widecol
    WITH (widecol.partition_key = 'd', widecol.clustering_key = 'ts, tz DESC');
INSERT INTO k_time VALUES
  ('2025-01-02', '2025-01-02 10:00', '2025-01-02 10:00+00', 1),
  ('1999-12-31', '1999-12-31 23:59:59.999999', '1999-12-31 23:59:59.999999+00', 2),
  ('infinity', 'infinity', 'infinity', 3),
  ('-infinity', '-infinity', '-infinity', 4),
  ('2025-01-02', '2025-01-02 09:00', '2025-01-02 10:00+00', 5),
  ('2025-01-02', '2025-01-02 10:00', '2025-01-02 11:00+00', 6),
  ('2025-01-02', '2025-01-02 10:00', 'infinity', 7);
SELECT widecol.flush('k_time') > 0 AS flushed;
INSERT INTO k_time VALUES
  ('2000-01-01', '2000-01-01 00:00', '2000-01-01 00:00+00', 8),
  ('4713-01-01 BC', '4713-01-01 00:00 BC', '4713-01-01 00:00+00 BC', 9),
  ('2025-01-02', '1970-01-01 00:00', '2025-01-02 10:00+00', 10),
  ('2025-01-02', '2025-01-02 10:00', '-infinity', 11),
  ('2025-01-02', '2025-01-02 10:00', '2025-01-02 09:59:59.999999+00', 12);
SELECT v, d, ts FROM k_time;
SELECT (SELECT array_agg(v) FROM k_time) =
       (SELECT array_agg(v ORDER BY d, ts, tz DESC) FROM k_time) AS in_key_order;
DROP TABLE k_time;

-- uuid (byte order = uuid order), boolean (false < true), bytea
CREATE TABLE k_misc (b boolean, u uuid, x bytea, v int) USING widecol
    WITH (widecol.partition_key = 'b', widecol.clustering_key = 'u DESC, x');
INSERT INTO k_misc VALUES
  (true, '00000000-0000-0000-0000-000000000001', '\x01', 1),
  (false, 'ffffffff-ffff-ffff-ffff-ffffffffffff', '\x00', 2),
  (true, '80000000-0000-0000-0000-000000000000', '\x', 3),
  (false, '00000000-0000-0000-0000-000000000000', '\x0000', 4),
  (true, '7fffffff-ffff-ffff-ffff-ffffffffffff', '\xff', 5),
  (false, 'ffffffff-ffff-ffff-ffff-ffffffffffff', '\x', 6),
  (false, 'ffffffff-ffff-ffff-ffff-ffffffffffff', '\x0000', 7),
  (false, 'ffffffff-ffff-ffff-ffff-ffffffffffff', '\x01', 8),
  (false, 'ffffffff-ffff-ffff-ffff-ffffffffffff', '\x00ff', 9),
  (false, 'ffffffff-ffff-ffff-ffff-ffffffffffff', '\xff', 10),
  (false, 'ffffffff-ffff-ffff-ffff-ffffffffffff', '\x0001', 11),
  (false, 'ffffffff-ffff-ffff-ffff-ffffffffffff', '\x000000', 12);
SELECT * FROM k_misc;
SELECT (SELECT array_agg(v) FROM k_misc) =
       (SELECT array_agg(v ORDER BY b, u DESC, x) FROM k_misc) AS in_key_order;
DROP TABLE k_misc;

-- bytea and boolean DESC in the clustering key; bytea partition key
CREATE TABLE k_bytes (p bytea, x bytea, f boolean, v int) USING widecol
    WITH (widecol.partition_key = 'p', widecol.clustering_key = 'x DESC, f DESC');
INSERT INTO k_bytes
SELECT p, x, f, row_number() OVER ()
  FROM unnest(ARRAY['\x01', '\x00', '\x', '\x0000', '\x00ff']::bytea[]) p,
       unnest(ARRAY['\x00', '\x', '\x0000', '\x01', '\xff00', '\xff']::bytea[]) x,
       unnest(ARRAY[true, false]) f;
SELECT widecol.flush('k_bytes') > 0 AS flushed;
UPDATE k_bytes SET v = -v WHERE f;
SELECT p, x, f FROM k_bytes WHERE p = '\x00';
SELECT p, min(pos), max(pos) FROM (SELECT p, row_number() OVER () AS pos FROM k_bytes) s GROUP BY p ORDER BY min(pos);
SELECT (SELECT array_agg(v) FROM k_bytes) =
       (SELECT array_agg(v ORDER BY p, x DESC, f DESC) FROM k_bytes) AS in_key_order;
DROP TABLE k_bytes;
