-- ---------------------------------------------------------------------
-- Image store
-- ---------------------------------------------------------------------

-- Internal (create_image_store, create_sharded_image_store): creates query
-- function fn of the image store in schema s (quoted), with the signature
-- it has in every image store, one-node or sharded, and a body in language
-- lang; returns the function as the stores list it.  image() and
-- batch_object_keys() read the same on one node and on a sharded store's
-- coordinator: their body is this one (body NULL).  daily_counts() checks
-- its dimension first, the same in both: its body is what follows.
CREATE FUNCTION widecol._image_store_function(s text, fn text, lang text DEFAULT 'sql', body text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    -- a page of images newest first, of [from_time, to_time), after the page key
    page_args CONSTANT text := 'from_time timestamptz, to_time timestamptz, '
                               'max_rows integer DEFAULT 100, after %1$s.image_page_key DEFAULT NULL';
    page_types CONSTANT text := 'timestamptz, timestamptz, integer, image_page_key';
    args text;
    types text;
    result text;
    volatility text := 'STABLE';
BEGIN
    CASE fn
    WHEN 'image' THEN
        args := 'id uuid'; types := 'uuid'; result := 'SETOF %1$s.images';
        body := coalesce(body, format($f$
            SELECT * FROM %1$s.images AS i WHERE i.image_id = image.id
        $f$, s));
    WHEN 'device_images' THEN
        args := 'device text, ' || page_args; types := 'text, ' || page_types; result := 'SETOF %1$s.device_daily_images';
    WHEN 'tag_images' THEN
        args := 'tag text, ' || page_args; types := 'text, ' || page_types; result := 'SETOF %1$s.images_by_tag';
    WHEN 'tag_images_all' THEN
        args := 'tags text[], ' || page_args; types := 'text[], ' || page_types; result := 'SETOF %1$s.images_by_tag';
    WHEN 'batch_object_keys' THEN
        args := 'batch text'; types := 'text'; result := 'TABLE (image_id uuid, object_store text, object_key text)';
        body := coalesce(body, format($f$
            SELECT b.image_id, b.object_store, b.object_key FROM %1$s.batch_images AS b
             WHERE b.batch_id = batch_object_keys.batch
             ORDER BY b.image_id
        $f$, s));
    WHEN 'daily_counts' THEN
        args := 'from_day date, to_day date, by text DEFAULT ''device'''; types := 'date, date, text';
        result := 'TABLE (day date, key text, images bigint)';
        body := format($f$
        BEGIN
            IF by IS NULL OR by NOT IN ('device', 'tag', 'total') THEN
                RAISE EXCEPTION 'daily_counts: by must be device, tag or total, not %%', coalesce(by, 'NULL')
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;%s
        END
        $f$, body);
    WHEN 'rebuild_daily_counts' THEN
        args := ''; types := ''; result := 'bigint'; volatility := 'VOLATILE';
    END CASE;
    EXECUTE format('CREATE FUNCTION %1$s.%2$s(%3$s) RETURNS %4$s LANGUAGE %5$s %6$s AS %7$L',
                   s, fn, format(args, s), format(result, s), lang, volatility, body);
    RETURN format('%s.%s(%s)', s, fn, types);
END $$;

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
-- Daily counts are a counter query table of images (widecol.counter_columns):
--   daily_counts (day, dimension, value, images)   partition day, clustering (dimension, value)
-- with one row per (day, 'device', device_id), (day, 'tag', tag) and
-- (day, 'total', '').  Its triggers add the definition over a statement's
-- new rows and subtract it over its old ones (deleted, updated, replaced),
-- as blind counter increments: concurrent writers never wait for each
-- other and no increment is lost.  daily_counts() is a seek over the day
-- partitions.
-- The tag helpers of the store's query tables (src/api/imagetags.c): one
-- function scan each where SELECT DISTINCT over unnest, or a LATERAL
-- UNION ALL, cost an aggregate and an append set up for every statement.
CREATE FUNCTION widecol.distinct_tags(tags text[]) RETURNS text[]
    AS 'MODULE_PATHNAME', 'widecol_distinct_tags' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION widecol.distinct_tags(text[]) IS
    'the distinct non-NULL elements of tags, in the order they first appear; empty for NULL';
CREATE FUNCTION widecol.image_dimensions(device_id text, tags text[], OUT dimension text, OUT value text)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'widecol_image_dimensions' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 4;
COMMENT ON FUNCTION widecol.image_dimensions(text, text[]) IS
    'what an image counts under in daily_counts: (total, empty string), (device, device_id), and (tag, t) for each distinct non-NULL tag';

CREATE FUNCTION widecol.create_image_store(store name, ttl interval DEFAULT NULL)
RETURNS TABLE (object text, kind text)
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    s text := quote_ident(store);
    opts text := CASE WHEN ttl IS NULL THEN NULL ELSE format('"widecol.default_ttl" = %L', ttl) END;
    page_body text;
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
        'SELECT t.tag, widecol.day_bucket(b.capture_time) AS day, b.capture_time, b.image_id,
                b.device_id, b.object_store, b.object_key, b.tags
           FROM base AS b CROSS JOIN LATERAL unnest(widecol.distinct_tags(b.tags)) AS t(tag)',
        'tag, day', 'capture_time DESC, image_id DESC', opts);
    object := s || '.images_by_tag'; kind := 'query table'; RETURN NEXT;

    PERFORM widecol.create_query_table(s || '.batch_images', (s || '.images')::regclass,
        'SELECT batch_id, image_id, object_store, object_key, device_id, capture_time
           FROM base
          WHERE batch_id IS NOT NULL',
        'batch_id', 'image_id', opts);
    object := s || '.batch_images'; kind := 'query table'; RETURN NEXT;

    -- daily counts: a counter query table (a tag listed twice counts once)
    PERFORM widecol.create_query_table(s || '.daily_counts', (s || '.images')::regclass,
        $q$SELECT widecol.day_bucket(b.capture_time) AS day, d.dimension COLLATE "C" AS dimension,
                  d.value COLLATE "C" AS value, count(*) AS images
             FROM base AS b CROSS JOIN LATERAL widecol.image_dimensions(b.device_id, b.tags) AS d
            GROUP BY 1, 2, 3$q$,
        'day', 'dimension, value', opts, counters => 'images');
    object := s || '.daily_counts'; kind := 'counter table'; RETURN NEXT;

    -- keyset paging: the clustering key of the last row of the previous page
    EXECUTE format('CREATE TYPE %s.image_page_key AS (capture_time timestamptz, image_id uuid)', s);
    object := s || '.image_page_key'; kind := 'type'; RETURN NEXT;

    -- Function bodies are passed as literals (%L) and the schema appears in
    -- them only as a quoted identifier: no store name can end a literal or
    -- a dollar quote.
    object := widecol._image_store_function(s, 'image'); kind := 'function'; RETURN NEXT;

    -- The functions are plain SQL so that the planner inlines them: the
    -- device (or tag) and the day range become a WidecolSeek that merges the
    -- day buckets lazily in capture-time order and stops after max_rows.
    -- Rows are those of [from_time, to_time), newest first; the bucket and
    -- capture-time bounds end at the page key when one is given, so a later
    -- page starts reading where the previous one stopped.  In page_body %1$s
    -- is the store, %2$s the query table, %3$s the condition on its
    -- partition key and %4$s the function.
    page_body := $p$
            SELECT * FROM %1$s.%2$s AS i
             WHERE %3$s
               AND i.day BETWEEN widecol.day_bucket(%4$s.from_time)
                             AND widecol.day_bucket(least(%4$s.to_time, (%4$s.after).capture_time + interval '1 microsecond')
                                                    - interval '1 microsecond')
               AND i.capture_time >= %4$s.from_time
               AND i.capture_time < least(%4$s.to_time, (%4$s.after).capture_time + interval '1 microsecond')
               AND (%4$s.after IS NULL OR (i.capture_time, i.image_id) < ((%4$s.after).capture_time, (%4$s.after).image_id))
             ORDER BY i.capture_time DESC, i.image_id DESC
             LIMIT %4$s.max_rows
        $p$;

    object := widecol._image_store_function(s, 'device_images', 'sql',
        format(page_body, s, 'device_daily_images', 'i.device_id = device_images.device', 'device_images'));
    kind := 'function'; RETURN NEXT;

    object := widecol._image_store_function(s, 'tag_images', 'sql',
        format(page_body, s, 'images_by_tag', 'i.tag = tag_images.tag', 'tag_images'));
    kind := 'function'; RETURN NEXT;

    -- Images carrying all the tags: a seek on the first tag's partitions,
    -- keeping the rows whose tag array holds the others.  Put the rarest tag
    -- first.  No tags: no rows.
    object := widecol._image_store_function(s, 'tag_images_all', 'sql',
        format(page_body, s, 'images_by_tag', 'i.tag = (tag_images_all.tags)[1] AND i.tags @> tag_images_all.tags', 'tag_images_all'));
    kind := 'function'; RETURN NEXT;

    object := widecol._image_store_function(s, 'batch_object_keys'); kind := 'function'; RETURN NEXT;

    -- A seek over the day partitions (one per day of the range) with
    -- equality on the dimension; ranges of more than ten years (more
    -- partitions than a seek takes) are a scan.
    object := widecol._image_store_function(s, 'daily_counts', 'plpgsql', format($f$
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
            END IF;$f$, s));
    kind := 'function'; RETURN NEXT;

    -- counts anew from images (after writes that named a partition
    -- directly, say); see rebuild_query_table
    object := widecol._image_store_function(s, 'rebuild_daily_counts', 'sql',
        format('SELECT widecol.rebuild_query_table(%L)', s || '.daily_counts'));
    kind := 'function'; RETURN NEXT;
END $$;
COMMENT ON FUNCTION widecol.create_image_store(name, interval) IS
    'create an image-metadata store in a schema: images, device/day and tag/day query tables, batch table, daily counter table, query functions';

-- Reconcile an image store with its images: every query table (the daily
-- counts included) against what its definition derives now, for the UTC
-- days [since, until) (NULL: open; both NULL: everything).  Tables with a
-- day column are checked on it, the others on capture_time.
CREATE FUNCTION widecol.check_image_store(store name, since date DEFAULT NULL, until date DEFAULT NULL)
RETURNS TABLE (object regclass, range_column name, expected_rows bigint, actual_rows bigint,
               missing bigint, extra bigint, different bigint, duplicate_keys bigint, ok boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    images regclass := to_regclass(format('%I.images', store));
    q widecol.query_table;
    c record;
BEGIN
    IF images IS NULL THEN
        RAISE EXCEPTION 'schema % holds no image store', quote_ident(store) USING ERRCODE = 'undefined_table',
            HINT = 'widecol.create_image_store(schema) creates one.';
    END IF;
    FOR q IN SELECT * FROM widecol.query_table t WHERE t.base = images ORDER BY t.id LOOP
        IF 'day' = ANY (q.columns) THEN
            range_column := 'day';
            SELECT * INTO c FROM widecol.check_query_table(q.query_table, 'day', since, until);
        ELSE
            range_column := 'capture_time';
            SELECT * INTO c FROM widecol.check_query_table(q.query_table, 'capture_time',
                since::timestamp AT TIME ZONE 'UTC', until::timestamp AT TIME ZONE 'UTC');
        END IF;
        object := q.query_table;
        expected_rows := c.expected_rows; actual_rows := c.actual_rows; missing := c.missing;
        extra := c.extra; different := c.different; duplicate_keys := c.duplicate_keys; ok := c.ok;
        RETURN NEXT;
    END LOOP;
END $$;
COMMENT ON FUNCTION widecol.check_image_store(name, date, date) IS
    'reconcile every query table of an image store (daily counts included) with its images for the UTC days [since, until)';
