-- widecol 0.1.0: wide-column LSM table access method
\echo Use "CREATE EXTENSION widecol" to load this file. \quit

-- Refuse to install unless the library was preloaded: the option hook and the
-- shared write clock need shared_preload_libraries.
CREATE FUNCTION widecol._assert_preloaded() RETURNS void
    AS 'MODULE_PATHNAME', 'widecol_assert_preloaded' LANGUAGE C STRICT;
SELECT widecol._assert_preloaded();

CREATE FUNCTION widecol.widecol_am_handler(internal) RETURNS table_am_handler
    AS 'MODULE_PATHNAME', 'widecol_am_handler' LANGUAGE C STRICT;
CREATE ACCESS METHOD widecol TYPE TABLE HANDLER widecol.widecol_am_handler;
COMMENT ON ACCESS METHOD widecol IS 'wide-column LSM table access method';

-- Storage ids name a relfilenode's manifest rows (kept in its metapage).
CREATE SEQUENCE widecol.storage_id_seq;

-- The manifest: one row per sorted run ('r') and per retired level-0
-- generation ('f').  Heap MVCC on these rows publishes and drops runs
-- atomically.  See src/README.md.
CREATE TABLE widecol.segment (
    storage_id       bigint NOT NULL,
    segment_id       bigint NOT NULL,
    kind             "char" NOT NULL,
    level            int,
    header_block     bigint,
    npages           bigint,
    nrows            bigint,
    ntombstones      bigint,
    npartitions      bigint,
    raw_bytes        bigint,
    compressed_bytes bigint,
    min_write_ts     timestamptz,
    max_write_ts     timestamptz,
    max_expire       timestamptz,
    min_xid          bigint,
    max_xid          bigint,
    min_key          bytea,
    max_key          bytea,
    PRIMARY KEY (storage_id, kind, segment_id)
);
REVOKE ALL ON widecol.segment FROM PUBLIC;

CREATE FUNCTION widecol.flush(rel regclass) RETURNS bigint
    AS 'MODULE_PATHNAME', 'widecol_flush' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.flush(regclass) IS
    'write level 0 of a widecol table into a sorted run; returns the number of row versions written';

CREATE FUNCTION widecol.compact(rel regclass, major boolean DEFAULT false) RETURNS bigint
    AS 'MODULE_PATHNAME', 'widecol_compact' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.compact(regclass, boolean) IS
    'flush level 0, drop runs whose rows have all expired, then run the table''s compaction strategy once (major = false) or merge all runs into one (major = true): drop shadowed and aborted versions, freeze xids, purge tombstones and expired rows older than widecol.gc_grace; returns the number of row versions written';

CREATE FUNCTION widecol.storage_id(rel regclass) RETURNS bigint
    AS 'MODULE_PATHNAME', 'widecol_storage_id' LANGUAGE C STRICT STABLE;

CREATE FUNCTION widecol.level0_pages(rel regclass) RETURNS int
    AS 'MODULE_PATHNAME', 'widecol_level0_pages' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.level0_pages(regclass) IS
    'pages in the active level-0 generation of a widecol table';

CREATE FUNCTION widecol.runs(rel regclass)
RETURNS TABLE (run_id bigint, level int, npages bigint, nrows bigint,
               ntombstones bigint, npartitions bigint, raw_bytes bigint,
               compressed_bytes bigint, min_write_ts timestamptz,
               max_write_ts timestamptz)
    AS 'MODULE_PATHNAME', 'widecol_runs' LANGUAGE C STRICT STABLE;
COMMENT ON FUNCTION widecol.runs(regclass) IS 'the sorted runs of a widecol table with their summaries';

CREATE FUNCTION widecol.verify(rel regclass)
RETURNS TABLE (segment text, id bigint, pages bigint, rows bigint, ok boolean, problems text)
    AS 'MODULE_PATHNAME', 'widecol_verify' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.verify(regclass) IS
    'check every run (checksums, order, index, bloom filter, summary) and level-0 page of a widecol table';

-- A summary of a table's storage, like `nodetool tablestats` (the
-- maintenance issue adds live/expired rows, bloom filter false positives,
-- pending compaction and write amplification).
CREATE FUNCTION widecol.table_stats(rel regclass)
RETURNS TABLE (runs bigint, levels int[], versions bigint, tombstones bigint,
               partitions bigint, raw_bytes bigint, compressed_bytes bigint,
               compression_ratio numeric, level0_pages int, total_bytes bigint)
LANGUAGE sql STABLE AS $$
    SELECT count(*),
           coalesce(array_agg(DISTINCT r.level ORDER BY r.level) FILTER (WHERE r.level IS NOT NULL), '{}'),
           coalesce(sum(r.nrows), 0)::bigint,
           coalesce(sum(r.ntombstones), 0)::bigint,
           coalesce(sum(r.npartitions), 0)::bigint,
           coalesce(sum(r.raw_bytes), 0)::bigint,
           coalesce(sum(r.compressed_bytes), 0)::bigint,
           round(sum(r.raw_bytes)::numeric / nullif(sum(r.compressed_bytes), 0), 2),
           widecol.level0_pages(rel),
           pg_total_relation_size(rel)
      FROM widecol.runs(rel) r
$$;
COMMENT ON FUNCTION widecol.table_stats(regclass) IS
    'runs, versions, tombstones, partitions (summed over runs), raw and compressed bytes and their ratio, level-0 pages, total bytes of a widecol table';

-- maintenance (bgworker branch)

-- One row per compaction and per whole-run drop of expired runs, written in
-- the compaction's own transaction (so only committed work is listed).  Not
-- marked with pg_extension_config_dump: it is an operational log whose OIDs
-- mean nothing in another cluster; pg_dump leaves it out.
CREATE TABLE widecol.compaction_history (
    relid              oid NOT NULL,
    relname            text NOT NULL,        -- schema-qualified, at the time
    strategy           text NOT NULL,        -- the table's: size_tiered, time_window
    kind               text NOT NULL,        -- major, minor, freeze, tombstones, expired_runs
    started            timestamptz NOT NULL,
    finished           timestamptz NOT NULL,
    runs_in            int NOT NULL,
    runs_out           int NOT NULL,
    rows_in            bigint NOT NULL,      -- row versions
    rows_out           bigint NOT NULL,
    bytes_in           bigint NOT NULL,      -- compressed
    bytes_out          bigint NOT NULL,
    tombstones_purged  bigint NOT NULL,
    expired_purged     bigint NOT NULL,
    shadowed_dropped   bigint NOT NULL,      -- older and aborted versions
    runs_dropped_whole int NOT NULL,         -- expired runs dropped unread
    by_worker          boolean NOT NULL
);
REVOKE ALL ON widecol.compaction_history FROM PUBLIC;
COMMENT ON TABLE widecol.compaction_history IS
    'one row per compaction or whole-run drop of a widecol table (see the view widecol.compactions)';

CREATE VIEW widecol.compactions AS
    SELECT h.relid::regclass AS "table", h.relname, h.strategy, h.kind,
           h.started, h.finished, h.finished - h.started AS duration,
           h.runs_in, h.runs_out, h.rows_in, h.rows_out, h.bytes_in, h.bytes_out,
           h.tombstones_purged, h.expired_purged, h.shadowed_dropped,
           h.runs_dropped_whole, h.by_worker
      FROM widecol.compaction_history h
     WHERE pg_has_role(coalesce((SELECT c.relowner FROM pg_class c WHERE c.oid = h.relid),
                                (SELECT d.datdba FROM pg_database d WHERE d.datname = current_database())),
                       'USAGE');
GRANT SELECT ON widecol.compactions TO PUBLIC;
COMMENT ON VIEW widecol.compactions IS
    'compaction history of the widecol tables the current user owns (all of them for superusers), oldest first by started';
