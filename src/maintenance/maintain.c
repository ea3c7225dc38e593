/*
 * maintain.c — one maintenance pass over one table: flush level 0, drop
 * expired runs whole, run the compaction strategy (or a major compaction),
 * record each step in widecol.compaction_history.
 *
 * Why a file of its own: the background worker and widecol.compact() must
 * do exactly the same thing in the same order (the order is what makes the
 * purge rules safe), so the sequence lives here once.
 *
 * Order matters:
 *   1. ShareUpdateExclusiveLock: one maintainer per table; DML
 *      (RowExclusiveLock) and reads (AccessShareLock) never wait for it.
 *      The worker takes it conditionally and skips a busy table.
 *   2. Flush level 0: afterwards level 0 holds only versions written later,
 *      with newer write times, so neither purge rule needs to look at it.
 *      Then free the pages of runs dropped earlier that no snapshot reads
 *      (page reclaim is a step of its own: flushes that writes trigger do
 *      not do it).
 *   3. The xid horizon, after the lock (see "Compaction" in src/README.md).
 *   4. Whole-run drops, then the strategy's buckets, each against the
 *      manifest as this transaction now sees it.
 */
#include "postgres.h"

#include "access/xact.h"
#include "pgstat.h"
#include "access/xlog.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "widecol.h"
#include "maintenance/maintenance.h"
#include "storage/manifest.h"
#include "storage/metapage.h"
#include "storage/reclaim.h"
#include "storage/tableinfo.h"

/* true in the background workers (bgworker.c sets it) */
bool		wc_am_worker = false;

/* What maintenance is doing, in pg_stat_activity (workers and widecol.compact). */

/* Show what a worker does in pg_stat_activity.query (workers only). */
void
wc_report_activity(const char *fmt,...)
{
	char		buf[256];
	va_list		ap;

	if (!wc_am_worker)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pgstat_report_activity(STATE_RUNNING, buf);
}

static WcManifest *
reread(Relation rel, uint64 storage_id)
{
	CommandCounterIncrement();
	return wc_manifest_read(storage_id, SnapshotSelf);
}

/*
 * Maintain one table.  major: merge all runs into one (per time window for
 * time_window tables) instead of running the strategy.  in_worker: take the
 * lock conditionally (*busy is set when it is taken by someone else) and
 * report progress in pg_stat_activity.  Returns the versions written by
 * compactions.
 */
int64
wc_maintain(Relation rel, bool major, bool in_worker, bool *busy)
{
	WcTableInfo info = *wc_table_info(rel);
	const char *strategy = wc_compaction_name(info.compaction);
	int64		window_us = info.compaction == WC_COMPACTION_TIME_WINDOW ? info.window_us : 0;
	char	   *name = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
												  RelationGetRelationName(rel));
	TransactionId horizon;
	WcMetaData	meta;
	WcManifest *m;
	WcCompactStats st;
	int64		written = 0;
	MemoryContext cxt,
				old;

	if (busy)
		*busy = false;
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot compact a widecol table during recovery")));
	if (!in_worker)
		LockRelation(rel, ShareUpdateExclusiveLock);
	else if (!ConditionalLockRelation(rel, ShareUpdateExclusiveLock))
	{
		if (busy)
			*busy = true;
		return 0;
	}

	cxt = AllocSetContextCreate(CurrentMemoryContext, "widecol maintenance",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);

	/* pages of runs whose writers failed: first, so that a pass failing below still gives them back */
	wc_report_activity("widecol: looking for pages of failed writes of %s", name);
	wc_reclaim_aborted_runs(rel);
	wc_report_activity("widecol: flushing %s", name);
	wc_flush(rel, true);
	/* pages of runs dropped earlier that no snapshot reads any more */
	wc_report_activity("widecol: freeing pages of %s", name);
	wc_meta_read(rel, &meta);
	wc_reclaim_runs(rel, meta.storage_id);
	/* the flush's manifest rows are ours to update below */
	CommandCounterIncrement();
	horizon = GetOldestNonRemovableTransactionId(rel);
	wc_meta_read(rel, &meta);
	m = wc_manifest_read(meta.storage_id, SnapshotSelf);

	/* runs whose rows have all expired go first, unread */
	memset(&st, 0, sizeof(st));
	st.kind = "expired_runs";
	st.started = GetCurrentTimestamp();
	if (wc_drop_expired_runs(rel, m, horizon, &st) > 0)
	{
		wc_report_activity("widecol: dropped %d expired runs of %s", st.runs_dropped_whole, name);
		wc_history_record(rel, strategy, &st, in_worker);
		m = reread(rel, meta.storage_id);
	}

	if (major)
	{
		if (m->nruns > 0)
		{
			uint64	   *ids = palloc(sizeof(uint64) * m->nruns);

			for (int i = 0; i < m->nruns; i++)
				ids[i] = m->runs[i].run_id;
			memset(&st, 0, sizeof(st));
			st.kind = "major";
			st.started = GetCurrentTimestamp();
			wc_report_activity("widecol: compacting %s (major, %d runs)", name, m->nruns);
			written += wc_compact_runs(rel, m, ids, m->nruns, 2, window_us, horizon, &st);
			wc_history_record(rel, strategy, &st, in_worker);
		}
	}
	else
	{
		List	   *buckets = wc_strategy_pick(rel, &info, m, horizon);
		ListCell   *lc;

		foreach(lc, buckets)
		{
			WcBucket   *b = lfirst(lc);

			memset(&st, 0, sizeof(st));
			st.kind = b->kind;
			st.started = GetCurrentTimestamp();
			wc_report_activity("widecol: compacting %s (%s, %d runs%s%s)", name, strategy,
							   b->nruns, strcmp(b->kind, "minor") == 0 ? "" : ", ",
							   strcmp(b->kind, "minor") == 0 ? "" : b->kind);
			written += wc_compact_runs(rel, m, b->run_ids, b->nruns, b->level,
									   window_us, horizon, &st);
			wc_history_record(rel, strategy, &st, in_worker);
			m = reread(rel, meta.storage_id);
		}
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	/* it works again: the workers stop backing off (backoff.c) */
	wc_backoff_clear(RelationGetRelid(rel));
	return written;
}
