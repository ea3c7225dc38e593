/*
 * functions.c — SQL-callable functions of the widecol schema.
 */
#include "postgres.h"

#include "access/table.h"
#include "fmgr.h"
#include "utils/builtins.h"

#include "widecol.h"

static Relation
open_widecol(Oid relid, LOCKMODE mode)
{
	Relation	rel = table_open(relid, mode);

	if (!wc_relation_is_widecol(relid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a widecol table", RelationGetRelationName(rel))));
	return rel;
}

PG_FUNCTION_INFO_V1(widecol_flush);
Datum
widecol_flush(PG_FUNCTION_ARGS)
{
	Relation	rel = open_widecol(PG_GETARG_OID(0), RowExclusiveLock);
	int64		n = wc_flush(rel, true);

	table_close(rel, NoLock);
	PG_RETURN_INT64(n);
}

PG_FUNCTION_INFO_V1(widecol_storage_id);
Datum
widecol_storage_id(PG_FUNCTION_ARGS)
{
	Relation	rel = open_widecol(PG_GETARG_OID(0), AccessShareLock);
	WcMetaData	meta;

	wc_meta_read(rel, &meta);
	table_close(rel, AccessShareLock);
	PG_RETURN_INT64((int64) meta.storage_id);
}

PG_FUNCTION_INFO_V1(widecol_level0_pages);
Datum
widecol_level0_pages(PG_FUNCTION_ARGS)
{
	Relation	rel = open_widecol(PG_GETARG_OID(0), AccessShareLock);
	WcMetaData	meta;

	wc_meta_read(rel, &meta);
	table_close(rel, AccessShareLock);
	PG_RETURN_INT32((int32) meta.gens[meta.ngens - 1].npages);
}
