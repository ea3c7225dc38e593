-- ---------------------------------------------------------------------
-- Compaction history (maintenance/history.c writes it)
-- ---------------------------------------------------------------------

-- One row per compaction and per whole-run drop of expired runs, written in
-- the compaction's own transaction (so only committed work is listed).  Not
-- marked with pg_extension_config_dump: it is an operational log whose OIDs
-- mean nothing in another cluster; pg_dump leaves it out.
CREATE TABLE widecol.compaction_history (
    relid              oid NOT NULL,
    relname            text NOT NULL,        -- schema-qualified, at the time
    strategy           text NOT NULL,        -- the table's: size_tiered, time_window
    kind               text NOT NULL,        -- major, minor, idle, freeze, tombstones, expired_runs, garbagecollect
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
