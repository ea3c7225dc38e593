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
 * locally whenever the partition looks small.  For the same reason the
 * partition's row count is scaled up while it is planned alone: postgres_fdw
 * sends a LIMIT only when that looks cheaper, which it does not when the
 * WHERE is estimated to match fewer rows than the LIMIT (a partition of 170
 * rows estimated at 30 shipped all 170 rows for a LIMIT 100).  The plan has
 * one relation, so the estimate decides nothing else.  The same is done for
 * a query that names one foreign partition of a hash-partitioned table
 * itself (the per-shard functions of a sharded image store, shard views).
 */
#include "postgres.h"

#include "access/hash.h"
#include "access/table.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/plancat.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "partitioning/partdesc.h"
#include "storage/lmgr.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/partcache.h"
#include "utils/rel.h"
#include "utils/rls.h"

#include "access/access.h"
#include "executor/seek.h"
#include "jit/jit.h"

static planner_hook_type prev_planner = NULL;
static get_relation_info_hook_type prev_get_relation_info = NULL;
static bool wc_route_single_shard = true;

/* the foreign partition being planned alone, whose row count is scaled up */
static Oid	routing_child = InvalidOid;
/* relations scaled so far (a planning that scaled one needs no JIT) */
static uint64 scaled_rels = 0;
#define WC_ROUTED_ROWS_SCALE 1.0e6

/*
 * A query of one foreign partition of a hash-partitioned (sharded) table by
 * itself, with something to send: the one relation of a query that names
 * the partition (per-shard functions, shard views) or of a routed one.
 */
static bool
is_lone_shard_query(PlannerInfo *root, Oid relid)
{
	Query	   *q = root->parse;
	Relation	parent;
	bool		hash;

	if (q->commandType != CMD_SELECT || list_length(q->rtable) != 1 || q->rowMarks ||
		!(q->limitCount || q->sortClause || q->groupClause || q->hasAggs) ||
		get_rel_relkind(relid) != RELKIND_FOREIGN_TABLE || !get_rel_relispartition(relid))
		return false;
	parent = table_open(get_partition_parent(relid, false), AccessShareLock);
	hash = parent->rd_rel->relkind == RELKIND_PARTITIONED_TABLE &&
		RelationGetPartitionKey(parent)->strategy == PARTITION_STRATEGY_HASH;
	table_close(parent, AccessShareLock);
	return hash;
}

static void
wc_router_relation_info(PlannerInfo *root, Oid relid, bool inhparent, RelOptInfo *rel)
{
	if (prev_get_relation_info)
		prev_get_relation_info(root, relid, inhparent, rel);
	if (inhparent || !wc_route_single_shard)
		return;
	if ((OidIsValid(routing_child) && relid == routing_child) || is_lone_shard_query(root, relid))
	{
		scaled_rels++;
		/* postgres_fdw takes a foreign table never analyzed (-1) as 10 pages */
		rel->tuples = Max(rel->tuples, 1000.0) * WC_ROUTED_ROWS_SCALE;
		rel->pages = (BlockNumber) Min((double) Max(rel->pages, 10) * WC_ROUTED_ROWS_SCALE, (double) MaxBlockNumber);
	}
}

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
	routing_child = child;
	PG_TRY();
	{
		stmt = plan_next(q, query_string, cursorOptions, boundParams);
	}
	PG_FINALLY();
	{
		enable_sort = save_sort;
		routing_child = InvalidOid;
	}
	PG_END_TRY();
	return stmt;
}

static bool
has_param(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
		return true;
	return expression_tree_walker(node, has_param, context);
}

/*
 * The foreign partition that a candidate's WHERE fixes by equality on every
 * column of the hash partition key (constants, or a custom plan's
 * parameters), found as tuple routing finds it; InvalidOid when that is not
 * plain.  The routed plan is then made directly, without planning the
 * parent first only to learn what pruning leaves (a fifth of the
 * coordinator's time on a single-partition query).
 */
static Oid
known_partition(Query *q, ParamListInfo boundParams)
{
	RangeTblEntry *rte = linitial_node(RangeTblEntry, q->rtable);
	PlannerGlobal *glob;
	PlannerInfo *root;
	Relation	rel;
	PartitionKey key;
	Datum		values[PARTITION_MAX_KEYS];
	bool		isnull[PARTITION_MAX_KEYS];
	bool		fixed[PARTITION_MAX_KEYS] = {0};
	int			nfixed = 0;
	Oid			child = InvalidOid;
	ListCell   *lc;

	if (q->jointree == NULL || q->jointree->quals == NULL)
		return InvalidOid;
	rel = table_open(rte->relid, NoLock);	/* locked by parse analysis */
	key = RelationGetPartitionKey(rel);
	for (int i = 0; i < key->partnatts; i++)
		if (key->partattrs[i] == 0)
			nfixed = -PARTITION_MAX_KEYS;	/* an expression: leave it to pruning */
	if (key->strategy != PARTITION_STRATEGY_HASH || nfixed < 0)
	{
		table_close(rel, NoLock);
		return InvalidOid;
	}
	/* folded as the planner folds them: 'cam-' || 7, (ARRAY[...])[$1] */
	glob = makeNode(PlannerGlobal);
	glob->boundParams = boundParams;
	root = makeNode(PlannerInfo);
	root->glob = glob;
	foreach(lc, make_ands_implicit((Expr *) eval_const_expressions(root, copyObject(q->jointree->quals))))
	{
		OpExpr	   *op = lfirst(lc);
		Node	   *l,
				   *r;

		if (!IsA(op, OpExpr) || list_length(op->args) != 2)
			continue;
		l = linitial(op->args);
		r = lsecond(op->args);
		if (IsA(l, Const) && IsA(r, Var))
		{
			Node	   *t = l;

			l = r;
			r = t;
		}
		if (!IsA(l, Var) || !IsA(r, Const) || ((Var *) l)->varno != 1 ||
			((Var *) l)->varlevelsup != 0 || ((Const *) r)->constisnull)
			continue;
		for (int i = 0; i < key->partnatts; i++)
			if (!fixed[i] && key->partattrs[i] == ((Var *) l)->varattno &&
				((Const *) r)->consttype == key->parttypid[i] &&
				op->inputcollid == key->partcollation[i] &&
				op->opno == get_opfamily_member(key->partopfamily[i], key->parttypid[i],
												key->parttypid[i], HTEqualStrategyNumber))
			{
				values[i] = ((Const *) r)->constvalue;
				isnull[i] = false;
				fixed[i] = true;
				nfixed++;
			}
	}
	if (nfixed == key->partnatts)
	{
		PartitionDesc desc = RelationGetPartitionDesc(rel, true);
		int			index = wc_hash_partition_index(rel, desc, values, isnull);

		if (index >= 0 && get_rel_relkind(desc->oids[index]) == RELKIND_FOREIGN_TABLE)
			child = desc->oids[index];
	}
	table_close(rel, NoLock);
	/*
	 * Locked as planning the parent would have locked it; a partition
	 * detached meanwhile is left to that planning.
	 */
	if (OidIsValid(child))
	{
		LockRelationOid(child, AccessShareLock);
		if (!get_rel_relispartition(child) || get_partition_parent(child, true) != rte->relid)
			child = InvalidOid;
	}
	return child;
}

static PlannedStmt *
wc_router_planner(Query *parse, const char *query_string, int cursorOptions,
				  ParamListInfo boundParams)
{
	Query	   *copy = is_candidate(parse) ? copyObject(parse) : NULL;
	uint64		scaled_before;
	PlannedStmt *stmt;
	Oid			child;

	/*
	 * Planned without the parameters' values, which only chose the shard:
	 * the remote SQL keeps $n, and the shard prepares it once
	 * (executor/shardread.c).  The plan is a custom plan, for these values.
	 * Not for LIMIT $n: postgres_fdw sends a LIMIT whose value it knows.
	 */
	if (copy != NULL && OidIsValid(child = known_partition(copy, boundParams)) &&
		(stmt = route(copy, child, query_string, cursorOptions,
					  has_param(copy->limitCount, NULL) || has_param(copy->limitOffset, NULL) ?
					  boundParams : NULL)) != NULL)
	{
		/*
		 * Its costs without the scaled row count: below a generic plan's
		 * (one foreign scan per shard), so the plan cache keeps custom plans.
		 */
		stmt->planTree->startup_cost /= WC_ROUTED_ROWS_SCALE;
		stmt->planTree->total_cost /= WC_ROUTED_ROWS_SCALE;
		stmt->jitFlags = PGJIT_NONE;
		wc_plan_shard_reads(stmt);
		return stmt;
	}
	scaled_before = scaled_rels;
	stmt = plan_next(parse, query_string, cursorOptions, boundParams);

	/*
	 * A plan over a scaled-up foreign partition has costs far above
	 * jit_above_cost; it is one foreign scan, with nothing worth compiling.
	 */
	if (scaled_rels != scaled_before)
		stmt->jitFlags = PGJIT_NONE;

	/* planning changes the Query it is given: decide on the copy */
	if (copy != NULL &&
		OidIsValid(child = single_foreign_partition(stmt, linitial_node(RangeTblEntry, copy->rtable)->relid)))
	{
		PlannedStmt *routed = route(copy, child, query_string, cursorOptions, boundParams);

		if (routed != NULL)
		{
			/*
			 * The scaled row count inflated its costs: give it the unrouted
			 * plan's, which the plan cache compares with a generic plan's
			 * (a generic plan prunes at run time and cannot be routed).
			 */
			routed->planTree->startup_cost = stmt->planTree->startup_cost;
			routed->planTree->total_cost = stmt->planTree->total_cost;
			routed->jitFlags = stmt->jitFlags;
			stmt = routed;
		}
	}
	wc_plan_shard_reads(stmt);
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
	prev_get_relation_info = get_relation_info_hook;
	get_relation_info_hook = wc_router_relation_info;
}
