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
