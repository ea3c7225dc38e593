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
#include "pgstat.h"
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

/* A bound of the plan, evaluated and converted to its column's type. */
typedef struct EvaluatedBound
{
	int			col;			/* index into WcTableInfo.cols */
	BoundKind	kind;
	bool		rowpart;		/* a further column of a row comparison */
	bool		skip;			/* narrows nothing: left to the recheck */
	Datum		value;
} EvaluatedBound;

typedef struct Partition
{
	WcMergeRange range;			/* the keys to read */
	WcMergeIter *iter;			/* NULL until opened, and once done */
	WcRowHeader *cur;
	/*
	 * Not read yet (cur NULL): its first row is at or after (backward: at or
	 * below, as a prefix) this key, which orders it in the heap until the
	 * merge gets there (wc_merge_peek_bound).
	 */
	bool		lazy;
	const char *bound;
	int			boundlen;
	ItemPointerData tid;
	/* buffered: the partition's rows, read by one range read for all */
	WcRowHeader **rows;
	ItemPointerData *tids;
	int			nrows;
	int			rowcap;
	int			pos;
	bool		started;		/* unordered: its first row was returned */
} Partition;

typedef struct SeekState
{
	CustomScanState css;
	List	   *kinds;			/* (col, kind) pairs */
	List	   *types;			/* the type of each bound's value */
	bool		backward;		/* clustering order reversed */
	bool		ordered;		/* partitions merged in clustering order; else
								 * read one after another */
	bool		range_delete;	/* a DELETE's scan: write range tombstones */
	bool		range_done;
	bool		buffered;		/* one range read for all the partitions */
	bool		keys_only;		/* the plan reads key columns only */
	bool	   *skip;			/* columns it does not read (NULL: keys_only) */
	int64		range_deleted;	/* rows they deleted */
	int			range_tombstones;	/* written */
	EvaluatedBound *bounds;		/* evaluated at the start */
	int			nbounds;
	List	   *exprstates;
	bool		started;
	bool		empty;
	int			nparts;
	Partition  *parts;
	binaryheap *heap;			/* partitions by clustering suffix */
	Partition  *pending;
	int			next_part;		/* unordered: the partition being read */
	Snapshot	snapshot;		/* what every partition's read shares */
	WcMetaData	meta;
	WcManifest *manifest;
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
	s->ordered = lsecond_int((List *) lsecond(cscan->custom_private)) != 0;
	s->range_delete = list_length((List *) lsecond(cscan->custom_private)) > 3 &&
		lfourth_int((List *) lsecond(cscan->custom_private)) != 0;
	s->buffered = list_length((List *) lsecond(cscan->custom_private)) > 4 &&
		list_nth_int((List *) lsecond(cscan->custom_private), 4) != 0;
	s->types = lthird(cscan->custom_private);
	return (Node *) s;
}

static void
seek_begin(CustomScanState *node, EState *estate, int eflags)
{
	SeekState  *s = (SeekState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

	s->exprstates = ExecInitExprList(cscan->custom_exprs, &node->ss.ps);
	s->keys_only = wc_scan_reads_keys_only(&node->ss);
	/*
	 * Rows from value pages in column layout are read by column even when
	 * every column is wanted: decoding a page's columns for one row costs
	 * less than putting all its tuples back together.
	 */
	s->skip = s->keys_only ? NULL : wc_scan_unread_columns(&node->ss);
	wc_key_decoder_init(&s->keys, CurrentMemoryContext);
	s->mcxt = AllocSetContextCreate(CurrentMemoryContext, "widecol seek",
									ALLOCSET_DEFAULT_SIZES);
}

/*
 * Order of two partitions' clustering suffixes, a lazy partition's bound
 * standing for its first row: forward it comes before a row of the same
 * key; backward it stands for its prefix followed by bytes above any.
 */
static int
part_cmp(const Partition *pa, const Partition *pb, bool backward)
{
	const char *ka = pa->lazy ? pa->bound : WcRowKey(pa->cur);
	const char *kb = pb->lazy ? pb->bound : WcRowKey(pb->cur);
	int			la = pa->lazy ? pa->boundlen : pa->cur->keylen;
	int			lb = pb->lazy ? pb->boundlen : pb->cur->keylen;
	int			pka = pa->range.bloom_pklen;
	int			pkb = pb->range.bloom_pklen;
	int			c;

	if (!pa->lazy)
		pka = pa->cur->pklen;
	if (!pb->lazy)
		pkb = pb->cur->pklen;
	if (!backward)
	{
		c = wc_compare_keys(ka + pka, la - pka, kb + pkb, lb - pkb);
		return c != 0 ? c : (int) pb->lazy - (int) pa->lazy;
	}
	c = memcmp(ka + pka, kb + pkb, Min(la - pka, lb - pkb));
	if (c != 0)
		return c;
	if (pa->lazy && pb->lazy)
		return (la - pka < lb - pkb) - (la - pka > lb - pkb);
	if (pa->lazy || pb->lazy)
		return pa->lazy ? 1 : -1;
	return (la - pka > lb - pkb) - (la - pka < lb - pkb);
}

static int
suffix_cmp(Datum a, Datum b, void *arg)
{
	bool		backward = *(bool *) arg;
	int			c = part_cmp((Partition *) DatumGetPointer(a),
							 (Partition *) DatumGetPointer(b), backward);

	/* max-heap: the smallest clustering suffix first (backward: largest) */
	return backward ? c : -c;
}

static int
bytes_cmp(const ListCell *a, const ListCell *b)
{
	StringInfo	x = lfirst(a);
	StringInfo	y = lfirst(b);

	return wc_compare_keys(x->data, x->len, y->data, y->len);
}

/* What a bound's value, converted to its column's type, does to the seek. */
typedef enum BoundEffect
{
	BV_BOUND,					/* *out bounds the column */
	BV_NONE,					/* no row is outside it: no bound */
	BV_EMPTY					/* no row is inside it */
} BoundEffect;


/* What every read of one seek shares: one snapshot, one manifest. */
typedef struct WcSeekRead
{
	Snapshot	snapshot;
	const WcMetaData *meta;
	WcManifest *manifest;
} WcSeekRead;

/* A closed bucket range longer than this reads the buckets that exist. */
#define WC_MAX_ENUMERATED_BUCKETS 400

static int64
integer_value(Oid typid, Datum v)
{
	return typid == INT2OID ? DatumGetInt16(v) : typid == INT4OID ? DatumGetInt32(v) : DatumGetInt64(v);
}

static Datum
integer_datum(Oid typid, int64 x)
{
	return typid == INT2OID ? Int16GetDatum((int16) x) :
		typid == INT4OID ? Int32GetDatum((int32) x) : Int64GetDatum(x);
}

/*
 * A bound's value (of type `type`) as a value of the column's type.  Across
 * integer types the conversion is exact, and a value outside the column's
 * range makes the bound empty or no bound at all.  Across datetime types it
 * is the conversion the cross-type operators make (a timestamp to a date
 * rounds down, so a strict bound becomes inclusive: *kind may change); the
 * planner keeps such clauses for a recheck.
 */
static BoundEffect
bound_value(WcKeyColumn *col, Oid type, BoundKind *kind, Datum v, Datum *out)
{
	Oid			ct = col->typid;

	*out = v;
	if (type == ct || !OidIsValid(type) || type == TEXTOID || type == VARCHAROID)
		return BV_BOUND;
	if (ct == INT2OID || ct == INT4OID || ct == INT8OID)
	{
		int64		x = integer_value(type, v);
		int64		min = ct == INT2OID ? PG_INT16_MIN : ct == INT4OID ? PG_INT32_MIN : PG_INT64_MIN;
		int64		max = ct == INT2OID ? PG_INT16_MAX : ct == INT4OID ? PG_INT32_MAX : PG_INT64_MAX;

		if (x < min)
			return (*kind == BK_GE || *kind == BK_GT) ? BV_NONE : BV_EMPTY;
		if (x > max)
			return (*kind == BK_LE || *kind == BK_LT) ? BV_NONE : BV_EMPTY;
		*out = integer_datum(ct, x);
		return BV_BOUND;
	}
	if (ct == DATEOID)
	{
		*out = DirectFunctionCall1(type == TIMESTAMPOID ? timestamp_date : timestamptz_date, v);
		if (*kind == BK_LT)
			*kind = BK_LE;
		else if (*kind == BK_GT)
			*kind = BK_GE;
	}
	else if (ct == TIMESTAMPOID)
		*out = DirectFunctionCall1(type == DATEOID ? date_timestamp : timestamptz_timestamp, v);
	else
		*out = DirectFunctionCall1(type == DATEOID ? date_timestamptz : timestamp_timestamptz, v);
	return BV_BOUND;
}

/* A bucket column's value as an integer (days for a date), and back. */
static int64
bucket_int(Oid typid, Datum v)
{
	return typid == DATEOID ? DatumGetDateADT(v) : integer_value(typid, v);
}

static Datum
bucket_datum(Oid typid, int64 x)
{
	return typid == DATEOID ? DateADTGetDatum((DateADT) x) : integer_datum(typid, x);
}

static void
bucket_limits(Oid typid, int64 *min, int64 *max)
{
	*min = typid == INT2OID ? PG_INT16_MIN : typid == INT8OID ? PG_INT64_MIN : PG_INT32_MIN;
	*max = typid == INT2OID ? PG_INT16_MAX : typid == INT8OID ? PG_INT64_MAX : PG_INT32_MAX;
}

static StringInfo
encoded(const WcKeyColumn *col, Datum v)
{
	StringInfo	e = makeStringInfo();

	wc_encode_column(e, col, v);
	return e;
}

/* Encoded values of an EQ or IN bound on a partition column, sorted, unique. */
static List *
column_values(WcKeyColumn *col, BoundKind kind, Datum v)
{
	List	   *vals = NIL;
	List	   *uniq = NIL;
	ListCell   *lc;
	ArrayType  *arr;
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	if (kind == BK_EQ)
		return list_make1(encoded(col, v));
	arr = DatumGetArrayTypeP(v);
	get_typlenbyvalalign(ARR_ELEMTYPE(arr), &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, ARR_ELEMTYPE(arr), elmlen, elmbyval, elmalign,
					  &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
	{
		BoundKind	eq = BK_EQ;
		Datum		d;

		if (!nulls[i] && bound_value(col, ARR_ELEMTYPE(arr), &eq, elems[i], &d) == BV_BOUND)
			vals = lappend(vals, encoded(col, d));
	}
	list_sort(vals, bytes_cmp);
	foreach(lc, vals)
	{
		if (uniq == NIL || bytes_cmp(list_last_cell(uniq), lc) != 0)
			uniq = lappend(uniq, lfirst(lc));
	}
	return uniq;
}

/*
 * The bucket values of a range over the last partition column that hold
 * rows under `prefix`: one probe per bucket found, each a read of the key
 * range from the bucket after the last one found that stops at its first
 * visible row.  An open end is thus bounded by the buckets that exist.
 */
static List *
existing_buckets(SeekState *s, WcKeyColumn *col, int64 lo, int64 hi,
				 StringInfo prefix, const WcSeekRead *rd)
{
	Relation	rel = s->css.ss.ss_currentRelation;
	WcTableInfo *info = wc_table_info(rel);
	int			natts = RelationGetDescr(rel)->natts;
	Datum	   *values = palloc(sizeof(Datum) * natts);
	bool	   *isnull = palloc(sizeof(bool) * natts);
	List	   *vals = NIL;
	int64		next = lo;

	while (next <= hi)
	{
		StringInfoData from,
					to;
		WcMergeRange range = {0};
		WcMergeIter *it;
		WcRowHeader *row;
		ItemPointerData tid;
		int64		x;

		CHECK_FOR_INTERRUPTS();
		initStringInfo(&from);
		appendBinaryStringInfo(&from, prefix->data, prefix->len);
		wc_encode_column(&from, col, bucket_datum(col->typid, next));
		initStringInfo(&to);
		appendBinaryStringInfo(&to, prefix->data, prefix->len);
		wc_encode_column(&to, col, bucket_datum(col->typid, hi));
		range.lo = from.data;
		range.lolen = from.len;
		range.hi = to.data;
		range.hilen = to.len;
		it = wc_merge_begin_with(rel, rd->snapshot, rd->meta, rd->manifest, &range);
		wc_merge_set_stats(it, &s->stats);
		row = wc_merge_next(it, &tid);
		if (row)
		{
			wc_decode_key_into(info, WcRowKey(row), row->keylen, values, isnull);
			x = bucket_int(col->typid, values[col->attnum - 1]);
		}
		wc_merge_end(it);
		if (row == NULL)
			break;
		vals = lappend(vals, encoded(col, bucket_datum(col->typid, x)));
		if (list_length(vals) > WC_MAX_SEEK_PARTITIONS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a widecol seek over more than %d partitions is too large",
							WC_MAX_SEEK_PARTITIONS),
					 errhint("Narrow the range of the bucket column \"%s\".",
							 NameStr(TupleDescAttr(RelationGetDescr(rel), col->attnum - 1)->attname))));
		if (x >= hi)
			break;
		next = x + 1;
	}
	return vals;
}

/*
 * The buckets of a range over the last partition column: every value of a
 * short closed range (absent ones cost a bloom probe per run), else those
 * that exist.  NIL when none.
 */
static List *
bucket_values(SeekState *s, WcKeyColumn *col, const EvaluatedBound *lob,
			  const EvaluatedBound *hib, StringInfo prefix, const WcSeekRead *rd)
{
	int64		lo,
				hi;
	List	   *vals = NIL;

	bucket_limits(col->typid, &lo, &hi);
	if (lob)
		lo = bucket_int(col->typid, lob->value) + (lob->kind == BK_GT ? 1 : 0);
	if (hib)
		hi = bucket_int(col->typid, hib->value) - (hib->kind == BK_LT ? 1 : 0);
	if (lo > hi)
		return NIL;
	if (lob == NULL || hib == NULL || hi - lo >= WC_MAX_ENUMERATED_BUCKETS)
		return existing_buckets(s, col, lo, hi, prefix, rd);
	for (int64 x = lo; x <= hi; x++)
		vals = lappend(vals, encoded(col, bucket_datum(col->typid, x)));
	return vals;
}

/*
 * Evaluate the plan's bounds and convert each to its column's type; false
 * when they select no row.  A bound that cannot narrow the read (a value
 * beyond the column's type, a row bound after a column that stopped it)
 * is marked skip: the recheck alone applies it.
 */
static bool
evaluate_bounds(SeekState *s, WcTableInfo *info, EvaluatedBound *b)
{
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	ListCell   *lk = list_head(s->kinds);
	ListCell   *lt = list_head(s->types);
	ListCell   *le;
	int			i = 0;

	foreach(le, s->exprstates)
	{
		Oid			type = lfirst_oid(lt);
		bool		isnull;
		BoundEffect effect = BV_BOUND;

		lt = lnext(s->types, lt);
		b[i].col = lfirst_int(lk);
		lk = lnext(s->kinds, lk);
		b[i].rowpart = (lfirst_int(lk) & BK_ROW) != 0;
		b[i].kind = BoundKindOf(lfirst_int(lk));
		lk = lnext(s->kinds, lk);
		b[i].value = ExecEvalExprSwitchContext(lfirst(le), econtext, &isnull);
		/* a further column of a row bound that stopped: the rest go too */
		if (b[i].rowpart && b[i - 1].skip)
		{
			b[i++].skip = true;
			continue;
		}
		if (!isnull && b[i].kind != BK_IN)
			effect = bound_value(&info->cols[b[i].col], type, &b[i].kind, b[i].value, &b[i].value);
		if (b[i].rowpart && (isnull || effect != BV_BOUND))
			b[i].skip = true;	/* the row bound ends before this column */
		else if (isnull || effect == BV_EMPTY)
			return false;		/* col = NULL, col < NULL ...: no row */
		else if (effect == BV_NONE)
			b[i].skip = true;
		i++;
	}
	return true;
}

/*
 * The encoded partition keys to read: the cross product of each partition
 * column's values, in key order.  The cursor of each holds its length (the
 * bloom filter's key).  NIL when none.
 */
static List *
partition_prefixes(SeekState *s, WcTableInfo *info, EvaluatedBound *b, int nbounds,
				   const WcSeekRead *rd)
{
	List	   *prefixes = list_make1(makeStringInfo());

	for (int i = 0; i < nbounds && info->cols[b[i].col].partition; i++)
	{
		WcKeyColumn *col = &info->cols[b[i].col];
		List	   *next = NIL;
		ListCell   *lp,
				   *lv;

		foreach(lp, prefixes)
		{
			StringInfo	prefix = lfirst(lp);
			List	   *colvals;

			if (b[i].kind == BK_EQ || b[i].kind == BK_IN)
				colvals = column_values(col, b[i].kind, b[i].value);
			else
			{
				/* a bucket range: a lower bound, an upper one, or both */
				const EvaluatedBound *lob = NULL,
						   *hib = NULL;

				for (int j = i; j < nbounds && b[j].col == b[i].col; j++)
					if (!b[j].skip)
					{
						if (b[j].kind == BK_GE || b[j].kind == BK_GT)
							lob = &b[j];
						else
							hib = &b[j];
					}
				colvals = bucket_values(s, col, lob, hib, prefix, rd);
			}
			if ((int64) list_length(next) + list_length(colvals) > WC_MAX_SEEK_PARTITIONS)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("a widecol seek over more than %d partitions is too large",
								WC_MAX_SEEK_PARTITIONS),
						 errhint("Use fewer values in the IN lists on the partition key, or a narrower range.")));
			foreach(lv, colvals)
			{
				StringInfo	p = makeStringInfo();

				appendBinaryStringInfo(p, prefix->data, prefix->len);
				appendBinaryStringInfo(p, ((StringInfo) lfirst(lv))->data,
									   ((StringInfo) lfirst(lv))->len);
				p->cursor = p->len;
				next = lappend(next, p);
			}
		}
		prefixes = next;
		while (i + 1 < nbounds && b[i + 1].col == b[i].col)
			i++;				/* the range's other end */
	}
	return prefixes;
}

/*
 * The clustering range every partition is read over: EQ on a prefix, then
 * a range on the next column, with the further columns of a row bound
 * appended to the first one's encoding (the plan made them share its
 * direction).  A descending column swaps lower and upper.
 */
static void
clustering_range(WcTableInfo *info, EvaluatedBound *b, int nbounds,
				 StringInfo lower, StringInfo upper, bool *have_lower, bool *have_upper)
{
	StringInfoData eq;

	initStringInfo(&eq);
	*have_lower = *have_upper = false;
	for (int i = 0; i < nbounds; i++)
	{
		WcKeyColumn *col = &info->cols[b[i].col];

		if (col->partition || b[i].skip)
			continue;
		if (b[i].kind == BK_EQ)
			wc_encode_column(&eq, col, b[i].value);
		else if ((b[i].kind == BK_GE || b[i].kind == BK_GT) != col->desc)
		{
			wc_encode_column(lower, col, b[i].value);
			*have_lower = true;
		}
		else
		{
			wc_encode_column(upper, col, b[i].value);
			*have_upper = true;
		}
	}
	/* the equality prefix goes in front of both ends */
	if (eq.len > 0)
	{
		StringInfoData t;

		initStringInfo(&t);
		appendBinaryStringInfo(&t, eq.data, eq.len);
		appendBinaryStringInfo(&t, lower->data, lower->len);
		resetStringInfo(lower);
		appendBinaryStringInfo(lower, t.data, t.len);
		resetStringInfo(&t);
		appendBinaryStringInfo(&t, eq.data, eq.len);
		appendBinaryStringInfo(&t, upper->data, upper->len);
		resetStringInfo(upper);
		appendBinaryStringInfo(upper, t.data, t.len);
		*have_lower = *have_upper = true;
	}
}

/* The partition's current row into the scan slot (key columns only if they suffice). */
static void
store_row(SeekState *s, TupleTableSlot *slot, Partition *part)
{
	if (s->keys_only)
		wc_store_row_keys(slot, s->css.ss.ss_currentRelation, part->cur, &part->tid, &s->keys);
	else
		wc_store_row_columns(slot, s->css.ss.ss_currentRelation, part->cur, &part->tid,
							 &s->keys, s->skip);
}

/* The next row of a partition (part->cur: NULL at its end). */
static void
advance_partition(SeekState *s, Partition *part)
{
	if (part->rows == NULL)
	{
		part->cur = wc_merge_next(part->iter, &part->tid);
		return;
	}
	part->pos += s->backward ? -1 : 1;
	part->cur = part->pos >= 0 && part->pos < part->nrows ? part->rows[part->pos] : NULL;
	if (part->cur)
		part->tid = part->tids[part->pos];
}

static int
prefix_cmp(const void *a, const void *b)
{
	const Partition *pa = *(Partition *const *) a;
	const Partition *pb = *(Partition *const *) b;

	return wc_compare_keys(pa->range.lo, pa->range.bloom_pklen,
						   pb->range.lo, pb->range.bloom_pklen);
}

/* Give up buffering: every partition is read by a seek of its own. */
static void
drop_buffers(SeekState *s)
{
	for (int i = 0; i < s->nparts; i++)
	{
		Partition  *part = &s->parts[i];

		for (int r = 0; r < part->nrows; r++)
			pfree(part->rows[r]);
		if (part->rows)
			pfree(part->rows);
		if (part->tids)
			pfree(part->tids);
		part->rows = NULL;
		part->tids = NULL;
		part->nrows = part->rowcap = 0;
	}
}

/*
 * Buffered: one range read over the partitions' keys (buckets of one
 * prefix, so the rows between them are few: the plan chose this for small
 * partitions), each row copied to its partition's array.  The clustering
 * bounds are left to the recheck.  Should the partitions turn out larger
 * than the statistics said (more than work_mem), the buffers are dropped
 * and each partition is sought on its own.
 */
static void
read_buffered(SeekState *s)
{
	Partition **sorted = palloc(sizeof(Partition *) * s->nparts);
	WcMergeRange range = {0};
	WcMergeIter *it;
	WcRowHeader *row;
	ItemPointerData tid;
	Size		bytes = 0;
	int			j = 0;

	for (int i = 0; i < s->nparts; i++)
		sorted[i] = &s->parts[i];
	qsort(sorted, s->nparts, sizeof(Partition *), prefix_cmp);
	range.lo = sorted[0]->range.lo;
	range.lolen = sorted[0]->range.bloom_pklen;
	range.hi = sorted[s->nparts - 1]->range.lo;	/* as a prefix: the last partition whole */
	range.hilen = sorted[s->nparts - 1]->range.bloom_pklen;
	/* runs holding none of the partitions (bloom filters) are not read */
	range.nbloom_keys = s->nparts;
	range.bloom_keys = palloc(sizeof(char *) * s->nparts);
	range.bloom_keylens = palloc(sizeof(int) * s->nparts);
	for (int i = 0; i < s->nparts; i++)
	{
		range.bloom_keys[i] = (char *) sorted[i]->range.lo;
		range.bloom_keylens[i] = sorted[i]->range.bloom_pklen;
	}
	it = wc_merge_begin_with(s->css.ss.ss_currentRelation, s->snapshot, &s->meta,
							 s->manifest, &range);
	wc_merge_set_stats(it, &s->stats);
	while ((row = wc_merge_next(it, &tid)) != NULL)
	{
		Partition  *part;

		CHECK_FOR_INTERRUPTS();
		while (j < s->nparts &&
			   wc_compare_keys(WcRowKey(row), row->pklen,
							   sorted[j]->range.lo, sorted[j]->range.bloom_pklen) > 0)
			j++;
		if (j == s->nparts)
			break;
		part = sorted[j];
		if (row->pklen != part->range.bloom_pklen ||
			memcmp(WcRowKey(row), part->range.lo, row->pklen) != 0)
			continue;			/* not a partition of the seek */
		if (part->nrows == part->rowcap)
		{
			part->rowcap = Max(16, part->rowcap * 2);
			part->rows = part->rows ? repalloc(part->rows, sizeof(WcRowHeader *) * part->rowcap) :
				palloc(sizeof(WcRowHeader *) * part->rowcap);
			part->tids = part->tids ? repalloc(part->tids, sizeof(ItemPointerData) * part->rowcap) :
				palloc(sizeof(ItemPointerData) * part->rowcap);
		}
		part->rows[part->nrows] = s->keys_only ? wc_row_copy_key(row) :
			wc_row_copy_columns(s->css.ss.ss_currentRelation, row, s->skip);
		bytes += part->rows[part->nrows]->len +
			sizeof(WcRowHeader *) + sizeof(ItemPointerData);	/* what was copied */
		part->tids[part->nrows++] = tid;
		if (bytes > (Size) work_mem * 1024)
		{
			elog(DEBUG1, "widecol seek: partitions larger than planned, one seek each");
			wc_merge_end(it);
			drop_buffers(s);
			pfree(sorted);
			return;
		}
	}
	wc_merge_end(it);
	pfree(sorted);
	for (int i = 0; i < s->nparts; i++)
	{
		Partition  *part = &s->parts[i];

		if (part->rows == NULL)
			part->rows = palloc(sizeof(WcRowHeader *));		/* empty, but buffered */
		part->pos = s->backward ? part->nrows : -1;
		advance_partition(s, part);
	}
}

/*
 * Start reading a partition: its first row in part->cur, or, when a lazy
 * one will do (an ordered merge of partitions) and its merge knows a bound
 * without reading, that bound.
 */
static void
open_partition(SeekState *s, Partition *part, bool lazy_ok)
{
	part->iter = wc_merge_begin_with(s->css.ss.ss_currentRelation, s->snapshot, &s->meta,
									 s->manifest, &part->range);
	wc_merge_set_stats(part->iter, &s->stats);
	part->cur = NULL;
	part->lazy = lazy_ok && wc_merge_peek_bound(part->iter, &part->bound, &part->boundlen);
	if (!part->lazy)
		part->cur = wc_merge_next(part->iter, &part->tid);
}

/* Read the lazy partitions the merge of partitions has reached. */
static void
read_due_partitions(SeekState *s)
{
	while (!binaryheap_empty(s->heap))
	{
		Partition  *part = (Partition *) DatumGetPointer(binaryheap_first(s->heap));

		if (!part->lazy)
			return;
		(void) binaryheap_remove_first(s->heap);
		part->lazy = false;
		part->cur = wc_merge_next(part->iter, &part->tid);
		if (part->cur)
			binaryheap_add(s->heap, PointerGetDatum(part));
	}
}

static void
seek_start(SeekState *s)
{
	Relation	rel = s->css.ss.ss_currentRelation;
	WcTableInfo *info = wc_table_info(rel);
	int			nbounds = list_length(s->exprstates);
	EvaluatedBound *b = palloc0(sizeof(EvaluatedBound) * Max(nbounds, 1));
	StringInfoData lower,
				upper;
	bool		have_lower,
				have_upper;
	List	   *prefixes;
	ListCell   *lc;
	WcSeekRead	rd;
	int			i = 0;

	s->started = true;
	s->bounds = b;
	s->nbounds = nbounds;
	if (!evaluate_bounds(s, info, b))
	{
		s->empty = true;
		return;
	}

	/* one reading of the manifest for the probes and every partition */
	s->snapshot = rd.snapshot =
		wc_snapshot_for_read(rel, s->css.ss.ps.state->es_snapshot, CurrentMemoryContext);
	wc_merge_read_manifest(rel, rd.snapshot, &s->meta, &s->manifest);
	rd.meta = &s->meta;
	rd.manifest = s->manifest;
	prefixes = partition_prefixes(s, info, b, nbounds, &rd);
	if (prefixes == NIL)
	{
		s->empty = true;
		return;
	}
	initStringInfo(&lower);
	initStringInfo(&upper);
	clustering_range(info, b, nbounds, &lower, &upper, &have_lower, &have_upper);

	s->nparts = list_length(prefixes);
	s->total_parts = s->nparts;
	s->parts = palloc0(sizeof(Partition) * s->nparts);
	foreach(lc, prefixes)
	{
		StringInfo	p = lfirst(lc);
		StringInfoData lo,
					hi;
		Partition  *part = &s->parts[i++];

		initStringInfo(&lo);
		initStringInfo(&hi);
		appendBinaryStringInfo(&lo, p->data, p->len);
		appendBinaryStringInfo(&hi, p->data, p->len);
		if (have_lower)
			appendBinaryStringInfo(&lo, lower.data, lower.len);
		if (have_upper)
			appendBinaryStringInfo(&hi, upper.data, upper.len);
		part->range.lo = lo.data;
		part->range.lolen = lo.len;
		part->range.hi = hi.data;
		part->range.hilen = hi.len;
		part->range.bloom_pklen = p->cursor;
		part->range.backward = s->backward;
	}
	if (s->buffered && !s->range_delete && s->nparts > 1)
		read_buffered(s);
	if (!s->ordered || s->range_delete)
		return;					/* seek_next opens them one at a time */
	s->heap = binaryheap_allocate(s->nparts, suffix_cmp, &s->backward);
	for (i = 0; i < s->nparts; i++)
	{
		if (s->parts[i].rows == NULL)
			open_partition(s, &s->parts[i], true);
		if (s->parts[i].cur || s->parts[i].lazy)
			binaryheap_add_unordered(s->heap, PointerGetDatum(&s->parts[i]));
	}
	binaryheap_build(s->heap);
}

/*
 * The partitions one after another, when the plan needs no order across
 * them: one partition's readers (and their buffers) at a time, where a
 * merge in clustering order holds every partition's at once.
 */
static TupleTableSlot *
next_unordered(SeekState *s, TupleTableSlot *slot)
{
	while (s->next_part < s->nparts)
	{
		Partition  *part = &s->parts[s->next_part];

		if (part->rows)
		{
			/* buffered: its first row is current until it is returned */
			if (part->started)
				advance_partition(s, part);
			part->started = true;
		}
		else if (part->iter == NULL)
			open_partition(s, part, false);
		else
			part->cur = wc_merge_next(part->iter, &part->tid);
		if (part->cur)
		{
			store_row(s, slot, part);
			return slot;
		}
		if (part->rows == NULL)
			wc_merge_end(part->iter);
		part->iter = NULL;
		s->next_part++;
	}
	return ExecClearTuple(slot);
}

/*
 * A DELETE's range in key order, exactly (rangedelete.c made sure the
 * clauses are exactly the bounds): equality on a clustering prefix, then
 * the next column's bounds with their strictness; a DESC column's
 * bounds swap ends.  NULL ends: the partition's.
 */
static void
range_of_delete(SeekState *s, WcTableInfo *info, WcRangeTombstone *rt)
{
	StringInfoData eq;
	StringInfo	lo = NULL,
				hi = NULL;

	initStringInfo(&eq);
	rt->lo_incl = rt->hi_incl = true;
	for (int i = 0; i < s->nbounds; i++)
	{
		EvaluatedBound *b = &s->bounds[i];
		WcKeyColumn *col = &info->cols[b->col];
		bool		lower;
		StringInfo	end;

		if (col->partition || b->skip)
			continue;
		if (b->kind == BK_EQ)
		{
			wc_encode_column(&eq, col, b->value);
			continue;
		}
		lower = (b->kind == BK_GE || b->kind == BK_GT) != col->desc;
		end = makeStringInfo();
		appendBinaryStringInfo(end, eq.data, eq.len);
		wc_encode_column(end, col, b->value);
		if (lower)
		{
			lo = end;
			rt->lo_incl = b->kind == BK_GE || b->kind == BK_LE;
		}
		else
		{
			hi = end;
			rt->hi_incl = b->kind == BK_GE || b->kind == BK_LE;
		}
	}
	if (lo == NULL && eq.len > 0)
		lo = &eq;
	if (hi == NULL && eq.len > 0)
		hi = &eq;
	rt->lo = lo ? lo->data : NULL;
	rt->lolen = lo ? lo->len : 0;
	rt->hi = hi ? hi->data : NULL;
	rt->hilen = hi ? hi->len : 0;
}

/* Rows the snapshot sees in [lo, hi] of one partition (wc_merge_count). */
static int64
count_rows(SeekState *s, const WcMergeRange *part_range, const char *lo, int lolen,
		   const char *hi, int hilen)
{
	WcMergeRange range = *part_range;
	WcMergeIter *it;
	int64		n;

	range.lo = lo;
	range.lolen = lolen;
	range.hi = hi;
	range.hilen = hilen;
	it = wc_merge_begin_with(s->css.ss.ss_currentRelation, s->snapshot, &s->meta,
							 s->manifest, &range);
	wc_merge_set_stats(it, &s->stats);
	n = wc_merge_count(it);
	wc_merge_end(it);
	return n;
}

/*
 * The rows a range tombstone deletes in one partition: those in the seek's
 * range (its ends inclusive prefixes), less those equal to an exclusive end.
 */
static int64
rows_deleted(SeekState *s, const WcRangeTombstone *rt, const WcMergeRange *r)
{
	int64		n = count_rows(s, r, r->lo, r->lolen, r->hi, r->hilen);

	if (n > 0 && rt->lo && !rt->lo_incl)
		n -= count_rows(s, r, r->lo, r->lolen, r->lo, r->lolen);
	if (n > 0 && rt->hi && !rt->hi_incl)
		n -= count_rows(s, r, r->hi, r->hilen, r->hi, r->hilen);
	return Max(n, 0);
}

/*
 * The DELETE as range tombstones: per partition, count the rows the range
 * deletes (from settled key pages' counts, or keys only: no value page is
 * read) and, if any, write one range tombstone.  The statement's row count
 * is theirs; ModifyTable gets no row.
 */
static void
delete_ranges(SeekState *s)
{
	Relation	rel = s->css.ss.ss_currentRelation;
	WcTableInfo *info = wc_table_info(rel);
	EState	   *estate = s->css.ss.ps.state;
	WcRangeTombstone rt;

	if (s->empty)
		return;
	memset(&rt, 0, sizeof(rt));
	range_of_delete(s, info, &rt);
	for (int i = 0; i < s->nparts; i++)
	{
		Partition  *part = &s->parts[i];
		int64		n;

		CHECK_FOR_INTERRUPTS();
		rt.pk = (char *) part->range.lo;
		rt.pklen = part->range.bloom_pklen;
		n = rows_deleted(s, &rt, &part->range);
		if (n == 0)
			continue;
		rt.id = wc_new_storage_id();
		rt.write_ts = wc_meta_write_ts(rel);
		rt.nrows = n;
		wc_manifest_add_range_tombstone(s->meta.storage_id, &rt);
		s->range_tombstones++;
		s->range_deleted += n;
		estate->es_processed += n;
		wc_count_deletes(rel, n);
	}
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
	if (s->range_delete)
	{
		if (!s->range_done)
		{
			MemoryContext old = MemoryContextSwitchTo(s->mcxt);

			delete_ranges(s);
			MemoryContextSwitchTo(old);
			s->range_done = true;
		}
		return ExecClearTuple(slot);
	}
	if (s->empty)
		return ExecClearTuple(slot);
	if (!s->ordered)
		return next_unordered(s, slot);
	if (s->pending)
	{
		advance_partition(s, s->pending);
		if (s->pending->cur)
			binaryheap_add(s->heap, PointerGetDatum(s->pending));
		s->pending = NULL;
	}
	read_due_partitions(s);
	if (binaryheap_empty(s->heap))
		return ExecClearTuple(slot);
	part = (Partition *) DatumGetPointer(binaryheap_remove_first(s->heap));
	s->pending = part;
	store_row(s, slot, part);
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
	s->heap = NULL;
	s->next_part = 0;
	s->range_done = false;
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

	initStringInfo(&pk);
	initStringInfo(&ck);
	for (int e = 0; e < list_length(cscan->custom_exprs); e++)
	{
		int			col = list_nth_int(s->kinds, 2 * e);
		int			kind = list_nth_int(s->kinds, 2 * e + 1);
		StringInfo	out = info->cols[col].partition ? &pk : &ck;
		StringInfoData names,
					values;

		initStringInfo(&names);
		initStringInfo(&values);
		/* a row bound's columns follow it: (c1, c2) op (v1, v2) */
		for (;;)
		{
			const char *colname = NameStr(TupleDescAttr(RelationGetDescr(rel),
														info->cols[col].attnum - 1)->attname);

			appendStringInfo(&names, "%s%s", names.len > 0 ? ", " : "", quote_identifier(colname));
			appendStringInfo(&values, "%s%s", values.len > 0 ? ", " : "",
							 deparse_expression(list_nth(cscan->custom_exprs, e), dpcontext,
												false, false));
			if (e + 1 >= list_length(cscan->custom_exprs) ||
				(list_nth_int(s->kinds, 2 * (e + 1) + 1) & BK_ROW) == 0)
				break;
			e++;
			col = list_nth_int(s->kinds, 2 * e);
			kind |= BK_ROW;
		}
		if (out->len > 0)
			appendStringInfoString(out, " AND ");
		if (kind & BK_ROW)
			appendStringInfo(out, "(%s) %s (%s)", names.data, kind_op(BoundKindOf(kind)), values.data);
		else
			appendStringInfo(out, "%s %s %s", names.data, kind_op(kind), values.data);
	}
	ExplainPropertyText("Partition Key", pk.data, es);
	if (ck.len > 0)
		ExplainPropertyText("Clustering Bounds", ck.data, es);
	if (s->backward)
		ExplainPropertyText("Direction", "Backward", es);
	if (s->range_delete)
		ExplainPropertyText("Delete", "one range tombstone per partition", es);
	else if (s->buffered)
		ExplainPropertyText("Read", "one key range for all the buckets", es);
	if (s->range_delete && es->analyze)
	{
		ExplainPropertyInteger("Range Tombstones Written", NULL, s->range_tombstones, es);
		ExplainPropertyInteger("Rows Deleted", NULL, s->range_deleted, es);
	}
	if (es->analyze)
	{
		WcMergeStats total = s->stats;	/* with the live iterators' pages */
		int64		unopened = s->stats.runs_unopened;

		for (int i = 0; i < s->nparts; i++)
			if (s->parts[i].iter)
			{
				total.blocks_read += wc_merge_live_blocks(s->parts[i].iter, &total);
				unopened += wc_merge_live_unopened(s->parts[i].iter);
			}
		ExplainPropertyInteger("Partitions Read", NULL, s->total_parts, es);
		ExplainPropertyInteger("Runs Considered", NULL, s->stats.runs_considered, es);
		ExplainPropertyInteger("Runs Skipped by Key Range", NULL, s->stats.runs_skipped_range, es);
		ExplainPropertyInteger("Runs Skipped by Bloom Filter", NULL, s->stats.runs_skipped_bloom, es);
		if (s->stats.runs_skipped_newer > 0)
			ExplainPropertyInteger("Runs Skipped by Write Time", NULL, s->stats.runs_skipped_newer, es);
		if (unopened > 0 || es->format != EXPLAIN_FORMAT_TEXT)
			ExplainPropertyInteger("Runs Not Reached", NULL, unopened, es);
		ExplainPropertyInteger("Key Pages Read", NULL, total.blocks_read, es);
		ExplainPropertyInteger("Value Pages Read", NULL, total.value_pages_read, es);
		if (total.extent_read_aheads > 0)
			ExplainPropertyInteger("Index and Bloom Pages Read Ahead", "runs", total.extent_read_aheads, es);
		if (total.value_prefetches > 0)
		{
			ExplainPropertyInteger("Value Pages Prefetched", NULL, total.value_prefetches, es);
			ExplainPropertyInteger("Value Prefetches Used", NULL, total.value_prefetch_hits, es);
		}
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
