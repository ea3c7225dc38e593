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
    segment      text NOT NULL,          -- run, level0, metapage
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

-- A summary of a table's storage, like `nodetool tablestats`.  Run figures
-- come from the run summaries; live/deleted/expired rows from a full read
-- with the caller's snapshot; bloom filter counters from reads since the
-- server started (a false positive: the filter let a read into a run that
-- held no row of the partition).
CREATE FUNCTION widecol.table_stats(rel regclass)
RETURNS TABLE (runs bigint, runs_per_level jsonb, versions bigint, tombstones bigint,
               live_rows bigint, deleted_rows bigint, expired_rows bigint,
               partitions bigint, raw_bytes bigint, compressed_bytes bigint,
               compression_ratio numeric, level0_pages int, level0_bytes bigint,
               bloom_checks bigint, bloom_false_positives bigint,
               bloom_false_positive_ratio numeric, pending_compaction_runs bigint,
               pending_compaction_bytes bigint, write_amplification numeric,
               total_bytes bigint, damaged boolean, damage text)
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
           (SELECT round(sum(raw_bytes)::numeric / nullif(sum(compressed_bytes), 0), 2) FROM r),
           widecol.level0_pages(rel),
           widecol.level0_pages(rel)::bigint * current_setting('block_size')::bigint,
           s.bloom_checks, s.bloom_false_positives,
           round(s.bloom_false_positives::numeric / nullif(s.bloom_checks - s.bloom_negatives, 0), 4),
           c.pending_runs, c.pending_bytes, c.write_amplification,
           pg_total_relation_size(rel),
           d.n > 0, d.first
      FROM s, c,
           (SELECT count(*) AS n,
                   min(segment || ' ' || id || coalesce(', block ' || block, '') || ': ' || problem) AS first
              FROM widecol.damage(rel)) d
$$;
COMMENT ON FUNCTION widecol.table_stats(regclass) IS
    'runs (per level), versions and tombstones in runs, live/deleted/expired rows, partitions, raw and compressed bytes and their ratio, level-0 size, bloom filter false positives, pending compaction, write amplification, total bytes of a widecol table; whether it is damaged (see widecol.damage)';


-- ======================================================================
-- image-metadata API (imageapi branch)
--
-- Query tables (derived widecol tables kept in step with a base table by
-- statement-level triggers), the image store built from them, time-bucket
-- helpers and capacity estimates.  Written in SQL and PL/pgSQL; see the
-- "Query tables" and "Image store" sections of src/README.md.
-- ======================================================================

-- ---------------------------------------------------------------------
-- Query table catalog
-- ---------------------------------------------------------------------

-- One row per query table.  The rows are user data (pg_dump must restore
-- them: pg_extension_config_dump below); the base table's triggers name the
-- row by id, so both survive renames of either table.
CREATE SEQUENCE widecol.query_table_id_seq AS integer;
CREATE TABLE widecol.query_table (
    id             integer PRIMARY KEY DEFAULT nextval('widecol.query_table_id_seq'),
    query_table    regclass NOT NULL UNIQUE,
    base           regclass NOT NULL,
    definition     text NOT NULL,      -- a SELECT over "base" (the base table's rows)
    partition_key  text NOT NULL,
    clustering_key text,
    key_columns    name[] NOT NULL,    -- partition then clustering columns of query_table
    columns        name[] NOT NULL,    -- all columns the definition yields, in order
    diff_update    boolean NOT NULL,   -- UPDATE writes only derived rows that changed
    counters       name[] NOT NULL DEFAULT '{}',  -- a counter query table's counter columns
    search_path    text NOT NULL,      -- the definition's names resolve with this path
    created_at     timestamptz NOT NULL DEFAULT now()
);
ALTER SEQUENCE widecol.query_table_id_seq OWNED BY widecol.query_table.id;
SELECT pg_catalog.pg_extension_config_dump('widecol.query_table', '');
SELECT pg_catalog.pg_extension_config_dump('widecol.query_table_id_seq', '');
COMMENT ON TABLE widecol.query_table IS
    'query tables: widecol tables derived from a base table and kept in step with it by triggers';

-- The catalog is written only by widecol._qt_register (C, checks that the
-- caller owns the base table and the query table, and that both have the
-- same owner) and by the DROP event trigger below: no role has INSERT,
-- UPDATE or DELETE on it, and ids come from the sequence, never from the
-- caller.  Everyone may read it, as pg_trigger.
GRANT SELECT ON widecol.query_table TO PUBLIC;
-- Everyone who writes a base table runs widecol.query_table_trigger(), and
-- table owners call the functions of this schema (each checks its own
-- privileges; the manifest stays revoked).
GRANT USAGE ON SCHEMA widecol TO PUBLIC;

-- true if the current user has the privileges of rel's owner, NULL if rel
-- no longer exists
CREATE FUNCTION widecol._owns(rel oid) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT pg_catalog.pg_has_role(c.relowner, 'USAGE') FROM pg_catalog.pg_class c WHERE c.oid = rel
$$;

CREATE FUNCTION widecol._qt_register(query_table regclass, base regclass, definition text,
                                     partition_key text, clustering_key text, key_columns name[],
                                     columns name[], diff_update boolean, counters name[],
                                     search_path text) RETURNS integer
    AS 'MODULE_PATHNAME', 'widecol_qt_register' LANGUAGE C VOLATILE;

-- The (name, value) pairs of a WITH (...) option list, parsed by
-- PostgreSQL's grammar; only widecol.* options.
CREATE FUNCTION widecol._parse_table_options(options text) RETURNS TABLE (name text, value text)
    AS 'MODULE_PATHNAME', 'widecol_parse_table_options' LANGUAGE C STRICT IMMUTABLE;

-- The rows a definition derives from the rows of src (a table or a
-- transition table): the definition reads them under the name "base".
CREATE FUNCTION widecol._qt_derived(definition text, src text) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN (SELECT format('(WITH base AS (SELECT * FROM %s) SELECT * FROM (%s) AS d)', src, definition));
END $$;

-- Column names of a key option ('device_id, day', 'capture_time DESC, "Id"'),
-- parsed by the parser CREATE TABLE uses ('{}' for NULL or blank; a
-- malformed list is an error naming the option).
CREATE FUNCTION widecol._key_columns(key text, option text DEFAULT 'partition_key') RETURNS name[]
    AS 'MODULE_PATHNAME', 'widecol_key_columns' LANGUAGE C IMMUTABLE;

-- "a = d.a AND b = d.b" over the key columns
CREATE FUNCTION widecol._qt_key_join(keys name[], l text, r text) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN (SELECT string_agg(format('%s.%I = %s.%I', l, k, r, k), ' AND ') FROM unnest(keys) k);
END $$;

CREATE FUNCTION widecol._qt_collist(cols name[], prefix text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN (SELECT string_agg(CASE WHEN prefix IS NULL THEN quote_ident(c) ELSE prefix || '.' || quote_ident(c) END, ', ')
      FROM unnest(cols) c);
END $$;

-- The stored rows of query table q as check and diff compare them: a
-- counter query table's rows whose counters are all 0 count as absent.
CREATE FUNCTION widecol._qt_stored(q widecol.query_table) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN cardinality(q.counters) = 0 THEN q.query_table::text
                ELSE format('(SELECT * FROM %s WHERE %s)', q.query_table,
                            (SELECT string_agg(format('%I IS DISTINCT FROM 0', c), ' OR ') FROM unnest(q.counters) c))
           END
$$;

-- A counter query table's statement for one base-table statement: the
-- definition (GROUP BY-shaped, additive aggregates) over the new rows adds,
-- over the old rows subtracts, summed per key into blind increments.
CREATE FUNCTION widecol._qt_counter_statement(q widecol.query_table, dnew text, dold text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT format('INSERT INTO %s (%s) SELECT %s FROM (%s) AS x GROUP BY %s HAVING %s',
        q.query_table, widecol._qt_collist(q.columns),
        (SELECT string_agg(CASE WHEN c = ANY (q.counters) THEN format('sum(%I)', c) ELSE quote_ident(c) END, ', ' ORDER BY n)
           FROM unnest(q.columns) WITH ORDINALITY u(c, n)),
        concat_ws(' UNION ALL ',
            CASE WHEN dnew IS NOT NULL THEN format('SELECT %s FROM %s AS n', widecol._qt_collist(q.columns), dnew) END,
            CASE WHEN dold IS NOT NULL THEN format('SELECT %s FROM %s AS o',
                (SELECT string_agg(CASE WHEN c = ANY (q.counters) THEN format('-%1$I AS %1$I', c) ELSE quote_ident(c) END, ', ' ORDER BY n)
                   FROM unnest(q.columns) WITH ORDINALITY u(c, n)), dold) END),
        widecol._qt_collist(q.key_columns),
        (SELECT string_agg(format('sum(%I) IS DISTINCT FROM 0', c), ' OR ') FROM unnest(q.counters) c))
$$;

-- The statements that apply one base-table statement to the query table q.
-- op: INSERT, UPSERT (an INSERT that may have replaced rows), UPDATE,
-- DELETE (new rows new_src, old rows old_src: by default the transition
-- tables widecol_new_rows / widecol_old_rows), or REBUILD (all rows of the
-- base).
CREATE FUNCTION widecol._qt_statements(q widecol.query_table, op text,
                                       old_src text DEFAULT 'widecol_old_rows',
                                       new_src text DEFAULT 'widecol_new_rows') RETURNS text[]
LANGUAGE plpgsql STABLE AS $$
DECLARE
    cols text := widecol._qt_collist(q.columns);
    keys text := widecol._qt_collist(q.key_columns);
    dnew text := widecol._qt_derived(q.definition, new_src);
    dold text := widecol._qt_derived(q.definition, old_src);
    ins  text := format('INSERT INTO %s (%s) SELECT %s FROM ', q.query_table, cols, cols);
    -- the keys to delete are computed once; when there are none (an UPDATE
    -- that changes no derived key) the one-time filter skips the join, which
    -- would otherwise open a scan of the query table
    del  text := format('WITH o AS MATERIALIZED (%%s) DELETE FROM %s AS t USING o WHERE %s AND EXISTS (SELECT FROM o)',
                        q.query_table, widecol._qt_key_join(q.key_columns, 't', 'o'));
BEGIN
    IF cardinality(q.counters) > 0 AND op <> 'REBUILD' THEN
        RETURN ARRAY[widecol._qt_counter_statement(q,
            CASE WHEN op <> 'DELETE' THEN dnew END,
            CASE WHEN op <> 'INSERT' THEN dold END)];
    END IF;
    CASE op
    WHEN 'INSERT' THEN
        RETURN ARRAY[ins || dnew || ' AS n'];
    WHEN 'UPSERT' THEN
        -- an INSERT that replaced rows (old_src): derived keys of the
        -- replaced rows that the new rows do not derive again go, then all
        -- new derived rows are written (their write time and TTL are new)
        RETURN ARRAY[
            format(del, format('SELECT %s FROM %s AS x EXCEPT SELECT %s FROM %s AS y', keys, dold, keys, dnew)),
            ins || dnew || ' AS n'];
    WHEN 'DELETE' THEN
        RETURN ARRAY[format(del, format('SELECT DISTINCT %s FROM %s AS x', keys, dold))];
    WHEN 'UPDATE' THEN
        -- derived keys that the update removed, then the derived rows it
        -- added or changed (all new derived rows if they cannot be compared)
        RETURN ARRAY[
            format(del, format('SELECT %s FROM %s AS x EXCEPT SELECT %s FROM %s AS y', keys, dold, keys, dnew)),
            CASE WHEN q.diff_update
                 THEN ins || format('(SELECT %s FROM %s AS x EXCEPT ALL SELECT %s FROM %s AS y) AS n', cols, dnew, cols, dold)
                 ELSE ins || dnew || ' AS n' END];
    WHEN 'REBUILD' THEN
        RETURN ARRAY[format('TRUNCATE %s', q.query_table),
                     ins || widecol._qt_derived(q.definition, q.base::text) || ' AS n'];
    END CASE;
END $$;

-- Between these two calls, reads of base see it as it was before the
-- statement that last wrote it: the versions an INSERT replaced.
CREATE FUNCTION widecol._read_before_statement(base regclass) RETURNS void
    AS 'MODULE_PATHNAME', 'widecol_read_before_statement' LANGUAGE C STRICT VOLATILE;
CREATE FUNCTION widecol._read_before_statement_end() RETURNS void
    AS 'MODULE_PATHNAME', 'widecol_read_before_statement_end' LANGUAGE C VOLATILE;

-- The key columns of a widecol table, partition key then clustering key
-- ('{}' for a keyless table)
CREATE FUNCTION widecol._table_key_columns(rel regclass) RETURNS name[]
    AS 'MODULE_PATHNAME', 'widecol_table_key_columns' LANGUAGE C STRICT STABLE;

-- The rows an INSERT into a widecol table replaced (their keys existed),
-- as they were before it: widecol's INSERT of an existing key replaces the
-- row without reading it, so no OLD TABLE has them.  The keys are recorded
-- as rows are written and looked up once per statement, whichever trigger
-- asks first.  _inserted_keys_repeat() tells whether the statement wrote a
-- key twice.  Both describe the last INSERT into the table: call them only
-- from its triggers, when its NEW TABLE is not empty.
CREATE FUNCTION widecol._replaced_rows(anyelement) RETURNS SETOF anyelement
    AS 'MODULE_PATHNAME', 'widecol_replaced_rows' LANGUAGE C VOLATILE;
CREATE FUNCTION widecol._inserted_keys_repeat(base regclass) RETURNS boolean
    AS 'MODULE_PATHNAME', 'widecol_inserted_keys_repeat' LANGUAGE C STRICT VOLATILE;
CREATE FUNCTION widecol._inserted_keys_replaced(base regclass) RETURNS boolean
    AS 'MODULE_PATHNAME', 'widecol_inserted_keys_replaced' LANGUAGE C STRICT VOLATILE;

-- A query giving the old rows of the statement that fired a trigger on
-- base: for an INSERT the rows it replaced; for an UPDATE the updated rows
-- and those it replaced by moving a row onto their key (to run under
-- widecol._read_before_statement(base)).  NULL when nothing was or can
-- have been replaced (an INSERT of new keys only, a keyless table, a
-- DELETE).
CREATE FUNCTION widecol._replaced_rows_sql(base regclass, op text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    keys name[] := widecol._table_key_columns(base);
BEGIN
    IF cardinality(keys) = 0 OR op NOT IN ('INSERT', 'UPDATE') THEN
        RETURN NULL;
    END IF;
    IF op = 'INSERT' THEN
        -- the common case, new keys only: a plain INSERT of derived rows
        IF NOT widecol._inserted_keys_replaced(base) AND NOT widecol._inserted_keys_repeat(base) THEN
            RETURN NULL;
        END IF;
        RETURN format('SELECT * FROM widecol._replaced_rows(NULL::%s)', base);
    END IF;
    RETURN format('SELECT * FROM widecol_old_rows UNION ALL SELECT b.* FROM %s AS b WHERE (%s) IN '
                  '(SELECT %s FROM widecol_new_rows EXCEPT SELECT %s FROM widecol_old_rows)',
                  base, widecol._qt_collist(keys, 'b'), widecol._qt_collist(keys), widecol._qt_collist(keys));
END $$;

-- The new rows of the statement that fired a trigger on a widecol base
-- are one per key only if no key repeats: when a statement wrote a key
-- twice the later row replaced the earlier one, which must not derive
-- rows.  _repeated_keys_sql() tells (run by the trigger itself: transition
-- tables are visible only there), _new_rows_sql() keeps the last row of
-- each key (transition tables keep the statement's order).
CREATE FUNCTION widecol._repeated_keys_sql(base regclass) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT format('SELECT EXISTS (SELECT FROM widecol_new_rows GROUP BY %s HAVING count(*) > 1)',
                  widecol._qt_collist(widecol._table_key_columns(base)))
$$;
CREATE FUNCTION widecol._new_rows_sql(base regclass) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT format('(SELECT (w.r).* FROM (SELECT DISTINCT ON (%1$s) r, n FROM '
                  '(SELECT r, row_number() OVER () AS n FROM widecol_new_rows AS r) AS o '
                  'ORDER BY %1$s, n DESC) AS w) AS widecol_new_rows',
                  widecol._qt_collist(widecol._table_key_columns(base), '(r)'))
$$;

-- The trigger on the base table: one per query table and event, statement
-- level with transition tables, so a COPY or a multi-row statement costs one
-- set-based DELETE and/or INSERT into the query table.  Runs as the user
-- who writes the base table: that user needs INSERT and DELETE on the
-- query table too.
CREATE FUNCTION widecol.query_table_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    q widecol.query_table;
    path text := current_setting('search_path');
    replaced text;
    repeated boolean;
    stmts text[];
    stmt text;
BEGIN
    SELECT * INTO q FROM widecol.query_table WHERE id = TG_ARGV[0]::integer;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'trigger % on table % names query table % which is not registered', TG_NAME, TG_RELID::regclass, TG_ARGV[0]
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = format('Drop the trigger (DROP TRIGGER %I ON %s) or recreate the query table.', TG_NAME, TG_RELID::regclass);
    END IF;
    -- act only for the catalog row of this table, whose query table has
    -- this table's owner (a trigger never writes into another role's table)
    IF q.base <> TG_RELID THEN
        RAISE EXCEPTION 'trigger % on table % names query table % of another table (%)', TG_NAME, TG_RELID::regclass, q.query_table, q.base
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('Drop the trigger: DROP TRIGGER %I ON %s', TG_NAME, TG_RELID::regclass);
    END IF;
    IF (SELECT relowner FROM pg_catalog.pg_class WHERE oid = q.query_table)
       IS DISTINCT FROM (SELECT relowner FROM pg_catalog.pg_class WHERE oid = TG_RELID) THEN
        RAISE EXCEPTION 'query table % and its base table % have different owners', q.query_table, TG_RELID::regclass
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('Give both the same owner: ALTER TABLE %s OWNER TO %s', q.query_table,
                                (SELECT relowner::regrole FROM pg_catalog.pg_class WHERE oid = TG_RELID));
    END IF;
    IF TG_OP = 'TRUNCATE' THEN
        EXECUTE format('TRUNCATE %s', q.query_table);
        RETURN NULL;
    END IF;
    IF TG_OP = 'INSERT' THEN
        IF NOT EXISTS (SELECT FROM widecol_new_rows) THEN
            RETURN NULL;        -- and the recorded keys are an earlier statement's
        END IF;
    END IF;
    replaced := widecol._replaced_rows_sql(TG_RELID, TG_OP);
    PERFORM set_config('search_path', q.search_path, true);
    IF replaced IS NULL THEN
        stmts := widecol._qt_statements(q, TG_OP);
    ELSE
        IF TG_OP = 'INSERT' THEN
            repeated := widecol._inserted_keys_repeat(TG_RELID);
        ELSE
            EXECUTE widecol._repeated_keys_sql(TG_RELID) INTO repeated;
        END IF;
        stmts := widecol._qt_statements(q, CASE TG_OP WHEN 'INSERT' THEN 'UPSERT' ELSE TG_OP END,
                                        '(' || replaced || ') AS replaced',
                                        CASE WHEN repeated THEN widecol._new_rows_sql(TG_RELID)
                                             ELSE 'widecol_new_rows' END);
    END IF;
    IF TG_OP = 'UPDATE' AND replaced IS NOT NULL THEN
        PERFORM widecol._read_before_statement(TG_RELID);
    END IF;
    FOREACH stmt IN ARRAY stmts LOOP
        EXECUTE stmt;
    END LOOP;
    IF TG_OP = 'UPDATE' AND replaced IS NOT NULL THEN
        PERFORM widecol._read_before_statement_end();
    END IF;
    PERFORM set_config('search_path', path, true);
    RETURN NULL;
END $$;

CREATE FUNCTION widecol._qt_create_triggers(q widecol.query_table) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %s REFERENCING NEW TABLE AS widecol_new_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION widecol.query_table_trigger(%L)',
                   'widecol_qt_' || q.id || '_insert', q.base, q.id);
    EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %s REFERENCING OLD TABLE AS widecol_old_rows NEW TABLE AS widecol_new_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION widecol.query_table_trigger(%L)',
                   'widecol_qt_' || q.id || '_update', q.base, q.id);
    EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %s REFERENCING OLD TABLE AS widecol_old_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION widecol.query_table_trigger(%L)',
                   'widecol_qt_' || q.id || '_delete', q.base, q.id);
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION widecol.query_table_trigger(%L)',
                   'widecol_qt_' || q.id || '_truncate', q.base, q.id);
END $$;

CREATE FUNCTION widecol.create_query_table(
    name text, base regclass, definition text, partition_key text,
    clustering_key text DEFAULT NULL, options text DEFAULT NULL,
    populate boolean DEFAULT true, counters text DEFAULT NULL)
RETURNS regclass
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    parts text[];
    qname text;
    def text := regexp_replace(coalesce(definition, ''), '[\s;]+$', '');
    probe text;
    cols name[];
    coldefs text;
    keys name[];
    missing name[];
    nrows bigint;
    diff boolean := true;
    base_keys name[];
    counter_cols name[] := widecol._key_columns(counters, 'counter_columns');
    opts text;
    qid integer;
    q widecol.query_table;
    err text;
    hint text;
BEGIN
    IF name IS NULL OR base IS NULL OR partition_key IS NULL THEN
        RAISE EXCEPTION 'name, base and partition_key must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- the base: a table the caller owns
    IF NOT EXISTS (SELECT 1 FROM pg_class WHERE oid = base AND relkind IN ('r', 'p')) THEN
        RAISE EXCEPTION '"%" is not a table', base USING ERRCODE = 'wrong_object_type';
    END IF;
    IF NOT widecol._owns(base) THEN
        RAISE EXCEPTION 'must be owner of table %', base USING ERRCODE = 'insufficient_privilege',
            HINT = 'Query tables are created by the owner of their base table.';
    END IF;
    IF EXISTS (SELECT 1 FROM widecol.query_table t WHERE t.query_table = base) THEN
        RAISE EXCEPTION 'table % is a query table', base USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Derive query tables from the base table itself.';
    END IF;
    -- the name, qualified or not
    BEGIN
        parts := parse_ident(name);
    EXCEPTION WHEN OTHERS THEN
        RAISE EXCEPTION 'invalid query table name "%"', name USING ERRCODE = 'invalid_name';
    END;
    IF cardinality(parts) > 2 THEN
        RAISE EXCEPTION 'invalid query table name "%"', name USING ERRCODE = 'invalid_name',
            HINT = 'Use table or schema.table.';
    END IF;
    SELECT string_agg(quote_ident(p), '.' ORDER BY n) INTO qname FROM unnest(parts) WITH ORDINALITY u(p, n);
    IF to_regclass(qname) IS NOT NULL THEN
        RAISE EXCEPTION 'relation % already exists', qname USING ERRCODE = 'duplicate_table';
    END IF;

    -- the definition: a query over "base" whose columns we learn from a
    -- probe table created from it with no rows
    IF def = '' THEN
        RAISE EXCEPTION 'query table definition is empty' USING ERRCODE = 'invalid_parameter_value',
            HINT = 'The definition is a SELECT over the base table''s rows, which it reads as "base", for example: SELECT unnest(tags) AS tag, capture_time::date AS day, image_id FROM base WHERE tags IS NOT NULL';
    END IF;
    probe := widecol._qt_derived(def, format('(SELECT * FROM %s LIMIT 0) AS b', base));
    BEGIN
        IF to_regclass('pg_temp.widecol_qt_probe') IS NOT NULL THEN
            DROP TABLE pg_temp.widecol_qt_probe;
        END IF;
        EXECUTE format('CREATE TEMP TABLE widecol_qt_probe AS SELECT * FROM %s AS p WITH NO DATA', probe);
        EXECUTE format('SELECT count(*) FROM %s AS p', probe) INTO nrows;
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS err = MESSAGE_TEXT;
        RAISE EXCEPTION 'query table definition is not valid: %', err USING ERRCODE = 'invalid_parameter_value',
            HINT = 'The definition is a SELECT over the base table''s rows, which it reads as "base", for example: SELECT unnest(tags) AS tag, capture_time::date AS day, image_id FROM base WHERE tags IS NOT NULL';
    END;
    IF nrows > 0 THEN
        DROP TABLE pg_temp.widecol_qt_probe;
        RAISE EXCEPTION 'query table definition returns rows without reading the base table' USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Read the base table''s rows from "base": ... FROM base ...';
    END IF;
    SELECT array_agg(a.attname ORDER BY a.attnum),
           string_agg(format('%I %s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                             CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation
                                  THEN ' COLLATE ' || a.attcollation::regcollation::text ELSE '' END), ', ' ORDER BY a.attnum)
      INTO cols, coldefs
      FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
     WHERE a.attrelid = 'pg_temp.widecol_qt_probe'::regclass AND a.attnum > 0 AND NOT a.attisdropped;
    -- can an UPDATE compare old and new derived rows (equality on every column)?
    BEGIN
        EXECUTE 'SELECT 1 FROM (SELECT * FROM pg_temp.widecol_qt_probe EXCEPT ALL SELECT * FROM pg_temp.widecol_qt_probe) x';
    EXCEPTION WHEN undefined_function THEN
        diff := false;
    END;
    DROP TABLE pg_temp.widecol_qt_probe;
    IF (SELECT count(DISTINCT c) <> count(*) FROM unnest(cols) c) THEN
        RAISE EXCEPTION 'query table definition returns duplicate column names: %', cols USING ERRCODE = 'duplicate_column',
            HINT = 'Name every output column with AS.';
    END IF;

    -- the keys must be columns of the definition
    keys := widecol._key_columns(partition_key) || widecol._key_columns(clustering_key, 'clustering_key');
    IF cardinality(widecol._key_columns(partition_key)) = 0 THEN
        RAISE EXCEPTION 'query table needs a partition key' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT array_agg(k) INTO missing FROM unnest(keys) k WHERE k <> ALL (cols);
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'key column % is not a column of the query table definition', missing[1]
            USING ERRCODE = 'undefined_column', HINT = format('The definition returns the columns %s.', array_to_string(cols, ', '));
    END IF;
    -- a counter query table: every column is a key or a counter
    IF cardinality(counter_cols) > 0 THEN
        SELECT array_agg(c) INTO missing FROM unnest(counter_cols) c WHERE c <> ALL (cols);
        IF missing IS NOT NULL THEN
            RAISE EXCEPTION 'counter column % is not a column of the query table definition', missing[1]
                USING ERRCODE = 'undefined_column', HINT = format('The definition returns the columns %s.', array_to_string(cols, ', '));
        END IF;
        SELECT array_agg(c) INTO missing FROM unnest(cols) c WHERE c <> ALL (keys || counter_cols);
        IF missing IS NOT NULL THEN
            RAISE EXCEPTION 'column % of counter query table % is neither a key nor a counter column', missing[1], qname
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'A counter query table''s definition groups by its key columns and sums into its counter columns, for example: SELECT device_id, capture_time::date AS day, count(*) AS images FROM base GROUP BY 1, 2';
        END IF;
    END IF;
    -- options: parsed, then written back quoted (never pasted)
    SELECT string_agg(CASE WHEN o.value IS NULL THEN quote_ident(o.name)
                           ELSE format('%I = %L', o.name, o.value) END, ', ')
      INTO opts FROM widecol._parse_table_options(options) AS o;
    IF cardinality(counter_cols) > 0 THEN
        opts := concat_ws(', ', format('"widecol.counter_columns" = %L', counters), opts);
    END IF;
    -- rows of the query table are identified by its key: it should include
    -- the base table's key, or two base rows can map to one derived row
    -- (a counter query table aggregates them on purpose)
    SELECT coalesce(array_agg(k), '{}') INTO base_keys FROM (
        SELECT unnest(widecol._table_key_columns(base)) k
        UNION
        SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
         WHERE i.indrelid = base AND i.indisprimary) s WHERE k IS NOT NULL;
    IF NOT base_keys <@ keys AND cardinality(counter_cols) = 0 THEN
        RAISE WARNING 'the key of query table % does not include the key of its base table % (%)', qname, base, array_to_string(base_keys, ', ')
            USING DETAIL = 'Base rows that derive the same key share one query table row: deleting one of them deletes it.';
    END IF;

    -- the table (widecol validates key types and options)
    EXECUTE format('CREATE TABLE %s (%s) USING widecol WITH ("widecol.partition_key" = %L%s%s)',
                   qname, coldefs, partition_key,
                   CASE WHEN clustering_key IS NOT NULL AND btrim(clustering_key) <> ''
                        THEN format(', "widecol.clustering_key" = %L', clustering_key) ELSE '' END,
                   CASE WHEN opts IS NOT NULL THEN ', ' || opts ELSE '' END);
    -- the query table belongs to the base table's owner (the triggers that
    -- write it run as whoever writes the base, and check this)
    IF (SELECT relowner FROM pg_class WHERE oid = qname::regclass) <> (SELECT relowner FROM pg_class WHERE oid = base) THEN
        EXECUTE format('ALTER TABLE %s OWNER TO %s', qname,
                       (SELECT relowner::regrole FROM pg_class WHERE oid = base));
    END IF;

    qid := widecol._qt_register(qname::regclass, base, def, partition_key, nullif(btrim(clustering_key), ''),
                                keys, cols, diff, counter_cols, current_setting('search_path'));
    SELECT * INTO q FROM widecol.query_table WHERE id = qid;
    PERFORM widecol._qt_create_triggers(q);
    IF populate THEN
        PERFORM widecol.rebuild_query_table(q.query_table);
    END IF;
    RETURN q.query_table;
END $$;
COMMENT ON FUNCTION widecol.create_query_table(text, regclass, text, text, text, text, boolean, text) IS
    'create a widecol table derived from each row of base by definition (a SELECT over "base") and keep it in step with base; with counters, a counter table that the definition (GROUP BY the key, sums into the counters) adds to and subtracts from';

-- Fill a query table anew from its base (rows of the base are locked
-- against writes meanwhile).  Returns the number of rows derived.
CREATE FUNCTION widecol.rebuild_query_table(name regclass) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    q widecol.query_table;
    stmt text;
    n bigint;
    path text := current_setting('search_path');
BEGIN
    SELECT * INTO q FROM widecol.query_table WHERE query_table = name;
    IF NOT FOUND THEN
        RAISE EXCEPTION '% is not a query table', name USING ERRCODE = 'invalid_parameter_value',
            HINT = 'widecol.query_table lists the query tables.';
    END IF;
    IF NOT widecol._owns(q.query_table) THEN
        RAISE EXCEPTION 'must be owner of table %', q.query_table USING ERRCODE = 'insufficient_privilege',
            HINT = 'A query table is rebuilt by its owner (the owner of its base table).';
    END IF;
    EXECUTE format('LOCK TABLE %s IN SHARE MODE', q.base);
    PERFORM set_config('search_path', q.search_path, true);
    FOREACH stmt IN ARRAY widecol._qt_statements(q, 'REBUILD') LOOP
        EXECUTE stmt;
        GET DIAGNOSTICS n = ROW_COUNT;
    END LOOP;
    PERFORM set_config('search_path', path, true);
    RETURN n;
END $$;
COMMENT ON FUNCTION widecol.rebuild_query_table(regclass) IS
    'fill a query table anew from its base table; returns the number of rows';

-- Reconcile a query table with its base: the rows the definition derives
-- now (expected) against the rows stored (actual), matched by key.
CREATE FUNCTION widecol.query_table_diff(name regclass, max_rows bigint DEFAULT NULL)
RETURNS TABLE (status text, key jsonb, expected jsonb, actual jsonb)
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    q widecol.query_table;
    path text := current_setting('search_path');
    keys text;
BEGIN
    SELECT * INTO q FROM widecol.query_table WHERE query_table = name;
    IF NOT FOUND THEN
        RAISE EXCEPTION '% is not a query table', name USING ERRCODE = 'invalid_parameter_value',
            HINT = 'widecol.query_table lists the query tables.';
    END IF;
    keys := widecol._qt_collist(q.key_columns);
    PERFORM set_config('search_path', q.search_path, true);
    RETURN QUERY EXECUTE format($q$
        WITH e AS (SELECT *, count(*) OVER (PARTITION BY %1$s) AS widecol_dup
                     FROM (SELECT DISTINCT %1$s, to_jsonb(x) AS widecol_row FROM %2$s AS x) AS x),
             a AS (SELECT %1$s, to_jsonb(y) AS widecol_row FROM %3$s AS y)
        SELECT CASE WHEN a.widecol_row IS NULL THEN 'missing'
                    WHEN e.widecol_row IS NULL THEN 'extra'
                    WHEN e.widecol_dup > 1 THEN 'duplicate key'
                    ELSE 'different' END,
               (SELECT jsonb_object_agg(k, coalesce(e.widecol_row, a.widecol_row) -> k) FROM unnest(%4$L::text[]) k),
               e.widecol_row, a.widecol_row
          FROM e FULL JOIN a ON %5$s
         WHERE e.widecol_row IS DISTINCT FROM a.widecol_row OR e.widecol_dup > 1
         ORDER BY 2
         LIMIT %6$s$q$,
        keys, widecol._qt_derived(q.definition, q.base::text), widecol._qt_stored(q),
        q.key_columns, widecol._qt_key_join(q.key_columns, 'e', 'a'),
        coalesce(max_rows::text, 'ALL'));
    PERFORM set_config('search_path', path, true);
END $$;
COMMENT ON FUNCTION widecol.query_table_diff(regclass, bigint) IS
    'rows of a query table that differ from what its definition derives from the base table now: missing, extra, different, duplicate key';

CREATE FUNCTION widecol.check_query_table(name regclass)
RETURNS TABLE (query_table regclass, base regclass, expected_rows bigint, actual_rows bigint,
               missing bigint, extra bigint, different bigint, duplicate_keys bigint, ok boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    q widecol.query_table;
    path text := current_setting('search_path');
    keys text;
BEGIN
    SELECT * INTO q FROM widecol.query_table t WHERE t.query_table = name;
    IF NOT FOUND THEN
        RAISE EXCEPTION '% is not a query table', name USING ERRCODE = 'invalid_parameter_value',
            HINT = 'widecol.query_table lists the query tables.';
    END IF;
    query_table := q.query_table;
    base := q.base;
    keys := widecol._qt_collist(q.key_columns);
    PERFORM set_config('search_path', q.search_path, true);
    -- One pass: rows compared by their text form (same columns, same types,
    -- same session settings: equal values print alike), identical derived
    -- rows counted once, keys derived with different values counted apart.
    EXECUTE format($q$
        WITH e AS (SELECT %1$s, min(widecol_row) AS widecol_row, count(*) AS widecol_n
                     FROM (SELECT DISTINCT %1$s, x::text AS widecol_row FROM %2$s AS x) AS x GROUP BY %1$s),
             a AS (SELECT %1$s, y::text AS widecol_row FROM %3$s AS y)
        SELECT coalesce(sum(e.widecol_n), 0), count(a.widecol_row),
               count(*) FILTER (WHERE a.widecol_row IS NULL), count(*) FILTER (WHERE e.widecol_row IS NULL),
               count(*) FILTER (WHERE e.widecol_n = 1 AND e.widecol_row <> a.widecol_row),
               count(*) FILTER (WHERE e.widecol_n > 1)
          FROM e FULL JOIN a ON %4$s$q$,
        keys, widecol._qt_derived(q.definition, q.base::text), widecol._qt_stored(q),
        widecol._qt_key_join(q.key_columns, 'e', 'a'))
    INTO expected_rows, actual_rows, missing, extra, different, duplicate_keys;
    PERFORM set_config('search_path', path, true);
    ok := missing + extra + different + duplicate_keys = 0;
    RETURN NEXT;
END $$;
COMMENT ON FUNCTION widecol.check_query_table(regclass) IS
    'reconcile a query table with its base table: rows expected and stored, missing, extra, different, duplicate keys';

-- DROP of a query table removes its triggers and catalog row; DROP of a
-- base table with query tables is refused unless they are dropped by the
-- same statement (DROP TABLE base, qt ...; DROP SCHEMA ... CASCADE).
-- SECURITY DEFINER: the user dropping a query table may not own the base,
-- whose triggers must go too; it acts only on objects the statement dropped.
CREATE FUNCTION widecol._query_table_dropped() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT q.id, q.query_table::oid AS qt, q.base::oid AS base, q.base::text AS base_name,
               d_qt.object_identity AS qt_name, d_qt.objid IS NOT NULL AS qt_dropped,
               d_base.objid IS NOT NULL AS base_dropped, d_base.object_identity AS dropped_base_name
          FROM widecol.query_table q
          LEFT JOIN pg_event_trigger_dropped_objects() d_qt
                 ON d_qt.classid = 'pg_class'::regclass AND d_qt.objsubid = 0 AND d_qt.objid = q.query_table
          LEFT JOIN pg_event_trigger_dropped_objects() d_base
                 ON d_base.classid = 'pg_class'::regclass AND d_base.objsubid = 0 AND d_base.objid = q.base
         WHERE d_qt.objid IS NOT NULL OR d_base.objid IS NOT NULL
    LOOP
        IF r.base_dropped AND NOT r.qt_dropped THEN
            RAISE EXCEPTION 'cannot drop table % because query table % depends on it', r.dropped_base_name, r.qt::regclass
                USING ERRCODE = 'dependent_objects_still_exist',
                      HINT = format('Drop the query table first, or both in one statement: DROP TABLE %s, %s;',
                                    r.dropped_base_name, r.qt::regclass);
        END IF;
        IF NOT r.base_dropped THEN
            EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', 'widecol_qt_' || r.id || '_insert', r.base_name);
            EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', 'widecol_qt_' || r.id || '_update', r.base_name);
            EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', 'widecol_qt_' || r.id || '_delete', r.base_name);
            EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', 'widecol_qt_' || r.id || '_truncate', r.base_name);
        END IF;
        DELETE FROM widecol.query_table WHERE id = r.id;
    END LOOP;
END $$;
CREATE EVENT TRIGGER widecol_query_table_drop ON sql_drop
    WHEN TAG IN ('DROP TABLE', 'DROP SCHEMA', 'DROP OWNED')
    EXECUTE FUNCTION widecol._query_table_dropped();

-- ---------------------------------------------------------------------
-- Time buckets
-- ---------------------------------------------------------------------

-- Day buckets are UTC days, whatever the session's TimeZone.
CREATE FUNCTION widecol.day_bucket(ts timestamptz) RETURNS date
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT (ts AT TIME ZONE 'UTC')::date
$$;
COMMENT ON FUNCTION widecol.day_bucket(timestamptz) IS 'the UTC day of a timestamp: the day bucket it belongs to';

-- The day buckets that hold the instants of [from_time, to_time).
CREATE FUNCTION widecol.day_buckets(from_time timestamptz, to_time timestamptz) RETURNS SETOF date
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE ROWS 7 AS $$
    SELECT d::date
      FROM generate_series(widecol.day_bucket(from_time)::timestamp,
                           widecol.day_bucket(to_time - interval '1 microsecond')::timestamp,
                           interval '1 day') AS d
     WHERE from_time < to_time
$$;
COMMENT ON FUNCTION widecol.day_buckets(timestamptz, timestamptz) IS
    'the UTC day buckets that hold the instants of [from_time, to_time)';

-- The starts of the buckets of the given width (aligned to 1970-01-01
-- 00:00 UTC, as date_bin aligns them) that hold the instants of
-- [from_time, to_time).
CREATE FUNCTION widecol.buckets(from_time timestamptz, to_time timestamptz, width interval)
RETURNS SETOF timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT generate_series(date_bin(width, from_time, timestamptz '1970-01-01 00:00:00+00'),
                           to_time - interval '1 microsecond', width)
     WHERE from_time < to_time
$$;
COMMENT ON FUNCTION widecol.buckets(timestamptz, timestamptz, interval) IS
    'starts of the buckets of a width (aligned to the Unix epoch) that hold the instants of [from_time, to_time)';

-- ---------------------------------------------------------------------
-- Capacity estimates
-- ---------------------------------------------------------------------

-- Bytes in decimal units (kB = 1000 bytes), as disks are sold and as
-- capacity rules of thumb are stated; pg_size_pretty gives binary units.
CREATE FUNCTION widecol.pretty_bytes(bytes numeric) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE WHEN abs(bytes) < 1000 THEN round(bytes) || ' bytes'
                ELSE (SELECT to_char(round(bytes / 1000::numeric ^ e, 1), 'FM9999990.0') || ' ' ||
                             (ARRAY['kB', 'MB', 'GB', 'TB', 'PB', 'EB'])[e]
                        FROM (SELECT least(floor(log(1000, abs(bytes)))::int, 6) AS e) x) END
$$;
COMMENT ON FUNCTION widecol.pretty_bytes(numeric) IS 'bytes in decimal units (1 kB = 1000 bytes)';

-- a number for a formula: at most 2 decimals, no trailing zeros
CREATE FUNCTION widecol._num(x double precision) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT trim_scale(round(x::numeric, 2))::text
$$;

-- total = row size x rows/day x days x replicas / compression; disk to
-- provision = total x headroom (1.5-2: compaction, repair, backups).
CREATE FUNCTION widecol.capacity_estimate(
    avg_row_bytes double precision, rows_per_day double precision, retention_days double precision,
    replication_factor integer DEFAULT 3, compression_ratio double precision DEFAULT 1,
    headroom double precision DEFAULT 1.5)
RETURNS TABLE (step integer, figure text, bytes numeric, pretty text, pretty_binary text, formula text)
LANGUAGE plpgsql IMMUTABLE AS $$
#variable_conflict use_variable
DECLARE
    raw numeric;
    replicated numeric;
    stored numeric;
    total numeric;
BEGIN
    IF avg_row_bytes IS NULL OR avg_row_bytes <= 0 OR rows_per_day IS NULL OR rows_per_day < 0
       OR retention_days IS NULL OR retention_days < 0 OR replication_factor IS NULL OR replication_factor < 1
       OR compression_ratio IS NULL OR compression_ratio <= 0 OR headroom IS NULL OR headroom < 1 THEN
        RAISE EXCEPTION 'invalid capacity estimate input' USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Row size and compression ratio must be > 0, rows per day and retention days >= 0, replication factor >= 1, headroom >= 1.';
    END IF;
    raw := avg_row_bytes::numeric * rows_per_day::numeric;
    replicated := raw * replication_factor;
    stored := replicated / compression_ratio::numeric;
    total := stored * retention_days::numeric;
    RETURN QUERY
    SELECT s, f, round(b), widecol.pretty_bytes(b), pg_size_pretty(round(b)), x
      FROM (VALUES
        (1, 'raw per day', raw, format('%s bytes/row x %s rows/day', widecol._num(avg_row_bytes), widecol._num(rows_per_day))),
        (2, 'replicated per day', replicated, format('raw per day x %s replicas', replication_factor)),
        (3, 'stored per day', stored, format('replicated per day / %s compression', widecol._num(compression_ratio))),
        (4, 'total for retention', total, format('stored per day x %s days', widecol._num(retention_days))),
        (5, 'disk to provision', total * headroom::numeric, format('total x %s headroom (compaction, repair, backups)', widecol._num(headroom)))
      ) AS v(s, f, b, x);
END $$;
COMMENT ON FUNCTION widecol.capacity_estimate(double precision, double precision, double precision, integer, double precision, double precision) IS
    'disk space estimate: row size x rows/day x days x replicas / compression, then x headroom; each figure in bytes and pretty units';

-- The same from a table's own runs: row size and compression ratio are
-- measured (raw and compressed bytes of its sorted runs over their row
-- versions), and the compaction strategy's temporary space is added:
-- size-tiered compaction may rewrite its largest tier, about half of the
-- data; time-window compaction rewrites about one window at a time.
CREATE FUNCTION widecol.capacity_estimate(
    rel regclass, rows_per_day double precision, retention_days double precision,
    replication_factor integer DEFAULT 3, headroom double precision DEFAULT 1.25)
RETURNS TABLE (step integer, figure text, bytes numeric, pretty text, pretty_binary text, formula text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_variable
DECLARE
    st record;
    row_bytes numeric;
    ratio numeric;
    strategy text;
    win interval;
    win_days numeric;
    stored numeric;
    total numeric;
    temp numeric;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = rel AND a.amname = 'widecol') THEN
        RAISE EXCEPTION '"%" is not a widecol table', rel USING ERRCODE = 'wrong_object_type';
    END IF;
    -- the run summaries only (widecol.table_stats would also read every row)
    SELECT coalesce(sum(r.nrows), 0) AS versions, coalesce(sum(r.raw_bytes), 0) AS raw_bytes,
           coalesce(sum(r.compressed_bytes), 0) AS compressed_bytes
      INTO st FROM widecol.runs(rel) r;
    IF st.versions = 0 OR st.compressed_bytes = 0 THEN
        RAISE EXCEPTION 'table % has no sorted runs to measure row size and compression from', rel
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = format('Load representative rows, then SELECT widecol.flush(%L); or give the figures: widecol.capacity_estimate(avg_row_bytes, rows_per_day, retention_days, replication_factor, compression_ratio, headroom).', rel::text);
    END IF;
    row_bytes := st.raw_bytes::numeric / st.versions;
    ratio := st.raw_bytes::numeric / st.compressed_bytes;
    SELECT coalesce(max(substring(o FROM '^widecol\.compaction=(.*)$')), 'size_tiered'),
           coalesce(max(substring(o FROM '^widecol\.compaction_window=(.*)$')), '1 day')::interval
      INTO strategy, win
      FROM pg_class c LEFT JOIN LATERAL unnest(c.reloptions) o ON true WHERE c.oid = rel;
    win_days := extract(epoch FROM win)::numeric / 86400;
    RETURN QUERY
    SELECT 0, 'measured row size'::text, round(row_bytes), widecol.pretty_bytes(row_bytes), pg_size_pretty(round(row_bytes)),
           format('raw bytes / row versions of the runs of %s (%s / %s); compression %sx (raw / compressed)',
                  rel, st.raw_bytes, st.versions, round(ratio, 2));
    RETURN QUERY
    SELECT e.step, e.figure, e.bytes, e.pretty, e.pretty_binary, e.formula
      FROM widecol.capacity_estimate(row_bytes::float8, rows_per_day, retention_days, replication_factor, ratio::float8, 1) e
     WHERE e.step <= 4;
    stored := row_bytes * rows_per_day::numeric * replication_factor / ratio;
    total := stored * retention_days::numeric;
    IF strategy = 'time_window' THEN
        temp := stored * win_days;
    ELSE
        temp := total / 2;
    END IF;
    RETURN QUERY
    SELECT s, f, round(b), widecol.pretty_bytes(b), pg_size_pretty(round(b)), x
      FROM (VALUES
        (5, 'compaction temporary space', temp,
            CASE WHEN strategy = 'time_window'
                 THEN format('time_window: one %s window of stored data (stored per day x %s)', win, trim_scale(round(win_days, 3)))
                 ELSE format('%s: the largest tier, about half the data (total / 2)', strategy) END),
        (6, 'total with compaction', total + temp, 'total for retention + compaction temporary space'),
        (7, 'disk to provision', (total + temp) * headroom::numeric,
            format('total with compaction x %s headroom (repair, backups)', widecol._num(headroom)))
      ) AS v(s, f, b, x);
END $$;
COMMENT ON FUNCTION widecol.capacity_estimate(regclass, double precision, double precision, integer, double precision) IS
    'disk space estimate with row size and compression measured from a widecol table''s runs, plus its compaction strategy''s temporary space';

-- ---------------------------------------------------------------------
-- Image store
-- ---------------------------------------------------------------------

-- Builds, in schema store, the image-metadata model of the design brief:
--
--   images               base table, one partition per image id
--   device_daily_images  query table: (device_id, day) partitions, newest first
--   images_by_tag        query table: one row per (tag, image), (tag, day) partitions
--   batch_images         query table: the images of an upload batch
--
-- and the functions image, device_images, tag_images, tag_images_all,
-- batch_object_keys, daily_counts.  Applications write images only; the
-- query tables follow in the same transaction.
--
-- The counting trigger of an image store's images table (in any schema:
-- the counter table is daily_counts next to it).  The same statement's
-- rows are grouped first, so one counter increment per (day, dimension,
-- value) is written.
CREATE FUNCTION widecol._image_store_count() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    counts regclass := to_regclass(format('%I.daily_counts', TG_TABLE_SCHEMA));
    replaced text;
    new_src text := 'widecol_new_rows';
    repeated boolean;
    src text;
BEGIN
    IF counts IS NULL THEN
        RETURN NULL;            -- the counter table was dropped: nothing to count
    END IF;
    -- never write into a table of another role that took the name
    IF (SELECT relowner FROM pg_catalog.pg_class WHERE oid = counts)
       IS DISTINCT FROM (SELECT relowner FROM pg_catalog.pg_class WHERE oid = TG_RELID) THEN
        RAISE EXCEPTION 'counter table % and image table % have different owners', counts, TG_RELID::regclass
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('Give both the same owner: ALTER TABLE %s OWNER TO %s', counts,
                                (SELECT relowner::regrole FROM pg_catalog.pg_class WHERE oid = TG_RELID));
    END IF;
    IF TG_OP = 'TRUNCATE' THEN
        EXECUTE format('TRUNCATE %s', counts);
        RETURN NULL;
    END IF;
    -- +1 for new rows, -1 for old ones: deleted, updated, or replaced by an INSERT
    IF TG_OP = 'INSERT' THEN
        IF NOT EXISTS (SELECT FROM widecol_new_rows) THEN
            RETURN NULL;        -- and the recorded keys are an earlier statement's
        END IF;
    END IF;
    replaced := widecol._replaced_rows_sql(TG_RELID, TG_OP);
    IF replaced IS NOT NULL THEN
        IF TG_OP = 'INSERT' THEN
            repeated := widecol._inserted_keys_repeat(TG_RELID);
        ELSE
            EXECUTE widecol._repeated_keys_sql(TG_RELID) INTO repeated;
        END IF;
        IF repeated THEN
            new_src := widecol._new_rows_sql(TG_RELID);
        END IF;
    END IF;
    src := concat_ws(' UNION ALL ',
        CASE WHEN TG_OP <> 'DELETE' THEN 'SELECT capture_time, device_id, tags, 1 AS n FROM ' || new_src END,
        CASE WHEN TG_OP <> 'INSERT' OR replaced IS NOT NULL
             THEN format('SELECT capture_time, device_id, tags, -1 AS n FROM (%s) AS o',
                         coalesce(replaced, 'SELECT * FROM widecol_old_rows')) END);
    IF TG_OP = 'UPDATE' AND replaced IS NOT NULL THEN
        PERFORM widecol._read_before_statement(TG_RELID);
    END IF;
    EXECUTE format(widecol._image_store_count_sql(), counts, src);
    IF TG_OP = 'UPDATE' AND replaced IS NOT NULL THEN
        PERFORM widecol._read_before_statement_end();
    END IF;
    RETURN NULL;
END $$;

-- INSERT of the counter increments of the rows of a query (capture_time,
-- device_id, tags, n = +1 or -1) into a daily_counts table
CREATE FUNCTION widecol._image_store_count_sql() RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT $q$
        INSERT INTO %1$s (day, dimension, value, images)
        SELECT day, dimension, value, sum(n) FROM (
            SELECT widecol.day_bucket(r.capture_time) AS day, 'total' AS dimension, '' AS value, r.n FROM (%2$s) AS r
            UNION ALL
            SELECT widecol.day_bucket(r.capture_time), 'device', r.device_id, r.n FROM (%2$s) AS r
            UNION ALL
            SELECT widecol.day_bucket(r.capture_time), 'tag', t.tag, r.n
              FROM (%2$s) AS r, LATERAL (SELECT DISTINCT tag FROM unnest(r.tags) AS tag WHERE tag IS NOT NULL) AS t
        ) AS x
        GROUP BY day, dimension, value
        HAVING sum(n) <> 0$q$
$$;

-- Daily counts live in a counter table (widecol.counter_columns):
--   daily_counts (day, dimension, value, images)   partition day, clustering (dimension, value)
-- with one row per (day, 'device', device_id), (day, 'tag', tag) and
-- (day, 'total', '').  A statement trigger on images adds +n for the rows a
-- statement inserts and -n for those it deletes (an UPDATE does both), as
-- blind counter increments: concurrent writers never wait for each other
-- and no increment is lost.  daily_counts() is a seek over the day
-- partitions.
CREATE FUNCTION widecol.create_image_store(store name, ttl interval DEFAULT NULL)
RETURNS TABLE (object text, kind text)
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    s text := quote_ident(store);
    opts text := CASE WHEN ttl IS NULL THEN NULL ELSE format('"widecol.default_ttl" = %L', ttl) END;
    page_filter text;
BEGIN
    IF store IS NULL THEN
        RAISE EXCEPTION 'store schema name must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF to_regclass(s || '.images') IS NOT NULL THEN
        RAISE EXCEPTION 'schema % already holds a table images', s USING ERRCODE = 'duplicate_table',
            HINT = 'Choose another schema for the image store, or drop it first: DROP SCHEMA ... CASCADE.';
    END IF;
    EXECUTE format('CREATE SCHEMA IF NOT EXISTS %s', s);

    EXECUTE format($d$
        CREATE TABLE %s.images (
            image_id     uuid,
            device_id    text NOT NULL,
            capture_time timestamptz NOT NULL,
            batch_id     text,
            object_store text,
            object_key   text,
            width        integer,
            height       integer,
            content_hash text,
            tags         text[]
        ) USING widecol WITH ("widecol.partition_key" = 'image_id'%s)$d$,
        s, CASE WHEN opts IS NULL THEN '' ELSE ', ' || opts END);
    object := s || '.images'; kind := 'table'; RETURN NEXT;

    PERFORM widecol.create_query_table(s || '.device_daily_images', (s || '.images')::regclass,
        'SELECT device_id, widecol.day_bucket(capture_time) AS day, capture_time, image_id, batch_id,
                object_store, object_key, width, height, content_hash, tags
           FROM base',
        'device_id, day', 'capture_time DESC, image_id DESC', opts);
    object := s || '.device_daily_images'; kind := 'query table'; RETURN NEXT;

    PERFORM widecol.create_query_table(s || '.images_by_tag', (s || '.images')::regclass,
        'SELECT DISTINCT t.tag, widecol.day_bucket(b.capture_time) AS day, b.capture_time, b.image_id,
                b.device_id, b.object_store, b.object_key, b.tags
           FROM base AS b CROSS JOIN LATERAL unnest(b.tags) AS t(tag)
          WHERE t.tag IS NOT NULL',
        'tag, day', 'capture_time DESC, image_id DESC', opts);
    object := s || '.images_by_tag'; kind := 'query table'; RETURN NEXT;

    PERFORM widecol.create_query_table(s || '.batch_images', (s || '.images')::regclass,
        'SELECT batch_id, image_id, object_store, object_key, device_id, capture_time
           FROM base
          WHERE batch_id IS NOT NULL',
        'batch_id', 'image_id', opts);
    object := s || '.batch_images'; kind := 'query table'; RETURN NEXT;

    -- daily counts: a counter table kept by its own statement triggers
    EXECUTE format($d$
        CREATE TABLE %s.daily_counts (
            day       date,
            dimension text COLLATE "C",
            value     text COLLATE "C",
            images    bigint
        ) USING widecol WITH ("widecol.partition_key" = 'day', "widecol.clustering_key" = 'dimension, value',
                              "widecol.counter_columns" = 'images'%s)$d$,
        s, CASE WHEN opts IS NULL THEN '' ELSE ', ' || opts END);
    EXECUTE format('CREATE TRIGGER widecol_daily_counts_insert AFTER INSERT ON %s.images '
                   'REFERENCING NEW TABLE AS widecol_new_rows FOR EACH STATEMENT EXECUTE FUNCTION widecol._image_store_count()', s);
    EXECUTE format('CREATE TRIGGER widecol_daily_counts_update AFTER UPDATE ON %s.images '
                   'REFERENCING OLD TABLE AS widecol_old_rows NEW TABLE AS widecol_new_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION widecol._image_store_count()', s);
    EXECUTE format('CREATE TRIGGER widecol_daily_counts_delete AFTER DELETE ON %s.images '
                   'REFERENCING OLD TABLE AS widecol_old_rows FOR EACH STATEMENT EXECUTE FUNCTION widecol._image_store_count()', s);
    EXECUTE format('CREATE TRIGGER widecol_daily_counts_truncate AFTER TRUNCATE ON %s.images '
                   'FOR EACH STATEMENT EXECUTE FUNCTION widecol._image_store_count()', s);
    object := s || '.daily_counts'; kind := 'counter table'; RETURN NEXT;

    -- keyset paging: the clustering key of the last row of the previous page
    EXECUTE format('CREATE TYPE %s.image_page_key AS (capture_time timestamptz, image_id uuid)', s);
    object := s || '.image_page_key'; kind := 'type'; RETURN NEXT;

    -- Function bodies are passed as literals (%L) and the schema appears in
    -- them only as a quoted identifier: no store name can end a literal or
    -- a dollar quote.
    EXECUTE format($d$
        CREATE FUNCTION %1$s.image(id uuid) RETURNS SETOF %1$s.images
        LANGUAGE sql STABLE AS %2$L $d$, s, format($f$
            SELECT * FROM %1$s.images AS i WHERE i.image_id = image.id
        $f$, s));
    object := s || '.image(uuid)'; kind := 'function'; RETURN NEXT;

    -- The functions are plain SQL so that the planner inlines them: the
    -- device (or tag) and the day range become a WidecolSeek that merges the
    -- day buckets lazily in capture-time order and stops after max_rows.
    -- Rows are those of [from_time, to_time), newest first; the bucket and
    -- capture-time bounds end at the page key when one is given, so a later
    -- page starts reading where the previous one stopped.
    page_filter := $p$
               AND i.day BETWEEN widecol.day_bucket(%1$s.from_time)
                             AND widecol.day_bucket(least(%1$s.to_time, (%1$s.after).capture_time + interval '1 microsecond')
                                                    - interval '1 microsecond')
               AND i.capture_time >= %1$s.from_time
               AND i.capture_time < least(%1$s.to_time, (%1$s.after).capture_time + interval '1 microsecond')
               AND (%1$s.after IS NULL OR (i.capture_time, i.image_id) < ((%1$s.after).capture_time, (%1$s.after).image_id))
             ORDER BY i.capture_time DESC, i.image_id DESC
             LIMIT %1$s.max_rows$p$;

    EXECUTE format($d$
        CREATE FUNCTION %1$s.device_images(device text, from_time timestamptz, to_time timestamptz,
                                           max_rows integer DEFAULT 100, after %1$s.image_page_key DEFAULT NULL)
        RETURNS SETOF %1$s.device_daily_images
        LANGUAGE sql STABLE AS %2$L $d$, s, format($f$
            SELECT * FROM %1$s.device_daily_images AS i
             WHERE i.device_id = device_images.device %2$s
        $f$, s, format(page_filter, 'device_images')));
    object := s || '.device_images(text, timestamptz, timestamptz, integer, image_page_key)'; kind := 'function'; RETURN NEXT;

    EXECUTE format($d$
        CREATE FUNCTION %1$s.tag_images(tag text, from_time timestamptz, to_time timestamptz,
                                        max_rows integer DEFAULT 100, after %1$s.image_page_key DEFAULT NULL)
        RETURNS SETOF %1$s.images_by_tag
        LANGUAGE sql STABLE AS %2$L $d$, s, format($f$
            SELECT * FROM %1$s.images_by_tag AS i
             WHERE i.tag = tag_images.tag %2$s
        $f$, s, format(page_filter, 'tag_images')));
    object := s || '.tag_images(text, timestamptz, timestamptz, integer, image_page_key)'; kind := 'function'; RETURN NEXT;

    -- Images carrying all the tags: a seek on the first tag's partitions,
    -- keeping the rows whose tag array holds the others.  Put the rarest tag
    -- first.  No tags: no rows.
    EXECUTE format($d$
        CREATE FUNCTION %1$s.tag_images_all(tags text[], from_time timestamptz, to_time timestamptz,
                                            max_rows integer DEFAULT 100, after %1$s.image_page_key DEFAULT NULL)
        RETURNS SETOF %1$s.images_by_tag
        LANGUAGE sql STABLE AS %2$L $d$, s, format($f$
            SELECT * FROM %1$s.images_by_tag AS i
             WHERE i.tag = (tag_images_all.tags)[1] AND i.tags @> tag_images_all.tags %2$s
        $f$, s, format(page_filter, 'tag_images_all')));
    object := s || '.tag_images_all(text[], timestamptz, timestamptz, integer, image_page_key)'; kind := 'function'; RETURN NEXT;

    EXECUTE format($d$
        CREATE FUNCTION %1$s.batch_object_keys(batch text)
        RETURNS TABLE (image_id uuid, object_store text, object_key text)
        LANGUAGE sql STABLE AS %2$L $d$, s, format($f$
            SELECT b.image_id, b.object_store, b.object_key FROM %1$s.batch_images AS b
             WHERE b.batch_id = batch_object_keys.batch
             ORDER BY b.image_id
        $f$, s));
    object := s || '.batch_object_keys(text)'; kind := 'function'; RETURN NEXT;

    -- A seek over the day partitions (one per day of the range) with
    -- equality on the dimension; ranges of more than ten years (more
    -- partitions than a seek takes) are a scan.
    EXECUTE format($d$
        CREATE FUNCTION %1$s.daily_counts(from_day date, to_day date, by text DEFAULT 'device')
        RETURNS TABLE (day date, key text, images bigint)
        LANGUAGE plpgsql STABLE AS %2$L $d$, s, format($f$
        BEGIN
            IF by IS NULL OR by NOT IN ('device', 'tag', 'total') THEN
                RAISE EXCEPTION 'daily_counts: by must be device, tag or total, not %%', coalesce(by, 'NULL')
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;
            IF to_day - from_day < 3650 THEN
                RETURN QUERY SELECT c.day, CASE WHEN by = 'total' THEN 'all' ELSE c.value END, c.images
                               FROM %1$s.daily_counts AS c
                              WHERE c.day BETWEEN from_day AND to_day AND c.dimension = by AND c.images <> 0
                              ORDER BY 1, 2;
            ELSE
                RETURN QUERY SELECT c.day, CASE WHEN by = 'total' THEN 'all' ELSE c.value END, c.images
                               FROM %1$s.daily_counts AS c
                              WHERE (c.day BETWEEN from_day AND to_day) IS TRUE AND c.dimension = by AND c.images <> 0
                              ORDER BY 1, 2;
            END IF;
        END
        $f$, s));
    object := s || '.daily_counts(date, date, text)'; kind := 'function'; RETURN NEXT;

    -- counts anew from images (after upserts that replaced images, see the
    -- limits of query tables); writers wait meanwhile
    EXECUTE format($d$
        CREATE FUNCTION %1$s.rebuild_daily_counts() RETURNS bigint
        LANGUAGE plpgsql AS %2$L $d$, s, format($f$
        DECLARE n bigint;
        BEGIN
            LOCK TABLE %1$s.images IN SHARE MODE;
            TRUNCATE %1$s.daily_counts;
            EXECUTE format(widecol._image_store_count_sql(), %2$L, %3$L);
            GET DIAGNOSTICS n = ROW_COUNT;
            RETURN n;
        END
        $f$, s, s || '.daily_counts', format('SELECT capture_time, device_id, tags, 1 AS n FROM %s.images', s)));
    object := s || '.rebuild_daily_counts()'; kind := 'function'; RETURN NEXT;
END $$;
COMMENT ON FUNCTION widecol.create_image_store(name, interval) IS
    'create an image-metadata store in a schema: images, device/day and tag/day query tables, batch table, daily counter table, query functions';

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
