-- ======================================================================
-- Query tables: derived widecol tables kept in step with a base table by
-- statement-level triggers (see "Query tables" in src/README.md).  The
-- catalog is written by C functions (api/querytable.c) only.
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

-- Every statement that inserts into query table q begins with this text
-- and goes on with a SELECT of all its columns, in order: the trigger runs
-- that SELECT alone and writes its rows into q itself (api/qttrigger.c).
CREATE FUNCTION widecol._qt_insert_prefix(q widecol.query_table) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT format('INSERT INTO %s (%s) ', q.query_table, widecol._qt_collist(q.columns))
$$;

-- A counter query table's statement for one base-table statement: the
-- definition (GROUP BY-shaped, additive aggregates) over the new rows adds,
-- over the old rows subtracts, summed per key into blind increments.  With
-- rows on one side only (an INSERT of new keys, a DELETE) the rows are
-- written as the definition returns them: increments of one key add up in
-- the table, so summing them first would only cost another aggregation.
CREATE FUNCTION widecol._qt_counter_statement(q widecol.query_table, dnew text, dold text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    WITH c AS (
        SELECT (SELECT string_agg(CASE WHEN c = ANY (q.counters) THEN format('-%1$I AS %1$I', c) ELSE quote_ident(c) END, ', ' ORDER BY n)
                  FROM unnest(q.columns) WITH ORDINALITY u(c, n)) AS negated,
               (SELECT string_agg(format('%I IS DISTINCT FROM 0', c), ' OR ') FROM unnest(q.counters) c) AS nonzero,
               widecol._qt_collist(q.columns) AS cols)
    SELECT widecol._qt_insert_prefix(q) || CASE
        WHEN dold IS NULL THEN format('SELECT %s FROM %s AS n WHERE %s', c.cols, dnew, c.nonzero)
        WHEN dnew IS NULL THEN format('SELECT %s FROM %s AS o WHERE %s', c.negated, dold, c.nonzero)
        ELSE format('SELECT %s FROM (%s) AS x GROUP BY %s HAVING %s',
            -- counters are bigint (widecol.counter_columns): the sum's numeric
            -- is cast as the INSERT would, so the rows have the table's types
            (SELECT string_agg(CASE WHEN c = ANY (q.counters) THEN format('sum(%1$I)::bigint AS %1$I', c) ELSE quote_ident(c) END, ', ' ORDER BY n)
               FROM unnest(q.columns) WITH ORDINALITY u(c, n)),
            format('SELECT %s FROM %s AS n UNION ALL SELECT %s FROM %s AS o', c.cols, dnew, c.negated, dold),
            widecol._qt_collist(q.key_columns),
            (SELECT string_agg(format('sum(%I) IS DISTINCT FROM 0', c), ' OR ') FROM unnest(q.counters) c))
        END
      FROM c
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
    ins  text := widecol._qt_insert_prefix(q) || format('SELECT %s FROM ', cols);
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

-- The statements a query table's trigger runs for one shape of base
-- statement (see api/qttrigger.c, which prepares and keeps them):
-- INSERT, UPSERT (an INSERT that replaced rows), UPSERT_REPEATED (... and
-- wrote a key twice: only the last row of each key derives rows), UPDATE
-- (a base whose UPDATEs replace nothing else), UPDATE_REPLACED[_REPEATED]
-- (a keyed widecol base, whose moved rows may replace others), DELETE,
-- TRUNCATE, and REPEATED (does an UPDATE's NEW TABLE hold a key twice?).
-- insert_rows is, for a statement that inserts into the query table, the
-- SELECT of the rows it inserts (all columns, in order), else NULL.
CREATE FUNCTION widecol._qt_trigger_statements(qid integer, shape text)
RETURNS TABLE (statement text, insert_rows text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    q widecol.query_table;
    new_rows text := CASE WHEN shape LIKE '%REPEATED' THEN NULL ELSE 'widecol_new_rows' END;
    stmts text[];
    prefix text;
BEGIN
    SELECT * INTO STRICT q FROM widecol.query_table WHERE id = qid;
    IF new_rows IS NULL AND shape <> 'REPEATED' THEN
        new_rows := widecol._new_rows_sql(q.base);
    END IF;
    CASE shape
    WHEN 'INSERT', 'UPDATE', 'DELETE' THEN
        stmts := widecol._qt_statements(q, shape);
    WHEN 'UPSERT', 'UPSERT_REPEATED' THEN
        stmts := widecol._qt_statements(q, 'UPSERT',
            format('(SELECT * FROM widecol._replaced_rows(NULL::%s)) AS replaced', q.base), new_rows);
    WHEN 'UPDATE_REPLACED', 'UPDATE_REPLACED_REPEATED' THEN
        stmts := widecol._qt_statements(q, 'UPDATE',
            '(' || widecol._replaced_rows_sql(q.base, 'UPDATE') || ') AS replaced', new_rows);
    WHEN 'TRUNCATE' THEN
        stmts := ARRAY[format('TRUNCATE %s', q.query_table)];
    WHEN 'REPEATED' THEN
        stmts := ARRAY[widecol._repeated_keys_sql(q.base)];
    END CASE;
    prefix := widecol._qt_insert_prefix(q);
    RETURN QUERY
        SELECT s, CASE WHEN starts_with(s, prefix) THEN substr(s, length(prefix) + 1) END
          FROM unnest(stmts) WITH ORDINALITY AS u(s, n) ORDER BY n;
END $$;

-- The trigger on the base table: one per query table and event, statement
-- level with transition tables, so a COPY or a multi-row statement costs one
-- set-based DELETE and/or INSERT into the query table, with plans kept per
-- query table (api/qttrigger.c).  Runs as the user who writes the base
-- table: that user needs INSERT and DELETE on the query table too.
CREATE FUNCTION widecol.query_table_trigger() RETURNS trigger
    AS 'MODULE_PATHNAME', 'widecol_query_table_trigger' LANGUAGE C;

-- BEFORE ... FOR EACH STATEMENT on a query table: refuses a write unless
-- widecol.allow_query_table_writes is on (the base's triggers and the
-- rebuild turn it on for their own statements).
CREATE FUNCTION widecol._query_table_guard() RETURNS trigger
    AS 'MODULE_PATHNAME', 'widecol_query_table_guard' LANGUAGE C;

CREATE FUNCTION widecol._qt_create_triggers(q widecol.query_table) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    ev text;
    suffix text;
    transition text;
BEGIN
    -- the base's writes, each with the transition tables it has (the
    -- keyword and the trigger name's suffix both spelt out: upper() and
    -- lower() follow the database's locale)
    FOR ev, suffix, transition IN VALUES
        ('INSERT', 'insert', 'REFERENCING NEW TABLE AS widecol_new_rows '),
        ('UPDATE', 'update', 'REFERENCING OLD TABLE AS widecol_old_rows NEW TABLE AS widecol_new_rows '),
        ('DELETE', 'delete', 'REFERENCING OLD TABLE AS widecol_old_rows '),
        ('TRUNCATE', 'truncate', '')
    LOOP
        EXECUTE format('CREATE TRIGGER %I AFTER %s ON %s %s'
                       'FOR EACH STATEMENT EXECUTE FUNCTION widecol.query_table_trigger(%L)',
                       'widecol_qt_' || q.id || '_' || suffix, ev, q.base, transition, q.id);
    END LOOP;
    -- writes that do not come from these triggers or a rebuild are refused
    EXECUTE format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION widecol._query_table_guard()',
                   'widecol_qt_' || q.id || '_guard', q.query_table);
END $$;

-- Internal (create_query_table, create_sharded_table): the parts of a
-- table name, table or schema.table, as parse_ident splits it; what is the
-- kind of table the errors name.
CREATE FUNCTION widecol._parse_table_name(name text, what text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    parts text[];
BEGIN
    BEGIN
        parts := parse_ident(name);
    EXCEPTION WHEN OTHERS THEN
        RAISE EXCEPTION 'invalid % name "%"', what, name USING ERRCODE = 'invalid_name';
    END;
    IF cardinality(parts) > 2 THEN
        RAISE EXCEPTION 'invalid % name "%"', what, name USING ERRCODE = 'invalid_name',
            HINT = 'Use table or schema.table.';
    END IF;
    RETURN parts;
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
    parts := widecol._parse_table_name(name, 'query table');
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
        PERFORM widecol._qt_fill(q);
    END IF;
    RETURN q.query_table;
END $$;
COMMENT ON FUNCTION widecol.create_query_table(text, regclass, text, text, text, text, boolean, text) IS
    'create a widecol table derived from each row of base by definition (a SELECT over "base") and keep it in step with base; with counters, a counter table that the definition (GROUP BY the key, sums into the counters) adds to and subtracts from';

-- Fill a new query table from its base (populate => true): writers of the
-- base wait meanwhile.  Returns the number of rows derived.
CREATE FUNCTION widecol._qt_fill(q widecol.query_table) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    stmt text;
    n bigint;
    path text := current_setting('search_path');
BEGIN
    EXECUTE format('LOCK TABLE %s IN SHARE MODE', q.base);
    PERFORM set_config('search_path', q.search_path, true);
    FOREACH stmt IN ARRAY widecol._qt_statements(q, 'REBUILD') LOOP
        EXECUTE stmt;
        GET DIAGNOSTICS n = ROW_COUNT;
    END LOOP;
    PERFORM set_config('search_path', path, true);
    RETURN n;
END $$ SET widecol.allow_query_table_writes = on;

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
