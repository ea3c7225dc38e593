/*
 * runread.c — reading a sorted run: pages with checksums, the index, blocks.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/spccache.h"

#include "widecol.h"
#include "storage/bloom.h"
#include "storage/cache.h"
#include "storage/columns.h"
#include "storage/compression.h"
#include "storage/keypack.h"
#include "storage/manifest.h"
#include "storage/merge.h"
#include "storage/metapage.h"
#include "storage/page.h"
#include "storage/row.h"
#include "storage/run.h"

static void
corrupt(Relation rel, BlockNumber blk, uint64 run_id, const char *what)
{
	wc_note_corruption(rel, "run", run_id, blk);
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("widecol: %s in block %u of relation \"%s\" (run %llu)",
					what, blk, RelationGetRelationName(rel),
					(unsigned long long) run_id)));
}

/*
 * Copy the payload of a run page after checking its header, type, run and
 * checksum.  Returns NULL, or what is wrong (the caller reports it).
 */
/* Is this page's header that of a run page of that type and run? */
static const char *
check_run_page_header(Page page, uint16 type, uint64 run_id, WcPageOpaqueData *op)
{
	if (PageIsNew(page) ||
		((PageHeader) page)->pd_special != BLCKSZ - MAXALIGN(sizeof(WcPageOpaqueData)) ||
		((PageHeader) page)->pd_lower < MAXALIGN(SizeOfPageHeaderData) ||
		((PageHeader) page)->pd_lower > ((PageHeader) page)->pd_special)
		return "invalid page header";
	*op = *WcPageGetOpaque(page);
	if (op->type != type || (run_id != 0 && op->segment != run_id))
		return "page of another kind or run";
	return NULL;
}

/*
 * Is this a sound run page of that type and run?  NULL, or what is wrong.
 * The CRC is not checked where PostgreSQL's checksums cover the page and
 * the caller allows it (`covered`: wc_page_crc_covered()).
 */
static const char *
check_run_page(Page page, uint16 type, uint64 run_id, WcPageOpaqueData *op, bool covered)
{
	const char *problem = check_run_page_header(page, type, run_id, op);

	if (problem == NULL && !covered && wc_page_crc(page) != op->crc)
		return "checksum mismatch";
	return problem;
}

#define RunPagePayloadLen(page) \
	(((PageHeader) (page))->pd_lower - MAXALIGN(SizeOfPageHeaderData))

/*
 * Copy the payload of a run page after checking its header, type, run and
 * checksum.  Returns NULL, or what is wrong (the caller reports it).
 */
const char *
wc_read_run_page_soft(Relation rel, BlockNumber blk, uint16 type, uint64 run_id,
					  char *payload, Size *len, WcPageOpaqueData *op,
					  BufferAccessStrategy strategy)
{
	Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blk, RBM_NORMAL, strategy);
	Page		page;
	const char *problem;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	problem = check_run_page(page, type, run_id, op, false);
	if (problem == NULL)
	{
		*len = RunPagePayloadLen(page);
		memcpy(payload, PageGetContents(page), *len);
	}
	UnlockReleaseBuffer(buf);
	return problem;
}

static Size
read_run_page(Relation rel, BlockNumber blk, uint16 type, uint64 run_id,
			  char *payload, WcPageOpaqueData *op,
			  BufferAccessStrategy strategy)
{
	Size		len = 0;
	const char *problem = wc_read_run_page_soft(rel, blk, type, run_id, payload,
												&len, op, strategy);

	if (problem)
		corrupt(rel, blk, run_id, problem);
	return len;
}

/*
 * Index and bloom pages a seek reads, kept by the backend after their
 * checks (storage/cache.h): every seek descends from the same root and
 * probes a bloom page per run, and checking an 8 kB page's CRC each time was
 * a quarter of a lookup's time.  Run pages never change while the run
 * exists, and a run id is never reused within a storage (relfilenode), so
 * an entry keyed by both is never stale.  widecol.run_page_cache_size
 * bounds it, least recently used out: a lookup by key in a table of 16M
 * rows probes one of ~2,500 bloom pages per run (20 MB), and a 2 MB cache
 * then missed nearly always (see "Seek costs" in src/README.md).  Bloom
 * pages of run format 7 are not kept here: probe_bloom_block reads them in
 * shared buffers.
 */
int			wc_run_page_cache_kb = 65536;

typedef struct CachedPageKey
{
	RelFileNode node;
	uint64		run_id;
	BlockNumber blk;
} CachedPageKey;

typedef struct CachedPage
{
	WcPageOpaqueData op;
	Size		len;
	WcIndexEntry *entries;		/* an index page's op.count entries, once
								 * parsed (cached_index); keys point into
								 * payload */
	char		payload[WC_PAYLOAD_CAPACITY];
} CachedPage;

static WcCache *page_cache = NULL;

static void
release_cached_page(void *entry)
{
	CachedPage *c = (CachedPage *) entry;

	if (c->entries)
		pfree(c->entries);
	c->entries = NULL;
}

/* An index or bloom page in the cache, read and checked on a miss. */
static CachedPage *
cached_page(Relation rel, BlockNumber blk, uint16 type, uint64 run_id,
			BufferAccessStrategy strategy)
{
	CachedPageKey key;
	CachedPage *c;
	bool		found;

	if (page_cache == NULL)
		page_cache = wc_cache_create("index and bloom pages", sizeof(CachedPageKey),
									 sizeof(CachedPage), &wc_run_page_cache_kb, 0,
									 release_cached_page);
	memset(&key, 0, sizeof(key));
	key.node = rel->rd_node;
	key.run_id = run_id;
	key.blk = blk;
	c = wc_cache_lookup(page_cache, &key, &found);
	if (!found || c->op.type != type)
	{
		/* a read that fails leaves the entry empty (type 0): a miss next time */
		release_cached_page(c);
		c->op.type = 0;
		c->len = read_run_page(rel, blk, type, run_id, c->payload, &c->op, strategy);
		wc_cache_account(page_cache, c, sizeof(CachedPage));
		wc_cache_shrink(page_cache, c);
	}
	return c;
}

/*
 * The checked payload of an index or bloom page, from the cache; valid
 * until the cache is used again.
 */
static const char *
cached_run_page(Relation rel, BlockNumber blk, uint16 type, uint64 run_id,
				WcPageOpaqueData *op, Size *len, BufferAccessStrategy strategy)
{
	CachedPage *c = cached_page(rel, blk, type, run_id, strategy);

	*op = c->op;
	*len = c->len;
	return c->payload;
}

static Size
read_run_page_cached(Relation rel, BlockNumber blk, uint16 type, uint64 run_id,
					 char *payload, WcPageOpaqueData *op, BufferAccessStrategy strategy)
{
	Size		len;
	const char *p = cached_run_page(rel, blk, type, run_id, op, &len, strategy);

	memcpy(payload, p, len);
	return len;
}

/* Buffers of pooled blocks (the readers of a merge, wc_merge_*): the pool. */
#define RAW_HEADER MAXALIGN(sizeof(WcBlock *))

static char *
buffer_get(WcBlock *block, Size *size, bool *pooled)
{
	*pooled = block->poolable;
	return *pooled ? wc_pool_get(size) : palloc(*size);
}

static void
buffer_put(char *buf, Size size, bool pooled)
{
	if (pooled)
		wc_pool_put(buf, size);
	else
		pfree(buf);
}

/*
 * Make room for `need` raw bytes after the slot that holds the block's
 * address (so that a row can find its block, see wc_block_load_tuple).
 */
static void
block_reserve(WcBlock *block, Size need)
{
	if (block->rawcap < need)
	{
		Size		size = RAW_HEADER + Max(need, WC_MAX_RAW_BLOCK + WC_MAX_ROWS_PER_BLOCK * sizeof(uint32));

		if (block->raw)
			buffer_put(block->raw - RAW_HEADER, RAW_HEADER + block->rawcap, block->raw_pooled);
		block->raw = buffer_get(block, &size, &block->raw_pooled) + RAW_HEADER;
		block->rawcap = size - RAW_HEADER;
	}
	*(WcBlock **) (block->raw - RAW_HEADER) = block;
}

/*
 * Consecutive key pages usually share a value page (the last of one is the
 * first of the next): keep its decoded tuples rather than read it again.
 */
static void
keep_last_values(WcBlock *block)
{
	int			last = block->nvalues - 1;

	block->carry_blkno = InvalidBlockNumber;
	if (block->raw == NULL || last < 0 || !block->value_loaded[last])
		return;
	if (block->carry == NULL)
	{
		Size		size = WC_MAX_RAW_BLOCK;

		block->carry = buffer_get(block, &size, &block->carry_pooled);
	}
	memcpy(block->carry, block->raw + block->value_off[last], block->values[last].rawsize);
	block->carry_blkno = block->values[last].blkno;
	block->carry_size = block->values[last].rawsize;
}

/* Where a packed key block is decompressed before it is laid out. */
static char *
packed_scratch(void)
{
	static char *scratch = NULL;

	if (scratch == NULL)
		scratch = MemoryContextAlloc(TopMemoryContext,
									 WC_MAX_RAW_BLOCK + WC_MAX_ROWS_PER_BLOCK * sizeof(uint32));
	return scratch;
}

static const char *place_tuples(WcBlock *block, int to);

/*
 * The bounds of a forward read that a key page's decoding may stop at: lo
 * (NULL: none), the key it seeks in this page, and hi (NULL: none), the
 * read's upper bound.
 */
typedef struct ReadBounds
{
	const char *lo;
	int			lolen;
	const char *hi;
	int			hilen;
} ReadBounds;

/*
 * Decompress and check a key page's payload: the key block goes to the
 * start of block->raw, and each row's tupoff is pointed at where its tuple
 * will be once its value page is loaded (the value area after the key
 * block); such rows are flagged WC_ROW_IN_BLOCK.  NULL or what is wrong.
 * With bounds, a packed block's rows may be laid out and checked only from
 * the step of rows before the first one at or past lo (block->first) up to
 * the first step past hi (block->partial), and only a step of them at
 * first, the rest as the read gets there (block->cursor.pending, block_more; see
 * wc_keys_unpack).
 */
static const char *
decode_block(const char *payload, Size len, const WcPageOpaqueData *op,
			 WcBlock *block, const ReadBounds *bounds)
{
	WcKeyPageHeader kh;
	uint32		rawsize = op->aux;
	uint32		nrows = op->count;
	Size		rowsend,
				base,
				area = 0;
	const char *frame;
	Size		hlen;
	uint32		plen = 0;
	const char *problem;
	int			first = 0,
				unpacked = (int) op->count;
	static const ReadBounds unbounded = {0};

	if (bounds == NULL)
		bounds = &unbounded;
	if (len < sizeof(kh))
		return "short key page";
	memcpy(&kh, payload, sizeof(kh));
	hlen = sizeof(kh) + kh.nvalues * sizeof(WcValueRef) +
		((kh.flags & WC_KEYS_PACKED) ? sizeof(uint32) : 0);
	if (kh.nvalues > WC_MAX_VALUE_REFS ||
		(kh.flags & ~(WC_CODEC_MASK | WC_KEYS_PACKED | WC_KEYS_STEPS)) ||
		((kh.flags & WC_KEYS_STEPS) && !(kh.flags & WC_KEYS_PACKED)) ||
		hlen + kh.keylen != len)
		return "invalid key page header";
	keep_last_values(block);
	if (op->segment != block->run_id)
		block->cols = NULL;		/* the page open by column is another run's */
	if (rawsize > WC_MAX_RAW_BLOCK + WC_MAX_ROWS_PER_BLOCK * sizeof(uint32) ||
		nrows == 0 || nrows > WC_MAX_ROWS_PER_BLOCK ||
		rawsize < nrows * sizeof(uint32))
		return "invalid block header";
	base = MAXALIGN(rawsize);
	memcpy(block->values, payload + sizeof(kh), kh.nvalues * sizeof(WcValueRef));
	for (int i = 0; i < kh.nvalues; i++)
	{
		if (block->values[i].rawsize == 0 || block->values[i].rawsize > WC_MAX_RAW_BLOCK ||
			block->values[i].rawsize % MAXIMUM_ALIGNOF != 0)
			return "invalid value page reference";
		block->value_off[i] = base + area;
		block->value_loaded[i] = false;
		area += block->values[i].rawsize;
	}
	block->nvalues = kh.nvalues;
	block->value_hint = 0;
	frame = payload + hlen;
	if (kh.flags & WC_KEYS_PACKED)
	{
		memcpy(&plen, frame - sizeof(uint32), sizeof(uint32));
		if (plen == 0 || plen > rawsize)
			return "invalid packed key block length";
	}
	/* after the value area: a lazy read's packed rows still to lay out */
	block_reserve(block, base + area + MAXALIGN(plen) + 8);
	if (kh.nvalues > 0 && block->carry_blkno == block->values[0].blkno &&
		block->carry_size == block->values[0].rawsize)
	{
		memcpy(block->raw + block->value_off[0], block->carry, block->carry_size);
		block->value_loaded[0] = true;
	}

	block->cursor.pending = false;
	if (kh.flags & WC_KEYS_PACKED)
	{
		/* format 10: the packed rows (decompressed aside unless stored as
		 * they are), then laid out */
		const char *packed = wc_decompressed(WcFlagsCodec(kh.flags), frame, kh.keylen,
											 packed_scratch(), plen, &problem);

		if (problem == NULL)
			problem = wc_keys_unpack(packed, plen, nrows, (kh.flags & WC_KEYS_STEPS) != 0,
									 block->raw, rawsize,
									 bounds->lo, bounds->lolen, bounds->hi, bounds->hilen,
									 &first, &unpacked,
									 bounds->lo || bounds->hi ? &block->cursor : NULL);
		/* the rest of the packed rows, kept for the read to lay out */
		if (problem == NULL && block->cursor.pending)
			wc_keys_cursor_keep(&block->cursor, block->raw + base + area);
	}
	else
		problem = wc_decompress(WcFlagsCodec(kh.flags), frame, kh.keylen, block->raw, rawsize);
	if (problem)
		return problem;

	rowsend = rawsize - nrows * sizeof(uint32);
	block->offsets = (uint32 *) (block->raw + rowsend);
	block->base = base;
	block->rowsend = rowsend;
	block->next_value = 0;
	block->first = first;
	block->nrows = first;
	problem = place_tuples(block, unpacked);
	if (problem)
		return problem;
	block->run_id = op->segment;
	block->partial = !block->cursor.pending && unpacked < (int) nrows;
	return NULL;
}

/*
 * Point rows [block->nrows, to) of a decoded key block at where their
 * tuples will be once their value pages are loaded (the value area after
 * the key block), flagged WC_ROW_IN_BLOCK, and count them laid out.  NULL
 * or what is wrong.
 */
static const char *
place_tuples(WcBlock *block, int to)
{
	Size		rowsend = block->rowsend;
	Size		base = block->base;
	int			v = block->next_value;

	for (int i = block->nrows; i < to; i++)
	{
		uint32		off = block->offsets[i];
		WcRowHeader *row = (WcRowHeader *) (block->raw + off);
		Size		keypart;
		Size		tuplen;
		int64		at;

		if (off % MAXIMUM_ALIGNOF != 0 || off + sizeof(WcRowHeader) > rowsend)
			return "invalid row offset";
		keypart = WcRowTupleOffset(row->keylen);
		if (off + keypart > rowsend || row->len < keypart || row->pklen > row->keylen ||
			row->keylen > WC_MAX_KEY_SIZE || (row->flags & WC_ROW_IN_BLOCK))
			return "invalid row offset";
		tuplen = row->len - keypart;
		row->blockoff = off / MAXIMUM_ALIGNOF;
		if (tuplen == 0)
		{
			row->tupoff = keypart;	/* a tombstone: no tuple */
			continue;
		}
		/* stored: the tuple's offset in the value area; tuples are in order */
		at = row->tupoff;
		if (at < 0 || at % MAXIMUM_ALIGNOF != 0)
			return "invalid tuple offset";
		while (v < block->nvalues &&
			   base + at >= block->value_off[v] + block->values[v].rawsize)
			v++;
		if (v == block->nvalues || base + at < block->value_off[v] ||
			base + at + tuplen > block->value_off[v] + block->values[v].rawsize)
			return "tuple outside its value page";
		row->tupoff = (int32) (base + at - off);
		row->flags |= WC_ROW_IN_BLOCK;
	}
	block->next_value = v;
	block->nrows = to;
	return NULL;
}

/*
 * Lay out more rows of the reader's key page, whose unpacking stopped with
 * rows to come (a lazy read: its cursor is pending).
 */
static void
block_more(WcRunReader *r)
{
	WcBlock    *block = &r->block;
	int			unpacked;
	const char *problem = wc_keys_unpack_more(&block->cursor, block->raw, r->hi_key,
											  r->hi_len, &unpacked);

	if (problem == NULL)
		problem = place_tuples(block, unpacked);
	if (problem)
		corrupt(r->rel, block->blkno, block->run_id, problem);
	block->partial = !block->cursor.pending && unpacked < block->cursor.nrows;
}

const char *
wc_decode_block(const char *payload, Size len, const WcPageOpaqueData *op,
				WcBlock *block)
{
	return decode_block(payload, len, op, block, NULL);
}

/*
 * Read and decode key page blkno into block.  With bounds, a forward read's,
 * the rows may be laid out only from a step before lo and as far as the
 * first one past hi, a step at a time (block->first, block->partial,
 * block->cursor.pending; see decode_block).
 */
static void
block_read(Relation rel, BlockNumber blkno, WcBlock *block,
		   BufferAccessStrategy strategy, const ReadBounds *bounds)
{
	Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
	Page		page;
	WcPageOpaqueData op = {0};
	const char *problem;

	/* checks and decompression straight from the (immutable) shared page */
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	problem = check_run_page(page, WC_PAGE_RUN_DATA, block->run_id, &op,
							 wc_page_crc_covered());
	if (problem == NULL)
		problem = decode_block(PageGetContents(page), RunPagePayloadLen(page), &op, block,
							   bounds);
	UnlockReleaseBuffer(buf);
	if (problem)
		corrupt(rel, blkno, block->run_id, problem);
	block->blkno = blkno;
	block->rel = rel;
	block->strategy = strategy;
}

void
wc_block_read(Relation rel, BlockNumber blkno, WcBlock *block,
			  BufferAccessStrategy strategy)
{
	block_read(rel, blkno, block, strategy, NULL);
}

/*
 * The block's run's dictionary, as far as the block knows it: a block read
 * without its run's reader, and reused across runs (a fetch by tid,
 * ANALYZE's sample), may hold another run's or none (then it is found
 * through the manifest).
 */
static inline WcDictRef
block_dict(const WcBlock *block)
{
	WcDictRef	ref = {block->rel, block->run_id, {0}};

	if (block->dict_run == block->run_id)
		ref.d = block->dict;
	return ref;
}

/* Decompress value page v of a decoded key page into its place. */
const char *
wc_decode_values(const char *payload, Size len, const WcPageOpaqueData *op,
				 WcBlock *block, int v)
{
	uint32		rawsize = op->aux;
	char	   *dst = block->raw + block->value_off[v];
	const char *problem;

	if (rawsize != block->values[v].rawsize || op->count == 0)
		return "value page does not match its reference";
	if (op->flags & WC_VALUES_COLUMNS)
	{
		WcDictRef	dict = block_dict(block);

		problem = wc_columns_assemble(payload, len, dst, rawsize, &dict);
	}
	else
		problem = wc_decompress(WcFlagsCodec(op->flags), payload, len, dst, rawsize);
	if (problem)
		return problem;
	block->value_loaded[v] = true;
	return NULL;
}

/*
 * Take a state from the pool able to open this payload in column layout
 * (every column decoded), keeping the block's if it is large enough.  NULL
 * if the payload needs more than WC_COLUMNS_STATE_SIZE (or is invalid).
 */
static char *
column_state(WcBlock *block, const char *payload, Size len)
{
	Size		need = wc_columns_state_size(payload, len);

	if (need == 0 || need > WC_COLUMNS_STATE_SIZE)
		return NULL;
	if (need > block->colstate_size)
	{
		if (block->colstate)
			wc_pool_put(block->colstate, block->colstate_size);
		block->colstate = NULL;
		block->colstate_size = 0;
		block->colstate = wc_pool_get(&need);
		block->colstate_size = need;
	}
	return block->colstate;
}

/*
 * Read value page v of a decoded key page.  by_column: a page in column
 * layout is opened for lazy reads (wc_block_row_columns) and returned, if
 * the block can keep its state; otherwise, and for pages of rows, its
 * tuples are loaded into their place and NULL is returned.
 */
static WcColumnsPage *
load_values(WcBlock *block, int v, bool by_column)
{
	BlockNumber blkno = block->values[v].blkno;
	Buffer		buf;
	Page		page;
	WcPageOpaqueData op = {0};
	const char *problem;
	WcColumnsPage *cp = NULL;
	WcDictRef	dict = block_dict(block);	/* the run's dictionary, if known */

	if (blkno == WC_META_BLOCK || blkno == InvalidBlockNumber)
		corrupt(block->rel, block->blkno, block->run_id, "invalid value page reference");
	if (block->hinted != WC_META_BLOCK)
	{
		block->hints_used += (blkno == block->hinted);
		block->hinted = WC_META_BLOCK;
	}
	buf = ReadBufferExtended(block->rel, MAIN_FORKNUM, blkno, RBM_NORMAL,
							 block->value_strategy ? block->value_strategy : block->strategy);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	problem = check_run_page(page, WC_PAGE_RUN_VALUES, block->run_id, &op,
							 wc_page_crc_covered());
	if (problem == NULL && by_column && (op.flags & WC_VALUES_COLUMNS))
	{
		char	   *state = column_state(block, PageGetContents(page), RunPagePayloadLen(page));

		if (op.aux != block->values[v].rawsize)
			problem = "value page does not match its reference";
		else if (state)
			cp = wc_columns_open(state, block->colstate_size, PageGetContents(page),
								 RunPagePayloadLen(page), op.aux, block->point, &dict,
								 &problem);
	}
	if (problem == NULL && cp == NULL && dict.d.len == 0 &&
		(op.flags & WC_VALUES_COLUMNS) &&
		wc_columns_use_frames(PageGetContents(page), RunPagePayloadLen(page)))
	{
		/*
		 * A key page read without its run's reader (a fetch by tid) does not
		 * know where the run's dictionary is: the manifest says, read with
		 * the page's copy, not under its lock.
		 */
		PGAlignedBlock copy;
		Size		len = RunPagePayloadLen(page);

		memcpy(copy.data, PageGetContents(page), len);
		UnlockReleaseBuffer(buf);
		buf = InvalidBuffer;
		if (!wc_run_dict_location(block->rel, block->run_id, &block->dict))
			problem = "column layout: a chunk in frames of a run no manifest lists";
		else
		{
			block->dict_run = block->run_id;
			problem = wc_decode_values(copy.data, len, &op, block, v);
		}
	}
	else if (problem == NULL && cp == NULL)
		problem = wc_decode_values(PageGetContents(page), RunPagePayloadLen(page), &op, block, v);
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
	if (problem)
		corrupt(block->rel, blkno, block->run_id, problem);
	block->values_read++;
	return cp;
}

/*
 * The ring of buffers a point read takes value pages into when the table's
 * runs are larger than the buffer pool (see wc_merge_begin_with).  Their
 * value pages cannot stay cached there anyway: read into ordinary buffers,
 * each one a lookup reads evicts a page the next lookup needs (a key, index
 * or bloom page, of which there are several times fewer).  Through
 * a small ring, as a sequential scan takes a large table, they leave the
 * rest of the pool alone.  One per backend.
 */
BufferAccessStrategy
wc_value_page_ring(void)
{
	static BufferAccessStrategy ring = NULL;

	if (ring == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		ring = GetAccessStrategy(BAS_BULKREAD);
		MemoryContextSwitchTo(old);
	}
	return ring;
}

/* The decoded block a row of it lies in (the address before its raw bytes). */
static inline WcBlock *
row_block(const WcRowHeader *row)
{
	char	   *raw = (char *) row - (Size) row->blockoff * MAXIMUM_ALIGNOF;
	WcBlock    *block = *(WcBlock **) (raw - RAW_HEADER);

	Assert(block->raw == raw);
	return block;
}

/*
 * Which of the block's value pages holds the row's tuple; its offset there.
 * The page found last is tried first: a read's rows come in order, most of
 * them in the page of the row before.
 */
static inline int
row_value_page(WcBlock *block, const WcRowHeader *row, uint32 *off)
{
	Size		at = (const char *) row + row->tupoff - block->raw;
	int			v = block->value_hint;

	if (at < block->value_off[v] || at - block->value_off[v] >= block->values[v].rawsize)
		for (v = 0; v < block->nvalues - 1 && at >= block->value_off[v] + block->values[v].rawsize; v++)
			;
	block->value_hint = v;
	*off = at - block->value_off[v];
	return v;
}

/* Which value page of a decoded block holds a row's tuple (-1: none). */
int
wc_block_row_value_page(WcBlock *block, const WcRowHeader *row)
{
	uint32		off;

	if (!(row->flags & WC_ROW_IN_BLOCK) || block->nvalues == 0)
		return -1;
	return row_value_page(block, row, &off);
}

/*
 * A row of a decoded block asks for its tuple: read the value page holding
 * it, unless that is done.  The row finds its block through the address
 * stored before the block's raw bytes.
 */
void
wc_block_load_tuple(WcRowHeader *row)
{
	WcBlock    *block = row_block(row);
	uint32		off;
	int			v = row_value_page(block, row, &off);

	if (!block->value_loaded[v])
	{
		if (block->rel == NULL)
			elog(ERROR, "widecol: value page %u of run %llu is not loaded",
				 block->values[v].blkno, (unsigned long long) block->run_id);
		(void) load_values(block, v, false);
	}
	row->flags &= ~WC_ROW_IN_BLOCK;	/* later asks go straight to it */
}

/*
 * A row of a decoded block whose tuple is still in its value page: if that
 * page is in column layout, open it for lazy reads (unless it is the page
 * the block has open) and return it, with the row's tuple's ordinal in it;
 * NULL if the page holds rows (it is then loaded as usual), or if the
 * block cannot keep the state (not a merge's pooled block).  Values read
 * from it stay valid until the block opens another value page this way: as
 * long as the row does (until the read's next row).
 */
WcColumnsPage *
wc_block_row_columns(WcRowHeader *row, int *ordinal)
{
	WcBlock    *block;
	uint32		off;
	int			v;

	if (!(row->flags & WC_ROW_IN_BLOCK))
		return NULL;			/* a copy, or its tuple is loaded */
	block = row_block(row);
	if (!block->poolable || block->rel == NULL)
		return NULL;
	v = row_value_page(block, row, &off);
	if (block->value_loaded[v])
		return NULL;
	if (block->cols == NULL || block->cols_blkno != block->values[v].blkno)
	{
		block->cols = load_values(block, v, true);
		if (block->cols == NULL)
			return NULL;		/* loaded as tuples */
		block->cols_blkno = block->values[v].blkno;
	}
	*ordinal = wc_columns_ordinal(block->cols, off);
	if (*ordinal < 0)
		corrupt(block->rel, block->cols_blkno, block->run_id,
				"column layout: no tuple where a row's tuple starts");
	return block->cols;
}

/*
 * Columns [from, upto) (0-based) of a row's tuple, from the page
 * wc_block_row_columns opened: those `skip` marks NULL, columns the tuple
 * was written without their defaults.  Returns the first column not
 * filled: upto, or an earlier one if the page's state has no room to
 * decode it (the caller reads the tuple instead).  A corrupt column is
 * reported as any damaged page is.
 */
int
wc_block_row_values(WcRowHeader *row, WcColumnsPage *cp, int ordinal, TupleDesc desc,
					const bool *skip, int from, int upto, Datum *values, bool *isnull)
{
	const char *problem;
	int			done = wc_columns_fetch_row(cp, ordinal, desc, skip, from, upto,
											values, isnull, &problem);

	if (problem)
	{
		WcBlock    *block = row_block(row);

		corrupt(block->rel, block->cols_blkno, block->run_id, problem);
	}
	return done;
}

/* Free (or give back to the pool) a block's buffers. */
void
wc_block_free(WcBlock *block)
{
	if (block->raw)
		buffer_put(block->raw - RAW_HEADER, RAW_HEADER + block->rawcap, block->raw_pooled);
	if (block->carry)
		buffer_put(block->carry, WC_MAX_RAW_BLOCK, block->carry_pooled);
	if (block->colstate)
		wc_pool_put(block->colstate, block->colstate_size);
	block->raw = NULL;
	block->carry = NULL;
	block->colstate = NULL;
	block->colstate_size = 0;
	block->cols = NULL;
	block->rawcap = 0;
}

/*
 * Run headers never change, and a run id is never reused within a storage
 * (relfilenode), so a backend keeps the headers it has read: a seek then
 * costs no header page per run.
 */
typedef struct HeaderKey
{
	RelFileNode node;
	uint64		run_id;
	BlockNumber header_block;
} HeaderKey;

typedef struct HeaderEntry
{
	HeaderKey	key;
	WcRunHeader hdr;
	WcRunDict	dict;
	bool		extent_read_ahead;	/* see read_ahead_extent */
} HeaderEntry;

static HTAB *header_cache = NULL;

#define HEADER_CACHE_MAX 4096

/* The header cache's key of a run. */
static HeaderKey
header_key(Relation rel, const WcRunSummary *summary)
{
	HeaderKey	key;

	memset(&key, 0, sizeof(key));
	key.node = rel->rd_node;
	key.run_id = summary->run_id;
	key.header_block = summary->header_block;
	return key;
}

/*
 * A run's header page (payload of len bytes) checked against the run it
 * should be: its header and where its dictionary is, or what is wrong.
 */
static const char *
parse_header(const char *payload, Size len, const WcRunSummary *summary,
			 WcRunHeader *hdr, WcRunDict *dict)
{
	if (len < sizeof(WcRunHeader))
		return "short run header";
	memcpy(hdr, payload, sizeof(WcRunHeader));
	if (hdr->magic != WC_RUN_MAGIC || hdr->run_id != summary->run_id)
		return "bad run header";
	if (hdr->version < WC_RUN_VERSION_MIN || hdr->version > WC_RUN_VERSION)
		return "run written in another format version (dump and restore the table)";
	if (!wc_run_header_dict(payload, len, hdr, dict))
		return "invalid dictionary in the run header";
	return NULL;
}

/* The run's header entry, from the cache or read and checked on a miss. */
static HeaderEntry *
cached_header(Relation rel, WcRunSummary *summary, BufferAccessStrategy strategy)
{
	PGAlignedBlock payload;
	WcPageOpaqueData op;
	Size		len;
	HeaderKey	key = header_key(rel, summary);
	HeaderEntry *e;
	WcRunHeader hdr;
	WcRunDict	dict;
	const char *problem;
	bool		found;

	if (header_cache == NULL || hash_get_num_entries(header_cache) >= HEADER_CACHE_MAX)
	{
		HASHCTL		ctl;

		if (header_cache)
			hash_destroy(header_cache);
		ctl.keysize = sizeof(HeaderKey);
		ctl.entrysize = sizeof(HeaderEntry);
		ctl.hcxt = TopMemoryContext;
		header_cache = hash_create("widecol run headers", 256, &ctl,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	e = hash_search(header_cache, &key, HASH_FIND, NULL);
	if (e)
		return e;

	len = read_run_page(rel, summary->header_block, WC_PAGE_RUN_HEADER,
						summary->run_id, payload.data, &op, strategy);
	if ((problem = parse_header(payload.data, len, summary, &hdr, &dict)) != NULL)
		corrupt(rel, summary->header_block, summary->run_id, problem);
	e = hash_search(header_cache, &key, HASH_ENTER, &found);
	e->hdr = hdr;
	e->dict = dict;
	e->extent_read_ahead = false;
	return e;
}

static void
read_header(WcRunReader *r)
{
	HeaderEntry *e = cached_header(r->rel, r->summary, r->strategy);

	r->hdr = e->hdr;
	r->block.dict = e->dict;
	r->block.dict_run = e->hdr.run_id;
}

/*
 * Where run run_id's dictionary is, for a key page read without its run's
 * reader (a version fetched by its tid, ANALYZE's sample): from the run's
 * header, found in the manifest the statement sees (or, failing that, the
 * committed one).  False if no manifest lists the run.  Once per run and
 * backend: the dictionary is then kept (storage/dictionary.c).
 */
bool
wc_run_dict_location(Relation rel, uint64 run_id, WcRunDict *out)
{
	Snapshot	snaps[2] = {ActiveSnapshotSet() ? GetActiveSnapshot() : NULL, SnapshotSelf};

	for (int s = 0; s < 2; s++)
	{
		WcMetaData	meta;
		WcManifest *m;

		if (snaps[s] == NULL)
			continue;
		wc_merge_read_manifest(rel, snaps[s], &meta, &m);
		for (int i = 0; i < m->nruns; i++)
			if (m->runs[i].run_id == run_id)
			{
				WcRunReader r;

				wc_run_reader_open(&r, rel, &m->runs[i], NULL);
				*out = r.block.dict;
				pfree(r.data_blocks);
				return true;
			}
	}
	return false;
}

#define BORROW_RUNS 4				/* runs wc_newest_run_dict looks at */

/*
 * The newest of the table's runs that has a dictionary, for a flush or a
 * bulk write to borrow (wc_dict_builder_borrow): among the BORROW_RUNS
 * newest runs the statement sees (or the committed ones), so a table whose
 * recent runs have none goes without rather than reading every header.
 * A header that cannot be read is passed over: its damage is for its
 * readers to report, not for a write.  False if there is none.
 */
bool
wc_newest_run_dict(Relation rel, WcDictRef *out)
{
	WcMetaData	meta;
	WcManifest *m;
	int			looked = 0;

	wc_merge_read_manifest(rel, ActiveSnapshotSet() ? GetActiveSnapshot() : SnapshotSelf,
						   &meta, &m);
	/* the manifest lists runs by id, and ids grow */
	for (int i = m->nruns - 1; i >= 0 && looked < BORROW_RUNS; i--, looked++)
	{
		WcRunSummary *run = &m->runs[i];
		HeaderKey	key = header_key(rel, run);
		HeaderEntry *e = NULL;
		WcRunDict	d;

		if (header_cache)
			e = hash_search(header_cache, &key, HASH_FIND, NULL);
		if (e)
			d = e->dict;
		else
		{
			PGAlignedBlock payload;
			WcPageOpaqueData op;
			Size		len = 0;
			WcRunHeader hdr;

			if (wc_read_run_page_soft(rel, run->header_block, WC_PAGE_RUN_HEADER, run->run_id,
									  payload.data, &len, &op, NULL) != NULL ||
				parse_header(payload.data, len, run, &hdr, &d) != NULL)
				continue;
		}
		if (d.len > 0)
		{
			out->rel = rel;
			out->run_id = run->run_id;
			out->d = d;
			return true;
		}
	}
	return false;
}

/*
 * Where a run's dictionary is (format 9: after the key ranges of its
 * header page; none before).  False if the header cannot say.
 */
bool
wc_run_header_dict(const char *payload, Size len, const WcRunHeader *hdr, WcRunDict *out)
{
	Size		off = sizeof(WcRunHeader) + (Size) hdr->min_key_len + hdr->max_key_len;
	uint32		rlen;

	memset(out, 0, sizeof(*out));
	if (hdr->version < WC_RUN_VERSION_DICT)
		return true;
	if (off + sizeof(rlen) > len)
		return false;
	memcpy(&rlen, payload + off, sizeof(rlen));
	off += sizeof(rlen) + (Size) rlen;
	if (off + sizeof(WcRunDict) > len)
		return false;
	memcpy(out, payload + off, sizeof(WcRunDict));
	return out->len <= WC_DICT_MAX_BYTES &&
		out->npages == (out->len + WC_PAYLOAD_CAPACITY - 1) / WC_PAYLOAD_CAPACITY;
}

/*
 * Page d of a run's value directory: its entries into out (room for
 * WC_VALUEDIR_ENTRIES) and their count into *n.  NULL, or what is wrong.
 */
const char *
wc_read_value_dir_soft(Relation rel, const WcRunHeader *hdr, uint32 d,
					   BlockNumber *out, uint32 *n)
{
	PGAlignedBlock payload;
	WcPageOpaqueData op;
	Size		len;
	const char *p = wc_read_run_page_soft(rel, hdr->valuedir_first + d, WC_PAGE_RUN_VALUEDIR,
										  hdr->run_id, payload.data, &len, &op, NULL);

	*n = 0;
	if (p)
		return p;
	if (op.count > WC_VALUEDIR_ENTRIES || op.count * sizeof(BlockNumber) > len)
		return "malformed value directory page";
	memcpy(out, payload.data, op.count * sizeof(BlockNumber));
	*n = op.count;
	return NULL;
}

typedef WcIndexEntry IndexEntry;

/*
 * The index entry at *pos of a payload of len bytes, (child, keylen, key):
 * into *e, *pos moved past it; false if it runs past the payload.
 */
static bool
index_entry_at(const char *payload, Size len, Size *pos, WcIndexEntry *e)
{
	if (*pos + sizeof(uint32) + sizeof(uint16) > len)
		return false;
	memcpy(&e->child, payload + *pos, sizeof(uint32));
	memcpy(&e->keylen, payload + *pos + sizeof(uint32), sizeof(uint16));
	e->key = payload + *pos + sizeof(uint32) + sizeof(uint16);
	e->hint = NULL;
	*pos += sizeof(uint32) + sizeof(uint16) + e->keylen;
	return *pos <= len;
}

/* Parse an index page's payload into entries; false if it is malformed. */
bool
wc_parse_index_soft(const char *payload, Size len, uint32 count, WcIndexEntry *out)
{
	Size		pos = 0;

	if (count > WC_MAX_INDEX_ENTRIES)
		return false;
	for (uint32 i = 0; i < count; i++)
		if (!index_entry_at(payload, len, &pos, &out[i]))
			return false;
	return true;
}

/*
 * The settled row counts of a leaf page's entries (WC_LEAF_COUNTS) into
 * counts, all WC_UNSETTLED if the page has none.  NULL, or what is wrong.
 */
const char *
wc_leaf_counts_soft(const char *payload, Size len, uint32 count,
					const WcIndexEntry *entries, uint16 flags, uint32 *counts)
{
	Size		end = count == 0 ? 0 :
		(entries[count - 1].key - payload) + entries[count - 1].keylen;

	if (!(flags & WC_LEAF_COUNTS))
	{
		for (uint32 i = 0; i < count; i++)
			counts[i] = WC_UNSETTLED;
		return NULL;
	}
	if ((flags & WC_LEAF_HINTS) ? end + sizeof(uint32) * count > len :
		end + sizeof(uint32) * count != len)
		return "malformed leaf counts";
	memcpy(counts, payload + end, sizeof(uint32) * count);
	for (uint32 i = 0; i < count; i++)
		if (counts[i] != WC_UNSETTLED && (counts[i] == 0 || counts[i] > WC_MAX_ROWS_PER_BLOCK))
			return "invalid leaf count";
	return NULL;
}

/*
 * The value hints of a leaf page's entries (WC_LEAF_HINTS, after the
 * entries and their counts) into entries[i].hint, left NULL if the page
 * has none.  NULL, or what is wrong.
 */
const char *
wc_leaf_hints_soft(const char *payload, Size len, uint32 count,
				   WcIndexEntry *entries, uint16 flags)
{
	Size		pos = count == 0 ? 0 :
		(entries[count - 1].key - payload) + entries[count - 1].keylen;

	if (!(flags & WC_LEAF_HINTS))
		return NULL;
	if (flags & WC_LEAF_COUNTS)
		pos += sizeof(uint32) * count;
	for (uint32 i = 0; i < count; i++)
	{
		int			n;

		if (pos >= len)
			return "malformed value hints";
		entries[i].hint = payload + pos;
		n = (unsigned char) payload[pos];
		if (n > WC_MAX_VALUE_REFS)
			return "malformed value hints";
		pos += 1 + sizeof(BlockNumber) * n;
		for (int j = 1; j < n; j++)
		{
			if (pos >= len)
				return "malformed value hints";
			pos += 1 + (unsigned char) payload[pos];
		}
		if (pos > len)
			return "malformed value hints";
	}
	return pos == len ? NULL : "malformed value hints";
}

/* The value pages of a hint (WC_MAX_VALUE_REFS room) into blocks; how many. */
int
wc_hint_pages(const char *hint, BlockNumber *blocks)
{
	int			n = (unsigned char) hint[0];

	memcpy(blocks, hint + 1, sizeof(BlockNumber) * n);
	return n;
}

/*
 * The value page a hint says holds the tuple of key, if the key page has
 * it: the last page whose separator is <= key (InvalidBlockNumber: none).
 */
BlockNumber
wc_hinted_value_page(const char *hint, const char *key, int keylen)
{
	int			n = (unsigned char) hint[0];
	const char *sep = hint + 1 + sizeof(BlockNumber) * n;
	int			chosen = 0;
	BlockNumber blk;

	if (n == 0)
		return InvalidBlockNumber;
	for (int j = 1; j < n; j++)
	{
		int			len = (unsigned char) sep[0];

		if (len == 0 || wc_compare_keys(sep + 1, len, key, keylen) > 0)
			break;
		chosen = j;
		sep += 1 + len;
	}
	memcpy(&blk, hint + 1 + sizeof(BlockNumber) * chosen, sizeof(BlockNumber));
	return blk;
}

static int
parse_index(Relation rel, BlockNumber blk, uint64 run_id, const char *payload,
			Size len, uint32 count, IndexEntry *out)
{
	if (!wc_parse_index_soft(payload, len, count, out))
		corrupt(rel, blk, run_id, "malformed index page");
	return (int) count;
}

/*
 * May reads of rel ask the kernel for pages ahead (value hints, read-ahead
 * of a run's extent, a scan's key pages)?  Not where effective_io_concurrency
 * (of the relation's tablespace) is 0, PostgreSQL's switch for prefetching.
 */
static bool
may_prefetch(Relation rel)
{
	return get_tablespace_io_concurrency(rel->rd_rel->reltablespace) > 0;
}

/*
 * A bloom page a probe found missing from shared buffers, or an index page
 * a point read did:
 * the backend's first lookups after other reads turned shared buffers over
 * (a new connection after a report, another table's traffic) would find
 * the run's other bloom and index pages gone too, and read them from
 * storage one lookup at a time: the first thousands of lookups of a
 * 16M-key table waited for two or three such reads each (about 4,000 bloom
 * pages and 150 index pages in 5 runs).  They lie one after another in the
 * run's extent (header, index, bloom, value directory, dictionary), so the
 * kernel is asked for the whole extent at once (wc_read_ahead: a few large
 * reads), once per run and backend; the reads after it find their pages in
 * the page cache.  Not for an extent larger than a quarter of shared
 * buffers, whose pages could not all stay there anyway.
 */
static void
read_ahead_extent(WcRunReader *r)
{
	HeaderEntry *e = cached_header(r->rel, r->summary, r->strategy);

	if (e->extent_read_ahead)
		return;
	e->extent_read_ahead = true;
	if (r->hdr.extent_pages > (uint32) NBuffers / 4 || !may_prefetch(r->rel))
		return;
	wc_read_ahead(r->rel, r->summary->header_block, r->hdr.extent_pages);
	r->extent_read_ahead = true;
}

/* Reads from storage (or the page cache) this backend has done so far. */
static inline int64
blocks_read_so_far(void)
{
	return pgBufferUsage.shared_blks_read + pgBufferUsage.local_blks_read;
}

/*
 * The entries of index page blk, parsed once and kept with the page in the
 * cache (their keys point into it): every lookup descends through the same
 * few index pages, and copying each out of the cache and walking its few
 * hundred entries again was about 1.5 µs of a lookup.  Valid until the
 * cache is used again.
 */
static const IndexEntry *
cached_index(WcRunReader *r, BlockNumber blk, WcPageOpaqueData *op, int *n)
{
	int64		reads = blocks_read_so_far();
	CachedPage *c = cached_page(r->rel, blk, WC_PAGE_RUN_INDEX, r->hdr.run_id, r->strategy);

	if (r->block.point && blocks_read_so_far() != reads)
		read_ahead_extent(r);

	if (c->entries == NULL)
	{
		Size		size = sizeof(IndexEntry) * Max(c->op.count, 1);
		IndexEntry *entries = MemoryContextAlloc(wc_cache_memory(page_cache), size);
		const char *problem = NULL;

		if (!wc_parse_index_soft(c->payload, c->len, c->op.count, entries))
			problem = "malformed index page";
		else if (c->op.aux == 0)
			problem = wc_leaf_hints_soft(c->payload, c->len, c->op.count, entries,
										 c->op.flags);
		if (problem)
		{
			pfree(entries);
			corrupt(r->rel, blk, r->hdr.run_id, problem);
		}
		c->entries = entries;
		wc_cache_account(page_cache, c, sizeof(CachedPage) + size);
		wc_cache_shrink(page_cache, c);
	}
	*op = c->op;
	*n = (int) c->op.count;
	return c->entries;
}

/* Copy the data blocks of entries [from, from + n) of the loaded leaf. */
static void
hold_children(WcRunReader *r, const IndexEntry *entries, int from, int n)
{
	if (n > r->data_cap)
	{
		r->data_blocks = repalloc(r->data_blocks, sizeof(BlockNumber) * n);
		r->data_cap = n;
	}
	for (int i = 0; i < n; i++)
		r->data_blocks[i] = entries[from + i].child;
	r->data_first = from;
	r->data_held = n;
}

/*
 * Make leaf page blk, its n entries parsed, the reader's list of data
 * blocks: all of them (all: a scan, which reads them in turn), or as a
 * read gets to them (a seek, whose entries are the cached page's, reads a
 * page or two of the few hundred: copying every entry's block number cost
 * a memory-bound lookup about a microsecond).
 */
static void
set_leaf(WcRunReader *r, BlockNumber blk, const WcPageOpaqueData *op,
		 const IndexEntry *entries, int n, bool all)
{
	if (op->aux != 0)
		corrupt(r->rel, blk, r->hdr.run_id, "expected a leaf index page");
	r->ndata = n;
	r->data_pos = 0;
	r->prefetched_to = 0;
	r->next_leaf = blk + 1;
	r->data_held = 0;
	if (all)
		hold_children(r, entries, 0, n);
}

/*
 * The data block of entry pos of the loaded leaf, for a read going forward
 * or backward: past the entries held, the next ones in that direction are
 * copied from the cached leaf page.
 */
#define LEAF_WINDOW 32			/* > WC_PREFETCH_DISTANCE */

static inline BlockNumber
leaf_child(WcRunReader *r, int pos, bool backward)
{
	if (unlikely(pos < r->data_first || pos >= r->data_first + r->data_held))
	{
		BlockNumber leaf = r->next_leaf - 1;
		WcPageOpaqueData op;
		int			n;
		const IndexEntry *entries = cached_index(r, leaf, &op, &n);
		/* forward from the read's position: prefetching looks ahead of it */
		int			from = backward ? Max(pos - LEAF_WINDOW + 1, 0) :
			Min(pos, Max(r->data_pos, 0));

		if (n != r->ndata || pos < 0 || pos >= n)
			corrupt(r->rel, leaf, r->hdr.run_id, "malformed index page");
		hold_children(r, entries, from, Min(LEAF_WINDOW, n - from));
	}
	return r->data_blocks[pos - r->data_first];
}

/* Load leaf page `blk` into the reader's list of data blocks. */
static void
load_leaf(WcRunReader *r, BlockNumber blk, int *nentries_out, IndexEntry *entries,
		  char *payload)
{
	WcPageOpaqueData op;
	Size		len = read_run_page(r->rel, blk, WC_PAGE_RUN_INDEX, r->hdr.run_id,
									payload, &op, r->strategy);
	int			n = parse_index(r->rel, blk, r->hdr.run_id, payload, len, op.count, entries);

	set_leaf(r, blk, &op, entries, n, true);
	*nentries_out = n;
}

void
wc_run_reader_open(WcRunReader *r, Relation rel, WcRunSummary *summary,
				   BufferAccessStrategy strategy)
{
	memset(r, 0, sizeof(WcRunReader));
	r->rel = rel;
	r->summary = summary;
	r->strategy = strategy;
	read_header(r);
	r->data_blocks = palloc(sizeof(BlockNumber));
	r->data_cap = 1;
	r->next_leaf = r->hdr.leaf_first;
	r->block.run_id = r->hdr.run_id;
}

/*
 * A point read of a run whose value pages come from storage (they go
 * through the ring: see wc_merge_begin_with) would read the key page, then
 * the value page it names, one wait after the other.  The leaf's hint
 * (run format 13) names the value page first: the kernel is asked for it
 * (PrefetchBuffer) before the key page is read, so both reads are in
 * flight at once and the second finds its page in the page cache.
 */
static void
prefetch_hinted(WcRunReader *r, const IndexEntry *e, const char *key, int keylen)
{
	BlockNumber blk;

	if (e->hint == NULL || !r->block.point || r->block.value_strategy == NULL ||
		!may_prefetch(r->rel))
		return;
	blk = wc_hinted_value_page(e->hint, key, keylen);
	if (blk == InvalidBlockNumber || blk == WC_META_BLOCK)
		return;
	(void) PrefetchBuffer(r->rel, MAIN_FORKNUM, blk);
	r->block.hinted = blk;
	r->block.values_prefetched++;
}

/*
 * Descend the run index to a leaf entry and load that leaf.  Forward: the
 * last entry whose first key is < key (versions of a key may straddle
 * pages), or the one whose first key is key in a run of one version per
 * partition.  Backward: the last entry whose first key, cut to keylen bytes, is
 * <= key (key NULL: the last entry).
 */
static void
descend(WcRunReader *r, const char *key, int keylen, bool backward)
{
	BlockNumber blk = r->hdr.index_root;
	int			chosen = 0;
	bool		one_version = r->hdr.st.nrows == r->hdr.st.npartitions;

	for (uint32 level = r->hdr.index_height; level >= 1; level--)
	{
		WcPageOpaqueData op;
		int			n,
					lo,
					hi;
		const IndexEntry *entries = cached_index(r, blk, &op, &n);

		if (level == 1)
			set_leaf(r, blk, &op, entries, n, false);
		/* binary search: the first entry past the target */
		lo = 0;
		hi = n;
		while (key && lo < hi)
		{
			int			mid = (lo + hi) / 2;
			int			c = backward ?
				wc_compare_keys(entries[mid].key, Min(entries[mid].keylen, keylen), key, keylen) :
				wc_compare_keys(entries[mid].key, entries[mid].keylen, key, keylen);

			if (backward ? c <= 0 : c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		chosen = key ? Max(lo - 1, 0) : Max(n - 1, 0);
		/*
		 * The key is the next entry's first: in a run with one version
		 * per partition (so per key) the page before holds only smaller
		 * keys, and the read starts on that entry's page, not one page
		 * early (a key page read for nothing: the first key of each of a
		 * run's key pages, about 1% of lookups of uuid keys).
		 */
		if (key && !backward && one_version && lo < n &&
			wc_compare_keys(entries[lo].key, entries[lo].keylen, key, keylen) == 0)
			chosen = lo;
		if (level > 1)
			blk = entries[chosen].child;
		else if (key && !backward && n > 0)
			prefetch_hinted(r, &entries[chosen], key, keylen);
	}
	r->data_pos = chosen;
	r->block_valid = false;
}

/*
 * The first row of the block just read after a seek: forward, the first
 * whose key is >= the seek key; backward, the last whose key cut to the
 * seek key's length is <= it (-1: none).  Binary search over the block's
 * offsets: a key page holds a few hundred versions, and the rows before
 * these would only be skipped one by one.
 */
static int
seek_in_block(WcRunReader *r, bool backward)
{
	int			lo = r->block.first,
				hi = r->block.nrows;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;
		WcRowHeader *row = WcBlockRow(&r->block, mid);
		int			c = backward ?
			wc_compare_keys(WcRowKey(row), Min(row->keylen, r->seek_len), r->seek_key, r->seek_len) :
			wc_compare_keys(WcRowKey(row), row->keylen, r->seek_key, r->seek_len);

		if (backward ? c <= 0 : c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	r->seek_key = NULL;
	return backward ? lo - 1 : lo;
}

/* Position before the first version whose key is >= key. */
void
wc_run_reader_seek(WcRunReader *r, const char *key, int keylen)
{
	descend(r, key, keylen, false);
	r->seek_key = key;
	r->seek_len = keylen;
}

/*
 * A reader past its eighth key page is scanning: if it reads keys only (a
 * count, a report on partition-key columns, a retention DELETE), it asks
 * the kernel for the key pages ahead (PrefetchBuffer), since value pages
 * lie between them in the file and the kernel's own read-ahead does not
 * see a sequence.  A reader that also reads the value pages reads the file
 * almost in order, which the kernel's read-ahead follows, so it prefetches
 * nothing: each prefetch is a system call, pure cost when the pages are in
 * the page cache (a report on value columns over 5M rows through a ring:
 * 3-4% of its time; from a cold page cache it was not faster either).  A
 * seek, which reads a few pages, prefetches nothing either: the leaf's
 * next entries are other partitions' pages.
 */
#define WC_PREFETCH_AFTER		8
#define WC_PREFETCH_DISTANCE	16

static void
prefetch_ahead(WcRunReader *r)
{
#ifdef USE_PREFETCH
	bool		keys_only = r->block.values_read == r->values_seen;

	r->values_seen = r->block.values_read;
	if (r->blocks_read < WC_PREFETCH_AFTER || !keys_only)
		return;
	if (r->prefetched_to == 0 && !may_prefetch(r->rel))
	{
		r->prefetched_to = INT_MAX;	/* asked once a leaf: none for its pages */
		return;
	}
	r->prefetched_to = Max(r->prefetched_to, r->data_pos);
	while (r->prefetched_to < r->ndata && r->prefetched_to < r->data_pos + WC_PREFETCH_DISTANCE)
	{
		PrefetchBuffer(r->rel, MAIN_FORKNUM, leaf_child(r, r->prefetched_to, false));
		r->prefetched_to++;
	}
#endif
}

/*
 * Does the next key page start past hi_key?  Then no key of it or after it
 * is in range: a lookup whose partition ends a key page stops without
 * reading the next one (about one lookup in 150 did, a read from disk in
 * data larger than memory).
 */
static bool
past_hi(WcRunReader *r)
{
	BlockNumber leaf = r->next_leaf - 1;	/* the leaf loaded last */
	WcPageOpaqueData op;
	const IndexEntry *entries;
	int			n;

	if (r->hi_key == NULL || r->seek_key != NULL || r->data_pos >= r->ndata)
		return false;
	entries = cached_index(r, leaf, &op, &n);
	if (r->data_pos >= n)
		corrupt(r->rel, leaf, r->hdr.run_id, "malformed index page");
	return wc_compare_keys(entries[r->data_pos].key, Min(entries[r->data_pos].keylen, r->hi_len),
						   r->hi_key, r->hi_len) > 0;
}

WcRowHeader *
wc_run_reader_next(WcRunReader *r, ItemPointer tid)
{
	ReadBounds	bounds;

	for (;;)
	{
		if (r->block_valid && r->row_pos < r->block.nrows)
		{
			WcRowHeader *row = WcBlockRow(&r->block, r->row_pos);

			ItemPointerSet(tid, r->block.blkno, r->row_pos + 1);
			r->row_pos++;
			return row;
		}
		if (r->block_valid && r->block.cursor.pending)
		{
			block_more(r);
			continue;
		}
		if (r->block_valid && r->block.partial)
		{
			/* its last row laid out is past hi: so is the rest of the run */
			r->data_pos = r->ndata;
			r->next_leaf = r->hdr.leaf_first + r->hdr.nleaf_pages;
			return NULL;
		}
		if (r->data_pos >= r->ndata)
		{
			PGAlignedBlock payload;
			IndexEntry	entries[WC_MAX_INDEX_ENTRIES];
			int			n;

			if (r->next_leaf >= r->hdr.leaf_first + r->hdr.nleaf_pages)
				return NULL;
			load_leaf(r, r->next_leaf, &n, entries, payload.data);
			continue;
		}
		if (past_hi(r))
		{
			r->data_pos = r->ndata;
			r->next_leaf = r->hdr.leaf_first + r->hdr.nleaf_pages;
			return NULL;
		}
		CHECK_FOR_INTERRUPTS();
		prefetch_ahead(r);
		/* the rows a forward read looks at: from the key it seeks to hi */
		bounds.lo = r->seek_key;
		bounds.lolen = r->seek_len;
		bounds.hi = r->hi_key;
		bounds.hilen = r->hi_len;
		block_read(r->rel, leaf_child(r, r->data_pos, false), &r->block, r->strategy, &bounds);
		r->data_pos++;
		r->block_valid = true;
		r->blocks_read++;
		r->row_pos = r->seek_key ? seek_in_block(r, false) : 0;
	}
}

/*
 * Position for a backward read: after the last version whose key, cut to
 * keylen bytes, is <= key (key NULL: after the run's last version).  Blocks
 * whose first key is above that cannot hold such versions; the caller skips
 * the ones above it inside the chosen block.
 */
void
wc_run_reader_seek_last(WcRunReader *r, const char *key, int keylen)
{
	descend(r, key, keylen, true);
	r->seek_key = key;
	r->seek_len = keylen;
}

/* The version before the current one (backward reads), or NULL at the start. */
WcRowHeader *
wc_run_reader_prev(WcRunReader *r, ItemPointer tid)
{
	for (;;)
	{
		if (r->block_valid && r->row_pos >= 0)
		{
			if (unlikely(r->row_pos < r->block.first))
				elog(ERROR, "widecol: a backward read reached rows a forward seek did not lay out");
			ItemPointerSet(tid, r->block.blkno, r->row_pos + 1);
			return WcBlockRow(&r->block, r->row_pos--);
		}
		if (r->data_pos < 0)
		{
			PGAlignedBlock payload;
			IndexEntry	entries[WC_MAX_INDEX_ENTRIES];
			int			n;

			/* next_leaf is one past the loaded leaf: load the one before it */
			if (r->next_leaf <= r->hdr.leaf_first + 1)
				return NULL;
			load_leaf(r, r->next_leaf - 2, &n, entries, payload.data);
			r->data_pos = n - 1;
			continue;
		}
		CHECK_FOR_INTERRUPTS();
		wc_block_read(r->rel, leaf_child(r, r->data_pos, true), &r->block, r->strategy);
		r->data_pos--;
		r->block_valid = true;
		r->blocks_read++;
		r->row_pos = r->seek_key ? seek_in_block(r, true) : r->block.nrows - 1;
	}
}

/*
 * Up to `want` keys splitting the run into parts of about equal size: the
 * first keys of evenly spaced data blocks, from the leaf index pages (for
 * dividing a parallel scan into key ranges).  Returns how many were stored:
 * a run of fewer key blocks than `want` + 1 is split at every block.
 */
int
wc_run_split_keys(WcRunReader *r, int want, StringInfo *out)
{
	PGAlignedBlock payload;
	IndexEntry	entries[WC_MAX_INDEX_ENTRIES];
	int64		seen = 0;
	int			got = 0;
	int64		nblocks = r->hdr.ndata_pages - r->hdr.nvalue_pages;
	int64		step = Max(nblocks / (want + 1), 1);

	if (nblocks < 2)
		return 0;
	for (uint32 leaf = 0; leaf < r->hdr.nleaf_pages && got < want; leaf++)
	{
		int			n;

		load_leaf(r, r->hdr.leaf_first + leaf, &n, entries, payload.data);
		for (int i = 0; i < n && got < want; i++, seen++)
			if (seen > 0 && seen % step == 0)
			{
				out[got] = makeStringInfo();
				appendBinaryStringInfo(out[got], entries[i].key, entries[i].keylen);
				got++;
			}
	}
	r->next_leaf = r->hdr.leaf_first;
	r->ndata = r->data_pos = 0;
	return got;
}

/* Is key before lo, or after hi (a prefix)?  A NULL bound is open. */
static bool
key_below_lo(const char *key, int keylen, const char *lo, int lolen)
{
	return lo && wc_compare_keys(key, keylen, lo, lolen) < 0;
}

static bool
key_above_hi(const char *key, int keylen, const char *hi, int hilen)
{
	return hi && wc_compare_keys(key, Min(keylen, hilen), hi, hilen) > 0;
}

/*
 * Rows in [lo, hi] of a settled key page at an end of the range (decoded,
 * keys only).
 */
static int64
count_end_page(WcRunReader *r, BlockNumber blk, const char *lo, int lolen,
			   const char *hi, int hilen)
{
	int64		n = 0;

	r->block_valid = false;
	wc_block_read(r->rel, blk, &r->block, r->strategy);
	r->blocks_read++;
	for (int i = 0; i < r->block.nrows; i++)
	{
		WcRowHeader *row = WcBlockRow(&r->block, i);

		if (!key_below_lo(WcRowKey(row), row->keylen, lo, lolen) &&
			!key_above_hi(WcRowKey(row), row->keylen, hi, hilen))
			n++;
	}
	return n;
}

/*
 * How many rows every snapshot sees in [lo, hi] of this run, if all of its
 * key pages there are settled (WC_LEAF_COUNTS); -1 if one is not.  A page
 * wholly inside the range (its first key >= lo, the next page's first key
 * <= hi) counts by its leaf entry, unread; the pages at the two ends are
 * decoded.  A partition delete counts the rows it deletes this way
 * (src/README.md, "Range tombstones").  The caller makes sure no other
 * source holds versions there.  Leaves the reader unpositioned.
 */
int64
wc_run_count_settled(WcRunReader *r, const char *lo, int lolen, const char *hi, int hilen)
{
	PGAlignedBlock payload;
	IndexEntry	entries[WC_MAX_INDEX_ENTRIES];
	uint32		counts[WC_MAX_INDEX_ENTRIES];
	BlockNumber last_leaf = r->hdr.leaf_first + r->hdr.nleaf_pages;
	BlockNumber leaf = r->hdr.leaf_first;
	int			first = 0;
	BlockNumber page = InvalidBlockNumber;	/* the page waiting for its end */
	uint32		page_count = 0;
	StringInfoData pagekey;		/* its first key */
	int64		total = 0;

	if (lo)
	{
		descend(r, lo, lolen, false);
		leaf = r->next_leaf - 1;
		first = r->data_pos;
	}
	initStringInfo(&pagekey);
	for (; leaf < last_leaf; leaf++, first = 0)
	{
		WcPageOpaqueData op;
		Size		len = read_run_page_cached(r->rel, leaf, WC_PAGE_RUN_INDEX, r->hdr.run_id,
											   payload.data, &op, r->strategy);
		int			n = parse_index(r->rel, leaf, r->hdr.run_id, payload.data, len,
									op.count, entries);
		const char *problem;

		if (!(op.flags & WC_LEAF_COUNTS))
			return -1;			/* written before leaves had counts */
		problem = wc_leaf_counts_soft(payload.data, len, n, entries, op.flags, counts);
		if (problem)
			corrupt(r->rel, leaf, r->hdr.run_id, problem);
		for (int i = first; i < n; i++)
		{
			bool		past = key_above_hi(entries[i].key, entries[i].keylen, hi, hilen);

			if (page != InvalidBlockNumber)
			{
				if (page_count == WC_UNSETTLED)
					return -1;
				if (!past && !key_below_lo(pagekey.data, pagekey.len, lo, lolen))
					total += page_count;
				else
					total += count_end_page(r, page, lo, lolen, hi, hilen);
			}
			if (past)
				return total;
			page = entries[i].child;
			page_count = counts[i];
			resetStringInfo(&pagekey);
			appendBinaryStringInfo(&pagekey, entries[i].key, entries[i].keylen);
			CHECK_FOR_INTERRUPTS();
		}
	}
	if (page == InvalidBlockNumber)
		return total;
	if (page_count == WC_UNSETTLED)
		return -1;
	return total + count_end_page(r, page, lo, lolen, hi, hilen);
}

/*
 * Probe a bloom page of checked blocks (run format 7) where it lies in
 * shared buffers: the page header and the one block the key probes are
 * checked, no page is copied.  Every backend probes the same buffers, which
 * stay hot there; a backend-local copy (the cache above) went cold in
 * shared buffers and was read from disk again by each new connection.
 */
static bool
probe_bloom_block(Relation rel, WcRunReader *r, BlockNumber blk, uint64 hash)
{
	int64		reads = blocks_read_so_far();
	Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blk, RBM_NORMAL, r->strategy);
	Page		page;
	WcPageOpaqueData op;
	const char *problem;
	bool		found = true;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	problem = check_run_page_header(page, WC_PAGE_RUN_BLOOM, r->hdr.run_id, &op);
	/* the block's CRC, unless PostgreSQL's data checksum covered the page */
	if (problem == NULL)
		problem = wc_bloom_block_problem(PageGetContents(page), RunPagePayloadLen(page), hash,
										 !wc_page_crc_covered());
	if (problem == NULL)
		found = wc_bloom_test(PageGetContents(page), hash, true);
	UnlockReleaseBuffer(buf);
	if (problem)
		corrupt(rel, blk, r->hdr.run_id, problem);
	if (blocks_read_so_far() != reads)
		read_ahead_extent(r);
	return found;
}

bool
wc_run_may_contain_partition(Relation rel, WcRunReader *r, const char *pk, int pklen)
{
	WcPageOpaqueData op;
	Size		len;
	uint64		hash;

	uint32		page;
	bool		blocked = WcRunBloomBlocked(&r->hdr);

	if (r->hdr.nbloom_pages == 0 || pklen == 0)
		return true;
	hash = wc_bloom_hash(pk, pklen);
	page = wc_bloom_page_for(r->hdr.nbloom_pages, hash);
	if (r->bloom)
		return wc_bloom_test(r->bloom + (Size) page * BLCKSZ, hash, blocked);
	if (blocked)
		return probe_bloom_block(rel, r, r->hdr.bloom_first + page, hash);
	/* tested in the cache: a bloom probe copies no page */
	return wc_bloom_test(cached_run_page(rel, r->hdr.bloom_first + page, WC_PAGE_RUN_BLOOM,
										 r->hdr.run_id, &op, &len, r->strategy), hash, false);
}

/*
 * Read the run's whole bloom filter once, its pages' payloads one after
 * another (BLCKSZ apart), each checked: wc_run_may_contain_partition then
 * probes it in memory, for probing many partitions in a row
 * (wc_keys_may_exist).  The caller pfrees r->bloom.
 */
void
wc_run_bloom_load(Relation rel, WcRunReader *r)
{
	WcPageOpaqueData op;

	if (r->hdr.nbloom_pages == 0)
		return;
	r->bloom = palloc_extended((Size) r->hdr.nbloom_pages * BLCKSZ, MCXT_ALLOC_HUGE);
	for (uint32 i = 0; i < r->hdr.nbloom_pages; i++)
		read_run_page(rel, r->hdr.bloom_first + i, WC_PAGE_RUN_BLOOM, r->hdr.run_id,
					  r->bloom + (Size) i * BLCKSZ, &op, r->strategy);
}
