/*
 * row.c — row versions: forming them, ordering them, and deciding whether a
 * snapshot sees them.  See "Row versions" and "MVCC" in src/README.md.
 */
#include "postgres.h"

#include <sys/mman.h>

#include "access/detoast.h"
#include "access/toast_compression.h"
#include "access/toast_internals.h"
#include "access/htup_details.h"
#include "common/int.h"
#include "miscadmin.h"
#include "port/pg_bswap.h"
#include "access/transam.h"
#include "access/xact.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"

#include "widecol.h"
#include "storage/keyenc.h"
#include "storage/metapage.h"
#include "storage/row.h"
#include "storage/tableinfo.h"

/*
 * The slot's values, detoasted: a version never shares an out-of-line
 * value with another (outofline.c).  A copy of the array only when
 * something is toasted.
 */
static Datum *
detoasted_values(TupleTableSlot *slot, TupleDesc desc, bool *hasnull)
{
	Datum	   *values;

	slot_getallattrs(slot);
	values = slot->tts_values;
	for (int i = 0; i < desc->natts; i++)
	{
		struct varlena *v;

		if (slot->tts_isnull[i])
		{
			*hasnull = true;
			continue;
		}
		if (TupleDescAttr(desc, i)->attlen != -1)
			continue;
		v = (struct varlena *) DatumGetPointer(values[i]);
		if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
		{
			if (values == slot->tts_values)
			{
				values = palloc(sizeof(Datum) * desc->natts);
				memcpy(values, slot->tts_values, sizeof(Datum) * desc->natts);
			}
			values[i] = PointerGetDatum(detoast_attr(v));
		}
	}
	return values;
}

/* The column's COMPRESSION, else lz4 (as the runs), else the default. */
static char
wc_value_compression(Form_pg_attribute att)
{
	if (CompressionMethodIsValid(att->attcompression))
		return att->attcompression;
#ifdef USE_LZ4
	return TOAST_LZ4_COMPRESSION;
#else
	return default_toast_compression;
#endif
}

/*
 * A row too large for a page: compress its largest values in line, as
 * TOAST's first step does (PostgreSQL's own compressed varlena format, which
 * every reader of the value decompresses transparently), largest first,
 * until the row fits (what still does not fit goes out of line next).
 * values is the row's own array, changed in place.  Returns the new data
 * length.
 */
static Size
compress_large_values(TupleDesc desc, Datum *values, bool *isnull, Size data_len,
					  Size fixed)
{
	bool	   *tried = palloc0(sizeof(bool) * desc->natts);

	while (fixed + data_len > WC_MAX_ROW_SIZE)
	{
		int			best = -1;
		Size		best_size = 32;
		Datum		compressed;

		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);

			if (isnull[i] || tried[i] || att->attlen != -1 ||
				att->attstorage == TYPSTORAGE_PLAIN)
				continue;
			if (VARSIZE_ANY(values[i]) > best_size)
			{
				best = i;
				best_size = VARSIZE_ANY(values[i]);
			}
		}
		if (best < 0)
			break;
		tried[best] = true;
		compressed = toast_compress_datum(values[best],
										  wc_value_compression(TupleDescAttr(desc, best)));
		if (DatumGetPointer(compressed) == NULL)
			continue;			/* incompressible */
		values[best] = compressed;
		data_len = heap_compute_data_size(desc, values, isnull);
	}
	pfree(tried);
	return data_len;
}

/*
 * A MinimalTuple formed in place (as heap_form_minimal_tuple forms one in
 * memory of its own): tuple_hoff is its header's size, mt has room for
 * hoff + data_len bytes (heap_compute_data_size).
 */
static Size
tuple_hoff(TupleDesc desc, bool hasnull)
{
	return MAXALIGN(SizeofMinimalTupleHeader + (hasnull ? BITMAPLEN(desc->natts) : 0));
}

static void
fill_tuple(MinimalTuple mt, TupleDesc desc, Datum *values, bool *isnull, bool hasnull,
		   Size hoff, Size data_len)
{
	/* heap_fill_tuple leaves alignment padding alone; deforming needs zeros */
	memset(mt, 0, hoff + data_len);
	mt->t_len = hoff + data_len;
	HeapTupleHeaderSetNatts(mt, desc->natts);
	mt->t_hoff = hoff + MINIMAL_TUPLE_OFFSET;
	heap_fill_tuple(desc, values, isnull, (char *) mt + hoff, data_len,
					&mt->t_infomask, hasnull ? mt->t_bits : NULL);
}

/*
 * Build a version of the row in `slot` (or a tombstone) with the given key,
 * written at write_ts (WC_WRITE_TS_NEXT: the table's clock's next time).
 * Values are detoasted; a row larger than a page has its largest values
 * compressed, then moved out of line (outofline.c), until it fits.
 */
WcRowHeader *
wc_form_row(Relation rel, TupleTableSlot *slot, const char *key, int keylen,
			int pklen, bool tombstone, CommandId cid, int64 write_ts)
{
	return wc_form_row_in(rel, slot, key, keylen, pklen, tombstone, cid, write_ts, NULL, NULL);
}

/*
 * A bulk write forms each row where it buffers it (a palloc, a copy and a
 * pfree less per row of a COPY).
 */
WcRowHeader *
wc_form_row_in(Relation rel, TupleTableSlot *slot, const char *key, int keylen,
			   int pklen, bool tombstone, CommandId cid, int64 write_ts,
			   WcRowAllocator alloc, void *arg)
{
	Size		off = WcRowTupleOffset(keylen);
	int64		ttl_us;
	Size		len = off;
	Size		data_len = 0,
				hoff = 0;
	bool		hasnull = false;
	bool		external = false;
	TupleDesc	desc = RelationGetDescr(rel);
	Datum	   *values = NULL;
	bool	   *isnull = NULL;
	WcRowHeader *row;
	WcTableInfo *info = wc_table_info(rel);
	bool		nulls[MaxTupleAttributeNumber];

	if (!tombstone)
	{
		values = detoasted_values(slot, desc, &hasnull);
		isnull = slot->tts_isnull;
		/* key columns live in the key only: NULL in the stored tuple */
		if (!WcTableIsKeyless(info))
		{
			memcpy(nulls, isnull, sizeof(bool) * desc->natts);
			for (int i = 0; i < info->npk + info->nck; i++)
				nulls[info->cols[i].attnum - 1] = true;
			isnull = nulls;
			hasnull = true;
		}
		/* the MinimalTuple is formed in place (fill_tuple) */
		hoff = tuple_hoff(desc, hasnull);
		data_len = heap_compute_data_size(desc, values, isnull);
		if (len + hoff + data_len > WC_MAX_ROW_SIZE)
		{
			/* values to replace: the row's own array */
			if (values == slot->tts_values)
			{
				values = palloc(sizeof(Datum) * desc->natts);
				memcpy(values, slot->tts_values, sizeof(Datum) * desc->natts);
			}
			data_len = compress_large_values(desc, values, isnull, data_len, len + hoff);
			if (len + hoff + data_len > WC_MAX_ROW_SIZE)
				data_len = wc_move_values_out_of_line(rel, values, isnull, data_len,
													  len + hoff, &external);
		}
		len += hoff + data_len;
	}
	if (len > WC_MAX_ROW_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("row of %zu bytes is too large for widecol table \"%s\"",
						len, RelationGetRelationName(rel)),
				 errdetail("A widecol row version can be at most %zu bytes once its large values are compressed or moved out of line.",
						   (Size) WC_MAX_ROW_SIZE),
				 errhint("Values of columns with STORAGE PLAIN, and all values of a table created without a TOAST table, stay in line.")));

	row = alloc ? alloc(arg, len) : palloc(len);
	memset(row, 0, off);
	row->write_ts = write_ts == WC_WRITE_TS_NEXT ? wc_meta_write_ts(rel) : write_ts;
	ttl_us = wc_write_ttl >= 0 ? (int64) wc_write_ttl * USECS_PER_SEC : info->default_ttl_us;
	row->expire_at = (ttl_us > 0 && !tombstone) ? row->write_ts + ttl_us : 0;
	row->xid = GetCurrentTransactionId();
	row->cid = cid;
	row->len = len;
	row->keylen = keylen;
	row->pklen = pklen;
	row->tupoff = off;
	row->flags = tombstone ? WC_ROW_TOMBSTONE : 0;
	if (external)
		row->flags |= WC_ROW_EXTERNAL;
	/* a blind write to a counter table adds (UPDATE clears this: it sets) */
	if (!tombstone && info->ncounters > 0)
		row->flags |= WC_ROW_DELTA;
	memcpy(WcRowKey(row), key, keylen);
	if (!tombstone)
	{
		fill_tuple(WcRowTuple(row), desc, values, isnull, hasnull, hoff, data_len);
		if (values != slot->tts_values)
			pfree(values);
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

/*
 * < 0 when a is the newer version (so that sorting puts newest first); 0 only
 * for the same version (write_ts, xid, cid identify a version of a key).
 */
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

/*
 * Is b the same version as a?  Compaction freezes xids, so a frozen copy is
 * the same version as its original: compare write times then.
 */
bool
wc_same_version(const WcRowHeader *a, const WcRowHeader *b)
{
	if (a->write_ts != b->write_ts)
		return false;
	if (a->xid == FrozenTransactionId || b->xid == FrozenTransactionId)
		return true;
	return a->xid == b->xid && a->cid == b->cid;
}

/*
 * A version's header and key without its tuple (a run's value pages are not
 * read), for readers that need the key and version identity only.
 */
WcRowHeader *
wc_row_copy_key(const WcRowHeader *row)
{
	Size		off = WcRowTupleOffset(row->keylen);
	WcRowHeader *copy = palloc0(off);

	memcpy(copy, row, Min(row->len, off));
	copy->len = off;
	copy->flags &= ~WC_ROW_IN_BLOCK;
	return copy;
}

/*
 * A contiguous copy of a version (its tuple may live apart from its header
 * in a decoded run block): into dst (row->len bytes), or palloc'd.
 */
WcRowHeader *
wc_row_copy(WcRowHeader *dst, const WcRowHeader *row)
{
	Size		off = WcRowTupleOffset(row->keylen);

	if (dst == NULL)
		dst = palloc(row->len);
	if (row->len <= off)
		memcpy(dst, row, row->len);	/* a tombstone: header and key */
	else
	{
		memcpy((char *) dst + off, WcRowTuple(row), row->len - off);
		memcpy(dst, row, off);
	}
	dst->tupoff = off;
	dst->flags &= ~WC_ROW_IN_BLOCK;
	dst->blockoff = 0;
	return dst;
}

/* Storage order: key ascending, then newest version first. */
int
wc_compare_rows(const WcRowHeader *a, const WcRowHeader *b)
{
	int			r = wc_compare_keys(WcRowKey(a), a->keylen, WcRowKey(b), b->keylen);

	return r != 0 ? r : wc_compare_versions(a, b);
}

/*
 * Sorting many versions: compare a 24-byte abbreviation of the key held in
 * the sort array first, so that most comparisons touch no row (rows are
 * scattered in memory; chasing their pointers dominated bulk loads).
 */
typedef struct SortEntry
{
	uint64		a;
	uint64		b;
	uint64		c;
	WcRowHeader *row;
	int64		idx;
} SortEntry;

static inline uint64
load_be64(const char *p, int avail)
{
	unsigned char buf[8] = {0};

	if (avail >= 8)
	{
		uint64		v;

		memcpy(&v, p, 8);
		return pg_ntoh64(v);
	}

	memcpy(buf, p, Max(0, Min(avail, 8)));
	return ((uint64) buf[0] << 56) | ((uint64) buf[1] << 48) |
		((uint64) buf[2] << 40) | ((uint64) buf[3] << 32) |
		((uint64) buf[4] << 24) | ((uint64) buf[5] << 16) |
		((uint64) buf[6] << 8) | (uint64) buf[7];
}

static inline int
sort_entry_cmp(const SortEntry *a, const SortEntry *b)
{
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	if (a->c != b->c)
		return a->c < b->c ? -1 : 1;
	return wc_compare_rows(a->row, b->row);
}

/*
 * PostgreSQL's sort template with the comparison inlined: qsort called
 * sort_entry_cmp through a pointer for every comparison (pg_qsort and the
 * comparator were 4% of a COPY).
 */
#define ST_SORT sort_entries
#define ST_ELEMENT_TYPE SortEntry
#define ST_COMPARE(a, b) sort_entry_cmp(a, b)
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

#define WC_HUGE_PAGE ((uintptr_t) 2 * 1024 * 1024)

/*
 * A large allocation in cxt, asked to be backed by huge pages where the
 * kernel offers them on request (transparent_hugepage = madvise, as on this
 * project's machines): filling fresh memory one 4 kB page fault at a time
 * cost bulk writes several percent of their time (perf).
 */
void *
wc_alloc_huge(MemoryContext cxt, Size size)
{
	char	   *a = MemoryContextAllocHuge(cxt, size);

#if defined(MADV_HUGEPAGE)
	if (size >= 4 * WC_HUGE_PAGE)
	{
		uintptr_t	start = TYPEALIGN(WC_HUGE_PAGE, (uintptr_t) a);
		uintptr_t	end = TYPEALIGN_DOWN(WC_HUGE_PAGE, (uintptr_t) a + size);

		/* advice only: nothing to do if it is not taken */
		if (end > start)
			(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
	}
#endif
	return a;
}

/*
 * Groups smaller than this go to the comparison sort; larger ones are
 * split by one byte of the abbreviation at a time.
 */
#define RADIX_MIN 64
#define ABBREV_BYTES 24

/* Byte d (0: the most significant) of the 24 bytes a, b, c. */
static inline int
abbrev_byte(uint64 a, uint64 b, uint64 c, int d)
{
	uint64		w = d < 8 ? a : d < 16 ? b : c;

	return (int) ((w >> (56 - 8 * (d & 7))) & 0xFF);
}

/* The first byte from d on where e[0, n) differ, or ABBREV_BYTES. */
static int
first_differing_byte(const SortEntry *e, int64 n, int d)
{
	uint64		da = 0,
				db = 0,
				dc = 0;

	for (int64 i = 1; i < n; i++)
	{
		da |= e[i].a ^ e[0].a;
		db |= e[i].b ^ e[0].b;
		dc |= e[i].c ^ e[0].c;
	}
	while (d < ABBREV_BYTES && abbrev_byte(da, db, dc, d) == 0)
		d++;
	return d;
}

/*
 * Most significant byte first radix sort of the abbreviations (American
 * flag sort: in place, entries swapped into their byte's bucket), bytes all
 * entries share skipped in one pass.  Quicksort of a COPY's million
 * entries spent most of its time on mispredicted comparisons: about 10% of
 * the COPY (perf).  Groups equal in all 24 bytes, and small groups, are
 * finished by the comparison sort, which breaks ties on the whole row.
 */
static void
radix_sort_entries(SortEntry *e, int64 n, int d)
{
	int64		count[256] = {0};
	int64		next[256];
	int64		end[256];
	int64		start = 0;

	if (n < RADIX_MIN || (d = first_differing_byte(e, n, d)) == ABBREV_BYTES)
	{
		sort_entries(e, n);
		return;
	}
	CHECK_FOR_INTERRUPTS();
	for (int64 i = 0; i < n; i++)
		count[abbrev_byte(e[i].a, e[i].b, e[i].c, d)]++;
	for (int b = 0; b < 256; b++)
	{
		next[b] = start;
		start += count[b];
		end[b] = start;
	}
	for (int b = 0; b < 256; b++)
	{
		while (next[b] < end[b])
		{
			SortEntry	x = e[next[b]];
			int			k = abbrev_byte(x.a, x.b, x.c, d);

			/* carry x to its bucket, picking up what was there */
			while (k != b)
			{
				SortEntry	y = e[next[k]];

				e[next[k]++] = x;
				x = y;
				k = abbrev_byte(x.a, x.b, x.c, d);
			}
			e[next[b]++] = x;
		}
	}
	start = 0;
	for (int b = 0; b < 256; b++)
	{
		if (count[b] > 1)
			radix_sort_entries(e + start, count[b], d + 1);
		start += count[b];
	}
}

/*
 * Sort rows into storage order.  With perm != NULL, rows stay as they are
 * and perm receives the sorted order as indexes into rows.
 */
void
wc_sort_rows(WcRowHeader **rows, int64 n, int64 *perm)
{
	SortEntry  *e = wc_alloc_huge(CurrentMemoryContext, sizeof(SortEntry) * Max(n, 1));

	for (int64 i = 0; i < n; i++)
	{
		const char *k = WcRowKey(rows[i]);
		int			len = rows[i]->keylen;

		e[i].a = load_be64(k, len);
		e[i].b = load_be64(k + 8, len - 8);
		e[i].c = load_be64(k + 16, len - 16);
		e[i].row = rows[i];
		e[i].idx = i;
	}
	radix_sort_entries(e, n, 0);
	for (int64 i = 0; i < n; i++)
	{
		if (perm)
			perm[i] = e[i].idx;
		else
			rows[i] = e[i].row;
	}
	pfree(e);
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
		case SNAPSHOT_DIRTY:
			if (TransactionIdIsCurrentTransactionId(xid))
				return true;
			if (TransactionIdIsInProgress(xid))
			{
				/* only a dirty snapshot sees it, and notes whom to wait for */
				if (snapshot->snapshot_type == SNAPSHOT_SELF)
					return false;
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

/*
 * Counter tables (widecol.counter_columns).  A blind write (INSERT, COPY)
 * stores a delta version: its counter columns are increments to whatever
 * older versions of the key hold.  Readers and compaction fold a key's
 * versions, newest first, down to the first non-delta version (an UPDATE's
 * value, or a folded base) or tombstone: non-counter columns come from the
 * newest version, counters are the sum.  See "Counter columns" in
 * src/README.md.
 */

/*
 * Deform a version's stored tuple (key columns read NULL; columns added
 * after the version was written read their defaults).
 */
void
wc_row_deform(Relation rel, const WcRowHeader *row, Datum *values, bool *isnull)
{
	TupleDesc	desc = RelationGetDescr(rel);
	MinimalTuple mt = WcRowTuple(row);
	HeapTupleData htup;

	/* heap_deform_tuple reads missing attributes as their defaults */
	htup.t_len = mt->t_len + MINIMAL_TUPLE_OFFSET;
	htup.t_data = (HeapTupleHeader) ((char *) mt - MINIMAL_TUPLE_OFFSET);
	heap_deform_tuple(&htup, desc, values, isnull);
}

/*
 * A copy of the version (header and key) with a tuple formed from these
 * values, in place after the key (one allocation, no tuple to copy).
 */
WcRowHeader *
wc_row_with_values(Relation rel, const WcRowHeader *row, Datum *values, bool *isnull)
{
	TupleDesc	desc = RelationGetDescr(rel);
	bool		hasnull = false;
	Size		off = WcRowTupleOffset(row->keylen);
	Size		hoff;
	Size		data_len;
	WcRowHeader *out;

	for (int i = 0; i < desc->natts && !hasnull; i++)
		hasnull = isnull[i];
	hoff = tuple_hoff(desc, hasnull);
	data_len = heap_compute_data_size(desc, values, isnull);
	out = palloc(off + hoff + data_len);
	memset(out, 0, off);		/* padding after the key too */
	memcpy(out, row, sizeof(WcRowHeader) + row->keylen);
	out->flags &= ~WC_ROW_IN_BLOCK;
	out->blockoff = 0;
	out->tupoff = off;
	out->len = off + hoff + data_len;
	fill_tuple(WcRowTuple(out), desc, values, isnull, hasnull, hoff, data_len);
	return out;
}

/* Start folding a key's versions at its newest (deciding) delta. */
void
wc_counter_fold_begin(WcCounterFold *f, Relation rel, const WcRowHeader *newest)
{
	f->rel = rel;
	f->newest = wc_row_copy(NULL, newest);
	f->base = false;
	memset(f->sum, 0, sizeof(f->sum));
	memset(f->overflow, 0, sizeof(f->overflow));
	wc_counter_fold_add(f, newest);
	f->base = false;
}

/* Add an older version's counters (a NULL counter adds nothing). */
void
wc_counter_fold_add(WcCounterFold *f, const WcRowHeader *older)
{
	WcTableInfo *info = wc_table_info(f->rel);
	TupleDesc	desc = RelationGetDescr(f->rel);
	Datum	   *v = palloc(sizeof(Datum) * desc->natts);
	bool	   *n = palloc(sizeof(bool) * desc->natts);

	wc_row_deform(f->rel, older, v, n);
	for (int i = 0; i < info->ncounters; i++)
	{
		int			a = info->counters[i] - 1;

		if (!n[a] && pg_add_s64_overflow(f->sum[i], DatumGetInt64(v[a]), &f->sum[i]))
			f->overflow[i] = true;
	}
	if (!WcRowIsDelta(older))
		f->base = true;			/* folded down to a value: the sum is one */
	pfree(v);
	pfree(n);
}

/*
 * The folded version: the newest version with the sums as its counters.  A
 * sum past bigint's range reads NULL with a WARNING; an error would make the
 * key unreadable, also for the UPDATE or DELETE that repairs it.
 */
WcRowHeader *
wc_counter_fold_end(WcCounterFold *f)
{
	WcTableInfo *info = wc_table_info(f->rel);
	TupleDesc	desc = RelationGetDescr(f->rel);
	Datum	   *v = palloc(sizeof(Datum) * desc->natts);
	bool	   *n = palloc(sizeof(bool) * desc->natts);
	WcRowHeader *out;

	wc_row_deform(f->rel, f->newest, v, n);
	for (int i = 0; i < info->ncounters; i++)
	{
		int			a = info->counters[i] - 1;

		v[a] = Int64GetDatum(f->sum[i]);
		n[a] = f->overflow[i];
		if (f->overflow[i])
			ereport(WARNING,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("counter column \"%s\" of widecol table \"%s\" is out of range for bigint in partition %s; it reads as NULL",
							NameStr(TupleDescAttr(desc, a)->attname), RelationGetRelationName(f->rel),
							wc_describe_partition(f->rel, wc_table_info(f->rel), WcRowKey(f->newest), f->newest->pklen)),
					 errhint("UPDATE the row to set the counter, or DELETE it.")));
	}
	out = wc_row_with_values(f->rel, f->newest, v, n);
	if (f->base)
		out->flags &= ~WC_ROW_DELTA;
	pfree(v);
	pfree(n);
	pfree(f->newest);
	return out;
}
