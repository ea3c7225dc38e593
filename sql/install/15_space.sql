-- Space accounting and failing maintenance (issue 16).

CREATE FUNCTION widecol.page_usage(rel regclass,
    OUT pages bigint, OUT metapage bigint, OUT level0_pages bigint, OUT run_pages bigint,
    OUT dropped_run_pages bigint, OUT free_pages bigint, OUT unaccounted_pages bigint)
    AS 'MODULE_PATHNAME', 'widecol_page_usage' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.page_usage(regclass) IS
    'where the pages of a widecol table are: metapage, level 0, runs, dropped runs not yet free, free (in the free space map), and unaccounted (writes that failed and were not found again yet, or writes in progress)';

CREATE FUNCTION widecol.run_pages(rel regclass)
RETURNS TABLE (run_id bigint, kind text, codec text, pages bigint, raw_bytes bigint, stored_bytes bigint)
    AS 'MODULE_PATHNAME', 'widecol_run_pages' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.run_pages(regclass) IS
    'where the bytes of a widecol table''s runs are: per run, page kind (key, value, index, bloom, value_dir, header) and codec (lz4, zstd, none), the pages, their payloads'' bytes decoded (raw) and as stored; reads every page of the table';

CREATE FUNCTION widecol.maintenance_backoff(OUT "table" regclass, OUT failures int, OUT next_attempt timestamptz)
RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'widecol_maintenance_backoff' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION widecol.maintenance_backoff() IS
    'tables of this database whose maintenance by the background workers failed in a row, and when the workers try again';
