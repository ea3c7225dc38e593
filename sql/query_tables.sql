-- query tables: widecol tables derived from a base table by a SELECT and
-- kept in step with it by statement triggers (transition tables), on a heap
-- and on a widecol base; rollback, fan-out, UPDATE of a fan-out column,
-- COPY, TRUNCATE, rebuild / check / diff reports, DROP, privileges.
\set VERBOSITY default
\set SHOW_CONTEXT never
SET max_parallel_workers_per_gather = 0;
SET TimeZone = 'UTC';

-- a heap base table
CREATE TABLE photos (id int PRIMARY KEY, cam text, taken timestamptz, tags text[], title text, meta json);
INSERT INTO photos VALUES
  (1, 'c1', '2025-01-01 10:00+00', '{crack,rust}', 'one', '{"a": 1}'),
  (2, 'c2', '2025-01-01 23:59+00', '{ok}', 'two', NULL),
  (3, 'c1', '2025-01-02 00:01+00', NULL, 'three', NULL);

-- fan-out (one row per tag), an expression (the UTC day) and a filter;
-- existing rows are derived at once
SELECT widecol.create_query_table('photos_by_tag', 'photos',
  $$SELECT t.tag, widecol.day_bucket(p.taken) AS day, p.taken, p.id, p.cam, p.title
      FROM base AS p, unnest(p.tags) AS t(tag)
     WHERE p.title <> 'hidden'$$,
  'tag, day', 'taken DESC, id');
\d+ photos_by_tag
SELECT query_table, base, partition_key, clustering_key, key_columns, columns, diff_update
  FROM widecol.query_table;
SELECT tgname, tgtype FROM pg_trigger WHERE tgrelid = 'photos'::regclass ORDER BY tgname;
SELECT * FROM photos_by_tag ORDER BY tag, day, taken DESC, id;

-- the same rows the definition gives, both ways (a tag listed twice gives
-- the same row twice: one row of the query table)
CREATE VIEW photos_by_tag_expected AS
  SELECT t.tag, widecol.day_bucket(p.taken) AS day, p.taken, p.id, p.cam, p.title
    FROM photos AS p, unnest(p.tags) AS t(tag) WHERE p.title <> 'hidden';
CREATE FUNCTION in_step() RETURNS text LANGUAGE sql AS $$
  SELECT format('missing %s, extra %s, rows %s',
    (SELECT count(*) FROM (SELECT * FROM photos_by_tag_expected EXCEPT SELECT * FROM photos_by_tag) x),
    (SELECT count(*) FROM (SELECT * FROM photos_by_tag EXCEPT SELECT * FROM photos_by_tag_expected) x),
    (SELECT count(*) FROM photos_by_tag))
$$;
SELECT in_step();

-- multi-row INSERT, COPY, single-row writes
INSERT INTO photos SELECT i, 'c' || (i % 3), timestamptz '2025-01-01 00:00+00' + i * interval '1 hour',
                          (ARRAY['{crack}', '{rust,leak}', '{}', '{ok,crack,ok}'])[1 + i % 4]::text[], 'p' || i
  FROM generate_series(10, 60) i;
COPY photos (id, cam, taken, tags, title) FROM stdin;
100	c9	2025-01-03 08:00:00+00	{crack,blur}	copied
101	c9	2025-01-03 09:00:00+00	{blur}	hidden
102	c8	2025-01-03 10:00:00+00	\N	copied too
\.
SELECT in_step();
SELECT * FROM photos_by_tag WHERE tag = 'blur' ORDER BY day, taken DESC;

-- UPDATE of the fan-out column: old derived rows go, new ones come
UPDATE photos SET tags = '{rust,new}' WHERE id = 1;
SELECT tag, id FROM photos_by_tag WHERE id = 1 ORDER BY tag;
-- UPDATE of the filter column, of a key source (the day moves), of the base key
UPDATE photos SET title = 'hidden' WHERE id = 100;
UPDATE photos SET taken = taken + interval '3 days' WHERE id IN (10, 11);
UPDATE photos SET id = id + 1000 WHERE id = 12;
-- an UPDATE that changes no derived column writes no derived rows
SELECT widecol.flush('photos_by_tag') >= 0 AS flushed;
ALTER TABLE photos ADD COLUMN note text;
UPDATE photos SET note = 'x' WHERE id BETWEEN 20 AND 30;
SELECT widecol.flush('photos_by_tag') AS versions_written_by_that_update;
SELECT in_step();
-- DELETE, one row and many
DELETE FROM photos WHERE id = 2;
DELETE FROM photos WHERE id BETWEEN 40 AND 50;
SELECT in_step();

-- rolled back with the transaction, and with a savepoint
BEGIN;
INSERT INTO photos VALUES (200, 'c1', now(), '{rolled}', 'back');
SELECT count(*) AS inside FROM photos_by_tag WHERE tag = 'rolled';
ROLLBACK;
SELECT count(*) AS after_rollback FROM photos_by_tag WHERE tag = 'rolled';
BEGIN;
UPDATE photos SET tags = '{kept}' WHERE id = 13;
SAVEPOINT s;
UPDATE photos SET tags = '{undone}' WHERE id = 13;
DELETE FROM photos WHERE id = 14;
ROLLBACK TO s;
COMMIT;
SELECT tag, id FROM photos_by_tag WHERE id IN (13, 14) ORDER BY id, tag;
SELECT in_step();

-- check, diff and rebuild
SELECT * FROM widecol.check_query_table('photos_by_tag');
-- a query table is written by widecol only
DELETE FROM photos_by_tag WHERE tag = 'rust' AND id = 1;
-- damage the query table by hand: a missing, an extra and a different row
SET widecol.allow_query_table_writes = on;
DELETE FROM photos_by_tag WHERE tag = 'rust' AND id = 1;
INSERT INTO photos_by_tag VALUES ('bogus', '2025-01-01', '2025-01-01 00:00+00', 999, 'c0', 'x');
UPDATE photos_by_tag SET title = 'changed' WHERE tag = 'new' AND id = 1;
RESET widecol.allow_query_table_writes;
SELECT * FROM widecol.check_query_table('photos_by_tag');
SELECT status, key, expected ->> 'title' AS expected_title, actual ->> 'title' AS actual_title
  FROM widecol.query_table_diff('photos_by_tag');
SELECT count(*) FROM widecol.query_table_diff('photos_by_tag', 1);
SELECT widecol.rebuild_query_table('photos_by_tag');
SELECT * FROM widecol.check_query_table('photos_by_tag');
SELECT in_step();

-- TRUNCATE of the base empties the query table (and rolls back with it)
BEGIN;
TRUNCATE photos;
SELECT count(*) FROM photos_by_tag;
ROLLBACK;
SELECT in_step();

-- a second query table on the same base: keyed by camera, a json column
-- (no equality operator: an UPDATE rewrites every derived row of the rows it
-- changes), rows filtered out
SELECT widecol.create_query_table('public.photos_by_cam', 'photos',
  'SELECT cam, id, title, meta FROM base WHERE cam <> ''c0''', 'cam', 'id');
SELECT query_table, diff_update FROM widecol.query_table ORDER BY id;
UPDATE photos SET meta = '{"b": 2}' WHERE id = 1;
SELECT * FROM photos_by_cam WHERE cam = 'c1' AND id = 1;
SELECT * FROM widecol.check_query_table('photos_by_cam');

---------------------------------------------------------------------------
-- a widecol base table
---------------------------------------------------------------------------
CREATE TABLE shots (cam text, taken timestamptz, seq int, tags text[], size int)
  USING widecol WITH (widecol.partition_key = 'cam', widecol.clustering_key = 'taken DESC, seq');
SELECT widecol.create_query_table('shots_by_tag', 'shots',
  'SELECT t AS tag, cam, taken, seq, size FROM base, unnest(tags) AS t',
  'tag', 'taken DESC, cam, seq');
-- a counter query table: shots and bytes per camera and day, GROUP BY-shaped
SELECT widecol.create_query_table('shots_per_day', 'shots',
  'SELECT cam, (taken AT TIME ZONE ''UTC'')::date AS day, count(*) AS shots, sum(size)::bigint AS bytes FROM base GROUP BY 1, 2',
  'cam', 'day', counters => 'shots, bytes');
SELECT query_table, key_columns, counters FROM widecol.query_table WHERE query_table = 'shots_per_day'::regclass;
CREATE TABLE shots_heap (cam text, taken timestamptz, seq int, tags text[], size int);
COPY shots FROM stdin;
a	2025-01-01 10:00:00+00	1	{x,y}	10
a	2025-01-01 11:00:00+00	2	{y}	20
b	2025-01-01 10:30:00+00	1	{x}	30
\.
INSERT INTO shots SELECT 'c', '2025-01-02 00:00+00'::timestamptz + i * interval '1 minute', i,
                         CASE WHEN i % 2 = 0 THEN '{x,z}' ELSE '{z}' END::text[], i
  FROM generate_series(1, 100) i;
INSERT INTO shots_heap SELECT * FROM shots;
UPDATE shots SET tags = '{w}' WHERE cam = 'c' AND seq <= 10;
UPDATE shots_heap SET tags = '{w}' WHERE cam = 'c' AND seq <= 10;
UPDATE shots SET taken = taken + interval '1 day' WHERE cam = 'a' AND seq = 1;
UPDATE shots_heap SET taken = taken + interval '1 day' WHERE cam = 'a' AND seq = 1;
DELETE FROM shots WHERE cam = 'c' AND seq > 90;
DELETE FROM shots_heap WHERE cam = 'c' AND seq > 90;
SELECT (SELECT count(*) FROM (SELECT t AS tag, cam, taken, seq, size FROM shots_heap, unnest(tags) t
                              EXCEPT SELECT * FROM shots_by_tag) x) AS missing,
       (SELECT count(*) FROM (SELECT * FROM shots_by_tag
                              EXCEPT SELECT t AS tag, cam, taken, seq, size FROM shots_heap, unnest(tags) t) x) AS extra,
       (SELECT count(*) FROM shots_by_tag) AS rows;
-- the query table is read with a seek, in its clustering order
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM shots_by_tag WHERE tag = 'x' ORDER BY taken DESC LIMIT 3;
SELECT * FROM shots_by_tag WHERE tag = 'x' ORDER BY taken DESC LIMIT 3;
RESET enable_seqscan;
SELECT * FROM widecol.check_query_table('shots_by_tag');
-- Upserts: an INSERT of an existing key replaces the row without reading
-- it; the trigger reads the replaced versions as they were before the
-- statement, so derived rows of the old tags go (shots_heap mirrors each
-- replacement with DELETE + INSERT)
CREATE FUNCTION shots_in_step() RETURNS TABLE (missing bigint, extra bigint, rows bigint) LANGUAGE sql AS $$
SELECT (SELECT count(*) FROM (SELECT t AS tag, cam, taken, seq, size FROM shots_heap, unnest(tags) t
                              EXCEPT SELECT * FROM shots_by_tag) x),
       (SELECT count(*) FROM (SELECT * FROM shots_by_tag
                              EXCEPT SELECT t AS tag, cam, taken, seq, size FROM shots_heap, unnest(tags) t) x),
       (SELECT count(*) FROM shots_by_tag) $$;
CREATE FUNCTION heap_upsert(r shots_heap) RETURNS void LANGUAGE sql AS $$
  DELETE FROM shots_heap WHERE cam = r.cam AND taken = r.taken AND seq = r.seq;
  INSERT INTO shots_heap SELECT r.* $$;
-- one row (level 0)
INSERT INTO shots VALUES ('b', '2025-01-01 10:30+00', 1, '{v}', 31);
SELECT heap_upsert(('b', '2025-01-01 10:30+00', 1, '{v}', 31));
SELECT * FROM shots_in_step();
SELECT * FROM shots_by_tag WHERE tag IN ('v', 'x') AND cam = 'b' ORDER BY tag;
-- many rows (a sorted run), new and replacing ones mixed, one key twice
INSERT INTO shots SELECT 'c', '2025-01-02 00:00+00'::timestamptz + i * interval '1 minute', i, '{r}'::text[], -i
  FROM generate_series(85, 95) i
  UNION ALL SELECT 'c', '2025-01-02 00:00+00'::timestamptz + 88 * interval '1 minute', 88, '{r2}', 0;
SELECT count(*) FROM (SELECT heap_upsert(('c', '2025-01-02 00:00+00'::timestamptz + i * interval '1 minute', i, '{r}', -i))
  FROM generate_series(85, 95) i) x;
SELECT heap_upsert(('c', '2025-01-02 00:00+00'::timestamptz + 88 * interval '1 minute', 88, '{r2}', 0));
SELECT * FROM shots_in_step();
-- COPY, and a row inserted earlier in the same transaction replaced again
BEGIN;
INSERT INTO shots VALUES ('d', '2025-01-03 00:00+00', 1, '{first}', 1);
COPY shots FROM stdin;
d	2025-01-03 00:00:00+00	1	{second}	2
a	2025-01-01 11:00:00+00	2	{y,copy}	21
\.
SELECT tag, size FROM shots_by_tag WHERE cam = 'd';
ROLLBACK;
SELECT * FROM shots_in_step();
-- an UPDATE that moves a row onto the key of another one replaces it
UPDATE shots SET seq = 87, taken = taken + interval '1 minute', tags = '{moved}' WHERE cam = 'c' AND seq = 86;
SELECT seq, tags, size FROM shots WHERE cam = 'c' AND seq IN (86, 87);
DELETE FROM shots_heap WHERE cam = 'c' AND seq = 87;
UPDATE shots_heap SET seq = 87, taken = taken + interval '1 minute', tags = '{moved}' WHERE cam = 'c' AND seq = 86;
SELECT * FROM shots_in_step();
SELECT * FROM widecol.check_query_table('shots_by_tag');
-- the statement that replaced rows is undone with a savepoint
BEGIN;
SAVEPOINT s;
INSERT INTO shots VALUES ('a', '2025-01-01 11:00+00', 2, '{gone}', 0);
ROLLBACK TO s;
COMMIT;
SELECT * FROM shots_in_step();
-- the counters followed every statement above (inserts, upserts, updates
-- moving rows across days and onto other keys, deletes, rollbacks)
SELECT (SELECT count(*) FROM (SELECT cam, (taken AT TIME ZONE 'UTC')::date, count(*), sum(size) FROM shots_heap GROUP BY 1, 2
                              EXCEPT SELECT * FROM shots_per_day) x) AS missing,
       (SELECT count(*) FROM (SELECT * FROM shots_per_day WHERE shots <> 0
                              EXCEPT SELECT cam, (taken AT TIME ZONE 'UTC')::date, count(*), sum(size) FROM shots_heap GROUP BY 1, 2) x) AS extra;
SELECT * FROM shots_per_day WHERE cam = 'c' ORDER BY day;
SELECT ok, expected_rows, actual_rows FROM widecol.check_query_table('shots_per_day');
BEGIN;
DELETE FROM shots WHERE cam = 'c';
SELECT * FROM shots_per_day WHERE cam = 'c' ORDER BY day;
SELECT ok FROM widecol.check_query_table('shots_per_day');
ROLLBACK;
SET widecol.allow_query_table_writes = on;
INSERT INTO shots_per_day VALUES ('c', '2025-01-01', 3, 300);
RESET widecol.allow_query_table_writes;
SELECT ok FROM widecol.check_query_table('shots_per_day');
SELECT widecol.rebuild_query_table('shots_per_day');
SELECT ok FROM widecol.check_query_table('shots_per_day');
-- every column is a key or a counter
SELECT widecol.create_query_table('bad_counts', 'shots',
  'SELECT cam, count(*) AS n, max(size) AS biggest FROM base GROUP BY 1', 'cam', counters => 'n');
SELECT widecol.create_query_table('bad_counts', 'shots',
  'SELECT cam, count(*) AS n FROM base GROUP BY 1', 'cam', counters => 'm');
DROP TABLE shots_per_day;

-- columns with the names of the functions' own aliases, quoted and
-- mixed-case names, a base without a key (bag semantics)
CREATE TABLE odd (n int, r text, "Mixed Key" text, x int[]) USING widecol;
SELECT widecol.create_query_table('"Odd Derived"', 'odd',
  'SELECT n, r, "Mixed Key", e AS o, n + 1 AS t FROM base, unnest(x) AS e', 'r, "Mixed Key"', 'n, o');
INSERT INTO odd VALUES (1, 'a', 'K', '{1,2}'), (2, 'b', 'K', '{3}');
UPDATE odd SET x = '{2,9}' WHERE n = 1;
DELETE FROM odd WHERE n = 2;
SELECT * FROM "Odd Derived" ORDER BY 1, 2, 3, 4;
SELECT * FROM widecol.check_query_table('"Odd Derived"');
SELECT count(*) FROM widecol.query_table_diff('"Odd Derived"');
DROP TABLE odd, "Odd Derived";

-- a partitioned heap base: statements on the parent, rows moving between
-- partitions; a write naming a partition directly fires no trigger of the
-- parent (PostgreSQL's rule for statement triggers): check reports it
CREATE TABLE parted (id int, d date, tags text[]) PARTITION BY RANGE (d);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM ('2025-01-01') TO ('2025-02-01');
CREATE TABLE parted_2 PARTITION OF parted FOR VALUES FROM ('2025-02-01') TO ('2025-03-01');
SELECT widecol.create_query_table('parted_by_tag', 'parted', 'SELECT t AS tag, id, d FROM base, unnest(tags) AS t', 'tag', 'id');
INSERT INTO parted VALUES (1, '2025-01-05', '{a,b}'), (2, '2025-02-05', '{a}');
UPDATE parted SET d = '2025-02-10', tags = '{c}' WHERE id = 1;
DELETE FROM parted WHERE id = 2;
SELECT * FROM parted_by_tag ORDER BY tag, id;
SELECT ok FROM widecol.check_query_table('parted_by_tag');
INSERT INTO parted_1 VALUES (3, '2025-01-07', '{direct}');
SELECT ok, missing FROM widecol.check_query_table('parted_by_tag');
DROP TABLE parted, parted_by_tag;

---------------------------------------------------------------------------
-- validation
---------------------------------------------------------------------------
SELECT widecol.create_query_table('bad', 'photos', '', 'id');
SELECT widecol.create_query_table('bad', 'photos', 'SELECT nope FROM base', 'id');
SELECT widecol.create_query_table('bad', 'photos', 'SELECT 1 AS id', 'id');
SELECT widecol.create_query_table('bad', 'photos', 'SELECT id, cam AS id FROM base', 'id');
SELECT widecol.create_query_table('bad', 'photos', 'SELECT id, cam FROM base', 'camera');
SELECT widecol.create_query_table('bad', 'photos', 'SELECT id, cam FROM base', 'id', 'cam, title');
SELECT widecol.create_query_table('bad', 'photos', 'SELECT id, cam FROM base', '');
SELECT widecol.create_query_table('bad', 'photos', 'SELECT id, meta FROM base', 'id', 'meta');
SELECT widecol.create_query_table('photos_by_cam', 'photos', 'SELECT id FROM base', 'id');
SELECT widecol.create_query_table('a.b.c', 'photos', 'SELECT id FROM base', 'id');
SELECT widecol.create_query_table('bad', 'photos_by_cam', 'SELECT id FROM base', 'id');
SELECT widecol.create_query_table('bad', 'photos_by_tag_expected', 'SELECT id FROM base', 'id');
SELECT widecol.create_query_table('bad', 'photos', 'SELECT id FROM base', 'id', NULL, 'widecol.default_ttl = ''-1 day''');
-- a key that does not hold the base key: a warning; check reports the keys
-- that several base rows derive with different values
SELECT widecol.create_query_table('photos_by_day', 'photos',
  'SELECT widecol.day_bucket(taken) AS day, cam, title FROM base', 'day', 'cam');
SELECT * FROM widecol.check_query_table('photos_by_day');
SELECT status, key FROM widecol.query_table_diff('photos_by_day', 3);
DROP TABLE photos_by_day;
SELECT widecol.rebuild_query_table('photos');
SELECT * FROM widecol.check_query_table('shots');
-- nothing was left behind by the failed calls
SELECT query_table FROM widecol.query_table ORDER BY id;
SELECT relname FROM pg_class WHERE relname IN ('bad', 'widecol_qt_probe');

---------------------------------------------------------------------------
-- privileges
---------------------------------------------------------------------------
SET ROLE NONE;  -- roles are made by a superuser
CREATE ROLE regress_qt_other;
RESET ROLE;
GRANT SELECT, INSERT, UPDATE, DELETE ON photos TO regress_qt_other;
SET ROLE regress_qt_other;
-- not the owner of the base
SELECT widecol.create_query_table('mine', 'photos', 'SELECT id FROM base', 'id');
-- nor may the catalog be changed for tables of others
UPDATE widecol.query_table SET definition = 'SELECT 1' WHERE query_table = 'photos_by_cam'::regclass;
DELETE FROM widecol.query_table WHERE query_table = 'photos_by_cam'::regclass;
INSERT INTO widecol.query_table (query_table, base, definition, partition_key, key_columns, columns, diff_update, search_path)
  VALUES ('photos_by_cam', 'photos', 'SELECT 1', 'cam', '{cam}', '{cam}', true, '');
-- writing the base needs write privileges on its query tables too
INSERT INTO photos VALUES (300, 'c1', now(), '{t}', 'other');
RESET ROLE;
SELECT count(*) FROM widecol.query_table;

---------------------------------------------------------------------------
-- derived rows are written through the table AM, without an INSERT,
-- only where the INSERT would do nothing more: whatever the query table
-- has that an INSERT applies is applied
---------------------------------------------------------------------------
CREATE TABLE dw (k int PRIMARY KEY, v text);
SELECT widecol.create_query_table('dw_q', 'dw', 'SELECT k, v FROM base', 'k');
SELECT widecol.create_query_table('dw_n', 'dw', 'SELECT v COLLATE "C" AS v, count(*) AS n FROM base GROUP BY 1',
                                  'v', counters => 'n');
INSERT INTO dw VALUES (1, 'a'), (2, 'a');
-- a constraint added to the query table
ALTER TABLE dw_q ADD CONSTRAINT dw_q_v CHECK (v <> 'bad');
INSERT INTO dw VALUES (3, 'bad');
ALTER TABLE dw_q DROP CONSTRAINT dw_q_v;
-- a trigger of one's own
CREATE FUNCTION dw_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE NOTICE 'dw_q row %', NEW.k; RETURN NULL; END $$;
CREATE TRIGGER dw_note AFTER INSERT ON dw_q FOR EACH ROW EXECUTE FUNCTION dw_note();
INSERT INTO dw VALUES (4, 'b');
DROP TRIGGER dw_note ON dw_q;
-- row-level security (forced: the writer owns the table)
ALTER TABLE dw_q ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
CREATE POLICY dw_q_all ON dw_q USING (true) WITH CHECK (v <> 'secret');
INSERT INTO dw VALUES (5, 'secret');
ALTER TABLE dw_q NO FORCE ROW LEVEL SECURITY, DISABLE ROW LEVEL SECURITY;
-- a writer with column privileges only
GRANT SELECT, INSERT ON dw TO regress_qt_other;
GRANT INSERT, DELETE ON dw_n TO regress_qt_other;
GRANT INSERT (k, v) ON dw_q TO regress_qt_other;
SET ROLE regress_qt_other;
INSERT INTO dw VALUES (6, 'c');
RESET ROLE;
REVOKE INSERT (v) ON dw_q FROM regress_qt_other;
SET ROLE regress_qt_other;
INSERT INTO dw VALUES (7, 'c');
RESET ROLE;
-- a rolled back savepoint undoes the derived rows and counts too
BEGIN;
INSERT INTO dw VALUES (8, 'd');
SAVEPOINT s;
INSERT INTO dw VALUES (9, 'd');
ROLLBACK TO s;
COMMIT;
SELECT * FROM dw_q ORDER BY k;
SELECT * FROM dw_n ORDER BY v;
DELETE FROM dw WHERE k IN (1, 6);
SELECT * FROM dw_n ORDER BY v;
SELECT ok FROM widecol.check_query_table('dw_q');
SELECT ok FROM widecol.check_query_table('dw_n');
REVOKE ALL ON dw, dw_q, dw_n FROM regress_qt_other;
DROP TABLE dw, dw_q, dw_n;
DROP FUNCTION dw_note();

---------------------------------------------------------------------------
-- DROP
---------------------------------------------------------------------------
DROP VIEW photos_by_tag_expected;
DROP FUNCTION in_step();
-- the base of query tables cannot be dropped alone
DROP TABLE photos;
DROP TABLE shots;
-- a query table can: its triggers and catalog row go with it
DROP TABLE photos_by_cam;
SELECT query_table FROM widecol.query_table ORDER BY id;
SELECT tgname FROM pg_trigger WHERE tgrelid = 'photos'::regclass ORDER BY tgname;
UPDATE photos SET cam = 'c0' WHERE id = 1;
SELECT ok FROM widecol.check_query_table('photos_by_tag');
-- base and query table in one statement
DROP TABLE shots, shots_by_tag;
-- or with the schema
CREATE SCHEMA qs;
CREATE TABLE qs.base (k int, v text);
SELECT widecol.create_query_table('qs.derived', 'qs.base', 'SELECT k, v FROM base', 'k');
INSERT INTO qs.base VALUES (1, 'a');
SELECT * FROM qs.derived;
DROP SCHEMA qs CASCADE;
SELECT query_table FROM widecol.query_table ORDER BY id;
-- a query table renamed, and its base renamed, stay in step
ALTER TABLE photos_by_tag RENAME TO photos_by_tag2;
ALTER TABLE photos RENAME TO photos2;
INSERT INTO photos2 VALUES (400, 'c4', '2025-01-04 00:00+00', '{renamed}', 'r');
SELECT tag, id FROM photos_by_tag2 WHERE tag = 'renamed';
SELECT ok FROM widecol.check_query_table('photos_by_tag2');
DROP FUNCTION heap_upsert(shots_heap), shots_in_step();
DROP TABLE photos2, photos_by_tag2, shots_heap;
SELECT count(*) FROM widecol.query_table;
SET ROLE NONE;
DROP ROLE regress_qt_other;
RESET ROLE;
