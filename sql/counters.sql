-- Counter columns: a blind write (INSERT, COPY) adds to the counters of its
-- key instead of replacing them; the increments are summed at read time
-- (level 0 and runs alike) and by compaction.  UPDATE sets values.
CREATE TABLE daily (tag text, day date, n bigint, bytes bigint, label text) USING widecol
  WITH (widecol.partition_key = 'tag, day', widecol.counter_columns = 'n, bytes');
\d+ daily
INSERT INTO daily VALUES ('crack', '2026-01-01', 1, 100, 'first');
INSERT INTO daily VALUES ('crack', '2026-01-01', 1, 50, 'second');
INSERT INTO daily VALUES ('rust', '2026-01-01', 5, NULL, NULL);   -- NULL adds nothing
SELECT * FROM daily ORDER BY tag;
-- many increments, from INSERT ... SELECT and COPY, across flushes
INSERT INTO daily SELECT 'crack', '2026-01-01', 1, 10, 'bulk' FROM generate_series(1, 1000);
SELECT widecol.flush('daily') > 0 AS flushed;
COPY daily FROM STDIN;
crack	2026-01-01	2	20	copy
crack	2026-01-02	7	70	copy
\.
INSERT INTO daily VALUES ('crack', '2026-01-01', 3, 0, 'latest');
SELECT * FROM daily ORDER BY tag, day;
-- the same through a seek, forward and backward
SELECT * FROM daily WHERE tag = 'crack' AND day = '2026-01-01';
SELECT day, n FROM daily WHERE tag = 'crack' AND day IN ('2026-01-01', '2026-01-02') ORDER BY day DESC;
-- a rolled-back increment and one in a rolled-back savepoint never count
BEGIN;
INSERT INTO daily VALUES ('crack', '2026-01-01', 1000000, 0, 'rolled back');
ROLLBACK;
BEGIN;
INSERT INTO daily VALUES ('crack', '2026-01-01', 1, 0, 'kept');
SAVEPOINT s;
INSERT INTO daily VALUES ('crack', '2026-01-01', 1000000, 0, 'rolled back');
ROLLBACK TO s;
-- the transaction sees its own increment
SELECT n FROM daily WHERE tag = 'crack' AND day = '2026-01-01';
COMMIT;
SELECT n, bytes, label FROM daily WHERE tag = 'crack' AND day = '2026-01-01';
-- UPDATE sets (it read the sum); later increments add to what it set
UPDATE daily SET n = n * 10, label = 'updated' WHERE tag = 'crack' AND day = '2026-01-01';
SELECT n, bytes, label FROM daily WHERE tag = 'crack' AND day = '2026-01-01';
INSERT INTO daily VALUES ('crack', '2026-01-01', 5, 5, 'after update');
SELECT n, bytes, label FROM daily WHERE tag = 'crack' AND day = '2026-01-01';
UPDATE daily SET label = 'label only' WHERE tag = 'rust';
SELECT * FROM daily WHERE tag = 'rust';
-- DELETE resets: increments after it start from zero
DELETE FROM daily WHERE tag = 'crack' AND day = '2026-01-02';
INSERT INTO daily VALUES ('crack', '2026-01-02', 1, 1, 'again');
SELECT * FROM daily WHERE tag = 'crack' AND day = '2026-01-02';
-- a repeatable-read snapshot keeps its sum while others add
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT n FROM daily WHERE tag = 'rust';
SELECT widecol.flush('daily') >= 0 AS flushed;
COMMIT;
-- compaction keeps every increment: a minor compaction first (a strategy's merge), then a major one, which
-- folds every key's increments into one version
INSERT INTO daily VALUES ('rust', '2026-01-01', 2, 2, NULL), ('rust', '2026-01-01', 3, 3, NULL);
SELECT widecol.flush('daily') >= 0 AS flushed;
SELECT sum(n) AS total_before, sum(bytes) AS bytes_before FROM daily \gset
SELECT widecol.compact('daily') >= 0 AS compacted;
SELECT sum(n) = :total_before AS same_total, sum(bytes) = :bytes_before AS same_bytes FROM daily;
SELECT widecol.compact('daily', true) > 0 AS compacted;
SELECT sum(n) = :total_before AS same_total, sum(bytes) = :bytes_before AS same_bytes FROM daily;
SELECT sum(nrows) AS versions_left, (SELECT count(*) FROM daily) AS keys FROM widecol.runs('daily');
-- increments after the fold add to the folded sums
INSERT INTO daily VALUES ('rust', '2026-01-01', 1, 1, NULL);
SELECT n, bytes FROM daily WHERE tag = 'rust';
SELECT widecol.compact('daily', true) > 0 AS compacted;
SELECT n, bytes FROM daily WHERE tag = 'rust';
SELECT * FROM daily ORDER BY tag, day;
-- overflow is an error, not a wrap-around
INSERT INTO daily VALUES ('big', '2026-01-01', 9223372036854775807, 0, NULL);
INSERT INTO daily VALUES ('big', '2026-01-01', 1, 0, NULL);
SELECT * FROM daily WHERE tag = 'big';
DELETE FROM daily WHERE tag = 'big';
-- option errors
CREATE TABLE c_bad (k int, n int) USING widecol WITH (widecol.partition_key = 'k', widecol.counter_columns = 'n');
CREATE TABLE c_bad (k int, n bigint) USING widecol WITH (widecol.partition_key = 'k', widecol.counter_columns = 'k');
CREATE TABLE c_bad (k int, n bigint) USING widecol WITH (widecol.partition_key = 'k', widecol.counter_columns = 'm');
CREATE TABLE c_bad (k int, n bigint) USING widecol WITH (widecol.partition_key = 'k', widecol.counter_columns = 'n, n');
CREATE TABLE c_bad (k int, n bigint) USING widecol WITH (widecol.counter_columns = 'n');
ALTER TABLE daily RESET (widecol.counter_columns);
ALTER TABLE daily DROP COLUMN n;
ALTER TABLE daily ALTER COLUMN bytes TYPE numeric;
ALTER TABLE daily RENAME COLUMN n TO cnt;
ALTER TABLE daily DROP COLUMN label;   -- not a counter: fine
SELECT * FROM daily ORDER BY tag, day;
-- an empty table may change its counters
CREATE TABLE c_ok (k int, n bigint, m bigint) USING widecol WITH (widecol.partition_key = 'k');
ALTER TABLE c_ok SET (widecol.counter_columns = 'm');
INSERT INTO c_ok VALUES (1, 1, 1), (1, 1, 1);
SELECT * FROM c_ok;
DROP TABLE daily, c_ok;
