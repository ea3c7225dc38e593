/*
 * storage/run.h — sorted runs: format, writer, reader.
 */
#ifndef WC_STORAGE_RUN_H
#define WC_STORAGE_RUN_H

#include "storage/dictionary.h"
#include "storage/keypack.h"
#include "storage/manifest.h"
#include "storage/row.h"

/* ---------- runs (runwrite.c, runread.c) ---------- */
#define WC_MAX_ROWS_PER_BLOCK	4000
#define WC_MAX_RAW_BLOCK		(64 * 1024)

typedef struct WcRunHeader
{
	uint32		magic;
	uint32		version;
	uint64		run_id;
	int32		level;
	uint32		ndata_pages;
	BlockNumber index_root;
	uint32		index_height;	/* 1 = the root is a leaf */
	BlockNumber leaf_first;
	uint32		nleaf_pages;
	BlockNumber bloom_first;
	uint32		nbloom_pages;
	BlockNumber valuedir_first; /* every value page's block, in order */
	uint32		nvaluedir_pages;
	uint32		extent_pages;	/* header + index + bloom + value directory
								 * + dictionary */
	uint32		min_key_len;
	uint32		max_key_len;
	uint32		nvalue_pages;	/* of ndata_pages, those holding tuples */
	WcRunStats	st;
	/* min key, then max key follow; format 4: uint32 length, key ranges */
} WcRunHeader;

StaticAssertDecl(offsetof(WcRunHeader, st) == 72 && sizeof(WcRunHeader) == 152,
				 "run header layout changed");

#define WC_RUN_MAGIC 0x5752554E		/* "WRUN" */
#define WC_RUN_VERSION 13			/* 2: keys and tuples on separate pages;
									 * 3: out-of-line value count;
									 * 4: key-column ranges;
									 * 5: pages may be zstd-compressed;
									 * 6: value pages may be in column layout;
									 * 7: bloom pages of checked blocks;
									 * 8: column chunks may be hex-packed;
									 * 9: a zstd dictionary, chunks in frames;
									 * 10: key blocks may be packed;
									 * 11: ... in steps;
									 * 12: tuple headers may be shared;
									 * 13: leaf entries hint value pages */
#define WC_RUN_VERSION_MIN 3		/* read: 3 (no key-column ranges) to 13 */
#define WC_RUN_VERSION_ZSTD 5		/* first format whose pages may use zstd */
#define WC_RUN_VERSION_COLUMNS 6	/* ... whose value pages may be by column */
#define WC_RUN_VERSION_BLOOM_BLOCKS 7	/* ... whose bloom pages are checked blocks */
#define WC_RUN_VERSION_HEX 8	/* ... whose column chunks may be hex-packed */
#define WC_RUN_VERSION_DICT 9	/* ... whose header says where its dictionary is */
#define WC_RUN_VERSION_PACKED 10	/* ... whose key blocks may be packed */
#define WC_RUN_VERSION_STEPS 11	/* ... packed in steps (WC_KEYS_STEPS) */
#define WC_RUN_VERSION_HEADS 12	/* ... whose value pages' tuples may share a header */
#define WC_RUN_VERSION_HINTS 13	/* ... whose leaf index entries hint value pages */
#define WcRunBloomBlocked(hdr) ((hdr)->version >= WC_RUN_VERSION_BLOOM_BLOCKS)

typedef struct WcRunWriter WcRunWriter;

extern WcRunWriter *wc_run_writer_begin(Relation rel, int level);
extern int	wc_debug_run_format;
extern int	wc_run_page_cache_kb;	/* widecol.run_page_cache_size */
extern void wc_run_writer_set_zstd(WcRunWriter *w, int level);
extern void wc_run_writer_add(WcRunWriter *w, const WcRowHeader *row,
							  ItemPointer tid_out);
extern bool wc_run_writer_finish(WcRunWriter *w, WcRunSummary *summary);

/*
 * A leaf index page flagged WC_LEAF_COUNTS has, after its entries, one
 * uint32 per entry: the rows of that key page if it is settled (every
 * version on it frozen, live -- no tombstone, counter delta or expiry --
 * and the only one of its key in the run, so every snapshot sees exactly
 * that many rows there), else WC_UNSETTLED.  wc_run_count_settled counts a
 * key range from them without reading the pages.
 */
#define WC_LEAF_COUNTS		0x0100	/* index page opaque flag */
#define WC_UNSETTLED		PG_UINT32_MAX

/*
 * A leaf index page flagged WC_LEAF_HINTS (run format 13) has, after its
 * entries and counts, one value hint per entry: which value pages that key
 * page's tuples are in, and where the page changes, so that a point read
 * can ask the kernel for the value page it will need while it reads the
 * key page (src/README.md, "Value hints").  A hint is
 *   uint8 n                  value pages the key page references (<= 32)
 *   n x uint32               their blocks, in order
 *   n - 1 x (uint8 len, len bytes)  where page i (1..n-1) starts: the
 *                            shortest prefix of its first row's key that
 *                            sorts after the row before (len 0: none)
 * Hints are advice: a wrong one costs a useless read, never an answer.
 */
#define WC_LEAF_HINTS		0x0200	/* index page opaque flag */
#define WC_HINT_MAX_SEP		64		/* bytes of a separator, at most */

typedef struct WcIndexEntry
{
	BlockNumber child;
	uint16		keylen;
	const char *key;
	const char *hint;			/* leaves flagged WC_LEAF_HINTS, else NULL */
} WcIndexEntry;

#define WC_MAX_INDEX_ENTRIES (BLCKSZ / 6)

extern bool wc_parse_index_soft(const char *payload, Size len, uint32 count,
								WcIndexEntry *out);
extern const char *wc_leaf_counts_soft(const char *payload, Size len, uint32 count,
									   const WcIndexEntry *entries, uint16 flags,
									   uint32 *counts);
extern const char *wc_leaf_hints_soft(const char *payload, Size len, uint32 count,
									  WcIndexEntry *entries, uint16 flags);
extern BlockNumber wc_hinted_value_page(const char *hint, const char *key, int keylen);
extern int	wc_hint_pages(const char *hint, BlockNumber *blocks);

/*
 * A run's versions are split in two page streams (src/README.md, "Sorted
 * runs"): key pages hold the headers and keys, value pages the tuples.  A
 * key page's payload is this header, the value pages its rows' tuples are
 * in, then the (compressed) key block.
 */
typedef struct WcKeyPageHeader
{
	uint16		nvalues;		/* value pages referenced */
	uint16		flags;			/* the key block's codec (storage/compression.h),
								 * WC_KEYS_PACKED, WC_KEYS_STEPS
								 * (storage/keypack.h) */
	uint32		keylen;			/* bytes of the key block */
} WcKeyPageHeader;

typedef struct WcValueRef
{
	BlockNumber blkno;
	uint32		rawsize;		/* its tuples, decompressed */
} WcValueRef;

#define WC_MAX_VALUE_REFS 32	/* value pages one key page may reference */


/* A decoded key page, with the value pages loaded so far. */
typedef struct WcBlock
{
	Relation	rel;			/* where value pages are read from */
	BufferAccessStrategy strategy;
	BufferAccessStrategy value_strategy;	/* for value pages, if not NULL */
	BlockNumber blkno;
	uint64		run_id;
	int			first;			/* rows laid out: [first, nrows), first > 0
								 * only where a forward read seeks a key past
								 * the page's first row (wc_keys_unpack) */
	int			nrows;
	bool		partial;		/* ... not up to the page's last row, but one
								 * step past a forward read's bound */
	WcKeysCursor cursor;		/* ... where it goes on from, if pending: a
								 * lazy read lays out the rest as it gets
								 * there (block_more) */
	Size		base;			/* where the value area starts in raw */
	Size		rowsend;		/* where the key block's rows end in raw */
	int			next_value;		/* the value page of the next row placed */
	char	   *raw;			/* key block, then the value area; the
								 * WcBlock's address is stored just before */
	uint32	   *offsets;
	Size		rawcap;
	int			nvalues;
	WcValueRef	values[WC_MAX_VALUE_REFS];
	uint32		value_off[WC_MAX_VALUE_REFS];	/* where each goes in raw */
	bool		value_loaded[WC_MAX_VALUE_REFS];
	int			value_hint;		/* the value page a row was found in last */
	int64		values_read;	/* value pages read into this block, ever */
	BlockNumber hinted;			/* the value page a leaf's hint prefetched for
								 * the read, until it loads one (WC_META_BLOCK,
								 * 0: none) */
	int64		values_prefetched;	/* value pages prefetched by hints, ever */
	int64		hints_used;		/* ... that were the page the read loaded */
	bool		poolable;		/* buffers may come from the backend's pool;
								 * the owner must wc_block_free it */
	bool		point;			/* a seek's: rows are read one or few at a time */
	WcRunDict	dict;			/* run dict_run's dictionary (format 9), if any: */
	uint64		dict_run;		/* a block reused across runs may hold another's */
	bool		raw_pooled;
	bool		carry_pooled;
	/* the last value page loaded, kept for the next key page (it shares it) */
	char	   *carry;
	BlockNumber carry_blkno;
	uint32		carry_size;
	/* a value page in column layout opened for lazy reads (columns.h) */
	char	   *colstate;		/* colstate_size bytes, pooled */
	Size		colstate_size;
	struct WcColumnsPage *cols;
	BlockNumber cols_blkno;		/* which page it is */
} WcBlock;

#define WcBlockRow(b, i) ((WcRowHeader *) ((b)->raw + (b)->offsets[i]))

extern void wc_block_read(Relation rel, BlockNumber blkno, WcBlock *block,
						  BufferAccessStrategy strategy);
extern const char *wc_read_run_page_soft(Relation rel, BlockNumber blk,
										 uint16 type, uint64 run_id,
										 char *payload, Size *len,
										 WcPageOpaqueData *op,
										 BufferAccessStrategy strategy);
extern const char *wc_decode_block(const char *payload, Size len,
								   const WcPageOpaqueData *op, WcBlock *block);
extern const char *wc_decode_values(const char *payload, Size len,
									const WcPageOpaqueData *op, WcBlock *block,
									int v);
extern void wc_block_free(WcBlock *block);
extern int	wc_block_row_value_page(WcBlock *block, const WcRowHeader *row);
extern BufferAccessStrategy wc_value_page_ring(void);
extern struct WcColumnsPage *wc_block_row_columns(WcRowHeader *row, int *ordinal);
extern int	wc_block_row_values(WcRowHeader *row, struct WcColumnsPage *cp, int ordinal,
								TupleDesc desc, const bool *skip, int from, int upto,
								Datum *values, bool *isnull);
extern const char *wc_read_value_dir_soft(Relation rel, const WcRunHeader *hdr, uint32 d,
										  BlockNumber *out, uint32 *n);

typedef struct WcRunReader
{
	Relation	rel;
	WcRunSummary *summary;
	WcRunHeader hdr;
	BufferAccessStrategy strategy;
	/* leaf iteration */
	BlockNumber *data_blocks;	/* the loaded leaf's data blocks [data_first,
								 * data_first + data_held) (leaf_child) */
	int			data_first;
	int			data_held;
	int			data_cap;		/* data_blocks' room */
	int			ndata;			/* the leaf's entries */
	int			data_pos;
	int			prefetched_to;	/* data blocks before it were prefetched */
	BlockNumber next_leaf;		/* next leaf page to load */
	WcBlock		block;
	int			row_pos;
	bool		block_valid;
	const char *hi_key;			/* no key page starting past hi is read (the
								 * merge drops rows past it: above_hi) */
	int			hi_len;
	const char *seek_key;		/* the next block read starts at this key */
	int			seek_len;
	int64		blocks_read;
	int64		values_seen;	/* block.values_read at the last key page:
								 * prefetch_ahead's test for a keys-only read */
	char	   *bloom;			/* whole filter, from wc_run_bloom_load, or NULL */
	bool		extent_read_ahead;	/* a point read asked for the index and
									 * bloom pages (read_ahead_extent) */
} WcRunReader;

extern bool wc_run_header_dict(const char *payload, Size len, const WcRunHeader *hdr,
							   WcRunDict *out);
extern bool wc_run_dict_location(Relation rel, uint64 run_id, WcRunDict *out);
extern bool wc_newest_run_dict(Relation rel, WcDictRef *out);
extern void wc_run_reader_open(WcRunReader *r, Relation rel,
							   WcRunSummary *summary,
							   BufferAccessStrategy strategy);
extern void wc_run_reader_seek(WcRunReader *r, const char *key, int keylen);
extern void wc_run_bloom_load(Relation rel, WcRunReader *r);
extern WcRowHeader *wc_run_reader_next(WcRunReader *r, ItemPointer tid);
extern void wc_run_reader_seek_last(WcRunReader *r, const char *key, int keylen);
extern WcRowHeader *wc_run_reader_prev(WcRunReader *r, ItemPointer tid);
extern int	wc_run_split_keys(WcRunReader *r, int want, StringInfo *out);
extern int64 wc_run_count_settled(WcRunReader *r, const char *lo, int lolen,
								  const char *hi, int hilen);
extern bool wc_run_may_contain_partition(Relation rel, WcRunReader *r,
										 const char *pk, int pklen);

#endif
