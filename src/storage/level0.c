/*
 * level0.c — level 0: unsorted, WAL-logged pages that take small writes.
 *
 * See "Level 0" in src/README.md for the locking protocol that lets a flush
 * seal a generation.
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "storage/bufmgr.h"

#include "widecol.h"
#include "storage/level0.h"
#include "storage/metapage.h"
#include "storage/page.h"
#include "storage/reclaim.h"
#include "storage/row.h"

#define WcPageGetMeta(page) ((WcMetaData *) PageGetContents(page))

static void
init_l0_page(Page page, uint64 gen)
{
	WcPageOpaque op;

	PageInit(page, BLCKSZ, sizeof(WcPageOpaqueData));
	op = WcPageGetOpaque(page);
	op->type = WC_PAGE_L0;
	op->segment = gen;
	op->aux = InvalidBlockNumber;	/* next page of the generation */
}

/* With every generation slot taken no flush can seal: don't try each row. */
static bool
l0_wants_flush(const WcMetaData *meta)
{
	return (int64) meta->gens[meta->ngens - 1].npages * (BLCKSZ / 1024) > wc_level0_max_size_kb &&
		meta->ngens < WC_MAX_L0_GENS;
}

/* Try to add the row to a locked page; false if it does not fit. */
static bool
try_add(Relation rel, Buffer buf, WcRowHeader *row, ItemPointer tid)
{
	Page		page = BufferGetPage(buf);
	GenericXLogState *xs;
	OffsetNumber off;

	if (PageGetFreeSpace(page) < MAXALIGN(row->len))
		return false;
	xs = GenericXLogStart(rel);
	page = GenericXLogRegisterBuffer(xs, buf, 0);
	off = PageAddItem(page, (Item) row, row->len, InvalidOffsetNumber, false, false);
	if (off == InvalidOffsetNumber)
	{
		GenericXLogAbort(xs);
		return false;
	}
	GenericXLogFinish(xs);
	ItemPointerSet(tid, BufferGetBlockNumber(buf), off);
	return true;
}

/*
 * Append a version to the active generation.  Returns whether level 0 has
 * outgrown widecol.level0_max_size and a flush could seal it (read under
 * the metapage lock we hold anyway, so the insert path reads no more pages).
 */
bool
wc_l0_append(Relation rel, WcRowHeader *row, ItemPointer tid)
{
	bool		full;

	Buffer		metabuf = ReadBuffer(rel, WC_META_BLOCK);
	WcMetaData *meta;
	WcL0Gen    *cur;
	Buffer		tailbuf = InvalidBuffer;
	Buffer		newbuf;
	GenericXLogState *xs;
	Page		metapage,
				newpage;

	/* Fast path: the active generation's tail page has room. */
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	wc_check_page(rel, metabuf, WC_PAGE_META);
	meta = WcPageGetMeta(BufferGetPage(metabuf));
	cur = &meta->gens[meta->ngens - 1];
	if (cur->tail != InvalidBlockNumber)
	{
		tailbuf = ReadBuffer(rel, cur->tail);
		LockBuffer(tailbuf, BUFFER_LOCK_EXCLUSIVE);
		wc_check_page(rel, tailbuf, WC_PAGE_L0);
		if (try_add(rel, tailbuf, row, tid))
		{
			full = l0_wants_flush(meta);
			UnlockReleaseBuffer(tailbuf);
			UnlockReleaseBuffer(metabuf);
			return full;
		}
		UnlockReleaseBuffer(tailbuf);
	}
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	/* Slow path: metapage exclusively; someone may have added a page. */
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = WcPageGetMeta(BufferGetPage(metabuf));
	cur = &meta->gens[meta->ngens - 1];
	tailbuf = InvalidBuffer;
	if (cur->tail != InvalidBlockNumber)
	{
		tailbuf = ReadBuffer(rel, cur->tail);
		LockBuffer(tailbuf, BUFFER_LOCK_EXCLUSIVE);
		wc_check_page(rel, tailbuf, WC_PAGE_L0);
		if (try_add(rel, tailbuf, row, tid))
		{
			full = l0_wants_flush(meta);
			UnlockReleaseBuffer(tailbuf);
			UnlockReleaseBuffer(metabuf);
			return full;
		}
	}

	newbuf = wc_new_page(rel, NULL);
	xs = GenericXLogStart(rel);
	metapage = GenericXLogRegisterBuffer(xs, metabuf, 0);
	newpage = GenericXLogRegisterBuffer(xs, newbuf, GENERIC_XLOG_FULL_IMAGE);
	meta = WcPageGetMeta(metapage);
	cur = &meta->gens[meta->ngens - 1];
	init_l0_page(newpage, cur->gen);
	if (PageAddItem(newpage, (Item) row, row->len, InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
		elog(ERROR, "widecol: row of %u bytes does not fit an empty level-0 page", row->len);
	ItemPointerSet(tid, BufferGetBlockNumber(newbuf), FirstOffsetNumber);
	if (BufferIsValid(tailbuf))
	{
		Page		tailpage = GenericXLogRegisterBuffer(xs, tailbuf, 0);

		WcPageGetOpaque(tailpage)->aux = BufferGetBlockNumber(newbuf);
	}
	else
		cur->head = BufferGetBlockNumber(newbuf);
	cur->tail = BufferGetBlockNumber(newbuf);
	cur->npages++;
	meta->l0_pages++;
	GenericXLogFinish(xs);
	full = l0_wants_flush(WcPageGetMeta(BufferGetPage(metabuf)));

	if (BufferIsValid(tailbuf))
		UnlockReleaseBuffer(tailbuf);
	UnlockReleaseBuffer(newbuf);
	UnlockReleaseBuffer(metabuf);
	return full;
}

/*
 * Is this item a well-formed level-0 version?  Its lengths and the place of
 * its tuple are trusted by every reader, so a damaged one is refused first.
 */
bool
wc_l0_row_ok(const WcRowHeader *row, Size itemlen)
{
	return itemlen >= sizeof(WcRowHeader) && row->len == itemlen &&
		row->pklen <= row->keylen && row->len >= WcRowTupleOffset(row->keylen) &&
		row->tupoff == WcRowTupleOffset(row->keylen) &&
		(row->flags & WC_ROW_IN_BLOCK) == 0;
}

static void
l0_row_corrupt(Relation rel, BlockNumber blk, OffsetNumber off)
{
	wc_note_corruption(rel, "level0", 0, blk);
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("widecol: malformed row version at item %u of level-0 block %u of relation \"%s\"",
					off, blk, RelationGetRelationName(rel))));
}

/*
 * Call `cb` for every version in a generation, in page order, starting at
 * line pointer `*off` of block `*blk` (the generation's head and
 * FirstOffsetNumber for all of it).  On return *blk and *off name the last
 * page read and one past its last line pointer: pages only ever gain items
 * at their end, so a later call from there sees exactly the versions
 * appended since.  Each page is copied under its share lock, so the
 * callback runs without buffer locks.
 */
void
wc_l0_read_gen_from(Relation rel, const WcL0Gen *gen, BlockNumber *blk,
					OffsetNumber *off, wc_l0_callback cb, void *arg)
{
	PGAlignedBlock copy;

	while (*blk != InvalidBlockNumber)
	{
		Buffer		buf = ReadBuffer(rel, *blk);
		Page		page;
		OffsetNumber maxoff;
		BlockNumber next;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		wc_check_page(rel, buf, WC_PAGE_L0);
		memcpy(copy.data, BufferGetPage(buf), BLCKSZ);
		UnlockReleaseBuffer(buf);
		page = (Page) copy.data;
		if (WcPageGetOpaque(page)->segment != gen->gen)
		{
			wc_note_corruption(rel, "level0", gen->gen, *blk);
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("widecol: level-0 block %u of relation \"%s\" belongs to generation %llu, expected %llu",
							*blk, RelationGetRelationName(rel),
							(unsigned long long) WcPageGetOpaque(page)->segment,
							(unsigned long long) gen->gen)));
		}
		maxoff = PageGetMaxOffsetNumber(page);
		for (; *off <= maxoff; (*off)++)
		{
			ItemId		iid = PageGetItemId(page, *off);
			ItemPointerData tid;

			if (!ItemIdIsNormal(iid))
				continue;
			if (!wc_l0_row_ok((WcRowHeader *) PageGetItem(page, iid), ItemIdGetLength(iid)))
				l0_row_corrupt(rel, *blk, *off);
			ItemPointerSet(&tid, *blk, *off);
			cb((WcRowHeader *) PageGetItem(page, iid), &tid, arg);
		}
		next = WcPageGetOpaque(page)->aux;
		if (next == InvalidBlockNumber)
			break;				/* stay on the tail: it may still grow */
		*blk = next;
		*off = FirstOffsetNumber;
	}
}

/* Call `cb` for every version in a generation, in page order. */
void
wc_l0_read_gen(Relation rel, const WcL0Gen *gen, wc_l0_callback cb, void *arg)
{
	BlockNumber blk = gen->head;
	OffsetNumber off = FirstOffsetNumber;

	wc_l0_read_gen_from(rel, gen, &blk, &off, cb, arg);
}

/* A palloc'd copy of the level-0 version at `tid`, or NULL. */
WcRowHeader *
wc_l0_fetch(Relation rel, ItemPointer tid)
{
	Buffer		buf = ReadBuffer(rel, ItemPointerGetBlockNumber(tid));
	Page		page;
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	WcRowHeader *row = NULL;
	Size		itemlen = 0;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (off >= FirstOffsetNumber && off <= PageGetMaxOffsetNumber(page))
	{
		ItemId		iid = PageGetItemId(page, off);

		if (ItemIdIsNormal(iid))
		{
			itemlen = ItemIdGetLength(iid);
			row = palloc(itemlen);
			memcpy(row, PageGetItem(page, iid), itemlen);
		}
	}
	UnlockReleaseBuffer(buf);
	if (row && !wc_l0_row_ok(row, itemlen))
		l0_row_corrupt(rel, ItemPointerGetBlockNumber(tid), off);
	return row;
}
