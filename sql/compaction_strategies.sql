-- Compaction strategies, whole-run drop of expired runs, the tombstone purge
-- rule of minor compactions, and widecol.compactions (the history).
-- Write times are set with the test-only widecol.debug_write_time (a Unix
-- time), so that time windows and expiry are deterministic.
-- The setting is a superuser's: a superuser gives the test role a function
-- that sets it (NULL: back to the real clock).
SET TimeZone = 'UTC';
SET ROLE NONE;
CREATE FUNCTION write_time(t timestamptz) RETURNS void LANGUAGE sql SECURITY DEFINER
  AS $$ SELECT set_config('widecol.debug_write_time', coalesce(extract(epoch FROM t), 0)::text, false) $$;
RESET ROLE;

-- option validation
CREATE TABLE cs_bad (k int) USING widecol
  WITH (widecol.partition_key = 'k', widecol.compaction = 'leveled');
CREATE TABLE cs_bad (k int) USING widecol
  WITH (widecol.partition_key = 'k', widecol.min_threshold = 1);
CREATE TABLE cs_bad (k int) USING widecol
  WITH (widecol.partition_key = 'k', widecol.max_threshold = 'many');
CREATE TABLE cs_bad (k int) USING widecol
  WITH (widecol.partition_key = 'k', widecol.min_threshold = 8, widecol.max_threshold = 4);
CREATE TABLE cs_bad (k int) USING widecol
  WITH (widecol.partition_key = 'k', widecol.compaction_window = '1 day');
CREATE TABLE cs_bad (k int) USING widecol
  WITH (widecol.partition_key = 'k', widecol.compaction = 'time_window',
        widecol.compaction_window = '1 month');
CREATE TABLE cs_bad (k int) USING widecol
  WITH (widecol.partition_key = 'k', widecol.compaction = 'time_window',
        widecol.compaction_window = '10 milliseconds');
CREATE TABLE cs_bad (k int) USING widecol
  WITH (widecol.partition_key = 'k', widecol.autocompact = 'sometimes');
CREATE TABLE cs_opts (k int) USING widecol
  WITH (widecol.partition_key = 'k', widecol.compaction = 'time_window',
        "widecol.compaction_window" = '1 hour', widecol.autocompact = off);
ALTER TABLE cs_opts SET (widecol.min_threshold = 2, widecol.max_threshold = 8);
ALTER TABLE cs_opts SET (widecol.max_threshold = 1);
ALTER TABLE cs_opts RESET (widecol.compaction);   -- the window needs time_window
SELECT array(SELECT unnest(reloptions) ORDER BY 1) AS reloptions
  FROM pg_class WHERE relname = 'cs_opts';
DROP TABLE cs_opts;

-- size_tiered: runs are bucketed by size; only a bucket of min_threshold
-- (4) similar runs is merged, the big run is left alone
CREATE TABLE st (k int, v text) USING widecol WITH (widecol.partition_key = 'k');
INSERT INTO st SELECT g, md5(g::text) || md5((g * 7)::text) FROM generate_series(1, 20000) g;
SELECT widecol.flush('st');
INSERT INTO st VALUES (100001, 'a');
SELECT widecol.flush('st');
INSERT INTO st VALUES (100002, 'b');
SELECT widecol.flush('st');
INSERT INTO st VALUES (100001, 'c');
SELECT widecol.flush('st');
SELECT level, nrows, compressed_bytes > 262144 AS big FROM widecol.runs('st') ORDER BY run_id;
SELECT widecol.compact('st') AS written_with_3_small_runs;
SELECT count(*) AS runs FROM widecol.runs('st');
INSERT INTO st VALUES (100003, 'd');
SELECT widecol.flush('st');
SELECT widecol.compact('st') AS written_with_4_small_runs;
SELECT level, nrows, compressed_bytes > 262144 AS big FROM widecol.runs('st') ORDER BY run_id;
SELECT * FROM st WHERE k > 100000 ORDER BY k;
SELECT count(*) FROM st;
SELECT "table", strategy, kind, runs_in, runs_out, rows_in, rows_out, shadowed_dropped,
       bytes_in > bytes_out AS smaller, by_worker, finished >= started AS timed
  FROM widecol.compactions WHERE "table" = 'st'::regclass;
-- a major compaction merges everything
SELECT widecol.compact('st', major => true) AS written_major;
SELECT level, nrows FROM widecol.runs('st');
SELECT kind, runs_in, runs_out FROM widecol.compactions WHERE "table" = 'st'::regclass ORDER BY started;

-- time_window: runs are grouped by the window of their newest write time
-- and merged within a window only
CREATE TABLE tw (k int, v text) USING widecol
  WITH (widecol.partition_key = 'k', widecol.compaction = 'time_window',
        widecol.compaction_window = '1 day');
-- one row written at time t, flushed into a run of its own
CREATE FUNCTION tw_run(t timestamptz, k int, v text) RETURNS bigint LANGUAGE sql AS $$
  SELECT write_time(t);
  INSERT INTO tw VALUES (k, v);
  SELECT widecol.flush('tw') $$;
SELECT tw_run('2025-01-01 10:00', 1, 'day 1, first');
SELECT tw_run('2025-01-01 11:00', 2, 'day 1, second');
SELECT tw_run('2025-01-02 10:00', 1, 'day 2, overwrites key 1');
SELECT tw_run('2025-01-02 12:00', 3, 'day 2, second');
-- one flush that spans midnight: a run reaching into two windows
SELECT write_time('2025-01-03 23:59:59');
INSERT INTO tw VALUES (4, 'day 3, just before midnight');
SELECT write_time('2025-01-04 00:00:01');
INSERT INTO tw VALUES (5, 'day 4, just after midnight');
SELECT widecol.flush('tw');
SELECT write_time(NULL);
SELECT level, nrows, min_write_ts, max_write_ts FROM widecol.runs('tw') ORDER BY run_id;
SELECT widecol.compact('tw') AS written;
-- one run per day; key 1 keeps its day-1 version in the day-1 run (it is
-- not merged with day 2), the straddling run was split at midnight
SELECT level, nrows, min_write_ts, max_write_ts FROM widecol.runs('tw') ORDER BY min_write_ts;
SELECT bool_and(date_trunc('day', min_write_ts) = date_trunc('day', max_write_ts)) AS one_window_each
  FROM widecol.runs('tw');
SELECT * FROM tw ORDER BY k;
SELECT kind, runs_in, runs_out, rows_in, rows_out FROM widecol.compactions
 WHERE "table" = 'tw'::regclass ORDER BY runs_in DESC, rows_in DESC;
-- nothing more to do
SELECT widecol.compact('tw') AS written_again;
-- a major compaction of a time_window table also keeps one run per window
SELECT widecol.compact('tw', true) AS written_major;
SELECT level, nrows, min_write_ts::date AS day FROM widecol.runs('tw') ORDER BY min_write_ts;
SELECT * FROM tw ORDER BY k;
-- twelve days in one run (keys interleaving the days): a major compaction
-- writes twelve runs, in passes of at most 8 windows
CREATE TABLE tw12 (k int, v text) USING widecol
  WITH (widecol.partition_key = 'k', widecol.compaction = 'time_window');
DO $$
BEGIN
  FOR d IN 0..11 LOOP
    PERFORM write_time('2025-03-01'::timestamptz + d * interval '1 day');
    INSERT INTO tw12 SELECT g, 'day ' || d FROM generate_series(d + 1, 120, 12) g;
  END LOOP;
END $$;
INSERT INTO tw12 VALUES (1, 'day 11 overwrites day 0');
SELECT write_time(NULL);
SELECT widecol.flush('tw12');
SELECT count(*) AS runs FROM widecol.runs('tw12');
SELECT widecol.compact('tw12', true) AS written_major;
SELECT count(*) AS runs, sum(nrows) AS versions,
       bool_and(date_trunc('day', min_write_ts) = date_trunc('day', max_write_ts)) AS one_window_each,
       count(DISTINCT min_write_ts::date) AS days
  FROM widecol.runs('tw12');
SELECT count(*), count(DISTINCT v) FROM tw12;
SELECT * FROM tw12 WHERE k IN (1, 2, 13) ORDER BY k;

-- whole-run drop: a run whose rows all expired more than gc_grace ago is
-- dropped without being read, and no tombstone is written
CREATE TABLE ex (k int, v text) USING widecol
  WITH (widecol.partition_key = 'k', widecol.default_ttl = '1 day');
SELECT write_time('2020-01-01');
INSERT INTO ex SELECT g, 'expired long ago' FROM generate_series(1, 100) g;
SELECT widecol.flush('ex');
SELECT write_time(NULL);
INSERT INTO ex SELECT g, 'live' FROM generate_series(1001, 1010) g;
SELECT widecol.flush('ex');
SELECT count(*) AS live_rows FROM ex;
SELECT widecol.compact('ex') AS written;
SELECT count(*) AS runs, sum(nrows) AS versions, sum(ntombstones) AS tombstones FROM widecol.runs('ex');
SELECT kind, runs_in, runs_out, rows_in, rows_out, runs_dropped_whole, tombstones_purged
  FROM widecol.compactions WHERE "table" = 'ex'::regclass;
SELECT count(*) AS live_rows FROM ex;

-- ... but not when an older run may hold a live version of one of its keys:
-- dropping the expired version of key 5 would bring 'old' back
CREATE TABLE ex2 (k int, v text) USING widecol WITH (widecol.partition_key = 'k');
SELECT write_time('2019-06-01');
INSERT INTO ex2 VALUES (5, 'old'), (6, 'old');
SELECT widecol.flush('ex2');
ALTER TABLE ex2 SET (widecol.default_ttl = '1 day');
SELECT write_time('2020-01-01');
INSERT INTO ex2 VALUES (5, 'new, expired');
SELECT widecol.flush('ex2');
SELECT write_time(NULL);
SELECT * FROM ex2 ORDER BY k;
SELECT widecol.compact('ex2') AS written;
SELECT count(*) AS runs FROM widecol.runs('ex2');
SELECT count(*) AS dropped_whole FROM widecol.compactions WHERE "table" = 'ex2'::regclass;
SELECT * FROM ex2 ORDER BY k;
-- a major compaction sees both runs: the expired version and the one it
-- shadows both go
SELECT widecol.compact('ex2', true) AS written_major;
SELECT * FROM ex2 ORDER BY k;
SELECT kind, rows_in, rows_out, expired_purged, shadowed_dropped
  FROM widecol.compactions WHERE "table" = 'ex2'::regclass;

-- tombstone purge rule: a minor compaction keeps a tombstone (even past
-- gc_grace) while a run outside it may hold an older version of the key,
-- and purges one whose key no outside run can hold
CREATE TABLE gc (k int, v text) USING widecol
  WITH (widecol.partition_key = 'k', widecol.min_threshold = 2, widecol.max_threshold = 2);
INSERT INTO gc SELECT g, md5(g::text) || md5((g * 7)::text) FROM generate_series(1, 20000) g;
SELECT widecol.flush('gc');
DELETE FROM gc WHERE k = 1;
SELECT widecol.flush('gc');
INSERT INTO gc VALUES (30000, 'x');
SELECT widecol.flush('gc');
SET widecol.gc_grace = 0;
SELECT widecol.compact('gc') AS written;
SELECT level, nrows, ntombstones FROM widecol.runs('gc') ORDER BY run_id;
DELETE FROM gc WHERE k = 30000;
SELECT widecol.flush('gc');
SELECT widecol.compact('gc') AS written;
SELECT level, nrows, ntombstones FROM widecol.runs('gc') ORDER BY run_id;
SELECT kind, runs_in, rows_in, rows_out, tombstones_purged, shadowed_dropped
  FROM widecol.compactions WHERE "table" = 'gc'::regclass ORDER BY started;
SELECT count(*) AS rows, count(*) FILTER (WHERE k IN (1, 30000)) AS deleted_rows FROM gc;
-- with every run in the compaction the last tombstone goes too
SELECT widecol.compact('gc', true) > 0 AS compacted;
SELECT sum(ntombstones) AS tombstones FROM widecol.runs('gc');
SELECT count(*) AS rows, count(*) FILTER (WHERE k IN (1, 30000)) AS deleted_rows FROM gc;
SELECT bool_and(ok) AS verified FROM widecol.verify('gc');
RESET widecol.gc_grace;

-- single-run rewrites: a run of mostly tombstones is rewritten alone to
-- purge them once no other run can hold older versions of their keys ...
CREATE TABLE tb (k int, v text) USING widecol WITH (widecol.partition_key = 'k');
INSERT INTO tb SELECT g, 'x' FROM generate_series(1, 10) g;
SELECT widecol.flush('tb');
DELETE FROM tb WHERE k <= 5;
SELECT widecol.flush('tb');
SET widecol.gc_grace = 0;
-- the older run holds the deleted keys: the tombstone run is left alone
SELECT widecol.compact('tb') AS written;
SELECT level, nrows, ntombstones FROM widecol.runs('tb') ORDER BY run_id;
RESET widecol.gc_grace;
-- one run of 10 versions, 5 of them tombstones (kept: younger than gc_grace)
SELECT widecol.compact('tb', true) AS written_major;
SET widecol.gc_grace = 0;
SELECT widecol.compact('tb') AS written;
SELECT level, nrows, ntombstones FROM widecol.runs('tb');
SELECT kind, runs_in, runs_out, rows_in, rows_out, tombstones_purged
  FROM widecol.compactions WHERE "table" = 'tb'::regclass ORDER BY started;
SELECT * FROM tb ORDER BY k;
RESET widecol.gc_grace;
-- ... and a run with xids older than vacuum_freeze_min_age is rewritten
-- frozen (in place: same level), after which VACUUM moves relfrozenxid
CREATE TABLE fz (k int, v text) USING widecol WITH (widecol.partition_key = 'k');
INSERT INTO fz SELECT g, 'x' FROM generate_series(1, 10) g;
SELECT widecol.flush('fz');
SET vacuum_freeze_min_age = 0;
SELECT widecol.compact('fz') AS written;
SELECT widecol.compact('fz') AS written_again;
RESET vacuum_freeze_min_age;
SELECT level, nrows FROM widecol.runs('fz');
SELECT kind, runs_in, runs_out FROM widecol.compactions WHERE "table" = 'fz'::regclass;
VACUUM fz;
SELECT age(relfrozenxid) < 5 AS relfrozenxid_recent FROM pg_class WHERE relname = 'fz';

-- the idle merge waits for the workers to see a table take no writes for
-- widecol.idle_compaction_delay (a reload setting; TAP 022 shows the merge):
-- with no workers (this suite) three small runs stay, none pending, also
-- for widecol.compact
SHOW widecol.idle_compaction_delay;
SET widecol.idle_compaction_delay = '5s';
CREATE TABLE idl (k int, v text) USING widecol WITH (widecol.partition_key = 'k');
INSERT INTO idl VALUES (1, 'a'); SELECT widecol.flush('idl') > 0 AS flushed;
INSERT INTO idl VALUES (2, 'b'); SELECT widecol.flush('idl') > 0 AS flushed;
INSERT INTO idl VALUES (3, 'c'); SELECT widecol.flush('idl') > 0 AS flushed;
SELECT pending_runs FROM widecol.compaction_stats('idl');
SELECT widecol.compact('idl') AS written;
SELECT count(*) AS runs FROM widecol.runs('idl');

-- the history is the extension's, readable through the view
SELECT has_table_privilege('public', 'widecol.compaction_history', 'SELECT') AS public_reads_table,
       has_table_privilege('public', 'widecol.compactions', 'SELECT') AS public_reads_view;
DROP FUNCTION tw_run(timestamptz, int, text);
DROP TABLE st, tw, tw12, ex, ex2, gc, tb, fz, idl;
SET ROLE NONE;
DROP FUNCTION write_time(timestamptz);
RESET ROLE;
