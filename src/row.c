/*
 * row.c — row versions: forming them, ordering them, and deciding whether a
 * snapshot sees them.  See "Row versions" and "MVCC" in src/README.md.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/transam.h"
#include "access/xact.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"

#include "widecol.h"

/*
 * Build a version of the row in `slot` (or a tombstone) with the given key.
 * Values are detoasted: widecol has no TOAST table.
 */
WcRowHeader *
wc_form_row(Relation rel, TupleTableSlot *slot, const char *key, int keylen,
			int pklen, bool tombstone, CommandId cid)
{
	MinimalTuple mt = NULL;
	Size		len = WcRowTupleOffset(keylen);
	WcRowHeader *row;
	WcTableInfo *info = wc_table_info(rel);

	if (!tombstone)
	{
		TupleDesc	desc = RelationGetDescr(rel);
		Datum	   *values = palloc(sizeof(Datum) * desc->natts);

		slot_getallattrs(slot);
		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);

			values[i] = slot->tts_values[i];
			if (att->attlen == -1 && !slot->tts_isnull[i])
			{
				struct varlena *v = (struct varlena *) DatumGetPointer(values[i]);

				if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
					values[i] = PointerGetDatum(detoast_attr(v));
			}
		}
		mt = heap_form_minimal_tuple(desc, values, slot->tts_isnull);
		len += mt->t_len;
		pfree(values);
	}
	if (len > WC_MAX_ROW_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("row of %zu bytes is too large for widecol table \"%s\"",
						len, RelationGetRelationName(rel)),
				 errdetail("A widecol row version can be at most %zu bytes after detoasting.",
						   (Size) WC_MAX_ROW_SIZE),
				 errhint("Keep large values (images, documents) in object storage and store their keys.")));

	row = palloc0(len);
	row->write_ts = wc_next_write_ts();
	row->expire_at = (info->default_ttl_us > 0 && !tombstone) ?
		row->write_ts + info->default_ttl_us : 0;
	row->xid = GetCurrentTransactionId();
	row->cid = cid;
	row->len = len;
	row->keylen = keylen;
	row->pklen = pklen;
	row->flags = tombstone ? WC_ROW_TOMBSTONE : 0;
	memcpy(WcRowKey(row), key, keylen);
	if (mt)
	{
		memcpy(WcRowTuple(row), mt, mt->t_len);
		pfree(mt);
	}
	return row;
}

int
wc_compare_keys(const char *a, int alen, const char *b, int blen)
{
	int			r = memcmp(a, b, Min(alen, blen));

	if (r != 0)
		return r;
	return (alen > blen) - (alen < blen);
}

/* < 0 when a is the newer version (so that sorting puts newest first). */
int
wc_compare_versions(const WcRowHeader *a, const WcRowHeader *b)
{
	if (a->write_ts != b->write_ts)
		return a->write_ts > b->write_ts ? -1 : 1;
	if (a->xid != b->xid)
		return a->xid > b->xid ? -1 : 1;
	if (a->cid != b->cid)
		return a->cid > b->cid ? -1 : 1;
	return 0;
}

/* Storage order: key ascending, then newest version first. */
int
wc_compare_rows(const WcRowHeader *a, const WcRowHeader *b)
{
	int			r = wc_compare_keys(WcRowKey(a), a->keylen, WcRowKey(b), b->keylen);

	return r != 0 ? r : wc_compare_versions(a, b);
}

/* Does the snapshot see this version?  Mirrors heap's rules for xmin. */
bool
wc_version_visible(const WcRowHeader *row, Snapshot snapshot)
{
	TransactionId xid = row->xid;

	if (snapshot->snapshot_type == SNAPSHOT_ANY)
		return true;
	if (!TransactionIdIsNormal(xid))
		return xid == FrozenTransactionId || xid == BootstrapTransactionId;

	switch (snapshot->snapshot_type)
	{
		case SNAPSHOT_MVCC:
			if (TransactionIdIsCurrentTransactionId(xid))
				return row->cid < snapshot->curcid;
			if (XidInMVCCSnapshot(xid, snapshot))
				return false;
			return TransactionIdDidCommit(xid);
		case SNAPSHOT_SELF:
			if (TransactionIdIsCurrentTransactionId(xid))
				return true;
			if (TransactionIdIsInProgress(xid))
				return false;
			return TransactionIdDidCommit(xid);
		case SNAPSHOT_DIRTY:
			if (TransactionIdIsCurrentTransactionId(xid))
				return true;
			if (TransactionIdIsInProgress(xid))
			{
				snapshot->xmin = xid;
				return true;
			}
			return TransactionIdDidCommit(xid);
		default:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("widecol does not support snapshot type %d",
							(int) snapshot->snapshot_type)));
	}
	return false;
}

/* A tombstone or an expired version: the key is absent. */
bool
wc_row_is_dead(const WcRowHeader *row, int64 now)
{
	return WcRowIsTombstone(row) || (row->expire_at != 0 && row->expire_at <= now);
}

/* True only when the xid certainly aborted (or crashed). */
bool
wc_xid_known_aborted(TransactionId xid)
{
	if (!TransactionIdIsNormal(xid))
		return false;
	if (TransactionIdIsCurrentTransactionId(xid) || TransactionIdIsInProgress(xid))
		return false;
	return !TransactionIdDidCommit(xid);
}
