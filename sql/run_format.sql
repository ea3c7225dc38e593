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

DROP TABLE rf_bigkey, rf_bigkey_h, rf_wide, rf_wide_h, rf_keys, rf_keys_h, rf_del;
DROP FUNCTION rf_same(regclass, regclass);
