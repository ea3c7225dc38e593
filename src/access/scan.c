/*
 * scan.c — sequential scans, fetch by TID, and ANALYZE sampling.
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/transam.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "storage/bufmgr.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "widecol.h"
#include "access/access.h"
#include "storage/columns.h"
#include "storage/keyenc.h"
#include "storage/level0.h"
#include "storage/manifest.h"
#include "storage/merge.h"
#include "storage/metapage.h"
#include "storage/page.h"
#include "storage/row.h"
#include "storage/run.h"
#include "storage/tableinfo.h"

typedef struct WcScanDescData
{
	TableScanDescData rs_base;
	WcMergeIter *iter;
	BufferAccessStrategy strategy;
	bool		may_ring;		/* a ring if it reads a large table (scan_may_ring) */
	MemoryContext cxt;			/* lives as long as the scan (not per tuple) */
	WcKeyDecoder keys;			/* decoded key values of the current row */
	bool		serial_done;	/* a serial scan's one merge was opened */
	StringInfo	range_end;		/* parallel: this range ends before this key */
	StringInfoData range_end_buf;

	/* ANALYZE: the rows of the sampled block */
	bool		an_is_l0;
	PGAlignedBlock an_page;
	WcBlock		an_block;
	int			an_pos;
	int			an_n;
	BlockNumber an_blkno;
	WcManifest *an_manifest;	/* runs the sample may read (others are gone) */
} WcScanDescData;

typedef WcScanDescData *WcScanDesc;

/*
 * A parallel sequential scan divides the key space into ranges; each
 * process claims the next range and merges level 0 and the runs over it
 * (every version of a key lies in one range, so each key is decided once).
 * The split keys come from the biggest run's index, so ranges hold about
 * equal shares of its blocks.  Shared memory: this struct, the keys, then
 * the snapshot PostgreSQL serializes after them.  Many small ranges, not one
 * per process: a process that claims the last range alone keeps the others
 * waiting for it, and with 16 ranges the slowest worker of a report ran
 * ~10% longer than the other (src/README.md, "Parallel sequential scans").
 */
#define WC_PARALLEL_RANGES	64

typedef struct WcParallelScanData
{
	ParallelTableScanDescData base;
	pg_atomic_uint32 next_range;
	uint32		nranges;
	uint32		key_off[WC_PARALLEL_RANGES];	/* range i ends before key i */
	uint16		key_len[WC_PARALLEL_RANGES];
	char		keys[FLEXIBLE_ARRAY_MEMBER];
} WcParallelScanData;

typedef WcParallelScanData *WcParallelScan;

/*
 * Put a version into a (virtual) slot: the stored tuple's columns, with the
 * key columns decoded from the key (the tuple holds NULLs there), and the
 * defaults of columns added after the version was written.  keys_only: the
 * other columns NULL, the stored tuple not read (wc_scan_reads_keys_only).
 * skip (or NULL): columns left NULL, the others read by column if the
 * version's value page is in column layout (wc_scan_unread_columns).
 */
static void
fill_slot(TupleTableSlot *slot, Relation rel, WcRowHeader *row, ItemPointer tid,
		  WcKeyDecoder *dec, bool keys_only, const bool *skip)
{
	WcTableInfo *info = wc_table_info(rel);
	TupleDesc	desc = slot->tts_tupleDescriptor;
	struct WcColumnsPage *cp = NULL;
	int			ordinal;

	ExecClearTuple(slot);
	if (skip)
		cp = wc_block_row_columns(row, &ordinal);
	if (keys_only)
	{
		memset(slot->tts_values, 0, sizeof(Datum) * desc->natts);
		memset(slot->tts_isnull, true, sizeof(bool) * desc->natts);
	}
	else if (cp == NULL ||
			 wc_block_row_values(row, cp, ordinal, desc, skip, 0, desc->natts,
								 slot->tts_values, slot->tts_isnull) < desc->natts)
		wc_row_deform(rel, row, slot->tts_values, slot->tts_isnull);
	if (WcTableIsKeyless(info))
		;
	else if (dec)
		wc_key_decode(dec, info, WcRowKey(row), row->keylen, row->pklen,
					  slot->tts_values, slot->tts_isnull);
	else
		wc_decode_key_into(info, WcRowKey(row), row->keylen,
						   slot->tts_values, slot->tts_isnull);
	ExecStoreVirtualTuple(slot);
	slot->tts_tid = *tid;
	slot->tts_tableOid = RelationGetRelid(rel);
}

/* A version's key columns into a virtual slot, the other columns NULL. */
void
wc_store_row_keys(TupleTableSlot *slot, Relation rel, WcRowHeader *row, ItemPointer tid,
				  WcKeyDecoder *dec)
{
	fill_slot(slot, rel, row, tid, dec, true, NULL);
}

/* Store a copy of a version: the slot owns its values. */
void
wc_store_row(TupleTableSlot *slot, Relation rel, WcRowHeader *row, ItemPointer tid)
{
	fill_slot(slot, rel, row, tid, NULL, false, NULL);
	ExecMaterializeSlot(slot);
}

/*
 * Store a version that stays valid until the scan's next call (a merge
 * iterator's current row) without copying it, as heap scans keep tuples in
 * pinned buffers.  Decoded key values live in the read's key decoder, valid
 * until its next row.
 */
void
wc_store_row_ref(TupleTableSlot *slot, Relation rel, WcRowHeader *row, ItemPointer tid,
				 WcKeyDecoder *dec)
{
	/* widecol's own slot deforms on demand (slot.c); others get every column */
	if (slot->tts_ops == &WcSlotOps)
		wc_slot_store_version(slot, wc_table_info(rel), row, tid, RelationGetRelid(rel), dec);
	else
		fill_slot(slot, rel, row, tid, dec, false, NULL);
}

/*
 * As wc_store_row_ref, but the columns `skip` marks are NULL: from a value
 * page in column layout only the others are decoded (storage/columns.h).
 */
void
wc_store_row_columns(TupleTableSlot *slot, Relation rel, WcRowHeader *row, ItemPointer tid,
					 WcKeyDecoder *dec, const bool *skip)
{
	if (slot->tts_ops == &WcSlotOps)
		wc_store_row_ref(slot, rel, row, tid, dec);
	else
		fill_slot(slot, rel, row, tid, dec, false, skip);
}

/*
 * A copy of a version for a read that uses only the columns `skip` leaves
 * (a seek buffering small partitions, executor/seekexec.c): from a value
 * page in column layout only those columns are decoded, and the copy's
 * tuple holds them, the others NULL.  Copying the whole tuple assembled
 * every tuple of the page from every column chunk, the hash and path
 * columns a query did not ask for included.  Whole when the tuple is not
 * in column layout (its bytes are then copied as they are).
 */
WcRowHeader *
wc_row_copy_columns(Relation rel, WcRowHeader *row, const bool *skip)
{
	TupleDesc	desc = RelationGetDescr(rel);
	struct WcColumnsPage *cp;
	int			ordinal;
	Datum	   *values;
	bool	   *isnull;
	WcRowHeader *copy;

	if (skip == NULL || (cp = wc_block_row_columns(row, &ordinal)) == NULL)
		return wc_row_copy(NULL, row);
	values = palloc(sizeof(Datum) * desc->natts);
	isnull = palloc(sizeof(bool) * desc->natts);
	if (wc_block_row_values(row, cp, ordinal, desc, skip, 0, desc->natts,
							values, isnull) < desc->natts)
		copy = wc_row_copy(NULL, row);
	else
		copy = wc_row_with_values(rel, row, values, isnull);
	pfree(values);
	pfree(isnull);
	return copy;
}

/*
 * As heap's scans (initscan): a scan of a table larger than a quarter of
 * shared buffers reads through a small ring, so that it does not push out
 * the pages other queries use; a smaller table's pages stay in shared
 * buffers, and the next report over it reads none from the kernel.  (Every
 * scan took the ring before: src/README.md, "Full scans and the ring".)
 * Whether this scan may take one; whether it does is decided when it opens
 * its first merge (scan_take_ring), from the pages it will read.
 */
static bool
scan_may_ring(Relation rel, uint32 flags)
{
	return !(flags & SO_TYPE_ANALYZE) && (flags & SO_ALLOW_STRAT) &&
		!RelationUsesLocalBuffers(rel);
}

/*
 * "Larger" counts the pages a full scan reads: those of the live runs and
 * of level 0.  The file also holds the free pages compaction leaves behind
 * until new runs reuse them (half of a table right after its major
 * compaction), which no scan reads.
 */
static void
scan_take_ring(WcScanDesc scan, const WcMetaData *meta, const WcManifest *m)
{
	if (scan->may_ring && scan->strategy == NULL &&
		meta->l0_pages + wc_manifest_run_pages(m) > (uint64) (NBuffers / 4))
		scan->strategy = GetAccessStrategy(BAS_BULKREAD);
}

TableScanDesc
wc_scan_begin(Relation rel, Snapshot snapshot, int nkeys,
			  struct ScanKeyData *key, ParallelTableScanDesc pscan,
			  uint32 flags)
{
	WcScanDesc	scan;

	if (flags & SO_TYPE_SAMPLESCAN)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("TABLESAMPLE is not supported on widecol table \"%s\"",
						RelationGetRelationName(rel)),
				 errhint("Use a WHERE clause on the key, or sample with random() in the query.")));
	if (flags & (SO_TYPE_BITMAPSCAN | SO_TYPE_TIDRANGESCAN))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("this scan type is not supported on widecol tables")));

	scan = palloc0(sizeof(WcScanDescData));
	scan->cxt = CurrentMemoryContext;
	wc_key_decoder_init(&scan->keys, CurrentMemoryContext);
	scan->rs_base.rs_rd = rel;
	scan->rs_base.rs_snapshot = snapshot;
	scan->rs_base.rs_nkeys = nkeys;
	scan->rs_base.rs_key = key;
	scan->rs_base.rs_flags = flags;
	scan->rs_base.rs_parallel = pscan;
	initStringInfo(&scan->range_end_buf);
	scan->may_ring = scan_may_ring(rel, flags);
	return &scan->rs_base;
}

void
wc_scan_end(TableScanDesc sscan)
{
	WcScanDesc	scan = (WcScanDesc) sscan;

	if (scan->iter)
		wc_merge_end(scan->iter);
	if (scan->strategy)
		FreeAccessStrategy(scan->strategy);
	if (scan->rs_base.rs_flags & SO_TEMP_SNAPSHOT)
		UnregisterSnapshot(scan->rs_base.rs_snapshot);
	MemoryContextDelete(scan->keys.cxt);
	pfree(scan);
}

void
wc_scan_rescan(TableScanDesc sscan, struct ScanKeyData *key, bool set_params,
			   bool allow_strat, bool allow_sync, bool allow_pagemode)
{
	WcScanDesc	scan = (WcScanDesc) sscan;

	if (scan->iter)
		wc_merge_end(scan->iter);
	scan->iter = NULL;
	scan->serial_done = false;
}

/*
 * Open the merge for the next key range: the whole table for a serial scan
 * (once), the next unclaimed range of a parallel one.  False when none is
 * left.
 */
static bool
start_range(WcScanDesc scan)
{
	WcParallelScan p = (WcParallelScan) scan->rs_base.rs_parallel;
	const char *lo = NULL;
	int			lolen = 0;
	MemoryContext old;

	scan->range_end = NULL;
	if (p != NULL)
	{
		uint32		i = pg_atomic_fetch_add_u32(&p->next_range, 1);

		if (i >= p->nranges)
			return false;
		if (i > 0)
		{
			lo = p->keys + p->key_off[i - 1];
			lolen = p->key_len[i - 1];
		}
		if (i < p->nranges - 1)
		{
			scan->range_end = &scan->range_end_buf;
			resetStringInfo(scan->range_end);
			appendBinaryStringInfo(scan->range_end, p->keys + p->key_off[i], p->key_len[i]);
		}
	}
	else if (scan->serial_done)
		return false;
	scan->serial_done = true;
	/* callers may call us in a per-tuple context (ALTER TABLE rewrites) */
	old = MemoryContextSwitchTo(scan->cxt);
	{
		Relation	rel = scan->rs_base.rs_rd;
		Snapshot	snapshot = wc_snapshot_for_read(rel, scan->rs_base.rs_snapshot, scan->cxt);
		WcMetaData	meta;
		WcManifest *m;
		WcMergeRange range = {.lo = lo, .lolen = lolen,
			.hi = scan->range_end ? scan->range_end->data : NULL,
		.hilen = scan->range_end ? scan->range_end->len : 0};

		wc_merge_read_manifest(rel, snapshot, &meta, &m);
		scan_take_ring(scan, &meta, m);
		range.strategy = scan->strategy;
		scan->iter = wc_merge_begin_with(rel, snapshot, &meta, m, &range);
	}
	MemoryContextSwitchTo(old);
	return true;
}

bool
wc_scan_getnextslot(TableScanDesc sscan, ScanDirection direction,
					TupleTableSlot *slot)
{
	WcScanDesc	scan = (WcScanDesc) sscan;
	WcRowHeader *row;
	ItemPointerData tid;

	if (ScanDirectionIsBackward(direction))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("backward scans of widecol tables are not supported"),
				 errhint("Declare the cursor without SCROLL.")));
	for (;;)
	{
		if (scan->iter == NULL && !start_range(scan))
		{
			ExecClearTuple(slot);
			return false;
		}
		row = wc_merge_next(scan->iter, &tid);
		if (row != NULL && scan->range_end != NULL &&
			wc_compare_keys(WcRowKey(row), row->keylen,
							scan->range_end->data, scan->range_end->len) >= 0)
			row = NULL;			/* the next range's first key */
		if (row != NULL)
			break;
		if (scan->rs_base.rs_parallel == NULL)
		{
			ExecClearTuple(slot);
			return false;
		}
		wc_merge_end(scan->iter);
		scan->iter = NULL;
	}
	wc_store_row_ref(slot, scan->rs_base.rs_rd, row, &tid, &scan->keys);
	return true;
}

Size
wc_parallelscan_estimate(Relation rel)
{
	return add_size(offsetof(WcParallelScanData, keys),
					mul_size(WC_PARALLEL_RANGES - 1, WC_MAX_KEY_SIZE));
}

/* Split the key space for a parallel scan (in the leader, once). */
Size
wc_parallelscan_initialize(Relation rel, ParallelTableScanDesc pscan)
{
	WcParallelScan p = (WcParallelScan) pscan;
	WcMetaData	meta;
	WcManifest *m;
	StringInfo	keys[WC_PARALLEL_RANGES - 1];
	int			nkeys = 0,
				biggest = -1;
	uint32		off = 0;

	p->base.phs_relid = RelationGetRelid(rel);
	p->base.phs_syncscan = false;
	wc_meta_read(rel, &meta);
	m = wc_manifest_read(meta.storage_id, GetActiveSnapshot());
	for (int i = 0; i < m->nruns; i++)
		if (biggest < 0 || m->runs[i].npages > m->runs[biggest].npages)
			biggest = i;
	if (biggest >= 0)
	{
		WcRunReader r;

		wc_run_reader_open(&r, rel, &m->runs[biggest], NULL);
		nkeys = wc_run_split_keys(&r, WC_PARALLEL_RANGES - 1, keys);
	}
	for (int i = 0; i < nkeys; i++)
	{
		p->key_off[i] = off;
		p->key_len[i] = keys[i]->len;
		memcpy(p->keys + off, keys[i]->data, keys[i]->len);
		off += keys[i]->len;
	}
	p->nranges = nkeys + 1;
	pg_atomic_init_u32(&p->next_range, 0);
	return wc_parallelscan_estimate(rel);
}

void
wc_parallelscan_reinitialize(Relation rel, ParallelTableScanDesc pscan)
{
	pg_atomic_write_u32(&((WcParallelScan) pscan)->next_range, 0);
}

static WcRowHeader *fetch_version(Relation rel, ItemPointer tid, bool with_tuple);

/* A palloc'd copy of the version a TID names, or NULL. */
WcRowHeader *
wc_fetch_version(Relation rel, ItemPointer tid)
{
	return fetch_version(rel, tid, true);
}

/*
 * The version at a TID without its tuple (header and key): what UPDATE,
 * DELETE, the write-conflict checks, snapshot checks and WRITETIME/TTL
 * need, without reading a run's value pages.
 */
WcRowHeader *
wc_fetch_version_key(Relation rel, ItemPointer tid)
{
	return fetch_version(rel, tid, false);
}

/*
 * The key page a fetch by TID decoded last.  An UPDATE or DELETE fetches
 * its rows in key order, most from the page of the one before, and
 * decoding the page again for each row was most of a bulk DELETE's time.
 * The entry serves the transaction that filled it (the lock it holds on
 * the relation keeps VACUUM from truncating the file) while the block
 * still belongs to the same run (pages of a reclaimed run are reused).
 * Static: the decoded rows find their block by its address.
 */
static struct
{
	bool		valid;
	RelFileNode node;
	BlockNumber blk;
	uint64		run_id;
	LocalTransactionId lxid;
	WcBlock		block;
} fetched;

static bool
fetched_block_is(Relation rel, BlockNumber blk)
{
	return fetched.valid && fetched.lxid == MyProc->lxid && fetched.blk == blk &&
		RelFileNodeEquals(fetched.node, rel->rd_node);
}

/* Key page blk of run run_id, decoded (from the entry above if it has it). */
static WcBlock *
fetch_block(Relation rel, BlockNumber blk, uint64 run_id)
{
	if (!fetched_block_is(rel, blk) || fetched.run_id != run_id)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		fetched.valid = false;
		fetched.block.run_id = run_id;
		wc_block_read(rel, blk, &fetched.block, NULL);
		MemoryContextSwitchTo(old);
		fetched.node = rel->rd_node;
		fetched.blk = blk;
		fetched.run_id = run_id;
		fetched.lxid = MyProc->lxid;
		fetched.valid = true;
	}
	fetched.block.rel = rel;	/* a tuple is loaded through it */
	return &fetched.block;
}

static WcRowHeader *
fetch_version(Relation rel, ItemPointer tid, bool with_tuple)
{
	BlockNumber blk = ItemPointerGetBlockNumber(tid);
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	Buffer		buf;
	WcPageOpaqueData op = {0};
	WcRowHeader *row = NULL;

	if (blk == WC_META_BLOCK || off < 1 ||
		(!fetched_block_is(rel, blk) && blk >= RelationGetNumberOfBlocks(rel)))
		return NULL;
	buf = ReadBuffer(rel, blk);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	if (!PageIsNew(BufferGetPage(buf)))
		op = *WcPageGetOpaque(BufferGetPage(buf));
	UnlockReleaseBuffer(buf);

	if (op.type == WC_PAGE_L0)
		row = wc_l0_fetch(rel, tid);
	else if (op.type == WC_PAGE_RUN_DATA)
	{
		WcBlock    *block = fetch_block(rel, blk, op.segment);

		if (off <= block->nrows)
			row = with_tuple ? wc_row_copy(NULL, WcBlockRow(block, off - 1)) :
				wc_row_copy_key(WcBlockRow(block, off - 1));
	}
	return row;
}

/*
 * Is this the version a scan with `snapshot` returns for its key: visible,
 * the newest visible one, and not a tombstone?
 */
bool
wc_version_is_current(Relation rel, WcRowHeader *row, ItemPointer tid,
					  Snapshot snapshot)
{
	ItemPointerData cur;
	WcRowHeader *live;

	snapshot = wc_snapshot_for_read(rel, snapshot, CurrentMemoryContext);
	if (WcRowIsTombstone(row) || !wc_version_visible(row, snapshot))
		return false;
	if (snapshot->snapshot_type == SNAPSHOT_ANY)
		return true;
	live = wc_lookup_key(rel, snapshot, WcRowKey(row), row->keylen, row->pklen,
						 false, &cur);
	/* the same version, wherever a flush may have moved it */
	return live != NULL && wc_same_version(live, row);
}

bool
wc_fetch_row_version(Relation rel, ItemPointer tid, Snapshot snapshot,
					 TupleTableSlot *slot)
{
	WcRowHeader *row = wc_fetch_version(rel, tid);

	snapshot = wc_snapshot_for_read(rel, snapshot, CurrentMemoryContext);
	if (row == NULL || WcRowIsTombstone(row) ||
		!wc_version_is_current(rel, row, tid, snapshot))
		return false;
	if (WcRowIsDelta(row))
	{
		/*
		 * A counter delta holds increments: return the sum the key has at
		 * this version (UPDATE builds its new row from this).  Callers that
		 * pass SnapshotAny fetch the version they just found or locked, the
		 * newest committed one: a fresh snapshot folds it.
		 */
		ItemPointerData cur;
		WcRowHeader *live = wc_lookup_key(rel, IsMVCCSnapshot(snapshot) ? snapshot
										  : GetLatestSnapshot(),
										  WcRowKey(row), row->keylen, row->pklen,
										  false, &cur);

		if (live == NULL || !wc_same_version(live, row))
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not read the counters of a row of widecol table \"%s\": it changed concurrently",
							RelationGetRelationName(rel)),
					 errhint("Retry the statement.")));
		row = live;
	}
	wc_store_row(slot, rel, row, tid);
	return true;
}

bool
wc_tid_valid(TableScanDesc scan, ItemPointer tid)
{
	BlockNumber blk = ItemPointerGetBlockNumber(tid);

	return ItemPointerIsValid(tid) && blk != WC_META_BLOCK &&
		blk < RelationGetNumberOfBlocks(scan->rs_rd);
}

void
wc_get_latest_tid(TableScanDesc scan, ItemPointer tid)
{
	/* a TID names one version; the latest version has its own TID */
}

bool
wc_satisfies_snapshot(Relation rel, TupleTableSlot *slot, Snapshot snapshot)
{
	WcRowHeader *row = wc_fetch_version_key(rel, &slot->tts_tid);

	return row != NULL && wc_version_is_current(rel, row, &slot->tts_tid, snapshot);
}

/* ---------- ANALYZE ---------- */

static bool
manifest_has_run(const WcManifest *m, uint64 run_id)
{
	for (int i = 0; i < m->nruns; i++)
		if (m->runs[i].run_id == run_id)
			return true;
	return false;
}

bool
wc_scan_analyze_next_block(TableScanDesc sscan, BlockNumber blockno,
						   BufferAccessStrategy bstrategy)
{
	WcScanDesc	scan = (WcScanDesc) sscan;
	Relation	rel = sscan->rs_rd;
	Buffer		buf;
	uint16		type;

	scan->an_n = 0;
	scan->an_pos = 0;
	scan->an_blkno = blockno;
	if (blockno == WC_META_BLOCK)
		return true;
	if (scan->an_manifest == NULL)
	{
		WcMetaData	meta;
		MemoryContext old = MemoryContextSwitchTo(scan->cxt);

		wc_merge_read_manifest(rel, ActiveSnapshotSet() ? GetActiveSnapshot() : GetLatestSnapshot(),
							   &meta, &scan->an_manifest);
		MemoryContextSwitchTo(old);
	}
	buf = ReadBufferExtended(rel, MAIN_FORKNUM, blockno, RBM_NORMAL, bstrategy);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	type = PageIsNew(BufferGetPage(buf)) ? 0 : WcPageGetOpaque(BufferGetPage(buf))->type;
	/* pages of runs the manifest no longer lists wait for reuse: not data */
	if (type == WC_PAGE_RUN_DATA &&
		!manifest_has_run(scan->an_manifest, WcPageGetOpaque(BufferGetPage(buf))->segment))
		type = WC_PAGE_FREE;
	if (type == WC_PAGE_L0)
	{
		memcpy(scan->an_page.data, BufferGetPage(buf), BLCKSZ);
		scan->an_is_l0 = true;
		scan->an_n = PageGetMaxOffsetNumber((Page) scan->an_page.data);
	}
	UnlockReleaseBuffer(buf);
	if (type == WC_PAGE_RUN_DATA)
	{
		scan->an_block.run_id = 0;
		wc_block_read(rel, blockno, &scan->an_block, bstrategy);
		scan->an_is_l0 = false;
		scan->an_n = scan->an_block.nrows;
	}
	return true;
}

/*
 * Every committed, non-tombstone version counts as a live row; older
 * versions shadowed by newer ones are counted too (an overestimate that
 * compaction removes).
 */
bool
wc_scan_analyze_next_tuple(TableScanDesc sscan, TransactionId OldestXmin,
						   double *liverows, double *deadrows,
						   TupleTableSlot *slot)
{
	WcScanDesc	scan = (WcScanDesc) sscan;

	while (scan->an_pos < scan->an_n)
	{
		WcRowHeader *row;
		ItemPointerData tid;
		int			i = scan->an_pos++;

		if (scan->an_is_l0)
		{
			Page		page = (Page) scan->an_page.data;

			/* reads report damage; ANALYZE only samples */
			if (wc_l0_page_problem(page, WcPageGetOpaque(page)->segment) ||
				wc_l0_item_problem(page, i + 1, &row))
				continue;
		}
		else
			row = WcBlockRow(&scan->an_block, i);
		ItemPointerSet(&tid, scan->an_blkno, i + 1);

		if (WcRowIsTombstone(row))
		{
			*deadrows += 1;
			continue;
		}
		if (TransactionIdIsNormal(row->xid) &&
			!TransactionIdIsCurrentTransactionId(row->xid))
		{
			if (TransactionIdIsInProgress(row->xid))
				continue;
			if (!TransactionIdDidCommit(row->xid))
			{
				*deadrows += 1;
				continue;
			}
		}
		*liverows += 1;
		wc_store_row(slot, sscan->rs_rd, row, &tid);
		return true;
	}
	ExecClearTuple(slot);
	return false;
}
