/*
 * manifest.c — the versioned set of runs, kept in the heap table
 * widecol.segment so that heap MVCC publishes and drops runs atomically.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/transam.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "widecol.h"
#include "storage/manifest.h"
#include "storage/row.h"

enum
{
	Anum_seg_storage_id = 1,
	Anum_seg_segment_id,
	Anum_seg_kind,
	Anum_seg_level,
	Anum_seg_header_block,
	Anum_seg_npages,
	Anum_seg_nrows,
	Anum_seg_ntombstones,
	Anum_seg_npartitions,
	Anum_seg_raw_bytes,
	Anum_seg_compressed_bytes,
	Anum_seg_min_write_ts,
	Anum_seg_max_write_ts,
	Anum_seg_max_expire,
	Anum_seg_min_xid,
	Anum_seg_max_xid,
	Anum_seg_min_key,
	Anum_seg_max_key,
	Anum_seg_nexternal,
	Natts_seg = Anum_seg_nexternal
};

#define SEG_KIND_RUN	'r'
#define SEG_KIND_FLUSHED 'f'
#define SEG_KIND_DROPPED 'd'		/* a run replaced by compaction; pages not yet free */
#define SEG_KIND_WRITING 'w'		/* a run's claim on its pages, from its first page
									 * written until its pages are freed */
#define SEG_KIND_RANGE_TOMBSTONE 'x'	/* min_key: partition key; max_key:
										 * packed bounds; min_write_ts: its
										 * write time; nrows: rows deleted */

/* the packed bounds of a range tombstone (max_key) */
#define RT_HAS_LO	0x01
#define RT_LO_INCL	0x02
#define RT_HAS_HI	0x04
#define RT_HI_INCL	0x08

static Oid
segment_relid(bool index)
{
	Oid			nsp = get_namespace_oid(WIDECOL_SCHEMA, true);
	Oid			relid = OidIsValid(nsp) ?
		get_relname_relid(index ? "segment_pkey" : "segment", nsp) : InvalidOid;

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("widecol catalog table widecol.segment is missing"),
				 errhint("Run CREATE EXTENSION widecol in this database.")));
	return relid;
}

/*
 * Did the transaction that created a manifest row commit before the horizon
 * (so that every snapshot sees the row)?  A frozen xmin (VACUUM FREEZE of
 * widecol.segment) means long ago.
 */
bool
wc_manifest_row_settled(TransactionId xmin, TransactionId horizon)
{
	if (xmin == FrozenTransactionId || xmin == BootstrapTransactionId)
		return true;
	return TransactionIdIsNormal(xmin) && !TransactionIdIsCurrentTransactionId(xmin) &&
		TransactionIdDidCommit(xmin) && TransactionIdPrecedes(xmin, horizon);
}

/*
 * A scan of one storage's manifest rows (through the index), positioned on
 * a row with its kind and id at hand: the loop every function below that
 * reads or changes a storage's rows runs.
 */
typedef struct SegScan
{
	Relation	rel;			/* widecol.segment */
	LOCKMODE	lockmode;
	ScanKeyData key[1];
	SysScanDesc scan;
	HeapTuple	tup;			/* the current row */
	char		kind;			/* its kind */
	uint64		id;				/* its segment_id */
} SegScan;

static void
seg_begin(SegScan *s, uint64 storage_id, Snapshot snapshot, LOCKMODE lockmode)
{
	s->rel = table_open(segment_relid(false), lockmode);
	s->lockmode = lockmode;
	ScanKeyInit(&s->key[0], Anum_seg_storage_id, BTEqualStrategyNumber, F_INT8EQ,
				Int64GetDatum((int64) storage_id));
	s->scan = systable_beginscan(s->rel, segment_relid(true), true, snapshot, 1, s->key);
}

/* Move to the next row; false when there is none. */
static bool
seg_next(SegScan *s)
{
	bool		isnull;

	s->tup = systable_getnext(s->scan);
	if (!HeapTupleIsValid(s->tup))
		return false;
	s->kind = DatumGetChar(heap_getattr(s->tup, Anum_seg_kind, RelationGetDescr(s->rel), &isnull));
	s->id = (uint64) DatumGetInt64(heap_getattr(s->tup, Anum_seg_segment_id,
												RelationGetDescr(s->rel), &isnull));
	return true;
}

/* An int8 column of the current row. */
static int64
seg_int64(SegScan *s, int attnum, bool *isnull)
{
	return DatumGetInt64(heap_getattr(s->tup, attnum, RelationGetDescr(s->rel), isnull));
}

static void
seg_end(SegScan *s)
{
	systable_endscan(s->scan);
	table_close(s->rel, s->lockmode);
}

static bool
id_listed(const uint64 *ids, int n, uint64 id)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* Delete the rows of these kinds whose ids are listed. */
static void
forget_rows(uint64 storage_id, const char *kinds, const uint64 *ids, int n)
{
	SegScan		s;

	seg_begin(&s, storage_id, SnapshotSelf, RowExclusiveLock);
	while (seg_next(&s))
		if (memchr(kinds, s.kind, strlen(kinds)) != NULL && id_listed(ids, n, s.id))
			CatalogTupleDelete(s.rel, &s.tup->t_self);
	seg_end(&s);
}

/*
 * One bound of a range tombstone in max_key: its length (0 when absent),
 * then its bytes.
 */
static void
pack_bound(StringInfo packed, const char *key, int keylen)
{
	uint16		len = key ? keylen : 0;

	appendBinaryStringInfo(packed, (char *) &len, sizeof(uint16));
	if (key)
		appendBinaryStringInfo(packed, key, keylen);
}

/* Read a bound packed at p (kept if present); returns what follows it. */
static const char *
unpack_bound(const char *p, bool present, char **key, int *keylen)
{
	uint16		len;

	memcpy(&len, p, sizeof(uint16));
	p += sizeof(uint16);
	if (present)
	{
		*key = (char *) p;
		*keylen = len;
	}
	return p + len;
}

static void
parse_range_tombstone(WcRangeTombstone *rt, HeapTuple tup, const Datum *v)
{
	bytea	   *pk = DatumGetByteaPCopy(v[Anum_seg_min_key - 1]);
	bytea	   *packed = DatumGetByteaPCopy(v[Anum_seg_max_key - 1]);
	const char *p = VARDATA_ANY(packed);
	uint8		flags = (uint8) p[0];

	memset(rt, 0, sizeof(WcRangeTombstone));
	rt->id = DatumGetInt64(v[Anum_seg_segment_id - 1]);
	rt->pk = VARDATA_ANY(pk);
	rt->pklen = VARSIZE_ANY_EXHDR(pk);
	rt->write_ts = DatumGetInt64(v[Anum_seg_min_write_ts - 1]);
	rt->nrows = DatumGetInt64(v[Anum_seg_nrows - 1]);
	rt->xmin = HeapTupleHeaderGetXmin(tup->t_data);
	p = unpack_bound(p + 1, (flags & RT_HAS_LO) != 0, &rt->lo, &rt->lolen);
	unpack_bound(p, (flags & RT_HAS_HI) != 0, &rt->hi, &rt->hilen);
	/* an inclusive flag counts only with its bound */
	rt->lo_incl = (flags & RT_HAS_LO) && (flags & RT_LO_INCL);
	rt->hi_incl = (flags & RT_HAS_HI) && (flags & RT_HI_INCL);
}

/* By partition key, then age (newest last). */
static int
rt_cmp(const void *a, const void *b)
{
	const WcRangeTombstone *x = a;
	const WcRangeTombstone *y = b;
	int			c = wc_compare_keys(x->pk, x->pklen, y->pk, y->pklen);

	if (c != 0)
		return c;
	return (x->write_ts > y->write_ts) - (x->write_ts < y->write_ts);
}

WcManifest *
wc_manifest_read(uint64 storage_id, Snapshot snapshot)
{
	SegScan		s;
	WcManifest *m = palloc0(sizeof(WcManifest));
	int			cap = 8,
				rcap = 8,
				tcap = 0;

	seg_begin(&s, storage_id, snapshot, AccessShareLock);
	m->runs = palloc(sizeof(WcRunSummary) * cap);
	m->retired_gens = palloc(sizeof(uint64) * rcap);
	while (seg_next(&s))
	{
		Datum		v[Natts_seg];
		bool		n[Natts_seg];
		WcRunSummary *r;

		if (s.kind == SEG_KIND_DROPPED || s.kind == SEG_KIND_WRITING)
			continue;
		heap_deform_tuple(s.tup, RelationGetDescr(s.rel), v, n);
		if (s.kind == SEG_KIND_RANGE_TOMBSTONE)
		{
			if (m->nrts == tcap)
				m->rts = tcap == 0 ? palloc(sizeof(WcRangeTombstone) * (tcap = 8)) :
					repalloc(m->rts, sizeof(WcRangeTombstone) * (tcap *= 2));
			parse_range_tombstone(&m->rts[m->nrts++], s.tup, v);
			continue;
		}
		if (s.kind == SEG_KIND_FLUSHED)
		{
			if (m->nretired == rcap)
				m->retired_gens = repalloc(m->retired_gens, sizeof(uint64) * (rcap *= 2));
			m->retired_gens[m->nretired++] = s.id;
			continue;
		}
		if (m->nruns == cap)
			m->runs = repalloc(m->runs, sizeof(WcRunSummary) * (cap *= 2));
		r = &m->runs[m->nruns++];
		memset(r, 0, sizeof(WcRunSummary));
		r->run_id = s.id;
		r->level = DatumGetInt32(v[Anum_seg_level - 1]);
		r->header_block = (BlockNumber) DatumGetInt64(v[Anum_seg_header_block - 1]);
		r->npages = (uint32) DatumGetInt64(v[Anum_seg_npages - 1]);
		r->st.nrows = DatumGetInt64(v[Anum_seg_nrows - 1]);
		r->st.ntombstones = DatumGetInt64(v[Anum_seg_ntombstones - 1]);
		r->st.npartitions = DatumGetInt64(v[Anum_seg_npartitions - 1]);
		r->st.raw_bytes = DatumGetInt64(v[Anum_seg_raw_bytes - 1]);
		r->st.compressed_bytes = DatumGetInt64(v[Anum_seg_compressed_bytes - 1]);
		r->st.min_write_ts = DatumGetInt64(v[Anum_seg_min_write_ts - 1]);
		r->st.max_write_ts = DatumGetInt64(v[Anum_seg_max_write_ts - 1]);
		r->st.max_expire = DatumGetInt64(v[Anum_seg_max_expire - 1]);
		r->st.min_xid = (TransactionId) DatumGetInt64(v[Anum_seg_min_xid - 1]);
		r->st.max_xid = (TransactionId) DatumGetInt64(v[Anum_seg_max_xid - 1]);
		r->min_key = n[Anum_seg_min_key - 1] ? NULL :
			DatumGetByteaPCopy(v[Anum_seg_min_key - 1]);
		r->max_key = n[Anum_seg_max_key - 1] ? NULL :
			DatumGetByteaPCopy(v[Anum_seg_max_key - 1]);
		r->st.nexternal = n[Anum_seg_nexternal - 1] ? 0 :
			DatumGetInt64(v[Anum_seg_nexternal - 1]);
	}
	seg_end(&s);
	if (m->nrts > 1)
		qsort(m->rts, m->nrts, sizeof(WcRangeTombstone), rt_cmp);
	return m;
}

static void
insert_row(uint64 storage_id, char kind, const WcRunSummary *r, uint64 segment_id)
{
	Relation	segrel = table_open(segment_relid(false), RowExclusiveLock);
	Datum		v[Natts_seg] = {0};
	bool		n[Natts_seg] = {0};
	HeapTuple	tup;

	v[Anum_seg_storage_id - 1] = Int64GetDatum((int64) storage_id);
	v[Anum_seg_segment_id - 1] = Int64GetDatum((int64) segment_id);
	v[Anum_seg_kind - 1] = CharGetDatum(kind);
	if (r)
	{
		v[Anum_seg_level - 1] = Int32GetDatum(r->level);
		v[Anum_seg_header_block - 1] = Int64GetDatum(r->header_block);
		v[Anum_seg_npages - 1] = Int64GetDatum(r->npages);
		v[Anum_seg_nrows - 1] = Int64GetDatum(r->st.nrows);
		v[Anum_seg_ntombstones - 1] = Int64GetDatum(r->st.ntombstones);
		v[Anum_seg_npartitions - 1] = Int64GetDatum(r->st.npartitions);
		v[Anum_seg_raw_bytes - 1] = Int64GetDatum(r->st.raw_bytes);
		v[Anum_seg_compressed_bytes - 1] = Int64GetDatum(r->st.compressed_bytes);
		v[Anum_seg_min_write_ts - 1] = Int64GetDatum(r->st.min_write_ts);
		v[Anum_seg_max_write_ts - 1] = Int64GetDatum(r->st.max_write_ts);
		v[Anum_seg_max_expire - 1] = Int64GetDatum(r->st.max_expire);
		v[Anum_seg_min_xid - 1] = Int64GetDatum((int64) r->st.min_xid);
		v[Anum_seg_max_xid - 1] = Int64GetDatum((int64) r->st.max_xid);
		v[Anum_seg_min_key - 1] = PointerGetDatum(r->min_key);
		v[Anum_seg_max_key - 1] = PointerGetDatum(r->max_key);
		n[Anum_seg_min_key - 1] = r->min_key == NULL;
		n[Anum_seg_max_key - 1] = r->max_key == NULL;
		v[Anum_seg_nexternal - 1] = Int64GetDatum(r->st.nexternal);
	}
	else
	{
		for (int i = Anum_seg_level; i <= Natts_seg; i++)
			n[i - 1] = true;
	}
	tup = heap_form_tuple(RelationGetDescr(segrel), v, n);
	CatalogTupleInsert(segrel, tup);
	table_close(segrel, RowExclusiveLock);
}

void
wc_manifest_add_range_tombstone(uint64 storage_id, const WcRangeTombstone *rt)
{
	Relation	segrel = table_open(segment_relid(false), RowExclusiveLock);
	Datum		v[Natts_seg] = {0};
	bool		n[Natts_seg] = {0};
	StringInfoData packed;
	uint8		flags = (rt->lo ? RT_HAS_LO : 0) | (rt->lo_incl ? RT_LO_INCL : 0) |
		(rt->hi ? RT_HAS_HI : 0) | (rt->hi_incl ? RT_HI_INCL : 0);
	bytea	   *pk = palloc(VARHDRSZ + rt->pklen);
	bytea	   *bounds;
	HeapTuple	tup;

	initStringInfo(&packed);
	appendBinaryStringInfo(&packed, (char *) &flags, 1);
	pack_bound(&packed, rt->lo, rt->lolen);
	pack_bound(&packed, rt->hi, rt->hilen);
	bounds = palloc(VARHDRSZ + packed.len);
	SET_VARSIZE(bounds, VARHDRSZ + packed.len);
	memcpy(VARDATA(bounds), packed.data, packed.len);
	SET_VARSIZE(pk, VARHDRSZ + rt->pklen);
	memcpy(VARDATA(pk), rt->pk, rt->pklen);

	for (int i = 0; i < Natts_seg; i++)
		n[i] = true;
	v[Anum_seg_storage_id - 1] = Int64GetDatum((int64) storage_id);
	v[Anum_seg_segment_id - 1] = Int64GetDatum((int64) rt->id);
	v[Anum_seg_kind - 1] = CharGetDatum(SEG_KIND_RANGE_TOMBSTONE);
	v[Anum_seg_min_write_ts - 1] = Int64GetDatum(rt->write_ts);
	v[Anum_seg_nrows - 1] = Int64GetDatum(rt->nrows);
	v[Anum_seg_min_key - 1] = PointerGetDatum(pk);
	v[Anum_seg_max_key - 1] = PointerGetDatum(bounds);
	n[Anum_seg_storage_id - 1] = n[Anum_seg_segment_id - 1] = n[Anum_seg_kind - 1] = false;
	n[Anum_seg_min_write_ts - 1] = n[Anum_seg_nrows - 1] = false;
	n[Anum_seg_min_key - 1] = n[Anum_seg_max_key - 1] = false;
	tup = heap_form_tuple(RelationGetDescr(segrel), v, n);
	CatalogTupleInsert(segrel, tup);
	table_close(segrel, RowExclusiveLock);
}

/* Delete the manifest rows of range tombstones compaction has purged. */
void
wc_manifest_forget_range_tombstones(uint64 storage_id, const uint64 *ids, int n)
{
	static const char kinds[] = {SEG_KIND_RANGE_TOMBSTONE, '\0'};

	if (n > 0)
		forget_rows(storage_id, kinds, ids, n);
}

/* Is a key (of a table with that partition key length) inside the range? */
bool
wc_range_covers(const WcRangeTombstone *rt, const char *key, int keylen, int pklen)
{
	const char *suffix = key + pklen;
	int			slen = keylen - pklen;

	if (pklen != rt->pklen || memcmp(key, rt->pk, pklen) != 0)
		return false;
	if (rt->lo)
	{
		int			c = wc_compare_keys(suffix, Min(slen, rt->lolen), rt->lo, rt->lolen);

		if (c < 0 || (c == 0 && !rt->lo_incl))
			return false;
	}
	if (rt->hi)
	{
		int			c = wc_compare_keys(suffix, Min(slen, rt->hilen), rt->hi, rt->hilen);

		if (c > 0 || (c == 0 && !rt->hi_incl))
			return false;
	}
	return true;
}

/*
 * The write time of the newest range tombstone that covers the key (0:
 * none); with a valid horizon, only of those every snapshot sees.
 */
int64
wc_range_covering_ts(const WcManifest *m, const char *key, int keylen, int pklen,
					 TransactionId horizon)
{
	int			lo = 0,
				hi = m->nrts;
	int64		ts = 0;

	/* the first tombstone of the partition */
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (wc_compare_keys(m->rts[mid].pk, m->rts[mid].pklen, key, pklen) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (int i = lo; i < m->nrts && m->rts[i].pklen == pklen &&
		 memcmp(m->rts[i].pk, key, pklen) == 0; i++)
	{
		if (TransactionIdIsValid(horizon) && !wc_manifest_row_settled(m->rts[i].xmin, horizon))
			continue;
		if (m->rts[i].write_ts > ts && wc_range_covers(&m->rts[i], key, keylen, pklen))
			ts = m->rts[i].write_ts;
	}
	return ts;
}

/* The write time of the newest tombstone of the whole partition (0: none). */
int64
wc_partition_deleted_ts(const WcManifest *m, const char *pk, int pklen)
{
	int64		ts = 0;

	for (int i = 0; i < m->nrts; i++)
		if (m->rts[i].lo == NULL && m->rts[i].hi == NULL && m->rts[i].pklen == pklen &&
			memcmp(m->rts[i].pk, pk, pklen) == 0 && m->rts[i].write_ts > ts)
			ts = m->rts[i].write_ts;
	return ts;
}

void
wc_manifest_add_run(uint64 storage_id, const WcRunSummary *run)
{
	insert_row(storage_id, SEG_KIND_RUN, run, run->run_id);
}

/*
 * Claim a run's pages before its first page is written: from now on a page
 * carrying this run id is in use for every other backend (a dirty snapshot
 * sees the row while we are in progress), and is free again only if we
 * abort or once the run is reclaimed (see "Page reuse" in src/README.md).
 */
void
wc_manifest_claim_run(uint64 storage_id, uint64 run_id)
{
	insert_row(storage_id, SEG_KIND_WRITING, NULL, run_id);
}

void
wc_manifest_retire_gen(uint64 storage_id, uint64 gen)
{
	insert_row(storage_id, SEG_KIND_FLUSHED, NULL, gen);
}

/* Find the 'f' row of a generation (SnapshotSelf); call fn on it. */
static bool
with_flushed_row(uint64 storage_id, uint64 gen, bool delete, TransactionId *xmin_out)
{
	SegScan		s;
	bool		result = false;

	seg_begin(&s, storage_id, SnapshotSelf, RowExclusiveLock);
	while (seg_next(&s))
	{
		if (s.kind != SEG_KIND_FLUSHED || s.id != gen)
			continue;
		if (delete)
		{
			CatalogTupleDelete(s.rel, &s.tup->t_self);
			result = true;
		}
		else
		{
			TransactionId xmin = HeapTupleHeaderGetXmin(s.tup->t_data);

			*xmin_out = xmin;
			result = wc_manifest_row_settled(xmin, GetOldestNonRemovableTransactionId(NULL));
		}
		break;
	}
	seg_end(&s);
	return result;
}

/* May the generation leave the metapage: retired, and seen so by everyone? */
bool
wc_manifest_gen_removable(uint64 storage_id, uint64 gen, TransactionId *retiring_xid)
{
	return with_flushed_row(storage_id, gen, false, retiring_xid);
}

void
wc_manifest_forget_gen(uint64 storage_id, uint64 gen)
{
	TransactionId dummy;

	with_flushed_row(storage_id, gen, true, &dummy);
}

/*
 * Delete every manifest row of a storage id (the relation is being dropped,
 * or truncated to a new relfilenode).  Transactional: a rollback keeps them.
 */
void
wc_manifest_drop_storage(uint64 storage_id)
{
	Oid			nsp = get_namespace_oid(WIDECOL_SCHEMA, true);
	SegScan		s;

	/* DROP EXTENSION ... CASCADE may have dropped the catalog already */
	if (!OidIsValid(nsp) || !OidIsValid(get_relname_relid("segment", nsp)) ||
		!OidIsValid(get_relname_relid("segment_pkey", nsp)))
		return;
	seg_begin(&s, storage_id, SnapshotSelf, RowExclusiveLock);
	while (seg_next(&s))
		CatalogTupleDelete(s.rel, &s.tup->t_self);
	seg_end(&s);
}

/*
 * Compaction replaced these runs: their rows become 'd' (dropped).  Readers
 * whose snapshot predates the commit still see the 'r' version and keep
 * reading the runs; the 'd' row remembers the pages until no snapshot can.
 */
void
wc_manifest_drop_runs(uint64 storage_id, const uint64 *run_ids, int n)
{
	SegScan		s;
	int			dropped = 0;

	seg_begin(&s, storage_id, SnapshotSelf, RowExclusiveLock);
	while (seg_next(&s))
	{
		Datum		v[Natts_seg] = {0};
		bool		nl[Natts_seg] = {0};
		bool		repl[Natts_seg] = {0};
		HeapTuple	newtup;

		if (s.kind != SEG_KIND_RUN || !id_listed(run_ids, n, s.id))
			continue;
		v[Anum_seg_kind - 1] = CharGetDatum(SEG_KIND_DROPPED);
		repl[Anum_seg_kind - 1] = true;
		newtup = heap_modify_tuple(s.tup, RelationGetDescr(s.rel), v, nl, repl);
		CatalogTupleUpdate(s.rel, &s.tup->t_self, newtup);
		dropped++;
	}
	seg_end(&s);
	if (dropped != n)
		elog(ERROR, "widecol: compaction found %d of its %d input runs in the manifest", dropped, n);
}

/*
 * Dropped runs whose dropping transaction committed before the horizon: no
 * snapshot reads them.  *latest receives the newest such transaction.
 */
int
wc_manifest_dropped_runs(uint64 storage_id, TransactionId horizon,
						 WcRunSummary **out, TransactionId *latest)
{
	SegScan		s;
	int			n = 0,
				cap = 8;
	WcRunSummary *runs = palloc0(sizeof(WcRunSummary) * cap);

	seg_begin(&s, storage_id, SnapshotSelf, AccessShareLock);
	while (seg_next(&s))
	{
		bool		isnull;
		TransactionId xmin = HeapTupleHeaderGetXmin(s.tup->t_data);

		if (s.kind != SEG_KIND_DROPPED || !wc_manifest_row_settled(xmin, horizon))
			continue;
		if (n == cap)
			runs = repalloc(runs, sizeof(WcRunSummary) * (cap *= 2));
		runs[n].run_id = s.id;
		runs[n].header_block = (BlockNumber) seg_int64(&s, Anum_seg_header_block, &isnull);
		n++;
		if (TransactionIdIsNormal(xmin) &&
			(!TransactionIdIsValid(*latest) || TransactionIdFollows(xmin, *latest)))
			*latest = xmin;
	}
	seg_end(&s);
	*out = runs;
	return n;
}

/* Delete the 'd' and 'w' rows of runs whose pages were freed. */
void
wc_manifest_forget_runs(uint64 storage_id, const uint64 *run_ids, int n)
{
	static const char kinds[] = {SEG_KIND_DROPPED, SEG_KIND_WRITING, '\0'};

	forget_rows(storage_id, kinds, run_ids, n);
}

/*
 * The oldest xid stored in any run that some snapshot may still read: run
 * rows of every version (SnapshotAny), except those deleted (dropped by
 * compaction) by a transaction before the horizon, or inserted by an
 * aborted one.  For VACUUM's relfrozenxid.
 */
TransactionId
wc_manifest_min_xid(uint64 storage_id, TransactionId horizon)
{
	SegScan		s;
	TransactionId result = InvalidTransactionId;

	seg_begin(&s, storage_id, SnapshotAny, AccessShareLock);
	while (seg_next(&s))
	{
		bool		isnull;
		HeapTuple	tup = s.tup;
		TransactionId xmin = HeapTupleHeaderGetXmin(tup->t_data);
		TransactionId xmax = HeapTupleHeaderGetRawXmax(tup->t_data);
		TransactionId x;

		if (s.kind != SEG_KIND_RUN)
			continue;
		if (TransactionIdIsNormal(xmin) && !TransactionIdIsCurrentTransactionId(xmin) &&
			!TransactionIdIsInProgress(xmin) && !TransactionIdDidCommit(xmin))
			continue;			/* inserted by an aborted transaction */
		if (TransactionIdIsNormal(xmax) &&
			!(tup->t_data->t_infomask & HEAP_XMAX_IS_MULTI) &&
			!(tup->t_data->t_infomask & HEAP_XMAX_LOCK_ONLY) &&
			!TransactionIdIsCurrentTransactionId(xmax) &&
			!TransactionIdIsInProgress(xmax) && TransactionIdDidCommit(xmax) &&
			TransactionIdPrecedes(xmax, horizon))
			continue;			/* dropped, and no snapshot reads it any more */
		x = (TransactionId) seg_int64(&s, Anum_seg_min_xid, &isnull);
		if (!isnull && TransactionIdIsNormal(x) &&
			(!TransactionIdIsValid(result) || TransactionIdPrecedes(x, result)))
			result = x;
	}
	seg_end(&s);
	return result;
}

bool
wc_manifest_gen_retired(WcManifest *m, uint64 gen)
{
	for (int i = 0; i < m->nretired; i++)
		if (m->retired_gens[i] == gen)
			return true;
	return false;
}

/*
 * Is run run_id of storage storage_id still listed (being written, a run, or
 * dropped but not yet reclaimed)?  Read with a dirty snapshot: WC_RUN_FREEING
 * when the only rows are being deleted by a transaction still in progress (a
 * reclaim that has not committed), WC_RUN_GONE when no row is left (its
 * writer aborted or it was reclaimed: its pages may be reused), else
 * WC_RUN_LISTED.  Rows our own transaction deleted are gone.
 */
WcRunState
wc_manifest_run_state(uint64 storage_id, uint64 run_id)
{
	static const char kinds[] = {SEG_KIND_WRITING, SEG_KIND_RUN, SEG_KIND_DROPPED};
	Relation	segrel = table_open(segment_relid(false), AccessShareLock);
	Oid			index = segment_relid(true);
	WcRunState	state = WC_RUN_GONE;

	for (int k = 0; k < lengthof(kinds) && state != WC_RUN_LISTED; k++)
	{
		ScanKeyData key[3];
		SnapshotData dirty;
		SysScanDesc scan;
		HeapTuple	tup;

		InitDirtySnapshot(dirty);
		ScanKeyInit(&key[0], Anum_seg_storage_id, BTEqualStrategyNumber, F_INT8EQ,
					Int64GetDatum((int64) storage_id));
		ScanKeyInit(&key[1], Anum_seg_kind, BTEqualStrategyNumber, F_CHAREQ,
					CharGetDatum(kinds[k]));
		ScanKeyInit(&key[2], Anum_seg_segment_id, BTEqualStrategyNumber, F_INT8EQ,
					Int64GetDatum((int64) run_id));
		scan = systable_beginscan(segrel, index, true, &dirty, 3, key);
		while (HeapTupleIsValid(tup = systable_getnext(scan)))
		{
			if (TransactionIdIsValid(dirty.xmax) && !TransactionIdIsValid(dirty.xmin))
				state = Max(state, WC_RUN_FREEING);
			else
				state = WC_RUN_LISTED;
		}
		systable_endscan(scan);
	}
	table_close(segrel, AccessShareLock);
	return state;
}

/*
 * Pages held by runs and by dropped runs whose pages are not free yet (as
 * committed, and as our own transaction left them); for page accounting.
 */
void
wc_manifest_pages(uint64 storage_id, int64 *live, int64 *dropped)
{
	SegScan		s;

	*live = *dropped = 0;
	seg_begin(&s, storage_id, SnapshotSelf, AccessShareLock);
	while (seg_next(&s))
	{
		bool		isnull;
		int64		npages = seg_int64(&s, Anum_seg_npages, &isnull);

		if (isnull)
			continue;
		if (s.kind == SEG_KIND_RUN)
			*live += npages;
		else if (s.kind == SEG_KIND_DROPPED)
			*dropped += npages;
	}
	seg_end(&s);
}
