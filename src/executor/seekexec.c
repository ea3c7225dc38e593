/*
 * seekexec.c — executing a WidecolSeek (planned by seekplan.c): one merge
 * iterator per partition, merged lazily in clustering order with a binary
 * heap, skipping runs by key range and bloom filter and blocks by the run
 * index; EXPLAIN shows what was read and skipped.
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "lib/binaryheap.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/clauses.h"
#include "parser/parsetree.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"
#include "utils/ruleutils.h"
#include "utils/snapmgr.h"
#include "utils/typcache.h"

#include "widecol.h"
#include "access/access.h"
#include "executor/seek.h"
#include "storage/keyenc.h"
#include "storage/manifest.h"
#include "storage/merge.h"
#include "storage/metapage.h"
#include "storage/row.h"
#include "storage/tableinfo.h"

static CustomExecMethods seek_exec_methods;

typedef struct Partition
{
	WcMergeIter *iter;
	WcRowHeader *cur;
	ItemPointerData tid;
} Partition;

typedef struct SeekState
{
	CustomScanState css;
	List	   *kinds;			/* (col, kind) pairs */
	bool		backward;		/* clustering order reversed */
	List	   *exprstates;
	bool		started;
	bool		empty;
	int			nparts;
	Partition  *parts;
	binaryheap *heap;			/* partitions by clustering suffix */
	Partition  *pending;
	WcMergeStats stats;
	int			total_parts;
	WcKeyDecoder keys;			/* decoded key values of the current row */
	MemoryContext mcxt;			/* what a seek allocates (bounds, the manifest all
								 * partitions share, their merges): reset when
								 * the scan is rescanned, once per outer row */
} SeekState;

Node *
wc_seek_create_state(CustomScan *cscan)
{
	SeekState  *s = (SeekState *) newNode(sizeof(SeekState), T_CustomScanState);

	s->css.methods = &seek_exec_methods;
	s->kinds = linitial(cscan->custom_private);
	s->backward = linitial_int((List *) lsecond(cscan->custom_private)) != 0;
	return (Node *) s;
}

static void
seek_begin(CustomScanState *node, EState *estate, int eflags)
{
	SeekState  *s = (SeekState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

	s->exprstates = ExecInitExprList(cscan->custom_exprs, &node->ss.ps);
	wc_key_decoder_init(&s->keys, CurrentMemoryContext);
	s->mcxt = AllocSetContextCreate(CurrentMemoryContext, "widecol seek",
									ALLOCSET_DEFAULT_SIZES);
}

static int
suffix_cmp(Datum a, Datum b, void *arg)
{
	Partition  *pa = (Partition *) DatumGetPointer(a);
	Partition  *pb = (Partition *) DatumGetPointer(b);
	WcRowHeader *ra = pa->cur;
	WcRowHeader *rb = pb->cur;

	int			c = wc_compare_keys(WcRowKey(ra) + ra->pklen, ra->keylen - ra->pklen,
									WcRowKey(rb) + rb->pklen, rb->keylen - rb->pklen);

	/* max-heap: the smallest clustering suffix first (backward: largest) */
	return *(bool *) arg ? c : -c;
}

static int
bytes_cmp(const ListCell *a, const ListCell *b)
{
	StringInfo	x = lfirst(a);
	StringInfo	y = lfirst(b);

	return wc_compare_keys(x->data, x->len, y->data, y->len);
}

/* Encoded values of one partition column, sorted and without duplicates. */
static List *
column_values(SeekState *s, WcKeyColumn *col, BoundKind kind, Datum v, Datum v2,
			  bool *empty)
{
	List	   *vals = NIL;
	List	   *uniq = NIL;
	ListCell   *lc;

	if (kind == BK_EQ)
	{
		StringInfo	e = makeStringInfo();

		wc_encode_column(e, col, v);
		return list_make1(e);
	}
	if (kind == BK_IN)
	{
		ArrayType  *arr = DatumGetArrayTypeP(v);
		int16		elmlen;
		bool		elmbyval;
		char		elmalign;
		Datum	   *elems;
		bool	   *nulls;
		int			n;

		get_typlenbyvalalign(ARR_ELEMTYPE(arr), &elmlen, &elmbyval, &elmalign);
		deconstruct_array(arr, ARR_ELEMTYPE(arr), elmlen, elmbyval, elmalign,
						  &elems, &nulls, &n);
		for (int i = 0; i < n; i++)
		{
			StringInfo	e;

			if (nulls[i])
				continue;
			e = makeStringInfo();
			wc_encode_column(e, col, elems[i]);
			vals = lappend(vals, e);
		}
	}
	else
	{
		/* a closed range over a date or integer bucket column: v..v2 */
		int64		lo,
					hi;

		if (col->typid == DATEOID)
		{
			lo = DatumGetDateADT(v);
			hi = DatumGetDateADT(v2);
		}
		else if (col->typid == INT2OID)
		{
			lo = DatumGetInt16(v);
			hi = DatumGetInt16(v2);
		}
		else if (col->typid == INT4OID)
		{
			lo = DatumGetInt32(v);
			hi = DatumGetInt32(v2);
		}
		else
		{
			lo = DatumGetInt64(v);
			hi = DatumGetInt64(v2);
		}
		if (kind == BK_GT)
			lo++;				/* kind carries the lower bound's strictness */
		if (hi - lo + 1 > WC_MAX_SEEK_PARTITIONS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a widecol seek over %lld buckets is too large", (long long) (hi - lo + 1)),
					 errhint("Narrow the range of the bucket column (at most %d partitions per seek).",
							 WC_MAX_SEEK_PARTITIONS)));
		for (int64 x = lo; x <= hi; x++)
		{
			StringInfo	e = makeStringInfo();
			Datum		d = col->typid == DATEOID ? DateADTGetDatum((DateADT) x) :
				col->typid == INT2OID ? Int16GetDatum((int16) x) :
				col->typid == INT4OID ? Int32GetDatum((int32) x) : Int64GetDatum(x);

			wc_encode_column(e, col, d);
			vals = lappend(vals, e);
		}
	}
	list_sort(vals, bytes_cmp);
	foreach(lc, vals)
	{
		StringInfo	e = lfirst(lc);

		if (uniq == NIL || bytes_cmp(list_last_cell(uniq), lc) != 0)
			uniq = lappend(uniq, e);
	}
	if (uniq == NIL)
		*empty = true;
	return uniq;
}

static void
seek_start(SeekState *s)
{
	Relation	rel = s->css.ss.ss_currentRelation;
	WcTableInfo *info = wc_table_info(rel);
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	EState	   *estate = s->css.ss.ps.state;
	List	   *prefixes = list_make1(makeStringInfo());
	StringInfoData lower,
				upper;
	bool		have_lower = false,
				have_upper = false;
	ListCell   *lk,
			   *le;
	int			i = 0;
	int			nbounds = list_length(s->exprstates);
	Datum	   *vals = palloc(sizeof(Datum) * Max(nbounds, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(nbounds, 1));
	int		   *cols = palloc(sizeof(int) * Max(nbounds, 1));
	BoundKind  *kinds = palloc(sizeof(BoundKind) * Max(nbounds, 1));
	WcMetaData	meta;
	WcManifest *manifest;
	Snapshot	snapshot;

	s->started = true;
	lk = list_head(s->kinds);
	foreach(le, s->exprstates)
	{
		cols[i] = lfirst_int(lk);
		lk = lnext(s->kinds, lk);
		kinds[i] = lfirst_int(lk);
		lk = lnext(s->kinds, lk);
		vals[i] = ExecEvalExprSwitchContext(lfirst(le), econtext, &nulls[i]);
		if (nulls[i])
		{
			s->empty = true;	/* col = NULL, col < NULL ...: no row */
			return;
		}
		i++;
	}

	initStringInfo(&lower);
	initStringInfo(&upper);
	for (i = 0; i < nbounds; i++)
	{
		WcKeyColumn *col = &info->cols[cols[i]];
		List	   *colvals;
		List	   *next = NIL;
		ListCell   *lp,
				   *lv;

		if (col->partition || kinds[i] == BK_EQ)
		{
			if (col->partition && (kinds[i] != BK_EQ && kinds[i] != BK_IN))
			{
				/* bucket range: this bound is the lower, the next the upper */
				colvals = column_values(s, col, kinds[i], vals[i], vals[i + 1], &s->empty);
				if (kinds[i + 1] == BK_LT)
					colvals = list_truncate(colvals, Max(list_length(colvals) - 1, 0));
				i++;
			}
			else
				colvals = column_values(s, col, kinds[i], vals[i], 0, &s->empty);
			if (s->empty || colvals == NIL)
			{
				s->empty = true;
				return;
			}
			if ((int64) list_length(prefixes) * list_length(colvals) > WC_MAX_SEEK_PARTITIONS)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("a widecol seek over more than %d partitions is too large",
								WC_MAX_SEEK_PARTITIONS),
						 errhint("Use fewer values in the IN lists on the partition key.")));
			foreach(lp, prefixes)
				foreach(lv, colvals)
			{
				StringInfo	p = makeStringInfo();

				appendBinaryStringInfo(p, ((StringInfo) lfirst(lp))->data,
									   ((StringInfo) lfirst(lp))->len);
				appendBinaryStringInfo(p, ((StringInfo) lfirst(lv))->data,
									   ((StringInfo) lfirst(lv))->len);
				/* cursor holds the partition key's length (for the bloom filter) */
				p->cursor = col->partition ? p->len : ((StringInfo) lfirst(lp))->cursor;
				next = lappend(next, p);
			}
			prefixes = next;
			continue;
		}
		/* a range bound on the first clustering column without equality */
		if (kinds[i] == BK_GE || kinds[i] == BK_GT)
		{
			wc_encode_column(col->desc ? &upper : &lower, col, vals[i]);
			col->desc ? (have_upper = true) : (have_lower = true);
		}
		else
		{
			wc_encode_column(col->desc ? &lower : &upper, col, vals[i]);
			col->desc ? (have_lower = true) : (have_upper = true);
		}
	}

	/* one merge iterator per partition, over one reading of the manifest */
	snapshot = wc_snapshot_for_read(rel, estate->es_snapshot, CurrentMemoryContext);
	wc_merge_read_manifest(rel, snapshot, &meta, &manifest);
	s->nparts = list_length(prefixes);
	s->total_parts = s->nparts;
	s->parts = palloc0(sizeof(Partition) * s->nparts);
	s->heap = binaryheap_allocate(s->nparts, suffix_cmp, &s->backward);
	i = 0;
	foreach(le, prefixes)
	{
		StringInfo	p = lfirst(le);
		StringInfoData lo,
					hi;
		Partition  *part = &s->parts[i++];
		WcMergeRange range = {0};

		initStringInfo(&lo);
		initStringInfo(&hi);
		appendBinaryStringInfo(&lo, p->data, p->len);
		appendBinaryStringInfo(&hi, p->data, p->len);
		if (have_lower)
			appendBinaryStringInfo(&lo, lower.data, lower.len);
		if (have_upper)
			appendBinaryStringInfo(&hi, upper.data, upper.len);
		range.lo = lo.data;
		range.lolen = lo.len;
		range.hi = hi.data;
		range.hilen = hi.len;
		range.bloom_pklen = p->cursor;
		range.backward = s->backward;
		part->iter = wc_merge_begin_with(rel, snapshot, &meta, manifest, &range);
		wc_merge_set_stats(part->iter, &s->stats);
		part->cur = wc_merge_next(part->iter, &part->tid);
		if (part->cur)
			binaryheap_add_unordered(s->heap, PointerGetDatum(part));
	}
	binaryheap_build(s->heap);
}

static TupleTableSlot *
seek_next(ScanState *ss)
{
	SeekState  *s = (SeekState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	Partition  *part;

	if (!s->started)
	{
		/* all of it goes when the scan is closed or rescanned */
		MemoryContext old = MemoryContextSwitchTo(s->mcxt);

		seek_start(s);
		MemoryContextSwitchTo(old);
	}
	if (s->empty)
		return ExecClearTuple(slot);
	if (s->pending)
	{
		s->pending->cur = wc_merge_next(s->pending->iter, &s->pending->tid);
		if (s->pending->cur)
			binaryheap_add(s->heap, PointerGetDatum(s->pending));
		s->pending = NULL;
	}
	if (binaryheap_empty(s->heap))
		return ExecClearTuple(slot);
	part = (Partition *) DatumGetPointer(binaryheap_remove_first(s->heap));
	s->pending = part;
	wc_store_row_ref(slot, ss->ss_currentRelation, part->cur, &part->tid, &s->keys);
	return slot;
}

/*
 * Called for EvalPlanQual's test tuple.  The quals are rechecked on every
 * row anyway; but in PostgreSQL 15 a custom scan's expressions are compiled
 * for a virtual scan slot, while the test tuple arrives in our minimal-tuple
 * slot: deform it so that the compiled expressions find its values.
 */
static bool
seek_recheck(ScanState *ss, TupleTableSlot *slot)
{
	slot_getallattrs(slot);
	return true;
}

static TupleTableSlot *
seek_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, seek_next, seek_recheck);
}

static void
seek_close(SeekState *s)
{
	for (int i = 0; i < s->nparts; i++)
		if (s->parts[i].iter)
			wc_merge_end(s->parts[i].iter);
	MemoryContextReset(s->mcxt);
	s->nparts = 0;
	s->parts = NULL;
	s->pending = NULL;
	s->started = false;
	s->empty = false;
}

static void
seek_end(CustomScanState *node)
{
	seek_close((SeekState *) node);
}

static void
seek_rescan(CustomScanState *node)
{
	seek_close((SeekState *) node);
	ExecScanReScan(&node->ss);
}

static const char *
kind_op(BoundKind k)
{
	switch (k)
	{
		case BK_EQ:
			return "=";
		case BK_IN:
			return "= ANY";
		case BK_GE:
			return ">=";
		case BK_GT:
			return ">";
		case BK_LE:
			return "<=";
		case BK_LT:
			return "<";
	}
	return "?";
}

static void
seek_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	SeekState  *s = (SeekState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Relation	rel = node->ss.ss_currentRelation;
	WcTableInfo *info = wc_table_info(rel);
	List	   *dpcontext = set_deparse_context_plan(es->deparse_cxt, (Plan *) cscan, ancestors);
	StringInfoData pk,
				ck;
	ListCell   *lk = list_head(s->kinds),
			   *le;

	initStringInfo(&pk);
	initStringInfo(&ck);
	foreach(le, cscan->custom_exprs)
	{
		int			col = lfirst_int(lk);
		BoundKind	kind;
		StringInfo	out;
		const char *colname;

		lk = lnext(s->kinds, lk);
		kind = lfirst_int(lk);
		lk = lnext(s->kinds, lk);
		out = info->cols[col].partition ? &pk : &ck;
		colname = NameStr(TupleDescAttr(RelationGetDescr(rel), info->cols[col].attnum - 1)->attname);
		if (out->len > 0)
			appendStringInfoString(out, " AND ");
		appendStringInfo(out, "%s %s %s", quote_identifier(colname), kind_op(kind),
						 deparse_expression(lfirst(le), dpcontext, false, false));
	}
	ExplainPropertyText("Partition Key", pk.data, es);
	if (ck.len > 0)
		ExplainPropertyText("Clustering Bounds", ck.data, es);
	if (s->backward)
		ExplainPropertyText("Direction", "Backward", es);
	if (es->analyze)
	{
		int64		blocks = s->stats.blocks_read;
		int64		values = s->stats.value_pages_read;

		for (int i = 0; i < s->nparts; i++)
			if (s->parts[i].iter)
				blocks += wc_merge_live_blocks(s->parts[i].iter, &values);
		ExplainPropertyInteger("Partitions Read", NULL, s->total_parts, es);
		ExplainPropertyInteger("Runs Considered", NULL, s->stats.runs_considered, es);
		ExplainPropertyInteger("Runs Skipped by Key Range", NULL, s->stats.runs_skipped_range, es);
		ExplainPropertyInteger("Runs Skipped by Bloom Filter", NULL, s->stats.runs_skipped_bloom, es);
		ExplainPropertyInteger("Key Pages Read", NULL, blocks, es);
		ExplainPropertyInteger("Value Pages Read", NULL, values, es);
		ExplainPropertyInteger("Level 0 Versions", NULL, s->stats.l0_versions, es);
		ExplainPropertyInteger("Versions Merged", NULL, s->stats.versions, es);
		ExplainPropertyInteger("Tombstones Skipped", NULL, s->stats.tombstones, es);
		ExplainPropertyInteger("Expired Skipped", NULL, s->stats.expired, es);
	}
}

static CustomExecMethods seek_exec_methods = {
	.CustomName = "WidecolSeek",
	.BeginCustomScan = seek_begin,
	.ExecCustomScan = seek_exec,
	.EndCustomScan = seek_end,
	.ReScanCustomScan = seek_rescan,
	.ExplainCustomScan = seek_explain,
};
