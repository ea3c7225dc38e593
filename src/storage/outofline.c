/*
 * outofline.c — values too large for a row version, kept in the table's
 * TOAST relation.  See "Rows larger than a page" in src/README.md.
 *
 * A version must fit a page.  wc_form_row first compresses its largest
 * values in line; what still does not fit goes out of line, as heap does it:
 * toast_save_datum writes the value (lz4-compressed when that helped) in
 * chunks into the table's TOAST relation and the version keeps the 18-byte
 * pointer.  Readers detoast as they do for heap.  The version is flagged
 * WC_ROW_EXTERNAL and its run counts such versions (st.nexternal).
 *
 * Ownership: a pointer belongs to exactly one version.  Every write detoasts
 * what it is given (an UPDATE keeping a large value writes a fresh copy), so
 * no two versions share a value, and the value can be deleted when the
 * version goes for good: compaction deletes the values of the versions it
 * drops, a whole-run drop those of the run's flagged versions, VACUUM FULL
 * copies them into the new TOAST relation.  Compaction and flush move the
 * pointer, never the value: large values are written once (the key-value
 * separation of WiscKey), not once per level.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "access/toast_internals.h"
#include "utils/snapmgr.h"

#include "widecol.h"
#include "storage/row.h"

/*
 * Move the largest values of a row out of line until it fits (fixed bytes
 * of header and key plus the tuple's data); values is the row's own array,
 * changed in place.  Returns the new data length; *moved is set when a
 * value went out of line.
 */
Size
wc_move_values_out_of_line(Relation rel, Datum *values, bool *isnull, Size data_len,
						   Size fixed, bool *moved)
{
	TupleDesc	desc = RelationGetDescr(rel);

	*moved = false;
	if (!OidIsValid(rel->rd_rel->reltoastrelid))
		return data_len;		/* no column may hold a large value */
	while (fixed + data_len > WC_MAX_ROW_SIZE)
	{
		int			best = -1;
		Size		best_size = TOAST_POINTER_SIZE;

		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);
			struct varlena *v;

			if (isnull[i] || att->attlen != -1 || att->attstorage == TYPSTORAGE_PLAIN)
				continue;
			v = (struct varlena *) DatumGetPointer(values[i]);
			if (!VARATT_IS_EXTERNAL(v) && VARSIZE_ANY(v) > best_size)
			{
				best = i;
				best_size = VARSIZE_ANY(v);
			}
		}
		if (best < 0)
			break;
		values[best] = toast_save_datum(rel, values[best], NULL, 0);
		*moved = true;
		data_len = heap_compute_data_size(desc, values, isnull);
	}
	return data_len;
}

static bool
is_out_of_line(Form_pg_attribute att, bool isnull, Datum value)
{
	return !isnull && att->attlen == -1 &&
		VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(value));
}

/*
 * Delete the out-of-line values of a version that goes for good (no
 * snapshot can see it any more).  Not those of an aborted version: its
 * chunks rolled back with it, and the TOAST snapshot may still see them
 * (no hint bit yet), where deleting them would fail; VACUUM removes them.
 */
void
wc_row_free_out_of_line(Relation rel, const WcRowHeader *row)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Datum	   *values;
	bool	   *isnull;
	bool		pushed = false;

	if (!(row->flags & WC_ROW_EXTERNAL) || WcRowIsTombstone(row) ||
		wc_xid_known_aborted(row->xid))
		return;
	values = palloc(sizeof(Datum) * desc->natts);
	isnull = palloc(sizeof(bool) * desc->natts);
	wc_row_deform(rel, row, values, isnull);
	/* the TOAST index scan needs a snapshot (maintenance may have none) */
	if (!HaveRegisteredOrActiveSnapshot())
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		pushed = true;
	}
	for (int i = 0; i < desc->natts; i++)
		if (is_out_of_line(TupleDescAttr(desc, i), isnull[i], values[i]))
			toast_delete_datum(rel, values[i], false);
	if (pushed)
		PopActiveSnapshot();
	pfree(values);
	pfree(isnull);
}

/*
 * VACUUM FULL: a copy of the version for the new storage `to`.  Its
 * out-of-line values are written again into `to`'s TOAST relation (the old
 * one is dropped with the old storage), still compressed when they were;
 * and a tuple written before columns were added gets their defaults stored
 * (PostgreSQL forgets the defaults of added columns when a table is
 * rewritten, as heap's rewrite stores them too).
 */
WcRowHeader *
wc_row_copy_for_rewrite(Relation from, Relation to, const WcRowHeader *row)
{
	TupleDesc	desc = RelationGetDescr(from);
	Datum	   *values;
	bool	   *isnull;
	WcRowHeader *copy;

	if (WcRowIsTombstone(row) ||
		(!(row->flags & WC_ROW_EXTERNAL) &&
		 HeapTupleHeaderGetNatts(WcRowTuple(row)) >= desc->natts))
		return wc_row_copy(NULL, row);
	values = palloc(sizeof(Datum) * desc->natts);
	isnull = palloc(sizeof(bool) * desc->natts);
	wc_row_deform(from, row, values, isnull);
	for (int i = 0; i < desc->natts; i++)
		if (is_out_of_line(TupleDescAttr(desc, i), isnull[i], values[i]))
		{
			struct varlena *v = detoast_external_attr((struct varlena *) DatumGetPointer(values[i]));

			values[i] = toast_save_datum(to, PointerGetDatum(v), NULL, 0);
		}
	copy = wc_row_with_values(from, row, values, isnull);
	pfree(values);
	pfree(isnull);
	return copy;
}
