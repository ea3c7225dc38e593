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

RESET enable_seqscan;
DROP FUNCTION rows_diff(regclass, regclass), same(text, text), same(text), explain_number(text, text);
DROP SCHEMA runs_test CASCADE;
