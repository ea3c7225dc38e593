/*
 * flush.c — moving sealed level-0 generations into a sorted run.
 * See "Flush" in src/README.md.
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/xlog.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"

#include "widecol.h"
#include "maintenance/maintenance.h"
#include "storage/level0.h"
#include "storage/manifest.h"
#include "storage/metapage.h"
#include "storage/page.h"
#include "storage/reclaim.h"
#include "storage/row.h"
#include "storage/run.h"
#include "storage/wal.h"

#define WcPageGetMeta(page) ((WcMetaData *) PageGetContents(page))

typedef struct FlushCollect
{
	WcRowHeader **rows;
	int64		n;
	int64		cap;
} FlushCollect;

static void
collect(WcRowHeader *row, ItemPointer tid, void *arg)
{
	FlushCollect *c = arg;

	if (wc_xid_known_aborted(row->xid))
		return;
	if (c->n == c->cap)
	{
		c->cap *= 2;
		c->rows = repalloc_huge(c->rows, sizeof(WcRowHeader *) * c->cap);
	}
	c->rows[c->n] = wc_row_copy(NULL, row);
	c->n++;
}

/* Sealed generations no flush has retired yet (failed flushes leave them). */
#define WC_MAX_UNFLUSHED_SEALED 4

static int
unflushed_sealed(const WcMetaData *meta, WcManifest *m)
{
	int			n = 0;

	for (uint32 g = 0; g + 1 < meta->ngens; g++)
		n += !wc_manifest_gen_retired(m, meta->gens[g].gen);
	return n;
}

/* Start a new active generation unless the active one is empty. */
static void
seal_active_gen(Relation rel)
{
	Buffer		metabuf = ReadBuffer(rel, WC_META_BLOCK);
	WcMetaData *meta;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	wc_check_page(rel, metabuf, WC_PAGE_META);
	meta = WcPageGetMeta(BufferGetPage(metabuf));
	if (meta->gens[meta->ngens - 1].npages > 0 && meta->ngens < WC_MAX_L0_GENS)
	{
		GenericXLogState *xs = GenericXLogStart(rel);
		WcL0Gen    *g;

		meta = WcPageGetMeta(GenericXLogRegisterBuffer(xs, metabuf, 0));
		g = &meta->gens[meta->ngens++];
		g->gen = meta->next_l0_gen++;
		g->head = InvalidBlockNumber;
		g->tail = InvalidBlockNumber;
		g->npages = 0;
		GenericXLogFinish(xs);
	}
	UnlockReleaseBuffer(metabuf);
}

/* Drop retired generations that no snapshot can need from the metapage. */
static void
forget_old_gens(Relation rel, uint64 storage_id, WcManifest *m)
{
	Buffer		metabuf;
	WcMetaData *meta;
	GenericXLogState *xs;
	uint64		removable[WC_MAX_L0_GENS];
	int			nremovable = 0;
	WcMetaData	copy;
	TransactionId latest = InvalidTransactionId;
	BlockNumber **free_blks;
	int		   *nfree;

	wc_meta_read(rel, &copy);
	for (uint32 g = 0; g + 1 < copy.ngens; g++)
	{
		TransactionId xid = InvalidTransactionId;

		if (wc_manifest_gen_retired(m, copy.gens[g].gen) &&
			wc_manifest_gen_removable(storage_id, copy.gens[g].gen, &xid))
		{
			removable[nremovable++] = copy.gens[g].gen;
			if (!TransactionIdIsValid(latest) || TransactionIdFollows(xid, latest))
				latest = xid;
		}
	}
	if (nremovable == 0)
		return;

	/* their pages: collected before the metapage forgets where they are */
	free_blks = palloc(sizeof(BlockNumber *) * nremovable);
	nfree = palloc0(sizeof(int) * nremovable);
	for (int r = 0; r < nremovable; r++)
	{
		free_blks[r] = palloc(sizeof(BlockNumber) * Max(copy.l0_pages, 1));
		for (uint32 g = 0; g + 1 < copy.ngens; g++)
			if (copy.gens[g].gen == removable[r])
			{
				BlockNumber blk = copy.gens[g].head;

				while (blk != InvalidBlockNumber && nfree[r] < (int) copy.l0_pages)
				{
					Buffer		buf = ReadBuffer(rel, blk);

					LockBuffer(buf, BUFFER_LOCK_SHARE);
					wc_check_page(rel, buf, WC_PAGE_L0);
					free_blks[r][nfree[r]++] = blk;
					blk = WcPageGetOpaque(BufferGetPage(buf))->aux;
					UnlockReleaseBuffer(buf);
				}
			}
	}

	/* standby queries that may still read these generations must yield */
	wc_log_snapshot_conflict(rel, latest);

	metabuf = ReadBuffer(rel, WC_META_BLOCK);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	xs = GenericXLogStart(rel);
	meta = WcPageGetMeta(GenericXLogRegisterBuffer(xs, metabuf, 0));
	for (int r = 0; r < nremovable; r++)
	{
		for (uint32 g = 0; g + 1 < meta->ngens; g++)
		{
			if (meta->gens[g].gen != removable[r])
				continue;
			meta->l0_pages -= meta->gens[g].npages;
			memmove(&meta->gens[g], &meta->gens[g + 1],
					sizeof(WcL0Gen) * (meta->ngens - g - 1));
			meta->ngens--;
			break;
		}
	}
	GenericXLogFinish(xs);
	UnlockReleaseBuffer(metabuf);
	for (int r = 0; r < nremovable; r++)
		wc_manifest_forget_gen(storage_id, removable[r]);
	for (int r = 0; r < nremovable; r++)
		wc_free_pages(rel, free_blks[r], nfree[r], removable[r], InvalidTransactionId);
}

/*
 * Flush sealed level-0 generations into one run.  With wait = false, give up
 * (return -1) when another flush holds the lock.  Returns versions written.
 */
int64
wc_flush(Relation rel, bool wait)
{
	WcMetaData	meta;
	WcManifest *m;
	FlushCollect c;
	MemoryContext cxt,
				old;
	int64		nflushed = 0;
	List	   *flushed = NIL;
	ListCell   *lc;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot flush a widecol table during recovery")));
	if (wait)
		LockRelation(rel, ShareUpdateExclusiveLock);
	else if (!ConditionalLockRelation(rel, ShareUpdateExclusiveLock))
		return -1;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "widecol flush",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	wc_meta_read(rel, &meta);
	m = wc_manifest_read(meta.storage_id, SnapshotSelf);
	/*
	 * Sealing is not undone when the flush fails: after a few failures in a
	 * row, flush the generations they sealed before sealing another.
	 */
	if (unflushed_sealed(&meta, m) < WC_MAX_UNFLUSHED_SEALED)
	{
		seal_active_gen(rel);
		wc_meta_read(rel, &meta);
	}
	c.n = 0;
	c.cap = 1024;
	c.rows = palloc(sizeof(WcRowHeader *) * c.cap);
	for (uint32 g = 0; g + 1 < meta.ngens; g++)
	{
		if (wc_manifest_gen_retired(m, meta.gens[g].gen))
			continue;
		wc_l0_read_gen(rel, &meta.gens[g], collect, &c);
		flushed = lappend(flushed, &meta.gens[g].gen);
	}
	if (c.n > 0)
	{
		WcRunWriter *w = wc_run_writer_begin(rel, 1);
		WcRunSummary summary;

		wc_sort_rows(c.rows, c.n, NULL);
		for (int64 i = 0; i < c.n; i++)
			wc_run_writer_add(w, c.rows[i], NULL);
		wc_run_writer_finish(w, &summary);
		wc_meta_count_written(rel, false, summary.st.compressed_bytes);
		nflushed = c.n;
	}
	foreach(lc, flushed)
		wc_manifest_retire_gen(meta.storage_id, *(uint64 *) lfirst(lc));

	forget_old_gens(rel, meta.storage_id, m);
	elog(DEBUG1, "widecol: flushed %lld versions of \"%s\" from %d level-0 generations",
		 (long long) nflushed, RelationGetRelationName(rel), list_length(flushed));
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return nflushed;
}
