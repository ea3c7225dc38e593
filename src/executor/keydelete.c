/*
 * keydelete.c — a DELETE that chooses its rows by key columns alone writes
 * their tombstones blindly, as Cassandra does: no write-conflict check per
 * row, buffered and written as one sorted run when the statement's executor
 * finishes (modify.c, wc_buffer_tombstone).  Where the DELETE reads the
 * whole table (no partition key fixed: a retention job), the full scan is
 * replaced by WidecolKeyDelete, which merges keys only, applies the
 * conditions and streams the tombstones, in key order, into a run
 * (wc_tombstone_run_add): ModifyTable gets no row.
 * Under a seek, ModifyTable deletes each row it gets, blindly
 * (wc_blind_delete_push).
 *
 * Why it is safe: a key never changes (an UPDATE of a key column moves the
 * row to another key), so a condition on key columns holds for every
 * version of the key; re-checking the newest version, what the row-by-row
 * path does, could not change which keys are deleted.  A concurrent write
 * of one of those keys is decided by last write wins, as for range
 * tombstones (rangedelete.c).  Conditions on other columns keep the
 * row-by-row path, and so does a DELETE of one row by its full key: it
 * waits for a concurrent writer of that row, as on heap.  See "Deletes" in
 * src/README.md.
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "access/table.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "parser/parsetree.h"
#include "nodes/extensible.h"
#include "nodes/plannodes.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "widecol.h"
#include "access/access.h"
#include "executor/seek.h"
#include "storage/keyenc.h"
#include "storage/merge.h"
#include "storage/tableinfo.h"

static ExecutorStart_hook_type prev_executor_start = NULL;
static ExecutorEnd_hook_type prev_executor_end = NULL;

/* Is attno one of the table's key columns (or tableoid)? */
static bool
is_key_column(const WcTableInfo *info, AttrNumber attno)
{
	if (attno == TableOidAttributeNumber)
		return true;
	for (int i = 0; i < info->npk + info->nck; i++)
		if (info->cols[i].attnum == attno)
			return true;
	return false;
}

/* Do the expressions read no column of the scanned table but key columns? */
static bool
only_key_columns(List *exprs, Index scanrelid, const WcTableInfo *info)
{
	List	   *vars = pull_var_clause((Node *) exprs, PVC_RECURSE_AGGREGATES |
									   PVC_RECURSE_WINDOWFUNCS | PVC_RECURSE_PLACEHOLDERS);
	ListCell   *lc;

	foreach(lc, vars)
	{
		Var		   *v = lfirst(lc);

		if (!IsA(v, Var) || v->varno != scanrelid || !is_key_column(info, v->varattno))
			return false;
	}
	return true;
}

/* The key column a clause "column = value" fixes, or 0. */
static AttrNumber
equality_column(Node *clause, Index scanrelid)
{
	OpExpr	   *op = (OpExpr *) clause;
	Node	   *l,
			   *r;

	if (!IsA(clause, OpExpr) || list_length(op->args) != 2 ||
		get_oprrest(op->opno) != F_EQSEL)
		return 0;
	l = strip_implicit_coercions(linitial(op->args));
	r = strip_implicit_coercions(lsecond(op->args));
	if (IsA(r, Var) && !IsA(l, Var))
	{
		Node	   *t = l;

		l = r;
		r = t;
	}
	if (!IsA(l, Var) || ((Var *) l)->varno != scanrelid || contain_var_clause(r))
		return 0;
	return ((Var *) l)->varattno;
}

/*
 * Does the scan name one row by its full key: every key column fixed by
 * an equality (the seek's bounds, or the conditions of a full scan)?
 */
static bool
names_one_row(Plan *scan, Index scanrelid, const WcTableInfo *info)
{
	int			nkeys = info->npk + info->nck;
	bool		fixed[WC_MAX_KEY_COLUMNS] = {0};
	ListCell   *lc;

	if (nkeys == 0)
		return false;			/* keyless: rows have no key to name */
	if (IsA(scan, CustomScan))
	{
		List	   *kinds = linitial(((CustomScan *) scan)->custom_private);

		for (int i = 0; i + 1 < list_length(kinds); i += 2)
			if (list_nth_int(kinds, i + 1) == BK_EQ)
				fixed[list_nth_int(kinds, i)] = true;
	}
	foreach(lc, scan->qual)
	{
		AttrNumber	attno = equality_column(lfirst(lc), scanrelid);

		for (int i = 0; attno > 0 && i < nkeys; i++)
			if (info->cols[i].attnum == attno)
				fixed[i] = true;
	}
	for (int i = 0; i < nkeys; i++)
		if (!fixed[i])
			return false;
	return true;
}

/* Does the DELETE's scan of rel (conditions exprs) need only row keys? */
static bool
deletes_by_keys(Relation rel, Plan *scan, List *exprs, Index rti)
{
	WcTableInfo *info;

	if (rel->rd_tableam != wc_get_routine() || wc_delete_needs_rows(rel))
		return false;
	info = wc_table_info(rel);
	return only_key_columns(exprs, rti, info) && !names_one_row(scan, rti, info);
}

/*
 * The widecol relation a scan under a DELETE deletes from, if the DELETE
 * needs only the keys of its rows; else NULL.
 */
static Relation
blind_target(QueryDesc *qd, ModifyTable *mt, Plan *scan)
{
	Index		rti;
	ResultRelInfo *rri;
	Relation	rel;
	List	   *exprs;

	/* a full scan that qualifies became a WidecolKeyDelete when planned */
	if (!IsA(scan, CustomScan) ||
		strcmp(((CustomScan *) scan)->methods->CustomName, "WidecolSeek") != 0)
		return NULL;
	exprs = list_concat_copy(scan->qual, ((CustomScan *) scan)->custom_exprs);
	rti = ((Scan *) scan)->scanrelid;
	if (!list_member_int(mt->resultRelations, rti) || qd->estate->es_result_relations == NULL ||
		(rri = qd->estate->es_result_relations[rti - 1]) == NULL)
		return NULL;
	rel = rri->ri_RelationDesc;
	return deletes_by_keys(rel, scan, exprs, rti) ? rel : NULL;
}

/*
 * Register the tables a DELETE deletes from blindly: the scan under its
 * ModifyTable, or each scan of an Append (a partitioned parent's
 * partitions), that qualifies.
 */
static void
register_blind_deletes(QueryDesc *qd)
{
	Plan	   *top = qd->plannedstmt->planTree;
	ModifyTable *mt;
	Plan	   *sub;
	List	   *scans;
	ListCell   *lc;

	if (qd->operation != CMD_DELETE || top == NULL || !IsA(top, ModifyTable) ||
		qd->estate == NULL)
		return;
	mt = (ModifyTable *) top;
	if (mt->returningLists != NIL || (sub = outerPlan(top)) == NULL)
		return;
	scans = IsA(sub, Append) ? ((Append *) sub)->appendplans : list_make1(sub);
	foreach(lc, scans)
	{
		Relation	rel = blind_target(qd, mt, lfirst(lc));

		if (rel)
			wc_blind_delete_push(qd, RelationGetRelid(rel), qd->estate->es_output_cid);
	}
}

static void
key_delete_executor_start(QueryDesc *qd, int eflags)
{
	if (prev_executor_start)
		prev_executor_start(qd, eflags);
	else
		standard_ExecutorStart(qd, eflags);
	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0)
		register_blind_deletes(qd);
}

static void
key_delete_executor_end(QueryDesc *qd)
{
	wc_blind_delete_pop(qd);
	if (prev_executor_end)
		prev_executor_end(qd);
	else
		standard_ExecutorEnd(qd);
}

/* ---------- WidecolKeyDelete: a full scan that deletes by key ---------- */

typedef struct KeyDeleteState
{
	CustomScanState css;
	bool		done;
	bool		partition_only; /* the conditions read partition-key columns only */
	int64		scanned;		/* rows whose keys were read */
	int64		deleted;
	WcKeyDecoder dec;
} KeyDeleteState;

static CustomScanMethods key_delete_scan_methods;
static CustomExecMethods key_delete_exec_methods;

static Node *
key_delete_create_state(CustomScan *cscan)
{
	KeyDeleteState *s = palloc0(sizeof(KeyDeleteState));

	NodeSetTag(s, T_CustomScanState);
	s->css.methods = &key_delete_exec_methods;
	return (Node *) s;
}

static void
key_delete_begin(CustomScanState *node, EState *estate, int eflags)
{
	KeyDeleteState *s = (KeyDeleteState *) node;
	WcTableInfo *info = wc_table_info(node->ss.ss_currentRelation);
	WcTableInfo partition = *info;

	wc_key_decoder_init(&s->dec, CurrentMemoryContext);
	partition.nck = 0;			/* key columns: the partition's only */
	s->partition_only = !contain_volatile_functions((Node *) node->ss.ps.plan->qual) &&
		only_key_columns(node->ss.ps.plan->qual, ((Scan *) node->ss.ps.plan)->scanrelid,
						 &partition);
}

/* Do the conditions keep this row (decided once per partition when they can be)? */
static bool
keeps_row(KeyDeleteState *s, WcRowHeader *row, ItemPointer tid, StringInfo lastpk,
		  bool *last_result)
{
	Relation	rel = s->css.ss.ss_currentRelation;
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	TupleTableSlot *slot = s->css.ss.ss_ScanTupleSlot;

	if (s->partition_only && lastpk->len == row->pklen && row->pklen > 0 &&
		memcmp(lastpk->data, WcRowKey(row), row->pklen) == 0)
		return *last_result;
	ResetExprContext(econtext);
	wc_store_row_keys(slot, rel, row, tid, &s->dec);
	econtext->ecxt_scantuple = slot;
	*last_result = ExecQual(s->css.ss.ps.qual, econtext);
	resetStringInfo(lastpk);
	appendBinaryStringInfo(lastpk, WcRowKey(row), row->pklen);
	return *last_result;
}

/*
 * Every row the statement's snapshot sees, keys only: those the conditions
 * keep get a tombstone.
 */
static void
delete_by_keys(KeyDeleteState *s)
{
	Relation	rel = s->css.ss.ss_currentRelation;
	EState	   *estate = s->css.ss.ps.state;
	CommandId	cid = estate->es_output_cid;
	StringInfoData lastpk;
	bool		last_result = false;
	WcMergeRange range = {0};
	WcMergeIter *it;
	WcRowHeader *row;
	ItemPointerData tid;
	WcTombstoneRun *run = wc_tombstone_run_begin(rel, cid);

	initStringInfo(&lastpk);
	it = wc_merge_begin(rel, wc_snapshot_for_read(rel, estate->es_snapshot, CurrentMemoryContext),
						&range);
	while ((row = wc_merge_next(it, &tid)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		s->scanned++;
		if (s->css.ss.ps.qual && !keeps_row(s, row, &tid, &lastpk, &last_result))
			continue;
		wc_tombstone_run_add(run, WcRowKey(row), row->keylen, row->pklen);
		s->deleted++;
	}
	wc_merge_end(it);
	wc_tombstone_run_end(run);
	estate->es_processed += s->deleted;
	wc_count_deletes(rel, s->deleted);
}

static TupleTableSlot *
key_delete_exec(CustomScanState *node)
{
	KeyDeleteState *s = (KeyDeleteState *) node;

	if (!s->done)
	{
		delete_by_keys(s);
		s->done = true;
	}
	return ExecClearTuple(node->ss.ss_ScanTupleSlot);
}

static void
key_delete_end(CustomScanState *node)
{
}

static void
key_delete_rescan(CustomScanState *node)
{
	elog(ERROR, "widecol: a key delete cannot be rescanned");
}

static void
key_delete_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	KeyDeleteState *s = (KeyDeleteState *) node;

	ExplainPropertyText("Delete", "a tombstone per row its key columns select, written as one run", es);
	if (es->analyze)
	{
		ExplainPropertyInteger("Keys Read", NULL, s->scanned, es);
		ExplainPropertyInteger("Rows Deleted", NULL, s->deleted, es);
	}
}

/* The full scan, as a WidecolKeyDelete (same relation, conditions, output). */
static Plan *
key_delete_plan(SeqScan *scan)
{
	CustomScan *cs = makeNode(CustomScan);

	cs->scan = scan->scan;
	cs->scan.plan.type = T_CustomScan;
	cs->flags = 0;
	cs->custom_relids = bms_make_singleton(scan->scan.scanrelid);
	cs->methods = &key_delete_scan_methods;
	return &cs->scan.plan;
}

/* A full scan under a DELETE that needs only keys, as a WidecolKeyDelete. */
static Plan *
key_delete_or_same(PlannedStmt *stmt, ModifyTable *mt, Plan *scan)
{
	Index		rti;
	Relation	rel;
	bool		by_keys;

	if (scan == NULL || !IsA(scan, SeqScan))
		return scan;
	rti = ((Scan *) scan)->scanrelid;
	if (!list_member_int(mt->resultRelations, rti))
		return scan;
	/* the planner holds the DELETE's lock on its targets */
	rel = table_open(rt_fetch(rti, stmt->rtable)->relid, NoLock);
	by_keys = deletes_by_keys(rel, scan, scan->qual, rti);
	table_close(rel, NoLock);
	return by_keys ? key_delete_plan((SeqScan *) scan) : scan;
}

/*
 * After planning (and the filtering guard, which still sees the full
 * scan): full scans under a DELETE by key columns become WidecolKeyDelete.
 */
void
wc_plan_key_deletes(PlannedStmt *stmt)
{
	ModifyTable *mt;
	Plan	   *sub;

	if (stmt->commandType != CMD_DELETE || stmt->planTree == NULL ||
		!IsA(stmt->planTree, ModifyTable))
		return;
	mt = (ModifyTable *) stmt->planTree;
	if (mt->returningLists != NIL || (sub = outerPlan(mt)) == NULL)
		return;
	if (IsA(sub, Append))
	{
		ListCell   *lc;

		foreach(lc, ((Append *) sub)->appendplans)
			lfirst(lc) = key_delete_or_same(stmt, mt, lfirst(lc));
	}
	else
		outerPlan(mt) = key_delete_or_same(stmt, mt, sub);
}

void
wc_install_key_deletes(void)
{
	key_delete_scan_methods.CustomName = "WidecolKeyDelete";
	key_delete_scan_methods.CreateCustomScanState = key_delete_create_state;
	RegisterCustomScanMethods(&key_delete_scan_methods);
	key_delete_exec_methods.CustomName = "WidecolKeyDelete";
	key_delete_exec_methods.BeginCustomScan = key_delete_begin;
	key_delete_exec_methods.ExecCustomScan = key_delete_exec;
	key_delete_exec_methods.EndCustomScan = key_delete_end;
	key_delete_exec_methods.ReScanCustomScan = key_delete_rescan;
	key_delete_exec_methods.ExplainCustomScan = key_delete_explain;

	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = key_delete_executor_start;
	prev_executor_end = ExecutorEnd_hook;
	ExecutorEnd_hook = key_delete_executor_end;
}
