-- capacity estimates: the worked example (300-byte rows, 50 million a day,
-- replication factor 3, 30 days, compression 2-3x), and the form that
-- measures row size and compression from a table's runs.
\set VERBOSITY default
\set SHOW_CONTEXT never

-- 15 GB raw a day, 45 GB replicated, 20 GB stored (2.25x), 600 GB for 30 days
SELECT * FROM widecol.capacity_estimate(300, 50000000, 30, 3, 2.25, 1.5);
-- compression 2x and 3x bracket it; headroom 2
SELECT c.ratio, e.figure, e.pretty
  FROM (VALUES (2.0), (3.0)) c(ratio),
       widecol.capacity_estimate(avg_row_bytes => 300, rows_per_day => 50e6, retention_days => 30,
                                 compression_ratio => c.ratio, headroom => 2) e
 WHERE e.step IN (3, 4, 5) ORDER BY 1, e.step;
-- defaults: replication factor 3, no compression, headroom 1.5
SELECT figure, bytes, pretty FROM widecol.capacity_estimate(300, 50000000, 30);
SELECT widecol.pretty_bytes(b) FROM unnest(ARRAY[0, 999, 1000, 1500000, 2.5e9, 7.25e12, 1e15, 3e18]::numeric[]) b;
-- bad input
SELECT * FROM widecol.capacity_estimate(0, 50000000, 30);
SELECT * FROM widecol.capacity_estimate(300, 50000000, 30, 0);
SELECT * FROM widecol.capacity_estimate(300, 50000000, 30, 3, 2, 0.5);

-- measured from a table
CREATE TABLE cap (device_id text, day date, capture_time timestamptz, image_id int, object_key text, width int, height int)
  USING widecol WITH (widecol.partition_key = 'device_id, day', widecol.clustering_key = 'capture_time DESC, image_id');
SELECT * FROM widecol.capacity_estimate('cap'::regclass, 50e6, 30);
INSERT INTO cap SELECT 'cam-' || (i % 20), date '2025-01-01' + i / 5000, timestamptz '2025-01-01 00:00+00' + i * interval '17 seconds',
                       i, format('raw/cam-%s/2025/01/%s.jpg', i % 20, i), 1920, 1080
  FROM generate_series(1, 20000) i;
SELECT widecol.flush('cap') >= 0 AS flushed;
-- the figures follow from the measured row size and compression ratio
WITH st AS (SELECT sum(nrows) AS versions, sum(raw_bytes) AS raw_bytes, sum(compressed_bytes) AS compressed_bytes FROM widecol.runs('cap')),
     e AS (SELECT * FROM widecol.capacity_estimate('cap'::regclass, 50e6, 30))
SELECT e.step, e.figure,
       CASE e.step
         WHEN 0 THEN e.bytes = round(st.raw_bytes::numeric / st.versions)
         WHEN 1 THEN e.bytes = round(st.raw_bytes::numeric / st.versions * 50e6)
         WHEN 2 THEN e.bytes = round(st.raw_bytes::numeric / st.versions * 50e6 * 3)
         WHEN 3 THEN abs(e.bytes - st.raw_bytes::numeric / st.versions * 50e6 * 3 * st.compressed_bytes / st.raw_bytes) <= 1
         WHEN 4 THEN abs(e.bytes - st.raw_bytes::numeric / st.versions * 50e6 * 3 * st.compressed_bytes / st.raw_bytes * 30) <= 1
         WHEN 5 THEN abs(e.bytes - (SELECT bytes FROM e WHERE step = 4) / 2) <= 1
         WHEN 6 THEN abs(e.bytes - (SELECT bytes FROM e WHERE step = 4) * 1.5) <= 1
         WHEN 7 THEN abs(e.bytes - (SELECT bytes FROM e WHERE step = 4) * 1.5 * 1.25) <= 2
       END AS matches,
       e.formula LIKE CASE e.step WHEN 0 THEN 'raw bytes / row versions of the runs of cap%'
                                  WHEN 5 THEN 'size_tiered: the largest tier%' ELSE '%' END AS formula_ok
  FROM e, st ORDER BY e.step;
SELECT (SELECT bytes FROM widecol.capacity_estimate('cap'::regclass, 50e6, 30) WHERE step = 0) BETWEEN 40 AND 200 AS plausible_row_size;
-- replication factor and headroom
SELECT figure, formula FROM widecol.capacity_estimate('cap'::regclass, 1000, 7, 1, 2) WHERE step IN (2, 7) ORDER BY step;
SELECT * FROM widecol.capacity_estimate('pg_class'::regclass, 1000, 7);
DROP TABLE cap;
