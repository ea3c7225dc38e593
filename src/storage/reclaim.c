/*
 * reclaim.c — giving pages back and taking them again.
 *
 * Pages of runs dropped by compaction become free once no snapshot can
 * read them (the dropping transaction precedes the xid horizon; standbys
 * get a snapshot conflict first): the run's manifest row is deleted and
 * its pages are recorded in the free space map, without being read or
 * written.  Allocation takes pages from the FSM (a hint: not crash-safe,
 * maybe stale) and uses one only if it is a FREE page or a page of a run
 * the manifest no longer lists (wc_manifest_run_state).  Pages of level-0
 * generations removed from the metapage are rewritten as FREE pages.  See
 * "Page reuse" in src/README.md.
 */
#include "postgres.h"

#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/procarray.h"
#include "catalog/storage.h"
#include "commands/vacuum.h"
#include "storage/lmgr.h"
#include "utils/hsearch.h"

#include "widecol.h"
#include "storage/cache.h"
#include "storage/manifest.h"
#include "storage/metapage.h"
#include "storage/page.h"
#include "storage/pending.h"
#include "storage/reclaim.h"
#include "storage/run.h"
#include "storage/wal.h"

/* The page's type and segment (0 when it is not a widecol page). */
static uint16
page_kind(Page page, uint64 *segment)
{
	/*
	 * Every widecol page is initialized under the exclusive lock taken as
	 * it was created (wc_extend_page, the run writer), so a zeroed page
	 * seen under a lock is one whose writer failed or crashed: free.
	 */
	if (PageIsNew(page))
		return WC_PAGE_FREE;
	if (((PageHeader) page)->pd_special != BLCKSZ - MAXALIGN(sizeof(WcPageOpaqueData)))
		return 0;
	*segment = WcPageGetOpaque(page)->segment;
	return WcPageGetOpaque(page)->type;
}

static bool
is_run_page(uint16 type)
{
	return type == WC_PAGE_RUN_HEADER || type == WC_PAGE_RUN_DATA ||
		type == WC_PAGE_RUN_VALUES || type == WC_PAGE_RUN_INDEX ||
		type == WC_PAGE_RUN_BLOOM || type == WC_PAGE_RUN_VALUEDIR ||
		type == WC_PAGE_RUN_DICT || type == WC_PAGE_RUN_EXTENT;
}

/*
 * Turn a level-0 page into a FREE page if it still belongs to generation
 * `gen`.  Freeing is not transactional while forgetting the generation is:
 * if the transaction that freed pages aborts, the next flush finds the same
 * generation again, and its pages may have been reused by then.
 */
static void
mark_free(Relation rel, BlockNumber blk, uint64 gen)
{
	Buffer		buf = ReadBuffer(rel, blk);
	uint64		segment = 0;
	bool		ours;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	ours = page_kind(BufferGetPage(buf), &segment) == WC_PAGE_L0 && segment == gen;
	if (ours)
		wc_free_buffer(rel, buf);
	UnlockReleaseBuffer(buf);
	if (ours)
		RecordFreeIndexPage(rel, blk);
}

/*
 * Free the pages of a level-0 generation that no snapshot reads any more
 * (a dropped run's pages are not touched: see wc_reclaim_runs);
 * latest_xid is the newest transaction whose work made them unreachable
 * (for standby conflicts; invalid if already logged).
 */
void
wc_free_pages(Relation rel, const BlockNumber *blks, int n, uint64 gen,
			  TransactionId latest_xid)
{
	if (n == 0)
		return;
	wc_log_snapshot_conflict(rel, latest_xid);
	for (int i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		mark_free(rel, blks[i], gen);
	}
	IndexFreeSpaceMapVacuum(rel);
}

/* Runs known to be gone (run ids are never reused, and gone is final). */
#define GONE_CACHE 8
static struct
{
	RelFileNode node;
	uint64		storage_id;
	uint64		run_id;
}			gone_cache[GONE_CACHE];
static int	gone_next = 0;

static bool
known_gone(Relation rel, uint64 storage_id, uint64 run_id)
{
	for (int i = 0; i < GONE_CACHE; i++)
		if (gone_cache[i].run_id == run_id && gone_cache[i].storage_id == storage_id &&
			RelFileNodeEquals(gone_cache[i].node, rel->rd_node))
			return true;
	return false;
}

static void
remember_gone(Relation rel, uint64 storage_id, uint64 run_id)
{
	gone_cache[gone_next].node = rel->rd_node;
	gone_cache[gone_next].storage_id = storage_id;
	gone_cache[gone_next].run_id = run_id;
	gone_next = (gone_next + 1) % GONE_CACHE;
}

typedef enum
{
	TAKE_OK,					/* the page is ours, locked */
	TAKE_IN_USE,				/* a stale free space map entry */
	TAKE_LATER					/* busy, or its run is being freed: leave it */
} TakeResult;

/*
 * Take page blk found in the free space map: it is ours if it is a FREE
 * page or, when storage_id is given, a page of a run of that storage the
 * manifest no longer lists (checked without holding any buffer lock).
 * Callers holding buffer locks (a level-0 append holds the metapage) pass
 * storage_id 0 and take FREE pages only.  On TAKE_OK *bufp is locked; the
 * caller overwrites the page before releasing the lock, so that whoever
 * took the same block from the map meanwhile finds it in use.
 */
static TakeResult
take_page(Relation rel, BlockNumber blk, BufferAccessStrategy strategy,
		  uint64 storage_id, Buffer *bufp)
{
	Buffer		buf;
	uint16		type;
	uint64		segment = 0;

	if (blk == WC_META_BLOCK || blk >= RelationGetNumberOfBlocks(rel))
		return TAKE_IN_USE;
	buf = ReadBufferExtended(rel, MAIN_FORKNUM, blk, RBM_NORMAL, strategy);
	if (!ConditionalLockBuffer(buf))
	{
		ReleaseBuffer(buf);		/* busy (a sampling reader?) */
		return TAKE_LATER;
	}
	type = page_kind(BufferGetPage(buf), &segment);
	if (type == WC_PAGE_FREE)
	{
		*bufp = buf;
		return TAKE_OK;
	}
	UnlockReleaseBuffer(buf);
	if (!is_run_page(type))
		return TAKE_IN_USE;
	if (storage_id == 0)
		return TAKE_LATER;		/* may be a freed run's page: for a run writer */
	if (!known_gone(rel, storage_id, segment))
	{
		WcRunState state = wc_manifest_run_state(storage_id, segment);

		if (state == WC_RUN_FREEING)
			return TAKE_LATER;	/* a reclaim not yet committed */
		if (state == WC_RUN_LISTED)
			return TAKE_IN_USE; /* the run is live or not yet reclaimed */
		remember_gone(rel, storage_id, segment);
	}
	/* gone: nobody reads it; check it did not change meanwhile */
	buf = ReadBufferExtended(rel, MAIN_FORKNUM, blk, RBM_NORMAL, strategy);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	type = page_kind(BufferGetPage(buf), &segment);
	if (type == WC_PAGE_FREE ||
		(is_run_page(type) && known_gone(rel, storage_id, segment)))
	{
		*bufp = buf;
		return TAKE_OK;
	}
	UnlockReleaseBuffer(buf);
	return TAKE_IN_USE;
}

/*
 * A free page to reuse, locked, its content to be overwritten; or
 * InvalidBuffer (see take_page for which pages qualify).
 */
Buffer
wc_reuse_page(Relation rel, BufferAccessStrategy strategy, uint64 storage_id)
{
	for (;;)
	{
		BlockNumber blk = GetFreeIndexPage(rel);
		Buffer		buf = InvalidBuffer;

		if (blk == InvalidBlockNumber)
			return InvalidBuffer;
		switch (take_page(rel, blk, strategy, storage_id, &buf))
		{
			case TAKE_OK:
				return buf;
			case TAKE_IN_USE:
				continue;
			case TAKE_LATER:
				RecordFreeIndexPage(rel, blk);
				return InvalidBuffer;
		}
	}
}

/* How far from a free page the map is searched for a free range. */
#define EXTENT_SEARCH_BLOCKS 8192

/*
 * n blocks in a row that the free space map records as free, near a free
 * page it hands out; InvalidBlockNumber if there are none there.
 */
static BlockNumber
free_range(Relation rel, uint32 n)
{
	BlockNumber hint = GetPageWithFreeSpace(rel, BLCKSZ / 2);
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	BlockNumber from,
				to,
				run_start = InvalidBlockNumber;

	if (hint == InvalidBlockNumber)
		return InvalidBlockNumber;
	from = hint > EXTENT_SEARCH_BLOCKS ? hint - EXTENT_SEARCH_BLOCKS : WC_META_BLOCK + 1;
	to = Min(nblocks, hint + EXTENT_SEARCH_BLOCKS);
	for (BlockNumber b = from; b < to; b++)
	{
		if (GetRecordedFreeSpace(rel, b) < BLCKSZ / 2)
		{
			run_start = InvalidBlockNumber;
			continue;
		}
		if (run_start == InvalidBlockNumber)
			run_start = b;
		if (b - run_start + 1 == n)
			return run_start;
	}
	return InvalidBlockNumber;
}

/*
 * n contiguous free pages for a run's extent (its header, index, bloom
 * and value directory, read as one range), each taken as wc_reuse_page
 * takes a page and stamped with the run id under its lock; the first
 * block, or InvalidBlockNumber when no such range is free (the caller
 * extends the relation).  Should a page of the range turn out taken, the
 * pages stamped so far are freed again.
 */
BlockNumber
wc_reuse_extent(Relation rel, BufferAccessStrategy strategy, uint64 storage_id,
				uint64 run_id, uint32 n)
{
	BlockNumber first = free_range(rel, n);

	if (first == InvalidBlockNumber)
		return InvalidBlockNumber;
	for (uint32 i = 0; i < n; i++)
	{
		Buffer		buf = InvalidBuffer;

		if (take_page(rel, first + i, strategy, storage_id, &buf) != TAKE_OK)
		{
			for (uint32 j = 0; j < i; j++)
			{
				buf = ReadBufferExtended(rel, MAIN_FORKNUM, first + j, RBM_NORMAL, strategy);
				LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
				wc_free_buffer(rel, buf);
				UnlockReleaseBuffer(buf);
				RecordFreeIndexPage(rel, first + j);
			}
			return InvalidBlockNumber;
		}
		RecordUsedIndexPage(rel, first + i);
		wc_stamp_extent_page(BufferGetPage(buf), run_id);
		MarkBufferDirty(buf);
		UnlockReleaseBuffer(buf);
	}
	return first;
}

/* A page for new contents: a FREE one if there is, else a new one. */
Buffer
wc_new_page(Relation rel, BufferAccessStrategy strategy)
{
	Buffer		buf = wc_reuse_page(rel, strategy, 0);

	return BufferIsValid(buf) ? buf : wc_extend_page(rel, strategy);
}

/*
 * Every page of a run: its header first, then its key pages (through the
 * leaves), its value pages (through its value directory) and the rest of
 * its extent.
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
	for (uint32 d = 0; d < hdr.nvaluedir_pages; d++)
	{
		BlockNumber vblks[WC_VALUEDIR_ENTRIES];
		uint32		got;

		/* a page freed before, as above, gives nothing */
		(void) wc_read_value_dir_soft(rel, &hdr, d, vblks, &got);
		for (uint32 e = 0; e < got && n < cap; e++)
			blks[n++] = vblks[e];
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

	List	   *freed = NIL;

	if (nruns > 0)
		wc_log_snapshot_conflict(rel, latest);
	for (int i = 0; i < nruns; i++)
	{
		BlockNumber *blks = NULL;
		int			n = run_pages(rel, &runs[i], &blks);

		/*
		 * The pages are not touched: once the row below is deleted the run is
		 * gone, and allocation takes its pages as they are (wc_reuse_page).
		 */
		for (int b = 0; b < n; b++)
			freed = lappend_int(freed, (int) blks[b]);
		done[ndone++] = runs[i].run_id;
		elog(DEBUG1, "widecol: reclaimed %d pages of run %llu of \"%s\"",
			 n, (unsigned long long) runs[i].run_id, RelationGetRelationName(rel));
	}
	if (ndone > 0)
	{
		ListCell   *lc;

		wc_manifest_forget_runs(storage_id, done, ndone);
		foreach(lc, freed)
			RecordFreeIndexPage(rel, (BlockNumber) lfirst_int(lc));
		IndexFreeSpaceMapVacuum(rel);
	}
}

/*
 * Pages of runs whose writers aborted or crashed (listed in the metapage,
 * storage/pending.c) go to the free space map: every page of the relation
 * is looked at once for those run ids (their 'w' rows died with their
 * writers, so allocation takes them as gone).  Entries of writers that
 * committed are dropped on the way.  Returns the pages found.  Called with
 * the table's ShareUpdateExclusiveLock (maintenance, VACUUM).
 */
int64
wc_reclaim_aborted_runs(Relation rel)
{
	WcMetaData	meta;
	uint64		lost[WC_MAX_PENDING_RUNS];
	int			nlost = 0;
	int64		found = 0;

	if (RecoveryInProgress())
		return 0;
	wc_meta_read(rel, &meta);
	for (uint32 i = 0; i < Min(meta.npending, WC_MAX_PENDING_RUNS); i++)
		if (wc_pending_fate(&meta.pending[i]) == WC_PENDING_ABORTED)
			lost[nlost++] = meta.pending[i].run_id;
	if (nlost > 0)
	{
		BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
		BlockNumber nblocks = RelationGetNumberOfBlocks(rel);

		for (BlockNumber blk = WC_META_BLOCK + 1; blk < nblocks; blk++)
		{
			Buffer		buf;
			uint64		segment = 0;
			uint16		type;
			bool		zeroed;

			CHECK_FOR_INTERRUPTS();
			buf = ReadBufferExtended(rel, MAIN_FORKNUM, blk, RBM_NORMAL, strategy);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			type = page_kind(BufferGetPage(buf), &segment);
			zeroed = PageIsNew(BufferGetPage(buf));
			UnlockReleaseBuffer(buf);
			if (zeroed)
			{
				/* extended, never written: its writer failed (page_kind) */
				RecordFreeIndexPage(rel, blk);
				found++;
				continue;
			}
			if (!is_run_page(type))
				continue;
			for (int i = 0; i < nlost; i++)
				if (lost[i] == segment)
				{
					RecordFreeIndexPage(rel, blk);
					found++;
					break;
				}
		}
		FreeAccessStrategy(strategy);
		IndexFreeSpaceMapVacuum(rel);
		ereport(LOG,
				(errmsg("widecol: %lld pages of %d runs of \"%s\" whose writers failed are free again",
						(long long) found, nlost, RelationGetRelationName(rel)),
				 errdetail("The relation's %u pages were searched for them.", nblocks)));
	}
	if (nlost > 0 || meta.npending > 0)
		wc_pending_forget(rel, lost, nlost);
	return found;
}

typedef struct GoneRun
{
	uint64		run_id;
	bool		gone;
} GoneRun;

/*
 * Is a page free to reuse?  Called with it share-locked: FREE pages, zeroed
 * pages (see page_kind), pages of runs with no manifest row of any kind
 * left (gone: their writer aborted or crashed, or they were reclaimed;
 * *gone caches the answer per run), and level-0 pages of generations the
 * metapage no longer lists (freed by a flush that crashed before it turned
 * them FREE: *l0 says so, they must be rewritten as FREE before reuse).
 */
static bool
page_is_free(Relation rel, Page page, uint64 storage_id, const WcMetaData *meta,
			 HTAB *gone, bool *l0)
{
	uint64		segment = 0;
	uint16		type = page_kind(page, &segment);

	*l0 = false;
	if (type == WC_PAGE_FREE)
		return true;
	if (type == WC_PAGE_L0)
	{
		for (uint32 g = 0; g < meta->ngens; g++)
			if (meta->gens[g].gen == segment)
				return false;
		/* a generation not listed yet cannot have pages: they are linked as listed */
		*l0 = segment < meta->next_l0_gen;
		return *l0;
	}
	if (is_run_page(type))
	{
		bool		found;
		GoneRun    *g = hash_search(gone, &segment, HASH_ENTER, &found);

		if (!found)
			g->gone = wc_manifest_run_state(storage_id, segment) == WC_RUN_GONE;
		return g->gone;
	}
	return false;
}

/*
 * VACUUM: find every free page again and record it in the free space map
 * (the map is a hint: records made since the last checkpoint are lost in a
 * crash, and a promoted standby's map is empty), then give the free pages
 * at the end of the relation back to the file system, as heap does.
 * Called with ShareUpdateExclusiveLock; the truncation takes
 * AccessExclusiveLock if it can get it at once, and checks the pages
 * again under it.  Returns the pages truncated; *nfree: free pages found.
 */
BlockNumber
wc_vacuum_free_space(Relation rel, int64 *nfree)
{
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_VACUUM);
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	BlockNumber keep = WC_META_BLOCK + 1;	/* blocks before the free tail */
	BlockNumber truncated = 0;
	WcMetaData	meta;
	HTAB	   *gone;

	wc_reclaim_aborted_runs(rel);
	wc_meta_read(rel, &meta);
	gone = wc_hash_create("widecol gone runs", 256, sizeof(uint64), sizeof(GoneRun),
						  CurrentMemoryContext);
	*nfree = 0;
	for (BlockNumber blk = WC_META_BLOCK + 1; blk < nblocks; blk++)
	{
		Buffer		buf;
		bool		l0;
		bool		free_page;

		vacuum_delay_point();
		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blk, RBM_NORMAL, strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		free_page = page_is_free(rel, BufferGetPage(buf), meta.storage_id, &meta, gone, &l0);
		UnlockReleaseBuffer(buf);
		if (free_page && l0)
		{
			/* nothing reads a generation that left the metapage */
			buf = ReadBufferExtended(rel, MAIN_FORKNUM, blk, RBM_NORMAL, strategy);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			free_page = page_is_free(rel, BufferGetPage(buf), meta.storage_id, &meta, gone, &l0);
			if (free_page && l0)
				wc_free_buffer(rel, buf);
			UnlockReleaseBuffer(buf);
		}
		if (free_page)
		{
			RecordFreeIndexPage(rel, blk);
			(*nfree)++;
		}
		else
			keep = blk + 1;
	}
	IndexFreeSpaceMapVacuum(rel);

	/* the free tail: under AccessExclusiveLock nobody takes or reads a page */
	if (keep < nblocks && ConditionalLockRelation(rel, AccessExclusiveLock))
	{
		BlockNumber end = RelationGetNumberOfBlocks(rel);
		BlockNumber new_end = end;

		while (new_end > keep)
		{
			Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, new_end - 1, RBM_NORMAL, strategy);
			bool		l0;
			bool		free_page;

			LockBuffer(buf, BUFFER_LOCK_SHARE);
			free_page = page_is_free(rel, BufferGetPage(buf), meta.storage_id, &meta, gone, &l0);
			UnlockReleaseBuffer(buf);
			if (!free_page || l0)
				break;
			new_end--;
		}
		if (new_end < end)
		{
			RelationTruncate(rel, new_end);
			truncated = end - new_end;
			*nfree -= Min(*nfree, truncated);
		}
		UnlockRelation(rel, AccessExclusiveLock);
	}
	FreeAccessStrategy(strategy);
	hash_destroy(gone);
	return truncated;
}
