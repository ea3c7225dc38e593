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

CREATE FUNCTION widecol.compact(rel regclass) RETURNS bigint
    AS 'MODULE_PATHNAME', 'widecol_compact' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.compact(regclass) IS
    'merge all runs of a widecol table into one: drop shadowed and aborted versions, freeze xids, purge tombstones and expired rows older than widecol.gc_grace; returns the number of row versions kept';

-- WRITETIME() and TTL() of Cassandra: pass the row's tableoid and ctid,
-- e.g. SELECT widecol.writetime(tableoid, ctid) FROM t WHERE ...
CREATE FUNCTION widecol.writetime(rel regclass, version tid) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'widecol_writetime' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.writetime(regclass, tid) IS
    'when the row version at this ctid was written (Cassandra''s WRITETIME)';

CREATE FUNCTION widecol.ttl(rel regclass, version tid) RETURNS interval
    AS 'MODULE_PATHNAME', 'widecol_ttl' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.ttl(regclass, tid) IS
    'time left before the row version at this ctid expires, NULL if it never does (Cassandra''s TTL)';

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
