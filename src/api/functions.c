/*
 * functions.c — SQL-callable functions of the widecol schema.
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"

#include "widecol.h"
#include "access/access.h"
#include "api/api.h"
#include "maintenance/damage.h"
#include "maintenance/maintenance.h"
#include "storage/cache.h"
#include "storage/keyenc.h"
#include "storage/manifest.h"
#include "storage/metapage.h"
#include "storage/row.h"
#include "storage/tableinfo.h"

/*
 * May the current user read what the rows of relid hold, or figures derived
 * from them, through a function?  It needs SELECT on the table, and no
 * row-level security policy may apply to it: such functions read the
 * storage, not the rows a policy lets through, so they refuse rather than
 * count or show hidden rows.
 */
void
wc_check_row_access(Oid relid, const char *function)
{
	const char *name = get_rel_name(relid) ? get_rel_name(relid) : "?";

	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, name);
	if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s does not apply the row-level security policies of table \"%s\"", function, name),
				 errhint("Query the table itself, or call it as a role that bypasses row-level security (the table owner, or a role with BYPASSRLS).")));
}

/*
 * Open a widecol table for a SQL function: maintenance (flush) needs
 * ownership, reading its storage or figures of its rows needs SELECT (and
 * no row-level security policy that applies; see wc_check_row_access).
 */
Relation
wc_open_widecol(FunctionCallInfo fcinfo, LOCKMODE mode, bool owner)
{
	return wc_open_widecol_oid(fcinfo, PG_GETARG_OID(0), mode, owner);
}

/*
 * The widecol tables the first argument stands for: the table itself, or
 * the widecol partitions of a partitioned table (at any depth).
 */
List *
wc_widecol_members(FunctionCallInfo fcinfo)
{
	Oid			relid = PG_GETARG_OID(0);
	List	   *members = NIL;
	ListCell   *lc;

	if (get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return list_make1_oid(relid);
	foreach(lc, find_all_inheritors(relid, AccessShareLock, NULL))
		if (wc_relation_is_widecol(lfirst_oid(lc)))
			members = lappend_oid(members, lfirst_oid(lc));
	if (members == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("partitioned table \"%s\" has no widecol partitions", get_rel_name(relid))));
	return members;
}

Relation
wc_open_widecol_oid(FunctionCallInfo fcinfo, Oid relid, LOCKMODE mode, bool owner)
{
	Relation	rel;

	if (owner && !pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE,
					   get_rel_name(relid) ? get_rel_name(relid) : "?");
	if (!owner)
		wc_check_row_access(relid, psprintf("widecol.%s()", get_func_name(fcinfo->flinfo->fn_oid)));
	rel = table_open(relid, mode);
	if (!wc_relation_is_widecol(relid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a widecol table", RelationGetRelationName(rel))));
	return rel;
}

/* ---------- what functions return ---------- */

/*
 * Begin a set-returning function over its first argument, a widecol table
 * opened to read (wc_open_widecol); its rows go in with wc_srf_put.
 */
Relation
wc_srf_open_widecol(FunctionCallInfo fcinfo)
{
	InitMaterializedSRF(fcinfo, 0);
	return wc_open_widecol(fcinfo, AccessShareLock, false);
}

/* One more row of a set-returning function's result. */
void
wc_srf_put(FunctionCallInfo fcinfo, Datum *values, bool *nulls)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* The one row a function returns, of its declared row type. */
Datum
wc_result_row(FunctionCallInfo fcinfo, Datum *values, bool *nulls)
{
	TupleDesc	desc;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	return HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls));
}

/* Read the table's metapage, and its manifest as the caller's snapshot sees it. */
WcManifest *
wc_visible_manifest(Relation rel, WcMetaData *meta)
{
	wc_meta_read(rel, meta);
	return wc_manifest_read(meta->storage_id, GetActiveSnapshot());
}

PG_FUNCTION_INFO_V1(widecol_flush);
Datum
widecol_flush(PG_FUNCTION_ARGS)
{
	int64		n = 0;
	ListCell   *lc;

	foreach(lc, wc_widecol_members(fcinfo))
	{
		Relation	rel = wc_open_widecol_oid(fcinfo, lfirst_oid(lc), RowExclusiveLock, true);

		n += wc_flush(rel, true);
		table_close(rel, NoLock);
	}
	PG_RETURN_INT64(n);
}

PG_FUNCTION_INFO_V1(widecol_compact);
Datum
widecol_compact(PG_FUNCTION_ARGS)
{
	bool		major = PG_NARGS() > 1 && !PG_ARGISNULL(1) && PG_GETARG_BOOL(1);
	int64		n = 0;
	ListCell   *lc;

	foreach(lc, wc_widecol_members(fcinfo))
	{
		Relation	rel = wc_open_widecol_oid(fcinfo, lfirst_oid(lc), RowExclusiveLock, true);

		wc_damage_refuse(rel, "cannot compact");
		n += wc_maintain(rel, major ? WC_MAINTAIN_MAJOR : WC_MAINTAIN_STRATEGY, false, NULL);
		table_close(rel, NoLock);
	}
	PG_RETURN_INT64(n);
}

PG_FUNCTION_INFO_V1(widecol_garbagecollect);
Datum
widecol_garbagecollect(PG_FUNCTION_ARGS)
{
	int64		n = 0;
	ListCell   *lc;

	foreach(lc, wc_widecol_members(fcinfo))
	{
		Relation	rel = wc_open_widecol_oid(fcinfo, lfirst_oid(lc), RowExclusiveLock, true);

		wc_damage_refuse(rel, "cannot garbage-collect");
		n += wc_maintain(rel, WC_MAINTAIN_GARBAGECOLLECT, false, NULL);
		table_close(rel, NoLock);
	}
	PG_RETURN_INT64(n);
}

PG_FUNCTION_INFO_V1(widecol_storage_id);
Datum
widecol_storage_id(PG_FUNCTION_ARGS)
{
	Relation	rel = wc_open_widecol(fcinfo, AccessShareLock, false);
	WcMetaData	meta;

	wc_meta_read(rel, &meta);
	table_close(rel, AccessShareLock);
	PG_RETURN_INT64((int64) meta.storage_id);
}

PG_FUNCTION_INFO_V1(widecol_level0_pages);
Datum
widecol_level0_pages(PG_FUNCTION_ARGS)
{
	Relation	rel = wc_open_widecol(fcinfo, AccessShareLock, false);
	WcMetaData	meta;
	WcManifest *m = wc_visible_manifest(rel, &meta);
	int32		pages = 0;

	/* every generation a read with our snapshot reads (a failed flush leaves several) */
	for (uint32 g = 0; g < meta.ngens; g++)
		if (!wc_manifest_gen_retired(m, meta.gens[g].gen))
			pages += meta.gens[g].npages;
	table_close(rel, AccessShareLock);
	PG_RETURN_INT32(pages);
}

/* qsort order of WcRunSummary by run id */
int
wc_run_id_cmp(const void *a, const void *b)
{
	uint64		x = ((const WcRunSummary *) a)->run_id;
	uint64		y = ((const WcRunSummary *) b)->run_id;

	return (x > y) - (x < y);
}

/* The table's range tombstones the caller's snapshot sees. */
PG_FUNCTION_INFO_V1(widecol_range_tombstones);
Datum
widecol_range_tombstones(PG_FUNCTION_ARGS)
{
	Relation	rel = wc_srf_open_widecol(fcinfo);
	WcMetaData	meta;
	WcManifest *m = wc_visible_manifest(rel, &meta);

	for (int i = 0; i < m->nrts; i++)
	{
		WcRangeTombstone *rt = &m->rts[i];
		Datum		v[4];
		bool		n[4] = {0};

		v[0] = CStringGetTextDatum(wc_describe_partition(rel, wc_table_info(rel), rt->pk, rt->pklen));
		v[1] = BoolGetDatum(rt->lo == NULL && rt->hi == NULL);
		v[2] = Int64GetDatum(rt->nrows);
		v[3] = TimestampTzGetDatum(rt->write_ts);
		wc_srf_put(fcinfo, v, n);
	}
	table_close(rel, AccessShareLock);
	return (Datum) 0;
}

/* The runs the caller's snapshot sees, with their summaries. */
PG_FUNCTION_INFO_V1(widecol_runs);
Datum
widecol_runs(PG_FUNCTION_ARGS)
{
	Relation	rel = wc_srf_open_widecol(fcinfo);
	WcMetaData	meta;
	WcManifest *m = wc_visible_manifest(rel, &meta);

	qsort(m->runs, m->nruns, sizeof(WcRunSummary), wc_run_id_cmp);
	for (int i = 0; i < m->nruns; i++)
	{
		WcRunSummary *r = &m->runs[i];
		Datum		v[11];
		bool		n[11] = {0};

		v[0] = Int64GetDatum((int64) r->run_id);
		v[1] = Int32GetDatum(r->level);
		v[2] = Int64GetDatum(r->npages);
		v[3] = Int64GetDatum(r->st.nrows);
		v[4] = Int64GetDatum(r->st.ntombstones);
		v[5] = Int64GetDatum(r->st.npartitions);
		v[6] = Int64GetDatum(r->st.raw_bytes);
		v[7] = Int64GetDatum(r->st.compressed_bytes);
		v[8] = TimestampTzGetDatum(r->st.min_write_ts);
		v[9] = TimestampTzGetDatum(r->st.max_write_ts);
		v[10] = Int64GetDatum(r->st.nexternal);
		wc_srf_put(fcinfo, v, n);
	}
	table_close(rel, AccessShareLock);
	return (Datum) 0;
}

/*
 * The version a TID names, read for WRITETIME/TTL: the caller passes the
 * row's tableoid and ctid, so no key lookup is needed.  NULL when the TID
 * names no version (it came from another table, or its page was reused).
 */
static WcRowHeader *
version_at(FunctionCallInfo fcinfo)
{
	Relation	rel = wc_open_widecol(fcinfo, AccessShareLock, false);
	WcRowHeader *row = wc_fetch_version_key(rel, (ItemPointer) PG_GETARG_POINTER(1));

	table_close(rel, AccessShareLock);
	return row;
}

/* Cassandra's WRITETIME(): when this version was written. */
PG_FUNCTION_INFO_V1(widecol_writetime);
Datum
widecol_writetime(PG_FUNCTION_ARGS)
{
	WcRowHeader *row = version_at(fcinfo);

	if (row == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMPTZ((TimestampTz) row->write_ts);
}

/* Cassandra's TTL(): time left before this version expires; NULL = never. */
PG_FUNCTION_INFO_V1(widecol_ttl);
Datum
widecol_ttl(PG_FUNCTION_ARGS)
{
	WcRowHeader *row = version_at(fcinfo);
	Interval   *left;
	int64		us;

	if (row == NULL || row->expire_at == 0)
		PG_RETURN_NULL();
	us = Max(row->expire_at - wc_now(), 0);
	left = palloc0(sizeof(Interval));
	left->time = us - us % USECS_PER_SEC;	/* whole seconds, as Cassandra */
	PG_RETURN_INTERVAL_P(left);
}

/* widecol.damage(rel): the table's damaged segments (maintenance/damage.c). */
PG_FUNCTION_INFO_V1(widecol_damage);
Datum
widecol_damage(PG_FUNCTION_ARGS)
{
	Relation	rel = wc_srf_open_widecol(fcinfo);
	ListCell   *lc;

	foreach(lc, wc_damage_list(rel))
	{
		WcDamage   *d = lfirst(lc);
		Datum		v[5];
		bool		n[5] = {0};

		v[0] = CStringGetTextDatum(d->segment);
		v[1] = Int64GetDatum((int64) d->id);
		v[2] = Int64GetDatum((int64) d->block);
		n[2] = d->block == InvalidBlockNumber;
		v[3] = CStringGetTextDatum(d->problem);
		v[4] = TimestampTzGetDatum(d->found);
		wc_srf_put(fcinfo, v, n);
	}
	table_close(rel, AccessShareLock);
	return (Datum) 0;
}

/* widecol.backend_caches(): this backend's caches and what they did. */
PG_FUNCTION_INFO_V1(widecol_backend_caches);
Datum
widecol_backend_caches(PG_FUNCTION_ARGS)
{
	WcCacheStats st[16];
	int			n = wc_cache_stats(st, lengthof(st));

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < n; i++)
	{
		Datum		v[7];
		bool		nulls[7] = {0};

		v[0] = CStringGetTextDatum(st[i].name);
		v[1] = Int64GetDatum(st[i].entries);
		v[2] = Int64GetDatum(st[i].bytes);
		v[3] = Int64GetDatum(st[i].limit_bytes);
		v[4] = Int64GetDatum(st[i].hits);
		v[5] = Int64GetDatum(st[i].misses);
		v[6] = Int64GetDatum(st[i].evictions);
		wc_srf_put(fcinfo, v, nulls);
	}
	return (Datum) 0;
}
