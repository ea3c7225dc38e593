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
#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "access/xlog.h"
#include "port/atomics.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "widecol.h"
#include "storage/keyrange.h"
#include "storage/cache.h"
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
	Anum_seg_key_ranges,
	Natts_seg = Anum_seg_key_ranges
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

static void manifest_changed(uint64 storage_id);

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
	uint64		storage_id;
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
	s->storage_id = storage_id;
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
	if (s->lockmode == RowExclusiveLock)
		manifest_changed(s->storage_id);
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

/*
 * A run's key-column ranges, parsed.  None for runs written before run
 * format 4, and none from a catalog made before the column existed
 * (heap_deform_tuple leaves the missing attribute alone); malformed ranges
 * are ignored here and reported by verify.
 */
static void
read_key_ranges(WcRunSummary *r, TupleDesc desc, Datum *v, bool *n)
{
	WcKeyRanges *kr;

	if (desc->natts < Anum_seg_key_ranges || n[Anum_seg_key_ranges - 1])
		return;
	r->key_ranges = DatumGetByteaPCopy(v[Anum_seg_key_ranges - 1]);
	kr = palloc(sizeof(WcKeyRanges));
	if (wc_key_ranges_parse(VARDATA_ANY(r->key_ranges), VARSIZE_ANY_EXHDR(r->key_ranges), kr))
		r->ranges = kr;
	else
		pfree(kr);
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

/* A manifest being filled row by row. */
typedef struct ManifestFill
{
	WcManifest *m;
	int			cap;
	int			rcap;
	int			tcap;
} ManifestFill;

static void
fill_begin(ManifestFill *f)
{
	f->m = palloc0(sizeof(WcManifest));
	f->cap = f->rcap = 8;
	f->tcap = 0;
	f->m->runs = palloc(sizeof(WcRunSummary) * f->cap);
	f->m->retired_gens = palloc(sizeof(uint64) * f->rcap);
}

/* Add the scan's current row (a run, a retired generation or a range tombstone). */
static void
fill_row(ManifestFill *f, SegScan *s)
{
	WcManifest *m = f->m;
	Datum		v[Natts_seg];
	bool		n[Natts_seg];
	WcRunSummary *r;

	heap_deform_tuple(s->tup, RelationGetDescr(s->rel), v, n);
	if (s->kind == SEG_KIND_RANGE_TOMBSTONE)
	{
		if (m->nrts == f->tcap)
			m->rts = f->tcap == 0 ? palloc(sizeof(WcRangeTombstone) * (f->tcap = 8)) :
				repalloc(m->rts, sizeof(WcRangeTombstone) * (f->tcap *= 2));
		parse_range_tombstone(&m->rts[m->nrts++], s->tup, v);
		return;
	}
	if (s->kind == SEG_KIND_FLUSHED)
	{
		if (m->nretired == f->rcap)
			m->retired_gens = repalloc(m->retired_gens, sizeof(uint64) * (f->rcap *= 2));
		m->retired_gens[m->nretired++] = s->id;
		return;
	}
	if (m->nruns == f->cap)
		m->runs = repalloc(m->runs, sizeof(WcRunSummary) * (f->cap *= 2));
	r = &m->runs[m->nruns++];
	memset(r, 0, sizeof(WcRunSummary));
	r->run_id = s->id;
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
	read_key_ranges(r, RelationGetDescr(s->rel), v, n);
}

static bool
reader_kind(char kind)
{
	return kind == SEG_KIND_RUN || kind == SEG_KIND_FLUSHED || kind == SEG_KIND_RANGE_TOMBSTONE;
}

static WcManifest *
fill_end(ManifestFill *f)
{
	if (f->m->nrts > 1)
		qsort(f->m->rts, f->m->nrts, sizeof(WcRangeTombstone), rt_cmp);
	return f->m;
}

/* The manifest rows a snapshot sees, read from widecol.segment. */
static WcManifest *
manifest_scan(uint64 storage_id, Snapshot snapshot)
{
	SegScan		s;
	ManifestFill f;

	fill_begin(&f);
	seg_begin(&s, storage_id, snapshot, AccessShareLock);
	while (seg_next(&s))
		if (reader_kind(s.kind))
			fill_row(&f, &s);
	seg_end(&s);
	return fill_end(&f);
}

/* ---------- the backend's manifest cache ---------- */

/*
 * Every read of a table reads its manifest, one catalog row per run: with
 * 100 small runs that was a third of a one-partition seek.  A backend
 * therefore keeps every version of a storage's reader rows (all of them,
 * read with SnapshotAny, with their xmin and xmax) and decides for each
 * read which of them its snapshot sees, as heap visibility would.  New row
 * versions are what the copy cannot know about: every change to a
 * storage's rows advances a shared counter (one of WC_MANIFEST_EPOCHS,
 * chosen by hash) after the change, and a copy is used only while the
 * counter is where it was before the copy was read.  Not used for
 * non-MVCC snapshots, during recovery (WAL replay advances no counter), or
 * when a row was written or deleted by our own transaction or deleted by a
 * multixact.  See "Manifest cache" in src/README.md.
 */
#define WC_MANIFEST_EPOCHS 1024
#define WC_MANIFEST_CACHE_MAX 256

static pg_atomic_uint64 *manifest_epochs = NULL;

Size
wc_manifest_shmem_size(void)
{
	return MAXALIGN(sizeof(pg_atomic_uint64) * WC_MANIFEST_EPOCHS);
}

void
wc_manifest_shmem_startup(void)
{
	bool		found;

	manifest_epochs = ShmemInitStruct("widecol manifest epochs", wc_manifest_shmem_size(), &found);
	if (!found)
		for (int i = 0; i < WC_MANIFEST_EPOCHS; i++)
			pg_atomic_init_u64(&manifest_epochs[i], 0);
}

static pg_atomic_uint64 *
epoch_of(uint64 storage_id)
{
	uint64		key[2] = {MyDatabaseId, storage_id};

	return &manifest_epochs[hash_bytes((const unsigned char *) key, sizeof(key)) % WC_MANIFEST_EPOCHS];
}

/* After a change to a storage's rows: copies read before it are stale. */
static void
manifest_changed(uint64 storage_id)
{
	if (manifest_epochs)
		pg_atomic_fetch_add_u64(epoch_of(storage_id), 1);
}

#define ROW_DEAD			0x01	/* inserted by an aborted transaction */
#define ROW_XMIN_COMMITTED	0x02
#define ROW_NO_XMAX			0x04	/* not deleted (or only locked) */
#define ROW_XMAX_COMMITTED	0x08
#define ROW_UNCACHEABLE		0x10	/* deleted by a multixact */

typedef struct RowXids
{
	TransactionId xmin;
	TransactionId xmax;
	uint8		flags;
} RowXids;

typedef struct ManifestCopy
{
	Oid			dbid;			/* hash key: database, storage */
	uint64		storage_id;
	uint64		epoch;			/* the counter before the rows were read */
	FullTransactionId built_at; /* the next xid then */
	MemoryContext cxt;			/* NULL: no copy */
	WcManifest *all;			/* every version, runs, gens and tombstones in scan order */
	RowXids    *run_xids;
	RowXids    *gen_xids;
	RowXids    *rt_xids;
} ManifestCopy;

static HTAB *manifest_copies = NULL;
static List *retired_copies = NIL;	/* freed at the end of the transaction */
static bool xact_callback_set = false;

static void
free_retired(XactEvent event, void *arg)
{
	ListCell   *lc;

	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PARALLEL_COMMIT && event != XACT_EVENT_PARALLEL_ABORT &&
		event != XACT_EVENT_PREPARE)
		return;
	foreach(lc, retired_copies)
		MemoryContextDelete((MemoryContext) lfirst(lc));
	list_free(retired_copies);
	retired_copies = NIL;
}

/*
 * A copy's memory may still be pointed to by manifests handed out in this
 * transaction: it goes at the transaction's end.
 */
static void
retire_copy(ManifestCopy *c)
{
	MemoryContext old;

	if (c->cxt == NULL)
		return;
	if (!xact_callback_set)
	{
		RegisterXactCallback(free_retired, NULL);
		xact_callback_set = true;
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	retired_copies = lappend(retired_copies, c->cxt);
	MemoryContextSwitchTo(old);
	c->cxt = NULL;
}

static void
note_xids(RowXids *x, HeapTupleHeader t)
{
	uint16		mask = t->t_infomask;

	x->flags = 0;
	x->xmin = HeapTupleHeaderGetRawXmin(t);
	x->xmax = InvalidTransactionId;
	if (HeapTupleHeaderXminFrozen(t))
	{
		/* the raw xmin of a frozen row may be from before a wraparound */
		x->xmin = FrozenTransactionId;
		x->flags |= ROW_XMIN_COMMITTED;
	}
	else if (HeapTupleHeaderXminInvalid(t))
		x->flags |= ROW_DEAD;
	else if (HeapTupleHeaderXminCommitted(t))
		x->flags |= ROW_XMIN_COMMITTED;
	if ((mask & HEAP_XMAX_INVALID) || HEAP_XMAX_IS_LOCKED_ONLY(mask))
		x->flags |= ROW_NO_XMAX;
	else if (mask & HEAP_XMAX_IS_MULTI)
		x->flags |= ROW_UNCACHEABLE;
	else
		x->xmax = HeapTupleHeaderGetRawXmax(t);
}

static void
note_row(ManifestCopy *c, SegScan *s, int *cap)
{
	WcManifest *m = c->all;
	RowXids    *x;

	if (m->nruns + m->nretired + m->nrts >= *cap)
	{
		*cap *= 2;
		c->run_xids = repalloc(c->run_xids, sizeof(RowXids) * *cap);
		c->gen_xids = repalloc(c->gen_xids, sizeof(RowXids) * *cap);
		c->rt_xids = repalloc(c->rt_xids, sizeof(RowXids) * *cap);
	}
	x = s->kind == SEG_KIND_RUN ? &c->run_xids[m->nruns] :
		s->kind == SEG_KIND_FLUSHED ? &c->gen_xids[m->nretired] : &c->rt_xids[m->nrts];
	note_xids(x, s->tup->t_data);
}

/* A copy's range tombstone with the xids of its row, to sort them together. */
typedef struct TombstoneWithXids
{
	WcRangeTombstone rt;
	RowXids		x;
} TombstoneWithXids;

static int
tombstone_with_xids_cmp(const void *a, const void *b)
{
	return rt_cmp(&((const TombstoneWithXids *) a)->rt, &((const TombstoneWithXids *) b)->rt);
}

/*
 * Sort the copy's range tombstones once, as the lookups by partition key
 * need them: a read used to sort its own subset, which with thousands of
 * tombstones cost more than the read.
 */
static void
sort_tombstones(ManifestCopy *c)
{
	WcManifest *all = c->all;
	TombstoneWithXids *t;

	if (all->nrts < 2)
		return;
	t = palloc(sizeof(TombstoneWithXids) * all->nrts);
	for (int i = 0; i < all->nrts; i++)
	{
		t[i].rt = all->rts[i];
		t[i].x = c->rt_xids[i];
	}
	qsort(t, all->nrts, sizeof(TombstoneWithXids), tombstone_with_xids_cmp);
	for (int i = 0; i < all->nrts; i++)
	{
		all->rts[i] = t[i].rt;
		c->rt_xids[i] = t[i].x;
	}
	pfree(t);
}

/*
 * Read every version of the storage's reader rows into a new copy.  It is
 * built in the transaction's memory and kept only once complete (an error
 * halfway leaves no copy).
 */
static void
copy_rows(ManifestCopy *c, uint64 epoch)
{
	MemoryContext cxt = AllocSetContextCreate(CurTransactionContext, "widecol manifest copy",
											  ALLOCSET_SMALL_SIZES);
	MemoryContext old;
	SegScan		s;
	ManifestFill f;
	int			cap = 16;

	retire_copy(c);
	old = MemoryContextSwitchTo(cxt);
	fill_begin(&f);
	c->all = f.m;
	c->run_xids = palloc(sizeof(RowXids) * cap);
	c->gen_xids = palloc(sizeof(RowXids) * cap);
	c->rt_xids = palloc(sizeof(RowXids) * cap);
	seg_begin(&s, c->storage_id, SnapshotAny, AccessShareLock);
	while (seg_next(&s))
		if (reader_kind(s.kind))
		{
			note_row(c, &s, &cap);
			fill_row(&f, &s);
		}
	seg_end(&s);
	sort_tombstones(c);
	MemoryContextSwitchTo(old);
	MemoryContextSetParent(cxt, TopMemoryContext);
	c->cxt = cxt;
	c->epoch = epoch;
	c->built_at = ReadNextFullTransactionId();
}

/* Did xid commit?  -1: it cannot be asked any more (clog truncated). */
static int
xid_committed(TransactionId xid)
{
	if (!TransactionIdIsNormal(xid))
		return xid == FrozenTransactionId || xid == BootstrapTransactionId;
	if (TransactionIdPrecedes(xid, ShmemVariableCache->oldestClogXid))
		return -1;
	return TransactionIdDidCommit(xid) ? 1 : 0;
}

/*
 * Does the snapshot see the row version?  -1: the copy cannot tell (our own
 * transaction's row, a multixact, a forgotten xid).
 */
static int
row_visible(RowXids *x, Snapshot snapshot)
{
	int			c;

	if (x->flags & (ROW_DEAD | ROW_UNCACHEABLE))
		return (x->flags & ROW_DEAD) ? 0 : -1;
	if (!(x->flags & ROW_XMIN_COMMITTED))
	{
		if (TransactionIdIsCurrentTransactionId(x->xmin))
			return -1;
		if (XidInMVCCSnapshot(x->xmin, snapshot))
			return 0;
		if ((c = xid_committed(x->xmin)) < 0)
			return -1;
		if (c == 0)
			return 0;			/* aborted (the snapshot says it ended) */
		x->flags |= ROW_XMIN_COMMITTED;
	}
	else if (TransactionIdIsNormal(x->xmin) && XidInMVCCSnapshot(x->xmin, snapshot))
		return 0;
	if (x->flags & ROW_NO_XMAX)
		return 1;
	if (TransactionIdIsCurrentTransactionId(x->xmax))
		return -1;
	if (XidInMVCCSnapshot(x->xmax, snapshot))
		return 1;
	if (!(x->flags & ROW_XMAX_COMMITTED))
	{
		if ((c = xid_committed(x->xmax)) < 0)
			return -1;
		if (c == 0)
			return 1;			/* the delete aborted */
		x->flags |= ROW_XMAX_COMMITTED;
	}
	return 0;
}

/* The manifest the snapshot sees, from a copy; NULL when it cannot tell. */
static WcManifest *
manifest_from_copy(ManifestCopy *c, Snapshot snapshot)
{
	WcManifest *all = c->all;
	WcManifest *m = palloc0(sizeof(WcManifest));
	int			v;

	m->runs = palloc(sizeof(WcRunSummary) * Max(all->nruns, 1));
	m->retired_gens = palloc(sizeof(uint64) * Max(all->nretired, 1));
	if (all->nrts > 0)
		m->rts = palloc(sizeof(WcRangeTombstone) * all->nrts);
	for (int i = 0; i < all->nruns; i++)
		if ((v = row_visible(&c->run_xids[i], snapshot)) < 0)
			return NULL;
		else if (v)
			m->runs[m->nruns++] = all->runs[i];
	for (int i = 0; i < all->nretired; i++)
		if ((v = row_visible(&c->gen_xids[i], snapshot)) < 0)
			return NULL;
		else if (v)
			m->retired_gens[m->nretired++] = all->retired_gens[i];
	/* the copy's tombstones are sorted (copy_rows): so is any subset */
	for (int i = 0; i < all->nrts; i++)
		if ((v = row_visible(&c->rt_xids[i], snapshot)) < 0)
			return NULL;
		else if (v)
			m->rts[m->nrts++] = all->rts[i];
	return m;
}

/* The manifest from the backend's copy, or NULL when it cannot be used. */
static WcManifest *
manifest_cached(uint64 storage_id, Snapshot snapshot)
{
	struct
	{
		Oid			dbid;
		uint64		storage_id;
	}			key;
	ManifestCopy *c;
	bool		found;
	uint64		epoch;

	if (manifest_epochs == NULL || snapshot->snapshot_type != SNAPSHOT_MVCC ||
		RecoveryInProgress())
		return NULL;
	if (manifest_copies && hash_get_num_entries(manifest_copies) >= WC_MANIFEST_CACHE_MAX)
	{
		HASH_SEQ_STATUS seq;

		hash_seq_init(&seq, manifest_copies);
		while ((c = hash_seq_search(&seq)) != NULL)
			retire_copy(c);
		hash_destroy(manifest_copies);
		manifest_copies = NULL;
	}
	memset(&key, 0, sizeof(key));
	key.dbid = MyDatabaseId;
	key.storage_id = storage_id;
	c = wc_hash_enter(&manifest_copies, "widecol manifest copies", sizeof(key),
					  sizeof(ManifestCopy), TopMemoryContext, &key, &found);
	if (!found)
		c->cxt = NULL;
	epoch = pg_atomic_read_u64(epoch_of(storage_id));
	pg_memory_barrier();
	/* the copy's 32-bit xids must stay comparable: rebuild long before wraparound */
	if (c->cxt == NULL || c->epoch != epoch ||
		U64FromFullTransactionId(ReadNextFullTransactionId()) -
		U64FromFullTransactionId(c->built_at) > (UINT64CONST(1) << 28))
		copy_rows(c, epoch);
	return manifest_from_copy(c, snapshot);
}

WcManifest *
wc_manifest_read(uint64 storage_id, Snapshot snapshot)
{
	WcManifest *m = manifest_cached(storage_id, snapshot);

	return m ? m : manifest_scan(storage_id, snapshot);
}

/*
 * The most partitions any run holds: a lower bound of the table's distinct
 * partitions that compaction makes exact (0 without runs).  What the planner
 * takes before ANALYZE has counted them.
 */
double
wc_manifest_most_partitions(const WcManifest *m)
{
	double		most = 0;

	for (int i = 0; i < m->nruns; i++)
		most = Max(most, (double) m->runs[i].st.npartitions);
	return most;
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
		v[Anum_seg_key_ranges - 1] = PointerGetDatum(r->key_ranges);
		n[Anum_seg_key_ranges - 1] = r->key_ranges == NULL;
	}
	else
	{
		for (int i = Anum_seg_level; i <= Natts_seg; i++)
			n[i - 1] = true;
	}
	tup = heap_form_tuple(RelationGetDescr(segrel), v, n);
	CatalogTupleInsert(segrel, tup);
	manifest_changed(storage_id);
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
	manifest_changed(storage_id);
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
/* The first range tombstone (sorted by partition key) of partition pk. */
static int
first_of_partition(const WcManifest *m, const char *pk, int pklen)
{
	int			lo = 0,
				hi = m->nrts;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (wc_compare_keys(m->rts[mid].pk, m->rts[mid].pklen, pk, pklen) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int64
wc_range_covering_ts(const WcManifest *m, const char *key, int keylen, int pklen,
					 TransactionId horizon)
{
	int			lo = first_of_partition(m, key, pklen);
	int64		ts = 0;

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

	for (int i = first_of_partition(m, pk, pklen);
		 i < m->nrts && m->rts[i].pklen == pklen && memcmp(m->rts[i].pk, pk, pklen) == 0; i++)
		if (m->rts[i].lo == NULL && m->rts[i].hi == NULL && m->rts[i].write_ts > ts)
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

/* The pages of every run the manifest lists (read or not by a given read). */
uint64
wc_manifest_run_pages(const WcManifest *m)
{
	uint64		pages = 0;

	for (int i = 0; i < m->nruns; i++)
		pages += m->runs[i].npages;
	return pages;
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
