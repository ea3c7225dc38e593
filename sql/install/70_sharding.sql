-- Sharded tables (scale-out on PostgreSQL's own machinery): a
-- hash-partitioned table on a coordinator whose partitions are postgres_fdw
-- foreign tables, one per shard, each the same widecol table on its shard.
-- DDL reaches the shards through dblink (contrib, installed with the
-- server), connecting with the foreign servers' options and user mappings.
-- See README.md, "Scaling out".

-- One row per sharded table: the widecol options its shards were created
-- with (check_shards compares the shards with it).  Dumped with the data.
CREATE TABLE widecol.sharded_table (
    parent         regclass PRIMARY KEY,
    partition_key  text NOT NULL,
    clustering_key text,
    options        text,
    created        timestamptz NOT NULL DEFAULT now()
);
SELECT pg_catalog.pg_extension_config_dump('widecol.sharded_table', '');
GRANT SELECT ON widecol.sharded_table TO PUBLIC;
COMMENT ON TABLE widecol.sharded_table IS
    'sharded tables made by widecol.create_sharded_table: the widecol options of their shards';

-- Written only here, for a table the caller owns (forgets rows of dropped
-- tables on the way).
CREATE FUNCTION widecol._sharded_register(parent regclass, partition_key text, clustering_key text,
                                          options text, drop boolean DEFAULT false) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT widecol._owns(parent) THEN
        RAISE EXCEPTION 'must be owner of table %', parent USING ERRCODE = 'insufficient_privilege';
    END IF;
    DELETE FROM widecol.sharded_table s
     WHERE s.parent = _sharded_register.parent
        OR NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = s.parent);
    IF NOT drop THEN
        INSERT INTO widecol.sharded_table (parent, partition_key, clustering_key, options)
        VALUES (parent, partition_key, clustering_key, options);
    END IF;
END $$;
REVOKE ALL ON FUNCTION widecol._sharded_register(regclass, text, text, text, boolean) FROM PUBLIC;

-- The schema dblink is installed in; an error with a way out if it is not.
CREATE FUNCTION widecol._dblink() RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    s text;
BEGIN
    SELECT n.nspname INTO s FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'dblink';
    IF s IS NULL THEN
        RAISE EXCEPTION 'widecol reaches the shards through dblink, which is not installed in this database'
            USING ERRCODE = 'undefined_object',
                  HINT = 'CREATE EXTENSION dblink (it ships with the PostgreSQL server), or create the shard tables yourself: widecol.shard_ddl() returns the statement, and create_sharded_table(..., create_on_shards => false) then creates only the coordinator''s tables.';
    END IF;
    RETURN s;
END $$;

-- Run a command on a shard (a foreign server): its own transaction there.
CREATE FUNCTION widecol._shard_exec(server name, command text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('SELECT %I.dblink_exec(%L, %L)', widecol._dblink(), server, command);
END $$;

-- The text of the first column of the rows a query returns on a shard.
CREATE FUNCTION widecol._shard_query(server name, query text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('SELECT r FROM %I.dblink(%L, %L) AS t(r text)', widecol._dblink(), server, query);
END $$;

-- Column definitions of a table, for the same table elsewhere:
-- name, type, collation, NOT NULL.
CREATE FUNCTION widecol._column_ddl(rel regclass) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT string_agg(format('%I %s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                             CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation
                                  THEN ' COLLATE ' || a.attcollation::regcollation::text ELSE '' END,
                             CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END), ', ' ORDER BY a.attnum)
      FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
     WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped
$$;

-- What check_shards compares: columns with type and collation, in order.
CREATE FUNCTION widecol._columns_signature(rel regclass) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT string_agg(format('%I %s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                             CASE WHEN a.attcollation <> 0 THEN ' COLLATE ' || a.attcollation::regcollation::text ELSE '' END),
                      ', ' ORDER BY a.attnum)
      FROM pg_attribute a
     WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped
$$;

-- The WITH (...) list of a shard's widecol table.
CREATE FUNCTION widecol._shard_with(partition_key text, clustering_key text, options text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT concat_ws(', ', format('"widecol.partition_key" = %L', partition_key),
                     CASE WHEN nullif(btrim(clustering_key), '') IS NOT NULL
                          THEN format('"widecol.clustering_key" = %L', clustering_key) END,
                     nullif(options, ''))
$$;

-- The statement that creates sharded table parent's table on a shard.
CREATE FUNCTION widecol.shard_ddl(parent regclass) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    s widecol.sharded_table;
BEGIN
    SELECT * INTO s FROM widecol.sharded_table t WHERE t.parent = shard_ddl.parent;
    IF NOT FOUND THEN
        RAISE EXCEPTION '% is not a sharded table', parent USING ERRCODE = 'invalid_parameter_value',
            HINT = 'widecol.sharded_table lists the tables made by widecol.create_sharded_table().';
    END IF;
    RETURN format('CREATE TABLE %I.%I (%s) USING widecol WITH (%s)',
                  (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = parent),
                  (SELECT c.relname FROM pg_class c WHERE c.oid = parent),
                  widecol._column_ddl(parent), widecol._shard_with(s.partition_key, s.clustering_key, s.options));
END $$;
COMMENT ON FUNCTION widecol.shard_ddl(regclass) IS
    'the CREATE TABLE that makes a sharded table''s widecol table on a shard (to run by hand where dblink is not available)';

-- The foreign partitions of a sharded table, in remainder order.
CREATE FUNCTION widecol.shards(parent regclass)
RETURNS TABLE (shard integer, foreign_table regclass, server name, remote_table text,
               modulus integer, remainder integer)
LANGUAGE sql STABLE AS $$
    SELECT (row_number() OVER (ORDER BY b.remainder, c.oid) - 1)::int, c.oid::regclass, s.srvname,
           format('%I.%I',
                  coalesce((SELECT substr(o, 13) FROM unnest(ft.ftoptions) o WHERE o LIKE 'schema_name=%'), n.nspname),
                  coalesce((SELECT substr(o, 12) FROM unnest(ft.ftoptions) o WHERE o LIKE 'table_name=%'), c.relname)),
           b.modulus, b.remainder
      FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_foreign_table ft ON ft.ftrelid = c.oid
      JOIN pg_foreign_server s ON s.oid = ft.ftserver,
      LATERAL (SELECT (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'modulus (\d+), remainder (\d+)', 'i'))[1]::int AS modulus,
                      (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'modulus (\d+), remainder (\d+)', 'i'))[2]::int AS remainder) b
     WHERE i.inhparent = parent
$$;
COMMENT ON FUNCTION widecol.shards(regclass) IS
    'the foreign partitions of a sharded table: shard number, foreign table, server, table on the shard, hash bound';

-- Refuses an UPDATE that sets a shard-key column (statement trigger, so
-- that postgres_fdw still sends other UPDATEs to the shards whole).
CREATE FUNCTION widecol.refuse_shard_key_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'cannot update the shard key (%) of sharded table %', TG_ARGV[0], TG_TABLE_NAME
        USING ERRCODE = 'feature_not_supported',
              DETAIL = 'The shard key decides which shard holds a row; postgres_fdw would update the row where it is, on a shard that queries for its new key do not read.',
              HINT = 'DELETE the rows and INSERT them with their new key, in one transaction.';
END $$;

-- Internal (create_sharded_table, create_sharded_image_store): checks the
-- shards and batch sizes they are given; returns the number of shards.
CREATE FUNCTION widecol._check_shard_args(shards name[], fetch_size integer, batch_size integer) RETURNS integer
LANGUAGE plpgsql STABLE AS $$
DECLARE
    n integer := cardinality(shards);
    srv name;
BEGIN
    IF n IS NULL OR n = 0 THEN
        RAISE EXCEPTION 'shards must name at least one foreign server' USING ERRCODE = 'invalid_parameter_value',
            HINT = 'CREATE SERVER shard1 FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host ..., dbname ...) and a user mapping, then shards => ''{shard1, shard2}''.';
    END IF;
    IF (SELECT count(DISTINCT s) FROM unnest(shards) s) <> n THEN
        RAISE EXCEPTION 'shards lists a server twice' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOREACH srv IN ARRAY shards LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_foreign_server s JOIN pg_foreign_data_wrapper w ON w.oid = s.srvfdw
                        WHERE s.srvname = srv AND w.fdwname = 'postgres_fdw') THEN
            RAISE EXCEPTION 'foreign server "%" does not exist or is not a postgres_fdw server', srv
                USING ERRCODE = 'undefined_object';
        END IF;
    END LOOP;
    IF fetch_size < 1 OR batch_size < 1 THEN
        RAISE EXCEPTION 'fetch_size and batch_size must be positive' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN n;
END $$;

-- Internal: refuses a shard that has no widecol.
CREATE FUNCTION widecol._check_shard_widecol(server name) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM widecol._shard_query(server, 'SELECT extname FROM pg_extension WHERE extname = ''widecol''')) THEN
        RAISE EXCEPTION 'widecol is not installed on shard "%"', server USING ERRCODE = 'undefined_object',
            HINT = 'On each shard: shared_preload_libraries = ''widecol'', restart, CREATE EXTENSION widecol.';
    END IF;
END $$;

-- Internal: after a failed create, drops what it had made on the shards
-- done (command), each in its own transaction there; a shard where that
-- fails gets a warning that names what (the error being handled is the
-- one to report).
CREATE FUNCTION widecol._shards_undo(done name[], command text, what text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    srv name;
BEGIN
    FOREACH srv IN ARRAY done LOOP
        BEGIN
            PERFORM widecol._shard_exec(srv, command);
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'could not drop % again on shard "%"', what, srv;
        END;
    END LOOP;
END $$;

CREATE FUNCTION widecol.create_sharded_table(
    name text, columns text, partition_key text, clustering_key text DEFAULT NULL,
    shards name[] DEFAULT NULL, options text DEFAULT NULL, shard_key text DEFAULT NULL,
    fetch_size integer DEFAULT 1000, batch_size integer DEFAULT 10000,
    async_capable boolean DEFAULT true, create_on_shards boolean DEFAULT true)
RETURNS regclass
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    parts text[];
    nsp text;
    rel text;
    qname text;
    parent regclass;
    pk name[] := widecol._key_columns(partition_key);
    ck name[] := widecol._key_columns(clustering_key, 'clustering_key');
    sk name[] := widecol._key_columns(shard_key, 'shard_key');
    opts text;
    cols name[];
    missing name[];
    remote_ddl text;
    srv name;
    done name[] := '{}';
    i integer;
    n integer;
    part text;
BEGIN
    IF name IS NULL OR columns IS NULL OR partition_key IS NULL THEN
        RAISE EXCEPTION 'name, columns and partition_key must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF cardinality(pk) = 0 THEN
        RAISE EXCEPTION 'a sharded table needs a partition key' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF cardinality(sk) = 0 THEN
        sk := pk;
    ELSIF NOT sk <@ pk THEN
        RAISE EXCEPTION 'shard key column % is not a partition key column', (SELECT c FROM unnest(sk) c WHERE c <> ALL (pk) LIMIT 1)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'The shard key is the partition key or some of its columns, so that a partition lives on one shard.';
    END IF;
    n := widecol._check_shard_args(shards, fetch_size, batch_size);

    parts := widecol._parse_table_name(name, 'table');
    rel := parts[cardinality(parts)];
    nsp := CASE WHEN cardinality(parts) = 2 THEN parts[1] ELSE current_schema() END;
    IF nsp IS NULL THEN
        RAISE EXCEPTION 'no schema has been selected to create in' USING ERRCODE = 'invalid_schema_name';
    END IF;
    qname := format('%I.%I', nsp, rel);
    IF octet_length(rel || '_shard_' || (n - 1)) > 63 THEN
        RAISE EXCEPTION 'table name "%" is too long for the names of its foreign partitions', rel
            USING ERRCODE = 'name_too_long', HINT = format('Partitions are named %s_shard_N: use at most %s bytes.', rel, 63 - octet_length('_shard_' || (n - 1)));
    END IF;

    -- options: parsed, written back quoted; the keys have parameters of their own
    SELECT string_agg(CASE WHEN o.value IS NULL THEN quote_ident(o.name)
                           ELSE format('%I = %L', o.name, o.value) END, ', ' ORDER BY o.name)
      INTO opts FROM widecol._parse_table_options(options) AS o WHERE btrim(options) <> '';
    IF opts ~ '"widecol\.(partition|clustering)_key"' THEN
        RAISE EXCEPTION 'pass the keys as partition_key and clustering_key, not in options' USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- the coordinator's parent: its columns are those of every shard
    EXECUTE format('CREATE TABLE %s (%s) PARTITION BY HASH (%s)', qname, columns,
                   (SELECT string_agg(quote_ident(c), ', ') FROM unnest(sk) c));
    parent := qname::regclass;
    SELECT array_agg(a.attname) INTO cols FROM pg_attribute a
     WHERE a.attrelid = parent AND a.attnum > 0 AND NOT a.attisdropped;
    SELECT array_agg(k) INTO missing FROM unnest(pk || ck) k WHERE k <> ALL (cols);
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'key column % is not a column of the table', missing[1] USING ERRCODE = 'undefined_column';
    END IF;
    -- key columns may not be NULL in widecol: say so before a row travels
    EXECUTE format('ALTER TABLE %s %s', qname,
                   (SELECT string_agg(format('ALTER COLUMN %I SET NOT NULL', k), ', ') FROM unnest(pk || ck) k));
    PERFORM widecol._sharded_register(parent, partition_key, nullif(btrim(clustering_key), ''), opts);
    remote_ddl := widecol.shard_ddl(parent);

    -- one foreign partition per shard, and the shard-key UPDATE guard
    FOR i IN 0 .. n - 1 LOOP
        part := format('%I.%I', nsp, rel || '_shard_' || i);
        EXECUTE format('CREATE FOREIGN TABLE %s PARTITION OF %s FOR VALUES WITH (MODULUS %s, REMAINDER %s) '
                       'SERVER %I OPTIONS (schema_name %L, table_name %L, fetch_size %L, batch_size %L, async_capable %L)',
                       part, qname, n, i, shards[i + 1], nsp, rel, fetch_size, batch_size,
                       CASE WHEN async_capable THEN 'true' ELSE 'false' END);
        EXECUTE format('CREATE TRIGGER widecol_shard_key BEFORE UPDATE OF %s ON %s FOR EACH STATEMENT '
                       'EXECUTE FUNCTION widecol.refuse_shard_key_update(%L)',
                       (SELECT string_agg(quote_ident(c), ', ') FROM unnest(sk) c), part,
                       array_to_string(sk, ', '));
    END LOOP;
    EXECUTE format('CREATE TRIGGER widecol_shard_key BEFORE UPDATE OF %s ON %s FOR EACH STATEMENT '
                   'EXECUTE FUNCTION widecol.refuse_shard_key_update(%L)',
                   (SELECT string_agg(quote_ident(c), ', ') FROM unnest(sk) c), qname, array_to_string(sk, ', '));
    -- last, the shards' tables, each in its own transaction there (an error
    -- rolls back the coordinator's tables and drops the ones already made)
    IF create_on_shards THEN
        BEGIN
            FOREACH srv IN ARRAY shards LOOP
                PERFORM widecol._check_shard_widecol(srv);
                IF EXISTS (SELECT 1 FROM widecol._shard_query(srv, format('SELECT to_regclass(%L)::text', qname)) r WHERE r IS NOT NULL) THEN
                    RAISE EXCEPTION 'relation % already exists on shard "%"', qname, srv USING ERRCODE = 'duplicate_table',
                        HINT = 'Drop it there first, or create the coordinator''s tables alone with create_on_shards => false.';
                END IF;
                PERFORM widecol._shard_exec(srv, concat(
                    CASE WHEN NOT EXISTS (SELECT 1 FROM widecol._shard_query(srv, format('SELECT to_regnamespace(%L)::text', nsp)) r WHERE r IS NOT NULL)
                         THEN format('CREATE SCHEMA %I; ', nsp) END,
                    remote_ddl));
                done := done || srv;
            END LOOP;
        EXCEPTION WHEN OTHERS THEN
            PERFORM widecol._shards_undo(done, format('DROP TABLE IF EXISTS %s', qname), qname);
            RAISE;
        END;
    END IF;

    RETURN parent;
END $$;
COMMENT ON FUNCTION widecol.create_sharded_table(text, text, text, text, name[], text, text, integer, integer, boolean, boolean) IS
    'create a widecol table with the same columns and options on every shard (foreign servers), and on the coordinator a table partitioned by hash of the shard key with one postgres_fdw foreign partition per shard';

-- Do the shards hold the table the coordinator expects?
CREATE FUNCTION widecol.check_shards(parent regclass)
RETURNS TABLE (shard integer, server name, foreign_table regclass, remote_table text, ok boolean, problem text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    s widecol.sharded_table;
    sh record;
    local_cols text := widecol._columns_signature(parent);
    r text[];
    want_opts text;
    p text;
    dbl text := widecol._dblink();
BEGIN
    SELECT * INTO s FROM widecol.sharded_table t WHERE t.parent = check_shards.parent;
    IF NOT FOUND THEN
        RAISE EXCEPTION '% is not a sharded table', check_shards.parent USING ERRCODE = 'invalid_parameter_value',
            HINT = 'widecol.sharded_table lists the tables made by widecol.create_sharded_table().';
    END IF;
    -- the options a shard must have, as the shard stores them
    want_opts := widecol._shard_with(s.partition_key, s.clustering_key, s.options);
    FOR sh IN SELECT * FROM widecol.shards(check_shards.parent) LOOP
        shard := sh.shard; server := sh.server; foreign_table := sh.foreign_table; remote_table := sh.remote_table;
        p := NULL;
        BEGIN
            EXECUTE format($q$SELECT ARRAY[a, b, c, d] FROM %I.dblink(%L, %L) AS t(a text, b text, c text, d text)$q$,
                           dbl, sh.server, format($r$
                SELECT (SELECT amname FROM pg_am WHERE oid = c.relam),
                       (SELECT string_agg(format('%%I %%s%%s', a.attname, format_type(a.atttypid, a.atttypmod),
                                     CASE WHEN a.attcollation <> 0 THEN ' COLLATE ' || a.attcollation::regcollation::text ELSE '' END),
                                     ', ' ORDER BY a.attnum)
                          FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
                       (SELECT string_agg(o, ', ' ORDER BY o COLLATE "C") FROM unnest(c.reloptions) o WHERE o LIKE 'widecol.%%'),
                       (SELECT extversion FROM pg_extension WHERE extname = 'widecol')
                  FROM pg_class c WHERE c.oid = to_regclass(%L)$r$, sh.remote_table)) INTO r;
        EXCEPTION WHEN OTHERS THEN
            ok := false;
            problem := 'shard unreachable: ' || SQLERRM;
            RETURN NEXT;
            CONTINUE;
        END;
        IF r IS NULL THEN
            p := 'table missing on the shard';
        ELSIF r[1] IS DISTINCT FROM 'widecol' THEN
            p := format('table on the shard uses access method %s, not widecol', r[1]);
        ELSIF r[2] IS DISTINCT FROM local_cols THEN
            p := format('columns differ: shard has (%s), coordinator (%s)', r[2], local_cols);
        ELSE
            IF r[3] IS DISTINCT FROM (SELECT string_agg(format('%s=%s', o.name, o.value), ', ' ORDER BY format('%s=%s', o.name, o.value) COLLATE "C")
                                         FROM widecol._parse_table_options(want_opts) o) THEN
                p := format('widecol options differ: shard has (%s), expected (%s)', r[3], want_opts);
            ELSIF r[4] IS DISTINCT FROM (SELECT extversion FROM pg_extension WHERE extname = 'widecol') THEN
                p := format('widecol version differs: shard has %s, coordinator %s', coalesce(r[4], 'none'),
                            (SELECT extversion FROM pg_extension WHERE extname = 'widecol'));
            END IF;
        END IF;
        ok := p IS NULL;
        problem := p;
        RETURN NEXT;
    END LOOP;
END $$;
COMMENT ON FUNCTION widecol.check_shards(regclass) IS
    'for each shard of a sharded table: is it reachable, does it hold a widecol table with the coordinator''s columns and the table''s widecol options, and the coordinator''s widecol version';

-- Run a command on every shard of a sharded table ({table} stands for the
-- shard's table, quoted), one after another; one row per shard.
CREATE FUNCTION widecol.run_on_shards(parent regclass, command text)
RETURNS TABLE (shard integer, server name, result text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    sh record;
    cmd text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM widecol.shards(run_on_shards.parent)) THEN
        RAISE EXCEPTION '% has no foreign partitions', run_on_shards.parent USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOR sh IN SELECT * FROM widecol.shards(run_on_shards.parent) LOOP
        cmd := replace(command, '{table}', sh.remote_table);
        shard := sh.shard; server := sh.server;
        IF cmd ~* '^\s*(select|with|values|table|show)\M' THEN
            result := (SELECT string_agg(r, E'\n') FROM widecol._shard_query(sh.server, cmd) r);
        ELSE
            PERFORM widecol._shard_exec(sh.server, cmd);
            result := NULL;
        END IF;
        RETURN NEXT;
    END LOOP;
END $$;
COMMENT ON FUNCTION widecol.run_on_shards(regclass, text) IS
    'run a command on each shard of a sharded table ({table} is replaced by the shard''s table); the first column of a query''s rows, as text';

-- A view that runs a query on every shard and appends the results:
-- {shard} stands for each foreign partition.  A query that aggregates one
-- table is sent whole to its shard, and the shards run at the same time
-- (async append), so a report sums the shards' partial results.
CREATE FUNCTION widecol.create_shard_view(name text, parent regclass, query text)
RETURNS regclass
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    body text;
BEGIN
    IF position('{shard}' IN query) = 0 THEN
        RAISE EXCEPTION 'the query must read the shard''s table as {shard}' USING ERRCODE = 'invalid_parameter_value',
            HINT = 'For example: SELECT day_bucket, count(*) AS images FROM {shard} GROUP BY day_bucket';
    END IF;
    SELECT string_agg(format('SELECT * FROM (%s) AS %I', replace(query, '{shard}', s.foreign_table::text),
                             's' || s.shard), E'\nUNION ALL ' ORDER BY s.shard)
      INTO body FROM widecol.shards(parent) s;
    IF body IS NULL THEN
        RAISE EXCEPTION '% has no foreign partitions', parent USING ERRCODE = 'invalid_parameter_value';
    END IF;
    EXECUTE format('CREATE VIEW %s AS %s', (SELECT string_agg(quote_ident(p), '.') FROM unnest(parse_ident(name)) p), body);
    RETURN (SELECT string_agg(quote_ident(p), '.') FROM unnest(parse_ident(name)) p)::regclass;
END $$;
COMMENT ON FUNCTION widecol.create_shard_view(text, regclass, text) IS
    'create a view that appends the results of query ({shard} = each foreign partition) over every shard: per-shard aggregation for reports';

-- Drop a sharded table: its tables on the shards, then the coordinator's.
CREATE FUNCTION widecol.drop_sharded_table(parent regclass) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    sh record;
BEGIN
    IF NOT widecol._owns(parent) THEN
        RAISE EXCEPTION 'must be owner of table %', parent USING ERRCODE = 'insufficient_privilege';
    END IF;
    FOR sh IN SELECT * FROM widecol.shards(parent) LOOP
        PERFORM widecol._shard_exec(sh.server, format('DROP TABLE IF EXISTS %s', sh.remote_table));
    END LOOP;
    PERFORM widecol._sharded_register(parent, '', NULL, NULL, true);
    EXECUTE format('DROP TABLE %s', parent);
END $$;

-- Token-aware routing: the partition, foreign server, connection string
-- and remote table that hold the row with these shard-key values.
-- This backend's own connections to the shards (direct reads: one
-- autocommit statement per read, outside postgres_fdw's connections), and
-- closing them, as postgres_fdw_get_connections() and
-- postgres_fdw_disconnect() do for postgres_fdw's.
CREATE FUNCTION widecol.shard_connections(OUT server_name name, OUT busy boolean, OUT valid boolean)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'widecol_shard_connections' LANGUAGE C VOLATILE;
CREATE FUNCTION widecol.shard_disconnect(server_name name DEFAULT NULL) RETURNS integer
    AS 'MODULE_PATHNAME', 'widecol_shard_disconnect' LANGUAGE C VOLATILE;

CREATE FUNCTION widecol.shard_for(rel regclass, VARIADIC keys "any",
                                  OUT partition regclass, OUT server name, OUT conninfo text, OUT remote_table text)
    AS 'MODULE_PATHNAME', 'widecol_shard_for' LANGUAGE C STABLE;
COMMENT ON FUNCTION widecol.shard_for(regclass, "any") IS
    'the partition (foreign table), server, libpq connection string and table on the shard that hold a shard key: send single-partition queries there';
