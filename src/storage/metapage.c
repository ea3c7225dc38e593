/*
 * metapage.c — block 0 of a widecol relation, and page allocation.
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "catalog/namespace.h"
#include "commands/sequence.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "widecol.h"
#include "storage/metapage.h"
#include "storage/page.h"

#define WcPageGetMeta(page) ((WcMetaData *) PageGetContents(page))

void
wc_meta_init_page(Page page, uint64 storage_id)
{
	WcMetaData *meta;

	PageInit(page, BLCKSZ, sizeof(WcPageOpaqueData));
	WcPageGetOpaque(page)->type = WC_PAGE_META;
	meta = WcPageGetMeta(page);
	memset(meta, 0, sizeof(WcMetaData));
	meta->magic = WC_META_MAGIC;
	meta->version = WC_META_VERSION;
	meta->storage_id = storage_id;
	meta->next_rowid = 1;
	meta->next_segment_id = 1;
	meta->next_l0_gen = 2;
	meta->ngens = 1;
	meta->gens[0].gen = 1;
	meta->gens[0].head = InvalidBlockNumber;
	meta->gens[0].tail = InvalidBlockNumber;
	((PageHeader) page)->pd_lower = (char *) meta + sizeof(WcMetaData) - (char *) page;
}

uint64
wc_new_storage_id(void)
{
	Oid			nsp = get_namespace_oid(WIDECOL_SCHEMA, false);
	Oid			seq = get_relname_relid("storage_id_seq", nsp);

	if (!OidIsValid(seq))
		elog(ERROR, "widecol: sequence widecol.storage_id_seq is missing");
	/*
	 * Not nextval(): storage ids are widecol's own business, and a role that
	 * may create or truncate a table needs no privilege on the sequence.
	 */
	return (uint64) nextval_internal(seq, false);
}

static Buffer
meta_lock(Relation rel, int mode)
{
	Buffer		buf = ReadBuffer(rel, WC_META_BLOCK);
	WcMetaData *meta;

	LockBuffer(buf, mode);
	wc_check_page(rel, buf, WC_PAGE_META);
	meta = WcPageGetMeta(BufferGetPage(buf));
	if (meta->magic != WC_META_MAGIC || meta->version != WC_META_VERSION)
	{
		wc_note_corruption(rel, "metapage", 0, WC_META_BLOCK);
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("widecol: bad metapage in relation \"%s\"", RelationGetRelationName(rel)),
				 errdetail("magic %08X version %u; this build reads version %u", meta->magic,
						   meta->version, WC_META_VERSION),
				 errhint("A table written by another version of widecol's storage format must be dumped with that version and restored.")));
	}
	return buf;
}

/*
 * The storage id, for DROP TABLE: read from any metapage with our magic,
 * whatever its format version (magic, version and storage id come first in
 * every version), so that a table this build cannot read can be dropped.
 * False when the metapage is unreadable.
 */
bool
wc_meta_storage_id(Relation rel, uint64 *storage_id)
{
	Buffer		buf;
	Page		page;
	bool		ok;

	if (RelationGetNumberOfBlocks(rel) == 0)
		return false;
	buf = ReadBuffer(rel, WC_META_BLOCK);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	ok = !PageIsNew(page) && WcPageGetMeta(page)->magic == WC_META_MAGIC;
	if (ok)
		*storage_id = WcPageGetMeta(page)->storage_id;
	UnlockReleaseBuffer(buf);
	return ok;
}

/*
 * The storage id of rel's relfilenode (fixed for its life), remembered for
 * the last relfilenode asked about: a merge needs it before it reads the
 * rest of the metapage.
 */
uint64
wc_storage_id(Relation rel, bool refresh)
{
	static RelFileNode cached_node;
	static uint64 cached_id = 0;

	if (refresh || cached_id == 0 || !RelFileNodeEquals(cached_node, rel->rd_node))
	{
		WcMetaData	meta;

		wc_meta_read(rel, &meta);
		cached_node = rel->rd_node;
		cached_id = meta.storage_id;
	}
	return cached_id;
}

/*
 * A copy of the metapage's contents: its counters and the level-0
 * generations and pending runs it lists, not the unused slots after them
 * (a lookup copied all 7 kB of them, about 1% of its CPU); those are left
 * as they were in *out.
 */
void
wc_meta_read(Relation rel, WcMetaData *out)
{
	Buffer		buf = meta_lock(rel, BUFFER_LOCK_SHARE);
	const WcMetaData *meta = WcPageGetMeta(BufferGetPage(buf));
	uint32		ngens = Min(meta->ngens, WC_MAX_L0_GENS);
	uint32		npending = Min(meta->npending, WC_MAX_PENDING_RUNS);

	memcpy(out, meta, offsetof(WcMetaData, gens));
	memcpy(out->gens, meta->gens, sizeof(WcL0Gen) * ngens);
	out->npending = meta->npending;
	out->pad = meta->pad;
	memcpy(out->pending, meta->pending, sizeof(WcPendingRun) * npending);
	UnlockReleaseBuffer(buf);
}

/* Advance a metapage counter by `n`, WAL-logged; returns the old value. */
static uint64
meta_advance(Relation rel, size_t field_offset, uint64 n)
{
	Buffer		buf = meta_lock(rel, BUFFER_LOCK_EXCLUSIVE);
	GenericXLogState *xs = GenericXLogStart(rel);
	Page		page = GenericXLogRegisterBuffer(xs, buf, 0);
	uint64	   *field = (uint64 *) ((char *) WcPageGetMeta(page) + field_offset);
	uint64		old = *field;

	*field = old + n;
	GenericXLogFinish(xs);
	UnlockReleaseBuffer(buf);
	return old;
}

/*
 * Bytes written into runs, for write amplification: by flushes and bulk
 * writes (data entering the runs) or by compactions (data written again).
 * Counted when written, also if the writer later aborts: the bytes were
 * written all the same.
 */
void
wc_meta_count_written(Relation rel, bool compaction, int64 bytes)
{
	if (bytes > 0)
		meta_advance(rel, compaction ? offsetof(WcMetaData, bytes_compacted)
					 : offsetof(WcMetaData, bytes_ingested), (uint64) bytes);
}

uint64
wc_meta_next_segment_id(Relation rel)
{
	return meta_advance(rel, offsetof(WcMetaData, next_segment_id), 1);
}

/*
 * Hidden row ids of keyless tables come in chunks, WAL-logged before use,
 * so an id is never handed out twice, even across a crash.
 */
uint64
wc_meta_alloc_rowid(Relation rel)
{
	static Oid	cached_rel = InvalidOid;
	static RelFileNode cached_node;
	static uint64 next = 0,
				end = 0;

	if (cached_rel != RelationGetRelid(rel) ||
		!RelFileNodeEquals(cached_node, rel->rd_node) || next >= end)
	{
		next = meta_advance(rel, offsetof(WcMetaData, next_rowid), WC_ROWID_CHUNK);
		end = next + WC_ROWID_CHUNK;
		cached_rel = RelationGetRelid(rel);
		cached_node = rel->rd_node;
	}
	return next++;
}

/*
 * The write time of a new version of this table.  Last-write-wins needs write
 * times that keep increasing across restarts, crashes and failovers, also
 * when the wall clock steps back in between.  The shared clock is monotonic
 * only while the server runs, so the metapage holds a WAL-logged reservation
 * that every write time handed out stays below, raised a second ahead at a
 * time (one metapage write per second of writes), with the start time of the
 * server that made it.  A reservation made by an earlier run of the server
 * (or by the primary, after a failover) lifts the shared clock past it; one
 * made by this run is already behind the shared clock.  The cache is per
 * backend; a stale one only costs a metapage read.
 */
#define WC_CLOCK_RESERVE_USECS	1000000

/*
 * A backend keeps the reservations of the last tables it wrote: a statement
 * with query tables writes several in turn.
 */
#define WC_CLOCK_CACHE_SIZE 8

typedef struct WcClockCacheEntry
{
	Oid			relid;
	RelFileNode node;
	int64		reserved;
} WcClockCacheEntry;

int64
wc_meta_write_ts(Relation rel)
{
	return wc_meta_write_ts_n(rel, 1);
}

/* n write times for rel, 1 us apart (wc_next_write_ts_n): the first. */
int64
wc_meta_write_ts_n(Relation rel, int n)
{
	static WcClockCacheEntry cache[WC_CLOCK_CACHE_SIZE];
	static int	next_victim = 0;
	WcClockCacheEntry *e = NULL;
	int64		ts,
				last;

	for (int i = 0; i < WC_CLOCK_CACHE_SIZE && e == NULL; i++)
		if (cache[i].relid == RelationGetRelid(rel) && RelFileNodeEquals(cache[i].node, rel->rd_node))
			e = &cache[i];
	if (e == NULL)
	{
		WcMetaData meta;

		wc_meta_read(rel, &meta);
		e = &cache[next_victim];
		next_victim = (next_victim + 1) % WC_CLOCK_CACHE_SIZE;
		e->reserved = meta.clock_reserved;
		if (meta.clock_epoch != (int64) PgStartTime)
			wc_clock_advance_to(e->reserved);
		e->relid = RelationGetRelid(rel);
		e->node = rel->rd_node;
	}
	ts = wc_next_write_ts_n(n);
	last = ts + n - 1;
	/* a client's write time is not the clock: it reserves nothing */
	if (last >= e->reserved && !wc_write_time_from_client())
	{
		Buffer		buf = meta_lock(rel, BUFFER_LOCK_EXCLUSIVE);
		WcMetaData *meta = WcPageGetMeta(BufferGetPage(buf));

		if (last >= meta->clock_reserved)
		{
			GenericXLogState *xs = GenericXLogStart(rel);
			Page		page = GenericXLogRegisterBuffer(xs, buf, 0);

			WcPageGetMeta(page)->clock_reserved = last + WC_CLOCK_RESERVE_USECS;
			WcPageGetMeta(page)->clock_epoch = (int64) PgStartTime;
			GenericXLogFinish(xs);
		}
		e->reserved = WcPageGetMeta(BufferGetPage(buf))->clock_reserved;
		UnlockReleaseBuffer(buf);
	}
	return ts;
}

