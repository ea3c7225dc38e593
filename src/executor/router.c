/*
 * router.c — single-shard queries through a sharded table.
 *
 * On PostgreSQL 15, postgres_fdw sends WHERE and ORDER BY to a foreign
 * partition, but not LIMIT or aggregates: those are planned above the
 * partitioned table (an Append, even when pruning leaves one partition),
 * where no foreign scan can take them.  Queried through the foreign table
 * itself, postgres_fdw sends them too.  So a SELECT that reads one
 * partitioned table and, after plan-time partition pruning, one foreign
 * partition of it is planned a second time with that partition in place of
 * the parent (what Citus calls a router query).  The result is the same:
 * the rows of the parent that the query can see are exactly that
 * partition's rows.
 *
 * The rewrite keeps PostgreSQL's rules: the parent stays in the range table
 * (not joined) so that privileges are checked on it as before and the plan
 * is invalidated when it changes; the partition's own privileges are not
 * asked for (as for any partition read through its parent).  It is not done
 * where it could differ: row-level security on either table, whole-row
 * references (their row type is the parent's), columns that do not match
 * one for one, locking clauses, sublinks and CTEs.  The second planning
 * runs with enable_sort off when the query has an ORDER BY, so that the
 * shard sorts (its WidecolSeek returns rows in order) and LIMIT can go with
 * it; postgres_fdw's costs without remote estimates would otherwise sort
 * locally whenever the partition looks small.
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_class.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "partitioning/partdesc.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"

#include "executor/seek.h"

static planner_hook_type prev_planner = NULL;
static bool wc_route_single_shard = true;

static PlannedStmt *
plan_next(Query *parse, const char *query_string, int cursorOptions,
		  ParamListInfo boundParams)
{
	return prev_planner ?
		prev_planner(parse, query_string, cursorOptions, boundParams) :
		standard_planner(parse, query_string, cursorOptions, boundParams);
}

/* A SELECT of one partitioned table that has something to push down. */
static bool
is_candidate(Query *q)
{
	RangeTblEntry *rte;

	if (!wc_route_single_shard || q->commandType != CMD_SELECT || q->utilityStmt ||
		q->hasSubLinks || q->cteList || q->rowMarks || q->setOperations ||
		q->hasRowSecurity || q->hasModifyingCTE || list_length(q->rtable) != 1)
		return false;
	rte = linitial_node(RangeTblEntry, q->rtable);
	if (rte->rtekind != RTE_RELATION || !rte->inh ||
		rte->relkind != RELKIND_PARTITIONED_TABLE || rte->securityQuals || rte->tablesample)
		return false;
	return q->limitCount || q->sortClause || q->groupClause || q->groupingSets ||
		q->hasAggs || q->distinctClause;
}

/* The one foreign partition a plan of the parent reads, if so. */
static Oid
single_foreign_partition(PlannedStmt *stmt, Oid parent)
{
	Oid			found = InvalidOid;
	ListCell   *lc;

	foreach(lc, stmt->rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);

		if (rte->rtekind != RTE_RELATION || rte->relid == parent)
			continue;
		if (OidIsValid(found) || rte->relkind != RELKIND_FOREIGN_TABLE)
			return InvalidOid;
		found = rte->relid;
	}
	return found;
}

static bool
has_whole_row_var(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
		return ((Var *) node)->varattno == InvalidAttrNumber;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, has_whole_row_var, context, 0);
	return expression_tree_walker(node, has_whole_row_var, context);
}

/* Same columns at the same attribute numbers (Vars need no translation). */
static bool
same_columns(Oid parent, Oid child)
{
	Relation	p = table_open(parent, NoLock);
	Relation	c = table_open(child, NoLock);
	TupleDesc	pd = RelationGetDescr(p);
	TupleDesc	cd = RelationGetDescr(c);
	bool		same = pd->natts == cd->natts;
	int			i;

	for (i = 0; same && i < pd->natts; i++)
	{
		Form_pg_attribute pa = TupleDescAttr(pd, i);
		Form_pg_attribute ca = TupleDescAttr(cd, i);

		same = pa->attisdropped == ca->attisdropped &&
			(pa->attisdropped ||
			 (pa->atttypid == ca->atttypid && pa->atttypmod == ca->atttypmod &&
			  pa->attcollation == ca->attcollation &&
			  strcmp(NameStr(pa->attname), NameStr(ca->attname)) == 0));
	}
	table_close(c, NoLock);
	table_close(p, NoLock);
	return same;
}

static PlannedStmt *
route(Query *q, Oid child, const char *query_string, int cursorOptions,
	  ParamListInfo boundParams)
{
	RangeTblEntry *rte = linitial_node(RangeTblEntry, q->rtable);
	RangeTblEntry *parent_rte;
	PlannedStmt *stmt;
	bool		save_sort = enable_sort;

	if (check_enable_rls(rte->relid, InvalidOid, true) != RLS_NONE ||
		check_enable_rls(child, InvalidOid, true) != RLS_NONE ||
		has_whole_row_var((Node *) q, NULL) || !same_columns(rte->relid, child))
		return NULL;

	/* the parent, unreferenced, for privileges and plan invalidation */
	parent_rte = copyObject(rte);
	parent_rte->inh = false;
	rte->relid = child;
	rte->relkind = RELKIND_FOREIGN_TABLE;
	rte->inh = false;
	rte->requiredPerms = 0;
	rte->selectedCols = NULL;
	q->rtable = lappend(q->rtable, parent_rte);

	if (q->sortClause)
		enable_sort = false;
	PG_TRY();
	{
		stmt = plan_next(q, query_string, cursorOptions, boundParams);
	}
	PG_FINALLY();
	{
		enable_sort = save_sort;
	}
	PG_END_TRY();
	return stmt;
}

static PlannedStmt *
wc_router_planner(Query *parse, const char *query_string, int cursorOptions,
				  ParamListInfo boundParams)
{
	Query	   *copy = is_candidate(parse) ? copyObject(parse) : NULL;
	PlannedStmt *stmt = plan_next(parse, query_string, cursorOptions, boundParams);
	Oid			child;

	/* planning changes the Query it is given: decide on the copy */
	if (copy != NULL &&
		OidIsValid(child = single_foreign_partition(stmt, linitial_node(RangeTblEntry, copy->rtable)->relid)))
	{
		PlannedStmt *routed = route(copy, child, query_string, cursorOptions, boundParams);

		if (routed != NULL)
			return routed;
	}
	return stmt;
}

void
wc_install_router(void)
{
	DefineCustomBoolVariable("widecol.route_single_shard",
							 "Plans a query of a sharded table that reads one foreign partition on that partition.",
							 "postgres_fdw then sends ORDER BY, LIMIT and aggregates to the shard.",
							 &wc_route_single_shard, true, PGC_USERSET, 0, NULL, NULL, NULL);
	prev_planner = planner_hook;
	planner_hook = wc_router_planner;
}
