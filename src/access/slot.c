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
 * for.
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
#include "storage/keyenc.h"
#include "storage/row.h"
#include "storage/tableinfo.h"

typedef struct WcSlot
{
	TupleTableSlot base;
	WcRowHeader *row;			/* the version, or NULL (virtual contents) */
	WcTableInfo *info;
	WcKeyDecoder *dec;
	uint32		off;			/* deform state: data offset of column tts_nvalid */
	bool		pk_done;		/* keyvals hold the partition columns */
	bool		ck_done;		/* ... and the clustering columns */
	Datum		keyvals[WC_MAX_KEY_COLUMNS];
	char	   *data;			/* owned copy of by-reference values */
	Bitmapset  *unused;			/* key columns no expression reads (see below) */
} WcSlot;

static void
wcslot_init(TupleTableSlot *slot)
{
	WcSlot	   *ws = (WcSlot *) slot;

	ws->row = NULL;
	ws->data = NULL;
	ws->unused = NULL;
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
	slot->tts_nvalid = 0;
	slot->tts_flags |= TTS_FLAG_EMPTY;
	ItemPointerSetInvalid(&slot->tts_tid);
}

/* Deform stored columns [tts_nvalid, upto) of the version's tuple. */
static void
deform_stored(WcSlot *ws, int upto)
{
	TupleTableSlot *slot = &ws->base;
	TupleDesc	desc = slot->tts_tupleDescriptor;
	HeapTupleHeader tup = (HeapTupleHeader) ((char *) WcRowTuple(ws->row) - MINIMAL_TUPLE_OFFSET);
	int			stored = HeapTupleHeaderGetNatts(tup);
	bool		hasnulls = (tup->t_infomask & HEAP_HASNULL) != 0;
	char	   *tp = (char *) tup + tup->t_hoff;
	uint32		off = ws->off;
	int			attnum = slot->tts_nvalid;

	for (; attnum < Min(upto, stored); attnum++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, attnum);

		if (hasnulls && att_isnull(attnum, tup->t_bits))
		{
			slot->tts_values[attnum] = (Datum) 0;
			slot->tts_isnull[attnum] = true;
			continue;
		}
		slot->tts_isnull[attnum] = false;
		if (att->attlen == -1)
			off = att_align_pointer(off, att->attalign, -1, tp + off);
		else
			off = att_align_nominal(off, att->attalign);
		slot->tts_values[attnum] = fetchatt(att, tp + off);
		off = att_addlength_pointer(off, att->attlen, tp + off);
	}
	/* columns added after the version was written */
	for (; attnum < upto; attnum++)
		slot->tts_values[attnum] = getmissingattr(desc, attnum + 1, &slot->tts_isnull[attnum]);
	ws->off = off;
}

static void
wcslot_getsomeattrs(TupleTableSlot *slot, int natts)
{
	WcSlot	   *ws = (WcSlot *) slot;
	WcTableInfo *info = ws->info;
	int			from = slot->tts_nvalid;

	if (ws->row == NULL)
		elog(ERROR, "widecol: slot has no version to deform");

	/*
	 * Key columns are NULL in the stored tuple (they take no bytes there), so
	 * asking only for them leaves the tuple untouched: a run's value page is
	 * then never read (see WcRowTuple).
	 */
	if (info == NULL || natts > info->key_prefix)
		deform_stored(ws, natts);

	/* key columns among [from, natts): the tuple has NULLs there */
	for (int i = 0; info && i < info->npk + info->nck; i++)
	{
		int			a = info->cols[i].attnum - 1;

		if (a < from || a >= natts)
			continue;
		if (ws->unused && bms_is_member(a, ws->unused))
		{
			/* asked for only as part of the prefix: not decoded */
			slot->tts_values[a] = (Datum) 0;
			slot->tts_isnull[a] = true;
			continue;
		}
		if (i < info->npk ? !ws->pk_done : !ws->ck_done)
		{
			wc_key_decode_cols(ws->dec, info, WcRowKey(ws->row), ws->row->keylen,
							   ws->row->pklen, i >= info->npk, ws->keyvals);
			ws->pk_done = true;
			ws->ck_done |= i >= info->npk;
		}
		slot->tts_values[a] = ws->keyvals[i];
		slot->tts_isnull[a] = false;
	}
	slot->tts_nvalid = natts;
}

/*
 * The columns (0-based) of the scanned relation that a scan node's target
 * list and quals read; *all when they read a whole row or another
 * relation's column.
 */
static Bitmapset *
scan_used_columns(PlanState *ps, Index scanrelid, bool *all)
{
	Bitmapset  *used = NULL;
	List	   *vars = pull_var_clause((Node *) list_make2(ps->plan->targetlist, ps->plan->qual),
									   PVC_RECURSE_AGGREGATES | PVC_RECURSE_WINDOWFUNCS |
									   PVC_RECURSE_PLACEHOLDERS);
	ListCell   *lc;

	*all = false;
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
	{
		bool		key = false;

		for (int i = 0; i < info->npk + info->nck; i++)
			key |= info->cols[i].attnum - 1 == a;
		if (!key)
			return false;
	}
	return true;
}

/*
 * A scan node that projects hands its scan slot to no one: only its quals
 * and target list read it, so key columns they do not name need not be
 * decoded (getsomeattrs always asks for a prefix of the columns: a report
 * on day_bucket and width would decode capture_time and image_id too).
 * Called for every plan at executor start; marks the scan slots of
 * projecting sequential scans and seeks of widecol tables.
 */
static bool
mark_unused_columns(PlanState *ps, void *context)
{
	if (ps == NULL)
		return false;
	if ((IsA(ps, SeqScanState) ||
		 (IsA(ps, CustomScanState) &&
		  strcmp(((CustomScanState *) ps)->methods->CustomName, "WidecolSeek") == 0)) &&
		ps->ps_ProjInfo != NULL)
	{
		ScanState  *ss = (ScanState *) ps;
		TupleTableSlot *slot = ss->ss_ScanTupleSlot;
		Index		scanrelid = ((Scan *) ps->plan)->scanrelid;

		if (slot && slot->tts_ops == &WcSlotOps && scanrelid > 0 && ss->ss_currentRelation)
		{
			WcTableInfo *info = wc_table_info(ss->ss_currentRelation);
			bool		all;
			Bitmapset  *used = scan_used_columns(ps, scanrelid, &all);
			Bitmapset  *unused = NULL;

			for (int i = 0; !all && i < info->npk + info->nck; i++)
				if (!bms_is_member(info->cols[i].attnum - 1, used))
					unused = bms_add_member(unused, info->cols[i].attnum - 1);
			((WcSlot *) slot)->unused = all ? NULL : unused;
		}
	}
	return planstate_tree_walker(ps, mark_unused_columns, context);
}

void
wc_slot_mark_unused_columns(PlanState *top)
{
	mark_unused_columns(top, NULL);
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
	ExecClearTuple(slot);
	ws->row = row;
	ws->info = WcTableIsKeyless(info) ? NULL : info;
	ws->dec = dec;
	ws->off = 0;
	ws->pk_done = ws->ck_done = false;
	slot->tts_flags &= ~TTS_FLAG_EMPTY;
	slot->tts_nvalid = 0;
	slot->tts_tid = *tid;
	slot->tts_tableOid = relid;
}
