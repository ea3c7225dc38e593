-- Sharded image store: an image store (widecol.create_image_store) on every
-- shard, in the same schema, and on the coordinator the same names over
-- them.  Images are sharded by device: an image, its device/day rows, its
-- tag rows, its batch rows and its daily counts live on its device's shard,
-- where the shard's triggers keep them (writes of images only, as on one
-- node).  On the coordinator:
--
--   images, device_daily_images, images_by_tag, batch_images
--       hash-partitioned by device_id like the shards' images, one
--       postgres_fdw foreign partition per shard (the same remainders, so a
--       device's rows of every table are on one shard);
--   daily_counts
--       a view appending the shards' counter tables;
--   device_images()   one shard (shard_for), WHERE, ORDER BY and LIMIT sent;
--   tag_images(), tag_images_all()
--       every shard at once, each sending its newest max_rows, merged;
--   image(), batch_object_keys()
--       every shard at once (an image id or a batch does not name a shard);
--   daily_counts()    the shards' counters summed;
--   rebuild_daily_counts()  on every shard.
--
-- The coordinator's query functions read the partitions with dynamic SQL
-- whose predicates are plain comparisons with parameters: postgres_fdw
-- sends only built-in, immutable expressions, and the day buckets and the
-- page bounds of the one-node functions are not (timestamptz arithmetic is
-- stable, widecol.day_bucket is an extension's).

-- The columns (as widecol._column_ddl writes them) of a table on a shard.
CREATE FUNCTION widecol._shard_column_ddl(server name, rel text) RETURNS text
LANGUAGE sql AS $$
    SELECT r FROM widecol._shard_query(server, format('SELECT widecol._column_ddl(%L::regclass)', rel)) r
$$;

-- The WHERE, ORDER BY and LIMIT of a page of images newest first, as sent
-- to a shard: $1 the partition's key value, $2/$3 the first/last day
-- bucket, $4/$5 the capture-time bounds [from, to), $6/$7 the page key
-- (NULL: first page), $8 max_rows; extra is more conditions (with AND).
CREATE FUNCTION widecol._store_page_sql(rel regclass, key_column name, extra text DEFAULT '') RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT format($q$SELECT * FROM %s AS i
         WHERE i.%I = $1 AND i.day >= $2 AND i.day <= $3 AND i.capture_time >= $4 AND i.capture_time < $5
           AND ($6 IS NULL OR i.capture_time < $6 OR (i.capture_time = $6 AND i.image_id < $7))%s
         ORDER BY i.capture_time DESC, i.image_id DESC LIMIT $8$q$, rel, key_column, extra)
$$;

-- The day buckets and capture-time bound of a page (the one-node functions'
-- page filter, computed once on the coordinator).
CREATE FUNCTION widecol._store_page_bounds(from_time timestamptz, to_time timestamptz, after_time timestamptz,
                                           OUT first_day date, OUT last_day date, OUT upper_time timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT widecol.day_bucket(from_time),
           widecol.day_bucket(least(to_time, after_time + interval '1 microsecond') - interval '1 microsecond'),
           least(to_time, after_time + interval '1 microsecond')
$$;

-- Every shard's page of a partitioned table of the store, merged newest
-- first: each shard sends at most max_rows, all at once (an Append of async
-- foreign scans; the CTE keeps the planner from merging the shards' sorted
-- results with a Merge Append, which reads them one after the other).
CREATE FUNCTION widecol._store_fanout_sql(parent regclass, key_column name, extra text DEFAULT '') RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT format('WITH u AS MATERIALIZED (%s) SELECT * FROM u ORDER BY u.capture_time DESC, u.image_id DESC LIMIT $8',
                  string_agg(format('(%s)', widecol._store_page_sql(s.foreign_table, key_column, extra)),
                             ' UNION ALL ' ORDER BY s.shard))
      FROM widecol.shards(parent) s
$$;

-- The body of a page function of the coordinator (device_images,
-- tag_images, tag_images_all): the bounds of the page computed once, then
-- statement (_store_page_sql or _store_fanout_sql) run with key as $1, the
-- bounds, page key and max_rows as $2 to $8, and the parameters more lists
-- (', a, b') from $9 on.
CREATE FUNCTION widecol._store_page_body(statement text, key text, more text DEFAULT '') RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT format($p$
        DECLARE
            b record := widecol._store_page_bounds(from_time, to_time, after.capture_time);
        BEGIN
            RETURN QUERY EXECUTE %s
                USING %s, b.first_day, b.last_day, from_time, b.upper_time, after.capture_time, after.image_id, max_rows%s;
        END
        $p$, statement, key, more)
$$;

CREATE FUNCTION widecol.create_sharded_image_store(store name, shards name[], ttl interval DEFAULT NULL,
                                                   fetch_size integer DEFAULT 1000, batch_size integer DEFAULT 10000)
RETURNS TABLE (object text, kind text)
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    s text := quote_ident(store);
    n integer;
    srv name;
    done name[] := '{}';
    t text;
    i integer;
    opts text := CASE WHEN ttl IS NULL THEN NULL ELSE format('widecol.default_ttl = %L', ttl) END;
BEGIN
    IF store IS NULL THEN
        RAISE EXCEPTION 'store schema name must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    n := widecol._check_shard_args(shards, fetch_size, batch_size);
    IF to_regnamespace(s) IS NOT NULL THEN
        RAISE EXCEPTION 'schema % already exists', s USING ERRCODE = 'duplicate_schema',
            HINT = 'A sharded image store takes a schema of its own, on the coordinator and on every shard.';
    END IF;
    PERFORM widecol._dblink();

    -- each shard's image store, in its own transaction there; on any error
    -- below, the schemas made on the shards are dropped again (the
    -- coordinator's objects roll back with this transaction)
    BEGIN
        FOREACH srv IN ARRAY shards LOOP
            PERFORM widecol._check_shard_widecol(srv);
            IF EXISTS (SELECT 1 FROM widecol._shard_query(srv, format('SELECT to_regnamespace(%L)::text', s)) r WHERE r IS NOT NULL) THEN
                RAISE EXCEPTION 'schema % already exists on shard "%"', s, srv USING ERRCODE = 'duplicate_schema',
                    HINT = 'Drop it there first, or choose another store name.';
            END IF;
            PERFORM widecol._shard_query(srv, format('SELECT count(*)::text FROM widecol.create_image_store(%L, %L)', store, ttl));
            done := done || srv;
        END LOOP;

        EXECUTE format('CREATE SCHEMA %s', s);
        -- the store's tables, partitioned by device like the shards' images
        FOREACH t IN ARRAY ARRAY['images', 'device_daily_images', 'images_by_tag', 'batch_images'] LOOP
            EXECUTE format('CREATE TABLE %s.%I (%s) PARTITION BY HASH (device_id)', s, t,
                           widecol._shard_column_ddl(shards[1], s || '.' || quote_ident(t)));
            FOR i IN 0 .. n - 1 LOOP
                EXECUTE format('CREATE FOREIGN TABLE %s.%I PARTITION OF %s.%I FOR VALUES WITH (MODULUS %s, REMAINDER %s) '
                               'SERVER %I OPTIONS (schema_name %L, table_name %L, fetch_size %L, batch_size %L, async_capable ''true'')',
                               s, t || '_shard_' || i, s, t, n, i, shards[i + 1], store, t, fetch_size, batch_size);
            END LOOP;
            object := s || '.' || quote_ident(t);
            kind := CASE WHEN t = 'images' THEN 'sharded table' ELSE 'sharded query table' END;
            RETURN NEXT;
        END LOOP;
        -- a device's rows stay on its shard
        FOR i IN 0 .. n - 1 LOOP
            EXECUTE format('CREATE TRIGGER widecol_shard_key BEFORE UPDATE OF device_id ON %s.%I FOR EACH STATEMENT '
                           'EXECUTE FUNCTION widecol.refuse_shard_key_update(''device_id'')', s, 'images_shard_' || i);
        END LOOP;
        EXECUTE format('CREATE TRIGGER widecol_shard_key BEFORE UPDATE OF device_id ON %s.images FOR EACH STATEMENT '
                       'EXECUTE FUNCTION widecol.refuse_shard_key_update(''device_id'')', s);
        -- check_shards and shard_for know the images table
        PERFORM widecol._sharded_register((s || '.images')::regclass, 'image_id', NULL, opts);

        EXECUTE format('CREATE TYPE %s.image_page_key AS (capture_time timestamptz, image_id uuid)', s);
        object := s || '.image_page_key'; kind := 'type'; RETURN NEXT;

        -- the counters: each shard's, appended
        FOR i IN 0 .. n - 1 LOOP
            EXECUTE format('CREATE FOREIGN TABLE %s.%I (%s) SERVER %I OPTIONS (schema_name %L, table_name ''daily_counts'', '
                           'fetch_size %L, async_capable ''true'')', s, 'daily_counts_shard_' || i,
                           widecol._shard_column_ddl(shards[i + 1], s || '.daily_counts'), shards[i + 1], store, fetch_size);
        END LOOP;
        EXECUTE format('CREATE VIEW %s.daily_counts AS %s', s,
                       (SELECT string_agg(format('SELECT * FROM %s.%I', s, 'daily_counts_shard_' || g), ' UNION ALL ' ORDER BY g)
                          FROM generate_series(0, n - 1) g));
        object := s || '.daily_counts'; kind := 'view of the shards'' counter tables'; RETURN NEXT;
    EXCEPTION WHEN OTHERS THEN
        PERFORM widecol._shards_undo(done, format('DROP SCHEMA %s CASCADE', s), 'schema ' || s);
        RAISE;
    END;

    -- Function bodies are passed as literals (%L), the schema appears in them
    -- only as a quoted identifier.
    object := widecol._image_store_function(s, 'image'); kind := 'function (every shard)'; RETURN NEXT;

    object := widecol._image_store_function(s, 'device_images', 'plpgsql', widecol._store_page_body(
        format('widecol._store_page_sql((widecol.shard_for(%L, device)).partition, %L)', s || '.device_daily_images', 'device_id'),
        'device'));
    kind := 'function (one shard)'; RETURN NEXT;

    object := widecol._image_store_function(s, 'tag_images', 'plpgsql', widecol._store_page_body(
        format('widecol._store_fanout_sql(%L, %L)', s || '.images_by_tag', 'tag'), 'tag'));
    kind := 'function (every shard)'; RETURN NEXT;

    -- images carrying all the tags: the first tag's rows whose array holds the others
    object := widecol._image_store_function(s, 'tag_images_all', 'plpgsql', widecol._store_page_body(
        format('widecol._store_fanout_sql(%L, %L, %L)', s || '.images_by_tag', 'tag', ' AND i.tags @> $9'), 'tags[1]', ', tags'));
    kind := 'function (every shard)'; RETURN NEXT;

    object := widecol._image_store_function(s, 'batch_object_keys'); kind := 'function (every shard)'; RETURN NEXT;

    object := widecol._image_store_function(s, 'daily_counts', 'plpgsql', format($f$
            RETURN QUERY SELECT c.day, CASE WHEN by = 'total' THEN 'all' ELSE c.value END, sum(c.images)::bigint
                           FROM %1$s.daily_counts AS c
                          WHERE c.day >= from_day AND c.day <= to_day AND c.dimension = by
                          GROUP BY 1, 2 HAVING sum(c.images) <> 0
                          ORDER BY 1, 2;$f$, s));
    kind := 'function (every shard, summed)'; RETURN NEXT;

    object := widecol._image_store_function(s, 'rebuild_daily_counts', 'sql', format($f$
            SELECT sum(result::bigint)::bigint FROM widecol.run_on_shards(%1$L, %2$L)
        $f$, s || '.images', format('SELECT %s.rebuild_daily_counts()', s)));
    kind := 'function (every shard)'; RETURN NEXT;
END $$;
COMMENT ON FUNCTION widecol.create_sharded_image_store(name, name[], interval, integer, integer) IS
    'create an image store on every shard (foreign servers) and on the coordinator the same tables, hash-partitioned by device over them, with query functions that route by device or fan out';
