-- widecol demo schema: an image store (widecol.create_image_store), the
-- image-metadata model of the design brief.  Run by test/demo.sh; safe to
-- re-run by hand (it drops the schema img first).

CREATE EXTENSION IF NOT EXISTS widecol;

\set QUIET on
SET client_min_messages = warning;  -- no "drop cascades to ..." notices
DROP SCHEMA IF EXISTS img CASCADE;
RESET client_min_messages;
\set QUIET off

-- images             base table, one partition per image id: the only table
--                    the application writes (here: the demo's COPY)
-- device_daily_images query table: (device_id, day) partitions, newest first
-- images_by_tag       query table: one row per (tag, image), (tag, day) partitions
-- batch_images        query table: the images of an upload batch
-- daily_counts        counter table: images per day and device, tag, in total
-- The query tables and the counters are kept in step with images by
-- statement triggers, in the same transaction.  TTL and time-window compaction can be added with
-- widecol.create_image_store('img', ttl => '90 days').
SELECT * FROM widecol.create_image_store('img');

\d+ img.images
SELECT query_table, base, partition_key, clustering_key, definition
  FROM widecol.query_table ORDER BY id;
