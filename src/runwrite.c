/*
 * runwrite.c — writing a sorted run (SSTable).
 *
 * Rows arrive sorted (key, newest first).  Data pages are written as blocks
 * fill up; at the end the header, the static B-tree index and the bloom
 * filter are written as one contiguous extent.  Every page is WAL-logged as
 * a full image; the run becomes visible only when its manifest row commits.
 */
#include "postgres.h"

#include <lz4.h>

#include "access/xlog.h"
#include "access/xloginsert.h"
#include "storage/smgr.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"

#include "widecol.h"

#define WC_PENDING_PAGES 32

struct WcRunWriter
{
	Relation	rel;
	MemoryContext cxt;
	BufferAccessStrategy strategy;
	uint64		storage_id;
	WcRunHeader hdr;

	/* the block being filled */
	char	   *raw;			/* rows, then the offsets array */
	Size		rawlen;			/* bytes of rows */
	uint32	   *offsets;
	ItemPointer *tidptrs;
	int			nrows;
	double		ratio;			/* running estimate of raw/compressed */
	char	   *cbuf;

	/* leaf index entries: first key of every data page */
	StringInfoData leafkeys;
	uint32	   *leaf_off;
	uint16	   *leaf_len;
	BlockNumber *leaf_blk;
	int			nleaf;
	int			leafcap;

	/* bloom: hashes of distinct partition keys */
	uint64	   *pkhash;
	int64		npk;
	int64		pkcap;
	StringInfoData lastpk;
	int64		pk_bytes;		/* bytes of the current partition so far */
	bool		pk_warned;

	StringInfoData minkey;
	StringInfoData maxkey;
	bool		never_expires;

	/* data pages built in memory, written in batches past shared buffers */
	char	   *pending;		/* WC_PENDING_PAGES pages */
	int			npending;
	int			pending_leaf[WC_PENDING_PAGES]; /* leaf entry of each page */
	ItemPointer *pending_tids;	/* per page: WC_MAX_ROWS_PER_BLOCK slots */
	XLogRecPtr	redo_at_start;
};

uint32
wc_page_crc(Page page)
{
	WcPageOpaque op = WcPageGetOpaque(page);
	pg_crc32c	crc;
	Size		len = ((PageHeader) page)->pd_lower - MAXALIGN(SizeOfPageHeaderData);

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, PageGetContents(page), len);
	COMP_CRC32C(crc, &op->segment, sizeof(op->segment));
	COMP_CRC32C(crc, &op->count, sizeof(op->count));
	COMP_CRC32C(crc, &op->aux, sizeof(op->aux));
	FIN_CRC32C(crc);
	return crc;
}

WcRunWriter *
wc_run_writer_begin(Relation rel, int level)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "widecol run writer",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	WcRunWriter *w = palloc0(sizeof(WcRunWriter));
	WcMetaData	meta;

	w->rel = rel;
	w->cxt = cxt;
	w->strategy = GetAccessStrategy(BAS_BULKWRITE);
	wc_meta_read(rel, &meta);
	w->storage_id = meta.storage_id;
	w->hdr.magic = WC_RUN_MAGIC;
	w->hdr.version = 1;
	w->hdr.run_id = wc_meta_next_segment_id(rel);
	w->hdr.level = level;
	w->hdr.min_write_ts = PG_INT64_MAX;
	w->hdr.max_write_ts = PG_INT64_MIN;
	w->hdr.min_xid = InvalidTransactionId;
	w->hdr.max_xid = InvalidTransactionId;
	w->raw = palloc(WC_MAX_RAW_BLOCK + WC_MAX_ROWS_PER_BLOCK * sizeof(uint32) + MAXIMUM_ALIGNOF);
	w->offsets = palloc(sizeof(uint32) * WC_MAX_ROWS_PER_BLOCK);
	w->tidptrs = palloc(sizeof(ItemPointer) * WC_MAX_ROWS_PER_BLOCK);
	w->cbuf = palloc(LZ4_compressBound(WC_MAX_RAW_BLOCK + WC_MAX_ROWS_PER_BLOCK * sizeof(uint32)));
	w->ratio = 2.0;
	w->pending = palloc_extended((Size) WC_PENDING_PAGES * BLCKSZ, MCXT_ALLOC_HUGE);
	w->pending_tids = palloc0(sizeof(ItemPointer) * WC_PENDING_PAGES * WC_MAX_ROWS_PER_BLOCK);
	w->redo_at_start = GetRedoRecPtr();
	initStringInfo(&w->leafkeys);
	w->leafcap = 256;
	w->leaf_off = palloc(sizeof(uint32) * w->leafcap);
	w->leaf_len = palloc(sizeof(uint16) * w->leafcap);
	w->leaf_blk = palloc(sizeof(BlockNumber) * w->leafcap);
	w->pkcap = 1024;
	w->pkhash = palloc(sizeof(uint64) * w->pkcap);
	initStringInfo(&w->lastpk);
	initStringInfo(&w->minkey);
	initStringInfo(&w->maxkey);
	MemoryContextSwitchTo(old);
	return w;
}

static void
fill_page(WcRunWriter *w, Page page, uint16 type, uint16 flags,
		  const char *payload, Size len, uint32 count, uint32 aux)
{
	WcPageOpaque op;

	Assert(len <= WC_PAYLOAD_CAPACITY);
	PageInit(page, BLCKSZ, sizeof(WcPageOpaqueData));
	memcpy(PageGetContents(page), payload, len);
	((PageHeader) page)->pd_lower = MAXALIGN(SizeOfPageHeaderData) + len;
	op = WcPageGetOpaque(page);
	op->type = type;
	op->flags = flags;
	op->segment = w->hdr.run_id;
	op->count = count;
	op->aux = aux;
	op->crc = wc_page_crc(page);
}

/* Fill a new page with a payload and WAL-log it. */
static void
write_page(WcRunWriter *w, Buffer buf, uint16 type, uint16 flags,
		   const char *payload, Size len, uint32 count, uint32 aux)
{
	START_CRIT_SECTION();
	fill_page(w, BufferGetPage(buf), type, flags, payload, len, count, aux);
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(w->rel))
		log_newpage_buffer(buf, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buf);
}

static void
add_leaf(WcRunWriter *w, const char *key, int keylen, BlockNumber blk)
{
	if (w->nleaf == w->leafcap)
	{
		w->leafcap *= 2;
		w->leaf_off = repalloc(w->leaf_off, sizeof(uint32) * w->leafcap);
		w->leaf_len = repalloc(w->leaf_len, sizeof(uint16) * w->leafcap);
		w->leaf_blk = repalloc(w->leaf_blk, sizeof(BlockNumber) * w->leafcap);
	}
	w->leaf_off[w->nleaf] = w->leafkeys.len;
	w->leaf_len[w->nleaf] = keylen;
	w->leaf_blk[w->nleaf] = blk;
	appendBinaryStringInfo(&w->leafkeys, key, keylen);
	w->nleaf++;
}

/*
 * Write the batch of built data pages at the end of the relation, past
 * shared buffers (they are new, nobody has read them): WAL first (full page
 * images, which also set the LSNs), then one smgrextend per page, all under
 * the extension lock so that the batch is contiguous.  The pages' fsync is
 * registered with the checkpointer; wc_run_writer_finish syncs itself if a
 * checkpoint started meanwhile (see src/README.md).
 */
static void
flush_pending(WcRunWriter *w)
{
	SMgrRelation smgr;
	BlockNumber first;
	BlockNumber blknos[WC_PENDING_PAGES];
	Page		pages[WC_PENDING_PAGES];
	int			reused = 0;

	if (w->npending == 0)
		return;
	for (int i = 0; i < w->npending; i++)
		pages[i] = (Page) (w->pending + (Size) i * BLCKSZ);

	/* reclaimed pages first, through shared buffers */
	while (reused < w->npending)
	{
		Buffer		buf = wc_reuse_page(w->rel, w->strategy, w->storage_id);

		if (!BufferIsValid(buf))
			break;
		START_CRIT_SECTION();
		memcpy(BufferGetPage(buf), pages[reused], BLCKSZ);
		MarkBufferDirty(buf);
		if (RelationNeedsWAL(w->rel))
			log_newpage_buffer(buf, true);
		END_CRIT_SECTION();
		blknos[reused] = BufferGetBlockNumber(buf);
		UnlockReleaseBuffer(buf);
		reused++;
	}

	if (reused < w->npending)
	{
		LockRelationForExtension(w->rel, ExclusiveLock);
		smgr = RelationGetSmgr(w->rel);
		first = smgrnblocks(smgr, MAIN_FORKNUM);
		for (int i = reused; i < w->npending; i++)
			blknos[i] = first + (i - reused);
		if (RelationNeedsWAL(w->rel))
			log_newpages(&w->rel->rd_node, MAIN_FORKNUM, w->npending - reused,
						 &blknos[reused], &pages[reused], true);
		for (int i = reused; i < w->npending; i++)
		{
			PageSetChecksumInplace(pages[i], blknos[i]);
			smgrextend(smgr, MAIN_FORKNUM, blknos[i], pages[i], false);
		}
		UnlockRelationForExtension(w->rel, ExclusiveLock);
	}

	for (int i = 0; i < w->npending; i++)
	{
		ItemPointer *tids = &w->pending_tids[i * WC_MAX_ROWS_PER_BLOCK];

		w->leaf_blk[w->pending_leaf[i]] = blknos[i];
		for (int r = 0; r < WC_MAX_ROWS_PER_BLOCK && tids[r]; r++)
			ItemPointerSet(tids[r], blknos[i], r + 1);
	}
	w->npending = 0;
}

/*
 * Write the first k buffered rows as one data page, if they fit compressed
 * (or raw).  Returns false when they do not.
 */
static bool
write_block(WcRunWriter *w, int k)
{
	Size		rowbytes = (k < w->nrows) ? w->offsets[k] : w->rawlen;
	Size		rawsize = rowbytes + sizeof(uint32) * k;
	char	   *image;
	int			clen;
	uint16		flags = 0;
	const char *payload;
	Size		plen;
	char		saved[WC_MAX_ROWS_PER_BLOCK * sizeof(uint32)];

	/* The offsets array follows the rows; save what it overwrites. */
	image = w->raw;
	memcpy(saved, image + rowbytes, sizeof(uint32) * k);
	memcpy(image + rowbytes, w->offsets, sizeof(uint32) * k);
	clen = LZ4_compress_default(image, w->cbuf, (int) rawsize,
								LZ4_compressBound((int) rawsize));
	if (clen > 0 && (Size) clen < rawsize && (Size) clen <= WC_PAYLOAD_CAPACITY)
	{
		payload = w->cbuf;
		plen = clen;
	}
	else if (rawsize <= WC_PAYLOAD_CAPACITY)
	{
		payload = image;
		plen = rawsize;
		flags = WC_PAGE_FLAG_RAW;
	}
	else
	{
		memcpy(image + rowbytes, saved, sizeof(uint32) * k);
		return false;
	}

	if (w->npending == WC_PENDING_PAGES)
		flush_pending(w);
	fill_page(w, (Page) (w->pending + (Size) w->npending * BLCKSZ), WC_PAGE_RUN_DATA,
			  flags, payload, plen, k, (uint32) rawsize);
	memcpy(image + rowbytes, saved, sizeof(uint32) * k);

	/* block numbers are known when the batch is written */
	w->pending_leaf[w->npending] = w->nleaf;
	add_leaf(w, WcRowKey((WcRowHeader *) image), ((WcRowHeader *) image)->keylen,
			 InvalidBlockNumber);
	for (int i = 0; i < k; i++)
		w->pending_tids[w->npending * WC_MAX_ROWS_PER_BLOCK + i] = w->tidptrs[i];
	if (k < WC_MAX_ROWS_PER_BLOCK)
		w->pending_tids[w->npending * WC_MAX_ROWS_PER_BLOCK + k] = NULL;
	w->npending++;
	w->hdr.ndata_pages++;
	w->hdr.raw_bytes += rawsize;
	w->hdr.compressed_bytes += plen;
	w->ratio = 0.7 * w->ratio + 0.3 * ((double) rawsize / (double) plen);

	/* keep the rows that did not go into this block */
	if (k < w->nrows)
	{
		Size		shift = w->offsets[k];

		memmove(w->raw, w->raw + shift, w->rawlen - shift);
		for (int i = k; i < w->nrows; i++)
		{
			w->offsets[i - k] = w->offsets[i] - shift;
			w->tidptrs[i - k] = w->tidptrs[i];
		}
		w->rawlen -= shift;
	}
	else
		w->rawlen = 0;
	w->nrows -= k;
	return true;
}

static void
flush_block(WcRunWriter *w)
{
	while (w->nrows > 0)
	{
		int			k = w->nrows;

		while (!write_block(w, k))
		{
			Assert(k > 1);
			k = Max(1, k / 2);
		}
	}
}

void
wc_run_writer_add(WcRunWriter *w, const WcRowHeader *row, ItemPointer tid_out)
{
	MemoryContext old = MemoryContextSwitchTo(w->cxt);
	Size		need = MAXALIGN(row->len);
	const char *key = WcRowKey(row);

	CHECK_FOR_INTERRUPTS();
	if (w->nrows > 0 &&
		(w->nrows + 1 > WC_MAX_ROWS_PER_BLOCK ||
		 w->rawlen + need + sizeof(uint32) * (w->nrows + 1) > WC_MAX_RAW_BLOCK ||
		 (double) (w->rawlen + need + sizeof(uint32) * (w->nrows + 1)) / w->ratio >
		 WC_PAYLOAD_CAPACITY * 0.97))
		flush_block(w);

	memcpy(w->raw + w->rawlen, row, row->len);
	memset(w->raw + w->rawlen + row->len, 0, need - row->len);
	w->offsets[w->nrows] = w->rawlen;
	w->tidptrs[w->nrows] = tid_out;
	w->rawlen += need;
	w->nrows++;

	/* summary */
	if (w->hdr.nrows == 0)
		appendBinaryStringInfo(&w->minkey, key, row->keylen);
	resetStringInfo(&w->maxkey);
	appendBinaryStringInfo(&w->maxkey, key, row->keylen);
	w->hdr.nrows++;
	if (WcRowIsTombstone(row))
		w->hdr.ntombstones++;
	w->hdr.min_write_ts = Min(w->hdr.min_write_ts, row->write_ts);
	w->hdr.max_write_ts = Max(w->hdr.max_write_ts, row->write_ts);
	if (WcRowIsTombstone(row))
		w->hdr.max_expire = Max(w->hdr.max_expire, row->write_ts);	/* dead from its write */
	else if (row->expire_at == 0)
		w->never_expires = true;
	else
		w->hdr.max_expire = Max(w->hdr.max_expire, row->expire_at);
	if (TransactionIdIsNormal(row->xid))
	{
		if (!TransactionIdIsValid(w->hdr.min_xid) ||
			TransactionIdPrecedes(row->xid, w->hdr.min_xid))
			w->hdr.min_xid = row->xid;
		if (!TransactionIdIsValid(w->hdr.max_xid) ||
			TransactionIdFollows(row->xid, w->hdr.max_xid))
			w->hdr.max_xid = row->xid;
	}
	if (row->pklen > 0 &&
		(w->npk == 0 || wc_compare_keys(key, row->pklen, w->lastpk.data, w->lastpk.len) != 0))
	{
		if (w->npk == w->pkcap)
		{
			w->pkcap *= 2;
			w->pkhash = repalloc_huge(w->pkhash, sizeof(uint64) * w->pkcap);
		}
		w->pkhash[w->npk++] = wc_bloom_hash(key, row->pklen);
		resetStringInfo(&w->lastpk);
		appendBinaryStringInfo(&w->lastpk, key, row->pklen);
		w->pk_bytes = 0;
		w->pk_warned = false;
	}
	w->pk_bytes += row->len;
	if (!w->pk_warned && wc_partition_warn_size_kb > 0 && row->pklen > 0 &&
		w->pk_bytes > (int64) wc_partition_warn_size_kb * 1024)
	{
		/* Cassandra's compaction_large_partition_warning_threshold */
		w->pk_warned = true;
		ereport(WARNING,
				(errmsg("writing a partition of widecol table \"%s\" larger than widecol.partition_warn_size: %s",
						RelationGetRelationName(w->rel),
						wc_describe_partition(w->rel, key, row->pklen)),
				 errdetail("A run now holds more than %d kB of this partition.", wc_partition_warn_size_kb),
				 errhint("Add a bucket column (for example a day) to the partition key so that partitions stay small.")));
	}
	MemoryContextSwitchTo(old);
}

/* Pack index entries [first, n) into pages; returns the page count. */
typedef struct IndexLevel
{
	int			nentries;
	char	  **keys;
	uint16	   *keylens;
	BlockNumber *children;
	int			npages;
	int		   *page_start;		/* first entry of each page */
} IndexLevel;

static Size
entry_size(int keylen)
{
	return sizeof(uint32) + sizeof(uint16) + keylen;
}

static void
paginate(IndexLevel *lv)
{
	Size		used = 0;

	lv->page_start = palloc(sizeof(int) * (lv->nentries + 1));
	lv->npages = 0;
	for (int i = 0; i < lv->nentries; i++)
	{
		Size		sz = entry_size(lv->keylens[i]);

		if (i == 0 || used + sz > WC_PAYLOAD_CAPACITY)
		{
			lv->page_start[lv->npages++] = i;
			used = 0;
		}
		used += sz;
	}
	lv->page_start[lv->npages] = lv->nentries;
}

static void
write_index_page(WcRunWriter *w, Buffer buf, IndexLevel *lv, int page, int level)
{
	char		payload[BLCKSZ];
	Size		len = 0;
	int			first = lv->page_start[page];
	int			last = lv->page_start[page + 1];

	for (int i = first; i < last; i++)
	{
		uint32		child = lv->children[i];
		uint16		kl = lv->keylens[i];

		memcpy(payload + len, &child, sizeof(uint32));
		memcpy(payload + len + sizeof(uint32), &kl, sizeof(uint16));
		memcpy(payload + len + sizeof(uint32) + sizeof(uint16), lv->keys[i], kl);
		len += entry_size(kl);
	}
	write_page(w, buf, WC_PAGE_RUN_INDEX, 0, payload, len, last - first, level);
}

/* Extend by n pages under one extension lock so they are contiguous. */
static BlockNumber
allocate_extent(WcRunWriter *w, uint32 n)
{
	BlockNumber first = InvalidBlockNumber;

	LockRelationForExtension(w->rel, ExclusiveLock);
	for (uint32 i = 0; i < n; i++)
	{
		Buffer		buf = ReadBufferExtended(w->rel, MAIN_FORKNUM, P_NEW,
											 RBM_NORMAL, w->strategy);

		if (i == 0)
			first = BufferGetBlockNumber(buf);
		else if (BufferGetBlockNumber(buf) != first + i)
			elog(ERROR, "widecol: relation extension was not contiguous");
		ReleaseBuffer(buf);
	}
	UnlockRelationForExtension(w->rel, ExclusiveLock);
	return first;
}

static Buffer
lock_new_block(WcRunWriter *w, BlockNumber blk)
{
	Buffer		buf = ReadBufferExtended(w->rel, MAIN_FORKNUM, blk, RBM_ZERO_AND_LOCK,
										 w->strategy);

	return buf;
}

/*
 * Write the index, bloom filter and header; publish the run in the manifest.
 * Returns false (and writes nothing more) when no row was added.
 */
bool
wc_run_writer_finish(WcRunWriter *w, WcRunSummary *summary)
{
	MemoryContext old = MemoryContextSwitchTo(w->cxt);
	List	   *levels = NIL;
	IndexLevel *lv;
	uint32		nindex = 0;
	uint32		nbloom;
	BlockNumber extent,
				blk;
	char	   *bloom = NULL;
	char		hdrbuf[BLCKSZ];
	Size		hdrlen;
	ListCell   *lc;
	int			level;

	flush_block(w);
	flush_pending(w);
	/* a checkpoint began while we wrote past shared buffers: sync ourselves */
	if (w->hdr.ndata_pages > 0 && GetRedoRecPtr() != w->redo_at_start &&
		RelationNeedsWAL(w->rel))
		smgrimmedsync(RelationGetSmgr(w->rel), MAIN_FORKNUM);
	if (w->hdr.nrows == 0)
	{
		MemoryContextSwitchTo(old);
		FreeAccessStrategy(w->strategy);
		MemoryContextDelete(w->cxt);
		return false;
	}

	/* index levels, bottom-up, until one page holds a level */
	lv = palloc0(sizeof(IndexLevel));
	lv->nentries = w->nleaf;
	lv->keys = palloc(sizeof(char *) * w->nleaf);
	lv->keylens = w->leaf_len;
	lv->children = w->leaf_blk;
	for (int i = 0; i < w->nleaf; i++)
		lv->keys[i] = w->leafkeys.data + w->leaf_off[i];
	paginate(lv);
	levels = lappend(levels, lv);
	nindex = lv->npages;
	while (lv->npages > 1)
	{
		IndexLevel *up = palloc0(sizeof(IndexLevel));

		up->nentries = lv->npages;
		up->keys = palloc(sizeof(char *) * up->nentries);
		up->keylens = palloc(sizeof(uint16) * up->nentries);
		up->children = palloc(sizeof(BlockNumber) * up->nentries);
		for (int p = 0; p < lv->npages; p++)
		{
			up->keys[p] = lv->keys[lv->page_start[p]];
			up->keylens[p] = lv->keylens[lv->page_start[p]];
		}
		paginate(up);
		levels = lappend(levels, up);
		nindex += up->npages;
		lv = up;
	}

	nbloom = (w->npk > 0) ? wc_bloom_npages(w->npk) : 0;
	w->hdr.extent_pages = 1 + nindex + nbloom;
	extent = allocate_extent(w, w->hdr.extent_pages);

	/* child block numbers of upper levels are now known */
	blk = extent + 1;
	level = 0;
	foreach(lc, levels)
	{
		IndexLevel *cur = lfirst(lc);

		if (level > 0)
		{
			IndexLevel *below = list_nth(levels, level - 1);
			BlockNumber below_first = blk - below->npages;

			for (int p = 0; p < cur->nentries; p++)
				cur->children[p] = below_first + p;
		}
		for (int p = 0; p < cur->npages; p++)
			write_index_page(w, lock_new_block(w, blk + p), cur, p, level);
		if (level == 0)
		{
			w->hdr.leaf_first = blk;
			w->hdr.nleaf_pages = cur->npages;
		}
		blk += cur->npages;
		level++;
	}
	w->hdr.index_root = blk - 1;
	w->hdr.index_height = list_length(levels);

	w->hdr.bloom_first = blk;
	w->hdr.nbloom_pages = nbloom;
	w->hdr.npartitions = w->npk;
	if (nbloom > 0)
	{
		bloom = palloc_extended((Size) nbloom * WC_PAYLOAD_CAPACITY, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		for (int64 i = 0; i < w->npk; i++)
			wc_bloom_set(bloom, nbloom, w->pkhash[i]);
		for (uint32 p = 0; p < nbloom; p++)
			write_page(w, lock_new_block(w, blk + p), WC_PAGE_RUN_BLOOM, 0,
					   bloom + (Size) p * WC_PAYLOAD_CAPACITY, WC_PAYLOAD_CAPACITY, 0, 0);
	}

	w->hdr.max_expire = w->never_expires ? PG_INT64_MAX : w->hdr.max_expire;
	w->hdr.min_key_len = w->minkey.len;
	w->hdr.max_key_len = w->maxkey.len;
	memcpy(hdrbuf, &w->hdr, sizeof(WcRunHeader));
	memcpy(hdrbuf + sizeof(WcRunHeader), w->minkey.data, w->minkey.len);
	memcpy(hdrbuf + sizeof(WcRunHeader) + w->minkey.len, w->maxkey.data, w->maxkey.len);
	hdrlen = sizeof(WcRunHeader) + w->minkey.len + w->maxkey.len;
	write_page(w, lock_new_block(w, extent), WC_PAGE_RUN_HEADER, 0, hdrbuf, hdrlen, 0, 0);

	/* publish */
	MemoryContextSwitchTo(old);
	memset(summary, 0, sizeof(WcRunSummary));
	summary->run_id = w->hdr.run_id;
	summary->level = w->hdr.level;
	summary->header_block = extent;
	summary->npages = w->hdr.extent_pages + w->hdr.ndata_pages;
	summary->nrows = w->hdr.nrows;
	summary->ntombstones = w->hdr.ntombstones;
	summary->npartitions = w->hdr.npartitions;
	summary->raw_bytes = w->hdr.raw_bytes;
	summary->compressed_bytes = w->hdr.compressed_bytes;
	summary->min_write_ts = w->hdr.min_write_ts;
	summary->max_write_ts = w->hdr.max_write_ts;
	summary->max_expire = w->hdr.max_expire;
	summary->min_xid = w->hdr.min_xid;
	summary->max_xid = w->hdr.max_xid;
	summary->min_key = palloc(VARHDRSZ + w->minkey.len);
	SET_VARSIZE(summary->min_key, VARHDRSZ + w->minkey.len);
	memcpy(VARDATA(summary->min_key), w->minkey.data, w->minkey.len);
	summary->max_key = palloc(VARHDRSZ + w->maxkey.len);
	SET_VARSIZE(summary->max_key, VARHDRSZ + w->maxkey.len);
	memcpy(VARDATA(summary->max_key), w->maxkey.data, w->maxkey.len);
	wc_manifest_add_run(w->storage_id, summary);

	FreeAccessStrategy(w->strategy);
	MemoryContextDelete(w->cxt);
	return true;
}
