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

-- The manifest: one row per sorted run ('r'), per run being written or not
-- yet freed ('w'), per dropped run not yet freed ('d') and per retired level-0
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
    nexternal        bigint,            -- versions with values out of line
    key_ranges       bytea,             -- key-column ranges (run format 4)
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

CREATE FUNCTION widecol.garbagecollect(rel regclass) RETURNS bigint
    AS 'MODULE_PATHNAME', 'widecol_garbagecollect' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.garbagecollect(regclass) IS
    'Cassandra''s nodetool garbagecollect: flush level 0, then rewrite each run alone, purging the tombstones and expired rows the table''s gc_grace allows and dropping shadowed and aborted versions, without merging runs; returns the number of row versions written';

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
    'pages of the level-0 generations of a widecol table that are not flushed yet (as the caller''s snapshot sees them)';

CREATE FUNCTION widecol.runs(rel regclass)
RETURNS TABLE (run_id bigint, level int, npages bigint, nrows bigint,
               ntombstones bigint, npartitions bigint, raw_bytes bigint,
               compressed_bytes bigint, min_write_ts timestamptz,
               max_write_ts timestamptz, out_of_line bigint)
    AS 'MODULE_PATHNAME', 'widecol_runs' LANGUAGE C STRICT STABLE;
COMMENT ON FUNCTION widecol.runs(regclass) IS 'the sorted runs of a widecol table with their summaries (out_of_line: versions with values in the TOAST relation)';

CREATE FUNCTION widecol.range_tombstones(rel regclass)
RETURNS TABLE (partition_key text, whole_partition boolean, rows_deleted bigint, written timestamptz)
    AS 'MODULE_PATHNAME', 'widecol_range_tombstones' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.range_tombstones(regclass) IS
    'the range tombstones of a widecol table: one per partition a DELETE of whole partitions or clustering ranges removed, until compaction purges it';

CREATE FUNCTION widecol.verify(rel regclass)
RETURNS TABLE (segment text, id bigint, pages bigint, rows bigint, ok boolean, problems text)
    AS 'MODULE_PATHNAME', 'widecol_verify' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.verify(regclass) IS
    'check every run (checksums, order, index, bloom filter, summary) and level-0 page of a widecol table';

CREATE FUNCTION widecol.row_stats(rel regclass,
    OUT live_rows bigint, OUT deleted_rows bigint, OUT expired_rows bigint,
    OUT bloom_checks bigint, OUT bloom_negatives bigint, OUT bloom_false_positives bigint)
    AS 'MODULE_PATHNAME', 'widecol_row_stats' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.row_stats(regclass) IS
    'keys decided by a live, deleted or expired version (a full read of the table), and bloom filter counters since the server started';

CREATE FUNCTION widecol.compaction_stats(rel regclass,
    OUT pending_runs bigint, OUT pending_bytes bigint,
    OUT bytes_ingested bigint, OUT bytes_compacted bigint, OUT write_amplification numeric)
    AS 'MODULE_PATHNAME', 'widecol_compaction_stats' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.compaction_stats(regclass) IS
    'runs and compressed bytes the table''s compaction strategy would merge now; bytes written into runs by flushes and bulk writes and by compactions, and their write amplification';

CREATE FUNCTION widecol.large_partitions(rel regclass, n int DEFAULT 10)
RETURNS TABLE (partition_key text, live_rows bigint, bytes bigint)
    AS 'MODULE_PATHNAME', 'widecol_large_partitions' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.large_partitions(regclass, int) IS
    'the n biggest partitions of a widecol table by the bytes of their live rows (a full read of the table)';

-- Segments of a table whose pages failed their checks, found by the
-- background worker (a failed compaction) or by widecol.verify.  While a
-- table has rows here, maintenance leaves it alone.  Keyed by relfilenode
-- too: a TRUNCATE or a rewrite gives the table new, undamaged storage.
CREATE TABLE widecol.damage (
    relid        oid NOT NULL,
    relfilenode  oid NOT NULL,
    segment      text NOT NULL,          -- run, level0, metapage, page
    id           bigint NOT NULL,        -- run id or level-0 generation (0: unknown)
    block        bigint,
    problem      text NOT NULL,
    found        timestamptz NOT NULL,
    PRIMARY KEY (relid, relfilenode, segment, id)
);
REVOKE ALL ON widecol.damage FROM PUBLIC;

CREATE FUNCTION widecol.damage(rel regclass)
RETURNS TABLE (segment text, id bigint, block bigint, problem text, found timestamptz)
    AS 'MODULE_PATHNAME', 'widecol_damage' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.damage(regclass) IS
    'segments of a widecol table found damaged by the background worker or widecol.verify; maintenance skips the table while any are listed, and a verify that finds no problem clears them';

-- This backend's caches (level-0 generations, index and bloom pages, run
-- reader buffers): what they hold and how often they answered.
CREATE FUNCTION widecol.backend_caches(OUT cache text, OUT entries bigint, OUT bytes bigint,
                                       OUT limit_bytes bigint, OUT hits bigint, OUT misses bigint,
                                       OUT evictions bigint)
RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'widecol_backend_caches' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.backend_caches() IS
    'this backend''s widecol caches: entries, bytes and their limit, hits, misses, evictions';

-- The widecol tables a table stands for in the functions below: the table
-- itself, or the widecol partitions of a partitioned table.
CREATE FUNCTION widecol.partitions(rel regclass) RETURNS SETOF regclass
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF (SELECT relkind FROM pg_catalog.pg_class WHERE oid = rel) <> 'p' THEN
        RETURN NEXT rel;        -- the functions it is passed to check it is widecol
        RETURN;
    END IF;
    RETURN QUERY SELECT t.relid FROM pg_catalog.pg_partition_tree(rel) t
                   JOIN pg_catalog.pg_class c ON c.oid = t.relid
                   JOIN pg_catalog.pg_am a ON a.oid = c.relam
                  WHERE t.isleaf AND a.amname = 'widecol'
                  ORDER BY t.level, t.relid::text;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'partitioned table "%" has no widecol partitions', rel
            USING ERRCODE = 'wrong_object_type';
    END IF;
END $$;
COMMENT ON FUNCTION widecol.partitions(regclass) IS
    'the table itself if it is a widecol table, else the widecol partitions of a partitioned table';

-- A summary of a table's storage, like `nodetool tablestats`.  Run figures
-- come from the run summaries; live/deleted/expired rows from a full read
-- with the caller's snapshot; bloom filter counters from reads since the
-- server started (a false positive: the filter let a read into a run that
-- held no row of the partition).
CREATE FUNCTION widecol._table_stats(rel regclass)
RETURNS TABLE (runs bigint, runs_per_level jsonb, versions bigint, tombstones bigint,
               live_rows bigint, deleted_rows bigint, expired_rows bigint,
               partitions bigint, raw_bytes bigint, compressed_bytes bigint,
               level0_pages int, level0_bytes bigint,
               bloom_checks bigint, bloom_false_positives bigint,
               pending_compaction_runs bigint, pending_compaction_bytes bigint,
               total_bytes bigint, damaged boolean, damage text, range_tombstones bigint,
               bloom_negatives bigint, bytes_ingested bigint, bytes_compacted bigint)
LANGUAGE sql VOLATILE AS $$
    WITH r AS (SELECT * FROM widecol.runs(rel)),
         s AS (SELECT * FROM widecol.row_stats(rel)),
         c AS (SELECT * FROM widecol.compaction_stats(rel))
    SELECT (SELECT count(*) FROM r),
           coalesce((SELECT jsonb_object_agg(level, n ORDER BY level)
                       FROM (SELECT level, count(*) AS n FROM r GROUP BY level) l), '{}'),
           (SELECT coalesce(sum(nrows), 0)::bigint FROM r),
           (SELECT coalesce(sum(ntombstones), 0)::bigint FROM r),
           s.live_rows, s.deleted_rows, s.expired_rows,
           (SELECT coalesce(sum(npartitions), 0)::bigint FROM r),
           (SELECT coalesce(sum(raw_bytes), 0)::bigint FROM r),
           (SELECT coalesce(sum(compressed_bytes), 0)::bigint FROM r),
           widecol.level0_pages(rel),
           widecol.level0_pages(rel)::bigint * current_setting('block_size')::bigint,
           s.bloom_checks, s.bloom_false_positives,
           c.pending_runs, c.pending_bytes,
           pg_total_relation_size(rel),
           d.n > 0, d.first,
           (SELECT count(*) FROM widecol.range_tombstones(rel)),
           s.bloom_negatives, c.bytes_ingested, c.bytes_compacted
      FROM s, c,
           (SELECT count(*) AS n,
                   min(segment || CASE WHEN segment = 'page' THEN '' ELSE ' ' || id END  -- page: PostgreSQL's message names it
                       || coalesce(', block ' || block, '') || ': ' || problem) AS first
              FROM widecol.damage(rel)) d
$$;
CREATE FUNCTION widecol.table_stats(rel regclass)
RETURNS TABLE (runs bigint, runs_per_level jsonb, versions bigint, tombstones bigint,
               live_rows bigint, deleted_rows bigint, expired_rows bigint,
               partitions bigint, raw_bytes bigint, compressed_bytes bigint,
               compression_ratio numeric, level0_pages int, level0_bytes bigint,
               bloom_checks bigint, bloom_false_positives bigint,
               bloom_false_positive_ratio numeric, pending_compaction_runs bigint,
               pending_compaction_bytes bigint, write_amplification numeric,
               total_bytes bigint, damaged boolean, damage text, range_tombstones bigint)
LANGUAGE sql VOLATILE AS $$
    -- a widecol table, or the sum over the widecol partitions of a partitioned one
    WITH t AS (SELECT p, s.* FROM widecol.partitions(rel) p, widecol._table_stats(p) s),
         l AS (SELECT e.key::int AS level, sum(e.value::bigint) AS n
                 FROM t, jsonb_each_text(t.runs_per_level) e GROUP BY e.key)
    SELECT sum(t.runs)::bigint,
           coalesce((SELECT jsonb_object_agg(level, n ORDER BY level) FROM l), '{}'),
           sum(t.versions)::bigint, sum(t.tombstones)::bigint,
           sum(t.live_rows)::bigint, sum(t.deleted_rows)::bigint, sum(t.expired_rows)::bigint,
           sum(t.partitions)::bigint, sum(t.raw_bytes)::bigint, sum(t.compressed_bytes)::bigint,
           round(sum(t.raw_bytes)::numeric / nullif(sum(t.compressed_bytes), 0), 2),
           sum(t.level0_pages)::int, sum(t.level0_bytes)::bigint,
           sum(t.bloom_checks)::bigint, sum(t.bloom_false_positives)::bigint,
           round(sum(t.bloom_false_positives)::numeric / nullif(sum(t.bloom_checks) - sum(t.bloom_negatives), 0), 4),
           sum(t.pending_compaction_runs)::bigint, sum(t.pending_compaction_bytes)::bigint,
           round((sum(t.bytes_ingested) + sum(t.bytes_compacted))::numeric / nullif(sum(t.bytes_ingested), 0), 2),
           sum(t.total_bytes)::bigint,
           bool_or(t.damaged),
           min(coalesce(CASE WHEN t.p <> rel THEN t.p::text || ': ' END, '') || t.damage),
           sum(t.range_tombstones)::bigint
      FROM t
$$;
COMMENT ON FUNCTION widecol._table_stats(regclass) IS 'the figures widecol.table_stats sums, of one widecol table (it computes the ratios from the sums)';
COMMENT ON FUNCTION widecol.table_stats(regclass) IS
    'of a widecol table, or summed over the widecol partitions of a partitioned table: runs (per level), versions and tombstones in runs, live/deleted/expired rows, partitions, raw and compressed bytes and their ratio, level-0 size, bloom filter false positives, pending compaction, write amplification, total bytes of a widecol table; whether it is damaged (see widecol.damage)';
