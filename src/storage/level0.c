/*
 * level0.c — level 0: unsorted, WAL-logged pages that take small writes.
 *
 * See "Level 0" in src/README.md for the locking protocol that lets a flush
 * seal a generation.
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "port/pg_crc32c.h"
#include "storage/bufmgr.h"

#include "widecol.h"
#include "storage/level0.h"
#include "storage/wal.h"
#include "storage/metapage.h"
#include "storage/page.h"
#include "storage/reclaim.h"
#include "storage/row.h"

#define WcPageGetMeta(page) ((WcMetaData *) PageGetContents(page))

static void l0_page_corrupt(Relation rel, BlockNumber blk, const char *problem);

static void
init_l0_page(Page page, uint64 gen)
{
	WcPageOpaque op;

	PageInit(page, BLCKSZ, sizeof(WcPageOpaqueData));
	op = WcPageGetOpaque(page);
	op->type = WC_PAGE_L0;
	op->segment = gen;
	op->flags = WC_L0_CHECKSUMS;
	op->count = 0;
	op->aux = InvalidBlockNumber;	/* next page of the generation */
}

/*
 * The three changes that add page newblk to the active generation, made
 * alike when a backend adds it and when redo replays XLOG_WC_L0_NEW_PAGE.
 * The new page starts with its first item.
 */
void
wc_l0_new_page_init(Page page, uint64 gen, const char *item, Size itemlen)
{
	init_l0_page(page, gen);
	if (PageAddItem(page, (Item) item, itemlen, InvalidOffsetNumber, false, false) != FirstOffsetNumber)
		elog(PANIC, "widecol: a level-0 item of %zu bytes does not fit an empty page", itemlen);
	WcPageGetOpaque(page)->count = FirstOffsetNumber;
}

/* the metapage: the active generation ends at newblk (and starts there if first) */
void
wc_l0_new_page_meta(Page metapage, BlockNumber newblk, bool first)
{
	WcMetaData *meta = WcPageGetMeta(metapage);
	WcL0Gen    *cur = &meta->gens[meta->ngens - 1];

	if (first)
		cur->head = newblk;
	cur->tail = newblk;
	cur->npages++;
	meta->l0_pages++;
}

/* the old tail page links to newblk */
void
wc_l0_new_page_link(Page tailpage, BlockNumber newblk)
{
	WcPageGetOpaque(tailpage)->aux = newblk;
}

/* CRC-32C of a level-0 version: its len bytes (header, key, tuple). */
static uint32
l0_row_crc(const WcRowHeader *row)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, row, row->len);
	FIN_CRC32C(crc);
	return crc;
}

/* The item stored for a version: the version, then its CRC-32C. */
static char *
l0_item(const WcRowHeader *row, Size *itemlen)
{
	uint32		crc = l0_row_crc(row);
	char	   *item = palloc(row->len + WC_L0_CRC_SIZE);

	memcpy(item, row, row->len);
	memcpy(item + row->len, &crc, WC_L0_CRC_SIZE);
	*itemlen = row->len + WC_L0_CRC_SIZE;
	return item;
}

/* With every generation slot taken no flush can seal: don't try each row. */
static bool
l0_wants_flush(const WcMetaData *meta)
{
	return (int64) meta->gens[meta->ngens - 1].npages * (BLCKSZ / 1024) > wc_level0_max_size_kb &&
		meta->ngens < WC_MAX_L0_GENS;
}

/*
 * Try to add the item to a locked page; false if it does not fit.  A page
 * written before versions carried checksums takes no more items (its
 * readers check them the old way), nor does a page that fails its checks.
 */
static bool
try_add(Relation rel, Buffer buf, const char *item, Size itemlen, ItemPointer tid)
{
	Page		page = BufferGetPage(buf);
	const char *problem = wc_l0_page_problem(page, WcPageGetOpaque(page)->segment);

	if (problem)
		l0_page_corrupt(rel, BufferGetBlockNumber(buf), problem);
	if (!(WcPageGetOpaque(page)->flags & WC_L0_CHECKSUMS) ||
		PageGetFreeSpace(page) < MAXALIGN(itemlen))
		return false;
	ItemPointerSet(tid, BufferGetBlockNumber(buf), wc_l0_add_item(rel, buf, item, itemlen));
	return true;
}

/*
 * Try to add the item to the active generation's tail page, the metapage
 * being locked (in either mode).  When it fits, *full says whether level 0
 * wants a flush, both pages are released and the result is true.  Else
 * *tailbuf is the tail page, still locked, or InvalidBuffer if none.
 */
static bool
add_to_tail(Relation rel, Buffer metabuf, const char *item, Size itemlen,
			ItemPointer tid, Buffer *tailbuf, bool *full)
{
	WcMetaData *meta = WcPageGetMeta(BufferGetPage(metabuf));
	WcL0Gen    *cur = &meta->gens[meta->ngens - 1];

	*tailbuf = InvalidBuffer;
	if (cur->tail == InvalidBlockNumber)
		return false;
	*tailbuf = ReadBuffer(rel, cur->tail);
	LockBuffer(*tailbuf, BUFFER_LOCK_EXCLUSIVE);
	wc_check_page(rel, *tailbuf, WC_PAGE_L0);
	if (!try_add(rel, *tailbuf, item, itemlen, tid))
		return false;
	*full = l0_wants_flush(meta);
	UnlockReleaseBuffer(*tailbuf);
	UnlockReleaseBuffer(metabuf);
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
	Buffer		tailbuf;
	Buffer		newbuf;
	Size		itemlen;
	char	   *item = l0_item(row, &itemlen);

	/* Fast path: the active generation's tail page has room. */
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	wc_check_page(rel, metabuf, WC_PAGE_META);
	if (add_to_tail(rel, metabuf, item, itemlen, tid, &tailbuf, &full))
	{
		pfree(item);
		return full;
	}
	if (BufferIsValid(tailbuf))
		UnlockReleaseBuffer(tailbuf);
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	/* Slow path: metapage exclusively; someone may have added a page. */
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	if (add_to_tail(rel, metabuf, item, itemlen, tid, &tailbuf, &full))
	{
		pfree(item);
		return full;
	}

	/* what PageAddItem needs on an empty page, checked before taking one */
	if (SizeOfPageHeaderData + sizeof(ItemIdData) + MAXALIGN(itemlen) >
		BLCKSZ - MAXALIGN(sizeof(WcPageOpaqueData)))
		elog(ERROR, "widecol: row of %u bytes does not fit an empty level-0 page", row->len);
	newbuf = wc_new_page(rel, NULL);
	meta = WcPageGetMeta(BufferGetPage(metabuf));
	ItemPointerSet(tid, BufferGetBlockNumber(newbuf), FirstOffsetNumber);
	wc_l0_log_new_page(rel, metabuf, newbuf, tailbuf, meta->gens[meta->ngens - 1].gen, item, itemlen);
	full = l0_wants_flush(WcPageGetMeta(BufferGetPage(metabuf)));

	if (BufferIsValid(tailbuf))
		UnlockReleaseBuffer(tailbuf);
	UnlockReleaseBuffer(newbuf);
	UnlockReleaseBuffer(metabuf);
	pfree(item);
	return full;
}

/*
 * Add to the active generation's tail page as many of the n versions as fit
 * there, in one record; returns how many (0 when there is no tail, or it is
 * an old-format page or full).  *full as for wc_l0_append.  Each item
 * (version and CRC) is written once, into the record's data, which the
 * page takes its items from.
 */
static int64
append_to_tail_page(Relation rel, WcRowHeader **rows, int64 n, bool *full)
{
	Buffer		metabuf = ReadBuffer(rel, WC_META_BLOCK);
	WcMetaData *meta;
	WcL0Gen    *cur;
	Buffer		tailbuf;
	Page		page;
	const char *problem;
	int64		k = 0;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	wc_check_page(rel, metabuf, WC_PAGE_META);
	meta = WcPageGetMeta(BufferGetPage(metabuf));
	cur = &meta->gens[meta->ngens - 1];
	if (cur->tail == InvalidBlockNumber)
	{
		UnlockReleaseBuffer(metabuf);
		return 0;
	}
	tailbuf = ReadBuffer(rel, cur->tail);
	LockBuffer(tailbuf, BUFFER_LOCK_EXCLUSIVE);
	wc_check_page(rel, tailbuf, WC_PAGE_L0);
	page = BufferGetPage(tailbuf);
	if ((problem = wc_l0_page_problem(page, WcPageGetOpaque(page)->segment)) != NULL)
		l0_page_corrupt(rel, BufferGetBlockNumber(tailbuf), problem);
	if (WcPageGetOpaque(page)->flags & WC_L0_CHECKSUMS)
	{
		/* the free space already counts one line pointer */
		Size		room = PageGetFreeSpace(page);

		for (; k < n && k < MaxOffsetNumber; k++)
		{
			Size		need = MAXALIGN(rows[k]->len + WC_L0_CRC_SIZE) +
				(k > 0 ? sizeof(ItemIdData) : 0);

			if (need > room)
				break;
			room -= need;
		}
	}
	if (k > 0)
	{
		StringInfoData data;

		initStringInfo(&data);
		for (int64 i = 0; i < k; i++)
		{
			uint16		itemlen = rows[i]->len + WC_L0_CRC_SIZE;
			uint32		crc = l0_row_crc(rows[i]);

			appendBinaryStringInfo(&data, (char *) &itemlen, sizeof(uint16));
			appendBinaryStringInfo(&data, (char *) rows[i], rows[i]->len);
			appendBinaryStringInfo(&data, (char *) &crc, WC_L0_CRC_SIZE);
		}
		wc_l0_add_items(rel, tailbuf, data.data, data.len, (int) k);
		*full |= l0_wants_flush(meta);
		pfree(data.data);
	}
	UnlockReleaseBuffer(tailbuf);
	UnlockReleaseBuffer(metabuf);
	return k;
}

/*
 * Append versions to the active generation: those that fit on its tail page
 * under one lock and one WAL record, the rest as wc_l0_append does.  For a
 * statement's few rows, which need no TIDs.  Returns whether level 0 wants
 * a flush.
 */
bool
wc_l0_append_many(Relation rel, WcRowHeader **rows, int64 n)
{
	bool		full = false;
	int64		done = 0;

	while (done < n)
	{
		int64		k = append_to_tail_page(rel, rows + done, n - done, &full);

		if (k == 0)
		{
			ItemPointerData tid;

			full |= wc_l0_append(rel, rows[done], &tid);
			k = 1;
		}
		done += k;
	}
	return full;
}

/*
 * Is this page's structure sound: its header, the item count the special
 * space keeps, and line pointers that are all in use and inside the item
 * area?  Versions are never removed from a level-0 page, so any other line
 * pointer, or a count that differs (a damaged pd_lower would hide the last
 * versions), is damage.  NULL, or what is wrong.
 */
const char *
wc_l0_page_problem(Page page, uint64 gen)
{
	PageHeader	ph = (PageHeader) page;
	WcPageOpaque op;
	OffsetNumber maxoff;
	LocationIndex lowest = ph->pd_special;

	if (PageIsNew(page) ||
		ph->pd_special != BLCKSZ - MAXALIGN(sizeof(WcPageOpaqueData)) ||
		WcPageGetOpaque(page)->type != WC_PAGE_L0)
		return "not a level-0 page";
	op = WcPageGetOpaque(page);
	if (op->segment != gen)
		return "page of another generation";
	if (ph->pd_lower < SizeOfPageHeaderData || ph->pd_lower > ph->pd_upper ||
		ph->pd_upper > ph->pd_special ||
		(ph->pd_lower - SizeOfPageHeaderData) % sizeof(ItemIdData) != 0)
		return "invalid page header";
	maxoff = PageGetMaxOffsetNumber(page);
	if ((op->flags & WC_L0_CHECKSUMS) && op->count != maxoff)
		return "item count differs from the page's line pointers";
	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		iid = PageGetItemId(page, off);

		if (!ItemIdIsNormal(iid) || ItemIdGetOffset(iid) < ph->pd_upper ||
			ItemIdGetOffset(iid) % MAXIMUM_ALIGNOF != 0 ||
			ItemIdGetOffset(iid) + ItemIdGetLength(iid) > ph->pd_special)
			return "invalid line pointer";
		/*
		 * Items are added downwards from the special space, each right below
		 * the one before: a line pointer that points elsewhere (at another
		 * item, hiding its own) is damage.
		 */
		if ((op->flags & WC_L0_CHECKSUMS) &&
			ItemIdGetOffset(iid) != lowest - MAXALIGN(ItemIdGetLength(iid)))
			return "invalid line pointer";
		lowest = Min(lowest, ItemIdGetOffset(iid));
	}
	if (lowest != ph->pd_upper)
		return "invalid page header";
	return NULL;
}

/*
 * Is item `off` of a page (whose structure wc_l0_page_problem accepted) a
 * sound version?  Its lengths and the place of its tuple are trusted by
 * every reader, so they are checked first, then its checksum (pages
 * written before versions carried one have none).  NULL, or what is wrong;
 * *row is set to the version.
 */
const char *
wc_l0_item_problem(Page page, OffsetNumber off, WcRowHeader **row)
{
	ItemId		iid = PageGetItemId(page, off);
	Size		itemlen = ItemIdGetLength(iid);
	bool		crc = (WcPageGetOpaque(page)->flags & WC_L0_CHECKSUMS) != 0;
	WcRowHeader *r = (WcRowHeader *) PageGetItem(page, iid);
	uint32		stored;

	*row = r;
	if (itemlen < sizeof(WcRowHeader) + (crc ? WC_L0_CRC_SIZE : 0) ||
		r->len != itemlen - (crc ? WC_L0_CRC_SIZE : 0) ||
		r->pklen > r->keylen || r->keylen > WC_MAX_KEY_SIZE ||
		r->len < WcRowTupleOffset(r->keylen) ||
		r->tupoff != WcRowTupleOffset(r->keylen) ||
		(r->flags & WC_ROW_IN_BLOCK) != 0)
		return "malformed row version";
	if (!crc)
		return NULL;
	memcpy(&stored, (char *) r + r->len, WC_L0_CRC_SIZE);
	if (stored != l0_row_crc(r))
		return "checksum mismatch";
	return NULL;
}

static void
l0_page_corrupt(Relation rel, BlockNumber blk, const char *problem)
{
	wc_note_corruption(rel, "level0", 0, blk);
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("widecol: %s in level-0 block %u of relation \"%s\"",
					problem, blk, RelationGetRelationName(rel))));
}

static void
l0_row_corrupt(Relation rel, BlockNumber blk, OffsetNumber off, const char *problem)
{
	wc_note_corruption(rel, "level0", 0, blk);
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("widecol: %s at item %u of level-0 block %u of relation \"%s\"",
					problem, off, blk, RelationGetRelationName(rel))));
}

/* How many pages the metapage lists for a generation now (0 if it left). */
static uint32
gen_npages_now(Relation rel, uint64 gen)
{
	WcMetaData	meta;

	wc_meta_read(rel, &meta);
	for (uint32 g = 0; g < meta.ngens; g++)
		if (meta.gens[g].gen == gen)
			return meta.gens[g].npages;
	return 0;
}

/*
 * Call `cb` for every version in a generation, in page order, starting at
 * line pointer `*off` of block `*blk` (the generation's head and
 * FirstOffsetNumber for all of it).  On return *blk and *off name the last
 * page read and one past its last line pointer: pages only ever gain items
 * at their end, so a later call from there sees exactly the versions
 * appended since.  Each page is copied under its share lock, so the
 * callback runs without buffer locks.
 *
 * The chain of pages is checked too: a read from the head must pass the
 * tail the caller's metapage named (the tail only moves forward, so a
 * chain that ends before it lost pages to a damaged link), and may not
 * visit more pages than the generation has (a link back would loop).
 */
void
wc_l0_read_gen_from(Relation rel, const WcL0Gen *gen, BlockNumber *blk,
					OffsetNumber *off, wc_l0_callback cb, void *arg)
{
	PGAlignedBlock copy;
	bool		from_head = *blk == gen->head && *off == FirstOffsetNumber;
	bool		seen_tail = false;
	uint32		visited = 0;
	uint32		limit = gen->npages;

	/*
	 * The relation's size (a system call) is asked for only when a block
	 * is to be read past what is known to exist: not at all for a
	 * generation without pages, nor when resuming at a block read before
	 * whose chain ends there.
	 */
	BlockNumber nblocks = from_head ? 0 : *blk + 1;

	while (*blk != InvalidBlockNumber)
	{
		Buffer		buf;
		Page		page;
		OffsetNumber maxoff;
		BlockNumber next;
		const char *problem;

		if (*blk >= nblocks)
			nblocks = RelationGetNumberOfBlocks(rel);
		if (*blk == WC_META_BLOCK || *blk >= nblocks)
			l0_page_corrupt(rel, *blk, "level-0 chain leaves the relation");
		if (++visited > limit && visited > (limit = gen_npages_now(rel, gen->gen)) && limit > 0)
			l0_page_corrupt(rel, *blk, "level-0 chain loops");
		buf = ReadBuffer(rel, *blk);
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
		if ((problem = wc_l0_page_problem(page, gen->gen)) != NULL)
			l0_page_corrupt(rel, *blk, problem);
		if (*blk == gen->tail)
		{
			/* pages were skipped by a link that jumps ahead */
			if (from_head && visited != gen->npages)
				l0_page_corrupt(rel, *blk, "level-0 chain skips pages");
			seen_tail = true;
		}
		maxoff = PageGetMaxOffsetNumber(page);
		for (; *off <= maxoff; (*off)++)
		{
			ItemPointerData tid;
			WcRowHeader *row;

			if ((problem = wc_l0_item_problem(page, *off, &row)) != NULL)
				l0_row_corrupt(rel, *blk, *off, problem);
			ItemPointerSet(&tid, *blk, *off);
			cb(row, &tid, arg);
		}
		next = WcPageGetOpaque(page)->aux;
		if (next == InvalidBlockNumber)
		{
			if (from_head && !seen_tail)
				l0_page_corrupt(rel, *blk, "level-0 chain ends before its tail");
			break;				/* stay on the tail: it may still grow */
		}
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
	const char *problem = NULL;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (off >= FirstOffsetNumber && off <= PageGetMaxOffsetNumber(page))
	{
		WcRowHeader *item;

		problem = wc_l0_page_problem(page, WcPageGetOpaque(page)->segment);
		if (problem == NULL && (problem = wc_l0_item_problem(page, off, &item)) == NULL)
			row = wc_row_copy(NULL, item);
	}
	UnlockReleaseBuffer(buf);
	if (problem)
		l0_row_corrupt(rel, ItemPointerGetBlockNumber(tid), off, problem);
	return row;
}
