/*
 * seekplan.c — planning a "WidecolSeek": a CustomScan that turns equality
 * on the partition key (plus equality on a clustering prefix and a range on
 * the next clustering column) into key-range reads of level 0 and the runs.
 *
 * Several partitions (an IN list, = ANY(array), or a range over a date or
 * integer last partition column, i.e. day buckets) are read in clustering
 * order and merged, so the path declares those pathkeys: ORDER BY
 * <clustering columns> LIMIT n needs no Sort and stops after n rows.  All
 * restriction clauses are rechecked on the rows read (seekexec.c): the key
 * bounds only have to be conservative.
 */
#include "postgres.h"

#include <math.h>

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
#include "utils/selfuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/clauses.h"
#include "parser/parsetree.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"
#include "utils/ruleutils.h"
#include "utils/snapmgr.h"
#include "utils/typcache.h"

#include "widecol.h"
#include "executor/seek.h"
#include "storage/manifest.h"
#include "storage/metapage.h"
#include "storage/tableinfo.h"

typedef struct KeyBound
{
	int			col;			/* index into WcTableInfo.cols */
	BoundKind	kind;
	Expr	   *expr;
	Relids		outer;			/* other relations the bound depends on (join) */
	Expr	   *clause;			/* the restriction clause it came from */
	/* a row comparison: the further columns (cols col+1, ...) and values */
	List	   *rowcols;
	List	   *rowexprs;
} KeyBound;

static CustomPathMethods seek_path_methods;
static bool range_exact(bool parameterized, List *clauses, List *bounds, WcTableInfo *info);
bool		wc_enable_seek = true;

/*
 * In cpu_operator_costs, measured against a sequential scan (one
 * seq_page_cost, a compressed page, took ~7 us): a bloom filter probe
 * (~0.5 us a run), setting up a partition's merge, merging a row across
 * its runs.  Merging partitions in clustering order costs a memcmp per
 * level of their heap (less than a Sort's comparison, so that the ordered
 * merge wins over reading them unordered and sorting).
 */
#define WC_BLOOM_PROBE_COST 10
#define WC_SEEK_SETUP_COST 200
#define WC_MERGE_COMPARE_COST 4
/*
 * Readers of an ordered merge the backend's buffer pool (storage/cache.c)
 * serves without new memory, and what one past them costs, in
 * seq_page_costs (test/bench/seek_costs.sh: 400 readers still ran at the
 * unordered speed, 1,200 took ~50 us more each).
 */
#define WC_POOLED_READERS 400
/* Partitions this small (rows, on average) in a bucket range: one range read. */
#define WC_BUFFERED_PARTITION_ROWS 64
#define WC_UNPOOLED_READER_COST 7
/* The share of runs a bloom filter lets through without the partition. */
#define WC_BLOOM_FALSE_POSITIVES 0.01
static CustomScanMethods seek_scan_methods;

/* ---------- planning ---------- */

static Node *
strip_relabel(Node *n)
{
	while (n && IsA(n, RelabelType))
		n = (Node *) ((RelabelType *) n)->arg;
	return n;
}

/*
 * May the other side of a clause bound a seek?  Constants, parameters and
 * stable expressions always; with root != NULL also expressions over other
 * relations (join clauses: a parameterized path), whose relids go to *outer.
 */
static bool
usable_bound(PlannerInfo *root, Index relid, Node *n, Relids *outer)
{
	Relids		varnos;

	if (contain_volatile_functions(n) || contain_subplans(n))
		return false;
	if (!contain_var_clause(n))
		return true;
	if (root == NULL)
		return false;
	varnos = pull_varnos(root, n);
	if (bms_is_member(relid, varnos))
		return false;
	*outer = bms_union(*outer, varnos);
	return true;
}

static bool
is_integer_type(Oid typid)
{
	return typid == INT2OID || typid == INT4OID || typid == INT8OID;
}

static bool
is_datetime_type(Oid typid)
{
	return typid == DATEOID || typid == TIMESTAMPOID || typid == TIMESTAMPTZOID;
}

/* Values of type exprtype encode as the column's without conversion. */
static bool
same_encoding(Oid coltype, Oid exprtype)
{
	if (coltype == exprtype)
		return true;
	/* text and varchar encode alike */
	return (coltype == TEXTOID || coltype == VARCHAROID) &&
		(exprtype == TEXTOID || exprtype == VARCHAROID);
}

/*
 * May a value of exprtype bound a column of coltype?  Also across types of
 * the integer and of the datetime btree families (an int literal against a
 * bigint column, a timestamp against a date): the executor converts the
 * value to the column's type (seekexec.c, bound_value).
 */
static bool
types_compatible(Oid coltype, Oid exprtype)
{
	return same_encoding(coltype, exprtype) ||
		(is_integer_type(coltype) && is_integer_type(exprtype)) ||
		(is_datetime_type(coltype) && is_datetime_type(exprtype));
}

/*
 * Does a partition-key bound select exactly the rows its clause does, so
 * that the clause needs no recheck?  Integers convert exactly; a datetime
 * converted to another datetime type is only a conservative bound.
 */
static bool
exact_bound(Oid coltype, Oid exprtype)
{
	return same_encoding(coltype, exprtype) ||
		(is_integer_type(coltype) && is_integer_type(exprtype));
}

/* The type of a bound's value (an IN list's elements). */
static Oid
bound_value_type(const KeyBound *b, Expr *expr)
{
	Oid			t = getBaseType(exprType((Node *) expr));

	return b->kind == BK_IN ? getBaseType(get_element_type(t)) : t;
}

static int
key_column_of(WcTableInfo *info, Node *n, Index relid)
{
	Var		   *var = (Var *) strip_relabel(n);

	if (var == NULL || !IsA(var, Var) || var->varno != relid || var->varlevelsup != 0)
		return -1;
	for (int i = 0; i < info->npk + info->nck; i++)
		if (info->cols[i].attnum == var->varattno)
			return i;
	return -1;
}

static int
btree_strategy(Oid opno, Oid typid)
{
	/* the type cache keeps the default btree opfamily (no catalog scan) */
	TypeCacheEntry *tce = lookup_type_cache(typid, TYPECACHE_BTREE_OPFAMILY);

	if (!OidIsValid(tce->btree_opf))
		return 0;
	return get_op_opfamily_strategy(opno, tce->btree_opf);
}

static BoundKind
strategy_kind(int strategy)
{
	switch (strategy)
	{
		case BTEqualStrategyNumber:
			return BK_EQ;
		case BTLessStrategyNumber:
			return BK_LT;
		case BTLessEqualStrategyNumber:
			return BK_LE;
		case BTGreaterEqualStrategyNumber:
			return BK_GE;
		case BTGreaterStrategyNumber:
			return BK_GT;
	}
	return 0;
}

/*
 * A row comparison over consecutive clustering columns, (c1, c2, ...) op
 * (v1, v2, ...) (keyset paging), as one bound on the columns' encodings:
 * stored keys are in the order of the concatenated encodings, which is the
 * comparison's lexicographic order as long as the columns share their
 * direction (ASC or DESC); at the first column of the other direction the
 * bound stops (it only has to be conservative: the clause is rechecked).
 */
static bool
match_rowcompare(PlannerInfo *root, RowCompareExpr *rc, Index relid, WcTableInfo *info,
				 KeyBound *b)
{
	List	   *cols = rc->largs;
	List	   *vals = rc->rargs;
	RowCompareType rctype = rc->rctype;
	int			first;
	int			n = list_length(cols);

	if (key_column_of(info, linitial(cols), relid) < 0)
	{
		/* (v1, v2) > (c1, c2): the same as (c1, c2) < (v1, v2) */
		cols = rc->rargs;
		vals = rc->largs;
		rctype = rctype == ROWCOMPARE_LT ? ROWCOMPARE_GT : rctype == ROWCOMPARE_LE ? ROWCOMPARE_GE :
			rctype == ROWCOMPARE_GT ? ROWCOMPARE_LT : rctype == ROWCOMPARE_GE ? ROWCOMPARE_LE : rctype;
	}
	first = key_column_of(info, linitial(cols), relid);
	if (first < info->npk || rctype == ROWCOMPARE_EQ || rctype == ROWCOMPARE_NE)
		return false;
	for (int k = 0; k < n; k++)
	{
		int			col = key_column_of(info, list_nth(cols, k), relid);
		Node	   *val = list_nth(vals, k);
		Oid			opno = list_nth_oid(rc->opnos, k);
		Oid			typid;

		if (col != first + k || info->cols[col].desc != info->cols[first].desc ||
			!usable_bound(root, relid, val, &b->outer))
			break;
		typid = info->cols[col].typid;
		if (!types_compatible(typid, getBaseType(exprType(val))) ||
			btree_strategy(opno, typid) == 0 || btree_strategy(opno, typid) == BTEqualStrategyNumber ||
			((typid == TEXTOID || typid == VARCHAROID) &&
			 !lc_collate_is_c(list_nth_oid(rc->inputcollids, k))))
			break;
		/* the opnos follow the original order of the arguments */
		if (cols != rc->largs)
			opno = get_commutator(opno);
		if (k == 0)
		{
			b->col = col;
			b->expr = (Expr *) val;
		}
		else
		{
			b->rowcols = lappend_int(b->rowcols, col);
			b->rowexprs = lappend(b->rowexprs, val);
		}
	}
	if (b->expr == NULL)
		return false;
	b->kind = rctype == ROWCOMPARE_LT ? BK_LT : rctype == ROWCOMPARE_LE ? BK_LE :
		rctype == ROWCOMPARE_GT ? BK_GT : BK_GE;
	return true;
}

/* Does a restriction clause bound a key column?  Fills *b. */
static bool
match_clause(PlannerInfo *root, Expr *clause, Index relid, WcTableInfo *info, KeyBound *b)
{
	if (IsA(clause, RowCompareExpr))
		return match_rowcompare(root, (RowCompareExpr *) clause, relid, info, b);
	if (IsA(clause, OpExpr) && list_length(((OpExpr *) clause)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) clause;
		Node	   *l = linitial(op->args);
		Node	   *r = lsecond(op->args);
		Oid			opno = op->opno;
		int			col = key_column_of(info, l, relid);
		Node	   *other = r;
		int			strategy;

		if (col < 0)
		{
			col = key_column_of(info, r, relid);
			other = l;
			opno = get_commutator(opno);
		}
		if (col < 0 || !OidIsValid(opno) || !usable_bound(root, relid, other, &b->outer) ||
			!types_compatible(info->cols[col].typid, getBaseType(exprType(other))))
			return false;
		strategy = btree_strategy(opno, info->cols[col].typid);
		if (strategy == 0)
			return false;
		/* ranges on text need byte order */
		if (strategy != BTEqualStrategyNumber &&
			(info->cols[col].typid == TEXTOID || info->cols[col].typid == VARCHAROID) &&
			!lc_collate_is_c(op->inputcollid))
			return false;
		b->col = col;
		b->expr = (Expr *) other;
		b->kind = strategy_kind(strategy);
		return b->kind != 0;
	}
	if (IsA(clause, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *saop = (ScalarArrayOpExpr *) clause;
		int			col = key_column_of(info, linitial(saop->args), relid);
		Node	   *arr = lsecond(saop->args);

		if (!saop->useOr || col < 0 || !usable_bound(root, relid, arr, &b->outer) ||
			!types_compatible(info->cols[col].typid,
							  getBaseType(get_element_type(exprType(arr)))) ||
			btree_strategy(saop->opno, info->cols[col].typid) != BTEqualStrategyNumber)
			return false;
		b->col = col;
		b->kind = BK_IN;
		b->expr = (Expr *) arr;
		return true;
	}
	return false;
}

static bool
is_bucket_type(Oid typid)
{
	return typid == DATEOID || typid == INT2OID || typid == INT4OID || typid == INT8OID;
}

/* A bound of one of two kinds on col; of several, the one over most columns. */
static const KeyBound *
find_bound(List *bounds, int col, BoundKind k1, BoundKind k2)
{
	const KeyBound *best = NULL;
	ListCell   *lc;

	foreach(lc, bounds)
	{
		KeyBound   *b = lfirst(lc);

		if (b->col == col && (b->kind == k1 || b->kind == k2) &&
			(best == NULL || list_length(b->rowcols) > list_length(best->rowcols)))
			best = b;
	}
	return best;
}

/*
 * The bounds a seek uses, in key-column order: every partition column (EQ,
 * IN, or for the last one a range), then EQ on a clustering prefix,
 * then at most one lower and one upper bound on the next clustering column.
 */
/*
 * Rows of the initplan that sets an array parameter (= ANY(ARRAY(SELECT
 * ...)), or a semi-join rewritten so, see semijoin.c): its plan is made
 * before the paths of the query using it.  -1 when expr is no such Param.
 */
static double
array_param_rows(PlannerInfo *root, Node *expr)
{
	Param	   *p = (Param *) expr;

	if (!IsA(expr, Param) || p->paramkind != PARAM_EXEC)
		return -1;
	for (; root != NULL; root = root->parent_root)
	{
		ListCell   *lc;

		foreach(lc, root->init_plans)
		{
			SubPlan    *sp = lfirst(lc);

			if (sp->subLinkType == ARRAY_SUBLINK && list_member_int(sp->setParam, p->paramid))
				return ((Plan *) list_nth(root->glob->subplans, sp->plan_id - 1))->plan_rows;
		}
	}
	return -1;
}

/* How many partition keys an IN bound names: the array's, else a guess. */
static double
in_list_length(PlannerInfo *root, const KeyBound *b)
{
	double		rows;

	if (IsA(b->expr, Const) && !((Const *) b->expr)->constisnull)
		return ArrayGetNItems(ARR_NDIM(DatumGetArrayTypeP(((Const *) b->expr)->constvalue)),
							  ARR_DIMS(DatumGetArrayTypeP(((Const *) b->expr)->constvalue)));
	rows = array_param_rows(root, (Node *) b->expr);
	return rows >= 1 ? rows : 10;
}

static List *
choose_bounds(PlannerInfo *root, List *all, WcTableInfo *info, double *nparts)
{
	List	   *chosen = NIL;
	int			i;

	*nparts = 1;
	for (i = 0; i < info->npk; i++)
	{
		const KeyBound *b = find_bound(all, i, BK_EQ, BK_EQ);

		if (b == NULL && (b = find_bound(all, i, BK_IN, BK_IN)) != NULL)
			*nparts *= in_list_length(root, b);
		if (b == NULL && i == info->npk - 1 && is_bucket_type(info->cols[i].typid))
		{
			const KeyBound *lo = find_bound(all, i, BK_GE, BK_GT);
			const KeyBound *hi = find_bound(all, i, BK_LE, BK_LT);

			/*
			 * A closed range enumerates its buckets; an open one reads the
			 * buckets that exist (seekexec.c, existing_buckets).
			 */
			if (lo || hi)
			{
				if (lo)
					chosen = lappend(chosen, (void *) lo);
				if (hi)
					chosen = lappend(chosen, (void *) hi);
				*nparts *= (lo && hi) ? 7 : 30; /* a week or a month of days, say */
				continue;
			}
		}
		if (b == NULL)
			return NIL;
		chosen = lappend(chosen, (void *) b);
	}
	for (; i < info->npk + info->nck; i++)
	{
		const KeyBound *b = find_bound(all, i, BK_EQ, BK_EQ);
		const KeyBound *lo,
				   *hi;

		if (b)
		{
			chosen = lappend(chosen, (void *) b);
			continue;
		}
		lo = find_bound(all, i, BK_GE, BK_GT);
		hi = find_bound(all, i, BK_LE, BK_LT);
		if (lo)
			chosen = lappend(chosen, (void *) lo);
		if (hi)
			chosen = lappend(chosen, (void *) hi);
		break;
	}
	return chosen;
}

/*
 * Why the clauses (restriction clauses of the scan of relid, implicitly
 * ANDed) cannot make a seek: the partition key columns no clause bounds,
 * as "a, b"; NULL when they can (a full scan was then only estimated
 * cheaper), or the table has no partition key.
 */
char *
wc_seek_missing_key(Relation relation, List *clauses, Index relid)
{
	WcTableInfo *info = wc_table_info(relation);
	List	   *all = NIL;
	ListCell   *lc;
	double		nparts;
	StringInfoData missing;

	if (WcTableIsKeyless(info) || info->npk == 0)
		return NULL;
	foreach(lc, clauses)
	{
		KeyBound   *b = palloc0(sizeof(KeyBound));
		Expr	   *clause = lfirst(lc);

		if (IsA(clause, RestrictInfo))
			clause = ((RestrictInfo *) clause)->clause;
		if (match_clause(NULL, clause, relid, info, b))
			all = lappend(all, b);
	}
	if (choose_bounds(NULL, all, info, &nparts) != NIL)
		return NULL;
	initStringInfo(&missing);
	for (int i = 0; i < info->npk; i++)
	{
		bool		fixed = find_bound(all, i, BK_EQ, BK_IN) != NULL ||
			(i == info->npk - 1 && is_bucket_type(info->cols[i].typid) &&
			 (find_bound(all, i, BK_GE, BK_GT) != NULL ||
			  find_bound(all, i, BK_LE, BK_LT) != NULL));

		if (!fixed)
			appendStringInfo(&missing, "%s%s", missing.len > 0 ? ", " : "",
							 quote_identifier(NameStr(TupleDescAttr(RelationGetDescr(relation),
																	info->cols[i].attnum - 1)->attname)));
	}
	return missing.data;
}

/* Pathkeys of the clustering order, or of its reverse (a backward seek). */
static List *
clustering_pathkeys(PlannerInfo *root, RelOptInfo *rel, Relation relation,
					WcTableInfo *info, bool backward)
{
	List	   *pathkeys = NIL;

	for (int i = info->npk; i < info->npk + info->nck; i++)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(relation),
											  info->cols[i].attnum - 1);
		TypeCacheEntry *tce = lookup_type_cache(att->atttypid,
												TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
		Var		   *var = makeVar(rel->relid, att->attnum, att->atttypid,
								  att->atttypmod, att->attcollation, 0);
		Oid			opno = (info->cols[i].desc != backward) ? tce->gt_opr : tce->lt_opr;
		List	   *pk;

		if (!OidIsValid(opno))
			break;
		pk = build_expression_pathkey(root, (Expr *) var, NULL, opno, rel->relids, true);
		/* a column fixed by equality to a constant orders nothing (as in indxpath.c) */
		if (pk != NIL && !EC_MUST_BE_REDUNDANT(((PathKey *) linitial(pk))->pk_eclass) &&
			!list_member_ptr(pathkeys, linitial(pk)))
			pathkeys = list_concat(pathkeys, pk);
	}
	return pathkeys;
}

/* The bounds restriction clauses give; join clauses too when root != NULL. */
static List *
collect_bounds(PlannerInfo *root, List *rinfos, Index relid, WcTableInfo *info)
{
	List	   *all = NIL;
	ListCell   *lc;

	foreach(lc, rinfos)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);
		KeyBound   *b = palloc0(sizeof(KeyBound));

		if (!ri->pseudoconstant && match_clause(root, ri->clause, relid, info, b))
		{
			b->clause = ri->clause;
			all = lappend(all, b);
		}
	}
	return all;
}

/*
 * The table's partitions (not those the query's filters leave), estimated:
 * from the statistics; for a table without them (never analyzed) from its
 * runs, whose summaries count their partitions: the largest count is a
 * lower bound that compaction makes exact, where the planner's default
 * (200 values per column) would make a unique key look 80,000 rows deep
 * in 16 million.  *guessed: no statistics said it.
 */
static double
table_partitions(PlannerInfo *root, RelOptInfo *rel, WcTableInfo *info,
				 const WcManifest *m, bool *guessed)
{
	double		distinct = 1;
	bool		any_default = false;

	for (int i = 0; i < info->npk; i++)
	{
		VariableStatData vardata;
		bool		isdefault;

		examine_variable(root, (Node *) makeVar(rel->relid, info->cols[i].attnum,
												info->cols[i].typid, -1, InvalidOid, 0),
						 0, &vardata);
		distinct *= get_variable_numdistinct(&vardata, &isdefault);
		any_default |= isdefault;
		ReleaseVariableStats(vardata);
	}
	if (any_default && m != NULL)
	{
		double		most = wc_manifest_most_partitions(m);

		if (most > 0)
			distinct = most;
	}
	if (guessed)
		*guessed = any_default;
	return Min(distinct, Max(rel->tuples, 1));
}

/*
 * Read the partitions of a bucket range with one range read (buffered)
 * instead of a seek each?  When every other partition column is fixed by
 * equality the buckets are adjacent keys, and when partitions are small
 * (sparse data: a few rows per device and day) one index descent and one
 * block per run beat a bloom probe, a descent and a block per bucket; the
 * rows are buffered and merged in clustering order.
 */
static bool
buffered_read(PlannerInfo *root, RelOptInfo *rel, WcTableInfo *info, List *bounds,
			  const WcManifest *m)
{
	ListCell   *lc;
	bool		range = false;

	foreach(lc, bounds)
	{
		KeyBound   *b = lfirst(lc);

		if (!info->cols[b->col].partition)
			continue;
		if (b->col == info->npk - 1 && b->kind != BK_EQ && b->kind != BK_IN)
			range = true;
		else if (b->kind != BK_EQ)
			return false;
	}
	return range &&
		rel->tuples / table_partitions(root, rel, info, m, NULL) <= WC_BUFFERED_PARTITION_ROWS;
}

/*
 * The expected cost of finding one partition: every run's bloom filter is
 * probed (its pages stay in the backend's cache), and each run that holds
 * the partition costs an index descent and a key and a value page to
 * decompress (measured: about what a sequential scan spends on a page).
 * A partition is in about sum(partitions per run) / distinct partitions
 * runs: one after a major compaction, most of them while small runs that
 * each hold a slice of every partition wait for compaction.  Level 0 is
 * read once per backend, then kept sorted (l0cache.c).
 */
static Cost
partition_seek_cost(PlannerInfo *root, RelOptInfo *rel, WcTableInfo *info,
					const WcManifest *m, uint32 l0_pages, double *runs_holding_out)
{
	double		run_partitions = 0;
	double		distinct = table_partitions(root, rel, info, m, NULL);
	double		runs_holding;

	for (int i = 0; i < m->nruns; i++)
		run_partitions += m->runs[i].st.npartitions;
	runs_holding = m->nruns == 0 ? 0 :
		Min(m->nruns, Max(1.0, run_partitions / Max(distinct, 1)) + WC_BLOOM_FALSE_POSITIVES * m->nruns);
	*runs_holding_out = runs_holding;
	elog(DEBUG2, "widecol seek cost: %d runs, %.0f partitions in runs, %.0f distinct, %.1f runs hold a partition",
		 m->nruns, run_partitions, distinct, runs_holding);
	return WC_SEEK_SETUP_COST * cpu_operator_cost +
		m->nruns * WC_BLOOM_PROBE_COST * cpu_operator_cost +
		runs_holding * seq_page_cost +
		(l0_pages > 0 ? cpu_operator_cost * WC_SEEK_SETUP_COST : 0);
}

/*
 * How many rows a seek of the chosen bounds returns, when no statistics say
 * how selective the key is (the table was never analyzed): the partitions'
 * average size per partition sought, one row per partition when every
 * clustering column is fixed as well (a primary key, as a unique index
 * tells the planner for a heap), times the selectivity of the other
 * clauses.  The planner's defaults (0.5% of the table per equality) made a
 * point lookup in 16 million rows look 80,000 rows deep, and a prepared
 * lookup was planned again at every execution (its generic plan looked
 * dearer than a custom one); two key columns looked 0.0025% deep, whatever
 * the partitions' size.  `rows` when statistics exist or the partitions
 * are a range of buckets.  others: the clauses that are not such bounds
 * (NIL for a parameterized seek: only lowered to the bound then).
 */
static double
key_rows(PlannerInfo *root, RelOptInfo *rel, WcTableInfo *info, const WcManifest *m,
		 List *chosen, double nparts, double rows, List *clauses)
{
	bool		guessed;
	double		distinct = table_partitions(root, rel, info, m, &guessed);
	int			ck_fixed = 0;
	List	   *others = NIL;
	double		keyed;
	ListCell   *lc;

	if (!guessed)
		return rows;
	foreach(lc, chosen)
	{
		KeyBound   *b = lfirst(lc);

		if (info->cols[b->col].partition && b->kind != BK_EQ && b->kind != BK_IN)
			return rows;		/* a bucket range: nparts is a guess */
		if (!info->cols[b->col].partition && b->kind == BK_EQ)
			ck_fixed++;
	}
	keyed = nparts * (ck_fixed == info->nck ? 1 : Max(1, rel->tuples / Max(distinct, 1)));
	if (clauses == NIL)
		return Min(rows, clamp_row_est(keyed));
	foreach(lc, clauses)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);
		bool		bound = false;
		ListCell   *lb;

		foreach(lb, chosen)
		{
			KeyBound   *b = lfirst(lb);

			bound |= b->clause == ri->clause &&
				(info->cols[b->col].partition || b->kind == BK_EQ);
		}
		if (!bound)
			others = lappend(others, ri);
	}
	return clamp_row_est(keyed * clauselist_selectivity(root, others, rel->relid, JOIN_INNER, NULL));
}

/* The relation's rows are not what was estimated: nor are its paths'. */
static void
set_rel_rows(RelOptInfo *rel, double rows)
{
	double		ratio = rows / Max(rel->rows, 1);
	ListCell   *lc;

	if (rows == rel->rows)
		return;
	rel->rows = rows;
	foreach(lc, rel->pathlist)
		if (((Path *) lfirst(lc))->param_info == NULL)
			((Path *) lfirst(lc))->rows = rows;
	/* a partial path has a worker's share */
	foreach(lc, rel->partial_pathlist)
		((Path *) lfirst(lc))->rows = clamp_row_est(((Path *) lfirst(lc))->rows * ratio);
}

static void
add_one_path(PlannerInfo *root, RelOptInfo *rel, Relation relation,
			 WcTableInfo *info, double nparts,
			 Relids required_outer, const WcManifest *m, uint32 l0_pages, bool backward,
			 bool range_delete, bool buffered, List *chosen)
{
	CustomPath *cpath = makeNode(CustomPath);
	ParamPathInfo *ppi = required_outer ?
		get_baserel_parampathinfo(root, rel, required_outer) : NULL;
	double		rows = ppi ? key_rows(root, rel, info, m, chosen, nparts, ppi->ppi_rows, NIL) :
		rel->rows;
	double		rows_read = Max(rows, 1);
	Cost		qual_cost = rel->baserestrictcost.per_tuple;
	double		runs_holding;
	Cost		per_partition = partition_seek_cost(root, rel, info, m, l0_pages, &runs_holding);
	bool		ordered;

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = rel;
	cpath->path.pathtarget = rel->reltarget;
	cpath->path.param_info = ppi;
	cpath->path.rows = rows;
	/*
	 * Only the pathkeys the query can use (as indxpath.c does): an order
	 * nobody asked for would, in a partition, name a column the parent's
	 * Append cannot sort on.
	 */
	cpath->path.pathkeys = info->nck > 0 ?
		truncate_useless_pathkeys(root, rel,
								  clustering_pathkeys(root, rel, relation, info, backward)) : NIL;
	ordered = cpath->path.pathkeys != NIL;

	/*
	 * In clustering order, every partition is found before the first row,
	 * and all their readers are open at once: past what the backend's
	 * buffer pool keeps, each reader's buffer is new memory to fault in.
	 * Otherwise the partitions are read one after another.
	 */
	cpath->path.startup_cost = ordered ? nparts * per_partition : per_partition;
	cpath->path.total_cost = nparts * per_partition;
	if (buffered)
		cpath->path.startup_cost = cpath->path.total_cost = per_partition;	/* one range read */
	if (ordered && !buffered && nparts * runs_holding > WC_POOLED_READERS)
		cpath->path.total_cost += (nparts * runs_holding - WC_POOLED_READERS) *
			WC_UNPOOLED_READER_COST * seq_page_cost;
	if (ordered)
		cpath->path.startup_cost = cpath->path.total_cost;

	/*
	 * A DELETE that will be written as range tombstones counts keys only:
	 * no row goes up to ModifyTable (rangedelete.c).
	 */
	if (range_delete)
		cpath->path.total_cost += rows_read * WC_MERGE_COMPARE_COST * cpu_operator_cost;
	else
		/* each row is merged across its runs and, in order, across partitions */
		cpath->path.total_cost +=
		(rows_read * (relation->rd_att->natts * 8 + 64)) / BLCKSZ * seq_page_cost +
		rows_read * (cpu_tuple_cost + qual_cost + WC_MERGE_COMPARE_COST * cpu_operator_cost +
					 (ordered ? cpu_operator_cost * log2(Max(nparts, 1)) : 0));
	cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	/*
	 * The plan re-derives the bounds; kept are the direction, and whether
	 * partitions must be merged in clustering order (else they are read one
	 * after another).
	 */
	cpath->custom_private = list_make3_int(backward, ordered, buffered);
	cpath->methods = &seek_path_methods;
	add_path(rel, &cpath->path);
}

static bool
em_is_var(PlannerInfo *root, RelOptInfo *rel, EquivalenceClass *ec,
		  EquivalenceMember *em, void *arg)
{
	return equal(strip_relabel((Node *) em->em_expr), arg);
}

/*
 * Join clauses on the key columns: those in joininfo, and the equalities
 * implied by equivalence classes (where the planner keeps a = b joins).
 */
static List *
key_join_clauses(PlannerInfo *root, RelOptInfo *rel, Relation relation, WcTableInfo *info)
{
	List	   *result = list_copy(rel->joininfo);

	for (int i = 0; i < info->npk + info->nck; i++)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(relation),
											  info->cols[i].attnum - 1);
		Var		   *var = makeVar(rel->relid, att->attnum, att->atttypid,
								  att->atttypmod, att->attcollation, 0);

		result = list_concat(result,
							 generate_implied_equalities_for_column(root, rel, em_is_var, var,
																	rel->lateral_referencers));
	}
	return result;
}

/*
 * Is the relation the target of a DELETE that would be written as range
 * tombstones if its scan is an exact seek (no RETURNING, nothing that needs
 * the rows one by one; see rangedelete.c)?  Such a seek is then costed for
 * what it does: counting keys.
 */
static bool
range_delete_target(PlannerInfo *root, RelOptInfo *rel, Relation relation)
{
	return root->parse->commandType == CMD_DELETE &&
		root->parse->resultRelation == (int) rel->relid &&
		root->parse->returningList == NIL && !wc_delete_needs_rows(relation);
}

/*
 * A parent's rows are its members' (set_append_rel_size sums them before
 * their paths are made): after wc_add_seek_path set a widecol partition's
 * estimate, the parent's is the new sum, for the joins above it.
 */
void
wc_sum_member_rows(PlannerInfo *root, RelOptInfo *rel, Index rti)
{
	double		rows = 0;
	ListCell   *lc;

	foreach(lc, root->append_rel_list)
	{
		AppendRelInfo *appinfo = lfirst(lc);
		RelOptInfo *child;

		if (appinfo->parent_relid != rti)
			continue;
		child = root->simple_rel_array[appinfo->child_relid];
		if (child == NULL || IS_DUMMY_REL(child))
			continue;
		rows += child->rows;
	}
	if (rows > 0)
		rel->rows = clamp_row_est(rows);
}

/*
 * Add a WidecolSeek path when the restriction clauses fix the partition key,
 * and a parameterized one when join clauses do (a nested loop then seeks
 * once per outer row).
 */
void
wc_add_seek_path(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte)
{
	Relation	relation = table_open(rte->relid, NoLock);
	WcTableInfo *info = wc_table_info(relation);
	List	   *chosen;
	ListCell   *lc;
	double		nparts;
	WcMetaData	meta;
	WcManifest *m = NULL;
	Relids		outer = NULL;
	bool		reverse_useful;

	if (!wc_enable_seek || WcTableIsKeyless(info) || info->npk == 0)
	{
		table_close(relation, NoLock);
		return;
	}
	wc_meta_read(relation, &meta);

	/*
	 * A backward seek (the clustering order reversed) too, when that order
	 * is one the query can use (ORDER BY ... DESC LIMIT n, a merge join).
	 */
	reverse_useful = info->nck > 0 &&
		truncate_useless_pathkeys(root, rel,
								  clustering_pathkeys(root, rel, relation, info, true)) != NIL;

	chosen = choose_bounds(root, collect_bounds(NULL, rel->baserestrictinfo, rel->relid, info),
						   info, &nparts);
	if (chosen != NIL)
	{
		bool		buffered;

		m = wc_manifest_read(meta.storage_id, GetCatalogSnapshot(RelationGetRelid(relation)));
		buffered = buffered_read(root, rel, info, chosen, m);
		set_rel_rows(rel, key_rows(root, rel, info, m, chosen, nparts, rel->rows,
								   rel->baserestrictinfo));
		for (int backward = 0; backward <= (reverse_useful ? 1 : 0); backward++)
			add_one_path(root, rel, relation, info, nparts, NULL,
						 m, meta.gens[meta.ngens - 1].npages, backward, false, buffered, chosen);
		if (range_delete_target(root, rel, relation) &&
			range_exact(false, rel->baserestrictinfo, chosen, info))
			add_one_path(root, rel, relation, info, nparts, NULL,
						 m, meta.gens[meta.ngens - 1].npages, false, true, false, chosen);
	}

	chosen = choose_bounds(root, collect_bounds(root,
										  list_concat_copy(rel->baserestrictinfo,
														   key_join_clauses(root, rel, relation, info)),
										  rel->relid, info),
						   info, &nparts);
	foreach(lc, chosen)
		outer = bms_union(outer, ((KeyBound *) lfirst(lc))->outer);
	if (chosen != NIL && !bms_is_empty(outer))
	{
		bool		buffered;

		if (m == NULL)
			m = wc_manifest_read(meta.storage_id, GetCatalogSnapshot(RelationGetRelid(relation)));
		buffered = buffered_read(root, rel, info, chosen, m);
		for (int backward = 0; backward <= (reverse_useful ? 1 : 0); backward++)
			add_one_path(root, rel, relation, info, nparts, outer,
						 m, meta.gens[meta.ngens - 1].npages, backward, false, buffered, chosen);
	}
	table_close(relation, NoLock);
}

/*
 * Do the bounds select exactly the rows the clauses do, so that a DELETE
 * may write them as one range tombstone per partition instead of deleting
 * row by row?  Every clause must be a bound, of a type that encodes
 * exactly: equality, IN or a range on the partition key, equality on a
 * clustering prefix and at most one lower and one upper bound on the next
 * column; not IN lists or row comparisons on clustering columns, not a
 * parameterized seek.  A DELETE of single rows (every clustering column
 * fixed) writes row tombstones: a range tombstone is a manifest row every
 * read of the table reads until compaction purges it.
 */
static bool
range_exact(bool parameterized, List *clauses, List *bounds, WcTableInfo *info)
{
	ListCell   *lc;
	int			clustering_eq = 0;

	if (parameterized)
		return false;
	/* a single row (every key column fixed) takes a row tombstone */
	foreach(lc, bounds)
		if (!info->cols[((KeyBound *) lfirst(lc))->col].partition &&
			((KeyBound *) lfirst(lc))->kind == BK_EQ)
			clustering_eq++;
	if (clustering_eq == info->nck)
		return false;
	foreach(lc, extract_actual_clauses(clauses, false))
	{
		ListCell   *lb;
		bool		found = false;

		foreach(lb, bounds)
			found |= ((KeyBound *) lfirst(lb))->clause == lfirst(lc);
		if (!found)
			return false;
	}
	foreach(lc, bounds)
	{
		KeyBound   *b = lfirst(lc);

		if (!exact_bound(info->cols[b->col].typid, bound_value_type(b, b->expr)))
			return false;
		if (!info->cols[b->col].partition && (b->kind == BK_IN || b->rowcols != NIL))
			return false;
	}
	return true;
}

static Plan *
seek_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
		  List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
	Relation	relation = table_open(rte->relid, NoLock);
	WcTableInfo *info = wc_table_info(relation);
	double		nparts;
	List	   *kinds = NIL,
			   *exprs = NIL,
			   *types = NIL,
			   *exact = NIL,
			   *bounds;
	ListCell   *lc;

	/*
	 * The bounds are derived again from the clauses the plan enforces (for a
	 * parameterized path they include the join clauses; the core replaces
	 * their outer variables in custom_exprs with nestloop parameters).
	 */
	bounds = choose_bounds(root, collect_bounds(best_path->path.param_info ? root : NULL,
										  clauses, rel->relid, info),
						   info, &nparts);
	foreach(lc, bounds)
	{
		KeyBound   *b = lfirst(lc);
		Oid			type = bound_value_type(b, b->expr);
		ListCell   *rc,
				   *re;

		kinds = lappend_int(lappend_int(kinds, b->col), b->kind);
		exprs = lappend(exprs, b->expr);
		types = lappend_oid(types, type);
		forboth(rc, b->rowcols, re, b->rowexprs)
		{
			kinds = lappend_int(lappend_int(kinds, lfirst_int(rc)), b->kind | BK_ROW);
			exprs = lappend(exprs, lfirst(re));
			types = lappend_oid(types, getBaseType(exprType(lfirst(re))));
		}
		/*
		 * A partition-key bound selects exactly the partitions it names
		 * (equality, IN, and the enumerated buckets of a range), so its
		 * clause needs no recheck per row, unless its value is converted
		 * inexactly; clustering bounds are only conservative (strict ones
		 * are read as inclusive) and stay.
		 */
		if (info->cols[b->col].partition && exact_bound(info->cols[b->col].typid, type))
			exact = lappend(exact, b->clause);
	}
	table_close(relation, NoLock);
	if (kinds == NIL)
		elog(ERROR, "widecol: a seek plan lost its partition-key bounds");

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = list_difference_ptr(extract_actual_clauses(clauses, false), exact);
	cscan->scan.scanrelid = rel->relid;
	cscan->flags = best_path->flags;
	/* flags: backward, ordered, range exact, range delete (rangedelete.c), buffered */
	cscan->custom_private = list_make3(kinds,
									   list_make5_int(linitial_int(best_path->custom_private),
													  lsecond_int(best_path->custom_private),
													  range_exact(best_path->path.param_info != NULL,
																  clauses, bounds, info),
													  false,
													  lthird_int(best_path->custom_private)),
									   types);
	cscan->custom_exprs = exprs;
	cscan->methods = &seek_scan_methods;
	return &cscan->scan.plan;
}

void
wc_register_custom_scan(void)
{
	seek_path_methods.CustomName = "WidecolSeek";
	seek_path_methods.PlanCustomPath = seek_plan;

	seek_scan_methods.CustomName = "WidecolSeek";
	seek_scan_methods.CreateCustomScanState = wc_seek_create_state;
	RegisterCustomScanMethods(&seek_scan_methods);

	DefineCustomBoolVariable("widecol.enable_seek",
							 "Enables the planner's use of WidecolSeek plans.",
							 "Like enable_indexscan: for comparing plans, not for production.",
							 &wc_enable_seek, true, PGC_USERSET, 0, NULL, NULL, NULL);
}
