-- Deletes: row-by-row deletes stay linear (level 0's sorted cache keeps
-- recent versions apart), per-table gc_grace, widecol.garbagecollect,
-- client write times (widecol.write_time), and TTL on UPDATE.
SET max_parallel_workers_per_gather = 0;
SET widecol.tombstone_warn_threshold = 0;	-- tombstones are the subject here
CREATE TABLE dl (dev text, ts bigint, v int)
  USING widecol WITH (widecol.partition_key = 'dev', widecol.clustering_key = 'ts');
CREATE TABLE dl_heap (LIKE dl);
INSERT INTO dl_heap SELECT 'd' || (g % 3), g, g FROM generate_series(1, 6000) g;
INSERT INTO dl SELECT * FROM dl_heap;

\i sql/compare.inc
-- same(q): q on dl returns the rows of q on dl_heap
CREATE FUNCTION same(q text) RETURNS text LANGUAGE sql
  AS $$ SELECT same(q, regexp_replace(q, '\mdl\M', 'dl_heap', 'g')) $$;

-- (a) 1,800 single-row deletes in one partition, each read back: past the
-- 1,024 versions level 0's cache keeps apart, they are merged into the bulk
DO $$
BEGIN
  FOR i IN 1..1800 LOOP
    DELETE FROM dl WHERE dev = 'd1' AND ts = i * 3 - 2;
    DELETE FROM dl_heap WHERE dev = 'd1' AND ts = i * 3 - 2;
    IF i % 300 = 0 AND (SELECT count(*) FROM dl WHERE dev = 'd1') <> (SELECT count(*) FROM dl_heap WHERE dev = 'd1') THEN
      RAISE EXCEPTION 'counts differ after % deletes', i;
    END IF;
  END LOOP;
END $$;
SELECT same($$SELECT * FROM dl WHERE dev = 'd1' ORDER BY ts$$);
SELECT same($$SELECT * FROM dl WHERE dev = 'd1' ORDER BY ts DESC LIMIT 30$$);
SELECT same($$SELECT dev, count(*), sum(v) FROM dl GROUP BY dev ORDER BY dev$$);
-- a multi-row delete, in a transaction with reads of its own deletes
BEGIN;
DELETE FROM dl WHERE dev = 'd2' AND ts < 3000;
DELETE FROM dl_heap WHERE dev = 'd2' AND ts < 3000;
SELECT same($$SELECT * FROM dl WHERE dev = 'd2' ORDER BY ts LIMIT 5$$);
SAVEPOINT s;
DELETE FROM dl WHERE dev = 'd2';
ROLLBACK TO s;
SELECT same($$SELECT count(*) FROM dl WHERE dev = 'd2'$$);
COMMIT;

-- (b) gc_grace per table, in default_ttl's interval syntax
CREATE TABLE gc (k int, c int, v text)
  USING widecol WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c', widecol.gc_grace = '1 day');
SELECT reloptions FROM pg_class WHERE oid = 'gc'::regclass;
ALTER TABLE gc SET (widecol.gc_grace = '0');
CREATE TABLE gc_bad (k int) USING widecol WITH (widecol.partition_key = 'k', widecol.gc_grace = '-1 day');
CREATE TABLE gc_bad (k int) USING widecol WITH (widecol.partition_key = 'k', widecol.gc_grace = 'soon');
SHOW widecol.gc_grace;

-- (c) widecol.garbagecollect: each run rewritten alone; with gc_grace 0 the
-- deleted rows, then their tombstones, go, without merging the runs (this
-- file runs before ttl, which moves the shared write clock ahead: a
-- tombstone written "in the future" is not yet past gc_grace)
CREATE TABLE gc_heap (k int, c int, v text);
INSERT INTO gc_heap SELECT g % 5, g, 'v' || g FROM generate_series(1, 500) g;
INSERT INTO gc SELECT * FROM gc_heap WHERE c <= 250;
INSERT INTO gc SELECT * FROM gc_heap WHERE c > 250;
SELECT widecol.flush('gc') AS rows_flushed;
DELETE FROM gc WHERE k = 1 AND v IS NOT NULL;  -- row by row: tombstones
DELETE FROM gc_heap WHERE k = 1;
SELECT widecol.flush('gc') AS tombstones_flushed;
SELECT count(*) AS runs, sum(nrows) AS versions, sum(ntombstones) AS tombstones FROM widecol.runs('gc');
SELECT widecol.garbagecollect('gc') AS versions_written;
SELECT count(*) AS runs, sum(nrows) AS versions, sum(ntombstones) AS tombstones FROM widecol.runs('gc');
SELECT kind, runs_in, runs_out, tombstones_purged, shadowed_dropped
  FROM widecol.compactions WHERE "table" = 'gc'::regclass ORDER BY started, rows_in;
SELECT (SELECT array_agg(x::text ORDER BY c) FROM gc x) = (SELECT array_agg(y::text ORDER BY c) FROM gc_heap y) AS same_rows;
-- with the default gc_grace (10 days) tombstones stay
CREATE TABLE gc10 (k int, c int) USING widecol WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
INSERT INTO gc10 SELECT 1, g FROM generate_series(1, 10) g;
DELETE FROM gc10 WHERE c <= 5;
SELECT widecol.garbagecollect('gc10') >= 0 AS done;
SELECT sum(ntombstones) AS tombstones_kept FROM widecol.runs('gc10');
SELECT count(*) FROM gc10;
-- only the owner may
SET ROLE NONE;
CREATE ROLE regress_widecol_other;
GRANT SELECT ON gc TO regress_widecol_other;
SET ROLE regress_widecol_other;
SELECT widecol.garbagecollect('gc');
SET ROLE NONE;
REVOKE ALL ON gc FROM regress_widecol_other;
DROP ROLE regress_widecol_other;
RESET ROLE;

-- (d) client write times: a replayed older message never overwrites a newer row
CREATE TABLE ev (id int, ts bigint, state text)
  USING widecol WITH (widecol.partition_key = 'id', widecol.clustering_key = 'ts');
BEGIN;
SET LOCAL widecol.write_time = '2026-05-01 10:00:00+00';
INSERT INTO ev VALUES (1, 1, 'shipped');
COMMIT;
SELECT state, widecol.writetime(tableoid, ctid) AT TIME ZONE 'UTC' AS written FROM ev;
-- the replay of an older event: written, but it loses
BEGIN;
SET LOCAL widecol.write_time = '2026-04-30 09:00:00+00';
INSERT INTO ev VALUES (1, 1, 'ordered');
UPDATE ev SET state = 'ordered, again' WHERE id = 1 AND ts = 1;
DELETE FROM ev WHERE id = 1 AND ts = 1;
COMMIT;
SELECT state, widecol.writetime(tableoid, ctid) AT TIME ZONE 'UTC' AS written FROM ev;
-- a newer event wins; SET LOCAL ends with the transaction, the clock is back
BEGIN;
SET LOCAL widecol.write_time = '2026-05-02 08:00:00+00';
UPDATE ev SET state = 'delivered' WHERE id = 1 AND ts = 1;
COMMIT;
SELECT state, widecol.writetime(tableoid, ctid) AT TIME ZONE 'UTC' AS written FROM ev;
SHOW widecol.write_time;
INSERT INTO ev VALUES (2, 1, 'now');
SELECT widecol.writetime(tableoid, ctid) > now() - interval '1 hour' AS from_the_clock FROM ev WHERE id = 2;
SET widecol.write_time = 'yesterday-ish';
SET widecol.write_time = 'infinity';
-- two versions under one write time: the later statement wins
BEGIN;
SET LOCAL widecol.write_time = '2026-06-01 00:00:00+00';
INSERT INTO ev VALUES (3, 1, 'first');
INSERT INTO ev VALUES (3, 1, 'second');
COMMIT;
SELECT state FROM ev WHERE id = 3;

-- (e) TTL on UPDATE: a row is one version, so each write sets the whole
-- row's expiry (Cassandra's per-write rule, applied to the row)
CREATE TABLE tt (k int, c int, v text) USING widecol WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
BEGIN;
SET LOCAL widecol.ttl = '1h';
INSERT INTO tt VALUES (1, 1, 'expires in an hour');
COMMIT;
-- (expiry - write time: the shared write clock may run ahead of the wall
-- clock after other tests moved it)
SELECT v, widecol.ttl(tableoid, ctid) + clock_timestamp() - widecol.writetime(tableoid, ctid)
          BETWEEN interval '59 minutes' AND interval '61 minutes' AS an_hour FROM tt;
UPDATE tt SET v = 'updated: no TTL' WHERE k = 1 AND c = 1;
SELECT v, widecol.ttl(tableoid, ctid) AS ttl FROM tt;
BEGIN;
SET LOCAL widecol.ttl = '1d';
UPDATE tt SET v = 'updated with a day' WHERE k = 1 AND c = 1;
COMMIT;
SELECT v, widecol.ttl(tableoid, ctid) + clock_timestamp() - widecol.writetime(tableoid, ctid)
          BETWEEN interval '23 hours 59 minutes' AND interval '24 hours 1 minute' AS a_day FROM tt;

-- (f) a DELETE that chooses rows by key columns alone, but not one row by
-- its full key, writes its tombstones blindly: no write-conflict check per
-- row, buffered and written as one run when the statement ends (fewer than
-- 256 go to level 0).  Conditions on other columns, and single-row deletes,
-- stay row by row.  Compared with a heap copy throughout.
CREATE TABLE bk (dev text, day date, ts bigint, v int)
  USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts');
CREATE TABLE bk_heap (LIKE bk);
INSERT INTO bk_heap SELECT 'd' || (g % 20), date '2025-03-01' + (g / 20) % 6, g, g % 100
  FROM generate_series(1, 6000) g;
INSERT INTO bk SELECT * FROM bk_heap WHERE ts <= 5000;
SELECT widecol.compact('bk', true) > 0 AS compacted;
INSERT INTO bk SELECT * FROM bk_heap WHERE ts > 5000;	-- these in level 0
CREATE FUNCTION bk_both(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE a bigint; b bigint; runs0 bigint; tomb_runs bigint;
BEGIN
  SELECT count(*) INTO runs0 FROM widecol.runs('bk');
  EXECUTE q; GET DIAGNOSTICS a = ROW_COUNT;
  SELECT count(*) INTO tomb_runs FROM widecol.runs('bk') WHERE ntombstones = nrows AND nrows = a;
  EXECUTE regexp_replace(q, '\mbk\M', 'bk_heap', 'g'); GET DIAGNOSTICS b = ROW_COUNT;
  RETURN a || ' rows' || CASE WHEN a = b THEN '' ELSE ', heap ' || b END ||
    CASE WHEN tomb_runs > 0 THEN ', tombstones in one run'
         WHEN (SELECT count(*) FROM widecol.runs('bk')) = runs0 THEN ', no new run' ELSE ', other runs' END;
END $$;
CREATE FUNCTION bk_same() RETURNS text LANGUAGE sql
  AS $$ SELECT same('SELECT dev, day, count(*), sum(v), min(ts), max(ts) FROM bk GROUP BY 1, 2 ORDER BY 1, 2',
                    'SELECT dev, day, count(*), sum(v), min(ts), max(ts) FROM bk_heap GROUP BY 1, 2 ORDER BY 1, 2') $$;
-- retention by a partition column, with cross-type literals: the full scan
-- becomes a WidecolKeyDelete, which reads keys and writes the tombstones
EXPLAIN (COSTS OFF) DELETE FROM bk WHERE day < '2025-03-02 12:00'::timestamp;
SELECT bk_both($$DELETE FROM bk WHERE day < '2025-03-02 12:00'::timestamp$$);
SELECT bk_both($$DELETE FROM bk WHERE dev IN ('d1', 'd2') AND ts < 4000::int$$);
SELECT bk_both($$DELETE FROM bk WHERE dev = 'd3' AND day = '2025-03-04' AND ts % 7 = 0$$);
SELECT bk_same();
-- a condition on a value column, or one full key: row by row (level 0)
SELECT bk_both($$DELETE FROM bk WHERE day = '2025-03-05' AND v > 90$$);
SELECT bk_both($$DELETE FROM bk WHERE dev = 'd4' AND day = '2025-03-05' AND ts = 84$$);
SELECT bk_same();
-- failing halfway: nothing of the statement is left
BEGIN;
SAVEPOINT s;
DELETE FROM bk WHERE day >= '2025-03-03' AND 1 / (ts - 5560) <> 2;
ROLLBACK TO s;
SELECT bk_same();
-- deleted rows are gone for the transaction's next statements; a key written
-- again after the delete lives; a rollback leaves no trace
SELECT bk_both($$DELETE FROM bk WHERE day = '2025-03-03'$$);
INSERT INTO bk VALUES ('d5', '2025-03-03', 1, 1);
INSERT INTO bk_heap VALUES ('d5', '2025-03-03', 1, 1);
SELECT bk_same();
COMMIT;
BEGIN;
DELETE FROM bk WHERE day > '2025-03-01';
SELECT count(*) AS left_in_transaction FROM bk;
ROLLBACK;
SELECT bk_same();
-- a partitioned table of widecol partitions deletes correctly too
CREATE TABLE bkp (dev text, day date, ts bigint, v int) PARTITION BY RANGE (day);
CREATE TABLE bkp1 PARTITION OF bkp FOR VALUES FROM ('2025-03-01') TO ('2025-03-04')
  USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts');
CREATE TABLE bkp2 PARTITION OF bkp FOR VALUES FROM ('2025-03-04') TO ('2025-04-01')
  USING widecol WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts');
INSERT INTO bkp SELECT * FROM bk;
DELETE FROM bkp WHERE day < '2025-03-05' AND dev > 'd3';
DELETE FROM bk_heap WHERE day < '2025-03-05' AND dev > 'd3';
SELECT same($$SELECT * FROM bkp ORDER BY 1, 2, 3$$, $$SELECT * FROM bk_heap ORDER BY 1, 2, 3$$);
-- each partition wrote its tombstones blindly, as a run where there were many
SELECT p, (SELECT coalesce(sum(ntombstones), 0) FROM widecol.runs(p)) AS tombstones_in_runs
  FROM unnest('{bkp1,bkp2}'::regclass[]) p;
-- a keyless table: DELETE without WHERE
CREATE TABLE bkl (v int) USING widecol;
INSERT INTO bkl SELECT g FROM generate_series(1, 1000) g;
DELETE FROM bkl WHERE v > 0;
DELETE FROM bkl;
SELECT count(*) AS keyless_left FROM bkl;
SELECT segment, bool_and(ok) AS ok FROM widecol.verify('bk') GROUP BY segment ORDER BY segment;
-- values over 8 kB (out of line): a blind delete's tombstones hide them, and
-- the compaction that drops the deleted versions deletes their values
CREATE TABLE bv (k int, c int, v text)
  USING widecol WITH (widecol.partition_key = 'k', widecol.clustering_key = 'c');
INSERT INTO bv SELECT g % 3, g, (SELECT string_agg(md5(g::text || i), '') FROM generate_series(1, 400) i)
  FROM generate_series(1, 30) g;
SELECT widecol.flush('bv') > 0 AS flushed;
SELECT sum(out_of_line) AS values_out_of_line FROM widecol.runs('bv');
EXPLAIN (COSTS OFF) DELETE FROM bv WHERE c % 2 = 0;
DELETE FROM bv WHERE c % 2 = 0;
SELECT count(*), bool_and(length(v) = 12800) AS values_whole FROM bv;
SELECT widecol.compact('bv', true) >= 0 AS compacted;
SELECT sum(out_of_line) AS values_left, (SELECT count(*) FROM bv) AS rows_left FROM widecol.runs('bv');
SELECT bool_and(ok) AS verified FROM widecol.verify('bv');

DROP TABLE dl, dl_heap, gc, gc_heap, gc10, ev, tt, bk, bk_heap, bkp, bkl, bv;
DROP FUNCTION same(text), rows_diff(regclass, regclass), same(text, text), bk_both(text), bk_same();
