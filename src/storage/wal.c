/*
 * wal.c — widecol's own WAL resource manager.
 *
 * Page contents are mostly logged with generic WAL and full-page images;
 * this resource manager logs what is frequent (a version appended to a
 * level-0 page: its bytes only) and what those cannot carry: the recovery
 * conflict of a
 * metapage change that stops readers from finding level-0 pages an old
 * snapshot may still need.  On a hot standby, its redo cancels queries whose
 * snapshots are older than the retiring transaction, as heap's pruning
 * records do (unless hot_standby_feedback keeps the primary from it).
 *
 * The resource manager id is in the custom range (see src/README.md).
 * rm_mask lets wal_consistency_checking = 'all' check our records too.
 */
#include "postgres.h"

#include "access/bufmask.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "access/xlogutils.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/standby.h"

#include "widecol.h"
#include "storage/level0.h"
#include "storage/page.h"
#include "storage/wal.h"

#define XLOG_WC_SNAPSHOT_CONFLICT	0x00
#define XLOG_WC_FREE_PAGES			0x10	/* the record's blocks become FREE pages */
#define XLOG_WC_L0_ADD				0x20	/* a version appended to a level-0 page */
#define XLOG_WC_L0_ADD_ITEMS		0x30	/* versions appended to a level-0 page */
#define XLOG_WC_L0_NEW_PAGE			0x40	/* a level-0 page joins the active generation */

/* XLOG_WC_L0_ADD: the item's bytes are the block's data */
typedef struct xl_wc_l0_add
{
	OffsetNumber off;
} xl_wc_l0_add;

/*
 * XLOG_WC_L0_ADD_ITEMS: nitems items from line pointer off on; the block's
 * data is each item's length (uint16, unaligned) followed by its bytes.
 */
typedef struct xl_wc_l0_add_items
{
	OffsetNumber off;
	uint16		nitems;
} xl_wc_l0_add_items;

/*
 * XLOG_WC_L0_NEW_PAGE: block 1 becomes the tail of the active generation gen
 * (of the metapage, block 0), with its first item as the block's data;
 * block 2, the old tail if there was one, links to it.  The change, not
 * page images: generic WAL logged the new page whole and diffed the others.
 */
typedef struct xl_wc_l0_new_page
{
	uint64		gen;
} xl_wc_l0_new_page;

typedef struct xl_wc_snapshot_conflict
{
	RelFileNode node;
	TransactionId latest_removed_xid;
} xl_wc_snapshot_conflict;

/* The item goes where it went on the primary: the next line pointer. */
static void
redo_l0_add(XLogReaderState *record)
{
	xl_wc_l0_add *xlrec = (xl_wc_l0_add *) XLogRecGetData(record);
	Buffer		buf;

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		Size		len;
		char	   *item = XLogRecGetBlockData(record, 0, &len);

		if (PageAddItem(page, (Item) item, len, xlrec->off, false, false) != xlrec->off)
			elog(PANIC, "widecol redo: could not add a level-0 item at offset %u", xlrec->off);
		WcPageGetOpaque(page)->count = xlrec->off;
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

/*
 * Add the n items of data (each its uint16 length, then its bytes) to a
 * level-0 page at consecutive line pointers from `first` (InvalidOffsetNumber:
 * the next free one), as the backend and redo both do; returns the first
 * item's line pointer.  In a critical section: a failure is a PANIC.
 */
static OffsetNumber
add_items(Page page, const char *data, Size datalen, OffsetNumber first, int n)
{
	const char *p = data;
	const char *end = data + datalen;
	bool		placed = OffsetNumberIsValid(first);	/* redo: where the backend put them */
	OffsetNumber off = first;

	for (int i = 0; i < n; i++)
	{
		uint16		itemlen;
		OffsetNumber want = placed ? first + i : InvalidOffsetNumber;

		if (p + sizeof(uint16) > end)
			elog(PANIC, "widecol: level-0 items end early");
		memcpy(&itemlen, p, sizeof(uint16));
		p += sizeof(uint16);
		if (p + itemlen > end ||
			(off = PageAddItem(page, (Item) p, itemlen, want, false, false)) == InvalidOffsetNumber)
			elog(PANIC, "widecol: could not add a level-0 item of %u bytes", itemlen);
		if (i == 0)
			first = off;
		p += itemlen;
	}
	WcPageGetOpaque(page)->count = off;
	return first;
}

static void
redo_l0_add_items(XLogReaderState *record)
{
	xl_wc_l0_add_items *xlrec = (xl_wc_l0_add_items *) XLogRecGetData(record);
	Buffer		buf;

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		Size		len;
		char	   *data = XLogRecGetBlockData(record, 0, &len);

		add_items(page, data, len, xlrec->off, xlrec->nitems);
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

/*
 * All three pages stay locked until all are changed, as on the primary: a
 * hot-standby reader must not meet a chain that passes the metapage's tail.
 */
static void
redo_l0_new_page(XLogReaderState *record)
{
	xl_wc_l0_new_page *xlrec = (xl_wc_l0_new_page *) XLogRecGetData(record);
	bool		has_tail = XLogRecHasBlockRef(record, 2);
	BlockNumber newblk;
	Buffer		metabuf,
				tailbuf = InvalidBuffer,
				newbuf;
	Size		len;
	char	   *item = XLogRecGetBlockData(record, 1, &len);

	XLogRecGetBlockTag(record, 1, NULL, NULL, &newblk);
	if (XLogReadBufferForRedo(record, 0, &metabuf) == BLK_NEEDS_REDO)
	{
		wc_l0_new_page_meta(BufferGetPage(metabuf), newblk, !has_tail);
		PageSetLSN(BufferGetPage(metabuf), record->EndRecPtr);
		MarkBufferDirty(metabuf);
	}
	if (has_tail && XLogReadBufferForRedo(record, 2, &tailbuf) == BLK_NEEDS_REDO)
	{
		wc_l0_new_page_link(BufferGetPage(tailbuf), newblk);
		PageSetLSN(BufferGetPage(tailbuf), record->EndRecPtr);
		MarkBufferDirty(tailbuf);
	}
	newbuf = XLogInitBufferForRedo(record, 1);
	wc_l0_new_page_init(BufferGetPage(newbuf), xlrec->gen, item, len);
	PageSetLSN(BufferGetPage(newbuf), record->EndRecPtr);
	MarkBufferDirty(newbuf);
	UnlockReleaseBuffer(newbuf);
	if (BufferIsValid(tailbuf))
		UnlockReleaseBuffer(tailbuf);
	if (BufferIsValid(metabuf))
		UnlockReleaseBuffer(metabuf);
}

static void
wc_rm_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (info == XLOG_WC_FREE_PAGES)
	{
		/* every page is rewritten whole: nothing of the old one is read */
		for (uint8 id = 0; id <= XLogRecMaxBlockId(record); id++)
		{
			Buffer		buf = XLogInitBufferForRedo(record, id);

			wc_page_init_free(BufferGetPage(buf));
			PageSetLSN(BufferGetPage(buf), record->EndRecPtr);
			MarkBufferDirty(buf);
			UnlockReleaseBuffer(buf);
		}
	}
	else if (info == XLOG_WC_L0_ADD)
		redo_l0_add(record);
	else if (info == XLOG_WC_L0_ADD_ITEMS)
		redo_l0_add_items(record);
	else if (info == XLOG_WC_L0_NEW_PAGE)
		redo_l0_new_page(record);
	else if (info == XLOG_WC_SNAPSHOT_CONFLICT)
	{
		xl_wc_snapshot_conflict *xlrec = (xl_wc_snapshot_conflict *) XLogRecGetData(record);

		if (InHotStandby)
			ResolveRecoveryConflictWithSnapshot(xlrec->latest_removed_xid, xlrec->node);
	}
	else
		elog(PANIC, "widecol redo: unknown op code %u", info);
}

static void
wc_rm_desc(StringInfo buf, XLogReaderState *record)
{
	xl_wc_snapshot_conflict *xlrec = (xl_wc_snapshot_conflict *) XLogRecGetData(record);

	if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) == XLOG_WC_FREE_PAGES)
	{
		appendStringInfo(buf, "%d pages", XLogRecMaxBlockId(record) + 1);
		return;
	}
	if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) == XLOG_WC_L0_NEW_PAGE)
	{
		appendStringInfo(buf, "generation %llu",
						 (unsigned long long) ((xl_wc_l0_new_page *) XLogRecGetData(record))->gen);
		return;
	}
	if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) == XLOG_WC_L0_ADD_ITEMS)
	{
		xl_wc_l0_add_items *x = (xl_wc_l0_add_items *) XLogRecGetData(record);

		appendStringInfo(buf, "off %u, %u items", x->off, x->nitems);
		return;
	}
	if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) == XLOG_WC_L0_ADD)
	{
		appendStringInfo(buf, "off %u", ((xl_wc_l0_add *) XLogRecGetData(record))->off);
		return;
	}
	appendStringInfo(buf, "rel %u/%u/%u; latest removed xid %u",
					 xlrec->node.spcNode, xlrec->node.dbNode, xlrec->node.relNode,
					 xlrec->latest_removed_xid);
}

static const char *
wc_rm_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_WC_SNAPSHOT_CONFLICT:
			return "SNAPSHOT_CONFLICT";
		case XLOG_WC_FREE_PAGES:
			return "FREE_PAGES";
		case XLOG_WC_L0_ADD:
			return "L0_ADD";
		case XLOG_WC_L0_ADD_ITEMS:
			return "L0_ADD_ITEMS";
		case XLOG_WC_L0_NEW_PAGE:
			return "L0_NEW_PAGE";
	}
	return NULL;
}

/*
 * wal_consistency_checking: what may differ between the primary's page and
 * the replayed one.  Our records write FREE pages, rebuilt whole by redo,
 * and append items to level-0 pages with PageAddItem as the primary did, so
 * only the LSN, the checksum and the unused space between the line pointers
 * and the items (not part of the page's meaning) are masked.
 */
static void
wc_rm_mask(char *pagedata, BlockNumber blkno)
{
	mask_page_lsn_and_checksum(pagedata);
	mask_unused_space(pagedata);
}

static RmgrData wc_rmgr = {
	.rm_name = "widecol",
	.rm_redo = wc_rm_redo,
	.rm_desc = wc_rm_desc,
	.rm_identify = wc_rm_identify,
	.rm_mask = wc_rm_mask,
};

void
wc_register_rmgr(void)
{
	RegisterCustomRmgr(WC_RMGR_ID, &wc_rmgr);
}

/* Before removing something old snapshots may need: conflict on standbys. */
void
wc_log_snapshot_conflict(Relation rel, TransactionId latest_removed_xid)
{
	xl_wc_snapshot_conflict xlrec;

	if (!RelationNeedsWAL(rel) || !XLogStandbyInfoActive() ||
		!TransactionIdIsValid(latest_removed_xid))
		return;
	xlrec.node = rel->rd_node;
	xlrec.latest_removed_xid = latest_removed_xid;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	XLogInsert(WC_RMGR_ID, XLOG_WC_SNAPSHOT_CONFLICT);
}

/*
 * Make the locked buffer a FREE page, logged without its image: redo
 * initializes the page anew, so a torn old page does not matter.
 */
void
wc_free_buffer(Relation rel, Buffer buf)
{
	START_CRIT_SECTION();
	wc_page_init_free(BufferGetPage(buf));
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
	{
		XLogRecPtr	recptr;

		XLogBeginInsert();
		XLogRegisterBuffer(0, buf, REGBUF_WILL_INIT);
		recptr = XLogInsert(WC_RMGR_ID, XLOG_WC_FREE_PAGES);
		PageSetLSN(BufferGetPage(buf), recptr);
	}
	END_CRIT_SECTION();
}

/*
 * Append an item to a locked level-0 page that has room for it, logged as
 * the item alone (generic WAL would diff the whole page for each version).
 */
OffsetNumber
wc_l0_add_item(Relation rel, Buffer buf, const char *item, Size itemlen)
{
	Page		page = BufferGetPage(buf);
	OffsetNumber off;

	START_CRIT_SECTION();
	off = PageAddItem(page, (Item) item, itemlen, InvalidOffsetNumber, false, false);
	if (off == InvalidOffsetNumber)
		elog(PANIC, "widecol: no room for a level-0 item of %zu bytes", itemlen);
	WcPageGetOpaque(page)->count = off;
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
	{
		xl_wc_l0_add xlrec;
		XLogRecPtr	recptr;

		xlrec.off = off;
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, sizeof(xlrec));
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		XLogRegisterBufData(0, (char *) item, itemlen);
		recptr = XLogInsert(WC_RMGR_ID, XLOG_WC_L0_ADD);
		PageSetLSN(page, recptr);
	}
	END_CRIT_SECTION();
	return off;
}

/*
 * Append n items to a locked level-0 page that has room for all of them, as
 * one record (a statement's few versions of one table: one lock and one
 * record instead of one each).  data holds each item's length (uint16,
 * unaligned) followed by its bytes, as the record carries them.
 */
void
wc_l0_add_items(Relation rel, Buffer buf, const char *data, Size datalen, int n)
{
	Page		page = BufferGetPage(buf);
	xl_wc_l0_add_items xlrec;

	Assert(n > 0 && n <= MaxOffsetNumber);
	START_CRIT_SECTION();
	xlrec.off = add_items(page, data, datalen, InvalidOffsetNumber, n);
	xlrec.nitems = n;
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
	{
		XLogRecPtr	recptr;

		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, sizeof(xlrec));
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		XLogRegisterBufData(0, (char *) data, datalen);
		recptr = XLogInsert(WC_RMGR_ID, XLOG_WC_L0_ADD_ITEMS);
		PageSetLSN(page, recptr);
	}
	END_CRIT_SECTION();
}

/*
 * Add the locked page newbuf, empty, to the active generation gen as its
 * tail, with its first item; the metapage and the old tail (tailbuf, or
 * InvalidBuffer when the generation had no page) are locked exclusively.
 */
void
wc_l0_log_new_page(Relation rel, Buffer metabuf, Buffer newbuf, Buffer tailbuf,
				   uint64 gen, const char *item, Size itemlen)
{
	BlockNumber newblk = BufferGetBlockNumber(newbuf);
	xl_wc_l0_new_page xlrec;

	START_CRIT_SECTION();
	wc_l0_new_page_init(BufferGetPage(newbuf), gen, item, itemlen);
	MarkBufferDirty(newbuf);
	if (BufferIsValid(tailbuf))
	{
		wc_l0_new_page_link(BufferGetPage(tailbuf), newblk);
		MarkBufferDirty(tailbuf);
	}
	wc_l0_new_page_meta(BufferGetPage(metabuf), newblk, !BufferIsValid(tailbuf));
	MarkBufferDirty(metabuf);
	if (RelationNeedsWAL(rel))
	{
		XLogRecPtr	recptr;

		xlrec.gen = gen;
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, sizeof(xlrec));
		XLogRegisterBuffer(0, metabuf, REGBUF_STANDARD);
		XLogRegisterBuffer(1, newbuf, REGBUF_WILL_INIT);
		XLogRegisterBufData(1, (char *) item, itemlen);
		if (BufferIsValid(tailbuf))
			XLogRegisterBuffer(2, tailbuf, REGBUF_STANDARD);
		recptr = XLogInsert(WC_RMGR_ID, XLOG_WC_L0_NEW_PAGE);
		PageSetLSN(BufferGetPage(metabuf), recptr);
		PageSetLSN(BufferGetPage(newbuf), recptr);
		if (BufferIsValid(tailbuf))
			PageSetLSN(BufferGetPage(tailbuf), recptr);
	}
	END_CRIT_SECTION();
}
