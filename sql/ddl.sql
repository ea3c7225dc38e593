--
-- ddl: options in \d+, ALTER TABLE SET/RESET of widecol.* options, key
-- changes, other reloptions, column changes, TRUNCATE, DROP TABLE, ANALYZE,
-- VACUUM, EXPLAIN.
--
\set VERBOSITY default
\set HIDE_TABLEAM off
SET max_parallel_workers_per_gather = 0;

CREATE TABLE a_t (pk int, ck int, v text, w int) USING widecol
    WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
\d+ a_t

---------------------------------------------------------------------------
-- widecol.default_ttl and other non-key options
---------------------------------------------------------------------------
ALTER TABLE a_t SET (widecol.default_ttl = '1 day');
\d+ a_t
ALTER TABLE a_t SET ("widecol.default_ttl" = '90 days');
SELECT array(SELECT unnest(reloptions) ORDER BY 1) AS reloptions FROM pg_class WHERE relname = 'a_t';
ALTER TABLE a_t SET (widecol.default_ttl = '-1 day');
ALTER TABLE a_t SET (widecol.default_ttl = 'banana');
ALTER TABLE a_t SET (widecol.default_ttl);
ALTER TABLE a_t SET (widecol.nope = '1');
ALTER TABLE a_t RESET (widecol.nope);
-- failed ALTERs changed nothing
SELECT array(SELECT unnest(reloptions) ORDER BY 1) AS reloptions FROM pg_class WHERE relname = 'a_t';
ALTER TABLE a_t RESET (widecol.default_ttl);
SELECT array(SELECT unnest(reloptions) ORDER BY 1) AS reloptions FROM pg_class WHERE relname = 'a_t';
-- RESET of an option that is not set is a no-op
ALTER TABLE a_t RESET (widecol.default_ttl);
SELECT array(SELECT unnest(reloptions) ORDER BY 1) AS reloptions FROM pg_class WHERE relname = 'a_t';
-- CREATE TABLE with a TTL; rows written with it are readable
CREATE TABLE a_ttl (pk int, v int) USING widecol
    WITH (widecol.partition_key = 'pk', widecol.default_ttl = '1 day');
INSERT INTO a_ttl VALUES (1, 1);
SELECT * FROM a_ttl;
CREATE TABLE a_bad (pk int) USING widecol
    WITH (widecol.partition_key = 'pk', widecol.default_ttl = '-5 minutes');
DROP TABLE a_ttl;

-- widecol.* options are refused on heap tables by PostgreSQL
CREATE TABLE a_heap (a int);
ALTER TABLE a_heap SET (widecol.partition_key = 'a');
ALTER TABLE a_heap SET (widecol.default_ttl = '1 day');
DROP TABLE a_heap;

---------------------------------------------------------------------------
-- Changing the key
---------------------------------------------------------------------------
-- on an empty table that was never written: allowed
ALTER TABLE a_t SET (widecol.clustering_key = 'ck DESC');
SELECT array(SELECT unnest(reloptions) ORDER BY 1) AS reloptions FROM pg_class WHERE relname = 'a_t';
-- the new key is validated like at CREATE TABLE
ALTER TABLE a_t SET (widecol.clustering_key = 'nope');
ALTER TABLE a_t SET (widecol.partition_key = 'pk, ck');
ALTER TABLE a_t RESET (widecol.partition_key);
SELECT array(SELECT unnest(reloptions) ORDER BY 1) AS reloptions FROM pg_class WHERE relname = 'a_t';
INSERT INTO a_t VALUES (1, 1, 'a', 1), (1, 2, 'b', 2), (2, 1, 'c', 3);
SELECT * FROM a_t;
-- on a table with data: refused, with a hint
ALTER TABLE a_t SET (widecol.clustering_key = 'ck');
ALTER TABLE a_t SET (widecol.partition_key = 'w');
ALTER TABLE a_t RESET (widecol.clustering_key);
ALTER TABLE a_t RESET (widecol.partition_key, widecol.clustering_key);
-- also when the data is only in runs
SELECT widecol.flush('a_t') > 0 AS flushed;
ALTER TABLE a_t SET (widecol.clustering_key = 'ck, w');
-- setting the same key again is not a change
ALTER TABLE a_t SET (widecol.partition_key = 'pk', widecol.clustering_key = 'ck DESC');
ALTER TABLE a_t SET (widecol.partition_key = '"pk"', widecol.clustering_key = 'CK desc');
-- a TTL change is not a key change
ALTER TABLE a_t SET (widecol.default_ttl = '2 days');
SELECT array(SELECT unnest(reloptions) ORDER BY 1) AS reloptions FROM pg_class WHERE relname = 'a_t';
SELECT * FROM a_t;
-- after TRUNCATE the key can change
TRUNCATE a_t;
ALTER TABLE a_t SET (widecol.clustering_key = 'ck ASC, w DESC');
INSERT INTO a_t VALUES (1, 1, 'a', 1), (1, 1, 'b', 2), (1, 2, 'c', 1), (1, 1, 'a2', 1);
SELECT * FROM a_t;
-- TRUNCATE, then back to a keyless table
TRUNCATE a_t;
ALTER TABLE a_t RESET (widecol.partition_key, widecol.clustering_key);
INSERT INTO a_t VALUES (1, 1, 'a', 1), (1, 1, 'a', 1);
SELECT * FROM a_t;
TRUNCATE a_t;
ALTER TABLE a_t SET (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
\d+ a_t

---------------------------------------------------------------------------
-- Other reloptions keep the widecol.* options
---------------------------------------------------------------------------
INSERT INTO a_t VALUES (1, 1, 'a', 1), (1, 2, 'b', 2);
ALTER TABLE a_t SET (fillfactor = 50);
\d+ a_t
ALTER TABLE a_t SET (fillfactor = 60, widecol.default_ttl = '3 days');
SELECT array(SELECT unnest(reloptions) ORDER BY 1) AS reloptions FROM pg_class WHERE relname = 'a_t';
ALTER TABLE a_t SET (fillfactor = 70), SET (autovacuum_enabled = false);
SELECT array(SELECT unnest(reloptions) ORDER BY 1) AS reloptions FROM pg_class WHERE relname = 'a_t';
ALTER TABLE a_t RESET (fillfactor, autovacuum_enabled);
SELECT array(SELECT unnest(reloptions) ORDER BY 1) AS reloptions FROM pg_class WHERE relname = 'a_t';
ALTER TABLE a_t SET (nonsense = 1);
ALTER TABLE a_t SET (nonsense = 1, widecol.default_ttl = '4 days');
SELECT array(SELECT unnest(reloptions) ORDER BY 1) AS reloptions FROM pg_class WHERE relname = 'a_t';
-- the key still works
INSERT INTO a_t VALUES (1, 1, 'a2', 1);
SELECT * FROM a_t;

---------------------------------------------------------------------------
-- Column changes
---------------------------------------------------------------------------
-- ADD COLUMN without and with a default: old rows read NULL / the default
ALTER TABLE a_t ADD COLUMN n1 int;
ALTER TABLE a_t ADD COLUMN n2 text DEFAULT 'dflt';
SELECT * FROM a_t;
SELECT widecol.flush('a_t') >= 0 AS flushed;
INSERT INTO a_t VALUES (2, 1, 'new', 3, 10);
SELECT * FROM a_t;
-- an old row updated gets the new columns written
UPDATE a_t SET n1 = 7 WHERE pk = 1 AND ck = 1;
SELECT * FROM a_t;
-- (ADD COLUMN with a volatile default: at the end of this file)
-- DROP COLUMN of a non-key column works
ALTER TABLE a_t DROP COLUMN v;
SELECT * FROM a_t;
INSERT INTO a_t VALUES (3, 1, 3, 30, 'x');
SELECT * FROM a_t;
-- ... of a key column is refused
ALTER TABLE a_t DROP COLUMN pk;
ALTER TABLE a_t DROP COLUMN ck CASCADE;
ALTER TABLE a_t DROP COLUMN IF EXISTS ck;
ALTER TABLE a_t ADD COLUMN x int, DROP COLUMN ck;
-- ALTER COLUMN TYPE of a key column is refused, of another column works
ALTER TABLE a_t ALTER COLUMN ck TYPE bigint;
ALTER TABLE a_t ALTER COLUMN pk SET DATA TYPE int;
-- (ALTER COLUMN TYPE of a non-key column: at the end of this file)
-- RENAME of a key column is refused, of another column works
ALTER TABLE a_t RENAME COLUMN ck TO ck2;
ALTER TABLE a_t RENAME pk TO pk2;
ALTER TABLE a_t RENAME COLUMN w TO w2;
\d+ a_t
SELECT * FROM a_t;
-- renaming the table keeps everything
ALTER TABLE a_t RENAME TO a_t2;
INSERT INTO a_t2 (pk, ck, w2) VALUES (3, 1, 31);
SELECT * FROM a_t2;
ALTER TABLE a_t2 RENAME TO a_t;
-- a table with a dropped column can change its key when empty
TRUNCATE a_t;
ALTER TABLE a_t SET (widecol.clustering_key = 'ck, w2 DESC');
INSERT INTO a_t (pk, ck, w2) VALUES (1, 1, 1), (1, 1, 2);
SELECT pk, ck, w2 FROM a_t;

---------------------------------------------------------------------------
-- TRUNCATE
---------------------------------------------------------------------------
TRUNCATE a_t;
INSERT INTO a_t (pk, ck, w2) SELECT 1, g, g FROM generate_series(1, 10) g;
SELECT widecol.flush('a_t') > 0 AS flushed;
INSERT INTO a_t (pk, ck, w2) VALUES (2, 1, 1);
SELECT widecol.storage_id('a_t') AS sid_before \gset
SELECT count(*) FROM a_t;
TRUNCATE a_t;
SELECT count(*) FROM a_t;
SELECT count(*) AS runs FROM widecol.runs('a_t');
SELECT widecol.level0_pages('a_t');
SELECT widecol.storage_id('a_t') <> :sid_before AS new_storage;
-- the manifest rows of the old contents are gone
SET ROLE NONE;  -- the manifest is widecol's own, readable by superusers only
SELECT count(*) AS old_manifest_rows FROM widecol.segment WHERE storage_id = :sid_before;
RESET ROLE;
INSERT INTO a_t (pk, ck, w2) VALUES (3, 1, 1);
SELECT pk, ck, w2 FROM a_t;
-- TRUNCATE rolled back: the data is back
INSERT INTO a_t (pk, ck, w2) SELECT 4, g, g FROM generate_series(1, 10) g;
SELECT widecol.flush('a_t') > 0 AS flushed;
INSERT INTO a_t (pk, ck, w2) VALUES (5, 1, 1);
SELECT widecol.storage_id('a_t') AS sid_before \gset
BEGIN;
TRUNCATE a_t;
SELECT count(*) FROM a_t;
INSERT INTO a_t (pk, ck, w2) VALUES (6, 1, 1);
SELECT count(*) FROM a_t;
ROLLBACK;
SELECT count(*), sum(w2) FROM a_t;
SELECT widecol.storage_id('a_t') = :sid_before AS same_storage;
SELECT count(*) AS runs FROM widecol.runs('a_t');
-- TRUNCATE in a transaction that commits, with writes after it
BEGIN;
TRUNCATE a_t;
INSERT INTO a_t (pk, ck, w2) VALUES (7, 1, 1);
COPY a_t (pk, ck, w2) FROM stdin;
7	2	2
\.
COMMIT;
SELECT pk, ck, w2 FROM a_t;
-- TRUNCATE of several tables, and of a widecol table with a heap one
CREATE TABLE a_h (x int);
INSERT INTO a_h VALUES (1);
TRUNCATE a_t, a_h;
SELECT (SELECT count(*) FROM a_t) AS widecol_rows, (SELECT count(*) FROM a_h) AS heap_rows;
DROP TABLE a_h;

---------------------------------------------------------------------------
-- DROP TABLE
---------------------------------------------------------------------------
CREATE TABLE a_drop (pk int, v int) USING widecol WITH (widecol.partition_key = 'pk');
INSERT INTO a_drop SELECT g, g FROM generate_series(1, 100) g;
SELECT widecol.flush('a_drop') > 0 AS flushed;
SELECT widecol.storage_id('a_drop') AS sid_drop \gset
SET ROLE NONE;
SELECT count(*) > 0 AS has_manifest_rows FROM widecol.segment WHERE storage_id = :sid_drop;
RESET ROLE;
BEGIN;
DROP TABLE a_drop;
ROLLBACK;
SELECT count(*) FROM a_drop;
SET ROLE NONE;
SELECT count(*) > 0 AS has_manifest_rows FROM widecol.segment WHERE storage_id = :sid_drop;
RESET ROLE;
DROP TABLE a_drop;
SELECT count(*) FROM pg_class WHERE relname = 'a_drop';
-- the manifest rows went with the table
SET ROLE NONE;
SELECT count(*) AS manifest_rows FROM widecol.segment WHERE storage_id = :sid_drop;
RESET ROLE;
DROP TABLE IF EXISTS a_drop;
-- the access method cannot be dropped while tables use it (superuser: an
-- ordinary role cannot drop either anyway)
SET ROLE NONE;
DROP ACCESS METHOD widecol;
DROP EXTENSION widecol;
RESET ROLE;

---------------------------------------------------------------------------
-- ANALYZE, VACUUM, EXPLAIN
---------------------------------------------------------------------------
CREATE TABLE a_an (pk int, ck int, v text) USING widecol
    WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
INSERT INTO a_an SELECT g % 50, g, md5(g::text) FROM generate_series(1, 3000) g;
SELECT widecol.flush('a_an') > 0 AS flushed;
INSERT INTO a_an SELECT g % 50, g, md5(g::text) FROM generate_series(3001, 6000) g;
ANALYZE a_an;
SELECT reltuples BETWEEN 6000 / 2 AND 6000 * 2 AS reltuples_ok, relpages > 0 AS has_pages
  FROM pg_class WHERE relname = 'a_an';
SELECT n_distinct <> 0 AS has_stats FROM pg_stats WHERE tablename = 'a_an' AND attname = 'pk';
-- EXPLAIN of a plain select
EXPLAIN (COSTS OFF) SELECT * FROM a_an;
-- EXPLAIN of key-restricted queries and joins works too (their plan shapes
-- are not shown: they change as the planner learns widecol seeks)
DO $$
DECLARE
  q text;
  l text;
  n int;
BEGIN
  FOREACH q IN ARRAY ARRAY[
    'SELECT * FROM a_an WHERE pk = 3 AND ck > 10 ORDER BY ck LIMIT 5',
    'SELECT count(*) FROM a_an a JOIN a_an b USING (pk, ck)',
    'SELECT pk, max(ck) FROM a_an GROUP BY pk ORDER BY pk DESC']
  LOOP
    n := 0;
    FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
      IF l ~ 'a_an' THEN n := n + 1; END IF;
    END LOOP;
    RAISE NOTICE 'EXPLAIN % mentions a_an: %', q, n > 0;
  END LOOP;
END $$;
SELECT count(*) FROM a_an a JOIN a_an b USING (pk, ck);
SELECT pk, max(ck) FROM a_an GROUP BY pk ORDER BY pk DESC LIMIT 3;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM a_an;
SELECT * FROM a_an WHERE pk = 3 AND ck > 10 ORDER BY ck LIMIT 5;
-- ANALYZE of a table with a whole column, of selected columns, VERBOSE
ANALYZE a_an (pk);
ANALYZE a_an (v, ck);
-- VACUUM runs and changes nothing visible
VACUUM a_an;
VACUUM (ANALYZE) a_an;
VACUUM (FREEZE) a_an;
VACUUM (VERBOSE, PROCESS_TOAST false) a_an;
SELECT count(*), count(DISTINCT pk), sum(ck) FROM a_an;
-- database-wide VACUUM and ANALYZE include widecol tables without failing
SET ROLE NONE;  -- database-wide: the database owner or a superuser
VACUUM;
ANALYZE;
RESET ROLE;
SELECT reltuples BETWEEN 6000 / 2 AND 6000 * 2 AS reltuples_ok FROM pg_class WHERE relname = 'a_an';
-- an empty widecol table
CREATE TABLE a_empty (a int) USING widecol;
ANALYZE a_empty;
VACUUM a_empty;
SELECT reltuples <= 0 AS empty_estimate FROM pg_class WHERE relname = 'a_empty';
DROP TABLE a_an, a_empty;

---------------------------------------------------------------------------
-- ALTER TABLE subcommands that scan the table in a per-tuple memory context
-- (ADD COLUMN with a volatile default and ALTER COLUMN TYPE of a non-key
-- column rewrite the table; SET NOT NULL and ADD CHECK check every row).
-- They run in a psql of their own, sql/ddl_rewrite.inc, whose output
-- appears here; then this session waits until the server accepts
-- connections, so that a crash there cannot make the following tests fail
-- to connect.
---------------------------------------------------------------------------
\setenv PGDATABASE :DBNAME
\! "$(pg_config --bindir)/psql" -X -a -q < sql/ddl_rewrite.inc 2>&1
\! sleep 0.5; for i in $(seq 600); do "$(pg_config --bindir)/pg_isready" -q && break; sleep 0.1; done
\c
SELECT count(*) AS leftover_tables FROM pg_class WHERE relname LIKE 'a\_%' AND relkind = 'r';
