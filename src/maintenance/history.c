/*
 * history.c — one row in widecol.compaction_history per compaction and
 * per whole-run drop.
 *
 * Why a file of its own: the history is an operator-facing log, not part of
 * the storage; keeping its column layout here means the SQL table and the
 * C side change together in one place.  The row is inserted in the
 * compaction's own transaction, so a compaction that fails or rolls back
 * leaves no row, and one that commits always has one.  It is a plain heap
 * insert (no SPI): it works in a background worker and inside any caller's
 * transaction.  The background worker deletes rows older than
 * widecol.compaction_history_retention (wc_history_prune).
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "widecol.h"
#include "maintenance/maintenance.h"

enum
{
	Anum_h_relid = 1,
	Anum_h_relname,
	Anum_h_strategy,
	Anum_h_kind,
	Anum_h_started,
	Anum_h_finished,
	Anum_h_runs_in,
	Anum_h_runs_out,
	Anum_h_rows_in,
	Anum_h_rows_out,
	Anum_h_bytes_in,
	Anum_h_bytes_out,
	Anum_h_tombstones_purged,
	Anum_h_expired_purged,
	Anum_h_shadowed_dropped,
	Anum_h_runs_dropped_whole,
	Anum_h_by_worker,
	Natts_h = Anum_h_by_worker
};

int			wc_history_retention_s = 30 * 24 * 3600;

static Oid
history_relid(void)
{
	Oid			nsp = get_namespace_oid(WIDECOL_SCHEMA, true);

	return OidIsValid(nsp) ? get_relname_relid("compaction_history", nsp) : InvalidOid;
}

/*
 * Delete the rows that finished longer than the retention ago (with an
 * active snapshot; the worker calls it once per round).  Returns the rows
 * deleted.
 */
int64
wc_history_prune(void)
{
	Oid			relid = history_relid();
	Relation	hrel;
	TableScanDesc scan;
	HeapTuple	tup;
	TimestampTz cutoff;
	int64		n = 0;

	if (!OidIsValid(relid) || wc_history_retention_s <= 0)
		return 0;
	cutoff = GetCurrentTimestamp() - (int64) wc_history_retention_s * USECS_PER_SEC;
	hrel = table_open(relid, RowExclusiveLock);
	scan = table_beginscan(hrel, GetActiveSnapshot(), 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		bool		isnull;
		Datum		finished = heap_getattr(tup, Anum_h_finished, RelationGetDescr(hrel), &isnull);

		if (!isnull && DatumGetTimestampTz(finished) < cutoff)
		{
			simple_heap_delete(hrel, &tup->t_self);
			n++;
		}
	}
	table_endscan(scan);
	table_close(hrel, RowExclusiveLock);
	return n;
}

void
wc_history_record(Relation rel, const char *strategy, const WcCompactStats *st,
				  bool by_worker)
{
	Oid			relid = history_relid();
	Relation	hrel;
	Datum		v[Natts_h];
	bool		n[Natts_h] = {0};
	HeapTuple	tup;

	if (!OidIsValid(relid))
		return;					/* DROP EXTENSION in progress */
	hrel = table_open(relid, RowExclusiveLock);
	if (RelationGetDescr(hrel)->natts != Natts_h)
		elog(ERROR, "widecol.compaction_history has %d columns, expected %d",
			 RelationGetDescr(hrel)->natts, Natts_h);
	v[Anum_h_relid - 1] = ObjectIdGetDatum(RelationGetRelid(rel));
	v[Anum_h_relname - 1] = CStringGetTextDatum(quote_qualified_identifier(
																			get_namespace_name(RelationGetNamespace(rel)),
																			RelationGetRelationName(rel)));
	v[Anum_h_strategy - 1] = CStringGetTextDatum(strategy);
	v[Anum_h_kind - 1] = CStringGetTextDatum(st->kind);
	v[Anum_h_started - 1] = TimestampTzGetDatum(st->started);
	v[Anum_h_finished - 1] = TimestampTzGetDatum(GetCurrentTimestamp());
	v[Anum_h_runs_in - 1] = Int32GetDatum(st->runs_in);
	v[Anum_h_runs_out - 1] = Int32GetDatum(st->runs_out);
	v[Anum_h_rows_in - 1] = Int64GetDatum(st->rows_in);
	v[Anum_h_rows_out - 1] = Int64GetDatum(st->rows_out);
	v[Anum_h_bytes_in - 1] = Int64GetDatum(st->bytes_in);
	v[Anum_h_bytes_out - 1] = Int64GetDatum(st->bytes_out);
	v[Anum_h_tombstones_purged - 1] = Int64GetDatum(st->tombstones_purged);
	v[Anum_h_expired_purged - 1] = Int64GetDatum(st->expired_purged);
	v[Anum_h_shadowed_dropped - 1] = Int64GetDatum(st->shadowed_dropped);
	v[Anum_h_runs_dropped_whole - 1] = Int32GetDatum(st->runs_dropped_whole);
	v[Anum_h_by_worker - 1] = BoolGetDatum(by_worker);
	tup = heap_form_tuple(RelationGetDescr(hrel), v, n);
	CatalogTupleInsert(hrel, tup);	/* keeps any index a user added */
	table_close(hrel, RowExclusiveLock);
}
