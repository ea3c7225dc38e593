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
