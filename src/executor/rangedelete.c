/*
 * rangedelete.c — a DELETE of partitions or clustering ranges written as
 * range tombstones, one per partition, instead of a tombstone per row.
 *
 * After planning, a DELETE whose only input is a WidecolSeek of its target,
 * whose bounds are exactly its WHERE clause (seekplan.c, range_exact), is
 * turned into a range delete when nothing needs the old rows: no RETURNING,
 * no row-level DELETE trigger and no transition table (query tables keep
 * themselves with such triggers).  The seek then writes the tombstones
 * (seekexec.c, delete_ranges) and ModifyTable receives no row; statement
 * triggers still fire.  See "Range tombstones" in src/README.md.
 */
#include "postgres.h"

#include "access/table.h"
#include "nodes/extensible.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "utils/rel.h"

#include "widecol.h"
#include "executor/seek.h"
#include "storage/tableinfo.h"

/* Does anything need the rows a DELETE of this table removes, one by one? */
bool
wc_delete_needs_rows(Relation rel)
{
	TriggerDesc *td = rel->trigdesc;

	return td && (td->trig_delete_before_row || td->trig_delete_after_row ||
				  td->trig_delete_instead_row || td->trig_delete_old_table);
}

static bool
needs_old_rows(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	bool		needs = wc_delete_needs_rows(rel);

	table_close(rel, AccessShareLock);
	return needs;
}

static void
plan_node(PlannedStmt *stmt, Plan *plan)
{
	ModifyTable *mt;
	CustomScan *cs;
	List	   *flags;
	Index		target;

	if (plan == NULL || !IsA(plan, ModifyTable))
		return;
	mt = (ModifyTable *) plan;
	if (mt->operation != CMD_DELETE || list_length(mt->resultRelations) != 1 ||
		mt->returningLists != NIL || outerPlan(plan) == NULL || !IsA(outerPlan(plan), CustomScan))
		return;
	cs = (CustomScan *) outerPlan(plan);
	target = linitial_int(mt->resultRelations);
	if (strcmp(cs->methods->CustomName, "WidecolSeek") != 0 || cs->scan.scanrelid != target)
		return;
	flags = lsecond(cs->custom_private);
	if (list_length(flags) < 4 || !lthird_int(flags) ||
		needs_old_rows(rt_fetch(target, stmt->rtable)->relid))
		return;
	/* the seek's fourth flag: write range tombstones */
	lfirst_int(list_nth_cell(flags, 3)) = true;
}

void
wc_plan_range_deletes(PlannedStmt *stmt)
{
	if (stmt->commandType == CMD_DELETE)
		plan_node(stmt, stmt->planTree);
}
