/*
 * filtering.c — full scans of widecol tables that filter rows.
 *
 * A query that filters a widecol table without fixing its partition key
 * reads every partition.  Cassandra refuses such a query unless it says
 * ALLOW FILTERING; here widecol.filtering = allow | warn | error decides,
 * and EXPLAIN adds a note under the plan saying, for each full scan of a
 * widecol table, why no seek was possible.
 *
 * Both look at the finished plan, so they judge what will actually run: a
 * Seq Scan (parallel or not) of a widecol table or of a widecol partition.
 * A full scan with no filter (a report over the whole table) is left alone.
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/partition.h"
#include "commands/explain.h"
#include "miscadmin.h"
#include "nodes/plannodes.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "widecol.h"
#include "executor/seek.h"
#include "storage/tableinfo.h"

int			wc_filtering = WC_FILTERING_ALLOW;

static ExplainOneQuery_hook_type prev_explain_one_query = NULL;

/* EXPLAIN without ANALYZE is planning: it shows the note, never fails. */
static bool explain_only = false;

/* A full scan of a widecol table (or partition), and why it is one. */
typedef struct FullScan
{
	Oid			relid;			/* the table, or the partitioned table above it */
	bool		filtered;		/* the scan has a filter */
	char	   *missing;		/* partition key columns without a usable
								 * clause; NULL: the key was fixed */
} FullScan;

/* The partitioned table a partition belongs to, at the top. */
static Oid
top_table(Oid relid)
{
	List	   *ancestors = get_partition_ancestors(relid);

	return ancestors != NIL ? llast_oid(ancestors) : relid;
}

static void
add_full_scan(PlannedStmt *stmt, Scan *scan, List **scans)
{
	RangeTblEntry *rte = rt_fetch(scan->scanrelid, stmt->rtable);
	Relation	rel;
	FullScan   *fs;
	ListCell   *lc;

	if (rte->rtekind != RTE_RELATION || !wc_relation_is_widecol(rte->relid))
		return;
	rel = table_open(rte->relid, AccessShareLock);
	if (WcTableIsKeyless(wc_table_info(rel)) || wc_table_info(rel)->npk == 0)
	{
		table_close(rel, AccessShareLock);
		return;
	}
	fs = palloc0(sizeof(FullScan));
	fs->relid = top_table(rte->relid);
	fs->filtered = scan->plan.qual != NIL;
	fs->missing = wc_seek_missing_key(rel, scan->plan.qual, scan->scanrelid);
	table_close(rel, AccessShareLock);

	/* the partitions of one table are reported once */
	foreach(lc, *scans)
	{
		FullScan   *other = lfirst(lc);

		if (other->relid == fs->relid)
		{
			other->filtered |= fs->filtered;
			if (other->missing == NULL)
				other->missing = fs->missing;
			return;
		}
	}
	*scans = lappend(*scans, fs);
}

/* A plan node's children other than lefttree and righttree. */
List *
wc_plan_children(Plan *plan)
{
	switch (nodeTag(plan))
	{
		case T_Append:
			return ((Append *) plan)->appendplans;
		case T_MergeAppend:
			return ((MergeAppend *) plan)->mergeplans;
		case T_BitmapAnd:
			return ((BitmapAnd *) plan)->bitmapplans;
		case T_BitmapOr:
			return ((BitmapOr *) plan)->bitmapplans;
		case T_SubqueryScan:
			return list_make1(((SubqueryScan *) plan)->subplan);
		case T_CustomScan:
			return ((CustomScan *) plan)->custom_plans;
		default:
			return NIL;
	}
}

static void
find_full_scans(PlannedStmt *stmt, Plan *plan, List **scans)
{
	ListCell   *lc;

	if (plan == NULL)
		return;
	check_stack_depth();
	if (IsA(plan, SeqScan))
		add_full_scan(stmt, (Scan *) plan, scans);
	foreach(lc, wc_plan_children(plan))
		find_full_scans(stmt, lfirst(lc), scans);
	find_full_scans(stmt, plan->lefttree, scans);
	find_full_scans(stmt, plan->righttree, scans);
}

static List *
full_scans(PlannedStmt *stmt)
{
	List	   *scans = NIL;
	ListCell   *lc;

	find_full_scans(stmt, stmt->planTree, &scans);
	foreach(lc, stmt->subplans)
		find_full_scans(stmt, lfirst(lc), &scans);
	return scans;
}

/* The widecol.filtering guard over a finished plan (planner.c calls it). */
void
wc_check_filtering(PlannedStmt *stmt)
{
	ListCell   *lc;

	if (wc_filtering == WC_FILTERING_ALLOW || explain_only)
		return;
	foreach(lc, full_scans(stmt))
	{
		FullScan   *fs = lfirst(lc);

		if (!fs->filtered || fs->missing == NULL)
			continue;
		ereport(wc_filtering == WC_FILTERING_ERROR ? ERROR : WARNING,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("query filters widecol table \"%s\" without fixing its partition key",
						get_rel_name(fs->relid)),
				 errdetail("No condition a seek can use on partition key column(s) %s: every partition is read and filtered.",
						   fs->missing),
				 errhint("Add equality or IN conditions on %s (a range will do on the last one), or SET widecol.filtering = allow.",
						 fs->missing)));
	}
}

/* ExplainOneQuery for a plannable query, then the notes (text format). */
static void
wc_explain_one_query(Query *query, int cursorOptions, IntoClause *into,
					 ExplainState *es, const char *queryString,
					 ParamListInfo params, QueryEnvironment *queryEnv)
{
	PlannedStmt *plan;
	instr_time	planstart,
				planduration;
	BufferUsage bufusage_start,
				bufusage;
	ListCell   *lc;

	if (prev_explain_one_query)
	{
		prev_explain_one_query(query, cursorOptions, into, es, queryString, params, queryEnv);
		return;
	}
	if (es->buffers)
		bufusage_start = pgBufferUsage;
	INSTR_TIME_SET_CURRENT(planstart);
	explain_only = !es->analyze;
	PG_TRY();
	{
		plan = pg_plan_query(query, queryString, cursorOptions, params);
	}
	PG_FINALLY();
	{
		explain_only = false;
	}
	PG_END_TRY();
	INSTR_TIME_SET_CURRENT(planduration);
	INSTR_TIME_SUBTRACT(planduration, planstart);
	if (es->buffers)
	{
		memset(&bufusage, 0, sizeof(BufferUsage));
		BufferUsageAccumDiff(&bufusage, &pgBufferUsage, &bufusage_start);
	}
	ExplainOnePlan(plan, into, es, queryString, params, queryEnv,
				   &planduration, es->buffers ? &bufusage : NULL);

	if (es->format != EXPLAIN_FORMAT_TEXT)
		return;
	foreach(lc, full_scans(plan))
	{
		FullScan   *fs = lfirst(lc);

		if (fs->missing)
			appendStringInfo(es->str, "Widecol: full scan of %s: no condition a seek can use on partition key column(s) %s\n",
							 get_rel_name(fs->relid), fs->missing);
		else if (!wc_enable_seek)
			appendStringInfo(es->str, "Widecol: full scan of %s: widecol.enable_seek is off\n",
							 get_rel_name(fs->relid));
		else
			appendStringInfo(es->str, "Widecol: full scan of %s: the partition key is fixed, but a full scan was estimated cheaper\n",
							 get_rel_name(fs->relid));
	}
}

static const struct config_enum_entry filtering_options[] = {
	{"allow", WC_FILTERING_ALLOW, false},
	{"warn", WC_FILTERING_WARN, false},
	{"error", WC_FILTERING_ERROR, false},
	{NULL, 0, false}
};

void
wc_install_filtering_hooks(void)
{
	DefineCustomEnumVariable("widecol.filtering",
							 "What a query that filters a widecol table without fixing its partition key does: allow, warn or error.",
							 "Such a query reads every partition (Cassandra would demand ALLOW FILTERING).",
							 &wc_filtering, WC_FILTERING_ALLOW, filtering_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	prev_explain_one_query = ExplainOneQuery_hook;
	ExplainOneQuery_hook = wc_explain_one_query;
}
