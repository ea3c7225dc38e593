--
-- unsupported: everything widecol refuses gives a clear ERROR (message and
-- hint), and nothing is changed by the refused statement.
--
\set VERBOSITY default

CREATE TABLE u_t (pk int, ck int, v text) USING widecol
    WITH (widecol.partition_key = 'pk', widecol.clustering_key = 'ck');
INSERT INTO u_t SELECT g % 3, g, 'v' || g FROM generate_series(1, 30) g;
CREATE TABLE u_heap (a int);
INSERT INTO u_heap VALUES (1), (2);

---------------------------------------------------------------------------
-- Indexes and constraints that need one
---------------------------------------------------------------------------
CREATE INDEX ON u_t (v);
CREATE INDEX u_t_idx ON u_t USING hash (v);
CREATE UNIQUE INDEX u_t_uidx ON u_t (pk, ck);
CREATE INDEX CONCURRENTLY u_t_cidx ON u_t (v);
CREATE INDEX IF NOT EXISTS u_t_idx ON u_t (v);
CREATE TABLE u_pk (pk int PRIMARY KEY, v int) USING widecol WITH (widecol.partition_key = 'pk');
CREATE TABLE u_pk (pk int, v int UNIQUE) USING widecol WITH (widecol.partition_key = 'pk');
CREATE TABLE u_pk (pk int, v int, PRIMARY KEY (pk)) USING widecol;
CREATE TABLE u_pk (pk int, v int, EXCLUDE USING btree (v WITH =)) USING widecol
    WITH (widecol.partition_key = 'pk');
SELECT count(*) FROM pg_class WHERE relname LIKE 'u_pk%' OR relname LIKE 'u_t_%idx';
ALTER TABLE u_t ADD PRIMARY KEY (pk, ck);
ALTER TABLE u_t ADD CONSTRAINT u_t_uniq UNIQUE (v);
SELECT count(*) FROM pg_constraint WHERE conrelid = 'u_t'::regclass;
-- a foreign key from a heap table needs a unique index on the widecol table
ALTER TABLE u_heap ADD FOREIGN KEY (a) REFERENCES u_t (pk);
-- a foreign key from a widecol table is refused (its triggers need system columns)
CREATE TABLE u_parent (id int PRIMARY KEY);
CREATE TABLE u_fk (pk int REFERENCES u_parent, v text) USING widecol WITH (widecol.partition_key = 'pk');
CREATE TABLE u_fk (pk int, v text, FOREIGN KEY (pk) REFERENCES u_parent) USING widecol WITH (widecol.partition_key = 'pk');
CREATE TABLE u_fk (pk int, v text) USING widecol WITH (widecol.partition_key = 'pk');
ALTER TABLE u_fk ADD FOREIGN KEY (pk) REFERENCES u_parent;
ALTER TABLE u_fk ADD CONSTRAINT v_check CHECK (v <> '');
DROP TABLE u_fk, u_parent;

---------------------------------------------------------------------------
-- Row locks: SELECT ... FOR UPDATE / FOR SHARE are supported (they used to
-- be refused); here they just run, also nested; their locking is shown by
-- the isolation spec row_locks
---------------------------------------------------------------------------
SELECT * FROM u_t WHERE pk = 1 AND ck = 1 FOR UPDATE;
SELECT * FROM u_t WHERE pk = 1 AND ck = 1 FOR SHARE;
SELECT * FROM u_t FOR NO KEY UPDATE;
SELECT * FROM u_t FOR KEY SHARE;
SELECT * FROM u_t FOR UPDATE SKIP LOCKED;
SELECT * FROM u_t FOR UPDATE NOWAIT;
SELECT * FROM (SELECT * FROM u_t FOR UPDATE) s;
SELECT count(*) FROM u_heap WHERE a IN (SELECT ck FROM u_t FOR SHARE);
WITH c AS (SELECT * FROM u_t FOR UPDATE) SELECT count(*) FROM c;
SELECT count(*) FROM u_heap h, LATERAL (SELECT * FROM u_t WHERE ck = h.a FOR UPDATE) s;
SELECT * FROM u_heap, u_t FOR UPDATE;
SELECT * FROM u_heap, u_t FOR UPDATE OF u_t;
-- in a view and a function
CREATE VIEW u_v AS SELECT * FROM u_t FOR UPDATE;
CREATE FUNCTION u_f() RETURNS bigint LANGUAGE sql AS $$ SELECT count(*) FROM (SELECT * FROM u_t FOR SHARE) s $$;
SELECT count(*) FROM u_v;
SELECT u_f();
DROP VIEW u_v;
DROP FUNCTION u_f();
-- locking only a heap table in a join with a widecol table is fine
SELECT h.a, u.v FROM u_heap h JOIN u_t u ON u.ck = h.a ORDER BY h.a FOR UPDATE OF h;

---------------------------------------------------------------------------
-- TABLESAMPLE
---------------------------------------------------------------------------
SELECT * FROM u_t TABLESAMPLE SYSTEM (50);
SELECT count(*) FROM u_t TABLESAMPLE BERNOULLI (50) REPEATABLE (1);
SELECT count(*) FROM u_heap, LATERAL (SELECT * FROM u_t TABLESAMPLE SYSTEM (100)) s;

---------------------------------------------------------------------------
-- INSERT ... ON CONFLICT: refused (INSERT already replaces a row with the
-- same key).  The existing row must not change.
---------------------------------------------------------------------------
INSERT INTO u_t VALUES (1, 1, 'on conflict') ON CONFLICT DO NOTHING;
INSERT INTO u_t VALUES (1, 1, 'on conflict') ON CONFLICT (pk, ck) DO NOTHING;
INSERT INTO u_t VALUES (1, 1, 'on conflict') ON CONFLICT (pk, ck) DO UPDATE SET v = 'updated';
INSERT INTO u_t VALUES (1, 1, 'on conflict') ON CONFLICT DO UPDATE SET v = 'updated';
INSERT INTO u_t VALUES (1, 1, 'on conflict') ON CONFLICT ON CONSTRAINT u_t_pkey DO NOTHING;
SELECT * FROM u_t WHERE pk = 1 AND ck = 1;

---------------------------------------------------------------------------
-- Backward scans: a SCROLL cursor fetching backward
---------------------------------------------------------------------------
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT * FROM u_t;
FETCH 2 FROM c;
FETCH BACKWARD 1 FROM c;
ROLLBACK;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT * FROM u_t;
FETCH LAST FROM c;
ROLLBACK;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT * FROM u_t;
FETCH ALL FROM c \g /dev/null
FETCH PRIOR FROM c;
ROLLBACK;
-- forward-only use of a SCROLL cursor works
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT pk, ck FROM u_t WHERE pk = 0;
FETCH 2 FROM c;
FETCH FORWARD 2 FROM c;
MOVE FORWARD 3 IN c;
FETCH NEXT FROM c;
ROLLBACK;
-- a SCROLL cursor over a sorted result does not scan widecol backward
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT pk, ck FROM u_t ORDER BY ck DESC;
FETCH 2 FROM c;
FETCH BACKWARD 1 FROM c;
ROLLBACK;
-- a cursor WITH HOLD is materialized at commit and can go backward
BEGIN;
DECLARE c SCROLL CURSOR WITH HOLD FOR SELECT pk, ck FROM u_t WHERE pk = 1;
COMMIT;
FETCH 2 FROM c;
FETCH BACKWARD 1 FROM c;
CLOSE c;

---------------------------------------------------------------------------
-- VACUUM FULL rewrites the table (TAP 016_leaked_space); CLUSTER needs an index
---------------------------------------------------------------------------
VACUUM FULL u_t;
SELECT count(*) FROM u_t;
CLUSTER u_t;
-- plain VACUUM is fine
VACUUM u_t;
SELECT count(*) FROM u_t;

---------------------------------------------------------------------------
-- widecol.* functions on tables that are not widecol tables
---------------------------------------------------------------------------
SELECT widecol.flush('u_heap');
SELECT widecol.level0_pages('u_heap');
SELECT widecol.storage_id('u_heap');
SELECT * FROM widecol.runs('u_heap');
CREATE VIEW u_view AS SELECT * FROM u_t;
SELECT widecol.flush('u_view');
SELECT widecol.flush('pg_class');
SELECT widecol.flush('no_such_table');

---------------------------------------------------------------------------
-- widecol GUCs: ranges, and no unknown widecol.* settings
---------------------------------------------------------------------------
SET widecol.level0_max_size = 0;
SET widecol.level0_max_size = '10kB';
SET widecol.bulk_write_mem = 100;
SET widecol.no_such_setting = 1;

-- nothing above changed the data
SELECT count(*), count(DISTINCT pk), sum(ck) FROM u_t;

DROP VIEW u_view;
DROP TABLE u_t, u_heap;

-- key columns are protected also when a change comes from elsewhere: a
-- parent table's ALTER recursing into a widecol child, or a dropped domain
CREATE TABLE u_parent_t (pk int, v text);
CREATE TABLE u_child (pk int, v text) USING widecol WITH (widecol.partition_key = 'pk');
ALTER TABLE u_child INHERIT u_parent_t;
ALTER TABLE u_parent_t DROP COLUMN pk;
ALTER TABLE u_parent_t ALTER COLUMN pk TYPE bigint;
ALTER TABLE u_parent_t RENAME COLUMN pk TO id;
ALTER TABLE u_parent_t RENAME COLUMN v TO w;
SELECT attname FROM pg_attribute WHERE attrelid = 'u_child'::regclass AND attnum > 0 ORDER BY attnum;
DROP TABLE u_child, u_parent_t;
CREATE DOMAIN u_dom AS int;
CREATE TABLE u_domt (pk u_dom, v text) USING widecol WITH (widecol.partition_key = 'pk');
DROP DOMAIN u_dom CASCADE;
DROP TABLE u_domt;
DROP DOMAIN u_dom;
-- logical replication: publishing a widecol table would send nothing
CREATE SCHEMA u_pub;
CREATE TABLE u_pub.w (pk int, v text) USING widecol WITH (widecol.partition_key = 'pk');
CREATE TABLE u_pub.h (pk int PRIMARY KEY, v text);
SET client_min_messages = warning;
CREATE PUBLICATION u_p1 FOR TABLE u_pub.h, u_pub.w;
CREATE PUBLICATION u_p1 FOR TABLE u_pub.h;
ALTER PUBLICATION u_p1 ADD TABLE u_pub.w;
ALTER PUBLICATION u_p1 SET TABLE u_pub.w;
ALTER PUBLICATION u_p1 DROP TABLE u_pub.h;
SET ROLE NONE;  -- FOR TABLES IN SCHEMA needs a superuser
CREATE PUBLICATION u_p2 FOR TABLES IN SCHEMA u_pub;
RESET ROLE;
SELECT pubname, tablename FROM pg_publication_tables WHERE pubname LIKE 'u_p%' ORDER BY 1, 2;
SET ROLE NONE;
DROP PUBLICATION u_p1, u_p2;
RESET ROLE;
DROP SCHEMA u_pub CASCADE;
RESET client_min_messages;
