-- Reads over many small runs (key-column ranges, run format 4): a partition
-- read skips the runs whose ranges cannot hold its partition and opens the
-- others only when an ordered read reaches them, so LIMIT reads of the
-- newest rows open the newest runs only.  Every answer is compared with a
-- heap copy, forward and backward, with LIMIT, across row, range and
-- partition tombstones, level 0, and newer versions of old keys.
CREATE SCHEMA runs_test;
SET search_path = runs_test, public;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE lr (dev text, day date, ts bigint, v text) USING widecol
  WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'ts DESC');
CREATE TABLE lr_heap (dev text, day date, ts bigint, v text, PRIMARY KEY (dev, day, ts));
-- 20 runs, each a slice of time (five per day), as small writes leave them
DO $$
BEGIN
  FOR b IN 0..19 LOOP
    INSERT INTO lr SELECT 'd' || (g % 4), date '2025-03-01' + (g / 500), g, 'v' || g
      FROM generate_series(b * 100, b * 100 + 99) g;
    PERFORM widecol.flush('lr');
  END LOOP;
END $$;
INSERT INTO lr_heap SELECT * FROM lr;
-- a row tombstone and a newer version of an old key, in a later run
DELETE FROM lr WHERE dev = 'd1' AND day = '2025-03-02' AND ts = 901;
DELETE FROM lr_heap WHERE dev = 'd1' AND day = '2025-03-02' AND ts = 901;
UPDATE lr SET v = 'new' WHERE dev = 'd2' AND day = '2025-03-01' AND ts = 10;
UPDATE lr_heap SET v = 'new' WHERE dev = 'd2' AND day = '2025-03-01' AND ts = 10;
SELECT widecol.flush('lr') > 0 AS flushed;
-- a range tombstone and a partition tombstone (manifest rows)
DELETE FROM lr WHERE dev = 'd3' AND day = '2025-03-03' AND ts BETWEEN 1100 AND 1300;
DELETE FROM lr_heap WHERE dev = 'd3' AND day = '2025-03-03' AND ts BETWEEN 1100 AND 1300;
DELETE FROM lr WHERE dev = 'd0' AND day = '2025-03-04';
DELETE FROM lr_heap WHERE dev = 'd0' AND day = '2025-03-04';
-- rows in level 0 (not flushed): newest and oldest of their partitions
INSERT INTO lr VALUES ('d1', '2025-03-02', 998, 'level 0'), ('d1', '2025-03-02', 499, 'level 0 old'),
  ('d1', '2025-03-04', 1999, 'level 0');
INSERT INTO lr_heap VALUES ('d1', '2025-03-02', 998, 'level 0'), ('d1', '2025-03-02', 499, 'level 0 old'),
  ('d1', '2025-03-04', 1999, 'level 0');
ANALYZE lr;
ANALYZE lr_heap;
SELECT count(*) AS runs FROM widecol.runs('lr');
SELECT bool_and(ok) AS verified FROM widecol.verify('lr');
SET enable_seqscan = off;

\i sql/compare.inc
CREATE FUNCTION same(q text) RETURNS text LANGUAGE sql
  AS $$ SELECT same(q, regexp_replace(q, '\mlr\M', 'lr_heap', 'g')) $$;
CREATE FUNCTION explain_number(q text, label text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ label THEN RETURN substring(l FROM '(\d+)\s*$')::bigint; END IF;
  END LOOP;
  RETURN 0;
END $$;

-- one partition: newest first (forward), oldest first (backward), LIMIT
SELECT same($$SELECT ts, v FROM lr WHERE dev = 'd2' AND day = '2025-03-03' ORDER BY ts DESC LIMIT 10$$);
SELECT same($$SELECT ts, v FROM lr WHERE dev = 'd2' AND day = '2025-03-03' ORDER BY ts LIMIT 10$$);
SELECT same($$SELECT ts, v FROM lr WHERE dev = 'd2' AND day = '2025-03-03' ORDER BY ts DESC$$);
SELECT same($$SELECT ts, v FROM lr WHERE dev = 'd2' AND day = '2025-03-03' ORDER BY ts$$);
-- the partition spans five of the twenty runs: the others are skipped by
-- their key-column ranges, and a LIMIT of the newest rows leaves the older
-- runs of the partition unopened (either direction)
SELECT explain_number($$SELECT ts FROM lr WHERE dev = 'd2' AND day = '2025-03-03' ORDER BY ts DESC LIMIT 10$$,
                      'Runs Skipped by Key Range') AS skipped_by_ranges,
       explain_number($$SELECT ts FROM lr WHERE dev = 'd2' AND day = '2025-03-03' ORDER BY ts DESC LIMIT 10$$,
                      'Runs Not Reached') AS not_reached,
       explain_number($$SELECT ts FROM lr WHERE dev = 'd2' AND day = '2025-03-03' ORDER BY ts LIMIT 10$$,
                      'Runs Not Reached') AS not_reached_backward,
       explain_number($$SELECT ts FROM lr WHERE dev = 'd2' AND day = '2025-03-03' ORDER BY ts DESC$$,
                      'Runs Not Reached') AS not_reached_whole_partition;
-- a clustering bound outside a run's range skips it too
SELECT explain_number($$SELECT ts FROM lr WHERE dev = 'd2' AND day = '2025-03-03' AND ts < 1150 ORDER BY ts DESC$$,
                      'Runs Skipped by Key Range') AS skipped_with_bound;
SELECT same($$SELECT ts, v FROM lr WHERE dev = 'd2' AND day = '2025-03-03' AND ts < 1150 ORDER BY ts DESC LIMIT 5$$);
SELECT same($$SELECT ts, v FROM lr WHERE dev = 'd2' AND day = '2025-03-03' AND ts >= 1150 ORDER BY ts LIMIT 5$$);
-- tombstones across runs, newer versions in later runs, level 0
SELECT same($$SELECT ts, v FROM lr WHERE dev = 'd1' AND day = '2025-03-02' ORDER BY ts DESC LIMIT 5$$);
SELECT same($$SELECT ts, v FROM lr WHERE dev = 'd1' AND day = '2025-03-02' ORDER BY ts LIMIT 5$$);
SELECT same($$SELECT ts, v FROM lr WHERE dev = 'd1' AND day = '2025-03-02' AND ts < 905 ORDER BY ts DESC LIMIT 3$$);
SELECT same($$SELECT ts, v FROM lr WHERE dev = 'd2' AND day = '2025-03-01' ORDER BY ts LIMIT 5$$);
SELECT same($$SELECT ts, v FROM lr WHERE dev = 'd3' AND day = '2025-03-03' AND ts BETWEEN 1050 AND 1350 ORDER BY ts DESC$$);
SELECT same($$SELECT ts, v FROM lr WHERE dev = 'd3' AND day = '2025-03-03' ORDER BY ts LIMIT 30$$);
SELECT same($$SELECT ts, v FROM lr WHERE dev = 'd0' AND day = '2025-03-04' ORDER BY ts DESC LIMIT 5$$);
-- several day buckets merged in clustering order: a bucket is opened only
-- when the merge reaches it (LIMIT of the newest: the older days stay shut)
SELECT same($$SELECT day, ts, v FROM lr WHERE dev = 'd1' AND day BETWEEN '2025-03-01' AND '2025-03-04' ORDER BY ts DESC LIMIT 20$$);
SELECT same($$SELECT day, ts, v FROM lr WHERE dev = 'd1' AND day BETWEEN '2025-03-01' AND '2025-03-04' ORDER BY ts LIMIT 20$$);
SELECT same($$SELECT day, ts, v FROM lr WHERE dev = 'd0' AND day BETWEEN '2025-03-01' AND '2025-03-04' ORDER BY ts DESC LIMIT 140$$);
SELECT same($$SELECT day, ts FROM lr WHERE dev = 'd3' AND day BETWEEN '2025-03-01' AND '2025-03-04' ORDER BY ts DESC$$);
SELECT explain_number($$SELECT ts FROM lr WHERE dev = 'd2' AND day BETWEEN '2025-03-01' AND '2025-03-04' ORDER BY ts DESC LIMIT 10$$,
                      'Key Pages Read') AS key_pages_newest_10,
       explain_number($$SELECT ts FROM lr WHERE dev = 'd2' AND day BETWEEN '2025-03-01' AND '2025-03-04' ORDER BY ts DESC LIMIT 10$$,
                      'Runs Not Reached') AS not_reached;
-- a prepared statement over new runs and tombstones (the backend's copy of
-- the manifest follows every change)
PREPARE newest(text, date) AS SELECT ts, v FROM lr WHERE dev = $1 AND day = $2 ORDER BY ts DESC LIMIT 3;
EXECUTE newest('d2', '2025-03-04');
INSERT INTO lr VALUES ('d2', '2025-03-04', 5000, 'later run');
SELECT widecol.flush('lr') > 0 AS flushed;
EXECUTE newest('d2', '2025-03-04');
DELETE FROM lr WHERE dev = 'd2' AND day = '2025-03-04';
EXECUTE newest('d2', '2025-03-04');
BEGIN;
INSERT INTO lr VALUES ('d2', '2025-03-04', 6000, 'rolled back');
SELECT widecol.flush('lr') > 0 AS flushed;
EXECUTE newest('d2', '2025-03-04');
ROLLBACK;
EXECUTE newest('d2', '2025-03-04');
DELETE FROM lr_heap WHERE dev = 'd2' AND day = '2025-03-04';

-- runs without key-column ranges (written before run format 4) read as
-- before: every run of the partition is opened, with the same answers (a
-- new session: a backend's copy of the manifest follows widecol's changes,
-- not edits of widecol.segment)
SET ROLE NONE;  -- the manifest is the superuser's
CREATE TABLE saved_ranges AS SELECT segment_id, key_ranges FROM widecol.segment
  WHERE storage_id = widecol.storage_id('lr') AND kind = 'r';
UPDATE widecol.segment SET key_ranges = NULL WHERE storage_id = widecol.storage_id('lr') AND kind = 'r';
RESET ROLE;
\c
SET search_path = runs_test, public;
SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off;
SELECT same($$SELECT ts, v FROM lr WHERE dev = 'd1' AND day = '2025-03-02' ORDER BY ts DESC LIMIT 5$$);
SELECT same($$SELECT ts, v FROM lr WHERE dev = 'd1' AND day = '2025-03-02' ORDER BY ts LIMIT 5$$);
SELECT same($$SELECT day, ts, v FROM lr WHERE dev = 'd1' AND day BETWEEN '2025-03-01' AND '2025-03-04' ORDER BY ts LIMIT 20$$);
SELECT same($$SELECT day, ts, v FROM lr WHERE dev = 'd3' AND day BETWEEN '2025-03-01' AND '2025-03-04' ORDER BY ts DESC LIMIT 200$$);
SELECT explain_number($$SELECT ts FROM lr WHERE dev = 'd2' AND day = '2025-03-03' ORDER BY ts DESC LIMIT 10$$,
                      'Runs Not Reached') AS not_reached_without_ranges;
-- verify notices that the manifest and the run header disagree
SELECT DISTINCT problems FROM widecol.verify('lr') WHERE NOT ok;
-- put them back (verify then clears the damage marks it left)
SET ROLE NONE;
UPDATE widecol.segment s SET key_ranges = r.key_ranges FROM saved_ranges r
  WHERE s.storage_id = widecol.storage_id('lr') AND s.kind = 'r' AND s.segment_id = r.segment_id;
DROP TABLE saved_ranges;
RESET ROLE;
\c
SET search_path = runs_test, public;
SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off;
SELECT bool_and(ok) AS verified FROM widecol.verify('lr');
SELECT explain_number($$SELECT ts FROM lr WHERE dev = 'd2' AND day = '2025-03-03' ORDER BY ts DESC LIMIT 10$$,
                      'Runs Not Reached') AS not_reached_with_ranges_again;

-- compaction merges the runs; the answers stay
SELECT widecol.compact('lr', true) > 0 AS compacted;
SELECT bool_and(ok) AS verified FROM widecol.verify('lr');
SELECT same($$SELECT ts, v FROM lr WHERE dev = 'd1' AND day = '2025-03-02' ORDER BY ts DESC LIMIT 5$$);
SELECT same($$SELECT day, ts, v FROM lr WHERE dev = 'd1' AND day BETWEEN '2025-03-01' AND '2025-03-04' ORDER BY ts LIMIT 20$$);

-- A read of one key (a table without clustering columns) opens its runs
-- newest first and skips every run whose newest write is older than a
-- version of the key it found (merge.c, open_runs_newest_first): keys
-- written, updated and deleted over six flushed runs, each read alone by
-- a seek, against a heap copy; then through a partitioned parent, a bigint
-- key sought with int literals.
CREATE TABLE ok (k bigint, v text) USING widecol
  WITH (widecol.partition_key = 'k', widecol.autocompact = off);
CREATE TABLE ok_heap (k bigint PRIMARY KEY, v text);
DO $$
BEGIN
  FOR b IN 0..5 LOOP
    INSERT INTO ok SELECT g, 'v' || g FROM generate_series(1, 700) g WHERE g % 6 = b;
    INSERT INTO ok_heap SELECT g, 'v' || g FROM generate_series(1, 700) g WHERE g % 6 = b;
    UPDATE ok SET v = v || '-' || b WHERE k % 7 = b;
    UPDATE ok_heap SET v = v || '-' || b WHERE k % 7 = b;
    DELETE FROM ok WHERE k % 11 = b AND k % 6 < b;
    DELETE FROM ok_heap WHERE k % 11 = b AND k % 6 < b;
    PERFORM widecol.flush('ok');
  END LOOP;
END $$;
SELECT count(*) AS runs FROM widecol.runs('ok');
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SELECT explain_number($$SELECT v FROM ok WHERE k = 5$$, 'Runs Skipped by Write Time') > 0
  AS newest_run_decides,
       explain_number($$SELECT v FROM ok WHERE k = 6$$, 'Runs Skipped by Write Time') = 0
  AS oldest_run_read_last;
SELECT count(*) AS differences FROM (
  (SELECT g, x.v FROM generate_series(0, 720) g LEFT JOIN LATERAL (SELECT v FROM ok WHERE k = g) x ON true
   EXCEPT ALL
   SELECT g, x.v FROM generate_series(0, 720) g LEFT JOIN LATERAL (SELECT v FROM ok_heap WHERE k = g) x ON true)
  UNION ALL
  (SELECT g, x.v FROM generate_series(0, 720) g LEFT JOIN LATERAL (SELECT v FROM ok_heap WHERE k = g) x ON true
   EXCEPT ALL
   SELECT g, x.v FROM generate_series(0, 720) g LEFT JOIN LATERAL (SELECT v FROM ok WHERE k = g) x ON true)) d;
-- (an older snapshot reading past a newer run's version:
-- test/specs/one_key_reads.spec)
-- a value over 8 kB (stored out of line) in the newest run decides its
-- key; an UPDATE failing halfway leaves nothing in a newer run
UPDATE ok SET v = repeat(md5(k::text), 400) WHERE k IN (30, 31);
UPDATE ok_heap SET v = repeat(md5(k::text), 400) WHERE k IN (30, 31);
SELECT widecol.flush('ok') > 0 AS flushed;
UPDATE ok SET v = CASE WHEN k = 303 THEN (1 / (k - 303))::text ELSE 'failed' END WHERE k BETWEEN 25 AND 400;
SELECT widecol.flush('ok') AS flushed_after_error;
SELECT count(*) AS differences FROM generate_series(20, 40) g
  LEFT JOIN LATERAL (SELECT v FROM ok WHERE k = g) x ON true
  LEFT JOIN LATERAL (SELECT v FROM ok_heap WHERE k = g) h ON true
 WHERE x.v IS DISTINCT FROM h.v;
SELECT length(v) AS long_value FROM ok WHERE k = 30;
-- a run's newest write is not its versions' age: a compaction merged an
-- old version of keys 1-10 with writes newer than the run holding their
-- newest versions (size-tiered: the small runs, not the large one).  The
-- merged run is read first and finds the old versions; the large run's
-- newest write is newer than them, so it is read too, and decides.
CREATE TABLE ok2 (k int, v text) USING widecol
  WITH (widecol.partition_key = 'k', widecol.autocompact = off);
INSERT INTO ok2 SELECT g, 'old' FROM generate_series(1, 10) g;
SELECT widecol.flush('ok2') > 0 AS flushed;
INSERT INTO ok2 SELECT g, 'b' || md5(g::text) || md5((g + 1)::text) FROM generate_series(1, 30000) g;
SELECT widecol.flush('ok2') > 0 AS flushed;
INSERT INTO ok2 SELECT 20000 + g, 'n2' FROM generate_series(1, 10) g;
SELECT widecol.flush('ok2') > 0 AS flushed;
INSERT INTO ok2 SELECT 200000 + g, 'n' FROM generate_series(1, 10) g;
SELECT widecol.flush('ok2') > 0 AS flushed;
INSERT INTO ok2 SELECT 300000 + g, 'n' FROM generate_series(1, 10) g;
SELECT widecol.flush('ok2') > 0 AS flushed;
SELECT widecol.compact('ok2') AS versions_compacted;
SELECT count(*) AS runs, sum(nrows) AS versions FROM widecol.runs('ok2');
SELECT count(*) FILTER (WHERE x.v = 'b' || md5(g::text) || md5((g + 1)::text)) AS newest,
       count(*) FILTER (WHERE x.v IS DISTINCT FROM 'b' || md5(g::text) || md5((g + 1)::text)) AS wrong
  FROM generate_series(1, 12) g LEFT JOIN LATERAL (SELECT v FROM ok2 WHERE k = g) x ON true;
-- keys 20001-20010, rewritten after the large run was: the merged run
-- decides them, the large one is skipped
SELECT string_agg(DISTINCT x.v, ',') AS newest
  FROM generate_series(20001, 20010) g LEFT JOIN LATERAL (SELECT v FROM ok2 WHERE k = g) x ON true;
SELECT explain_number($$SELECT v FROM ok2 WHERE k = 5$$, 'Runs Skipped by Write Time') AS skipped_old_key,
       explain_number($$SELECT v FROM ok2 WHERE k = 20005$$, 'Runs Skipped by Write Time') AS skipped_rewritten_key;
DROP TABLE ok2;
CREATE TABLE okp (k bigint, v text) PARTITION BY RANGE (k);
CREATE TABLE okp_1 PARTITION OF okp FOR VALUES FROM (0) TO (400) USING widecol
  WITH (widecol.partition_key = 'k', widecol.autocompact = off);
CREATE TABLE okp_2 PARTITION OF okp FOR VALUES FROM (400) TO (1000) USING widecol
  WITH (widecol.partition_key = 'k', widecol.autocompact = off);
INSERT INTO okp SELECT k, v FROM ok_heap WHERE k % 2 = 0;
SELECT widecol.flush('okp_1') > 0 AS flushed, widecol.flush('okp_2') > 0 AS flushed;
INSERT INTO okp SELECT k, v || '+' FROM ok_heap WHERE k % 3 = 0;
SELECT widecol.flush('okp_1') > 0 AS flushed, widecol.flush('okp_2') > 0 AS flushed;
SELECT count(*) AS differences FROM generate_series(0, 720) g
  LEFT JOIN LATERAL (SELECT v FROM okp WHERE k = g::int) x ON true
  LEFT JOIN LATERAL (SELECT CASE WHEN k % 3 = 0 THEN v || '+' ELSE v END AS v
                       FROM ok_heap WHERE k = g AND (k % 2 = 0 OR k % 3 = 0)) h ON true
 WHERE x.v IS DISTINCT FROM h.v;
SELECT explain_number($$SELECT v FROM okp WHERE k = 600$$, 'Runs Skipped by Write Time') AS skipped_through_parent;
-- random upserts, updates, deletes, flushes and compactions (seeded),
-- every key of the range read alone by a seek every 20 steps against a
-- heap copy: the newest-first reads over 1 to a dozen runs and more
CREATE TABLE fz (k bigint, v text, n int) USING widecol
  WITH (widecol.partition_key = 'k', widecol.autocompact = off);
CREATE TABLE fz_h (k bigint PRIMARY KEY, v text, n int);
CREATE TEMP TABLE fz_check (step int, runs bigint, bad bigint, skipped bigint);
DO $$
DECLARE op int; a int; b int;
BEGIN
  PERFORM setseed(-0.17);
  FOR step IN 1..600 LOOP
    op := (random() * 9)::int;
    a := (random() * 2000)::int; b := a + (random() * 200)::int;
    IF op <= 2 THEN
      INSERT INTO fz SELECT g, 'i' || step, step FROM generate_series(a, b) g;
      INSERT INTO fz_h SELECT g, 'i' || step, step FROM generate_series(a, b) g
        ON CONFLICT (k) DO UPDATE SET v = excluded.v, n = excluded.n;
    ELSIF op = 3 THEN
      UPDATE fz SET v = 'u' || step, n = n + 1 WHERE k BETWEEN a AND b AND k % 3 = step % 3;
      UPDATE fz_h SET v = 'u' || step, n = n + 1 WHERE k BETWEEN a AND b AND k % 3 = step % 3;
    ELSIF op = 4 THEN
      DELETE FROM fz WHERE k BETWEEN a AND a + 20 AND k % 2 = 0;
      DELETE FROM fz_h WHERE k BETWEEN a AND a + 20 AND k % 2 = 0;
    ELSIF op = 5 THEN
      DELETE FROM fz WHERE k = a;
      DELETE FROM fz_h WHERE k = a;
    ELSIF op = 7 AND step % 7 = 0 THEN
      PERFORM widecol.compact('fz');
    ELSIF op = 8 AND step % 5 = 0 THEN
      PERFORM widecol.compact('fz', true);
    ELSE
      PERFORM widecol.flush('fz');
    END IF;
    IF step % 20 = 0 THEN
      INSERT INTO fz_check
      SELECT step, (SELECT count(*) FROM widecol.runs('fz')), count(*),
             explain_number('SELECT v FROM generate_series(0, 2300, 7) g, LATERAL (SELECT v FROM fz WHERE k = g) x',
                            'Runs Skipped by Write Time')
        FROM generate_series(0, 2300) g
        LEFT JOIN LATERAL (SELECT v, n FROM fz WHERE k = g) x ON true
        LEFT JOIN LATERAL (SELECT v, n FROM fz_h WHERE k = g) h ON true
       WHERE x.v IS DISTINCT FROM h.v OR x.n IS DISTINCT FROM h.n;
    END IF;
  END LOOP;
END $$;
SELECT count(*) AS checks, sum(bad) AS differences, max(runs) >= 10 AS up_to_ten_runs_or_more,
       count(*) FILTER (WHERE skipped > 0) > 10 AS runs_skipped_in_most
  FROM fz_check;
DROP TABLE fz, fz_h, fz_check;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
DROP TABLE ok, ok_heap, okp;

RESET enable_seqscan;
DROP FUNCTION rows_diff(regclass, regclass), same(text, text), same(text), explain_number(text, text);
DROP SCHEMA runs_test CASCADE;
