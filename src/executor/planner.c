/*
 * planner.c — planner and parse-analysis hooks.
 *
 * The seek path (seekplan.c); after planning, DELETEs as range tombstones
 * (rangedelete.c) and the widecol.filtering guard (filtering.c); and INSERT
 * ... ON CONFLICT refused while the query is analysed, before anything runs.  (Parallel sequential scans
 * are PostgreSQL's own paths; scan.c divides the key space.)
 */
#include "postgres.h"

#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "parser/analyze.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"

#include "widecol.h"
#include "executor/seek.h"
#include "storage/tableinfo.h"

static set_rel_pathlist_hook_type prev_set_rel_pathlist = NULL;
static planner_hook_type prev_planner = NULL;
static post_parse_analyze_hook_type prev_post_parse_analyze = NULL;

static void
wc_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
					RangeTblEntry *rte)
{
	if (prev_set_rel_pathlist)
		prev_set_rel_pathlist(root, rel, rti, rte);
	/* a plain table, or a partition (or inheritance child) of one */
	if (rte->rtekind == RTE_RELATION &&
		(rel->reloptkind == RELOPT_BASEREL || rel->reloptkind == RELOPT_OTHER_MEMBER_REL) &&
		!rte->inh && wc_relation_is_widecol(rte->relid))
		wc_add_seek_path(root, rel, rte);
	else if (rte->rtekind == RTE_RELATION && rte->inh &&
			 (rel->reloptkind == RELOPT_BASEREL || rel->reloptkind == RELOPT_OTHER_MEMBER_REL))
		wc_sum_member_rows(root, rel, rti);
}

/* relid if it is a widecol table, else a widecol partition of it, if any. */
static Oid
widecol_member(Oid relid)
{
	ListCell   *lc;

	if (wc_relation_is_widecol(relid))
		return relid;
	if (get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return InvalidOid;
	foreach(lc, find_all_inheritors(relid, NoLock, NULL))
		if (wc_relation_is_widecol(lfirst_oid(lc)))
			return lfirst_oid(lc);
	return InvalidOid;
}

static bool
check_query(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
	{
		Query	   *q = (Query *) node;

		/*
		 * Without an arbiter index, ON CONFLICT DO NOTHING would just upsert;
		 * so through a partitioned table with widecol partitions too.
		 */
		if (q->onConflict && q->resultRelation > 0)
		{
			RangeTblEntry *rte = rt_fetch(q->resultRelation, q->rtable);
			Oid			widecol = rte->rtekind == RTE_RELATION ? widecol_member(rte->relid) : InvalidOid;

			if (OidIsValid(widecol))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("INSERT ... ON CONFLICT is not supported on widecol table \"%s\"",
								get_rel_name(widecol)),
						 errhint("INSERT into a widecol table already replaces a row with the same key.")));
		}
		return query_tree_walker(q, check_query, context, 0);
	}
	return expression_tree_walker(node, check_query, context);
}

static void
wc_post_parse_analyze(ParseState *pstate, Query *query, JumbleState *jstate)
{
	if (prev_post_parse_analyze)
		prev_post_parse_analyze(pstate, query, jstate);
	check_query((Node *) query, NULL);
}

static PlannedStmt *
plan_query(Query *parse, const char *query_string, int cursorOptions,
		   ParamListInfo boundParams)
{
	return prev_planner ?
		prev_planner(parse, query_string, cursorOptions, boundParams) :
		standard_planner(parse, query_string, cursorOptions, boundParams);
}

/*
 * Planning: a semi-join on a partition key also as an array of keys
 * (semijoin.c), the cheaper kept; after planning, DELETEs as range
 * tombstones, the filtering guard, then full scans of DELETEs by key
 * columns as WidecolKeyDelete (keydelete.c).
 */
static PlannedStmt *
wc_planner(Query *parse, const char *query_string, int cursorOptions,
		   ParamListInfo boundParams)
{
	Query	   *as_arrays = wc_enable_seek ? wc_semijoins_as_arrays(parse) : NULL;
	PlannedStmt *stmt = plan_query(parse, query_string, cursorOptions, boundParams);

	if (as_arrays)
	{
		PlannedStmt *alt = plan_query(as_arrays, query_string, cursorOptions, boundParams);

		if (wc_semijoin_plan_better(alt, stmt))
			stmt = alt;
	}
	wc_plan_range_deletes(stmt);
	wc_check_filtering(stmt);
	wc_plan_key_deletes(stmt);
	return stmt;
}

void
wc_install_planner_hooks(void)
{
	wc_register_custom_scan();
	wc_install_filtering_hooks();
	wc_install_key_deletes();
	wc_install_key_stats_hook();
	prev_set_rel_pathlist = set_rel_pathlist_hook;
	set_rel_pathlist_hook = wc_set_rel_pathlist;
	prev_planner = planner_hook;
	planner_hook = wc_planner;
	prev_post_parse_analyze = post_parse_analyze_hook;
	post_parse_analyze_hook = wc_post_parse_analyze;
}
