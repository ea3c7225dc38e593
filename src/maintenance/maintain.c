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
 * Maintain one table: flush level 0, free the pages of dropped runs, drop
 * the runs whose rows have all expired, then compact as the mode says
 * (mode_buckets).  in_worker: take the
 * lock conditionally (*busy is set when it is taken by someone else) and
 * report progress in pg_stat_activity.  Returns the versions written by
 * compactions.
 */
static WcBucket *
bucket_of(const char *kind, int level, int nruns)
{
	WcBucket   *b = palloc0(sizeof(WcBucket));

	b->kind = kind;
	b->level = level;
	b->nruns = nruns;
	b->run_ids = palloc(sizeof(uint64) * Max(nruns, 1));
	return b;
}

/* Runs by their newest write, oldest first. */
static int
run_age_cmp(const void *a, const void *b)
{
	int64		x = ((const WcRunSummary *) a)->st.max_write_ts;
	int64		y = ((const WcRunSummary *) b)->st.max_write_ts;

	return (x > y) - (x < y);
}

/*
 * The compactions a mode makes: the strategy's; all runs into one (level 2;
 * per time window for time_window tables); or, garbage collection
 * (Cassandra's nodetool garbagecollect), each run rewritten alone, oldest
 * first, so that dropping the versions newer runs shadow lets the
 * tombstones that shadow them be purged when their run's turn comes
 * (compact.c drops shadowed versions for the kind "garbagecollect").
 */
static List *
mode_buckets(Relation rel, WcTableInfo *info, WcMaintainMode mode, WcManifest *m,
			 TransactionId horizon, bool quiet)
{
	List	   *buckets = NIL;
	WcBucket   *b;

	switch (mode)
	{
		case WC_MAINTAIN_STRATEGY:
			return wc_strategy_pick(rel, info, m, horizon, quiet);
		case WC_MAINTAIN_MAJOR:
			if (m->nruns == 0)
				return NIL;
			b = bucket_of("major", 2, m->nruns);
			for (int i = 0; i < m->nruns; i++)
				b->run_ids[i] = m->runs[i].run_id;
			return list_make1(b);
		case WC_MAINTAIN_GARBAGECOLLECT:
			qsort(m->runs, m->nruns, sizeof(WcRunSummary), run_age_cmp);
			for (int i = 0; i < m->nruns; i++)
			{
				b = bucket_of("garbagecollect", m->runs[i].level, 1);
				b->run_ids[0] = m->runs[i].run_id;
				buckets = lappend(buckets, b);
			}
			return buckets;
	}
	return NIL;
}

/*
 * After every run went through a compaction (major, or garbage collection),
 * no run holds a version a settled range tombstone covers: those past
 * gc_grace go (versions written since the flush are newer than them).
 */
static void
purge_range_tombstones(Relation rel, WcTableInfo *info, WcManifest *m, uint64 storage_id,
					   TransactionId horizon, const char *strategy, bool in_worker)
{
	int64		purge_before = wc_now() - wc_gc_grace_us(info);
	uint64	   *ids = palloc(sizeof(uint64) * Max(m->nrts, 1));
	WcCompactStats st;
	int			n = 0;

	for (int i = 0; i < m->nrts; i++)
		if (wc_manifest_row_settled(m->rts[i].xmin, horizon) && m->rts[i].write_ts < purge_before)
			ids[n++] = m->rts[i].id;
	if (n == 0)
		return;
	wc_manifest_forget_range_tombstones(storage_id, ids, n);
	memset(&st, 0, sizeof(st));
	st.kind = "range_tombstones";
	st.started = GetCurrentTimestamp();
	st.tombstones_purged = n;
	wc_history_record(rel, strategy, &st, in_worker);
}

int64
wc_maintain(Relation rel, WcMaintainMode mode, bool in_worker, bool *busy)
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
	bool		quiet;
	int64		written = 0;
	ListCell   *lc;
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
	/* after the flush: a write since the last pass shows in what it took in */
	quiet = wc_table_quiet(RelationGetRelid(rel), &meta, m, in_worker);

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

	foreach(lc, mode_buckets(rel, &info, mode, m, horizon, quiet))
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
	if (mode != WC_MAINTAIN_STRATEGY)
		purge_range_tombstones(rel, &info, m, meta.storage_id, horizon, strategy, in_worker);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	/* it works again: the workers stop backing off (backoff.c) */
	wc_backoff_clear(RelationGetRelid(rel));
	return written;
}
