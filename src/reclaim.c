/*
 * reclaim.c — giving pages back and taking them again.
 *
 * Pages of runs dropped by compaction and of level-0 generations removed
 * from the metapage become free once no snapshot can read them (the
 * dropping transaction precedes the xid horizon; standbys get a snapshot
 * conflict first).  A freed page is rewritten as a FREE page (WAL-logged,
 * without reading a run's data pages: see wc_reclaim_runs) and recorded in
 * the free space map.  Allocation takes pages from the FSM
 * and checks that they really are FREE pages: the FSM is only a hint, as
 * for indexes (it is not crash-safe and may be stale).
 */
#include "postgres.h"

#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/procarray.h"

#include "widecol.h"

/* An empty page of type FREE. */
void
wc_page_init_free(Page page)
{
	PageInit(page, BLCKSZ, sizeof(WcPageOpaqueData));
	WcPageGetOpaque(page)->type = WC_PAGE_FREE;
}

/*
 * Turn one page into a FREE page if it still belongs to the segment being
 * freed.  Freeing is not transactional while forgetting the segment is: if
 * the transaction that freed pages aborts, the next reclaim finds the same
 * segment again, and its pages may have been reused by then.
 */
static bool
mark_free(Relation rel, BlockNumber blk, uint64 segment, bool level0)
{
	Buffer		buf = ReadBuffer(rel, blk);
	Page		page;
	uint16		type;
	bool		ours;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buf);
	type = PageIsNew(page) ||
		((PageHeader) page)->pd_special != BLCKSZ - MAXALIGN(sizeof(WcPageOpaqueData)) ?
		0 : WcPageGetOpaque(page)->type;
	ours = type != 0 && WcPageGetOpaque(page)->segment == segment &&
		(level0 ? type == WC_PAGE_L0 :
		 (type == WC_PAGE_RUN_HEADER || type == WC_PAGE_RUN_DATA ||
		  type == WC_PAGE_RUN_INDEX || type == WC_PAGE_RUN_BLOOM));
	if (ours)
		wc_free_buffers(rel, &buf, 1);
	UnlockReleaseBuffer(buf);
	if (ours)
		RecordFreeIndexPage(rel, blk);
	return ours;
}

/*
 * Free pages known to be the segment's without reading them: each buffer
 * is taken zeroed (RBM_ZERO_AND_LOCK) and rewritten whole, 32 per WAL record.
 */
static void
free_unread(Relation rel, const BlockNumber *blks, int n)
{
	Buffer		bufs[WC_FREE_BATCH];

	for (int i = 0; i < n; i += WC_FREE_BATCH)
	{
		int			k = Min(WC_FREE_BATCH, n - i);

		CHECK_FOR_INTERRUPTS();
		for (int j = 0; j < k; j++)
			bufs[j] = ReadBufferExtended(rel, MAIN_FORKNUM, blks[i + j], RBM_ZERO_AND_LOCK, NULL);
		wc_free_buffers(rel, bufs, k);
		for (int j = 0; j < k; j++)
		{
			UnlockReleaseBuffer(bufs[j]);
			RecordFreeIndexPage(rel, blks[i + j]);
		}
	}
}

/*
 * Free the pages of a segment (a run, or a level-0 generation) that no
 * snapshot reads any more; latest_xid is the newest transaction whose work
 * made them unreachable (for standby conflicts; invalid if already logged).
 */
void
wc_free_pages(Relation rel, const BlockNumber *blks, int n, uint64 segment,
			  bool level0, TransactionId latest_xid)
{
	if (n == 0)
		return;
	wc_log_snapshot_conflict(rel, latest_xid);
	for (int i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		mark_free(rel, blks[i], segment, level0);
	}
	IndexFreeSpaceMapVacuum(rel);
}

/* A free page to reuse, zeroed content not guaranteed, locked; or InvalidBuffer. */
Buffer
wc_reuse_page(Relation rel, BufferAccessStrategy strategy)
{
	for (;;)
	{
		BlockNumber blk = GetFreeIndexPage(rel);
		Buffer		buf;
		Page		page;

		if (blk == InvalidBlockNumber)
			return InvalidBuffer;
		if (blk == WC_META_BLOCK || blk >= RelationGetNumberOfBlocks(rel))
			continue;
		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blk, RBM_NORMAL, strategy);
		if (ConditionalLockBuffer(buf))
		{
			page = BufferGetPage(buf);
			if (!PageIsNew(page) &&
				((PageHeader) page)->pd_special == BLCKSZ - MAXALIGN(sizeof(WcPageOpaqueData)) &&
				WcPageGetOpaque(page)->type == WC_PAGE_FREE)
				return buf;
			UnlockReleaseBuffer(buf);
		}
		else
		{
			/* busy (a sampling reader?): leave it for another time */
			ReleaseBuffer(buf);
			RecordFreeIndexPage(rel, blk);
			return InvalidBuffer;
		}
	}
}

/* A page for new contents: a free one if there is, else a new one. */
Buffer
wc_new_page(Relation rel, BufferAccessStrategy strategy)
{
	Buffer		buf = wc_reuse_page(rel, strategy);

	return BufferIsValid(buf) ? buf : wc_extend_page(rel, strategy);
}

/*
 * Every page of a run: its header first, then its data pages (through the
 * leaves) and the rest of its extent.
 */
static int
run_pages(Relation rel, WcRunSummary *run, BlockNumber **out)
{
	PGAlignedBlock payload;
	WcPageOpaqueData op;
	Size		len;
	WcRunHeader hdr;
	int			n = 0,
				cap;
	BlockNumber *blks;
	WcIndexEntry *entries = palloc(sizeof(WcIndexEntry) * WC_MAX_INDEX_ENTRIES);
	const char *p = wc_read_run_page_soft(rel, run->header_block, WC_PAGE_RUN_HEADER,
										  run->run_id, payload.data, &len, &op, NULL);

	if (p || len < sizeof(WcRunHeader))
	{
		/* freed before by a transaction that aborted, maybe reused since */
		elog(DEBUG1, "widecol: run %llu of \"%s\" has no header any more: %s",
			 (unsigned long long) run->run_id, RelationGetRelationName(rel),
			 p ? p : "short header");
		return 0;
	}
	memcpy(&hdr, payload.data, sizeof(WcRunHeader));
	cap = hdr.ndata_pages + hdr.extent_pages + 1;
	blks = palloc(sizeof(BlockNumber) * cap);
	blks[n++] = run->header_block;
	for (BlockNumber leaf = hdr.leaf_first; leaf < hdr.leaf_first + hdr.nleaf_pages; leaf++)
	{
		p = wc_read_run_page_soft(rel, leaf, WC_PAGE_RUN_INDEX, run->run_id,
								  payload.data, &len, &op, NULL);
		if (p || !wc_parse_index_soft(payload.data, len, op.count, entries))
			continue;			/* freed before (see mark_free); its blocks may be gone */
		for (uint32 e = 0; e < op.count && n < cap; e++)
			blks[n++] = entries[e].child;
	}
	for (uint32 i = 1; i < hdr.extent_pages && n < cap; i++)
		blks[n++] = run->header_block + i;
	*out = blks;
	return n;
}

/*
 * Free the pages of runs that compaction dropped, once no snapshot can read
 * them.  Called with the table's ShareUpdateExclusiveLock (flush, compact).
 */
void
wc_reclaim_runs(Relation rel, uint64 storage_id)
{
	TransactionId horizon = GetOldestNonRemovableTransactionId(rel);
	TransactionId latest = InvalidTransactionId;
	WcRunSummary *runs;
	int			nruns = wc_manifest_dropped_runs(storage_id, horizon, &runs, &latest);
	uint64	   *done = palloc(sizeof(uint64) * Max(nruns, 1));
	int			ndone = 0;

	if (nruns > 0)
		wc_log_snapshot_conflict(rel, latest);
	for (int i = 0; i < nruns; i++)
	{
		BlockNumber *blks = NULL;
		int			n = run_pages(rel, &runs[i], &blks);

		/*
		 * The header goes first, checked: while it is still this run's, no
		 * page of the run was freed (a reclaim that aborted after freeing
		 * some frees the header before anything else), so the others are
		 * still the run's and are freed without being read.  A run whose
		 * header is gone was half freed by an aborted reclaim: its other
		 * pages may have been reused, and are left (leaked) rather than
		 * checked one by one.
		 */
		if (n > 0 && mark_free(rel, blks[0], runs[i].run_id, false))
			free_unread(rel, blks + 1, n - 1);
		if (n > 0)
			IndexFreeSpaceMapVacuum(rel);
		done[ndone++] = runs[i].run_id;
		elog(DEBUG1, "widecol: reclaimed %d pages of run %llu of \"%s\"",
			 n, (unsigned long long) runs[i].run_id, RelationGetRelationName(rel));
	}
	if (ndone > 0)
		wc_manifest_forget_runs(storage_id, done, ndone);
}
