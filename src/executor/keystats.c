/*
 * executor/keystats.c — statistics of a never-analyzed table's partition key.
 *
 * Before ANALYZE the planner knows nothing of a column and takes 200
 * distinct values: an equality then selects 0.5% of the table and a join
 * on the key 0.5% of the product of both sides.  A heap with a unique
 * index is spared that (examine_variable asks has_unique_index); a widecol
 * table's runs count their partitions instead.  For a table whose
 * partition key is one column, get_relation_stats_hook hands the planner a
 * pg_statistic row made from them (no MCV, no histogram): distinct values
 * = the largest partition count of any run (a lower bound that compaction
 * makes exact), or "all distinct" when there is no clustering key (the
 * partition key is then the primary key).  Real statistics, once there,
 * are never replaced.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_statistic.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "widecol.h"
#include "executor/seek.h"
#include "storage/manifest.h"
#include "storage/merge.h"
#include "storage/metapage.h"
#include "storage/tableinfo.h"

static get_relation_stats_hook_type prev_get_relation_stats = NULL;

static void
free_made_stats(HeapTuple tup)
{
	heap_freetuple(tup);
}

/* stadistinct of the table's partition key from its runs; 0: unknown. */
static float4
partition_key_distinct(Relation rel, WcTableInfo *info)
{
	WcMetaData	meta;
	WcManifest *m;
	double		most;

	wc_merge_read_manifest(rel, GetCatalogSnapshot(RelationGetRelid(rel)), &meta, &m);
	most = wc_manifest_most_partitions(m);
	if (most == 0)
		return 0;
	return info->nck == 0 ? -1.0 : (float4) most;
}

/* A pg_statistic row saying only how many distinct values (no MCV, no histogram). */
static HeapTuple
made_stats(Oid relid, AttrNumber attnum, float4 distinct)
{
	Relation	statrel = table_open(StatisticRelationId, AccessShareLock);
	Datum		values[Natts_pg_statistic] = {0};
	bool		nulls[Natts_pg_statistic] = {0};
	HeapTuple	tup;

	values[Anum_pg_statistic_starelid - 1] = ObjectIdGetDatum(relid);
	values[Anum_pg_statistic_staattnum - 1] = Int16GetDatum(attnum);
	values[Anum_pg_statistic_stainherit - 1] = BoolGetDatum(false);
	values[Anum_pg_statistic_stanullfrac - 1] = Float4GetDatum(0);	/* keys are never NULL */
	values[Anum_pg_statistic_stawidth - 1] =
		Int32GetDatum(get_typavgwidth(get_atttype(relid, attnum), -1));
	values[Anum_pg_statistic_stadistinct - 1] = Float4GetDatum(distinct);
	for (int k = 0; k < STATISTIC_NUM_SLOTS; k++)
	{
		values[Anum_pg_statistic_stakind1 - 1 + k] = Int16GetDatum(0);
		values[Anum_pg_statistic_staop1 - 1 + k] = ObjectIdGetDatum(InvalidOid);
		values[Anum_pg_statistic_stacoll1 - 1 + k] = ObjectIdGetDatum(InvalidOid);
		nulls[Anum_pg_statistic_stanumbers1 - 1 + k] = true;
		nulls[Anum_pg_statistic_stavalues1 - 1 + k] = true;
	}
	tup = heap_form_tuple(RelationGetDescr(statrel), values, nulls);
	table_close(statrel, AccessShareLock);
	return tup;
}

static bool
wc_get_relation_stats(PlannerInfo *root, RangeTblEntry *rte, AttrNumber attnum,
					  VariableStatData *vardata)
{
	Relation	rel;
	WcTableInfo *info;
	float4		distinct = 0;

	if (prev_get_relation_stats && prev_get_relation_stats(root, rte, attnum, vardata))
		return true;
	if (rte->rtekind != RTE_RELATION || rte->inh || attnum <= 0 ||
		!wc_relation_is_widecol(rte->relid))
		return false;
	/* statistics of its own: the planner reads them as usual */
	if (SearchSysCacheExists3(STATRELATTINH, ObjectIdGetDatum(rte->relid),
							  Int16GetDatum(attnum), BoolGetDatum(false)))
		return false;

	rel = table_open(rte->relid, NoLock);
	info = wc_table_info(rel);
	if (!WcTableIsKeyless(info) && info->npk == 1 && info->cols[0].attnum == attnum)
		distinct = partition_key_distinct(rel, info);
	table_close(rel, NoLock);
	if (distinct == 0)
		return false;

	vardata->statsTuple = made_stats(rte->relid, attnum, distinct);
	vardata->freefunc = free_made_stats;
	vardata->acl_ok = true;		/* a count, no value of the column */
	return true;
}

void
wc_install_key_stats_hook(void)
{
	prev_get_relation_stats = get_relation_stats_hook;
	get_relation_stats_hook = wc_get_relation_stats;
}
