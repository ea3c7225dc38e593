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

#include "widecol.h"

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
	return (uint64) DatumGetInt64(DirectFunctionCall1(nextval_oid, ObjectIdGetDatum(seq)));
}

void
wc_check_page(Relation rel, Buffer buf, uint16 expected_type)
{
	Page		page = BufferGetPage(buf);

	if (PageIsNew(page) ||
		((PageHeader) page)->pd_special != BLCKSZ - MAXALIGN(sizeof(WcPageOpaqueData)) ||
		WcPageGetOpaque(page)->type != expected_type)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("widecol: unexpected page in block %u of relation \"%s\"",
						BufferGetBlockNumber(buf), RelationGetRelationName(rel)),
				 errdetail("Expected page type %d, found %d.", expected_type,
						   PageIsNew(page) ? 0 : WcPageGetOpaque(page)->type)));
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
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("widecol: bad metapage in relation \"%s\"", RelationGetRelationName(rel)),
				 errdetail("magic %08X version %u", meta->magic, meta->version)));
	return buf;
}

void
wc_meta_read(Relation rel, WcMetaData *out)
{
	Buffer		buf = meta_lock(rel, BUFFER_LOCK_SHARE);

	memcpy(out, WcPageGetMeta(BufferGetPage(buf)), sizeof(WcMetaData));
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

/* A new, zeroed, exclusively locked page at the end of the relation. */
Buffer
wc_extend_page(Relation rel, BufferAccessStrategy strategy)
{
	Buffer		buf;

	LockRelationForExtension(rel, ExclusiveLock);
	buf = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_NORMAL, strategy);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	UnlockRelationForExtension(rel, ExclusiveLock);
	return buf;
}
