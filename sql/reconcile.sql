-- Scoped reconciliation of query tables: check_query_table,
-- query_table_diff and rebuild_query_table over a range of a column,
-- against the same figures computed on heap copies of the expected and
-- stored rows; the repair of one range leaves the others alone; counter
-- query tables too; direct writes into a query table are refused unless
-- widecol.allow_query_table_writes is on.
\set VERBOSITY default
\set SHOW_CONTEXT never
SET TimeZone = 'UTC';
SET max_parallel_workers_per_gather = 0;

CREATE TABLE ev (id int, cam text, taken timestamptz, tags text[])
  USING widecol WITH (widecol.partition_key = 'id');
-- id g: day 2025-01-01 + (g % 10)
INSERT INTO ev SELECT g, 'c' || (g % 5), timestamptz '2025-01-01' + (g % 10) * interval '1 day' + g * interval '1 minute',
                      ARRAY['t' || (g % 3)]
  FROM generate_series(1, 500) g;
SELECT widecol.create_query_table('ev_by_cam', 'ev',
  $$SELECT cam, widecol.day_bucket(taken) AS day, taken, id, tags FROM base$$, 'cam, day', 'taken, id');
SELECT widecol.create_query_table('ev_per_day', 'ev',
  $$SELECT widecol.day_bucket(taken) AS day, cam COLLATE "C" AS cam, count(*) AS n FROM base GROUP BY 1, 2$$,
  'day', 'cam', counters => 'n');

-- writes that do not come from the base are refused
DELETE FROM ev_by_cam WHERE id = 1;
INSERT INTO ev_per_day VALUES ('2025-01-01', 'c1', 1);
UPDATE ev_by_cam SET tags = '{}' WHERE cam = 'c1' AND day = '2025-01-02';
TRUNCATE ev_by_cam;
-- the base's own writes go on
INSERT INTO ev VALUES (501, 'c1', '2025-01-02 12:00+00', '{new}');
DELETE FROM ev WHERE id = 501;

-- damage on 2025-01-03 (ids 2, 12, ...) and 2025-01-08 (ids 7, 17, ...)
SET widecol.allow_query_table_writes = on;
DELETE FROM ev_by_cam WHERE id IN (2, 7) AND cam IN ('c2');
UPDATE ev_by_cam SET tags = '{x}' WHERE cam = 'c2' AND day IN ('2025-01-03', '2025-01-08') AND id IN (12, 17);
INSERT INTO ev_by_cam VALUES ('c9', '2025-01-03', '2025-01-03 05:00+00', 9999, '{}'),
                             ('c9', '2025-01-08', '2025-01-08 05:00+00', 9998, '{}');
INSERT INTO ev_per_day VALUES ('2025-01-03', 'c2', 5), ('2025-01-08', 'c2', -2), ('2025-01-08', 'c7', 1);
RESET widecol.allow_query_table_writes;

-- the reference: heap copies of the rows expected and stored
CREATE TABLE ev_expected AS SELECT cam, widecol.day_bucket(taken) AS day, taken, id, tags FROM ev;
CREATE TABLE ev_stored AS SELECT * FROM ev_by_cam;
CREATE FUNCTION ref_check(lo date, hi date)
RETURNS TABLE (expected_rows bigint, actual_rows bigint, missing bigint, extra bigint, different bigint)
LANGUAGE sql AS $$
  SELECT count(e.id), count(s.id), count(*) FILTER (WHERE s.id IS NULL), count(*) FILTER (WHERE e.id IS NULL),
         count(*) FILTER (WHERE e.id IS NOT NULL AND s.id IS NOT NULL AND e.tags IS DISTINCT FROM s.tags)
    FROM (SELECT * FROM ev_expected WHERE (day >= lo OR lo IS NULL) AND (day < hi OR hi IS NULL)) e
    FULL JOIN (SELECT * FROM ev_stored WHERE (day >= lo OR lo IS NULL) AND (day < hi OR hi IS NULL)) s
      ON (e.cam, e.day, e.taken, e.id) = (s.cam, s.day, s.taken, s.id)
$$;
SELECT r.lo, r.hi, c.expected_rows, c.actual_rows, c.missing, c.extra, c.different, c.ok,
       (c.expected_rows, c.actual_rows, c.missing, c.extra, c.different) = f AS same_as_heap
  FROM (VALUES (date '2025-01-01', date '2025-01-03'), ('2025-01-03', '2025-01-04'), ('2025-01-08', '2025-01-09'),
               ('2025-01-03', NULL), (NULL, '2025-01-08'), (NULL, NULL)) r(lo, hi),
       widecol.check_query_table('ev_by_cam', 'day', r.lo, r.hi) c, ref_check(r.lo, r.hi) f
 ORDER BY 1, 2;
-- bounds given as text are cast to the column's type; another column
SELECT expected_rows, missing, extra, different FROM widecol.check_query_table('ev_by_cam', 'taken', '2025-01-03', '2025-01-04');
SELECT status, key ->> 'id' AS id, expected ->> 'tags' AS expected_tags, actual ->> 'tags' AS actual_tags
  FROM widecol.query_table_diff('ev_by_cam', NULL, 'day', date '2025-01-03', date '2025-01-04');
SELECT count(*) FROM widecol.query_table_diff('ev_by_cam', 1, 'day', date '2025-01-03', date '2025-01-09');
-- counters: expected and stored sums per (day, camera), zeros absent
SELECT day, c.expected_rows, c.actual_rows, c.missing, c.extra, c.different
  FROM (VALUES (date '2025-01-03'), ('2025-01-08'), ('2025-01-05')) d(day),
       widecol.check_query_table('ev_per_day', 'day', d.day, d.day + 1) c ORDER BY 1;
-- bad ranges
SELECT * FROM widecol.check_query_table('ev_by_cam', 'nope', 1, 2);
SELECT * FROM widecol.check_query_table('ev_by_cam', NULL, date '2025-01-01', NULL);

-- repair one day: that day is right, the other damaged day is untouched
SELECT widecol.rebuild_query_table('ev_by_cam', 'day', date '2025-01-03', date '2025-01-04');
SELECT widecol.rebuild_query_table('ev_per_day', 'day', date '2025-01-03', date '2025-01-04');
SELECT object, ok FROM (
  SELECT 'ev_by_cam ' || d AS object, (widecol.check_query_table('ev_by_cam', 'day', d, d + 1)).ok FROM unnest(ARRAY[date '2025-01-03', '2025-01-08']) d
  UNION ALL
  SELECT 'ev_per_day ' || d, (widecol.check_query_table('ev_per_day', 'day', d, d + 1)).ok FROM unnest(ARRAY[date '2025-01-03', '2025-01-08']) d) x
 ORDER BY 1;
-- nothing left to do in that range: nothing written
SELECT widecol.rebuild_query_table('ev_by_cam', 'day', date '2025-01-03', date '2025-01-04');
-- the rest, everything
SELECT widecol.rebuild_query_table('ev_by_cam');
SELECT widecol.rebuild_query_table('ev_per_day');
SELECT ok FROM widecol.check_query_table('ev_by_cam');
SELECT ok FROM widecol.check_query_table('ev_per_day');
SELECT count(*) FROM (SELECT cam, widecol.day_bucket(taken) AS day, taken, id, tags FROM ev
                      EXCEPT SELECT * FROM ev_by_cam) x;
SELECT count(*) FROM (SELECT widecol.day_bucket(taken), cam, count(*) FROM ev GROUP BY 1, 2
                      EXCEPT SELECT * FROM ev_per_day WHERE n <> 0) x;

-- a query table without the base's key is derived again over the range
SELECT widecol.create_query_table('ev_cams', 'ev',
  $$SELECT DISTINCT cam, widecol.day_bucket(taken) AS day FROM base$$, 'cam', 'day');
SET widecol.allow_query_table_writes = on;
DELETE FROM ev_cams WHERE cam = 'c3';
RESET widecol.allow_query_table_writes;
SELECT missing FROM widecol.check_query_table('ev_cams', 'day', date '2025-01-01', date '2025-01-06');
SELECT widecol.rebuild_query_table('ev_cams', 'day', date '2025-01-01', date '2025-01-06');
SELECT missing FROM widecol.check_query_table('ev_cams');
SELECT widecol.rebuild_query_table('ev_cams');
SELECT ok FROM widecol.check_query_table('ev_cams');

DROP TABLE ev, ev_by_cam, ev_per_day, ev_cams, ev_expected, ev_stored;
DROP FUNCTION ref_check;
