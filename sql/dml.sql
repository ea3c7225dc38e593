--
-- dml: upsert semantics of INSERT and COPY, UPDATE (new version, moves),
-- DELETE, RETURNING, tables without a key, access by ctid, and MVCC within
-- one session (rollback, savepoints, exception blocks, flush in a
-- transaction).
--
\set VERBOSITY default
SET max_parallel_workers_per_gather = 0;

\i sql/compare.inc

CREATE TABLE d_t (pk int, ck int, v text) USING widecol
    WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');

---------------------------------------------------------------------------
-- INSERT of an existing key replaces the row
---------------------------------------------------------------------------
INSERT INTO d_t VALUES (1, 1, 'a'), (1, 2, 'b'), (2, 1, 'c');
INSERT INTO d_t VALUES (1, 1, 'a2') RETURNING *;
SELECT * FROM d_t;
-- within one multi-row INSERT the later row wins
INSERT INTO d_t VALUES (1, 3, 'first'), (1, 3, 'second'), (1, 3, 'third');
-- within one INSERT ... SELECT too
INSERT INTO d_t SELECT 3, 1, 'gen' || g FROM generate_series(1, 5) g;
SELECT * FROM d_t;
-- within one COPY the later line wins
COPY d_t FROM stdin;
4	1	line1
4	2	line2
4	1	line3
1	2	from copy
\.
SELECT * FROM d_t;
-- a replaced row in a run is replaced again from level 0, and vice versa
SELECT widecol.flush('d_t') > 0 AS flushed;
INSERT INTO d_t VALUES (1, 1, 'a3');
SELECT * FROM d_t WHERE pk = 1;
SELECT widecol.flush('d_t') > 0 AS flushed;
INSERT INTO d_t VALUES (1, 1, 'a4');
COPY d_t FROM stdin;
1	2	b from copy 2
\.
SELECT * FROM d_t WHERE pk = 1;
SELECT count(*) FROM d_t;

---------------------------------------------------------------------------
-- UPDATE writes a new version
---------------------------------------------------------------------------
UPDATE d_t SET v = v || '!' WHERE pk = 1 RETURNING *;
UPDATE d_t SET v = 'no such row' WHERE pk = 99 RETURNING *;
SELECT * FROM d_t WHERE pk = 1;
-- repeated updates of one row within a transaction: the last one wins
BEGIN;
UPDATE d_t SET v = 'u1' WHERE pk = 2 AND ck = 1;
UPDATE d_t SET v = v || 'u2' WHERE pk = 2 AND ck = 1;
UPDATE d_t SET v = v || 'u3' WHERE pk = 2 AND ck = 1 RETURNING *;
COMMIT;
SELECT * FROM d_t WHERE pk = 2;
-- insert, update, delete, re-insert of one key in one transaction
BEGIN;
INSERT INTO d_t VALUES (5, 5, 'x');
UPDATE d_t SET v = 'y' WHERE pk = 5;
DELETE FROM d_t WHERE pk = 5;
SELECT count(*) FROM d_t WHERE pk = 5;
INSERT INTO d_t VALUES (5, 5, 'z');
COMMIT;
SELECT * FROM d_t WHERE pk = 5;

---------------------------------------------------------------------------
-- UPDATE that changes key columns moves the row
---------------------------------------------------------------------------
UPDATE d_t SET ck = 10 WHERE pk = 4 AND ck = 1 RETURNING *;
SELECT * FROM d_t WHERE pk = 4;
-- ... to another partition
UPDATE d_t SET pk = 6 WHERE pk = 4 AND ck = 10 RETURNING *;
SELECT * FROM d_t WHERE pk IN (4, 6);
-- ... overwriting the row at the target key
UPDATE d_t SET ck = 1 WHERE pk = 1 AND ck = 3 RETURNING *;
SELECT * FROM d_t WHERE pk = 1;
-- a move to the same key is an ordinary update
UPDATE d_t SET ck = ck * 1, v = 'same key' WHERE pk = 1 AND ck = 1;
SELECT * FROM d_t WHERE pk = 1;
SELECT count(*) FROM d_t;

-- Chained moves in one command give what heap gives (no key collisions in
-- the result, so heap without a key is the reference).
CREATE TABLE d_c (pk int, ck int, v text) USING widecol
    WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
CREATE TABLE d_h (pk int, ck int, v text);
INSERT INTO d_c SELECT p, c, p || ':' || c FROM generate_series(1, 3) p, generate_series(1, 50) c;
INSERT INTO d_h SELECT * FROM d_c;
UPDATE d_c SET ck = ck + 1 WHERE pk = 1;
UPDATE d_h SET ck = ck + 1 WHERE pk = 1;
SELECT rows_diff('d_c', 'd_h') AS differences, count(*) AS nrows, min(ck), max(ck) FROM d_c WHERE pk = 1;
SELECT * FROM d_c WHERE pk = 1 AND ck <= 3;
-- the other direction
UPDATE d_c SET ck = ck - 1 WHERE pk = 2;
UPDATE d_h SET ck = ck - 1 WHERE pk = 2;
SELECT rows_diff('d_c', 'd_h') AS differences, count(*) AS nrows, min(ck), max(ck) FROM d_c WHERE pk = 2;
-- a shift by more than one, over every partition, with rows in a run
SELECT widecol.flush('d_c') > 0 AS flushed;
UPDATE d_c SET ck = ck + 7;
UPDATE d_h SET ck = ck + 7;
SELECT rows_diff('d_c', 'd_h') AS differences, (SELECT count(*) FROM d_c) AS nrows;
-- moving every row to the next partition
UPDATE d_c SET pk = pk + 1;
UPDATE d_h SET pk = pk + 1;
SELECT rows_diff('d_c', 'd_h') AS differences, (SELECT count(*) FROM d_c) AS nrows;
-- swapping two keys
UPDATE d_c SET ck = CASE ck WHEN 10 THEN 11 ELSE 10 END WHERE pk = 2 AND ck IN (10, 11);
UPDATE d_h SET ck = CASE ck WHEN 10 THEN 11 ELSE 10 END WHERE pk = 2 AND ck IN (10, 11);
SELECT rows_diff('d_c', 'd_h') AS differences;
SELECT * FROM d_c WHERE pk = 2 AND ck IN (10, 11);
-- with level 0 flushing itself during the UPDATE
SET widecol.level0_max_size = 16;
UPDATE d_c SET ck = ck + 1, v = v || repeat('.', 50);
UPDATE d_h SET ck = ck + 1, v = v || repeat('.', 50);
RESET widecol.level0_max_size;
SELECT rows_diff('d_c', 'd_h') AS differences, (SELECT count(*) FROM d_c) AS nrows,
       (SELECT count(*) FROM widecol.runs('d_c')) > 2 AS flushed_during_update;
-- DESC clustering key: the scan meets the rows in the other order
CREATE TABLE d_cd (pk int, ck int, v text) USING widecol
    WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck DESC');
INSERT INTO d_cd SELECT 1, c, 'v' || c FROM generate_series(1, 20) c;
UPDATE d_cd SET ck = ck + 1;
SELECT count(*), min(ck), max(ck), bool_and(v = 'v' || (ck - 1)) AS all_shifted FROM d_cd;
UPDATE d_cd SET ck = ck - 2;
SELECT count(*), min(ck), max(ck), bool_and(v = 'v' || (ck + 1)) AS all_shifted FROM d_cd;
DROP TABLE d_cd;
-- A BEFORE ROW trigger that deletes from another widecol table while the
-- UPDATE moves rows onto keys it will read later must not lose rows.
CREATE TABLE d_ct (pk int, ck int, v text) USING widecol
    WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
INSERT INTO d_ct SELECT 1, c, 'v' || c FROM generate_series(1, 5) c;
CREATE TABLE d_aux (id int) USING widecol WITH (widecol.partition_key = 'id');
INSERT INTO d_aux SELECT generate_series(1, 10);
CREATE FUNCTION d_trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM d_aux WHERE id = NEW.ck;
  RETURN NEW;
END $$;
CREATE TRIGGER d_trg BEFORE UPDATE ON d_ct FOR EACH ROW EXECUTE FUNCTION d_trg();
UPDATE d_ct SET ck = ck + 1;
SELECT * FROM d_ct;
SELECT * FROM d_aux;
DROP TABLE d_ct, d_aux;
DROP FUNCTION d_trg();
DROP TABLE d_c, d_h;

---------------------------------------------------------------------------
-- DELETE
---------------------------------------------------------------------------
DELETE FROM d_t WHERE pk = 3 RETURNING *;
DELETE FROM d_t WHERE pk = 3 RETURNING *;
SELECT * FROM d_t;
DELETE FROM d_t WHERE pk = 1 AND ck = 2;
INSERT INTO d_t VALUES (1, 2, 'back');
SELECT * FROM d_t WHERE pk = 1;
-- DELETE of rows in a run and in level 0 together
SELECT widecol.flush('d_t') > 0 AS flushed;
INSERT INTO d_t VALUES (7, 1, 'l0');
DELETE FROM d_t WHERE ck = 1 RETURNING pk, ck;
SELECT * FROM d_t;
DELETE FROM d_t;
SELECT count(*) FROM d_t;
INSERT INTO d_t VALUES (1, 1, 'after delete all');
SELECT * FROM d_t;

-- INSERT ... SELECT from the table itself: the scan does not see the rows
-- the statement writes
TRUNCATE d_t;
INSERT INTO d_t SELECT 1, g, 'v' FROM generate_series(1, 100) g;
INSERT INTO d_t SELECT pk, ck + 100, v FROM d_t;
SELECT count(*), min(ck), max(ck) FROM d_t;
-- and an INSERT ... SELECT that rewrites every key with itself changes nothing
INSERT INTO d_t SELECT pk, ck, v || '2' FROM d_t;
SELECT count(*), count(*) FILTER (WHERE v = 'v2') FROM d_t;
-- data-modifying CTEs
TRUNCATE d_t;
INSERT INTO d_t VALUES (1, 1, 'one'), (1, 2, 'two');
WITH m AS (UPDATE d_t SET ck = 2 WHERE ck = 1 RETURNING *)
DELETE FROM d_t WHERE ck = 2;
SELECT * FROM d_t;

---------------------------------------------------------------------------
-- A table without a declared key behaves like heap: bag semantics
---------------------------------------------------------------------------
CREATE TABLE d_bag (a int, b text) USING widecol;
CREATE TABLE d_bag_h (a int, b text);
INSERT INTO d_bag VALUES (1, 'x'), (1, 'x'), (2, 'y');
INSERT INTO d_bag VALUES (1, 'x') RETURNING *;
COPY d_bag FROM stdin;
1	x
3	z
3	z
\.
INSERT INTO d_bag SELECT * FROM d_bag;
INSERT INTO d_bag_h SELECT * FROM d_bag;
SELECT a, b, count(*) FROM d_bag GROUP BY a, b ORDER BY a, b;
SELECT count(*) FROM d_bag;
UPDATE d_bag SET b = 'X' WHERE a = 1 RETURNING *;
UPDATE d_bag_h SET b = 'X' WHERE a = 1;
SELECT rows_diff('d_bag', 'd_bag_h') AS differences;
-- UPDATE of a keyless table keeps the number of rows, even if all are equal
UPDATE d_bag SET a = 0, b = 'same';
UPDATE d_bag_h SET a = 0, b = 'same';
SELECT count(*), rows_diff('d_bag', 'd_bag_h') AS differences FROM d_bag;
SELECT widecol.flush('d_bag') > 0 AS flushed;
DELETE FROM d_bag WHERE ctid = (SELECT min(ctid) FROM d_bag) RETURNING *;
SELECT count(*) FROM d_bag;
DELETE FROM d_bag RETURNING a;
SELECT count(*) FROM d_bag;
DROP TABLE d_bag, d_bag_h;

---------------------------------------------------------------------------
-- Access by ctid.  A ctid names one version: after an UPDATE the old ctid
-- finds nothing.
---------------------------------------------------------------------------
TRUNCATE d_t;
INSERT INTO d_t SELECT 1, g, 'v' || g FROM generate_series(1, 5) g;
SELECT * FROM d_t WHERE ctid = (SELECT ctid FROM d_t WHERE ck = 3);
SELECT ctid AS old_ctid FROM d_t WHERE ck = 3 \gset
SELECT * FROM d_t WHERE ctid = :'old_ctid';
UPDATE d_t SET v = 'new' WHERE ck = 3;
SELECT count(*) FROM d_t WHERE ctid = :'old_ctid';
SELECT * FROM d_t WHERE ctid = (SELECT ctid FROM d_t WHERE ck = 3);
-- the same after a flush, where ctids point into a run
SELECT widecol.flush('d_t') > 0 AS flushed;
SELECT count(*) FROM d_t WHERE ctid = :'old_ctid';
SELECT * FROM d_t WHERE ctid = (SELECT ctid FROM d_t WHERE ck = 4);
SELECT ctid AS old_ctid FROM d_t WHERE ck = 4 \gset
UPDATE d_t SET v = 'newer' WHERE ctid = :'old_ctid' RETURNING *;
SELECT count(*) FROM d_t WHERE ctid = :'old_ctid';
-- a deleted row's ctid finds nothing
SELECT ctid AS old_ctid FROM d_t WHERE ck = 5 \gset
DELETE FROM d_t WHERE ck = 5;
SELECT count(*) FROM d_t WHERE ctid = :'old_ctid';
-- ctids that name no row: the metapage, past the end, a bad offset
SELECT count(*) FROM d_t WHERE ctid = '(0,1)';
SELECT count(*) FROM d_t WHERE ctid = '(100000,1)';
SELECT count(*) FROM d_t WHERE ctid = '(1,60000)';
SELECT count(*) FROM d_t WHERE ctid = ANY (ARRAY(SELECT ctid FROM d_t WHERE ck IN (1, 2)));
SELECT * FROM d_t;

---------------------------------------------------------------------------
-- MVCC in one session
---------------------------------------------------------------------------
TRUNCATE d_t;
INSERT INTO d_t SELECT 1, g, 'v' || g FROM generate_series(1, 5) g;
CREATE TABLE d_snap AS SELECT * FROM d_t;
-- ROLLBACK of INSERT / UPDATE / DELETE / COPY, without and with a flush
BEGIN;
INSERT INTO d_t VALUES (2, 1, 'rolled back');
SELECT count(*) FROM d_t;
ROLLBACK;
SELECT rows_diff('d_t', 'd_snap') AS differences;
BEGIN;
INSERT INTO d_t VALUES (2, 1, 'rolled back');
SELECT widecol.flush('d_t') > 0 AS flushed;
SELECT count(*) FROM d_t;
ROLLBACK;
SELECT rows_diff('d_t', 'd_snap') AS differences;
BEGIN;
UPDATE d_t SET v = 'rolled back';
UPDATE d_t SET ck = ck + 10 WHERE ck < 3;
ROLLBACK;
SELECT rows_diff('d_t', 'd_snap') AS differences;
BEGIN;
UPDATE d_t SET v = 'rolled back';
SELECT widecol.flush('d_t') > 0 AS flushed;
ROLLBACK;
SELECT rows_diff('d_t', 'd_snap') AS differences;
BEGIN;
DELETE FROM d_t;
SELECT count(*) FROM d_t;
ROLLBACK;
SELECT rows_diff('d_t', 'd_snap') AS differences;
BEGIN;
DELETE FROM d_t;
SELECT widecol.flush('d_t') > 0 AS flushed;
SELECT count(*) FROM d_t;
ROLLBACK;
SELECT rows_diff('d_t', 'd_snap') AS differences;
BEGIN;
COPY d_t FROM stdin;
1	1	rolled back
9	9	rolled back
\.
SELECT count(*) FROM d_t;
ROLLBACK;
SELECT rows_diff('d_t', 'd_snap') AS differences;
-- a COPY that fails half way leaves nothing
-- (CONTEXT hidden: COPY reports the line number of the end of its batch)
\set SHOW_CONTEXT never
COPY d_t FROM stdin;
1	2	half
1	\N	fails
\.
\set SHOW_CONTEXT errors
SELECT rows_diff('d_t', 'd_snap') AS differences;
-- a COPY of many rows (its buffer at full size from the first batch) into
-- the widecol partition of a partitioned table, failing after 3,000 rows,
-- leaves nothing; the same rows without the bad one load whole
CREATE TABLE d_part (k int, v text) PARTITION BY RANGE (k);
CREATE TABLE d_part_1 PARTITION OF d_part FOR VALUES FROM (0) TO (100000)
  USING widecol WITH (widecol.partition_key = 'k');
\copy (SELECT g, 'v' || g FROM generate_series(1, 3000) g UNION ALL SELECT 200000, 'no partition') TO 'results/d_part.csv' CSV
\set SHOW_CONTEXT never
\copy d_part FROM 'results/d_part.csv' CSV
\set SHOW_CONTEXT errors
SELECT count(*) FROM d_part;
\copy (SELECT g, 'v' || g FROM generate_series(1, 3000) g) TO 'results/d_part.csv' CSV
\copy d_part FROM 'results/d_part.csv' CSV
SELECT count(*), sum(k), count(DISTINCT v) FROM d_part;
DROP TABLE d_part;
-- the same with the committed data in a run
SELECT widecol.flush('d_t') > 0 AS flushed;
BEGIN;
INSERT INTO d_t VALUES (1, 1, 'rolled back');
DELETE FROM d_t WHERE ck = 2;
SELECT widecol.flush('d_t') > 0 AS flushed;
ROLLBACK;
SELECT rows_diff('d_t', 'd_snap') AS differences;
-- the runs written by rolled-back transactions are not listed
SELECT count(*) AS runs, sum(nrows) AS nrows FROM widecol.runs('d_t');

-- SAVEPOINT and ROLLBACK TO
BEGIN;
INSERT INTO d_t VALUES (3, 1, 'keep');
SAVEPOINT s1;
INSERT INTO d_t VALUES (3, 2, 'gone');
UPDATE d_t SET v = 'gone' WHERE pk = 3 AND ck = 1;
DELETE FROM d_t WHERE pk = 1;
SELECT count(*) FROM d_t;
ROLLBACK TO s1;
SELECT * FROM d_t WHERE pk = 3;
SAVEPOINT s2;
UPDATE d_t SET v = 'gone too' WHERE pk = 3;
SELECT widecol.flush('d_t') > 0 AS flushed;
ROLLBACK TO s2;
UPDATE d_t SET v = 'kept' WHERE pk = 1 AND ck = 1;
SAVEPOINT s3;
COPY d_t FROM stdin;
3	3	gone
\.
ROLLBACK TO s3;
RELEASE s1;
COMMIT;
SELECT * FROM d_t;

-- an error inside a plpgsql EXCEPTION block undoes the block only
DO $$
BEGIN
  INSERT INTO d_t VALUES (4, 1, 'before block');
  BEGIN
    INSERT INTO d_t VALUES (4, 2, 'in block');
    UPDATE d_t SET v = 'in block' WHERE pk = 4 AND ck = 1;
    PERFORM widecol.flush('d_t');
    INSERT INTO d_t VALUES (4, NULL, 'fails');
  EXCEPTION WHEN not_null_violation THEN
    RAISE NOTICE 'caught: %', SQLERRM;
  END;
  INSERT INTO d_t VALUES (4, 3, 'after block');
END $$;
SELECT * FROM d_t WHERE pk = 4;

-- a flush inside a transaction that rolls back keeps committed data intact
DELETE FROM d_snap;
INSERT INTO d_snap SELECT * FROM d_t;
BEGIN;
SELECT widecol.flush('d_t') > 0 AS flushed;
SELECT widecol.level0_pages('d_t');
ROLLBACK;
SELECT rows_diff('d_t', 'd_snap') AS differences;
SELECT widecol.flush('d_t') > 0 AS flushed;
SELECT rows_diff('d_t', 'd_snap') AS differences, widecol.level0_pages('d_t');

-- a cursor keeps reading its snapshot while the table changes
BEGIN;
DECLARE cur CURSOR FOR SELECT pk, ck, v FROM d_t;
FETCH 2 FROM cur;
UPDATE d_t SET v = 'changed';
DELETE FROM d_t WHERE pk = 4;
INSERT INTO d_t VALUES (0, 0, 'new');
FETCH ALL FROM cur;
CLOSE cur;
SELECT * FROM d_t;
ROLLBACK;

DROP TABLE d_t, d_snap;
DROP FUNCTION rows_diff(regclass, regclass), same(text, text);

-- the level-0 cache: with no memory for it, two tables read in turn (a
-- nested loop of seeks) evict each other's sorted copy on every read, and
-- rows appended meanwhile are still seen
SET widecol.level0_cache_size = 0;
CREATE TABLE l0a (k int, v int) USING widecol WITH (widecol.partition_key = 'k');
CREATE TABLE l0b (k int, v int) USING widecol WITH (widecol.partition_key = 'k');
DO $$ BEGIN FOR i IN 1..300 LOOP
  INSERT INTO l0a VALUES (i, i); INSERT INTO l0b VALUES (i, -i);
END LOOP; END $$;
SELECT widecol.level0_pages('l0a') > 0 AS in_level0;
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_seqscan = off;
SELECT count(*), sum(a.v + b.v) FROM l0a a JOIN l0b b USING (k);
INSERT INTO l0b VALUES (301, -301);
INSERT INTO l0a VALUES (301, 301);
SELECT count(*), sum(a.v + b.v) FROM l0a a JOIN l0b b USING (k);
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_seqscan;
RESET widecol.level0_cache_size;
SELECT count(*), sum(a.v + b.v) FROM l0a a JOIN l0b b USING (k) WHERE k > 290;
DROP TABLE l0a, l0b;
