/*
 * semijoin.c — `pk IN (SELECT ...)` on a widecol partition key, offered to
 * the planner as `pk = ANY(ARRAY(SELECT ...))`.
 *
 * PostgreSQL plans an IN (subquery) as a semi-join: a nested loop of
 * parameterized seeks, one partition at a time, whose output is in no
 * order, so `ORDER BY clustering LIMIT n` sorts every row of every
 * partition (8,500 rows for the 100 newest images of 50 devices).  As an
 * array the keys come from an initplan and one seek merges the partitions
 * in clustering order, reading ~n rows.  The two are the same condition in
 * a WHERE clause: both are true when a subquery row equals the key, NULL
 * when none does but one comparison was NULL, false otherwise (also for an
 * empty subquery and a NULL key), and neither returns a row twice.
 *
 * Only uncorrelated, single-column IN conjuncts of the top-level WHERE on a
 * partition-key column are rewritten, and the rewritten query is only a
 * candidate: wc_planner plans both and keeps it when it is cheaper and its
 * arrays feed seeks (an array that ends up as a filter of a full scan is
 * searched linearly for every row).
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "widecol.h"
#include "executor/seek.h"
#include "storage/tableinfo.h"

/* Is attribute attnum of relid a partition-key column of a widecol table? */
static bool
is_partition_column_of(Oid relid, AttrNumber attnum)
{
	Relation	rel = table_open(relid, NoLock);
	WcTableInfo *info = wc_table_info(rel);
	bool		found = false;

	for (int i = 0; i < info->npk && !found; i++)
		found = info->cols[i].attnum == attnum;
	table_close(rel, NoLock);
	return found;
}

/* ... of the table, or of every widecol partition of a partitioned table. */
static bool
is_partition_column(Oid relid, AttrNumber attnum)
{
	const char *name;
	ListCell   *lc;
	bool		any = false;

	if (wc_relation_is_widecol(relid))
		return is_partition_column_of(relid, attnum);
	if (get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return false;
	name = get_attname(relid, attnum, false);
	foreach(lc, find_all_inheritors(relid, NoLock, NULL))
	{
		Oid			child = lfirst_oid(lc);

		if (!wc_relation_is_widecol(child))
			continue;
		if (!is_partition_column_of(child, get_attnum(child, name)))
			return false;
		any = true;
	}
	return any;
}

static Node *
strip_relabel(Node *n)
{
	while (n && IsA(n, RelabelType))
		n = (Node *) ((RelabelType *) n)->arg;
	return n;
}

/* The array form of a conjunct, or NULL when it is not one we rewrite. */
static Node *
as_array(Query *q, Node *conjunct)
{
	SubLink    *sl = (SubLink *) conjunct;
	OpExpr	   *op;
	Var		   *var;
	Param	   *param;
	RangeTblEntry *rte;
	SubLink    *arr;
	ScalarArrayOpExpr *saop;
	Oid			elemtype;

	if (!IsA(conjunct, SubLink) || sl->subLinkType != ANY_SUBLINK ||
		!IsA(sl->testexpr, OpExpr))
		return NULL;
	op = (OpExpr *) sl->testexpr;
	if (list_length(op->args) != 2)
		return NULL;
	var = (Var *) strip_relabel(linitial(op->args));
	param = (Param *) lsecond(op->args);
	if (!IsA(var, Var) || var->varlevelsup != 0 || var->varattno <= 0 ||
		!IsA(param, Param) || param->paramkind != PARAM_SUBLINK)
		return NULL;
	/* uncorrelated: the subquery names nothing of this query */
	if (contain_vars_of_level(sl->subselect, 1))
		return NULL;
	elemtype = param->paramtype;
	if (!OidIsValid(get_array_type(elemtype)))
		return NULL;
	rte = rt_fetch(var->varno, q->rtable);
	if (rte->rtekind != RTE_RELATION || !is_partition_column(rte->relid, var->varattno))
		return NULL;

	arr = makeNode(SubLink);
	arr->subLinkType = ARRAY_SUBLINK;
	arr->subLinkId = 0;
	arr->testexpr = NULL;
	arr->operName = NIL;
	arr->subselect = sl->subselect;
	arr->location = sl->location;
	saop = makeNode(ScalarArrayOpExpr);
	saop->opno = op->opno;
	saop->opfuncid = op->opfuncid;
	saop->hashfuncid = InvalidOid;
	saop->negfuncid = InvalidOid;
	saop->useOr = true;
	saop->inputcollid = op->inputcollid;
	saop->args = list_make2(linitial(op->args), arr);
	saop->location = op->location;
	return (Node *) saop;
}

/*
 * A copy of the query with its eligible IN conjuncts as arrays, or NULL
 * when there is none.
 */
Query *
wc_semijoins_as_arrays(Query *parse)
{
	Query	   *q;
	List	   *conjuncts;
	List	   *out = NIL;
	bool		changed = false;
	ListCell   *lc;

	if (parse->commandType != CMD_SELECT || parse->jointree == NULL ||
		parse->jointree->quals == NULL || !parse->hasSubLinks)
		return NULL;
	q = copyObject(parse);
	conjuncts = make_ands_implicit((Expr *) q->jointree->quals);
	foreach(lc, conjuncts)
	{
		Node	   *a = as_array(q, lfirst(lc));

		changed |= a != NULL;
		out = lappend(out, a ? a : lfirst(lc));
	}
	if (!changed)
		return NULL;
	q->jointree->quals = (Node *) make_ands_explicit(out);
	return q;
}

typedef struct SeekUse
{
	const List *params;			/* paramids of ARRAY initplans */
	bool		found;
} SeekUse;

static bool
seek_uses_param_walker(Node *node, SeekUse *u)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXEC &&
		list_member_int(u->params, ((Param *) node)->paramid))
	{
		u->found = true;
		return true;
	}
	return expression_tree_walker(node, seek_uses_param_walker, u);
}

/* Does a WidecolSeek in the plan tree take one of the params as its keys? */
static bool
plan_seeks_with(Plan *plan, SeekUse *u)
{
	ListCell   *lc;

	if (plan == NULL)
		return false;
	if (IsA(plan, CustomScan) &&
		strcmp(((CustomScan *) plan)->methods->CustomName, "WidecolSeek") == 0)
	{
		seek_uses_param_walker((Node *) ((CustomScan *) plan)->custom_exprs, u);
		if (u->found)
			return true;
	}
	if (plan_seeks_with(plan->lefttree, u) || plan_seeks_with(plan->righttree, u))
		return true;
	foreach(lc, wc_plan_children(plan))
		if (plan_seeks_with(lfirst(lc), u))
			return true;
	return false;
}

/*
 * Keep the array form?  When it costs less, and every array an initplan
 * builds is the keys of a seek.
 */
bool
wc_semijoin_plan_better(PlannedStmt *alt, PlannedStmt *orig)
{
	ListCell   *lc;
	bool		any = false;

	if (alt->planTree->total_cost >= orig->planTree->total_cost)
		return false;
	foreach(lc, alt->planTree->initPlan)
	{
		SubPlan    *sp = lfirst(lc);
		SeekUse		u;

		if (sp->subLinkType != ARRAY_SUBLINK)
			continue;
		u.params = sp->setParam;
		u.found = false;
		if (!plan_seeks_with(alt->planTree, &u))
			return false;
		any = true;
	}
	return any;
}
