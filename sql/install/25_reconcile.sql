-- ======================================================================
-- Reconciling query tables with their base: check, diff and rebuild, of
-- the whole table or of a range of one of its columns (see "Check and
-- rebuild" under Query tables in src/README.md).
-- ======================================================================

-- The query table named, checked: registered, and (own => true) owned.
CREATE FUNCTION widecol._qt_get(name regclass, own boolean DEFAULT false) RETURNS widecol.query_table
LANGUAGE plpgsql STABLE AS $$
DECLARE
    q widecol.query_table;
BEGIN
    SELECT * INTO q FROM widecol.query_table t WHERE t.query_table = name;
    IF NOT FOUND THEN
        RAISE EXCEPTION '% is not a query table', name USING ERRCODE = 'invalid_parameter_value',
            HINT = 'widecol.query_table lists the query tables.';
    END IF;
    IF own AND NOT widecol._owns(q.query_table) THEN
        RAISE EXCEPTION 'must be owner of table %', q.query_table USING ERRCODE = 'insufficient_privilege',
            HINT = 'A query table is rebuilt by its owner (the owner of its base table).';
    END IF;
    RETURN q;
END $$;

-- "alias.col >= $1 AND alias.col < $2" for a range [since, until) of a
-- column of query table q (the statement gets since and until as $1 and
-- $2; an absent bound is left out), or 'true' for no range.  Bounds given
-- as text are cast to the column's type.
CREATE FUNCTION widecol._qt_range_sql(q widecol.query_table, range_column name,
                                      since anycompatible, until anycompatible, alias text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    bound_type regtype := pg_typeof(coalesce(since, until));
    has_since boolean := since IS NOT NULL;
    has_until boolean := until IS NOT NULL;
    coltype regtype;
    cast_to text := '';
BEGIN
    IF range_column IS NULL THEN
        IF has_since OR has_until THEN
            RAISE EXCEPTION 'since and until need a range_column' USING ERRCODE = 'invalid_parameter_value',
                HINT = format('Name the column of %s the range is on, for example range_column => %L.',
                              q.query_table, q.key_columns[cardinality(q.key_columns)]);
        END IF;
        RETURN 'true';
    END IF;
    SELECT a.atttypid INTO coltype FROM pg_catalog.pg_attribute a
     WHERE a.attrelid = q.query_table AND a.attname = range_column AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" is not a column of query table %', range_column, q.query_table
            USING ERRCODE = 'undefined_column',
                  HINT = format('The range is on a column of the query table: %s.', array_to_string(q.columns, ', '));
    END IF;
    IF bound_type IN ('text'::regtype, 'unknown'::regtype) AND coltype <> 'text'::regtype THEN
        cast_to := '::' || coltype::text;
    END IF;
    RETURN concat_ws(' AND ',
        CASE WHEN has_since THEN format('%s.%I >= $1%s', alias, range_column, cast_to) END,
        CASE WHEN has_until THEN format('%s.%I < $2%s', alias, range_column, cast_to) END,
        'true');
END $$;

-- The rows q's definition derives now (expected) and the rows stored
-- (actual), in the range: two subqueries for one statement.
CREATE FUNCTION widecol._qt_expected_sql(q widecol.query_table, range_sql text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT format('(SELECT * FROM %s AS r WHERE %s)', widecol._qt_derived(q.definition, q.base::text), range_sql)
$$;
CREATE FUNCTION widecol._qt_actual_sql(q widecol.query_table, range_sql text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT format('(SELECT * FROM %s AS r WHERE %s)', widecol._qt_stored(q), range_sql)
$$;

-- The base table's key columns if q's rows carry them all (its widecol
-- key, or a heap base's primary key), else '{}'.
CREATE FUNCTION widecol._qt_base_key(q widecol.query_table) RETURNS name[]
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN cardinality(k) > 0 AND k <@ q.columns THEN k ELSE '{}' END
      FROM (SELECT CASE WHEN cardinality(widecol._table_key_columns(q.base)) > 0
                        THEN widecol._table_key_columns(q.base)
                        ELSE (SELECT array_agg(a.attname ORDER BY a.attnum)
                                FROM pg_catalog.pg_index i
                                JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
                               WHERE i.indrelid = q.base AND i.indisprimary) END AS k) AS s
$$;

-- Reconcile a query table with its base: the rows the definition derives
-- now (expected) against the rows stored (actual), matched by key; with
-- range_column, only rows whose range_column is in [since, until).
CREATE FUNCTION widecol.query_table_diff(name regclass, max_rows bigint DEFAULT NULL,
                                         range_column name DEFAULT NULL,
                                         since anycompatible DEFAULT NULL, until anycompatible DEFAULT NULL)
RETURNS TABLE (status text, key jsonb, expected jsonb, actual jsonb)
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    q widecol.query_table := widecol._qt_get(name);
    path text := current_setting('search_path');
    keys text := widecol._qt_collist(q.key_columns);
    range_sql text := widecol._qt_range_sql(q, range_column, since, until, 'r');
BEGIN
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
        keys, widecol._qt_expected_sql(q, range_sql), widecol._qt_actual_sql(q, range_sql),
        q.key_columns, widecol._qt_key_join(q.key_columns, 'e', 'a'),
        coalesce(max_rows::text, 'ALL'))
    USING since, until;
    PERFORM set_config('search_path', path, true);
END $$;
COMMENT ON FUNCTION widecol.query_table_diff(regclass, bigint, name, anycompatible, anycompatible) IS
    'rows of a query table (optionally those whose range_column is in [since, until)) that differ from what its definition derives from the base table now: missing, extra, different, duplicate key';

CREATE FUNCTION widecol.check_query_table(name regclass, range_column name DEFAULT NULL,
                                          since anycompatible DEFAULT NULL, until anycompatible DEFAULT NULL)
RETURNS TABLE (query_table regclass, base regclass, expected_rows bigint, actual_rows bigint,
               missing bigint, extra bigint, different bigint, duplicate_keys bigint, ok boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    q widecol.query_table := widecol._qt_get(name);
    path text := current_setting('search_path');
    keys text := widecol._qt_collist(q.key_columns);
    range_sql text := widecol._qt_range_sql(q, range_column, since, until, 'r');
BEGIN
    query_table := q.query_table;
    base := q.base;
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
        keys, widecol._qt_expected_sql(q, range_sql), widecol._qt_actual_sql(q, range_sql),
        widecol._qt_key_join(q.key_columns, 'e', 'a'))
    INTO expected_rows, actual_rows, missing, extra, different, duplicate_keys
    USING since, until;
    PERFORM set_config('search_path', path, true);
    ok := missing + extra + different + duplicate_keys = 0;
    RETURN NEXT;
END $$;
COMMENT ON FUNCTION widecol.check_query_table(regclass, name, anycompatible, anycompatible) IS
    'reconcile a query table (optionally its rows whose range_column is in [since, until)) with its base table: rows expected and stored, missing, extra, different, duplicate keys';

-- Repair a query table (or the rows of a range of it) online.  Writers of
-- the base are not blocked while the differences are found; then:
--   a counter query table gets, per key, expected - stored as one blind
--   increment: both read with one snapshot, and every later writer adds
--   its own change, so the sum is right without any lock;
--   a query table whose rows carry the base's key gets, under a SHARE lock
--   on the base held only for this step, the rows of the base rows that
--   differed derived again (their old rows deleted by key): a cost in
--   proportion to the differences;
--   other query tables are derived again over the range under that lock.
-- Returns the number of rows (or increments) written.
CREATE FUNCTION widecol.rebuild_query_table(name regclass, range_column name DEFAULT NULL,
                                            since anycompatible DEFAULT NULL, until anycompatible DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    q widecol.query_table := widecol._qt_get(name, own => true);
    path text := current_setting('search_path');
    range_sql text := widecol._qt_range_sql(q, range_column, since, until, 'r');
    expected text;
    actual text;
    keys text := widecol._qt_collist(q.key_columns);
    base_key name[] := widecol._qt_base_key(q);
    changed text;
    n bigint;
BEGIN
    PERFORM set_config('search_path', q.search_path, true);
    expected := widecol._qt_expected_sql(q, range_sql);
    actual := widecol._qt_actual_sql(q, range_sql);
    IF cardinality(q.counters) > 0 THEN
        EXECUTE format('INSERT INTO %s (%s) SELECT %s FROM (SELECT * FROM %s AS e UNION ALL SELECT %s FROM %s AS a) AS x '
                       'GROUP BY %s HAVING %s',
            q.query_table, widecol._qt_collist(q.columns),
            (SELECT string_agg(CASE WHEN c = ANY (q.counters) THEN format('sum(%I)', c) ELSE quote_ident(c) END, ', ' ORDER BY o)
               FROM unnest(q.columns) WITH ORDINALITY u(c, o)),
            expected,
            (SELECT string_agg(CASE WHEN c = ANY (q.counters) THEN format('-a.%1$I AS %1$I', c) ELSE 'a.' || quote_ident(c) END, ', ' ORDER BY o)
               FROM unnest(q.columns) WITH ORDINALITY u(c, o)),
            actual, keys,
            (SELECT string_agg(format('sum(%I) IS DISTINCT FROM 0', c), ' OR ') FROM unnest(q.counters) c))
        USING since, until;
        GET DIAGNOSTICS n = ROW_COUNT;
    ELSIF cardinality(base_key) > 0 THEN
        -- the rows that differ, expected or stored, found without a lock
        IF to_regclass('pg_temp.widecol_qt_fix') IS NOT NULL THEN
            DROP TABLE pg_temp.widecol_qt_fix;
        END IF;
        EXECUTE format('CREATE TEMP TABLE widecol_qt_fix ON COMMIT DROP AS '
                       'SELECT e.* FROM (SELECT x.*, x::text AS widecol_row FROM %1$s AS x) AS e '
                       ' WHERE NOT EXISTS (SELECT FROM %2$s AS y WHERE y::text = e.widecol_row) '
                       'UNION ALL '
                       'SELECT a.* FROM (SELECT y.*, y::text AS widecol_row FROM %2$s AS y) AS a '
                       ' WHERE NOT EXISTS (SELECT FROM %1$s AS x WHERE x::text = a.widecol_row)',
                       expected, actual)
        USING since, until;
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n = 0 THEN
            DROP TABLE pg_temp.widecol_qt_fix;
            PERFORM set_config('search_path', path, true);
            RETURN 0;
        END IF;
        ANALYZE pg_temp.widecol_qt_fix;
        -- the base rows they come from, derived again as they are now
        changed := widecol._qt_derived(q.definition, format('%s AS b WHERE (%s) IN (SELECT DISTINCT %s FROM pg_temp.widecol_qt_fix)',
                                       q.base, widecol._qt_collist(base_key, 'b'), widecol._qt_collist(base_key)));
        -- writers wait from here to the end of the transaction
        EXECUTE format('LOCK TABLE %s IN SHARE MODE', q.base);
        EXECUTE format('WITH o AS MATERIALIZED (SELECT %1$s FROM pg_temp.widecol_qt_fix UNION SELECT %1$s FROM %2$s AS c) '
                       'DELETE FROM %3$s AS t USING o WHERE %4$s',
                       keys, changed, q.query_table, widecol._qt_key_join(q.key_columns, 't', 'o'));
        EXECUTE format('INSERT INTO %1$s (%2$s) SELECT %2$s FROM %3$s AS c', q.query_table, widecol._qt_collist(q.columns), changed);
        GET DIAGNOSTICS n = ROW_COUNT;
        DROP TABLE pg_temp.widecol_qt_fix;
    ELSE
        EXECUTE format('LOCK TABLE %s IN SHARE MODE', q.base);
        IF range_sql = 'true' THEN
            EXECUTE format('TRUNCATE %s', q.query_table);
        ELSE
            EXECUTE format('DELETE FROM %s AS r WHERE %s', q.query_table, range_sql) USING since, until;
        END IF;
        EXECUTE format('INSERT INTO %1$s (%2$s) SELECT %2$s FROM %3$s AS e', q.query_table, widecol._qt_collist(q.columns), expected)
        USING since, until;
        GET DIAGNOSTICS n = ROW_COUNT;
    END IF;
    PERFORM set_config('search_path', path, true);
    RETURN n;
END $$;
COMMENT ON FUNCTION widecol.rebuild_query_table(regclass, name, anycompatible, anycompatible) IS
    'repair a query table (optionally its rows whose range_column is in [since, until)) online: finds the differences without blocking writers, then writes them; returns the rows written';
-- the rebuild writes into the query table itself
ALTER FUNCTION widecol.rebuild_query_table(regclass, name, anycompatible, anycompatible)
    SET widecol.allow_query_table_writes = on;
