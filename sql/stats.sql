-- Table statistics (like nodetool tablestats), the biggest partitions, the
-- bloom filter's false positives counted at read time, and the warning for
-- partitions written larger than widecol.partition_warn_size.
CREATE TABLE st (dev int, day int, seq int, v text) USING widecol
  WITH (widecol.partition_key = 'dev, day', widecol.clustering_key = 'seq');
INSERT INTO st SELECT g % 10, 1, g, repeat('x', 10 * (g % 10)) FROM generate_series(1, 1000) g;
INSERT INTO st SELECT 3, 2, g, 'big' || repeat('y', 500) FROM generate_series(1, 200) g;
DELETE FROM st WHERE dev = 1 AND seq < 100;
SET ROLE NONE;  -- the test clock is a superuser's
SET widecol.debug_clock_offset = 0;
RESET ROLE;
BEGIN;
SET LOCAL widecol.ttl = '1h';
INSERT INTO st VALUES (9, 9, 1, 'short-lived'), (9, 9, 2, 'short-lived');
COMMIT;
SELECT widecol.flush('st') > 0 AS flushed;
-- before expiry and after (30 days later: an earlier test file moved the
-- server's write clock up to 2 days ahead, and write times never go back)
SELECT live_rows, deleted_rows, expired_rows FROM widecol.row_stats('st');
SET ROLE NONE;  -- the test clock is a superuser's
SET widecol.debug_clock_offset = '30d';
RESET ROLE;
SELECT live_rows, deleted_rows, expired_rows FROM widecol.row_stats('st');
SET ROLE NONE;  -- the test clock is a superuser's
RESET widecol.debug_clock_offset;
RESET ROLE;
SELECT runs, runs_per_level, versions, tombstones, live_rows, deleted_rows, expired_rows,
       partitions, compression_ratio > 1 AS compressed, level0_pages, level0_bytes,
       total_bytes > 0 AS has_bytes, damaged, damage
  FROM widecol.table_stats('st');
-- a sound table has no damage marks (test/t/011_damaged_table.pl damages one)
SELECT * FROM widecol.damage('st');
-- the biggest partitions by bytes, with their rows
SELECT * FROM widecol.large_partitions('st', 3);
SELECT partition_key, live_rows FROM widecol.large_partitions('st') ORDER BY live_rows DESC, partition_key LIMIT 2;
SELECT count(*) AS all_partitions FROM widecol.large_partitions('st', 1000);
SELECT * FROM widecol.large_partitions('st', 0);
-- bloom filter: reads of partitions that are absent from every run (but
-- inside the runs' key ranges and the ranges of each key column: days 1-9)
-- are mostly rejected by the filter; a pass into a run that does not hold
-- the partition counts as a false positive
SET enable_seqscan = off;  -- seeks even on this small table
SELECT bloom_checks AS checks_before FROM widecol.row_stats('st') \gset
SELECT count(*) FROM st WHERE dev = 3 AND day = 2;
DO $$ BEGIN FOR i IN 1..200 LOOP PERFORM count(*) FROM st WHERE dev = 1 + i % 8 AND day = 3 + i % 6; END LOOP; END $$;
SELECT bloom_checks - :checks_before AS checks, bloom_negatives > 150 AS mostly_rejected,
       bloom_false_positives < 20 AS few_false_positives
  FROM widecol.row_stats('st');
SELECT bloom_false_positive_ratio < 0.5 AS ratio_low FROM widecol.table_stats('st');
-- the false-positive rate: four runs of 5,000 partitions each over the same
-- key range, then 5,000 lookups of absent keys within it (20,000 probes)
-- and 5,000 of keys in the second run (15,000 probes: its own and the two
-- newer runs'; the oldest run is older than the version found, and not
-- probed); at 16 bits per key about 0.1% pass (at 10 bits, about 1%: ~350)
CREATE TABLE st_bloom (k int, v int) USING widecol WITH (widecol.partition_key = 'k');
INSERT INTO st_bloom SELECT g * 8, g FROM generate_series(1, 5000) g;
INSERT INTO st_bloom SELECT g * 8 + 2, g FROM generate_series(1, 5000) g;
INSERT INTO st_bloom SELECT g * 8 + 4, g FROM generate_series(1, 5000) g;
INSERT INTO st_bloom SELECT g * 8 + 6, g FROM generate_series(1, 5000) g;
SELECT count(*) AS runs FROM widecol.runs('st_bloom');  -- each INSERT ... SELECT wrote one
SELECT bloom_checks AS c0, bloom_false_positives AS f0 FROM widecol.row_stats('st_bloom') \gset
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT count(*) AS found FROM generate_series(1, 5000) g JOIN st_bloom ON k = g * 8 + 1;
SELECT count(*) AS found FROM generate_series(1, 5000) g JOIN st_bloom ON k = g * 8 + 2;
SELECT bloom_checks - :c0 BETWEEN 34000 AND 36000 AS probed, bloom_false_positives - :f0 < 100 AS under_0_3_percent
  FROM widecol.row_stats('st_bloom');
RESET enable_hashjoin;
RESET enable_mergejoin;
DROP TABLE st_bloom;
RESET enable_seqscan;
-- a partition written over widecol.partition_warn_size warns once
SET widecol.partition_warn_size = 16;  -- kB
INSERT INTO st SELECT 5, 5, g, repeat('z', 200) FROM generate_series(1, 500) g;
SELECT widecol.flush('st') >= 0 AS flushed;
RESET widecol.partition_warn_size;
-- pending compaction and write amplification: four small runs wait for a
-- size-tiered merge; after it nothing waits, and the bytes written twice show
-- (amplification counts compressed bytes: the small runs' key pages are
-- lz4, as compaction writes them by default)
CREATE TABLE st_c (k int, v text) USING widecol
  WITH (widecol.partition_key = 'k', widecol.autocompact = off);
DO $$ BEGIN FOR i IN 1..4 LOOP
  INSERT INTO st_c SELECT g, repeat('v', 50) FROM generate_series(i * 1000, i * 1000 + 999) g;
END LOOP; END $$;
SELECT pending_runs, pending_bytes > 0 AS pending, bytes_ingested > 0 AS ingested,
       bytes_compacted, write_amplification FROM widecol.compaction_stats('st_c');
SELECT widecol.compact('st_c') > 0 AS compacted;
SELECT pending_runs, pending_bytes, bytes_compacted > 0 AS compacted,
       write_amplification BETWEEN 1.5 AND 2.5 AS amplification_about_2
  FROM widecol.compaction_stats('st_c');
SELECT pending_compaction_runs, write_amplification > 1 AS amplified FROM widecol.table_stats('st_c');
DROP TABLE st_c;
-- errors
SELECT * FROM widecol.large_partitions('pg_class', 3);
CREATE TABLE st_keyless (a int) USING widecol;
SELECT * FROM widecol.large_partitions('st_keyless', 3);
DROP TABLE st, st_keyless;
