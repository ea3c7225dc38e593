/*
 * runwrite.c — writing a sorted run (SSTable).
 *
 * Rows arrive sorted (key, newest first).  Data pages are written as blocks
 * fill up; at the end the header, the static B-tree index and the bloom
 * filter are written as one contiguous extent.  Every page is WAL-logged as
 * a full image; the run becomes visible only when its manifest row commits.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xloginsert.h"
#include "storage/smgr.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"

#include "widecol.h"
#include "storage/bloom.h"
#include "storage/columns.h"
#include "storage/compression.h"
#include "storage/keyenc.h"
#include "storage/keypack.h"
#include "storage/keyrange.h"
#include "storage/manifest.h"
#include "storage/metapage.h"
#include "storage/page.h"
#include "storage/pending.h"
#include "storage/reclaim.h"
#include "storage/row.h"
#include "storage/run.h"
#include "storage/tableinfo.h"

#define WC_PENDING_PAGES 32

/* at most this many closed key blocks wait for their value page */
#define WC_MAX_CLOSED_BLOCKS 64
#define NO_VALUE PG_UINT32_MAX

/*
 * A value page is cut when its tuples, compressed as the pages before were,
 * would fill this much of it: 0.97 leaves room for a page compressing a
 * little worse.  Text in frames with the run's dictionary varies more from
 * page to page; each page that had to go without them lowers the fill
 * (down to the minimum), each that did not raises it a little again.
 */
#define WC_VALUE_FILL_MAX 0.97
#define WC_VALUE_FILL_MIN 0.80

/* What a built page is, until the batch it is in gets block numbers. */
typedef struct PendingPage
{
	int			leaf;			/* key page: its leaf entry; value page: -1 */
	uint32		vpno;			/* value page: its number in the run */
	uint32		vfirst;			/* key page: number of its first value page */
	int			nvalues;		/* key page: value pages it references */
} PendingPage;

/*
 * Rows are split in two streams as they arrive (src/README.md, "Sorted
 * runs"): tuples fill value pages, headers and keys fill key blocks.  A key
 * block is closed when it is full but written only once every tuple of its
 * rows is in a value page, since its rows record where their tuples went.
 */
struct WcRunWriter
{
	Relation	rel;
	MemoryContext cxt;
	BufferAccessStrategy strategy;
	bool		extent_in_pool; /* its extent's pages skip the ring (finish) */
	uint64		storage_id;
	WcRunHeader hdr;

	/* rows not yet in a key page: header and key of each, MAXALIGNed */
	char	   *kraw;
	Size		krawlen;
	Size		krawcap;
	uint32	   *koff;			/* row i's offset in kraw */
	uint32	   *kvp;			/* value page of row i's tuple, or NO_VALUE */
	uint32	   *kvoff;			/* its offset in that value page */
	ItemPointer *tidptrs;
	int			nrows;
	int			rowcap;
	int			open_start;		/* first row of the open key block */
	uint32		open_first_vp;	/* value page of its first tuple (NO_VALUE) */
	int			closed[WC_MAX_CLOSED_BLOCKS];	/* ends of closed key blocks */
	int			nclosed;
	double		kratio;			/* running estimate of raw/compressed */
	WcCodec		key_codec;		/* of its key pages (zstd: run format 5) */
	uint32		key_codec_misses;	/* key pages in a row it did not shrink */
	WcCodec		value_codec;	/* of its value pages */
	int			codec_level;	/* zstd's level */
	bool		value_columns;	/* value pages in column layout (columns.h) */
	int			column_misses;	/* pages in a row whose columns did not fit */
	char	   *colscratch;		/* for it: WC_COLUMNS_SCRATCH_SIZE bytes */
	char	   *colout;			/* and a page's payload */
	WcColumnsMemo colmemo;		/* wc_columns_encode's, page to page */
	WcDictBuilder *dict;		/* the run's zstd dictionary (format 9) */
	bool		borrow_dict;	/* a flush's or bulk write's run: look for a
								 * dictionary to borrow at its first value page */
	WcRunDict	dictloc;		/* where it went */

	/* tuples of rows [vstart, nrows), not yet in a value page */
	char	   *vraw;
	Size		vrawlen;
	uint32	   *voff;			/* row vstart + i's tuple at vraw + voff[i] */
	int			vstart;
	uint32		next_vpno;
	double		vratio;
	double		vfill;			/* of a value page's capacity its tuples are
								 * cut at, by vratio's estimate: lowered where
								 * frames did not fit (write_values) */

	/* every value page of the run: raw size, and block once written */
	uint32	   *vp_raw;
	BlockNumber *vp_blk;
	uint32		vpcap;

	char	   *cbuf;			/* compressed output */
	char	   *image;			/* a key block being built */
	char	   *packed;			/* and packed (storage/keypack.h) */
	char	   *payload;		/* a key page's payload */

	/* leaf index entries: first key of every key page */
	StringInfoData leafkeys;
	uint32	   *leaf_off;
	uint16	   *leaf_len;
	BlockNumber *leaf_blk;
	uint32	   *leaf_count;		/* rows of a settled key page (WC_LEAF_COUNTS) */
	int			nleaf;
	int			leafcap;
	/* value hints (WC_LEAF_HINTS): value pages, and where each starts */
	bool		hints;
	uint32	   *leaf_vfirst;	/* ordinal of the key page's first value page */
	uint8	   *leaf_nv;		/* value pages it references */
	uint32	   *leaf_sep_off;	/* its separators from here in leafseps */
	StringInfoData leafseps;

	/* bloom: hashes of distinct partition keys */
	uint64	   *pkhash;
	int64		npk;
	int64		pkcap;
	StringInfoData lastpk;
	int64		pk_bytes;		/* bytes of the current partition so far */
	bool		pk_warned;

	StringInfoData minkey;
	StringInfoData maxkey;
	WcKeyRangeBuilder ranges;	/* key-column ranges (run format 4) */
	StringInfoData ranges_out;	/* serialized, at the end */
	bool		never_expires;
	StringInfoData lastkey;		/* of the last key page written */

	/* pages built in memory, written in batches past shared buffers */
	char	   *pending;		/* WC_PENDING_PAGES pages */
	int			npending;
	PendingPage pinfo[WC_PENDING_PAGES];
	ItemPointer *pending_tids;	/* per page: WC_MAX_ROWS_PER_BLOCK slots */
	XLogRecPtr	redo_at_start;
	bool		claimed;		/* the manifest has our 'w' row */
	int64		pages_written;
};

/* test only: a run write fails once it has written this many data pages */
int			wc_debug_fail_run_write = 0;

/* test only: 4 = write runs in format 4 (lz4 pages), as earlier builds did */
int			wc_debug_run_format = 0;

/* Value pages by column (layout WC_LAYOUT_COLUMNS) where the format has them. */
static void
set_value_layout(WcRunWriter *w, int layout)
{
	w->value_columns = w->hdr.version >= WC_RUN_VERSION_COLUMNS && layout == WC_LAYOUT_COLUMNS;
	if (w->value_columns && w->colscratch == NULL)
	{
		Size		percol = sizeof(uint32) * Max(RelationGetDescr(w->rel)->natts, 1);

		w->colscratch = MemoryContextAlloc(w->cxt, WC_COLUMNS_SCRATCH_SIZE);
		w->colout = MemoryContextAlloc(w->cxt, BLCKSZ);
		w->colmemo.hex_probe_misses = MemoryContextAllocZero(w->cxt, percol);
		w->colmemo.plain_misses = MemoryContextAllocZero(w->cxt, percol);
	}
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
	Size		rawmax = WC_MAX_RAW_BLOCK + WC_MAX_ROWS_PER_BLOCK * sizeof(uint32);

	w->rel = rel;
	w->cxt = cxt;
	w->strategy = GetAccessStrategy(BAS_BULKWRITE);
	wc_meta_read(rel, &meta);
	w->storage_id = meta.storage_id;
	w->hdr.magic = WC_RUN_MAGIC;
	w->hdr.version = WC_RUN_VERSION;
	/*
	 * Runs of flushes and bulk writes: value pages zstd, key pages lz4
	 * unless widecol.ingest_key_codec says zstd (src/README.md, "Codecs");
	 * compaction sets its own codecs.
	 */
	w->value_codec = wc_ingest_zstd_level != 0 ? WC_CODEC_ZSTD : WC_CODEC_LZ4;
	w->key_codec = wc_ingest_key_codec == WC_CODEC_ZSTD ? w->value_codec : WC_CODEC_LZ4;
	w->codec_level = wc_ingest_zstd_level;
	if (wc_debug_run_format == 4)
	{
		/* test only: a run as builds before format 5 wrote it (lz4) */
		w->hdr.version = 4;
		w->key_codec = w->value_codec = WC_CODEC_LZ4;
		w->codec_level = 0;
	}
	else if (wc_debug_run_format == 6 || wc_debug_run_format == 8 ||
			 wc_debug_run_format == 9 || wc_debug_run_format == 10 ||
			 wc_debug_run_format == 11 || wc_debug_run_format == 12)
	{
		/*
		 * test only: 6, bloom pages as before format 7; 8, no dictionary, as
		 * before format 9; 9, key blocks not packed, as before format 10; 10,
		 * packed key blocks not in steps, as before format 11; 11, every
		 * tuple's header in the headers' chunk, as before format 12; 12, no
		 * value hints in leaf index pages, as before format 13
		 */
		w->hdr.version = wc_debug_run_format;
	}
	/* by column if widecol.ingest_value_layout says so; compaction sets its own */
	set_value_layout(w, wc_ingest_value_layout);
	/* text in frames with the table's newest dictionary, if it says so */
	w->borrow_dict = w->value_columns && w->value_codec == WC_CODEC_ZSTD &&
		w->hdr.version >= WC_RUN_VERSION_DICT && wc_ingest_zstd_dictionary;
	wc_key_ranges_begin(&w->ranges, wc_table_info(rel));
	w->hdr.run_id = wc_meta_next_segment_id(rel);
	w->hdr.level = level;
	w->hdr.st.min_write_ts = PG_INT64_MAX;
	w->hdr.st.max_write_ts = PG_INT64_MIN;
	w->hdr.st.min_xid = InvalidTransactionId;
	w->hdr.st.max_xid = InvalidTransactionId;
	w->krawcap = rawmax;
	w->kraw = palloc(w->krawcap);
	w->rowcap = 2 * WC_MAX_ROWS_PER_BLOCK;
	w->koff = palloc(sizeof(uint32) * w->rowcap);
	w->kvp = palloc(sizeof(uint32) * w->rowcap);
	w->kvoff = palloc(sizeof(uint32) * w->rowcap);
	w->tidptrs = palloc(sizeof(ItemPointer) * w->rowcap);
	w->voff = palloc(sizeof(uint32) * w->rowcap);
	w->open_first_vp = NO_VALUE;
	w->vraw = palloc(WC_MAX_RAW_BLOCK + BLCKSZ);
	w->vpcap = 256;
	w->vp_raw = palloc(sizeof(uint32) * w->vpcap);
	w->vp_blk = palloc(sizeof(BlockNumber) * w->vpcap);
	w->cbuf = palloc(wc_compress_bound(rawmax));
	w->image = palloc(rawmax);
	w->packed = palloc(rawmax);
	w->payload = palloc(BLCKSZ);
	w->kratio = w->vratio = 2.0;
	w->vfill = WC_VALUE_FILL_MAX;
	w->pending = palloc_extended((Size) WC_PENDING_PAGES * BLCKSZ, MCXT_ALLOC_HUGE);
	w->pending_tids = palloc0(sizeof(ItemPointer) * WC_PENDING_PAGES * WC_MAX_ROWS_PER_BLOCK);
	w->redo_at_start = GetRedoRecPtr();
	initStringInfo(&w->leafkeys);
	w->leafcap = 256;
	w->leaf_off = palloc(sizeof(uint32) * w->leafcap);
	w->leaf_len = palloc(sizeof(uint16) * w->leafcap);
	w->leaf_blk = palloc(sizeof(BlockNumber) * w->leafcap);
	w->leaf_count = palloc(sizeof(uint32) * w->leafcap);
	w->hints = w->hdr.version >= WC_RUN_VERSION_HINTS;
	w->leaf_vfirst = palloc(sizeof(uint32) * w->leafcap);
	w->leaf_nv = palloc(sizeof(uint8) * w->leafcap);
	w->leaf_sep_off = palloc(sizeof(uint32) * (w->leafcap + 1));
	initStringInfo(&w->leafseps);
	w->pkcap = 1024;
	w->pkhash = palloc(sizeof(uint64) * w->pkcap);
	initStringInfo(&w->lastpk);
	initStringInfo(&w->minkey);
	initStringInfo(&w->maxkey);
	initStringInfo(&w->lastkey);
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
		w->leaf_count = repalloc(w->leaf_count, sizeof(uint32) * w->leafcap);
		w->leaf_vfirst = repalloc(w->leaf_vfirst, sizeof(uint32) * w->leafcap);
		w->leaf_nv = repalloc(w->leaf_nv, sizeof(uint8) * w->leafcap);
		w->leaf_sep_off = repalloc(w->leaf_sep_off, sizeof(uint32) * (w->leafcap + 1));
	}
	w->leaf_nv[w->nleaf] = 0;
	w->leaf_sep_off[w->nleaf] = w->leaf_sep_off[w->nleaf + 1] = w->leafseps.len;
	w->leaf_off[w->nleaf] = w->leafkeys.len;
	w->leaf_len[w->nleaf] = keylen;
	w->leaf_blk[w->nleaf] = blk;
	appendBinaryStringInfo(&w->leafkeys, key, keylen);
	w->nleaf++;
}

/*
 * The value hint of the key page of rows [0, k) (WC_LEAF_HINTS): its value
 * pages from ordinal vfirst on, and for each after the first the shortest
 * prefix of the key of the page's first row that sorts after the key of
 * the row before it (the versions of one key split over two pages: that
 * key, which points a read of it at the later page).
 */
static void
add_leaf_hint(WcRunWriter *w, int k, uint32 vfirst, int nvalues)
{
	int			leaf = w->nleaf - 1;
	int			j = 1;

	w->leaf_vfirst[leaf] = vfirst;
	w->leaf_nv[leaf] = (uint8) nvalues;
	for (int i = 1; i < k && j < nvalues; i++)
	{
		const WcRowHeader *prev,
				   *row;
		const char *a,
				   *b;
		int			len;

		if (w->kvp[i] == NO_VALUE || w->kvp[i] < vfirst + j)
			continue;
		prev = (const WcRowHeader *) (w->kraw + w->koff[i - 1]);
		row = (const WcRowHeader *) (w->kraw + w->koff[i]);
		a = WcRowKey(prev);
		b = WcRowKey(row);
		for (len = 0; len < prev->keylen && len < row->keylen && a[len] == b[len]; len++)
			;
		len = Min(len + 1, (int) row->keylen);
		if (len > WC_HINT_MAX_SEP)
			len = 0;			/* none: a read of a key past it is not hinted
								 * this page, and an entry with its hint fits
								 * in an index page whatever the keys */
		for (; j < nvalues && vfirst + j <= w->kvp[i]; j++)
		{
			appendStringInfoChar(&w->leafseps, (char) len);
			appendBinaryStringInfo(&w->leafseps, b, len);
		}
	}
	for (; j < nvalues; j++)
		appendStringInfoChar(&w->leafseps, 0);
	w->leaf_sep_off[leaf + 1] = w->leafseps.len;
}

/* A key page's value references, now that the value pages have blocks. */
static void
patch_value_refs(WcRunWriter *w, Page page, const PendingPage *pi)
{
	WcValueRef *refs = (WcValueRef *) (PageGetContents(page) + sizeof(WcKeyPageHeader));

	if (pi->leaf < 0 || pi->nvalues == 0)
		return;
	for (int j = 0; j < pi->nvalues; j++)
	{
		Assert(w->vp_blk[pi->vfirst + j] != InvalidBlockNumber);
		refs[j].blkno = w->vp_blk[pi->vfirst + j];
	}
	WcPageGetOpaque(page)->crc = wc_page_crc(page);
}

/*
 * Compress the run's value pages with zstd at `level` (0: lz4), its key
 * pages too if widecol.compaction_key_codec says zstd (default lz4: every
 * seek decodes a key page).  Compaction and VACUUM FULL call it before the
 * first row (src/README.md, "Codecs").
 */
void
wc_run_writer_set_zstd(WcRunWriter *w, int level)
{
	Assert(w->hdr.st.nrows == 0);
	if (w->hdr.version < WC_RUN_VERSION_ZSTD)
		return;					/* widecol.debug_run_format: lz4 */
	w->value_codec = level != 0 ? WC_CODEC_ZSTD : WC_CODEC_LZ4;
	w->key_codec = wc_compaction_key_codec == WC_CODEC_ZSTD ? w->value_codec : WC_CODEC_LZ4;
	w->codec_level = level;
	w->borrow_dict = false;		/* compaction trains its own */
	/* and, as widecol.compaction_value_layout says, by column */
	set_value_layout(w, wc_compaction_value_layout);
	/* and, as widecol.compaction_zstd_dictionary says, with a dictionary */
	if (w->value_columns && w->value_codec == WC_CODEC_ZSTD && w->dict == NULL &&
		w->hdr.version >= WC_RUN_VERSION_DICT && wc_compaction_zstd_dictionary)
	{
		MemoryContext old = MemoryContextSwitchTo(w->cxt);

		w->dict = wc_dict_builder_create(level);
		MemoryContextSwitchTo(old);
	}
}

/*
 * Before our first page is written, the manifest must say that pages with
 * our run id are taken: another backend checks exactly that before it
 * reuses a page it found in the free space map (wc_reuse_page).
 */
static void
claim_pages(WcRunWriter *w)
{
	if (w->claimed)
		return;
	/* found again by maintenance if we abort or crash (storage/pending.c) */
	wc_pending_add(w->rel, w->hdr.run_id);
	wc_manifest_claim_run(w->storage_id, w->hdr.run_id);
	w->claimed = true;
}

/* Page i of the batch goes to blkno: note where, patch what refers to it. */
static void
place_page(WcRunWriter *w, int i, BlockNumber blkno)
{
	if (w->pinfo[i].leaf < 0)
		w->vp_blk[w->pinfo[i].vpno] = blkno;
}

/*
 * Write the batch of built pages: reclaimed pages first, through shared
 * buffers; the rest at the end of the relation, past shared buffers (they
 * are new, nobody has read them): WAL first (full page images, which also
 * set the LSNs), then one smgrextend per page, all under the extension lock
 * so that the batch is contiguous.  A key page follows its value pages in
 * the batch order, so their blocks are known when it is written.  The
 * pages' fsync is registered with the checkpointer; wc_run_writer_finish
 * syncs itself if a checkpoint started meanwhile (see src/README.md).
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
	claim_pages(w);
	for (int i = 0; i < w->npending; i++)
		pages[i] = (Page) (w->pending + (Size) i * BLCKSZ);

	while (reused < w->npending)
	{
		Buffer		buf = wc_reuse_page(w->rel, w->strategy, w->storage_id);

		if (!BufferIsValid(buf))
			break;
		blknos[reused] = BufferGetBlockNumber(buf);
		place_page(w, reused, blknos[reused]);
		patch_value_refs(w, pages[reused], &w->pinfo[reused]);
		START_CRIT_SECTION();
		memcpy(BufferGetPage(buf), pages[reused], BLCKSZ);
		MarkBufferDirty(buf);
		if (RelationNeedsWAL(w->rel))
			log_newpage_buffer(buf, true);
		END_CRIT_SECTION();
		UnlockReleaseBuffer(buf);
		reused++;
	}

	if (reused < w->npending)
	{
		LockRelationForExtension(w->rel, ExclusiveLock);
		smgr = RelationGetSmgr(w->rel);
		first = smgrnblocks(smgr, MAIN_FORKNUM);
		for (int i = reused; i < w->npending; i++)
		{
			blknos[i] = first + (i - reused);
			place_page(w, i, blknos[i]);
		}
		for (int i = reused; i < w->npending; i++)
			patch_value_refs(w, pages[i], &w->pinfo[i]);
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

		if (w->pinfo[i].leaf < 0)
			continue;
		w->leaf_blk[w->pinfo[i].leaf] = blknos[i];
		for (int r = 0; r < WC_MAX_ROWS_PER_BLOCK && tids[r]; r++)
			ItemPointerSet(tids[r], blknos[i], r + 1);
	}
	w->pages_written += w->npending;
	w->npending = 0;
	if (wc_debug_fail_run_write > 0 && w->pages_written >= wc_debug_fail_run_write)
		ereport(ERROR,
				(errcode(ERRCODE_DISK_FULL),
				 errmsg("widecol: run %llu of \"%s\" failed after %lld pages (widecol.debug_fail_run_write)",
						(unsigned long long) w->hdr.run_id, RelationGetRelationName(w->rel),
						(long long) w->pages_written)));
}

/* The next slot of the batch. */
static Page
next_pending(WcRunWriter *w)
{
	if (w->npending == WC_PENDING_PAGES)
		flush_pending(w);
	return (Page) (w->pending + (Size) w->npending * BLCKSZ);
}

/*
 * Compress `raw` with `codec` for a page of `capacity` payload bytes (see
 * wc_compress); flags get the codec used.
 */
static const char *
compress_for_page(WcRunWriter *w, WcCodec codec, const char *raw, Size rawsize,
				  Size capacity, Size min_saving, Size *len, uint16 *flags)
{
	WcCodec		used;
	const char *out = wc_compress(codec, w->codec_level, raw, rawsize, capacity,
								  min_saving, w->cbuf, len, &used);

	*flags = (uint16) used;
	return out;
}

/*
 * A flush or a bulk write compresses its text in frames with the table's
 * newest dictionary (src/README.md, "A zstd dictionary per run"): training
 * one would cost such a run more than it saves, and without frames a
 * lookup in it decodes a whole column chunk.  Once per run; none found,
 * none used.
 */
static void
borrow_dict(WcRunWriter *w)
{
	WcDictRef	ref;

	w->borrow_dict = false;
	if (wc_newest_run_dict(w->rel, &ref))
	{
		MemoryContext old = MemoryContextSwitchTo(w->cxt);

		w->dict = wc_dict_builder_borrow(&ref, w->codec_level);
		MemoryContextSwitchTo(old);
	}
}

/*
 * Write the tuples of rows [vstart, vstart + k) as one value page, if they
 * fit compressed (or raw).  Returns false when they do not.
 */
static bool
write_values(WcRunWriter *w, int k)
{
	Size		bytes = (w->vstart + k < w->nrows) ? w->voff[k] : w->vrawlen;
	const char *payload;
	Size		plen;
	uint16		flags;
	uint32		vpno;
	uint32		ntuples = 0;

	if (bytes > 0)
	{
		WcColumnsResult cr = WC_COLUMNS_UNSUITABLE;

		payload = NULL;
		if (w->borrow_dict)
			borrow_dict(w);
		if (w->value_columns)
			cr = wc_columns_encode(RelationGetDescr(w->rel), w->vraw, bytes, w->value_codec,
								   w->codec_level, w->hdr.version >= WC_RUN_VERSION_HEX,
								   w->hdr.version >= WC_RUN_VERSION_HEADS, w->dict, &w->colmemo,
								   WC_PAYLOAD_CAPACITY, w->colscratch,
								   w->colout, &plen);
		if (cr == WC_COLUMNS_OK)
		{
			payload = w->colout;
			flags = (uint16) w->value_codec | WC_VALUES_COLUMNS;
			w->column_misses = 0;
			/*
			 * Its text went without frames (a lookup decodes a whole chunk,
			 * not a frame) because with them the page did not fit: fill the
			 * next pages less.  Learning the ratio from its plain chunks
			 * instead would fill them more, and every page would end so.
			 */
			if (w->colmemo.frames_no_room)
				w->vfill = Max(WC_VALUE_FILL_MIN, w->vfill * 0.97);
			else
				w->vfill = Min(WC_VALUE_FILL_MAX, w->vfill + 0.002);
		}
		else if (w->value_columns)
		{
			/*
			 * Written as rows.  Columns take a little more room than rows
			 * (a frame per column): fill the next pages less; columns that
			 * keep missing (or cannot be laid out) are given up for this run.
			 */
			if (cr == WC_COLUMNS_UNSUITABLE || ++w->column_misses > 8)
				w->value_columns = false;
			w->vratio = Max(1.0, w->vratio * 0.95);
		}
		if (payload == NULL)
			payload = compress_for_page(w, w->value_codec, w->vraw, bytes, WC_PAYLOAD_CAPACITY, 0,
										&plen, &flags);
		if (payload == NULL)
			return false;
		if (w->next_vpno == w->vpcap)
		{
			w->vpcap *= 2;
			w->vp_raw = repalloc_huge(w->vp_raw, sizeof(uint32) * w->vpcap);
			w->vp_blk = repalloc_huge(w->vp_blk, sizeof(BlockNumber) * w->vpcap);
		}
		vpno = w->next_vpno++;
		w->vp_raw[vpno] = bytes;
		w->vp_blk[vpno] = InvalidBlockNumber;
		for (int i = 0; i < k; i++)
		{
			Size		end = (w->vstart + i + 1 < w->nrows) ? w->voff[i + 1] : w->vrawlen;
			bool		has = end > w->voff[i];

			w->kvp[w->vstart + i] = has ? vpno : NO_VALUE;
			w->kvoff[w->vstart + i] = w->voff[i];
			ntuples += has;
		}
		fill_page(w, next_pending(w), WC_PAGE_RUN_VALUES, flags, payload, plen, ntuples, bytes);
		w->pinfo[w->npending].leaf = -1;
		w->pinfo[w->npending].vpno = vpno;
		w->pending_tids[w->npending * WC_MAX_ROWS_PER_BLOCK] = NULL;
		w->npending++;
		w->hdr.ndata_pages++;
		w->hdr.nvalue_pages++;
		w->hdr.st.raw_bytes += bytes;
		w->hdr.st.compressed_bytes += plen;
		if ((cr == WC_COLUMNS_OK && !w->colmemo.frames_no_room) || !w->value_columns)
			w->vratio = 0.7 * w->vratio + 0.3 * ((double) bytes / (double) plen);
	}
	else
		for (int i = 0; i < k; i++)
			w->kvp[w->vstart + i] = NO_VALUE;	/* tombstones only */

	/* keep the tuples that did not go into this page */
	memmove(w->vraw, w->vraw + bytes, w->vrawlen - bytes);
	w->vrawlen -= bytes;
	for (int i = k; i < w->nrows - w->vstart; i++)
		w->voff[i - k] = w->voff[i] - bytes;
	w->vstart += k;
	return true;
}

/*
 * Are rows [0, k) of the image settled (WC_KEYPAGE_SETTLED): frozen, live,
 * and each the only version of its key, also against the last key page?
 */
static bool
keys_settled(WcRunWriter *w, int k)
{
	const char *prev = w->lastkey.len > 0 ? w->lastkey.data : NULL;
	int			prevlen = w->lastkey.len;

	for (int i = 0; i < k; i++)
	{
		WcRowHeader *row = (WcRowHeader *) (w->image + w->koff[i]);

		if (!WcRowIsSettledLive(row) ||
			(prev && wc_compare_keys(prev, prevlen, WcRowKey(row), row->keylen) == 0))
			return false;
		prev = WcRowKey(row);
		prevlen = row->keylen;
	}
	return true;
}

static void
remember_last_key(WcRunWriter *w, int k)
{
	WcRowHeader *last = (WcRowHeader *) (w->image + w->koff[k - 1]);

	resetStringInfo(&w->lastkey);
	appendBinaryStringInfo(&w->lastkey, WcRowKey(last), last->keylen);
}

/*
 * Write rows [0, k) as one key page, if they fit compressed (or raw) with
 * their value page references.  Returns false when they do not.
 */
static bool
write_keys(WcRunWriter *w, int k)
{
	Size		rowbytes = (k < w->nrows) ? w->koff[k] : w->krawlen;
	Size		rawsize = rowbytes + sizeof(uint32) * k;
	uint32		vfirst = NO_VALUE,
				vlast = 0;
	uint32		area[WC_MAX_VALUE_REFS];
	int			nvalues = 0;
	WcKeyPageHeader kh = {0};
	Size		hlen;
	const char *src;
	Size		srclen;
	WcCodec		codec;
	const char *frame;
	Size		flen;
	uint32		plen = 0;
	bool		steps = false;
	PendingPage *pi;

	for (int i = 0; i < k; i++)
		if (w->kvp[i] != NO_VALUE)
		{
			vfirst = Min(vfirst, w->kvp[i]);
			vlast = Max(vlast, w->kvp[i]);
		}
	if (vfirst != NO_VALUE)
		nvalues = vlast - vfirst + 1;
	if (nvalues > WC_MAX_VALUE_REFS)
		return false;
	for (int j = 0, at = 0; j < nvalues; j++)
	{
		area[j] = at;
		at += w->vp_raw[vfirst + j];
	}

	/* the key block: rows, each recording its tuple's place, then offsets */
	memcpy(w->image, w->kraw, rowbytes);
	for (int i = 0; i < k; i++)
	{
		WcRowHeader *row = (WcRowHeader *) (w->image + w->koff[i]);

		row->tupoff = (w->kvp[i] == NO_VALUE) ? WcRowTupleOffset(row->keylen) :
			(int32) (area[w->kvp[i] - vfirst] + w->kvoff[i]);
	}
	memcpy(w->image + rowbytes, w->koff, sizeof(uint32) * k);

	/* format 10: the rows packed (their offsets are implied) */
	hlen = sizeof(WcKeyPageHeader) + nvalues * sizeof(WcValueRef);
	if (w->hdr.version >= WC_RUN_VERSION_PACKED)
	{
		steps = w->hdr.version >= WC_RUN_VERSION_STEPS;
		plen = (uint32) wc_keys_pack(w->image, w->koff, k, rowbytes, w->packed, &steps);
	}
	if (plen > 0)
		hlen += sizeof(uint32);

	/*
	 * Packing leaves a codec little to find (lz4 saved 0.03% of random uuid
	 * keys, 0.8% of the device_daily_images keys), but every read of the
	 * page would decompress it: packed rows a codec does not shrink by a
	 * sixteenth are stored as they are, and read straight from the page.
	 */
	src = plen > 0 ? w->packed : w->image;
	srclen = plen > 0 ? plen : rawsize;
	codec = wc_probe_due(w->key_codec_misses) ? w->key_codec : WC_CODEC_NONE;
	frame = compress_for_page(w, codec, src, srclen, WC_PAYLOAD_CAPACITY - hlen,
							  plen / 16, &flen, &kh.flags);
	if (frame == NULL && codec != w->key_codec)
		/* too big as they are: the codec may make them fit */
		frame = compress_for_page(w, w->key_codec, src, srclen, WC_PAYLOAD_CAPACITY - hlen,
								  plen / 16, &flen, &kh.flags);
	if (frame == NULL)
		return false;
	wc_probe_note(&w->key_codec_misses, WcFlagsCodec(kh.flags) != WC_CODEC_NONE);
	if (plen > 0)
		kh.flags |= WC_KEYS_PACKED | (steps ? WC_KEYS_STEPS : 0);
	kh.nvalues = nvalues;
	kh.keylen = flen;
	memcpy(w->payload, &kh, sizeof(kh));
	for (int j = 0; j < nvalues; j++)
	{
		WcValueRef	ref = {InvalidBlockNumber, w->vp_raw[vfirst + j]};

		memcpy(w->payload + sizeof(kh) + j * sizeof(WcValueRef), &ref, sizeof(ref));
	}
	if (plen > 0)
		memcpy(w->payload + hlen - sizeof(uint32), &plen, sizeof(uint32));
	memcpy(w->payload + hlen, frame, flen);
	fill_page(w, next_pending(w), WC_PAGE_RUN_DATA, 0, w->payload, hlen + flen, k,
			  (uint32) rawsize);

	/* block numbers are known when the batch is written */
	pi = &w->pinfo[w->npending];
	pi->leaf = w->nleaf;
	pi->vfirst = vfirst;
	pi->nvalues = nvalues;
	add_leaf(w, WcRowKey((WcRowHeader *) w->kraw), ((WcRowHeader *) w->kraw)->keylen,
			 InvalidBlockNumber);
	w->leaf_count[w->nleaf - 1] = keys_settled(w, k) ? (uint32) k : WC_UNSETTLED;
	if (w->hints)
		add_leaf_hint(w, k, vfirst, nvalues);
	remember_last_key(w, k);
	for (int i = 0; i < k; i++)
		w->pending_tids[w->npending * WC_MAX_ROWS_PER_BLOCK + i] = w->tidptrs[i];
	if (k < WC_MAX_ROWS_PER_BLOCK)
		w->pending_tids[w->npending * WC_MAX_ROWS_PER_BLOCK + k] = NULL;
	w->npending++;
	w->hdr.ndata_pages++;
	w->hdr.st.raw_bytes += rawsize;
	w->hdr.st.compressed_bytes += hlen + flen;
	w->kratio = 0.7 * w->kratio + 0.3 * ((double) rawsize / (double) flen);
	return true;
}

/* Forget the first k buffered rows (they are in a key page now). */
static void
drop_rows(WcRunWriter *w, int k)
{
	Size		shift = (k < w->nrows) ? w->koff[k] : w->krawlen;

	memmove(w->kraw, w->kraw + shift, w->krawlen - shift);
	w->krawlen -= shift;
	for (int i = k; i < w->nrows; i++)
	{
		w->koff[i - k] = w->koff[i] - shift;
		w->kvp[i - k] = w->kvp[i];
		w->kvoff[i - k] = w->kvoff[i];
		w->tidptrs[i - k] = w->tidptrs[i];
	}
	w->nrows -= k;
	w->open_start -= k;
	w->vstart -= k;
	for (int c = 0; c < w->nclosed; c++)
		w->closed[c] -= k;
	if (w->nclosed > 0 && w->closed[0] == 0)
	{
		w->nclosed--;
		memmove(w->closed, w->closed + 1, sizeof(int) * w->nclosed);
	}
}

/* Write the closed key blocks whose tuples are all in value pages. */
static void
build_closed(WcRunWriter *w)
{
	while (w->nclosed > 0 && w->closed[0] <= w->vstart)
	{
		int			k = w->closed[0];

		while (!write_keys(w, k))
		{
			Assert(k > 1);
			k = Max(1, k / 2);
		}
		drop_rows(w, k);
	}
}

/* Put every buffered tuple into value pages. */
static void
cut_values(WcRunWriter *w)
{
	while (w->vstart < w->nrows)
	{
		int			k = w->nrows - w->vstart;

		while (!write_values(w, k))
		{
			Assert(k > 1);
			k = Max(1, k / 2);
		}
	}
	build_closed(w);
}

static void
close_key_block(WcRunWriter *w)
{
	if (w->nrows == w->open_start)
		return;
	if (w->nclosed == WC_MAX_CLOSED_BLOCKS)
		cut_values(w);			/* writes the closed blocks */
	w->closed[w->nclosed++] = w->nrows;
	w->open_start = w->nrows;
	w->open_first_vp = NO_VALUE;
	build_closed(w);
}

/* Room in the writer's arrays for one more row of `keypart` key bytes. */
static void
make_room(WcRunWriter *w, Size keypart)
{
	if (w->nrows == w->rowcap)
	{
		w->rowcap *= 2;
		w->koff = repalloc_huge(w->koff, sizeof(uint32) * w->rowcap);
		w->kvp = repalloc_huge(w->kvp, sizeof(uint32) * w->rowcap);
		w->kvoff = repalloc_huge(w->kvoff, sizeof(uint32) * w->rowcap);
		w->tidptrs = repalloc_huge(w->tidptrs, sizeof(ItemPointer) * w->rowcap);
		w->voff = repalloc_huge(w->voff, sizeof(uint32) * w->rowcap);
	}
	if (w->krawlen + keypart > w->krawcap)
	{
		w->krawcap = Max(w->krawcap * 2, w->krawlen + keypart);
		w->kraw = repalloc_huge(w->kraw, w->krawcap);
	}
}

/* The run summary (header) takes in one more row. */
static void
summarize_row(WcRunWriter *w, const WcRowHeader *row)
{
	const char *key = WcRowKey(row);

	if (w->hdr.st.nrows == 0)
		appendBinaryStringInfo(&w->minkey, key, row->keylen);
	resetStringInfo(&w->maxkey);
	appendBinaryStringInfo(&w->maxkey, key, row->keylen);
	wc_key_ranges_add(&w->ranges, wc_table_info(w->rel), key, row->keylen);
	w->hdr.st.nrows++;
	if (WcRowIsTombstone(row))
		w->hdr.st.ntombstones++;
	if (row->flags & WC_ROW_EXTERNAL)
		w->hdr.st.nexternal++;
	w->hdr.st.min_write_ts = Min(w->hdr.st.min_write_ts, row->write_ts);
	w->hdr.st.max_write_ts = Max(w->hdr.st.max_write_ts, row->write_ts);
	if (WcRowIsTombstone(row))
		w->hdr.st.max_expire = Max(w->hdr.st.max_expire, row->write_ts);	/* dead from its write */
	else if (row->expire_at == 0)
		w->never_expires = true;
	else
		w->hdr.st.max_expire = Max(w->hdr.st.max_expire, row->expire_at);
	if (TransactionIdIsNormal(row->xid))
	{
		if (!TransactionIdIsValid(w->hdr.st.min_xid) ||
			TransactionIdPrecedes(row->xid, w->hdr.st.min_xid))
			w->hdr.st.min_xid = row->xid;
		if (!TransactionIdIsValid(w->hdr.st.max_xid) ||
			TransactionIdFollows(row->xid, w->hdr.st.max_xid))
			w->hdr.st.max_xid = row->xid;
	}
}

/*
 * The bloom filter's partition hashes, and Cassandra's large-partition
 * warning, follow the partitions as rows arrive in key order.
 */
static void
track_partition(WcRunWriter *w, const WcRowHeader *row)
{
	const char *key = WcRowKey(row);

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
						wc_describe_partition(w->rel, wc_table_info(w->rel), key, row->pklen)),
				 errdetail("A run now holds more than %d kB of this partition.", wc_partition_warn_size_kb),
				 errhint("Add a bucket column (for example a day) to the partition key so that partitions stay small.")));
	}
}

void
wc_run_writer_add(WcRunWriter *w, const WcRowHeader *row, ItemPointer tid_out)
{
	MemoryContext old = MemoryContextSwitchTo(w->cxt);
	Size		keypart = WcRowTupleOffset(row->keylen);
	Size		tuplen = row->len > keypart ? row->len - keypart : 0;
	Size		tupneed = MAXALIGN(tuplen);
	int			vrows = w->nrows - w->vstart;
	int			krows;
	Size		kbytes;
	WcRowHeader *kept;

	CHECK_FOR_INTERRUPTS();
	/* the value page being filled is full */
	if (vrows > 0 &&
		(vrows + 1 > WC_MAX_ROWS_PER_BLOCK ||
		 w->vrawlen + tupneed > WC_MAX_RAW_BLOCK ||
		 (double) (w->vrawlen + tupneed) / w->vratio > WC_PAYLOAD_CAPACITY * w->vfill ||
		 w->nclosed == WC_MAX_CLOSED_BLOCKS))
		cut_values(w);

	/* the open key block is full (its value references count too) */
	krows = w->nrows - w->open_start;
	kbytes = w->krawlen - (krows > 0 ? w->koff[w->open_start] : w->krawlen) +
		keypart + sizeof(uint32) * (krows + 1);
	if (krows > 0 &&
		(krows + 1 > WC_MAX_ROWS_PER_BLOCK ||
		 kbytes > WC_MAX_RAW_BLOCK ||
		 (double) kbytes / w->kratio >
		 (WC_PAYLOAD_CAPACITY - sizeof(WcKeyPageHeader) -
		  WC_MAX_VALUE_REFS * sizeof(WcValueRef) - sizeof(uint32)) * 0.97 ||
		 (w->open_first_vp != NO_VALUE &&
		  w->next_vpno - w->open_first_vp + 1 >= WC_MAX_VALUE_REFS)))
		close_key_block(w);

	make_room(w, keypart);

	/* header and key; where the tuple goes is set when the key page is built */
	kept = (WcRowHeader *) (w->kraw + w->krawlen);
	memcpy(kept, row, Min(row->len, keypart));
	if (row->len < keypart)
		memset((char *) kept + row->len, 0, keypart - row->len);
	kept->flags &= ~WC_ROW_IN_BLOCK;
	kept->blockoff = 0;
	w->koff[w->nrows] = w->krawlen;
	w->kvp[w->nrows] = NO_VALUE;
	w->kvoff[w->nrows] = 0;
	w->tidptrs[w->nrows] = tid_out;
	w->krawlen += keypart;

	/* tuple */
	w->voff[w->nrows - w->vstart] = w->vrawlen;
	if (tuplen > 0)
	{
		memcpy(w->vraw + w->vrawlen, WcRowTuple(row), tuplen);
		memset(w->vraw + w->vrawlen + tuplen, 0, tupneed - tuplen);
		w->vrawlen += tupneed;
		if (w->open_first_vp == NO_VALUE)
			w->open_first_vp = w->next_vpno;
	}
	w->nrows++;

	summarize_row(w, row);
	track_partition(w, row);
	MemoryContextSwitchTo(old);
}

/* Pack index entries [first, n) into pages; returns the page count. */
typedef struct IndexLevel
{
	int			nentries;
	char	  **keys;
	uint16	   *keylens;
	BlockNumber *children;
	uint32	   *counts;			/* leaves: settled rows per key page */
	WcRunWriter *hints;			/* leaves of format 13: the value hints */
	int			npages;
	int		   *page_start;		/* first entry of each page */
} IndexLevel;

static Size
entry_size(int keylen)
{
	return sizeof(uint32) + sizeof(uint16) + keylen;
}

/* Bytes of leaf entry i's value hint (WC_LEAF_HINTS). */
static Size
hint_size(const WcRunWriter *w, int i)
{
	return 1 + sizeof(BlockNumber) * w->leaf_nv[i] +
		(w->leaf_sep_off[i + 1] - w->leaf_sep_off[i]);
}

/* An entry's bytes on a page of this level (a leaf's count and hint included). */
static Size
level_entry_size(const IndexLevel *lv, int i)
{
	return entry_size(lv->keylens[i]) + (lv->counts ? sizeof(uint32) : 0) +
		(lv->hints ? hint_size(lv->hints, i) : 0);
}

static void
paginate(IndexLevel *lv)
{
	Size		used = 0;

	lv->page_start = palloc(sizeof(int) * (lv->nentries + 1));
	lv->npages = 0;
	for (int i = 0; i < lv->nentries; i++)
	{
		Size		sz = level_entry_size(lv, i);

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
	if (lv->counts)
	{
		memcpy(payload + len, lv->counts + first, sizeof(uint32) * (last - first));
		len += sizeof(uint32) * (last - first);
	}
	for (int i = first; lv->hints && i < last; i++)
	{
		uint32		from = w->leaf_sep_off[i];

		payload[len++] = (char) w->leaf_nv[i];
		for (int j = 0; j < w->leaf_nv[i]; j++)
		{
			Assert(w->vp_blk[w->leaf_vfirst[i] + j] != InvalidBlockNumber);
			memcpy(payload + len, &w->vp_blk[w->leaf_vfirst[i] + j], sizeof(BlockNumber));
			len += sizeof(BlockNumber);
		}
		memcpy(payload + len, w->leafseps.data + from, w->leaf_sep_off[i + 1] - from);
		len += w->leaf_sep_off[i + 1] - from;
	}
	Assert(len <= WC_PAYLOAD_CAPACITY);
	write_page(w, buf, WC_PAGE_RUN_INDEX,
			   (lv->counts ? WC_LEAF_COUNTS : 0) | (lv->hints ? WC_LEAF_HINTS : 0),
			   payload, len, last - first, level);
}

/*
 * n contiguous pages for the extent: a free range if the free space map
 * has one, else n new pages under one extension lock.
 */
static BlockNumber
allocate_extent(WcRunWriter *w, uint32 n)
{
	BlockNumber first = wc_reuse_extent(w->rel, w->strategy, w->storage_id,
										w->hdr.run_id, n);

	if (first != InvalidBlockNumber)
		return first;
	LockRelationForExtension(w->rel, ExclusiveLock);
	for (uint32 i = 0; i < n; i++)
	{
		/*
		 * Each page carries our run id before anyone can see it (locked as it
		 * is created): if we fail before writing it, the pages of our run
		 * are found again by its id, and a zeroed page nobody holds is one
		 * whose writer failed (see "Leaked pages" in src/README.md).  Not
		 * WAL-logged: the page is written whole, logged, right after.
		 */
		Buffer		buf = ReadBufferExtended(w->rel, MAIN_FORKNUM, P_NEW,
											 RBM_ZERO_AND_LOCK, w->strategy);

		if (i == 0)
			first = BufferGetBlockNumber(buf);
		else if (BufferGetBlockNumber(buf) != first + i)
			elog(ERROR, "widecol: relation extension was not contiguous");
		wc_stamp_extent_page(BufferGetPage(buf), w->hdr.run_id);
		MarkBufferDirty(buf);
		UnlockReleaseBuffer(buf);
	}
	UnlockRelationForExtension(w->rel, ExclusiveLock);
	return first;
}

static Buffer
lock_new_block(WcRunWriter *w, BlockNumber blk)
{
	Buffer		buf = ReadBufferExtended(w->rel, MAIN_FORKNUM, blk, RBM_ZERO_AND_LOCK,
										 w->extent_in_pool ? NULL : w->strategy);

	return buf;
}

/* The index levels, bottom-up, until one page holds a level; *npages: all their pages. */
static List *
build_index_levels(WcRunWriter *w, uint32 *npages)
{
	IndexLevel *lv = palloc0(sizeof(IndexLevel));
	List	   *levels;

	lv->nentries = w->nleaf;
	lv->keys = palloc(sizeof(char *) * w->nleaf);
	lv->keylens = w->leaf_len;
	lv->children = w->leaf_blk;
	lv->counts = w->leaf_count;
	lv->hints = w->hints ? w : NULL;
	for (int i = 0; i < w->nleaf; i++)
		lv->keys[i] = w->leafkeys.data + w->leaf_off[i];
	paginate(lv);
	levels = list_make1(lv);
	*npages = lv->npages;
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
		*npages += up->npages;
		lv = up;
	}
	return levels;
}

/* Write the index levels from block blk on (leaves first); returns the next block. */
static BlockNumber
write_index(WcRunWriter *w, List *levels, BlockNumber blk)
{
	ListCell   *lc;
	int			level = 0;

	foreach(lc, levels)
	{
		IndexLevel *cur = lfirst(lc);

		/* child block numbers of upper levels are known now */
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
	return blk;
}

/* Write the bloom filter's nbloom pages from block blk on; returns the next block. */
static BlockNumber
write_bloom(WcRunWriter *w, uint32 nbloom, BlockNumber blk)
{
	w->hdr.bloom_first = blk;
	w->hdr.nbloom_pages = nbloom;
	w->hdr.st.npartitions = w->npk;
	if (nbloom > 0)
	{
		bool		blocked = WcRunBloomBlocked(&w->hdr);
		char	   *bloom = palloc_extended((Size) nbloom * WC_PAYLOAD_CAPACITY,
											MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);

		for (int64 i = 0; i < w->npk; i++)
			wc_bloom_set(bloom + (Size) wc_bloom_page_for(nbloom, w->pkhash[i]) * WC_PAYLOAD_CAPACITY,
						 w->pkhash[i], blocked);
		for (uint32 p = 0; blocked && p < nbloom; p++)
			wc_bloom_seal(bloom + (Size) p * WC_PAYLOAD_CAPACITY);
		for (uint32 p = 0; p < nbloom; p++)
			write_page(w, lock_new_block(w, blk + p), WC_PAGE_RUN_BLOOM, 0,
					   bloom + (Size) p * WC_PAYLOAD_CAPACITY, WC_PAYLOAD_CAPACITY, 0, 0);
	}
	return blk + nbloom;
}

/* The value directory (so that freeing the run reads no key page). */
static void
write_value_dir(WcRunWriter *w, uint32 nvaluedir, BlockNumber blk)
{
	w->hdr.valuedir_first = blk;
	w->hdr.nvaluedir_pages = nvaluedir;
	for (uint32 p = 0; p < nvaluedir; p++)
	{
		uint32		first = p * WC_VALUEDIR_ENTRIES;
		uint32		n = Min(WC_VALUEDIR_ENTRIES, w->next_vpno - first);

		write_page(w, lock_new_block(w, blk + p), WC_PAGE_RUN_VALUEDIR, 0,
				   (const char *) (w->vp_blk + first), n * sizeof(BlockNumber), n, 0);
	}
}

/* The run's dictionary, if a value page uses it (format 9). */
static void
write_dict(WcRunWriter *w, const char *dict, BlockNumber blk)
{
	w->dictloc.first = blk;
	for (uint32 p = 0; p < w->dictloc.npages; p++)
	{
		uint32		off = p * WC_PAYLOAD_CAPACITY;
		uint32		n = Min(WC_PAYLOAD_CAPACITY, w->dictloc.len - off);

		write_page(w, lock_new_block(w, blk + p), WC_PAGE_RUN_DICT, 0, dict + off, n, 0, 0);
	}
}

/*
 * The header page: the run's summary, then its min and max keys, then
 * (format 4) the length of its key-column ranges and the ranges, then
 * (format 9) where its dictionary is (WcRunDict, zeroes for none).
 */
static void
write_header(WcRunWriter *w, BlockNumber blk)
{
	char		hdrbuf[BLCKSZ];
	Size		off = sizeof(WcRunHeader);
	uint32		rlen = w->ranges_out.len;

	w->hdr.st.max_expire = w->never_expires ? PG_INT64_MAX : w->hdr.st.max_expire;
	w->hdr.min_key_len = w->minkey.len;
	w->hdr.max_key_len = w->maxkey.len;
	memcpy(hdrbuf, &w->hdr, sizeof(WcRunHeader));
	memcpy(hdrbuf + off, w->minkey.data, w->minkey.len);
	off += w->minkey.len;
	memcpy(hdrbuf + off, w->maxkey.data, w->maxkey.len);
	off += w->maxkey.len;
	memcpy(hdrbuf + off, &rlen, sizeof(rlen));
	off += sizeof(rlen);
	memcpy(hdrbuf + off, w->ranges_out.data, rlen);
	off += rlen;
	if (w->hdr.version >= WC_RUN_VERSION_DICT)
	{
		memcpy(hdrbuf + off, &w->dictloc, sizeof(WcRunDict));
		off += sizeof(WcRunDict);
	}
	write_page(w, lock_new_block(w, blk), WC_PAGE_RUN_HEADER, 0, hdrbuf, off, 0, 0);
}

static bytea *
key_bytea(StringInfo key)
{
	bytea	   *b = palloc(VARHDRSZ + key->len);

	SET_VARSIZE(b, VARHDRSZ + key->len);
	memcpy(VARDATA(b), key->data, key->len);
	return b;
}

/* The manifest row's figures, from the header. */
static void
fill_summary(WcRunWriter *w, BlockNumber extent, WcRunSummary *summary)
{
	memset(summary, 0, sizeof(WcRunSummary));
	summary->run_id = w->hdr.run_id;
	summary->level = w->hdr.level;
	summary->header_block = extent;
	summary->npages = w->hdr.extent_pages + w->hdr.ndata_pages;
	summary->st = w->hdr.st;
	summary->min_key = key_bytea(&w->minkey);
	summary->max_key = key_bytea(&w->maxkey);
	summary->key_ranges = w->ranges_out.len > 0 ? key_bytea(&w->ranges_out) : NULL;
}

static void
writer_free(WcRunWriter *w)
{
	FreeAccessStrategy(w->strategy);
	MemoryContextDelete(w->cxt);
}

/*
 * Write the rest of the data pages, then the extent (header, index, bloom
 * filter, value directory); publish the run in the manifest.  Returns
 * false (and writes nothing more) when no row was added.
 */
bool
wc_run_writer_finish(WcRunWriter *w, WcRunSummary *summary)
{
	MemoryContext old = MemoryContextSwitchTo(w->cxt);
	List	   *levels;
	uint32		nindex;
	uint32		nbloom;
	uint32		nvaluedir;
	const char *dict;
	BlockNumber extent,
				blk;

	close_key_block(w);
	cut_values(w);
	Assert(w->nrows == 0 && w->nclosed == 0);
	flush_pending(w);
	/* a checkpoint began while we wrote past shared buffers: sync ourselves */
	if (w->hdr.ndata_pages > 0 && GetRedoRecPtr() != w->redo_at_start &&
		RelationNeedsWAL(w->rel))
		smgrimmedsync(RelationGetSmgr(w->rel), MAIN_FORKNUM);
	if (w->hdr.st.nrows == 0)
	{
		MemoryContextSwitchTo(old);
		writer_free(w);
		return false;
	}

	levels = build_index_levels(w, &nindex);
	nbloom = (w->npk > 0) ? wc_bloom_npages(w->npk, WcRunBloomBlocked(&w->hdr)) : 0;
	nvaluedir = (w->next_vpno + WC_VALUEDIR_ENTRIES - 1) / WC_VALUEDIR_ENTRIES;
	dict = wc_dict_bytes(w->dict, &w->dictloc.len);
	w->dictloc.npages = dict ? (w->dictloc.len + WC_PAYLOAD_CAPACITY - 1) / WC_PAYLOAD_CAPACITY : 0;
	w->hdr.extent_pages = 1 + nindex + nbloom + nvaluedir + w->dictloc.npages;
	initStringInfo(&w->ranges_out);
	wc_key_ranges_serialize(&w->ranges, &w->ranges_out);
	claim_pages(w);
	extent = allocate_extent(w, w->hdr.extent_pages);
	/*
	 * The run's extent (header, index, bloom, value directory, dictionary)
	 * is what every lookup reads first, and the compaction that writes it
	 * drops the runs whose extents lookups were reading: written into
	 * ordinary buffers rather than the ring, it stays in shared buffers,
	 * as RocksDB can put the blocks a flush writes into its block cache
	 * (prepopulate_block_cache).  Not an extent over a quarter of the
	 * pool, as a scan of a larger table takes a ring.
	 */
	w->extent_in_pool = w->hdr.extent_pages <= (uint32) NBuffers / 4;

	blk = write_index(w, levels, extent + 1);
	blk = write_bloom(w, nbloom, blk);
	write_value_dir(w, nvaluedir, blk);
	if (dict)
		write_dict(w, dict, blk + nvaluedir);
	write_header(w, extent);

	/* publish */
	MemoryContextSwitchTo(old);
	fill_summary(w, extent, summary);
	wc_manifest_add_run(w->storage_id, summary);
	writer_free(w);
	return true;
}
