-- Run shapes the two page streams of a run (key pages, value pages) must
-- handle, each compared with a heap copy and checked by widecol.verify():
-- keys much larger than tuples (many key pages wait for one value page),
-- tuples near the size limit (one per value page, a key page refers to up
-- to 32), a table of key columns only, a run of tombstones only.
CREATE FUNCTION rf_same(a regclass, b regclass) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE x text; y text;
BEGIN
  EXECUTE format('SELECT md5(string_agg(t::text, '','' ORDER BY t::text)) FROM %s t', a) INTO x;
  EXECUTE format('SELECT md5(string_agg(t::text, '','' ORDER BY t::text)) FROM %s t', b) INTO y;
  RETURN x IS NOT DISTINCT FROM y;
END $$;

-- big keys, small tuples
CREATE TABLE rf_bigkey_h (k text, c text, v int);
INSERT INTO rf_bigkey_h SELECT 'k' || (g % 3),
       (SELECT string_agg(md5((g * 100 + i)::text), '') FROM generate_series(1, 20) i), g
  FROM generate_series(1, 6000) g;
CREATE TABLE rf_bigkey (k text, c text COLLATE "C", v int) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
INSERT INTO rf_bigkey SELECT * FROM rf_bigkey_h;
SELECT count(*), sum(v), rf_same('rf_bigkey', 'rf_bigkey_h') AS same FROM rf_bigkey;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_bigkey');
SELECT count(*) FILTER (WHERE v % 1000 = 0) AS some_values FROM rf_bigkey WHERE k = 'k1';

-- tuples near the size limit
CREATE TABLE rf_wide_h (k int, c int, v text);
INSERT INTO rf_wide_h SELECT g % 4, g, (SELECT string_agg(md5((g * 1000 + i)::text), '') FROM generate_series(1, 230) i)
  FROM generate_series(1, 300) g;
CREATE TABLE rf_wide (k int, c int, v text) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
INSERT INTO rf_wide SELECT * FROM rf_wide_h;
SELECT count(*), sum(length(v)), rf_same('rf_wide', 'rf_wide_h') AS same FROM rf_wide;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_wide');
SELECT c, md5(v) = md5((SELECT v FROM rf_wide_h h WHERE h.c = w.c)) AS same
  FROM rf_wide w WHERE k = 2 ORDER BY c DESC LIMIT 3;

-- key columns only: every tuple is a header of NULLs
CREATE TABLE rf_keys_h (a int, b int);
INSERT INTO rf_keys_h SELECT g % 50, g FROM generate_series(1, 30000) g;
CREATE TABLE rf_keys (a int, b int) USING widecol WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b');
INSERT INTO rf_keys SELECT * FROM rf_keys_h;
SELECT count(*), sum(b), rf_same('rf_keys', 'rf_keys_h') AS same FROM rf_keys;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_keys');

-- a run of tombstones only (no value page), and the merge of it with the rows
CREATE TABLE rf_del (a int, b int, v text) USING widecol WITH (widecol.partition_key = 'a', widecol.clustering_key = 'b');
INSERT INTO rf_del SELECT g % 5, g, 'v' || g FROM generate_series(1, 3000) g;
DELETE FROM rf_del WHERE b % 2 = 0;
SELECT widecol.flush('rf_del') >= 0 AS flushed;	-- the DELETE wrote its tombstones as a run itself
SELECT nrows, ntombstones FROM widecol.runs('rf_del') ORDER BY run_id;
SELECT count(*), sum(b), count(v) FROM rf_del;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_del');
SELECT widecol.compact('rf_del', major => true) >= 0 AS compacted;
SELECT count(*), sum(b), count(v) FROM rf_del;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_del');


-- Run format 5: pages compressed with zstd (flushes and bulk writes at
-- widecol.ingest_zstd_level, compaction at widecol.compaction_zstd_level);
-- flushes and bulk writes write key pages with lz4 unless
-- widecol.ingest_key_codec = zstd, so runs mix codecs.
-- A run of format 4 (lz4 pages, as builds before wrote it; test-only
-- widecol.debug_run_format) next to runs of format 5: every column type,
-- NULLs, large values (compressed in line and out of line), rows with a
-- TTL, tombstones; read together, verified, compacted into format 5.
CREATE TABLE rf_z_h (k int, kt text, c bigint, cu uuid,
    b bool, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, n numeric, t text,
    vc varchar(30), ch char(5), by bytea, d date, ts timestamp, tz timestamptz,
    iv interval, j jsonb, a int[], ta text[], big text);
CREATE TABLE rf_z (LIKE rf_z_h) USING widecol
  WITH (widecol.partition_key = 'k, kt', widecol.clustering_key = 'c, cu');
CREATE FUNCTION rf_z_rows(lo int, hi int) RETURNS SETOF rf_z_h LANGUAGE sql AS $$
  SELECT g % 7, 'p' || (g % 3), g::bigint, md5(g::text)::uuid,
         CASE WHEN g % 5 = 0 THEN NULL ELSE g % 2 = 0 END,
         (g % 30000)::int2, CASE WHEN g % 11 = 0 THEN NULL ELSE g END, g::int8 * 1000003,
         g / 7.0::float4, g / 3.0::float8, g * 1.0001::numeric,
         CASE WHEN g % 13 = 0 THEN NULL ELSE md5(g::text) || repeat('x', g % 40) END,
         'vc' || g, 'c' || (g % 100), decode(md5(g::text), 'hex'),
         date '2025-01-01' + g % 400, timestamp '2025-01-01' + g * interval '1 min',
         timestamptz '2025-01-01 00:00+00' + g * interval '1 s', g * interval '1 ms',
         jsonb_build_object('g', g, 'h', md5(g::text)), ARRAY[g, g + 1, NULL],
         ARRAY['a' || g, NULL],
         CASE WHEN g % 500 = 0 THEN repeat(md5(g::text), 400)        -- 12.8 kB, compresses in line
              WHEN g % 500 = 1 THEN (SELECT string_agg(md5((g * 100 + i)::text), '')
                                       FROM generate_series(1, 400) i)   -- 12.8 kB of hex: out of line
              ELSE NULL END
    FROM generate_series(lo, hi) g $$;
INSERT INTO rf_z_h SELECT * FROM rf_z_rows(1, 6000);
SET ROLE NONE;  -- a superuser's setting
SET widecol.debug_run_format = 4;
RESET ROLE;
INSERT INTO rf_z SELECT * FROM rf_z_rows(1, 3000);
SET ROLE NONE;
RESET widecol.debug_run_format;
RESET ROLE;
INSERT INTO rf_z SELECT * FROM rf_z_rows(3001, 6000);
-- rows with a TTL (a run of their own, its key pages zstd too), updates of
-- rows of the format-4 run
SET widecol.ttl = '1d';
SET widecol.ingest_key_codec = zstd;
INSERT INTO rf_z SELECT * FROM rf_z_rows(6001, 6500);
RESET widecol.ingest_key_codec;
INSERT INTO rf_z_h SELECT * FROM rf_z_rows(6001, 6500);
RESET widecol.ttl;
UPDATE rf_z SET t = 'updated ' || c, big = NULL WHERE c % 1000 IN (0, 1, 2);
UPDATE rf_z_h SET t = 'updated ' || c, big = NULL WHERE c % 1000 IN (0, 1, 2);
-- tombstones, in a run of their own (a DELETE of many rows)
DELETE FROM rf_z WHERE c % 10 = 3;
DELETE FROM rf_z_h WHERE c % 10 = 3;
SELECT widecol.flush('rf_z') >= 0 AS flushed;
-- the format-4 run's pages are lz4; the other runs' value pages zstd, their
-- key pages lz4 but those of the TTL run, or stored as they are where lz4
-- does not shrink the packed rows by a sixteenth (index, bloom and
-- directory pages are never compressed)
SELECT dense_rank() OVER (ORDER BY run_id) AS run, kind, codec
  FROM widecol.run_pages('rf_z') WHERE kind IN ('key', 'value', 'value_columns') ORDER BY run, kind, codec;
SELECT count(*), rf_same('rf_z', 'rf_z_h') AS same FROM rf_z;
SELECT sum(out_of_line) > 0 AS some_out_of_line, sum(ntombstones) AS tombstones FROM widecol.runs('rf_z');
SELECT count(*) FILTER (WHERE widecol.ttl(tableoid, ctid) > interval '23 hours') AS with_ttl FROM rf_z;
SELECT c, t, length(big), md5(big) = (SELECT md5(big) FROM rf_z_h h WHERE h.c = z.c) AS same_big
  FROM rf_z z WHERE c IN (1000, 1500, 2501, 3501, 4001, 4500, 6001) ORDER BY c;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_z');
-- compaction reads both formats and writes format 5 with zstd pages (key
-- pages too with widecol.compaction_key_codec = zstd)
SET widecol.compaction_key_codec = zstd;
SELECT widecol.compact('rf_z', major => true) > 0 AS compacted;
RESET widecol.compaction_key_codec;
SELECT count(*) AS runs, sum(ntombstones) AS tombstones FROM widecol.runs('rf_z');
-- (a key page zstd does not shrink by a sixteenth is stored as it is; how
-- much it shrinks depends on the rows' write times, so some may be)
SELECT DISTINCT kind, codec FROM widecol.run_pages('rf_z')
  WHERE kind IN ('key', 'value', 'value_columns') AND codec <> 'none' ORDER BY 1, 2;
SELECT count(*), rf_same('rf_z', 'rf_z_h') AS same FROM rf_z;
SELECT count(*) FILTER (WHERE widecol.ttl(tableoid, ctid) > interval '23 hours') AS with_ttl FROM rf_z;
SELECT c, t, length(big), md5(big) = (SELECT md5(big) FROM rf_z_h h WHERE h.c = z.c) AS same_big
  FROM rf_z z WHERE c IN (1000, 1500, 2501, 3501, 4001, 4500, 6001) ORDER BY c;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_z');
-- zstd at a positive level on ingest, and compaction back to lz4 (format 5
-- runs may hold either; its key pages here are stored as they are)
SET widecol.ingest_zstd_level = 3;
INSERT INTO rf_z SELECT * FROM rf_z_rows(6501, 7000);
INSERT INTO rf_z_h SELECT * FROM rf_z_rows(6501, 7000);
RESET widecol.ingest_zstd_level;
SELECT count(*), rf_same('rf_z', 'rf_z_h') AS same FROM rf_z;
SET widecol.compaction_zstd_level = 0;
SELECT widecol.compact('rf_z', major => true) > 0 AS compacted;
RESET widecol.compaction_zstd_level;
SELECT kind, codec FROM widecol.run_pages('rf_z') WHERE kind IN ('key', 'value', 'value_columns') ORDER BY 1, 2;
SELECT count(*), rf_same('rf_z', 'rf_z_h') AS same FROM rf_z;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_z');
-- zstd packs image-like rows (a hex content hash, a uuid) tighter than
-- lz4: entropy coding; the value pages hold the same bytes.  By default
-- only the value pages of a COPY's runs are zstd.
CREATE TABLE rf_z_lz4 (k int, c int, id uuid, hash text) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
CREATE TABLE rf_z_zstd (LIKE rf_z_lz4) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
SET widecol.ingest_zstd_level = 0;
INSERT INTO rf_z_lz4 SELECT g % 10, g, md5(g::text)::uuid, md5((-g)::text) || md5((g * 7)::text)
  FROM generate_series(1, 20000) g;
RESET widecol.ingest_zstd_level;
CREATE TABLE rf_z_mixed (LIKE rf_z_lz4) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
INSERT INTO rf_z_mixed SELECT * FROM rf_z_lz4;
SET widecol.ingest_key_codec = zstd;
INSERT INTO rf_z_zstd SELECT * FROM rf_z_lz4;
RESET widecol.ingest_key_codec;
SELECT kind, codec FROM widecol.run_pages('rf_z_mixed') WHERE kind IN ('key', 'value', 'value_columns') ORDER BY 1, 2;
SELECT kind, codec FROM widecol.run_pages('rf_z_zstd') WHERE kind IN ('key', 'value', 'value_columns') ORDER BY 1, 2;
SELECT (SELECT sum(stored_bytes) FROM widecol.run_pages('rf_z_zstd') WHERE kind IN ('key', 'value', 'value_columns')) <
       0.75 * (SELECT sum(stored_bytes) FROM widecol.run_pages('rf_z_lz4') WHERE kind IN ('key', 'value', 'value_columns'))
       AS zstd_under_three_quarters_of_lz4;
SELECT (SELECT sum(raw_bytes) FROM widecol.run_pages('rf_z_zstd') WHERE kind IN ('value', 'value_columns')) =
       (SELECT sum(raw_bytes) FROM widecol.run_pages('rf_z_lz4') WHERE kind IN ('value', 'value_columns')) AS same_value_bytes;
SELECT (SELECT sum(stored_bytes) FROM widecol.run_pages('rf_z_mixed') WHERE kind IN ('key', 'value', 'value_columns'))
       BETWEEN (SELECT sum(stored_bytes) FROM widecol.run_pages('rf_z_zstd') WHERE kind IN ('key', 'value', 'value_columns'))
       AND (SELECT sum(stored_bytes) FROM widecol.run_pages('rf_z_lz4') WHERE kind IN ('key', 'value', 'value_columns'))
       AS mixed_between;
SELECT rf_same('rf_z_zstd', 'rf_z_lz4') AS same, rf_same('rf_z_mixed', 'rf_z_lz4') AS same_mixed;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_z_mixed');
-- by default compaction writes key pages lz4 and value pages zstd (every
-- seek decodes a key page); rows and verify unchanged
SELECT widecol.compact('rf_z_zstd', major => true) > 0 AS compacted;
SELECT kind, codec FROM widecol.run_pages('rf_z_zstd') WHERE kind IN ('key', 'value', 'value_columns') ORDER BY 1, 2;
SELECT rf_same('rf_z_zstd', 'rf_z_lz4') AS same, bool_and(ok) AS verified FROM widecol.verify('rf_z_zstd');
-- Bloom pages of checked blocks (run format 7: a key's probes in one
-- 64-byte block with its own checksum, probed in the shared buffer) next to
-- a run of format 6 (probes spread over the page): seeks by partition
-- through both, absent partitions rejected by both, verify, and a major
-- compaction that rewrites both as format 7.
CREATE TABLE rf_bloom (k int, c int, v text) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
SET ROLE NONE;
SET widecol.debug_run_format = 6;
RESET ROLE;
INSERT INTO rf_bloom SELECT g * 4, 1, 'six-' || g FROM generate_series(1, 4000) g;
SET ROLE NONE;
RESET widecol.debug_run_format;
RESET ROLE;
INSERT INTO rf_bloom SELECT g * 4 + 2, 1, 'seven-' || g FROM generate_series(1, 4000) g;
SELECT count(*) AS runs, sum(nrows) AS versions FROM widecol.runs('rf_bloom');
SET enable_seqscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT bloom_checks AS c0, bloom_negatives AS n0 FROM widecol.row_stats('rf_bloom') \gset
SELECT count(*) AS found, count(*) FILTER (WHERE v = 'six-' || g / 4) AS six,
       count(*) FILTER (WHERE v = 'seven-' || (g - 2) / 4) AS seven
  FROM generate_series(1, 16002) g JOIN rf_bloom ON k = g;
-- the odd keys are in neither run: (about) every probe rejected
SELECT count(*) AS absent FROM generate_series(1, 16001, 2) g JOIN rf_bloom ON k = g;
-- (8,000 probes find their partition; fewer than 100 pass without it)
SELECT bloom_checks - :c0 > 47000 AS probed,
       (bloom_checks - :c0) - (bloom_negatives - :n0) - 8000 < 100 AS few_false_positives
  FROM widecol.row_stats('rf_bloom');
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_bloom');
SELECT widecol.compact('rf_bloom', major => true) > 0 AS compacted;
SELECT count(*) AS found FROM generate_series(1, 16002) g JOIN rf_bloom ON k = g;
SELECT count(*) AS absent FROM generate_series(1, 16001, 2) g JOIN rf_bloom ON k = g;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_bloom');
RESET enable_seqscan;
RESET enable_hashjoin;
RESET enable_mergejoin;
DROP TABLE rf_bloom;
-- the same through a partitioned table of widecol partitions with a bigint
-- partition key, looked up with int literals: a present key is found in
-- its partition, an absent one rejected by the bloom filters of both runs
-- of each partition it is pruned to
CREATE TABLE rf_bloom_p (k bigint, part int, v text) PARTITION BY LIST (part);
CREATE TABLE rf_bloom_p1 PARTITION OF rf_bloom_p FOR VALUES IN (1) USING widecol
  WITH (widecol.partition_key = 'k');
CREATE TABLE rf_bloom_p2 PARTITION OF rf_bloom_p FOR VALUES IN (2) USING widecol
  WITH (widecol.partition_key = 'k');
INSERT INTO rf_bloom_p SELECT g * 4, 1 + g % 2, 'a' || g FROM generate_series(1, 3000) g;
INSERT INTO rf_bloom_p SELECT g * 4 + 2, 1 + g % 2, 'b' || g FROM generate_series(1, 3000) g;
SELECT count(*) AS runs FROM widecol.runs('rf_bloom_p1');
SELECT v FROM rf_bloom_p WHERE k = 4000;
SELECT v FROM rf_bloom_p WHERE k = 4002 AND part = 1;
SELECT bloom_negatives AS n0 FROM widecol.row_stats('rf_bloom_p1') \gset
SELECT count(*) AS absent FROM rf_bloom_p WHERE k = 4001 AND part = 1;
SELECT bloom_negatives - :n0 AS rejected FROM widecol.row_stats('rf_bloom_p1');
DROP TABLE rf_bloom_p;
-- the debug setting is for superusers only
SET widecol.debug_run_format = 4;
DROP FUNCTION rf_z_rows(int, int);
DROP TABLE rf_z, rf_z_h, rf_z_lz4, rf_z_zstd, rf_z_mixed;

-- Bulk writes sort their rows by a 24-byte abbreviation of the key, one
-- byte at a time (radix), and finish groups that are small or equal in all
-- 24 bytes by comparing whole rows: keys sharing more than 24 bytes, keys
-- shorter than 8 and prefixes of one another (the empty string too),
-- negative bigints in DESC order (bytes 0x00 and 0xff), the same key twice
-- in one statement or file (the later version wins).  INSERT ... SELECT and
-- COPY, and a COPY into a table with an AFTER ROW trigger (batches sorted
-- with their TIDs, which the trigger reads the rows by).
CREATE TABLE rf_sort_h (k text COLLATE "C", c bigint, v int);
INSERT INTO rf_sort_h
  SELECT 'a partition key sharing more than 24 bytes ' || (g % 41), (g * 7919) % 100003 - 50000, g
    FROM generate_series(1, 20000) g
  UNION ALL
  SELECT repeat('z', g % 9), -1000003::bigint * g, g FROM generate_series(1, 3000) g;
CREATE TABLE rf_sort (k text COLLATE "C", c bigint, v int) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c DESC');
INSERT INTO rf_sort
  SELECT k, c, v FROM (SELECT k, c, -v AS v, 1 AS o FROM rf_sort_h
                       UNION ALL SELECT k, c, v, 2 FROM rf_sort_h ORDER BY o) s;
SELECT count(*) AS runs FROM widecol.runs('rf_sort');
SELECT count(*), rf_same('rf_sort', 'rf_sort_h') AS same FROM rf_sort;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_sort');
-- every key found by a seek, and a partition read in clustering order
SET enable_seqscan = off;
SELECT count(*) AS found FROM rf_sort_h h WHERE (SELECT v FROM rf_sort w WHERE w.k = h.k AND w.c = h.c) = h.v;
RESET enable_seqscan;
SELECT string_agg(c::text, ',') AS newest_first FROM (SELECT c FROM rf_sort WHERE k = 'zzz' LIMIT 4) s;
SELECT string_agg(c::text, ',') AS expected FROM (SELECT c FROM rf_sort_h WHERE k = 'zzz' ORDER BY c DESC LIMIT 4) s;
-- an int literal against the bigint clustering column
SELECT v FROM rf_sort WHERE k = 'zzz' AND c = -3000009;
-- COPY of the same rows (each twice, the later line wins), then into a
-- table whose AFTER ROW trigger checks it can read each row by its TID
CREATE TABLE rf_sort_file AS
  SELECT row_number() OVER (ORDER BY o, h.v DESC, k, c) AS n, k, c, CASE WHEN o = 1 THEN -h.v ELSE h.v END AS v
    FROM rf_sort_h h, generate_series(1, 2) o;
\copy (SELECT k, c, v FROM rf_sort_file ORDER BY n) TO 'results/widecol_rf_sort.csv'
CREATE TABLE rf_sort_copy (LIKE rf_sort) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c DESC');
-- a COPY failing on its last line writes nothing; the good file then all
\copy (SELECT k, c::text, v::text FROM rf_sort_file UNION ALL SELECT 'zz', '1', 'not a number') TO 'results/widecol_rf_sort_bad.csv'
\copy rf_sort_copy FROM 'results/widecol_rf_sort_bad.csv'
SELECT count(*) AS after_failed_copy FROM rf_sort_copy;
\copy rf_sort_copy FROM 'results/widecol_rf_sort.csv'
SELECT count(*), rf_same('rf_sort_copy', 'rf_sort_h') AS same FROM rf_sort_copy;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_sort_copy');
-- the same file through a partitioned parent of two widecol partitions
CREATE TABLE rf_sort_p (k text COLLATE "C", c bigint, v int) PARTITION BY RANGE (k);
CREATE TABLE rf_sort_p1 PARTITION OF rf_sort_p FOR VALUES FROM (MINVALUE) TO ('b') USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c DESC');
CREATE TABLE rf_sort_p2 PARTITION OF rf_sort_p FOR VALUES FROM ('b') TO (MAXVALUE) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c DESC');
\copy rf_sort_p FROM 'results/widecol_rf_sort.csv'
SELECT count(*), rf_same('rf_sort_p', 'rf_sort_h') AS same FROM rf_sort_p;
SELECT (SELECT count(*) FROM rf_sort_p1) AS p1, (SELECT count(*) FROM rf_sort_p2) AS p2;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_sort_p1');
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_sort_p2');
SELECT v FROM rf_sort_p WHERE k = 'zzz' AND c = -3000009;
CREATE TABLE rf_sort_trig (LIKE rf_sort) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c DESC');
CREATE TABLE rf_sort_seen (n bigserial, k text COLLATE "C", c bigint, v int);
CREATE FUNCTION rf_sort_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO rf_sort_seen (k, c, v) VALUES (NEW.k, NEW.c, NEW.v);
  RETURN NULL;
END $$;
CREATE TRIGGER rf_sort_note AFTER INSERT ON rf_sort_trig FOR EACH ROW EXECUTE FUNCTION rf_sort_note();
\copy rf_sort_trig FROM 'results/widecol_rf_sort.csv'
-- the trigger saw each line's own version, in the file's order
SELECT count(*) AS seen,
       count(*) FILTER (WHERE (s.k, s.c, s.v) = (f.k, f.c, f.v)) AS as_in_the_file
  FROM rf_sort_seen s LEFT JOIN rf_sort_file f USING (n);
SELECT count(*), rf_same('rf_sort_trig', 'rf_sort_h') AS same FROM rf_sort_trig;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_sort_trig');
DROP TABLE rf_sort, rf_sort_h, rf_sort_file, rf_sort_copy, rf_sort_p, rf_sort_trig, rf_sort_seen;
DROP FUNCTION rf_sort_note();

-- Run format 10: key blocks packed (storage/keypack.c: a row's header as
-- what differs from the row before it, its key as the bytes it does not
-- share with the previous key; offsets implied).  A run of format 9
-- (test-only widecol.debug_run_format = 9: rows as laid out in memory)
-- next to runs of format 10 whose rows vary in every packed field: a bulk
-- write (one transaction), single-row statements of several transactions
-- and commands flushed together (xid, cid), rows with a TTL (expire_at),
-- tombstones (flags), keys of varying lengths sharing prefixes, partition
-- keys of varying length (pklen); read together against a heap copy,
-- looked up by key, verified, compacted into format 10.
CREATE TABLE rf_pk_h (k text COLLATE "C", c text COLLATE "C", n bigint, v text);
CREATE TABLE rf_pk (LIKE rf_pk_h) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c, n');
CREATE TABLE rf_pk9 (LIKE rf_pk_h) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c, n');
CREATE FUNCTION rf_pk_rows(lo int, hi int) RETURNS SETOF rf_pk_h LANGUAGE sql AS $$
  SELECT repeat('p', 1 + g % 5) || (g % 7), 'c' || repeat('x', g % 13) || g, g::bigint * -7,
         CASE WHEN g % 9 = 0 THEN NULL WHEN g % 4 = 0 THEN '' ELSE md5(g::text) END
    FROM generate_series(lo, hi) g $$;
INSERT INTO rf_pk_h SELECT * FROM rf_pk_rows(1, 6000);
SET ROLE NONE;
SET widecol.debug_run_format = 9;
RESET ROLE;
INSERT INTO rf_pk SELECT * FROM rf_pk_rows(1, 3000);
INSERT INTO rf_pk9 SELECT * FROM rf_pk_h;
SET ROLE NONE;
RESET widecol.debug_run_format;
RESET ROLE;
INSERT INTO rf_pk SELECT * FROM rf_pk_rows(3001, 6000);
-- the same rows packed take fewer key bytes (values unchanged)
CREATE TABLE rf_pk10 (LIKE rf_pk_h) USING widecol
  WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c, n');
INSERT INTO rf_pk10 SELECT * FROM rf_pk_h;
SELECT (SELECT sum(stored_bytes) FROM widecol.run_pages('rf_pk10') WHERE kind = 'key') <
       0.85 * (SELECT sum(stored_bytes) FROM widecol.run_pages('rf_pk9') WHERE kind = 'key')
       AS packed_keys_smaller,
       (SELECT sum(raw_bytes) FROM widecol.run_pages('rf_pk10') WHERE kind LIKE 'value%') =
       (SELECT sum(raw_bytes) FROM widecol.run_pages('rf_pk9') WHERE kind LIKE 'value%') AS same_values,
       rf_same('rf_pk10', 'rf_pk9') AS same;
-- single-row statements: two transactions of several commands, a TTL
SET widecol.ttl = '2d';
BEGIN;
INSERT INTO rf_pk VALUES ('p1', 'single a', 1, 'one');
INSERT INTO rf_pk VALUES ('pppp3', 'single b', 2, NULL);
UPDATE rf_pk SET v = 'updated' WHERE k = 'pp1' AND c = 'cx1' AND n = -7;
COMMIT;
RESET widecol.ttl;
BEGIN;
INSERT INTO rf_pk VALUES ('', '', 0, 'empty keys');
UPDATE rf_pk SET v = 'updated too' WHERE k = 'ppp5' AND c = 'cxxxxxxxxxxxx12' AND n = -84;
DELETE FROM rf_pk WHERE k = 'ppppp4' AND c = 'c' || repeat('x', 4) || '4' AND n = -28;
COMMIT;
INSERT INTO rf_pk_h VALUES ('p1', 'single a', 1, 'one'), ('pppp3', 'single b', 2, NULL), ('', '', 0, 'empty keys');
UPDATE rf_pk_h SET v = 'updated' WHERE k = 'pp1' AND c = 'cx1' AND n = -7;
UPDATE rf_pk_h SET v = 'updated too' WHERE k = 'ppp5' AND c = 'cxxxxxxxxxxxx12' AND n = -84;
DELETE FROM rf_pk_h WHERE k = 'ppppp4' AND c = 'c' || repeat('x', 4) || '4' AND n = -28;
SELECT widecol.flush('rf_pk') > 0 AS flushed;
-- tombstones, in a run of their own
DELETE FROM rf_pk WHERE n % 11 = 0 AND n <> 0;
DELETE FROM rf_pk_h WHERE n % 11 = 0 AND n <> 0;
SELECT count(*) AS runs, sum(ntombstones) AS tombstones FROM widecol.runs('rf_pk');
SELECT count(*), rf_same('rf_pk', 'rf_pk_h') AS same FROM rf_pk;
SELECT count(*) FILTER (WHERE widecol.ttl(tableoid, ctid) > interval '47 hours') AS with_ttl FROM rf_pk;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_pk');
-- every 5th row by its whole key, through seeks
SET enable_seqscan = off;
SELECT count(*) AS rows, count(*) FILTER (WHERE (SELECT w.v FROM rf_pk w WHERE w.k = h.k AND w.c = h.c AND w.n = h.n)
                                     IS NOT DISTINCT FROM h.v) AS found
  FROM rf_pk_h h WHERE n % 5 = 0;
SELECT k, c, n, v FROM rf_pk WHERE k = '' AND c = '' AND n = 0;
RESET enable_seqscan;
-- compaction keeps every version's write time (unpacked from both formats, packed again)
CREATE TEMP TABLE rf_pk_wt AS SELECT k, c, n, widecol.writetime(tableoid, ctid) AS wt FROM rf_pk;
SELECT widecol.compact('rf_pk', major => true) > 0 AS compacted;
SELECT count(*) AS rows, count(*) FILTER (WHERE widecol.writetime(w.tableoid, w.ctid) = t.wt) AS same_write_time
  FROM rf_pk w JOIN rf_pk_wt t USING (k, c, n);
SELECT count(*) AS runs, sum(ntombstones) AS tombstones FROM widecol.runs('rf_pk');
SELECT count(*), rf_same('rf_pk', 'rf_pk_h') AS same FROM rf_pk;
SELECT count(*) FILTER (WHERE widecol.ttl(tableoid, ctid) > interval '47 hours') AS with_ttl FROM rf_pk;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_pk');
DROP FUNCTION rf_pk_rows(int, int);
DROP TABLE rf_pk, rf_pk9, rf_pk10, rf_pk_h, rf_pk_wt;

-- Packed key blocks a codec barely shrinks (random uuid keys: packing has
-- taken what lz4 would find) are stored as they are and unpacked straight
-- from the page; keys lz4 still shrinks by a sixteenth stay lz4.  A read
-- with an upper bound (a lookup by key, a clustering range) lays out a key
-- page only up to the first step of rows past the bound, and one seeking a
-- key only from the step before the key's (storage/keypack.c
-- wc_keys_unpack): every key looked up at every position of its page,
-- ranges ending and starting anywhere in a page, partitions spanning pages,
-- as the heap copy has them.
CREATE TABLE rf_kb_h (id uuid, c uuid, v text, PRIMARY KEY (id, c));
INSERT INTO rf_kb_h SELECT md5('kb' || (g % 4000))::uuid, md5(g::text)::uuid, repeat('v', g % 17)
  FROM generate_series(1, 12000) g;
CREATE TABLE rf_kb (id uuid, c uuid, v text) USING widecol
  WITH (widecol.partition_key = 'id', widecol.clustering_key = 'c');
CREATE TABLE rf_kb_rep_h (id uuid, c int, v text, PRIMARY KEY (id, c));
INSERT INTO rf_kb_rep_h SELECT md5('kb' || (g % 7))::uuid, g, 'v' || g FROM generate_series(1, 12000) g;
CREATE TABLE rf_kb_rep (id uuid, c int, v text) USING widecol
  WITH (widecol.partition_key = 'id', widecol.clustering_key = 'c');
INSERT INTO rf_kb SELECT * FROM rf_kb_h;
INSERT INTO rf_kb_rep SELECT * FROM rf_kb_rep_h;
-- the same rows in run format 10 (test-only widecol.debug_run_format = 10:
-- packed key blocks not in steps, followed row by row up to a key): read
-- as before; format 11's steps cost a few key bytes (a table entry and a
-- first row predicted from the block's first: under 16 bytes a step of 32
-- rows; these keys pack to 2-3 bytes a row, uuid keys to about 20)
CREATE TABLE rf_kb_rep10 (id uuid, c int, v text) USING widecol
  WITH (widecol.partition_key = 'id', widecol.clustering_key = 'c');
SET ROLE NONE;
SET widecol.debug_run_format = 10;
RESET ROLE;
INSERT INTO rf_kb_rep10 SELECT * FROM rf_kb_rep_h;
SET ROLE NONE;
RESET widecol.debug_run_format;
RESET ROLE;
SELECT k11.bytes > k10.bytes AS steps_cost_bytes,
       k11.bytes - k10.bytes < 16 * 12000 / 32 AS under_16_bytes_a_step
  FROM (SELECT sum(stored_bytes) AS bytes FROM widecol.run_pages('rf_kb_rep') WHERE kind = 'key') k11,
       (SELECT sum(stored_bytes) AS bytes FROM widecol.run_pages('rf_kb_rep10') WHERE kind = 'key') k10;
SELECT widecol.compact('rf_kb', major => true) > 0 AS compacted;
SELECT codec, sum(pages) > 30 AS many_pages FROM widecol.run_pages('rf_kb') WHERE kind = 'key' GROUP BY 1;
SELECT codec, sum(pages) > 10 AS many_pages FROM widecol.run_pages('rf_kb_rep') WHERE kind = 'key' GROUP BY 1;
SET enable_seqscan = off;
-- every partition by its key, through a seek
SELECT count(*) AS partitions,
       count(*) FILTER (WHERE (SELECT string_agg(w.c || w.v, ',' ORDER BY w.c) FROM rf_kb w WHERE w.id = h.id) =
                              (SELECT string_agg(x.c || x.v, ',' ORDER BY x.c) FROM rf_kb_h x WHERE x.id = h.id)) AS same
  FROM (SELECT DISTINCT id FROM rf_kb_h) h;
-- clustering ranges ending at each row of a partition, both bounds
SELECT count(*) AS ranges,
       count(*) FILTER (WHERE (SELECT count(*) FROM rf_kb w WHERE w.id = h.id AND w.c <= h.c) =
                              (SELECT count(*) FROM rf_kb_h x WHERE x.id = h.id AND x.c <= h.c)
                          AND (SELECT max(w.c::text) FROM rf_kb w WHERE w.id = h.id AND w.c < h.c) IS NOT DISTINCT FROM
                              (SELECT max(x.c::text) FROM rf_kb_h x WHERE x.id = h.id AND x.c < h.c)
                          AND (SELECT min(w.c::text) FROM rf_kb w WHERE w.id = h.id AND w.c > h.c) IS NOT DISTINCT FROM
                              (SELECT min(x.c::text) FROM rf_kb_h x WHERE x.id = h.id AND x.c > h.c)) AS same
  FROM rf_kb_h h;
-- partitions of 1,714 rows, each spanning key pages: whole, backward, ranges
SELECT count(*) AS partitions,
       count(*) FILTER (WHERE (SELECT string_agg(w.c::text, ',' ORDER BY w.c DESC) FROM rf_kb_rep w WHERE w.id = h.id) =
                              (SELECT string_agg(x.c::text, ',' ORDER BY x.c DESC) FROM rf_kb_rep_h x WHERE x.id = h.id)
                          AND (SELECT string_agg(w.v, ',' ORDER BY w.c) FROM rf_kb_rep w WHERE w.id = h.id) =
                              (SELECT string_agg(x.v, ',' ORDER BY x.c) FROM rf_kb_rep_h x WHERE x.id = h.id)) AS same
  FROM (SELECT DISTINCT id FROM rf_kb_rep_h) h;
SELECT count(*) AS ranges,
       count(*) FILTER (WHERE (SELECT count(*) FROM rf_kb_rep w WHERE w.id = h.id AND w.c BETWEEN h.c - 500 AND h.c) =
                              (SELECT count(*) FROM rf_kb_rep_h x WHERE x.id = h.id AND x.c BETWEEN h.c - 500 AND h.c)) AS same
  FROM rf_kb_rep_h h WHERE c % 37 = 0;
-- ranges starting at each row: a read seeking a key inside a key page
-- follows the rows before the step of rows holding it without laying them
-- out; the first rows at and after the key, as the heap copy has them
SELECT count(*) AS ranges,
       count(*) FILTER (WHERE (SELECT string_agg(s.c || s.v, ',') FROM (SELECT w.c, w.v FROM rf_kb_rep w WHERE w.id = h.id AND w.c >= h.c ORDER BY w.c LIMIT 40) s) =
                              (SELECT string_agg(s.c || s.v, ',') FROM (SELECT x.c, x.v FROM rf_kb_rep_h x WHERE x.id = h.id AND x.c >= h.c ORDER BY x.c LIMIT 40) s)
                          AND (SELECT string_agg(s.c::text, ',') FROM (SELECT w.c FROM rf_kb_rep w WHERE w.id = h.id AND w.c > h.c ORDER BY w.c LIMIT 3) s) IS NOT DISTINCT FROM
                              (SELECT string_agg(s.c::text, ',') FROM (SELECT x.c FROM rf_kb_rep_h x WHERE x.id = h.id AND x.c > h.c ORDER BY x.c LIMIT 3) s)) AS same
  FROM rf_kb_rep_h h;
SELECT count(*) AS ranges,
       count(*) FILTER (WHERE (SELECT string_agg(s.c || s.v, ',') FROM (SELECT w.c, w.v FROM rf_kb_rep10 w WHERE w.id = h.id AND w.c >= h.c ORDER BY w.c LIMIT 40) s) =
                              (SELECT string_agg(s.c || s.v, ',') FROM (SELECT x.c, x.v FROM rf_kb_rep_h x WHERE x.id = h.id AND x.c >= h.c ORDER BY x.c LIMIT 40) s)) AS same_format_10
  FROM rf_kb_rep_h h WHERE c % 3 = 0;
-- each row by its whole key, and the key after it (a row of another
-- partition: missing from this one, between two of its rows): a lookup
-- follows the rows before its key without laying them out and lays out
-- up to the first row past it (keypack.c skip_below, lay_out's exact_hi)
SELECT count(*) AS lookups,
       count(*) FILTER (WHERE (SELECT string_agg(w.c || w.v, ',') FROM rf_kb_rep w WHERE w.id = h.id AND w.c = h.c) = h.c || h.v
                          AND NOT EXISTS (SELECT 1 FROM rf_kb_rep w WHERE w.id = h.id AND w.c = h.c + 1)
                          AND (SELECT string_agg(w.c || w.v, ',') FROM rf_kb_rep10 w WHERE w.id = h.id AND w.c = h.c) = h.c || h.v
                          AND NOT EXISTS (SELECT 1 FROM rf_kb_rep10 w WHERE w.id = h.id AND w.c = h.c + 1)) AS same
  FROM rf_kb_rep_h h;
-- the first n rows of each partition (LIMIT n): a read laid out a step of
-- rows at first and asks for more as it reads on (a step, then twice as
-- many each time), across the key pages a partition spans
SELECT n, count(*) AS partitions,
       count(*) FILTER (WHERE (SELECT string_agg(s.c || s.v, ',') FROM (SELECT w.c, w.v FROM rf_kb_rep w WHERE w.id = h.id ORDER BY w.c LIMIT n) s) =
                              (SELECT string_agg(s.c || s.v, ',') FROM (SELECT x.c, x.v FROM rf_kb_rep_h x WHERE x.id = h.id ORDER BY x.c LIMIT n) s)) AS same
  FROM (SELECT DISTINCT id FROM rf_kb_rep_h) h, unnest(ARRAY[1, 31, 32, 33, 64, 97, 200, 500, 1000, 2000]) n
 GROUP BY n ORDER BY n;
SELECT n, count(*) FILTER (WHERE (SELECT string_agg(s.c || s.v, ',') FROM (SELECT w.c, w.v FROM rf_kb_rep10 w WHERE w.id = h.id ORDER BY w.c LIMIT n) s) =
                                 (SELECT string_agg(s.c || s.v, ',') FROM (SELECT x.c, x.v FROM rf_kb_rep_h x WHERE x.id = h.id ORDER BY x.c LIMIT n) s)) AS same_format_10
  FROM (SELECT DISTINCT id FROM rf_kb_rep_h) h, unnest(ARRAY[1, 33, 500, 2000]) n
 GROUP BY n ORDER BY n;
RESET enable_seqscan;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_kb');
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_kb_rep');
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_kb_rep10');
DROP TABLE rf_kb, rf_kb_h, rf_kb_rep, rf_kb_rep10, rf_kb_rep_h;
-- 40 versions of each of 30 keys in one run (one transaction's updates,
-- flushed): a step of rows starts inside each key's versions, and a lookup
-- must still meet the newest, the first of them
CREATE TABLE rf_kv (id int, v int) USING widecol WITH (widecol.partition_key = 'id');
BEGIN;
INSERT INTO rf_kv SELECT g, 0 FROM generate_series(1, 3000) g;
DO $$ BEGIN FOR i IN 1..40 LOOP UPDATE rf_kv SET v = v + 1 WHERE id % 100 = 7; END LOOP; END $$;
COMMIT;
SELECT widecol.flush('rf_kv') AS flushed;
SELECT nrows FROM widecol.runs('rf_kv') ORDER BY run_id;
SET enable_seqscan = off;
SELECT count(*) AS keys,
       count(*) FILTER (WHERE (SELECT v FROM rf_kv w WHERE w.id = g) = CASE WHEN g % 100 = 7 THEN 40 ELSE 0 END) AS newest
  FROM generate_series(1, 3000) g;
RESET enable_seqscan;
DROP TABLE rf_kv;
-- a seek copies its leaf's key page numbers as it reads on, 32 at a time
-- (runread.c leaf_child): partitions spanning more than 40 key pages,
-- read forward and backward from a seek and from keys inside them
CREATE TABLE rf_lw_h (id int, c text COLLATE "C", v int, PRIMARY KEY (id, c));
INSERT INTO rf_lw_h SELECT g % 3, md5(g::text) || md5((g + 1)::text) || md5((g + 2)::text), g
  FROM generate_series(1, 9000) g;
CREATE TABLE rf_lw (id int, c text COLLATE "C", v int) USING widecol
  WITH (widecol.partition_key = 'id', widecol.clustering_key = 'c');
INSERT INTO rf_lw SELECT * FROM rf_lw_h;
SELECT widecol.compact('rf_lw', major => true) > 0 AS compacted;
SELECT sum(pages) > 3 * 40 AS over_40_key_pages_a_partition FROM widecol.run_pages('rf_lw') WHERE kind = 'key';
SET enable_seqscan = off;
SELECT i AS id,
       (SELECT string_agg(w.v::text, ',' ORDER BY w.c) FROM rf_lw w WHERE w.id = i) =
       (SELECT string_agg(x.v::text, ',' ORDER BY x.c) FROM rf_lw_h x WHERE x.id = i) AS forward,
       (SELECT string_agg(s.v::text, ',') FROM (SELECT w.v FROM rf_lw w WHERE w.id = i ORDER BY w.c DESC) s) =
       (SELECT string_agg(s.v::text, ',') FROM (SELECT x.v FROM rf_lw_h x WHERE x.id = i ORDER BY x.c DESC) s) AS backward
  FROM generate_series(0, 2) i;
SELECT count(*) AS ranges,
       count(*) FILTER (WHERE (SELECT sum(w.v) FROM rf_lw w WHERE w.id = h.id AND w.c >= h.c) =
                              (SELECT sum(x.v) FROM rf_lw_h x WHERE x.id = h.id AND x.c >= h.c)
                          AND (SELECT string_agg(s.v::text, ',') FROM (SELECT w.v FROM rf_lw w WHERE w.id = h.id AND w.c <= h.c ORDER BY w.c DESC LIMIT 50) s) =
                              (SELECT string_agg(s.v::text, ',') FROM (SELECT x.v FROM rf_lw_h x WHERE x.id = h.id AND x.c <= h.c ORDER BY x.c DESC LIMIT 50) s)) AS same
  FROM rf_lw_h h WHERE v % 97 = 0;
RESET enable_seqscan;
DROP TABLE rf_lw, rf_lw_h;
-- the same bounded reads through a partitioned parent of two widecol
-- partitions, a bigint key sought by int literals and parameters, some rows
-- with values stored out of line
CREATE TABLE rf_kp (id bigint, c uuid, v text) PARTITION BY RANGE (id);
CREATE TABLE rf_kp_a PARTITION OF rf_kp FOR VALUES FROM (MINVALUE) TO (2000) USING widecol
  WITH (widecol.partition_key = 'id', widecol.clustering_key = 'c');
CREATE TABLE rf_kp_b PARTITION OF rf_kp FOR VALUES FROM (2000) TO (MAXVALUE) USING widecol
  WITH (widecol.partition_key = 'id', widecol.clustering_key = 'c');
CREATE TABLE rf_kp_h (id bigint, c uuid, v text, PRIMARY KEY (id, c));
INSERT INTO rf_kp_h SELECT g % 4000, md5(g::text)::uuid,
       CASE WHEN g % 997 = 0 THEN (SELECT string_agg(md5((g * 100 + i)::text), '') FROM generate_series(1, 400) i)
            ELSE 'v' || g END
  FROM generate_series(1, 12000) g;
INSERT INTO rf_kp SELECT * FROM rf_kp_h;
SELECT sum(out_of_line) > 0 AS some_out_of_line
  FROM (SELECT out_of_line FROM widecol.runs('rf_kp_a') UNION ALL SELECT out_of_line FROM widecol.runs('rf_kp_b')) r;
SET enable_seqscan = off;
SELECT count(*) AS partitions,
       count(*) FILTER (WHERE (SELECT string_agg(w.c || md5(w.v), ',' ORDER BY w.c) FROM rf_kp w WHERE w.id = h.i) =
                              (SELECT string_agg(x.c || md5(x.v), ',' ORDER BY x.c) FROM rf_kp_h x WHERE x.id = h.i)) AS same
  FROM generate_series(0, 3999) h(i);
PREPARE rf_kp_q(int) AS SELECT count(*), min(c::text) FROM rf_kp WHERE id = $1;
EXECUTE rf_kp_q(1999);
EXECUTE rf_kp_q(2000);
SELECT count(*), min(c::text) FROM rf_kp_h WHERE id IN (1999, 2000) GROUP BY id ORDER BY id;
DEALLOCATE rf_kp_q;
RESET enable_seqscan;
DROP TABLE rf_kp, rf_kp_h;

-- the run of a flush frames its text with a copy of the table's newest
-- dictionary (widecol.ingest_zstd_dictionary): on a widecol partition of a
-- partitioned table, as this ordinary role, a bigint key sought by int
-- literals, a value over 8 kB in the same run, after a write that failed
-- halfway
CREATE TABLE rf_bd (id bigint, path text) PARTITION BY RANGE (id);
CREATE TABLE rf_bd_a PARTITION OF rf_bd FOR VALUES FROM (MINVALUE) TO (MAXVALUE) USING widecol
  WITH (widecol.partition_key = 'id');
CREATE FUNCTION rf_bd_path(bigint) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT 'raw/cam-' || lpad(($1 % 200)::text, 4, '0') || '/2025/01/' || md5($1::text)::uuid || '.jpg' $$;
INSERT INTO rf_bd SELECT g, rf_bd_path(g) FROM generate_series(1, 20000) g;
SELECT widecol.compact('rf_bd_a', true) > 0 AS compacted;
INSERT INTO rf_bd SELECT g, CASE WHEN g = 39000 THEN (1 / 0)::text ELSE rf_bd_path(g) END
  FROM generate_series(20001, 40000) g;
INSERT INTO rf_bd SELECT g, rf_bd_path(g) FROM generate_series(20001, 40000) g
  UNION ALL SELECT 40001, repeat(md5('over 8 kB'), 400);
SELECT widecol.flush('rf_bd_a') IS NOT NULL AS flushed;
SELECT r.level, r.nrows, (SELECT sum(pages) FROM widecol.run_pages('rf_bd_a') p
                          WHERE p.run_id = r.run_id AND kind = 'dictionary') > 0 AS dictionary
  FROM widecol.runs('rf_bd_a') r ORDER BY r.run_id;
SET enable_seqscan = off;
SELECT count(*) AS lookups, count(*) FILTER (WHERE (SELECT path FROM rf_bd WHERE id = g) = rf_bd_path(g)) AS same
  FROM generate_series(1, 40000, 7) g;
SELECT length(path) FROM rf_bd WHERE id = 40001;
SELECT path = rf_bd_path(39000) AS same FROM rf_bd WHERE id = 39000;
RESET enable_seqscan;
SELECT bool_and(ok) AS verified FROM widecol.verify('rf_bd_a');
DROP TABLE rf_bd;
DROP FUNCTION rf_bd_path(bigint);

DROP TABLE rf_bigkey, rf_bigkey_h, rf_wide, rf_wide_h, rf_keys, rf_keys_h, rf_del;
DROP FUNCTION rf_same(regclass, regclass);
