/*
 * handler.c — the TableAmRoutine, relation-level (DDL) callbacks, and clear
 * errors for what widecol does not support.
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/tableam.h"
#include "access/xloginsert.h"
#include "catalog/pg_am_d.h"
#include "catalog/storage.h"
#include "catalog/storage_xlog.h"
#include "commands/vacuum.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"
#include "parser/analyze.h"
#include "parser/parsetree.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "storage/smgr.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"

#include "widecol.h"
#include "access/access.h"
#include "storage/level0.h"
#include "storage/manifest.h"
#include "storage/merge.h"
#include "storage/metapage.h"
#include "storage/page.h"
#include "storage/reclaim.h"
#include "storage/row.h"

PG_FUNCTION_INFO_V1(widecol_am_handler);

/*
 * widecol's slot (slot.c): a stored version, its columns deformed and its
 * key columns decoded from the key only when asked for.
 */
static const TupleTableSlotOps *
wc_slot_callbacks(Relation rel)
{
	return &WcSlotOps;
}

static void
not_supported(Relation rel, const char *what, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s is not supported on widecol table \"%s\"", what,
					RelationGetRelationName(rel)),
			 hint ? errhint("%s", hint) : 0));
}

/* ---------- unsupported operations ---------- */

static const char *index_hint =
"widecol tables are read by their partition and clustering key; for other access paths create a second widecol table keyed for that query.";

static struct IndexFetchTableData *
wc_index_fetch_begin(Relation rel)
{
	not_supported(rel, "index access", index_hint);
	return NULL;
}

static void
wc_index_fetch_reset(struct IndexFetchTableData *data)
{
}

static void
wc_index_fetch_end(struct IndexFetchTableData *data)
{
}

static bool
wc_index_fetch_tuple(struct IndexFetchTableData *scan, ItemPointer tid,
					 Snapshot snapshot, TupleTableSlot *slot,
					 bool *call_again, bool *all_dead)
{
	elog(ERROR, "widecol: index access is not supported");
	return false;
}

static TransactionId
wc_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate)
{
	not_supported(rel, "index access", index_hint);
	return InvalidTransactionId;
}

static void
wc_tuple_insert_speculative(Relation rel, TupleTableSlot *slot, CommandId cid,
							int options, struct BulkInsertStateData *bistate,
							uint32 specToken)
{
	not_supported(rel, "INSERT ... ON CONFLICT",
				  "INSERT into a widecol table already replaces a row with the same key.");
}

static void
wc_tuple_complete_speculative(Relation rel, TupleTableSlot *slot,
							  uint32 specToken, bool succeeded)
{
	not_supported(rel, "INSERT ... ON CONFLICT", NULL);
}

static void
wc_relation_copy_for_cluster(Relation OldTable, Relation NewTable,
							 Relation OldIndex, bool use_sort,
							 TransactionId OldestXmin,
							 TransactionId *xid_cutoff,
							 MultiXactId *multi_cutoff,
							 double *num_tuples, double *tups_vacuumed,
							 double *tups_recently_dead)
{
	/* rows come out in key order whatever the index: use_sort changes nothing */
	wc_cluster_copy(OldTable, NewTable, OldestXmin, xid_cutoff, multi_cutoff,
					num_tuples, tups_vacuumed);
	*tups_recently_dead = 0;
}

static double
wc_index_build_range_scan(Relation table_rel, Relation index_rel,
						  struct IndexInfo *index_info, bool allow_sync,
						  bool anyvisible, bool progress,
						  BlockNumber start_blockno, BlockNumber numblocks,
						  IndexBuildCallback callback, void *callback_state,
						  TableScanDesc scan)
{
	not_supported(table_rel, "CREATE INDEX", index_hint);
	return 0;
}

static void
wc_index_validate_scan(Relation table_rel, Relation index_rel,
					   struct IndexInfo *index_info, Snapshot snapshot,
					   struct ValidateIndexState *state)
{
	not_supported(table_rel, "CREATE INDEX", index_hint);
}

static bool
wc_scan_sample_next_block(TableScanDesc scan, struct SampleScanState *scanstate)
{
	not_supported(scan->rs_rd, "TABLESAMPLE", NULL);
	return false;
}

static bool
wc_scan_sample_next_tuple(TableScanDesc scan, struct SampleScanState *scanstate,
						  TupleTableSlot *slot)
{
	not_supported(scan->rs_rd, "TABLESAMPLE", NULL);
	return false;
}

static bool
wc_scan_bitmap_next_block(TableScanDesc scan, struct TBMIterateResult *tbmres)
{
	not_supported(scan->rs_rd, "bitmap scan", index_hint);
	return false;
}

static bool
wc_scan_bitmap_next_tuple(TableScanDesc scan, struct TBMIterateResult *tbmres,
						  TupleTableSlot *slot)
{
	not_supported(scan->rs_rd, "bitmap scan", index_hint);
	return false;
}

/* ---------- storage ---------- */

static void
wc_relation_set_new_filenode(Relation rel, const RelFileNode *newrnode,
							 char persistence, TransactionId *freezeXid,
							 MultiXactId *minmulti)
{
	SMgrRelation srel;
	PGAlignedBlock page;

	wc_check_preloaded();
	if (persistence != RELPERSISTENCE_PERMANENT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("widecol supports only permanent tables"),
				 errhint("Temporary and unlogged widecol tables are not supported; use USING heap for them.")));

	/* versions carry xids: the horizon starts now, as for heap */
	*freezeXid = RecentXmin;
	*minmulti = GetOldestMultiXactId();

	/* TRUNCATE: the old contents' manifest rows go (and come back on rollback) */
	if (rel->rd_rel->relfilenode != InvalidOid &&
		rel->rd_node.relNode != newrnode->relNode &&
		smgrexists(RelationGetSmgr(rel), MAIN_FORKNUM) &&
		RelationGetNumberOfBlocks(rel) > 0)
	{
		WcMetaData	meta;

		wc_meta_read(rel, &meta);
		wc_manifest_drop_storage(meta.storage_id);
	}

	srel = RelationCreateStorage(*newrnode, persistence, true);
	wc_meta_init_page(page.data, wc_new_storage_id());
	PageSetChecksumInplace(page.data, WC_META_BLOCK);
	smgrextend(srel, MAIN_FORKNUM, WC_META_BLOCK, page.data, true);
	log_newpage((RelFileNode *) newrnode, MAIN_FORKNUM, WC_META_BLOCK, page.data, true);
	smgrimmedsync(srel, MAIN_FORKNUM);
}

static void
wc_relation_nontransactional_truncate(Relation rel)
{
	uint64		sid = wc_new_storage_id();
	WcMetaData	meta;
	Buffer		buf;

	wc_meta_read(rel, &meta);
	wc_manifest_drop_storage(meta.storage_id);
	RelationTruncate(rel, 0);
	buf = wc_extend_page(rel, NULL);
	Assert(BufferGetBlockNumber(buf) == WC_META_BLOCK);
	START_CRIT_SECTION();
	wc_meta_init_page(BufferGetPage(buf), sid);
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
		log_newpage_buffer(buf, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buf);
}

static void
wc_relation_copy_data(Relation rel, const RelFileNode *newrnode)
{
	SMgrRelation dstrel = smgropen(*newrnode, rel->rd_backend);

	FlushRelationBuffers(rel);
	RelationCreateStorage(*newrnode, rel->rd_rel->relpersistence, true);
	RelationCopyStorage(RelationGetSmgr(rel), dstrel, MAIN_FORKNUM,
						rel->rd_rel->relpersistence);
	/* the free space map lists reclaimed pages */
	if (smgrexists(RelationGetSmgr(rel), FSM_FORKNUM))
	{
		smgrcreate(dstrel, FSM_FORKNUM, false);
		log_smgrcreate(newrnode, FSM_FORKNUM);
		RelationCopyStorage(RelationGetSmgr(rel), dstrel, FSM_FORKNUM,
							rel->rd_rel->relpersistence);
	}
	RelationDropStorage(rel);
	smgrclose(dstrel);
}

typedef struct MinXid
{
	TransactionId min;
} MinXid;

static void
min_l0_xid(WcRowHeader *row, ItemPointer tid, void *arg)
{
	MinXid	   *mx = arg;

	if (TransactionIdIsNormal(row->xid) &&
		(!TransactionIdIsValid(mx->min) || TransactionIdPrecedes(row->xid, mx->min)))
		mx->min = row->xid;
}

/*
 * VACUUM keeps relfrozenxid honest: it may advance only to the oldest xid
 * still stored in any run a snapshot could read (runs dropped by compaction
 * count until no snapshot can read them) or in level 0, and never past the
 * oldest running transaction.  Rewriting old
 * runs with frozen xids is compaction's job (maintenance issue).  Space comes
 * back with compaction too.  VACUUM reports to the statistics system so that
 * autovacuum does not come back at once.
 */
static void
wc_relation_vacuum(Relation rel, struct VacuumParams *params,
				   BufferAccessStrategy bstrategy)
{
	WcMetaData	meta;
	MinXid		mx = {InvalidTransactionId};
	TransactionId cutoff = GetOldestNonRemovableTransactionId(rel);
	TransactionId frozen;

	/* every free page into the free space map; the free tail back to the OS */
	if (!RecoveryInProgress())
	{
		int64		nfree;
		BlockNumber truncated = wc_vacuum_free_space(rel, &nfree);

		ereport((params->options & VACOPT_VERBOSE) ? INFO : DEBUG1,
				(errmsg("widecol: \"%s\": %lld free pages, %u pages truncated",
						RelationGetRelationName(rel), (long long) nfree, truncated)));
	}
	wc_meta_read(rel, &meta);
	mx.min = wc_manifest_min_xid(meta.storage_id, cutoff);
	for (uint32 g = 0; g < meta.ngens; g++)
		wc_l0_read_gen(rel, &meta.gens[g], min_l0_xid, &mx);

	frozen = cutoff;
	if (TransactionIdIsValid(mx.min) && TransactionIdPrecedes(mx.min, frozen))
		frozen = mx.min;
	vac_update_relstats(rel, RelationGetNumberOfBlocks(rel),
						Max(rel->rd_rel->reltuples, 0), 0, false,
						frozen, GetOldestMultiXactId(), NULL, NULL, false);
	pgstat_report_vacuum(RelationGetRelid(rel), rel->rd_rel->relisshared,
						 (PgStat_Counter) Max(rel->rd_rel->reltuples, 0), 0);
}

static uint64
wc_relation_size(Relation rel, ForkNumber forkNumber)
{
	return table_block_relation_size(rel, forkNumber);
}

/*
 * A TOAST relation for the values that do not fit a page even compressed
 * (storage/outofline.c): any column that may hold a large value.
 */
static bool
wc_relation_needs_toast_table(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && att->attlen == -1 && att->attstorage != TYPSTORAGE_PLAIN)
			return true;
	}
	return false;
}

static Oid
wc_relation_toast_am(Relation rel)
{
	return HEAP_TABLE_AM_OID;	/* chunks are heap rows, as for every table */
}

static void
wc_relation_estimate_size(Relation rel, int32 *attr_widths, BlockNumber *pages,
						  double *tuples, double *allvisfrac)
{
	/* assume 2x compression before ANALYZE has measured the density */
	table_block_relation_estimate_size(rel, attr_widths, pages, tuples, allvisfrac,
									   sizeof(WcRowHeader) + 16,
									   WC_PAYLOAD_CAPACITY * 2);
	*allvisfrac = 0;

	/*
	 * Never analyzed: the runs count their rows (versions less tombstones),
	 * where that guess was off by up to 2x; level 0's pages keep it.
	 */
	if (rel->rd_rel->reltuples < 0 && *pages > 0)
	{
		WcMetaData meta;
		WcManifest *m;
		double		rows = 0;

		wc_merge_read_manifest(rel, GetCatalogSnapshot(RelationGetRelid(rel)), &meta, &m);
		for (int i = 0; i < m->nruns; i++)
			rows += m->runs[i].st.nrows - m->runs[i].st.ntombstones;
		if (m->nruns > 0)
			*tuples = clamp_row_est(rows + meta.gens[meta.ngens - 1].npages * (*tuples / *pages));
	}
}

static const TableAmRoutine wc_routine = {
	.type = T_TableAmRoutine,
	.slot_callbacks = wc_slot_callbacks,
	.scan_begin = wc_scan_begin,
	.scan_end = wc_scan_end,
	.scan_rescan = wc_scan_rescan,
	.scan_getnextslot = wc_scan_getnextslot,
	.parallelscan_estimate = wc_parallelscan_estimate,
	.parallelscan_initialize = wc_parallelscan_initialize,
	.parallelscan_reinitialize = wc_parallelscan_reinitialize,
	.index_fetch_begin = wc_index_fetch_begin,
	.index_fetch_reset = wc_index_fetch_reset,
	.index_fetch_end = wc_index_fetch_end,
	.index_fetch_tuple = wc_index_fetch_tuple,
	.tuple_fetch_row_version = wc_fetch_row_version,
	.tuple_tid_valid = wc_tid_valid,
	.tuple_get_latest_tid = wc_get_latest_tid,
	.tuple_satisfies_snapshot = wc_satisfies_snapshot,
	.index_delete_tuples = wc_index_delete_tuples,
	.tuple_insert = wc_tuple_insert,
	.tuple_insert_speculative = wc_tuple_insert_speculative,
	.tuple_complete_speculative = wc_tuple_complete_speculative,
	.multi_insert = wc_multi_insert,
	.tuple_delete = wc_tuple_delete,
	.tuple_update = wc_tuple_update,
	.tuple_lock = wc_tuple_lock,
	.finish_bulk_insert = wc_finish_bulk_insert,
	.relation_set_new_filenode = wc_relation_set_new_filenode,
	.relation_nontransactional_truncate = wc_relation_nontransactional_truncate,
	.relation_copy_data = wc_relation_copy_data,
	.relation_copy_for_cluster = wc_relation_copy_for_cluster,
	.relation_vacuum = wc_relation_vacuum,
	.scan_analyze_next_block = wc_scan_analyze_next_block,
	.scan_analyze_next_tuple = wc_scan_analyze_next_tuple,
	.index_build_range_scan = wc_index_build_range_scan,
	.index_validate_scan = wc_index_validate_scan,
	.relation_size = wc_relation_size,
	.relation_needs_toast_table = wc_relation_needs_toast_table,
	.relation_toast_am = wc_relation_toast_am,
	.relation_estimate_size = wc_relation_estimate_size,
	.scan_bitmap_next_block = wc_scan_bitmap_next_block,
	.scan_bitmap_next_tuple = wc_scan_bitmap_next_tuple,
	.scan_sample_next_block = wc_scan_sample_next_block,
	.scan_sample_next_tuple = wc_scan_sample_next_tuple,
};

const TableAmRoutine *
wc_get_routine(void)
{
	return &wc_routine;
}

Datum
widecol_am_handler(PG_FUNCTION_ARGS)
{
	wc_check_preloaded();
	PG_RETURN_POINTER(&wc_routine);
}
