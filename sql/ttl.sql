-- TTL: table default, per-write override, WRITETIME/TTL readers; expiry is
-- tested with widecol.debug_clock_offset instead of sleeping.
CREATE TABLE ev (device int, ts int, note text) USING widecol
  WITH (widecol.partition_key = 'device', widecol.clustering_key = 'ts',
        widecol.default_ttl = '1 day');
INSERT INTO ev VALUES (1, 1, 'table default');
BEGIN;
SET LOCAL widecol.ttl = '1h';
INSERT INTO ev VALUES (1, 2, 'one hour');
COPY ev FROM STDIN;
1	3	one hour by copy
\.
COMMIT;
SHOW widecol.ttl;
SET widecol.ttl = 0;
INSERT INTO ev VALUES (1, 4, 'never');
UPDATE ev SET note = 'never, updated' WHERE ts = 4;
RESET widecol.ttl;
-- remaining time and write time, in whole seconds
SELECT ts, note,
       widecol.ttl(tableoid, ctid) > interval '23 hours 59 min' AS ttl_1d,
       widecol.ttl(tableoid, ctid) BETWEEN interval '59 min' AND interval '1 hour' AS ttl_1h,
       widecol.ttl(tableoid, ctid) IS NULL AS no_ttl,
       widecol.writetime(tableoid, ctid) BETWEEN now() - interval '1 min' AND clock_timestamp() AS written_now
  FROM ev ORDER BY ts;
-- write times increase: an update is newer than the insert it replaces
CREATE TEMP TABLE wt AS SELECT widecol.writetime(tableoid, ctid) AS t FROM ev WHERE device = 1 AND ts = 1;
UPDATE ev SET note = 'table default, updated' WHERE device = 1 AND ts = 1;
SELECT widecol.writetime(tableoid, ctid) > (SELECT t FROM wt) AS newer FROM ev WHERE device = 1 AND ts = 1;
-- a COPY's rows take their write times a batch at a time (one range of the
-- clock per batch of up to 1,000 rows): distinct, in the file's order,
-- after the write before the COPY and before the one after it, each row's
-- TTL counted from its own time; a second COPY of the same keys wins.  Line
-- n of the file holds key (n * 7919) % 2503, so the keys come unordered.
-- The wall clock is set an hour back: every time then comes from the
-- shared clock's last one, so ranges handed out twice would collide.
SET ROLE NONE;  -- the test clock is a superuser's
SET widecol.debug_clock_offset = '-1h';
RESET ROLE;
CREATE TABLE cp (k int, n int, v text) USING widecol
  WITH (widecol.partition_key = 'k', widecol.default_ttl = '1 day');
INSERT INTO cp VALUES (0, 0, 'before');
\copy (SELECT (g * 7919) % 2503, g, 'first' FROM generate_series(1, 2500) g ORDER BY g) TO 'results/widecol_ttl_copy1.csv'
\copy (SELECT (g * 7919) % 2503, g, 'second' FROM generate_series(1, 2500) g ORDER BY g) TO 'results/widecol_ttl_copy2.csv'
\copy cp FROM 'results/widecol_ttl_copy1.csv'
INSERT INTO cp VALUES (9999, 9999, 'after');
CREATE TEMP VIEW cp_times AS
  SELECT k, n, v, widecol.writetime(tableoid, ctid) AS t, widecol.ttl(tableoid, ctid) AS time_left,
         lag(widecol.writetime(tableoid, ctid)) OVER (PARTITION BY tableoid ORDER BY n) AS prev
    FROM cp WHERE n BETWEEN 1 AND 2500;
SELECT count(*) AS copied, count(DISTINCT t) AS distinct_times,
       bool_and(t > prev) FILTER (WHERE prev IS NOT NULL) AS in_file_order,
       min(t) > (SELECT widecol.writetime(tableoid, ctid) FROM cp WHERE k = 0) AS after_before,
       max(t) < (SELECT widecol.writetime(tableoid, ctid) FROM cp WHERE k = 9999) AS before_after,
       bool_and(time_left > interval '23 hours 59 min') AS ttl_1d
  FROM cp_times;
\copy cp FROM 'results/widecol_ttl_copy2.csv'
SELECT v, count(*) FROM cp GROUP BY v ORDER BY v;
SELECT bool_and(ok) AS verified FROM widecol.verify('cp');
-- the same into a partitioned parent of two widecol partitions: COPY
-- buffers each partition's rows apart, so times are in file order within
-- each partition
CREATE TABLE cpp (k int, n int, v text) PARTITION BY RANGE (k);
CREATE TABLE cpp_lo PARTITION OF cpp FOR VALUES FROM (MINVALUE) TO (1250) USING widecol
  WITH (widecol.partition_key = 'k');
CREATE TABLE cpp_hi PARTITION OF cpp FOR VALUES FROM (1250) TO (MAXVALUE) USING widecol
  WITH (widecol.partition_key = 'k');
\copy cpp FROM 'results/widecol_ttl_copy1.csv'
SELECT count(*) AS copied, count(DISTINCT t) AS distinct_times,
       bool_and(t > prev) FILTER (WHERE prev IS NOT NULL) AS in_file_order_per_partition
  FROM (SELECT widecol.writetime(tableoid, ctid) AS t,
               lag(widecol.writetime(tableoid, ctid)) OVER (PARTITION BY tableoid ORDER BY n) AS prev
          FROM cpp) x;
SELECT count(*) FROM cpp WHERE k = 1249 OR k = 1250;
SET ROLE NONE;
RESET widecol.debug_clock_offset;
RESET ROLE;
DROP VIEW cp_times;
DROP TABLE cp, cpp;
-- after two hours the one-hour rows are gone, for seeks and full scans alike
SET ROLE NONE;  -- the test clock is a superuser's
SET widecol.debug_clock_offset = '2h';
RESET ROLE;
SELECT ts, note FROM ev WHERE device = 1 ORDER BY ts;
SELECT count(*) FROM ev;
EXPLAIN (COSTS OFF) SELECT ts, note FROM ev WHERE device = 1 ORDER BY ts;
-- ... also once flushed into a run
SELECT widecol.flush('ev') > 0 AS flushed;
SELECT ts, note FROM ev ORDER BY ts;
-- after two days only the row written with ttl 0 is left
SET ROLE NONE;  -- the test clock is a superuser's
SET widecol.debug_clock_offset = '2d';
RESET ROLE;
SELECT ts, note FROM ev ORDER BY ts;
-- an expired row cannot be updated or deleted: it is not there
UPDATE ev SET note = 'zombie' WHERE device = 1 AND ts = 1;
DELETE FROM ev WHERE device = 1 AND ts = 2;
-- writing the key again brings it back, with a fresh ttl
INSERT INTO ev VALUES (1, 1, 'rewritten');
SELECT ts, note, widecol.ttl(tableoid, ctid) > interval '23 hours' AS ttl_1d FROM ev ORDER BY ts;
-- compaction removes what has expired once gc_grace has passed
SET widecol.gc_grace = 0;
SELECT widecol.compact('ev', true) AS kept;
SELECT sum(nrows) AS versions_left FROM widecol.runs('ev');
RESET widecol.gc_grace;
SET ROLE NONE;  -- the test clock is a superuser's
RESET widecol.debug_clock_offset;
RESET ROLE;
-- errors
SET widecol.ttl = -5;
SET widecol.ttl = 'forever';
SELECT widecol.writetime('pg_class'::regclass, '(0,1)');
SET widecol.debug_clock_offset = '1h';  -- superuser only
-- a ctid that names no version
SELECT widecol.writetime('ev'::regclass, '(9999,1)') IS NULL AS no_version;
DROP TABLE ev;
