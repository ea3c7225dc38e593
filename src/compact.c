/*
 * compact.c — major compaction: all runs of a table become one.
 *
 * The lock comes first and the horizon second (taking them the other way
 * round loses rows committed in between).  Per key, versions are walked
 * newest first: aborted versions go; the newest version every snapshot sees
 * (committed before the horizon) is kept with its xid frozen, and everything
 * older goes, since it is shadowed for every snapshot; if that version is a
 * tombstone or expired and older than widecol.gc_grace, it goes too (no
 * older version survives anywhere: all runs take part, level 0 was flushed
 * first and holds only later writes).  Versions not yet visible to everyone
 * are kept as they are.  The new run and the dropping of the old ones
 * commit together; see "Compaction" in src/README.md.
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "widecol.h"

int			wc_gc_grace_seconds = 10 * 24 * 3600;

static bool
all_visible(const WcRowHeader *row, TransactionId horizon)
{
	if (!TransactionIdIsNormal(row->xid))
		return row->xid == FrozenTransactionId || row->xid == BootstrapTransactionId;
	return TransactionIdPrecedes(row->xid, horizon) && TransactionIdDidCommit(row->xid);
}

int64
wc_compact(Relation rel)
{
	WcMetaData	meta;
	WcManifest *m;
	WcMergeIter *it;
	WcRunWriter *w;
	WcRunSummary summary;
	TransactionId horizon;
	int64		now = wc_now();
	int64		purge_before = now - (int64) wc_gc_grace_seconds * USECS_PER_SEC;
	int64		kept = 0,
				dropped = 0,
				purged = 0;
	uint64	   *ids;
	WcRowHeader *row;
	ItemPointerData tid;
	StringInfoData key;
	bool		settled = false;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "widecol compaction",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot compact a widecol table during recovery")));
	LockRelation(rel, ShareUpdateExclusiveLock);
	wc_flush(rel, true);
	/* the flush's manifest rows are ours to update below */
	CommandCounterIncrement();
	horizon = GetOldestNonRemovableTransactionId(rel);

	wc_meta_read(rel, &meta);
	m = wc_manifest_read(meta.storage_id, SnapshotSelf);
	if (m->nruns == 0)
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
		return 0;
	}
	ids = palloc(sizeof(uint64) * m->nruns);
	for (int i = 0; i < m->nruns; i++)
		ids[i] = m->runs[i].run_id;

	it = wc_merge_begin_runs(rel, m->runs, m->nruns);
	w = wc_run_writer_begin(rel, 2);
	initStringInfo(&key);
	while ((row = wc_merge_next(it, &tid)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		if (key.len != row->keylen || memcmp(key.data, WcRowKey(row), row->keylen) != 0)
		{
			resetStringInfo(&key);
			appendBinaryStringInfo(&key, WcRowKey(row), row->keylen);
			settled = false;
		}
		if (settled || wc_xid_known_aborted(row->xid))
		{
			dropped++;
			continue;
		}
		if (all_visible(row, horizon))
		{
			/* a counter delta needs the older versions it adds to */
			settled = !WcRowIsDelta(row);
			if (wc_row_is_dead(row, now) &&
				(WcRowIsTombstone(row) ? row->write_ts : row->expire_at) < purge_before)
			{
				purged++;
				continue;
			}
			if (row->xid != FrozenTransactionId)
			{
				/* the merge's row lives in a block buffer: freeze a copy */
				WcRowHeader *frozen = palloc(row->len);

				memcpy(frozen, row, row->len);
				frozen->xid = FrozenTransactionId;
				frozen->cid = FirstCommandId;
				wc_run_writer_add(w, frozen, NULL);
				pfree(frozen);
				kept++;
				continue;
			}
		}
		wc_run_writer_add(w, row, NULL);
		kept++;
	}
	wc_merge_end(it);
	wc_run_writer_finish(w, &summary);
	wc_manifest_drop_runs(meta.storage_id, ids, m->nruns);

	ereport(DEBUG1,
			(errmsg("widecol: compacted %d runs of \"%s\": %lld versions kept, %lld shadowed or aborted dropped, %lld tombstones and expired rows purged",
					m->nruns, RelationGetRelationName(rel), (long long) kept,
					(long long) dropped, (long long) purged)));
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return kept;
}
