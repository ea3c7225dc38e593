-- widecol demo schema: image metadata, one query table per access pattern
-- (the Cassandra way).  Run by test/demo.sh; safe to re-run by hand.

CREATE EXTENSION IF NOT EXISTS widecol;

\set QUIET on
SET client_min_messages = warning;  -- no "does not exist, skipping" notices
DROP TABLE IF EXISTS device_daily_images, images_by_tag;
RESET client_min_messages;
\set QUIET off

-- All images of one camera on one day form a partition; inside it rows are
-- kept newest first, so "latest N images of device D on day X" is a seek
-- plus a short sequential read.
CREATE TABLE device_daily_images (
    device_id text, day_bucket date, capture_time timestamptz, image_id uuid,
    object_store text, object_key text, width int, height int, content_hash text
) USING widecol WITH (
    widecol.partition_key  = 'device_id, day_bucket',
    widecol.clustering_key = 'capture_time DESC, image_id DESC'
    -- TTL and time-window compaction arrive with the maintenance issue;
    -- then add (as in the design brief):
    -- , widecol.default_ttl       = '90 days'
    -- , widecol.compaction        = 'time_window'
    -- , widecol.compaction_window = '1 day'
);

-- One row per (tag, image): "images tagged T on day X, newest first".
CREATE TABLE images_by_tag (
    tag text, day_bucket date, capture_time timestamptz, image_id uuid,
    device_id text, object_key text
) USING widecol WITH (
    widecol.partition_key  = 'tag, day_bucket',
    widecol.clustering_key = 'capture_time DESC, image_id DESC'
);

\d+ device_daily_images
