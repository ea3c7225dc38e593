--
-- security: widecol used by ordinary roles (this whole suite runs as one,
-- regress_widecol), the query-table catalog that no role can write, no
-- injection through names or options, privileges and row-level security
-- honoured by every function that shows rows or figures of rows.
--
\set VERBOSITY default
SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user;
SET ROLE NONE;
CREATE ROLE regress_sec_other;
CREATE ROLE regress_sec_writer;
GRANT CREATE ON SCHEMA public TO regress_sec_other;
RESET ROLE;

---------------------------------------------------------------------------
-- an ordinary role does what an owner does with a heap table
---------------------------------------------------------------------------
CREATE TABLE sec_keyed (dev text, ts bigint, v text) USING widecol
  WITH (widecol.partition_key = 'dev', widecol.clustering_key = 'ts');
CREATE TABLE sec_keyless (a int, b text) USING widecol;
INSERT INTO sec_keyed SELECT 'd' || g % 3, g, 'v' || g FROM generate_series(1, 300) g;
INSERT INTO sec_keyless SELECT g, 'b' || g FROM generate_series(1, 10) g;
TRUNCATE sec_keyless;
INSERT INTO sec_keyless VALUES (1, 'again');
ALTER TABLE sec_keyed ALTER COLUMN v TYPE varchar(20);
SELECT widecol.flush('sec_keyed') >= 0 AS flushed, widecol.compact('sec_keyed', major => true) AS compacted;
SELECT count(*), min(v), max(v) FROM sec_keyed;
SELECT * FROM sec_keyless;
SELECT widecol.create_query_table('sec_by_v', 'sec_keyed', 'SELECT v, dev, ts FROM base', 'v', 'dev, ts');
SELECT widecol.rebuild_query_table('sec_by_v');
SELECT ok FROM widecol.check_query_table('sec_by_v');
SELECT relowner::regrole FROM pg_class WHERE relname = 'sec_by_v';

---------------------------------------------------------------------------
-- the query-table catalog: written only through widecol's functions
---------------------------------------------------------------------------
-- nobody writes it directly, the owner included; ids are not chosen
INSERT INTO widecol.query_table (id, query_table, base, definition, partition_key, key_columns, columns, diff_update, search_path)
  VALUES (1000, 'sec_by_v', 'sec_keyed', 'SELECT 1', 'v', '{v}', '{v}', true, '');
UPDATE widecol.query_table SET definition = 'SELECT 1' WHERE query_table = 'sec_by_v'::regclass;
DELETE FROM widecol.query_table WHERE query_table = 'sec_by_v'::regclass;
SELECT nextval('widecol.query_table_id_seq');
-- the attack of the issue: another role registers a table of its own under
-- the id that the owner's triggers name; it cannot
SET ROLE regress_sec_other;
CREATE TABLE public.sec_attacker (v varchar(20), dev text, ts bigint) USING widecol
  WITH (widecol.partition_key = 'v');
INSERT INTO widecol.query_table (id, query_table, base, definition, partition_key, key_columns, columns, diff_update, search_path)
  SELECT id, 'sec_attacker', 'sec_attacker', 'SELECT * FROM base', 'v', '{v}', '{v,dev,ts}', true, ''
    FROM widecol.query_table WHERE query_table = 'sec_by_v'::regclass;
-- nor through the registration function, for a base it does not own
SELECT widecol._qt_register('sec_attacker', 'sec_keyed', 'SELECT * FROM base', 'v', NULL,
                            '{v}', '{v,dev,ts}', true, '{}', '');
-- nor for its own base and the owner's query table
SELECT widecol._qt_register('sec_by_v', 'sec_attacker', 'SELECT * FROM base', 'v', NULL,
                            '{v}', '{v,dev,ts}', true, '{}', '');
-- nor rebuild, flush or compact the owner's tables
SELECT widecol.rebuild_query_table('sec_by_v');
SELECT widecol.flush('sec_keyed');
SELECT widecol.compact('sec_keyed');
DROP TABLE sec_attacker;
RESET ROLE;
-- a catalog row (written by a superuser) whose base is not the table that
-- fires, or whose query table has another owner, makes the trigger refuse
SET ROLE NONE;
CREATE TABLE sec_other_base (v varchar(20), dev text, ts bigint) USING widecol WITH (widecol.partition_key = 'v');
ALTER TABLE sec_other_base OWNER TO regress_widecol;
UPDATE widecol.query_table SET base = 'sec_other_base' WHERE query_table = 'sec_by_v'::regclass;
RESET ROLE;
DO $$ BEGIN
  INSERT INTO sec_keyed VALUES ('d1', 1000, 'x');
EXCEPTION WHEN insufficient_privilege THEN  -- the trigger's name holds the id
  RAISE NOTICE 'refused: %', regexp_replace(SQLERRM, 'widecol_qt_\d+', 'widecol_qt_N');
END $$;
SET ROLE NONE;
UPDATE widecol.query_table SET base = 'sec_keyed' WHERE query_table = 'sec_by_v'::regclass;
ALTER TABLE sec_by_v OWNER TO regress_sec_other;
RESET ROLE;
INSERT INTO sec_keyed VALUES ('d1', 1000, 'x');
SET ROLE NONE;
ALTER TABLE sec_by_v OWNER TO regress_widecol;
DROP TABLE sec_other_base;
RESET ROLE;
INSERT INTO sec_keyed VALUES ('d1', 1000, 'x');
SELECT ok FROM widecol.check_query_table('sec_by_v');
-- dropping the query table leaves no trigger behind
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid = 'sec_keyed'::regclass;
DROP TABLE sec_by_v;
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid = 'sec_keyed'::regclass;
SELECT count(*) FROM widecol.query_table WHERE base = 'sec_keyed'::regclass;

---------------------------------------------------------------------------
-- functions that show rows or figures of rows need SELECT, and refuse
-- where row-level security would hide rows
---------------------------------------------------------------------------
GRANT INSERT ON sec_keyed TO regress_sec_writer;
SET ROLE regress_sec_writer;
-- the attack of the issue: insert a known key, read the row it replaced
BEGIN;
INSERT INTO sec_keyed VALUES ('d1', 1, 'probe');
SELECT * FROM widecol._replaced_rows(NULL::sec_keyed);
ROLLBACK;
SELECT widecol._inserted_keys_replaced('sec_keyed');
SELECT * FROM widecol.row_stats('sec_keyed');
SELECT * FROM widecol.large_partitions('sec_keyed');
SELECT widecol.writetime('sec_keyed', '(1,1)');
RESET ROLE;
-- row-level security: a policy lets the other role see partition d1 only
CREATE TABLE sec_rls (dev text, ts bigint, v text) USING widecol
  WITH (widecol.partition_key = 'dev', widecol.clustering_key = 'ts');
INSERT INTO sec_rls SELECT 'd' || g % 3, g, 'v' || g FROM generate_series(1, 30) g;
ALTER TABLE sec_rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY sec_d1 ON sec_rls FOR SELECT USING (dev = 'd1');
GRANT SELECT ON sec_rls TO regress_sec_other;
SET ROLE regress_sec_other;
SELECT count(*) AS visible FROM sec_rls;
SELECT count(*) AS visible_seek FROM sec_rls WHERE dev = 'd2';
SELECT * FROM widecol.large_partitions('sec_rls');
SELECT * FROM widecol.row_stats('sec_rls');
SELECT live_rows FROM widecol.table_stats('sec_rls');
SELECT count(*) FROM widecol.runs('sec_rls');
SELECT count(*) FROM widecol.verify('sec_rls');
SELECT widecol.writetime(tableoid, ctid) IS NOT NULL FROM sec_rls LIMIT 1;
SELECT widecol.ttl('sec_rls', '(1,1)');
RESET ROLE;
-- the owner is not subject to the policy (unless forced)
SELECT live_rows FROM widecol.row_stats('sec_rls');
ALTER TABLE sec_rls FORCE ROW LEVEL SECURITY;
SELECT live_rows FROM widecol.row_stats('sec_rls');
ALTER TABLE sec_rls NO FORCE ROW LEVEL SECURITY;
DROP TABLE sec_rls;

---------------------------------------------------------------------------
-- no injection through names or options
---------------------------------------------------------------------------
-- a store name that would end a literal or a dollar quote
SELECT count(*) AS objects FROM widecol.create_image_store($$x'||set_config('sec.injected',current_user,false)||'$$);
SELECT count(*) AS objects FROM widecol.create_image_store('odd $f$ name');
INSERT INTO "x'||set_config('sec.injected',current_user,false)||'".images (image_id, device_id, capture_time, tags)
  VALUES ('00000000-0000-0000-0000-000000000001', 'cam', '2026-01-01 10:00+00', '{a}');
SELECT * FROM "x'||set_config('sec.injected',current_user,false)||'".daily_counts('2026-01-01', '2026-01-01');
SELECT "x'||set_config('sec.injected',current_user,false)||'".rebuild_daily_counts();
SELECT device_id FROM "x'||set_config('sec.injected',current_user,false)||'".device_images('cam', '2026-01-01', '2026-01-02');
INSERT INTO "odd $f$ name".images (image_id, device_id, capture_time) VALUES ('00000000-0000-0000-0000-000000000002', 'c', now());
SELECT count(*) FROM "odd $f$ name".image('00000000-0000-0000-0000-000000000002');
SELECT current_setting('sec.injected', true) AS injected;
DROP SCHEMA "x'||set_config('sec.injected',current_user,false)||'" CASCADE;
DROP SCHEMA "odd $f$ name" CASCADE;
-- options are parsed, not pasted
CREATE TABLE sec_base (k int, v text);
SELECT widecol.create_query_table('sec_q', 'sec_base', 'SELECT k, v FROM base', 'k',
  options => $$widecol.default_ttl = '1 day'); CREATE TABLE sec_pwned (a int); --$$);
SELECT widecol.create_query_table('sec_q', 'sec_base', 'SELECT k, v FROM base', 'k',
  options => $$widecol.default_ttl = '1 day') INHERITS (sec_base$$);
SELECT widecol.create_query_table('sec_q', 'sec_base', 'SELECT k, v FROM base', 'k',
  options => 'fillfactor = 50');
SELECT to_regclass('sec_pwned') AS pwned, to_regclass('sec_q') AS q;
SELECT widecol.create_query_table('sec_q', 'sec_base', 'SELECT k, v FROM base', 'k',
  options => $$"widecol.default_ttl" = '1 day', widecol.compaction = 'time_window'$$);
SELECT array(SELECT unnest(reloptions) ORDER BY 1) FROM pg_class WHERE relname = 'sec_q';
SELECT * FROM widecol._parse_table_options($$widecol.a = 'x''y', widecol.b = 3, widecol.c$$);
DROP TABLE sec_q, sec_base;

---------------------------------------------------------------------------
-- one key-list parser: the one CREATE TABLE uses
---------------------------------------------------------------------------
SELECT widecol._key_columns('device_id, "Day, Bucket" DESC, "a""b"');
SELECT widecol._key_columns(NULL), widecol._key_columns('  ');
SELECT widecol._key_columns('a,, b');
SELECT widecol._key_columns('"unterminated', 'clustering_key');
CREATE TABLE sec_q2 ("a,b" int, c int) USING widecol WITH (widecol.partition_key = '"a,b"', widecol.clustering_key = 'c');
SELECT widecol._table_key_columns('sec_q2');
CREATE TABLE sec_q2_base ("a,b" int, c int);
SELECT widecol.create_query_table('sec_q3', 'sec_q2_base', 'SELECT * FROM base', '"a,b"', 'c');
INSERT INTO sec_q2_base VALUES (1, 2);
SELECT * FROM sec_q3;
DROP TABLE sec_q3, sec_q2_base, sec_q2;

DROP TABLE sec_keyed, sec_keyless;
SET ROLE NONE;
REVOKE CREATE ON SCHEMA public FROM regress_sec_other;
DROP ROLE regress_sec_other;
DROP ROLE regress_sec_writer;
RESET ROLE;
