/*
 * slot.c — widecol's tuple slot: a stored version, deformed on demand.
 *
 * A version holds its non-key columns as a minimal tuple and its key
 * columns only in the encoded key.  Filling every column of a virtual slot
 * for each row read (deforming the whole tuple, decoding the whole key) was
 * a quarter of a full scan's time, even for count(*).  This slot keeps a
 * reference to the version and produces columns only when the executor
 * asks for them (getsomeattrs): the tuple up to the last column asked for,
 * the partition columns (decoded once per partition by the read's
 * WcKeyDecoder) and the clustering columns only when one of them is asked
 * for.  Columns the plan does not read (marked at executor start) are not
 * produced at all, and from a value page in column layout only the others
 * are decoded (storage/columns.h).
 *
 * A slot without a version behaves as a virtual slot: its values are set
 * directly (ExecStoreVirtualTuple), as the executor does for INSERT and
 * UPDATE.  Materializing either kind copies what is needed into memory the
 * slot owns, as a virtual slot does.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/tupdesc_details.h"
#include "executor/tuptable.h"
#include "nodes/extensible.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/datum.h"
#include "utils/expandeddatum.h"

#include "widecol.h"
#include "access/access.h"
#include "storage/columns.h"
#include "storage/keyenc.h"
#include "storage/row.h"
#include "storage/run.h"
#include "storage/tableinfo.h"

typedef struct WcSlot
{
	TupleTableSlot base;
	WcRowHeader *row;			/* the version, or NULL (virtual contents) */
	WcTableInfo *info;
	WcKeyDecoder *dec;
	uint32		off;			/* deform state: data offset of column tts_nvalid */
	bool		off_valid;		/* ... if the tuple was walked that far */
	bool		pk_done;		/* keyvals hold the partition columns */
	bool		ck_done;		/* ... and the clustering columns */
	Datum		keyvals[WC_MAX_KEY_COLUMNS];
	char	   *data;			/* owned copy of by-reference values */
	bool	   *skip;			/* per column: no expression reads it (see
								 * below); NULL: all are read */
	bool		skip_stored;	/* ... some non-key column is not read */
	bool		cols_tried;		/* looked for the version's value page by column */
	struct WcColumnsPage *cols; /* ... found it: read the columns from there */
	int			ordinal;		/* the version's tuple in it */
} WcSlot;

static void
wcslot_init(TupleTableSlot *slot)
{
	WcSlot	   *ws = (WcSlot *) slot;

	ws->row = NULL;
	ws->data = NULL;
	ws->skip = NULL;
	ws->skip_stored = false;
	ws->cols = NULL;
	ws->cols_tried = false;
}

static void
wcslot_release(TupleTableSlot *slot)
{
}

static void
wcslot_clear(TupleTableSlot *slot)
{
	WcSlot	   *ws = (WcSlot *) slot;

	if (TTS_SHOULDFREE(slot))
	{
		pfree(ws->data);
		ws->data = NULL;
		slot->tts_flags &= ~TTS_FLAG_SHOULDFREE;
	}
	ws->row = NULL;
	ws->cols = NULL;
	ws->cols_tried = false;
	slot->tts_nvalid = 0;
	slot->tts_flags |= TTS_FLAG_EMPTY;
	ItemPointerSetInvalid(&slot->tts_tid);
}

/*
 * Stored columns [tts_nvalid, upto) from a value page in column layout
 * (storage/columns.h): only the columns an expression reads are decoded,
 * the others are NULL.  false if the page's state has no room to decode a
 * column (the caller reads the tuple instead).
 */
static bool
fetch_stored_columns(WcSlot *ws, int upto)
{
	TupleTableSlot *slot = &ws->base;

	ws->off_valid = false;		/* the tuple is not walked */
	slot->tts_nvalid = wc_block_row_values(ws->row, ws->cols, ws->ordinal,
										   slot->tts_tupleDescriptor, ws->skip,
										   slot->tts_nvalid, upto,
										   slot->tts_values, slot->tts_isnull);
	return slot->tts_nvalid == upto;
}

/* Deform stored columns [tts_nvalid, upto) of the version's tuple. */
static void
deform_stored(WcSlot *ws, int upto)
{
	TupleTableSlot *slot = &ws->base;
	TupleDesc	desc = slot->tts_tupleDescriptor;
	HeapTupleHeader tup;
	int			stored;
	bool		hasnulls;
	char	   *tp;
	int			from = slot->tts_nvalid;
	int			attnum;
	uint32		off;

	/* some columns are not read: from a page in column layout, only the others */
	if (!ws->cols_tried && ws->skip_stored)
	{
		ws->cols_tried = true;
		ws->cols = wc_block_row_columns(ws->row, &ws->ordinal);
	}
	if (ws->cols)
	{
		if (fetch_stored_columns(ws, upto))
			return;
		ws->cols = NULL;		/* no room: the tuple, from its first column */
		from = slot->tts_nvalid;
	}
	tup = (HeapTupleHeader) ((char *) WcRowTuple(ws->row) - MINIMAL_TUPLE_OFFSET);
	stored = HeapTupleHeaderGetNatts(tup);
	hasnulls = (tup->t_infomask & HEAP_HASNULL) != 0;
	tp = (char *) tup + tup->t_hoff;
	/* go on from column `from` if its offset is known, else walk from the first */
	attnum = ws->off_valid ? from : 0;
	off = ws->off_valid ? ws->off : 0;

	for (; attnum < Min(upto, stored); attnum++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, attnum);

		if (hasnulls && att_isnull(attnum, tup->t_bits))
		{
			if (attnum >= from)
			{
				slot->tts_values[attnum] = (Datum) 0;
				slot->tts_isnull[attnum] = true;
			}
			continue;
		}
		if (att->attlen == -1)
			off = att_align_pointer(off, att->attalign, -1, tp + off);
		else
			off = att_align_nominal(off, att->attalign);
		if (attnum >= from)
		{
			slot->tts_isnull[attnum] = false;
			slot->tts_values[attnum] = fetchatt(att, tp + off);
		}
		off = att_addlength_pointer(off, att->attlen, tp + off);
	}
	/* columns added after the version was written */
	for (attnum = Max(attnum, from); attnum < upto; attnum++)
		slot->tts_values[attnum] = getmissingattr(desc, attnum + 1, &slot->tts_isnull[attnum]);
	ws->off = off;
	ws->off_valid = true;
}

static void
wcslot_getsomeattrs(TupleTableSlot *slot, int natts)
{
	WcSlot	   *ws = (WcSlot *) slot;
	WcTableInfo *info = ws->info;
	const bool *skip = ws->skip;
	Datum	   *values = slot->tts_values;
	bool	   *isnull = slot->tts_isnull;
	int			from = slot->tts_nvalid;
	int			nkey;

	if (ws->row == NULL)
		elog(ERROR, "widecol: slot has no version to deform");

	/*
	 * Key columns are NULL in the stored tuple (they take no bytes there), so
	 * asking only for them leaves the tuple untouched: a run's value page is
	 * then never read (see WcRowTuple).
	 */
	if (info == NULL || natts > info->key_prefix)
		deform_stored(ws, natts);

	/*
	 * Key columns among [from, natts): the tuple has NULLs there.  (Read
	 * into locals: PostgreSQL builds with -fno-strict-aliasing, so every
	 * store into values[] would otherwise reload the table's description,
	 * once per key column and row.)
	 */
	nkey = info ? info->npk + info->nck : 0;
	for (int i = 0; i < nkey; i++)
	{
		int			a = info->cols[i].attnum - 1;

		if (a < from || a >= natts)
			continue;
		if (skip && skip[a])
		{
			/* asked for only as part of the prefix: not decoded */
			values[a] = (Datum) 0;
			isnull[a] = true;
			continue;
		}
		if (i < info->npk ? !ws->pk_done : !ws->ck_done)
		{
			wc_key_decode_cols(ws->dec, info, WcRowKey(ws->row), ws->row->keylen,
							   ws->row->pklen, i >= info->npk, ws->keyvals);
			ws->pk_done = true;
			ws->ck_done |= i >= info->npk;
		}
		values[a] = ws->keyvals[i];
		isnull[a] = false;
	}
	slot->tts_nvalid = natts;
}

/*
 * The columns (0-based) of the scanned relation that a scan node's target
 * list and quals read; *all when they read a whole row or another
 * relation's column.
 */
static Bitmapset *
scan_used_columns_of(List *exprs, Index scanrelid, Bitmapset *used, bool *all)
{
	List	   *vars = pull_var_clause((Node *) exprs,
									   PVC_RECURSE_AGGREGATES | PVC_RECURSE_WINDOWFUNCS |
									   PVC_RECURSE_PLACEHOLDERS);
	ListCell   *lc;

	foreach(lc, vars)
	{
		Var		   *v = lfirst(lc);

		if (v->varno != scanrelid || v->varattno == InvalidAttrNumber)
			*all = true;		/* another relation's column, or the whole row */
		else if (v->varattno > 0)
			used = bms_add_member(used, v->varattno - 1);
	}
	return used;
}

static Bitmapset *
scan_used_columns(PlanState *ps, Index scanrelid, bool *all)
{
	*all = false;
	return scan_used_columns_of(list_make2(ps->plan->targetlist, ps->plan->qual),
								scanrelid, NULL, all);
}

static bool
is_key_column(const WcTableInfo *info, int a)
{
	for (int i = 0; !WcTableIsKeyless(info) && i < info->npk + info->nck; i++)
		if (info->cols[i].attnum - 1 == a)
			return true;
	return false;
}

/*
 * Per column of the scanned relation, is it outside `used`?  NULL when
 * every column is used; *stored: some unused column is not a key column.
 */
static bool *
unread_columns(ScanState *ss, const Bitmapset *used, MemoryContext cxt, bool *stored)
{
	WcTableInfo *info = wc_table_info(ss->ss_currentRelation);
	int			natts = RelationGetDescr(ss->ss_currentRelation)->natts;
	bool	   *skip = NULL;

	*stored = false;
	for (int a = 0; a < natts; a++)
		if (!bms_is_member(a, used))
		{
			if (skip == NULL)
				skip = MemoryContextAllocZero(cxt, natts);
			skip[a] = true;
			*stored |= !is_key_column(info, a);
		}
	return skip;
}

/*
 * Does a projecting scan of a widecol table read key columns only?  Then
 * its rows need no stored tuple at all (no value page is read): the scan
 * slot of a PostgreSQL 15 custom scan is virtual and filled eagerly, so
 * WidecolSeek asks this at its start.
 */
bool
wc_scan_reads_keys_only(ScanState *ss)
{
	PlanState  *ps = &ss->ps;
	WcTableInfo *info;
	Bitmapset  *used;
	bool		all;
	int			a = -1;

	if (ps->ps_ProjInfo == NULL || ss->ss_currentRelation == NULL)
		return false;
	info = wc_table_info(ss->ss_currentRelation);
	if (WcTableIsKeyless(info))
		return false;
	used = scan_used_columns(ps, ((Scan *) ps->plan)->scanrelid, &all);
	if (all)
		return false;
	while ((a = bms_next_member(used, a)) >= 0)
		if (!is_key_column(info, a))
			return false;
	return true;
}

/*
 * Per column, does a scan not read it (a projecting scan whose quals and
 * target list do not name it)?  All false when it reads every column.
 * WidecolSeek, whose PostgreSQL 15 scan slot is virtual, asks this at its
 * start: rows of value pages in column layout are then filled by column.
 * NULL for a scan without a relation.
 */
bool *
wc_scan_unread_columns(ScanState *ss)
{
	PlanState  *ps = &ss->ps;
	Bitmapset  *used;
	bool		all = true;
	bool		stored;
	bool	   *skip = NULL;

	if (ss->ss_currentRelation == NULL)
		return NULL;
	if (ps->ps_ProjInfo != NULL)
	{
		used = scan_used_columns(ps, ((Scan *) ps->plan)->scanrelid, &all);
		if (!all)
			skip = unread_columns(ss, used, CurrentMemoryContext, &stored);
	}
	if (skip == NULL)
		skip = palloc0(sizeof(bool) * RelationGetDescr(ss->ss_currentRelation)->natts);
	return skip;
}

/*
 * The columns (0-based) an Agg reads from its input, a scan that does not
 * project (its target list is the table's columns, in order): *all if it
 * has grouping sets or reads a whole row.
 */
static Bitmapset *
agg_input_columns(Agg *agg, bool *all)
{
	Bitmapset  *used = NULL;
	List	   *vars;
	ListCell   *lc;

	*all = agg->groupingSets != NIL || agg->chain != NIL;
	if (*all)
		return NULL;
	vars = pull_var_clause((Node *) list_make2(agg->plan.targetlist, agg->plan.qual),
						   PVC_RECURSE_AGGREGATES | PVC_RECURSE_WINDOWFUNCS |
						   PVC_RECURSE_PLACEHOLDERS);
	foreach(lc, vars)
	{
		Var		   *v = lfirst(lc);

		if (v->varno != OUTER_VAR || v->varattno <= 0)
			*all = true;
		else
			used = bms_add_member(used, v->varattno - 1);
	}
	for (int i = 0; i < agg->numCols; i++)
		used = bms_add_member(used, agg->grpColIdx[i] - 1);
	return used;
}

/*
 * The slot of a scan node is read only by the node's quals and target
 * list when it projects, and, when it does not, by its parent: columns
 * none of them names need not be produced (getsomeattrs always asks for a
 * prefix of the columns: a report on day_bucket and width would decode
 * capture_time and image_id too, and every stored column before width).
 * Unread key columns are not decoded; unread stored columns are not read
 * from a value page in column layout.  The parents understood are Aggs (a
 * report's GROUP BY); under any other, a scan that does not project
 * produces every column.  Called for every plan at executor start; marks
 * the scan slots of sequential scans and seeks of widecol tables.
 */
static void
mark_scan_slot(PlanState *ps, PlanState *parent)
{
	ScanState  *ss = (ScanState *) ps;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	Index		scanrelid = ((Scan *) ps->plan)->scanrelid;
	WcSlot	   *ws = (WcSlot *) slot;
	Bitmapset  *used;
	bool		all;

	if (slot == NULL || slot->tts_ops != &WcSlotOps || scanrelid == 0 ||
		ss->ss_currentRelation == NULL)
		return;
	if (ps->ps_ProjInfo != NULL)
		used = scan_used_columns(ps, scanrelid, &all);
	else
	{
		bool		parent_all = true;

		/* its target list is every column; what reads them is the parent */
		all = false;
		used = scan_used_columns_of(ps->plan->qual, scanrelid, NULL, &all);
		if (parent && IsA(parent, AggState) && outerPlanState(parent) == ps)
			used = bms_union(used, agg_input_columns((Agg *) parent->plan, &parent_all));
		all |= parent_all;
	}
	ws->skip = all ? NULL : unread_columns(ss, used, slot->tts_mcxt, &ws->skip_stored);
	if (ws->skip == NULL)
		ws->skip_stored = false;
}

typedef struct MarkContext
{
	PlanState  *parent;
} MarkContext;

static bool
mark_unused_columns(PlanState *ps, void *context)
{
	MarkContext *mc = context;
	PlanState  *parent = mc->parent;
	bool		r;

	if (ps == NULL)
		return false;
	if (IsA(ps, SeqScanState) ||
		(IsA(ps, CustomScanState) &&
		 strcmp(((CustomScanState *) ps)->methods->CustomName, "WidecolSeek") == 0))
		mark_scan_slot(ps, parent);
	mc->parent = ps;
	r = planstate_tree_walker(ps, mark_unused_columns, context);
	mc->parent = parent;
	return r;
}

void
wc_slot_mark_unused_columns(PlanState *top)
{
	MarkContext mc = {NULL};

	mark_unused_columns(top, &mc);
}

static Datum
wcslot_getsysattr(TupleTableSlot *slot, int attnum, bool *isnull)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("widecol tables have no system column %d (xmin, xmax, cmin and cmax do not exist)",
					attnum),
			 errhint("Use widecol.writetime(tableoid, ctid) for a row's write time.")));
	return (Datum) 0;			/* keep compiler quiet */
}

/* Size of a by-reference value once copied (expanded objects flattened). */
static Size
value_size(Form_pg_attribute att, Datum value)
{
	if (att->attlen == -1 && VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(value)))
		return EOH_get_flat_size(DatumGetEOHP(value));
	return att_addlength_datum(0, att->attlen, value);
}

/*
 * Make the slot independent of the version and of the read's key decoder:
 * every column, by-reference values copied into one allocation it owns.
 */
static void
wcslot_materialize(TupleTableSlot *slot)
{
	WcSlot	   *ws = (WcSlot *) slot;
	TupleDesc	desc = slot->tts_tupleDescriptor;
	Size		sz = 0;
	char	   *data;

	if (TTS_SHOULDFREE(slot))
		return;
	slot_getallattrs(slot);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attbyval || slot->tts_isnull[i])
			continue;
		sz = att_align_nominal(sz, att->attalign);
		sz += value_size(att, slot->tts_values[i]);
	}
	ws->row = NULL;
	ws->cols = NULL;
	if (sz == 0)
		return;
	data = MemoryContextAlloc(slot->tts_mcxt, sz);
	ws->data = data;
	slot->tts_flags |= TTS_FLAG_SHOULDFREE;
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Datum		v = slot->tts_values[i];
		Size		len;

		if (att->attbyval || slot->tts_isnull[i])
			continue;
		data = (char *) att_align_nominal(data, att->attalign);
		len = value_size(att, v);
		if (att->attlen == -1 && VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(v)))
			EOH_flatten_into(DatumGetEOHP(v), data, len);
		else
			memcpy(data, DatumGetPointer(v), len);
		slot->tts_values[i] = PointerGetDatum(data);
		data += len;
	}
}

static void
wcslot_copyslot(TupleTableSlot *dst, TupleTableSlot *src)
{
	TupleDesc	desc = src->tts_tupleDescriptor;

	Assert(desc->natts <= dst->tts_tupleDescriptor->natts);
	ExecClearTuple(dst);
	slot_getallattrs(src);
	memcpy(dst->tts_values, src->tts_values, sizeof(Datum) * desc->natts);
	memcpy(dst->tts_isnull, src->tts_isnull, sizeof(bool) * desc->natts);
	dst->tts_nvalid = desc->natts;
	dst->tts_flags &= ~TTS_FLAG_EMPTY;
	dst->tts_tid = src->tts_tid;
	dst->tts_tableOid = src->tts_tableOid;
	wcslot_materialize(dst);
}

static HeapTuple
wcslot_copy_heap_tuple(TupleTableSlot *slot)
{
	slot_getallattrs(slot);
	return heap_form_tuple(slot->tts_tupleDescriptor, slot->tts_values, slot->tts_isnull);
}

static MinimalTuple
wcslot_copy_minimal_tuple(TupleTableSlot *slot)
{
	slot_getallattrs(slot);
	return heap_form_minimal_tuple(slot->tts_tupleDescriptor, slot->tts_values, slot->tts_isnull);
}

const TupleTableSlotOps WcSlotOps = {
	.base_slot_size = sizeof(WcSlot),
	.init = wcslot_init,
	.release = wcslot_release,
	.clear = wcslot_clear,
	.getsomeattrs = wcslot_getsomeattrs,
	.getsysattr = wcslot_getsysattr,
	.materialize = wcslot_materialize,
	.copyslot = wcslot_copyslot,
	/* no stored heap or minimal tuple to hand out: callers copy one */
	.get_heap_tuple = NULL,
	.get_minimal_tuple = NULL,
	.copy_heap_tuple = wcslot_copy_heap_tuple,
	.copy_minimal_tuple = wcslot_copy_minimal_tuple,
};

/*
 * Put a reference to a version into a widecol slot: valid until the read's
 * next row (or a materialize).  Key columns come from `dec`.
 */
void
wc_slot_store_version(TupleTableSlot *slot, WcTableInfo *info, WcRowHeader *row,
					  ItemPointer tid, Oid relid, WcKeyDecoder *dec)
{
	WcSlot	   *ws = (WcSlot *) slot;

	Assert(slot->tts_ops == &WcSlotOps);
	if (TTS_SHOULDFREE(slot))
		ExecClearTuple(slot);	/* frees its copy; else nothing to free */
	ws->row = row;
	ws->info = WcTableIsKeyless(info) ? NULL : info;
	ws->dec = dec;
	ws->off = 0;
	ws->off_valid = true;
	ws->cols_tried = false;
	ws->cols = NULL;
	ws->pk_done = ws->ck_done = false;
	slot->tts_flags &= ~TTS_FLAG_EMPTY;
	slot->tts_nvalid = 0;
	slot->tts_tid = *tid;
	slot->tts_tableOid = relid;
}
