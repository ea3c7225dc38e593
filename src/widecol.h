/*
 * widecol.h — shared definitions of the widecol table access method.
 *
 * The formats here are described in src/README.md; keep both in step.
 */
#ifndef WIDECOL_H
#define WIDECOL_H

#include "postgres.h"

#include "access/htup_details.h"
#include "access/tableam.h"
#include "datatype/timestamp.h"
#include "lib/stringinfo.h"
#include "port/atomics.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "storage/bufpage.h"
#include "storage/lock.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

#define WIDECOL_AM_NAME "widecol"
#define WIDECOL_SCHEMA "widecol"
#define WIDECOL_OPTION_NAMESPACE "widecol"

/* ---------- GUCs (widecol.c) ---------- */
extern int	wc_level0_max_size_kb;
extern int	wc_bulk_write_mem_kb;
extern int	wc_write_ttl;
extern int	wc_partition_warn_size_kb;
extern int	wc_debug_clock_offset;
extern bool wc_preloaded;

extern void wc_check_preloaded(void);
extern int64 wc_now(void);
extern int64 wc_next_write_ts(void);
extern void wc_clock_advance_to(int64 floor);

/* maintenance GUCs (widecol.c) */
extern int	wc_naptime_s;
extern int	wc_max_workers;
extern int	wc_compaction_throughput_mb;
extern double wc_debug_write_time;

#define WC_MAX_WORKERS_LIMIT 64

/* ---------- pages ---------- */
#define WC_PAGE_META		1
#define WC_PAGE_L0			2
#define WC_PAGE_RUN_HEADER	3
#define WC_PAGE_RUN_DATA	4
#define WC_PAGE_RUN_INDEX	5
#define WC_PAGE_RUN_BLOOM	6
#define WC_PAGE_FREE		7	/* reclaimed, listed in the free space map */
#define WC_PAGE_RUN_VALUES	8	/* a run's non-key columns (see WcKeyPageHeader) */
#define WC_PAGE_RUN_VALUEDIR 9	/* the blocks of a run's value pages */

#define WC_VALUEDIR_ENTRIES (WC_PAYLOAD_CAPACITY / sizeof(BlockNumber))

#define WC_PAGE_FLAG_RAW	0x0001	/* data page payload is not compressed */

typedef struct WcPageOpaqueData
{
	uint16		type;
	uint16		flags;
	uint32		crc;
	uint64		segment;		/* run id or level-0 generation */
	uint32		count;			/* rows (data) or entries (index) */
	uint32		aux;			/* raw size (data), level (index), next (L0) */
} WcPageOpaqueData;

typedef WcPageOpaqueData *WcPageOpaque;

#define WcPageGetOpaque(page) ((WcPageOpaque) PageGetSpecialPointer(page))
#define WC_PAYLOAD_CAPACITY \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(WcPageOpaqueData)))

/* ---------- metapage ---------- */
#define WC_META_BLOCK		0
#define WC_META_MAGIC		0x57434F4C	/* "WCOL" */
#define WC_META_VERSION		2
#define WC_MAX_L0_GENS		256	/* fits the metapage: 24 bytes each */
#define WC_ROWID_CHUNK		1024

typedef struct WcL0Gen
{
	uint64		gen;
	BlockNumber head;
	BlockNumber tail;
	uint32		npages;
	uint32		pad;
} WcL0Gen;

typedef struct WcMetaData
{
	uint32		magic;
	uint32		version;
	uint64		storage_id;
	uint64		next_rowid;
	uint64		next_segment_id;
	uint64		next_l0_gen;
	int64		clock_reserved; /* every write time so far is below this */
	int64		clock_epoch;	/* start time of the server that reserved it */
	int64		bytes_ingested; /* compressed bytes of runs from flushes and bulk writes */
	int64		bytes_compacted;	/* compressed bytes of runs compactions wrote */
	uint32		l0_pages;
	uint32		ngens;
	WcL0Gen		gens[WC_MAX_L0_GENS];
} WcMetaData;

StaticAssertDecl(sizeof(WcMetaData) <= WC_PAYLOAD_CAPACITY, "metapage too large");

extern void wc_meta_init_page(Page page, uint64 storage_id);
extern uint64 wc_new_storage_id(void);
extern void wc_meta_read(Relation rel, WcMetaData *meta);
extern uint64 wc_storage_id(Relation rel, bool refresh);
extern bool wc_meta_storage_id(Relation rel, uint64 *storage_id);
extern uint64 wc_meta_next_segment_id(Relation rel);
extern uint64 wc_meta_alloc_rowid(Relation rel);
extern int64 wc_meta_write_ts(Relation rel);
extern void wc_meta_count_written(Relation rel, bool compaction, int64 bytes);
extern Buffer wc_extend_page(Relation rel, BufferAccessStrategy strategy);
extern void wc_check_page(Relation rel, Buffer buf, uint16 expected_type);

/* ---------- keys (keyenc.c) ---------- */
#define WC_MAX_KEY_COLUMNS	32
#define WC_MAX_KEY_SIZE		1024

typedef struct WcKeyColumn
{
	AttrNumber	attnum;
	Oid			typid;			/* base type */
	bool		desc;
	bool		partition;		/* part of the partition key */
} WcKeyColumn;

/* Per-relation info parsed from pg_class.reloptions; lives in rd_amcache. */
typedef struct WcTableInfo
{
	int			npk;			/* partition key columns */
	int			nck;			/* clustering key columns */
	WcKeyColumn cols[WC_MAX_KEY_COLUMNS];	/* partition cols, then clustering */
	int			key_prefix;		/* the first columns, all key columns */
	int64		default_ttl_us; /* 0 = none */
	int			ncounters;		/* widecol.counter_columns */
	AttrNumber	counters[WC_MAX_KEY_COLUMNS];
	/* compaction options (see "Compaction strategies" in src/README.md) */
	int			compaction;		/* WC_COMPACTION_* */
	int			min_threshold;	/* runs of a bucket before it is compacted */
	int			max_threshold;	/* most runs merged at once */
	int64		window_us;		/* time_window: window length */
	bool		autocompact;	/* background workers maintain the table */
} WcTableInfo;

#define WC_COMPACTION_SIZE_TIERED	0
#define WC_COMPACTION_TIME_WINDOW	1
#define WC_DEFAULT_MIN_THRESHOLD	4
#define WC_DEFAULT_MAX_THRESHOLD	32
#define WC_DEFAULT_WINDOW_US		((int64) 24 * 3600 * 1000000)

extern const char *wc_compaction_name(int compaction);
extern List *wc_key_column_names(const char *optname, const char *value);

/*
 * The time window of a write time (microseconds since 2000): windows are
 * aligned on the Unix epoch, as Cassandra's, so '1 day' windows start at
 * midnight UTC.
 */
static inline int64
wc_time_window(int64 ts, int64 window_us)
{
	int64		unix_us = ts + INT64CONST(946684800) * 1000000;

	return unix_us / window_us - (unix_us % window_us < 0 ? 1 : 0);
}

#define WcTableIsKeyless(info) ((info)->npk + (info)->nck == 0)

extern bool wc_type_is_supported(Oid typid);
extern const char *wc_supported_types_list(void);
extern void wc_encode_key(Relation rel, WcTableInfo *info, Datum *values,
						  bool *isnull, StringInfo buf, int *pklen);
extern void wc_encode_rowid(uint64 rowid, StringInfo buf);
extern void wc_encode_column(StringInfo buf, const WcKeyColumn *col, Datum value);
extern char *wc_describe_partition(Relation rel, const char *key, int pklen);
extern void wc_decode_key_into(WcTableInfo *info, const char *key, int keylen,
							   Datum *values, bool *isnull);

/* Decodes the keys of a read's rows, the partition columns once per partition. */
typedef struct WcKeyDecoder
{
	MemoryContext cxt;			/* holds the buffers */
	char	   *pk;				/* the partition key decoded last */
	int			pklen;
	int			pkcap;
	char	   *pkarena;		/* its by-reference values */
	int			pkarena_cap;
	char	   *rowarena;		/* the current row's clustering values */
	int			rowarena_cap;
	Datum		values[WC_MAX_KEY_COLUMNS];	/* its partition columns */
} WcKeyDecoder;

extern void wc_key_decoder_init(WcKeyDecoder *d, MemoryContext parent);
extern void wc_key_decode_cols(WcKeyDecoder *d, WcTableInfo *info, const char *key,
							   int keylen, int pklen, bool clustering, Datum *keyvals);
extern void wc_key_decode(WcKeyDecoder *d, WcTableInfo *info, const char *key,
						  int keylen, int pklen, Datum *values, bool *isnull);

/* ---------- options (options.c) ---------- */
extern WcTableInfo *wc_table_info(Relation rel);
extern bool wc_relation_is_widecol(Oid relid);
extern void wc_install_utility_hook(void);

/* ---------- row versions (row.c) ---------- */
#define WC_ROW_TOMBSTONE	0x0001

typedef struct WcRowHeader
{
	int64		write_ts;
	int64		expire_at;		/* 0 = never */
	TransactionId xid;
	CommandId	cid;
	uint32		len;			/* total bytes of this version */
	uint16		keylen;
	uint16		pklen;
	uint16		flags;
	uint16		blockoff;		/* in a decoded block: offset / MAXIMUM_ALIGNOF */
	int32		tupoff;			/* tuple's offset from the header (see below) */
} WcRowHeader;

/*
 * A version is contiguous (header, key, tuple at WcRowTupleOffset) on
 * level-0 pages and in every copy.  In a decoded run block its tuple lives
 * in the block's value area instead, read from its value page the first
 * time something asks for it (WcRowTuple): a read that uses only keys never
 * reads value pages.  Copy versions with wc_row_copy, never by memcpy.
 */
#define WC_ROW_IN_BLOCK		0x8000	/* in memory only: tuple in a value page */
#define WcRowKey(row) ((char *) (row) + sizeof(WcRowHeader))
#define WcRowTupleOffset(keylen) MAXALIGN(sizeof(WcRowHeader) + (keylen))
extern void wc_block_load_tuple(WcRowHeader *row);
static inline MinimalTuple
WcRowTuple(const WcRowHeader *row)
{
	if (unlikely(row->flags & WC_ROW_IN_BLOCK))
		wc_block_load_tuple((WcRowHeader *) row);
	return (MinimalTuple) ((char *) row + row->tupoff);
}
#define WcRowIsTombstone(row) (((row)->flags & WC_ROW_TOMBSTONE) != 0)
/* counter tables: the counter columns hold increments to older versions */
#define WC_ROW_DELTA		0x0002
#define WcRowIsDelta(row) (((row)->flags & WC_ROW_DELTA) != 0)

/* Largest version that fits a level-0 page and a one-row data block. */
#define WC_MAX_ROW_SIZE \
	(MAXALIGN_DOWN(Min(WC_PAYLOAD_CAPACITY - sizeof(uint32) - 8, \
					   BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - sizeof(ItemIdData) - \
					   MAXALIGN(sizeof(WcPageOpaqueData)))))

extern WcRowHeader *wc_form_row(Relation rel, TupleTableSlot *slot,
								const char *key, int keylen, int pklen,
								bool tombstone, CommandId cid);
extern int	wc_compare_keys(const char *a, int alen, const char *b, int blen);
extern int	wc_compare_versions(const WcRowHeader *a, const WcRowHeader *b);
extern int	wc_compare_rows(const WcRowHeader *a, const WcRowHeader *b);
extern WcRowHeader *wc_row_copy(WcRowHeader *dst, const WcRowHeader *row);
extern bool wc_same_version(const WcRowHeader *a, const WcRowHeader *b);
extern void wc_sort_rows(WcRowHeader **rows, int64 n, int64 *perm);
extern bool wc_version_visible(const WcRowHeader *row, Snapshot snapshot);
extern bool wc_row_is_dead(const WcRowHeader *row, int64 now);
typedef struct WcCounterFold
{
	Relation	rel;
	WcRowHeader *newest;
	bool		base;			/* reached a non-delta version */
	int64		sum[WC_MAX_KEY_COLUMNS];
	bool		overflow[WC_MAX_KEY_COLUMNS];
} WcCounterFold;

extern void wc_counter_fold_begin(WcCounterFold *f, Relation rel, const WcRowHeader *newest);
extern void wc_counter_fold_add(WcCounterFold *f, const WcRowHeader *older);
extern WcRowHeader *wc_counter_fold_end(WcCounterFold *f);
extern bool wc_xid_known_aborted(TransactionId xid);

/* ---------- level 0 (level0.c) ---------- */
extern bool wc_l0_append(Relation rel, WcRowHeader *row, ItemPointer tid);
typedef void (*wc_l0_callback) (WcRowHeader *row, ItemPointer tid, void *arg);
extern void wc_l0_read_gen(Relation rel, const WcL0Gen *gen,
						   wc_l0_callback cb, void *arg);
extern void wc_l0_read_gen_from(Relation rel, const WcL0Gen *gen, BlockNumber *blk,
								OffsetNumber *off, wc_l0_callback cb, void *arg);
extern WcRowHeader *wc_l0_fetch(Relation rel, ItemPointer tid);
extern bool wc_l0_row_ok(const WcRowHeader *row, Size itemlen);

/* ---------- reads before a statement (beforestmt.c) ---------- */
extern void wc_note_write(Relation rel, CommandId cid);
extern void wc_note_inserted_key(Relation rel, const char *key, int keylen, int pklen,
								 CommandId cid);
extern Snapshot wc_snapshot_for_read(Relation rel, Snapshot snapshot, MemoryContext cxt);
extern void wc_beforestmt_init(void);

/* ---------- level-0 cache (l0cache.c) ---------- */
typedef struct WcL0Sorted
{
	WcRowHeader **rows;			/* storage order */
	ItemPointerData *tids;
	int64		n;
} WcL0Sorted;

extern int	wc_level0_cache_kb;
extern const WcL0Sorted *wc_l0_cache_get(Relation rel, uint64 storage_id,
										 const WcL0Gen *gen, uint64 oldest_gen);
extern int64 wc_l0_sorted_lower_bound(const WcL0Sorted *s, const char *key, int keylen);

/* ---------- manifest (manifest.c) ---------- */
typedef struct WcRunSummary
{
	uint64		run_id;
	int32		level;
	BlockNumber header_block;
	uint32		npages;			/* all pages of the run */
	int64		nrows;
	int64		ntombstones;
	int64		npartitions;
	int64		raw_bytes;
	int64		compressed_bytes;
	int64		min_write_ts;
	int64		max_write_ts;
	int64		max_expire;		/* when the last version stops being live data:
								 * latest expiry, a tombstone counting from its
								 * write; PG_INT64_MAX when some row never
								 * expires */
	TransactionId min_xid;
	TransactionId max_xid;
	bytea	   *min_key;		/* palloc'd, may be NULL in empty runs */
	bytea	   *max_key;
} WcRunSummary;

typedef struct WcManifest
{
	int			nruns;
	WcRunSummary *runs;
	int			nretired;
	uint64	   *retired_gens;
} WcManifest;

extern WcManifest *wc_manifest_read(uint64 storage_id, Snapshot snapshot);
extern void wc_manifest_add_run(uint64 storage_id, const WcRunSummary *run);
extern void wc_manifest_claim_run(uint64 storage_id, uint64 run_id);
extern void wc_manifest_retire_gen(uint64 storage_id, uint64 gen);
extern void wc_manifest_forget_gen(uint64 storage_id, uint64 gen);
extern bool wc_manifest_gen_removable(uint64 storage_id, uint64 gen,
									  TransactionId *retiring_xid);
extern bool wc_manifest_gen_retired(WcManifest *m, uint64 gen);
extern void wc_manifest_drop_storage(uint64 storage_id);
extern void wc_manifest_drop_runs(uint64 storage_id, const uint64 *run_ids, int n);
extern int	wc_manifest_dropped_runs(uint64 storage_id, TransactionId horizon,
									 WcRunSummary **out, TransactionId *latest);
extern void wc_manifest_forget_runs(uint64 storage_id, const uint64 *run_ids, int n);
extern TransactionId wc_manifest_min_xid(uint64 storage_id, TransactionId horizon);

/* reclaim.c */
extern void wc_free_pages(Relation rel, const BlockNumber *blks, int n, uint64 gen,
						  TransactionId latest_xid);
typedef enum WcRunState
{
	WC_RUN_GONE,				/* no manifest row: its pages may be reused */
	WC_RUN_FREEING,				/* its rows are being deleted, not yet committed */
	WC_RUN_LISTED				/* being written, a run, or dropped and not yet
								 * reclaimed */
} WcRunState;
extern WcRunState wc_manifest_run_state(uint64 storage_id, uint64 run_id);
extern Buffer wc_reuse_page(Relation rel, BufferAccessStrategy strategy, uint64 storage_id);
extern Buffer wc_new_page(Relation rel, BufferAccessStrategy strategy);
extern void wc_reclaim_runs(Relation rel, uint64 storage_id);

/* ---------- bloom (bloom.c) ---------- */
#define WC_BLOOM_BITS_PER_KEY	10
#define WC_BLOOM_PROBES			7
#define WC_BLOOM_PAGE_BITS		(WC_PAYLOAD_CAPACITY * 8)

extern uint64 wc_bloom_hash(const char *pk, int pklen);
extern uint32 wc_bloom_npages(int64 nkeys);
extern void wc_bloom_set(char *pages, uint32 npages, uint64 hash);
extern bool wc_bloom_test(const char *page_payload, uint64 hash);
extern uint32 wc_bloom_page_for(uint32 npages, uint64 hash);

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
	uint32		extent_pages;	/* header + index + bloom */
	uint32		min_key_len;
	uint32		max_key_len;
	uint32		nvalue_pages;	/* of ndata_pages, those holding tuples */
	int64		nrows;
	int64		ntombstones;
	int64		npartitions;
	int64		raw_bytes;
	int64		compressed_bytes;
	int64		min_write_ts;
	int64		max_write_ts;
	int64		max_expire;
	TransactionId min_xid;
	TransactionId max_xid;
	/* min key, then max key follow */
} WcRunHeader;

#define WC_RUN_MAGIC 0x5752554E		/* "WRUN" */
#define WC_RUN_VERSION 2			/* 2: keys and tuples on separate pages */

typedef struct WcRunWriter WcRunWriter;

extern WcRunWriter *wc_run_writer_begin(Relation rel, int level);
extern void wc_run_writer_add(WcRunWriter *w, const WcRowHeader *row,
							  ItemPointer tid_out);
extern bool wc_run_writer_finish(WcRunWriter *w, WcRunSummary *summary);

typedef struct WcIndexEntry
{
	BlockNumber child;
	uint16		keylen;
	const char *key;
} WcIndexEntry;

#define WC_MAX_INDEX_ENTRIES (BLCKSZ / 6)

extern bool wc_parse_index_soft(const char *payload, Size len, uint32 count,
								WcIndexEntry *out);

/*
 * A run's versions are split in two page streams (src/README.md, "Sorted
 * runs"): key pages hold the headers and keys, value pages the tuples.  A
 * key page's payload is this header, the value pages its rows' tuples are
 * in, then the (compressed) key block.
 */
typedef struct WcKeyPageHeader
{
	uint16		nvalues;		/* value pages referenced */
	uint16		flags;			/* WC_PAGE_FLAG_RAW: the key block is not compressed */
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
	BlockNumber blkno;
	uint64		run_id;
	int			nrows;
	char	   *raw;			/* key block, then the value area; the
								 * WcBlock's address is stored just before */
	uint32	   *offsets;
	Size		rawcap;
	int			nvalues;
	WcValueRef	values[WC_MAX_VALUE_REFS];
	uint32		value_off[WC_MAX_VALUE_REFS];	/* where each goes in raw */
	bool		value_loaded[WC_MAX_VALUE_REFS];
	int64		values_read;	/* value pages read into this block, ever */
	bool		poolable;		/* buffers may come from the backend's pool;
								 * the owner must wc_block_free it */
	bool		raw_pooled;
	bool		carry_pooled;
	/* the last value page loaded, kept for the next key page (it shares it) */
	char	   *carry;
	BlockNumber carry_blkno;
	uint32		carry_size;
} WcBlock;

#define WcBlockRow(b, i) ((WcRowHeader *) ((b)->raw + (b)->offsets[i]))

extern uint32 wc_page_crc(Page page);
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
extern const char *wc_read_value_dir_soft(Relation rel, const WcRunHeader *hdr, uint32 d,
										  BlockNumber *out, uint32 *n);

typedef struct WcRunReader
{
	Relation	rel;
	WcRunSummary *summary;
	WcRunHeader hdr;
	BufferAccessStrategy strategy;
	/* leaf iteration */
	BlockNumber *data_blocks;	/* data blocks from the current position */
	int			ndata;
	int			data_pos;
	BlockNumber next_leaf;		/* next leaf page to load */
	WcBlock		block;
	int			row_pos;
	bool		block_valid;
	const char *hi_key;			/* stop after keys > hi (prefix compare) */
	int			hi_len;
	const char *seek_key;		/* the next block read starts at this key */
	int			seek_len;
	int64		blocks_read;
	char	   *bloom;			/* whole filter, from wc_run_bloom_load, or NULL */
} WcRunReader;

extern void wc_run_reader_open(WcRunReader *r, Relation rel,
							   WcRunSummary *summary,
							   BufferAccessStrategy strategy);
extern void wc_run_reader_seek(WcRunReader *r, const char *key, int keylen);
extern void wc_run_bloom_load(Relation rel, WcRunReader *r);
extern WcRowHeader *wc_run_reader_next(WcRunReader *r, ItemPointer tid);
extern void wc_run_reader_seek_last(WcRunReader *r, const char *key, int keylen);
extern WcRowHeader *wc_run_reader_prev(WcRunReader *r, ItemPointer tid);
extern int	wc_run_split_keys(WcRunReader *r, int want, StringInfo *out);
extern bool wc_run_may_contain_partition(Relation rel, WcRunReader *r,
										 const char *pk, int pklen);

/* ---------- merge (merge.c) ---------- */
typedef struct WcMergeIter WcMergeIter;

/* What a read did, for EXPLAIN ANALYZE. */
typedef struct WcMergeStats
{
	int64		runs_considered;
	int64		runs_skipped_range;
	int64		runs_skipped_bloom;
	int64		blocks_read;	/* key pages */
	int64		value_pages_read;
	int64		l0_versions;
	int64		versions;
	int64		tombstones;
	int64		expired;
	int64		bloom_checks;
	int64		bloom_false_positives;	/* a bloom hit, but no row of the partition */
} WcMergeStats;

extern Relation wc_open_widecol(FunctionCallInfo fcinfo, LOCKMODE mode, bool owner);
extern void wc_check_row_access(Oid relid, const char *function);

/* ---------- read-time counters (stats.c) ---------- */
extern void wc_stats_shmem_request(void);
extern void wc_stats_shmem_startup(void);
extern void wc_stats_count_bloom(uint64 storage_id, int64 checks, int64 negatives,
								 int64 false_positives);
extern void wc_stats_read(uint64 storage_id, int64 *checks, int64 *negatives,
						  int64 *false_positives);

extern int	wc_tombstone_warn_threshold;
extern int	wc_tombstone_failure_threshold;

extern WcMergeIter *wc_merge_begin(Relation rel, Snapshot snapshot,
								   const char *lo, int lolen,
								   const char *hi, int hilen, int bloom_pklen,
								   BufferAccessStrategy strategy,
								   bool backward);
extern void wc_merge_read_manifest(Relation rel, Snapshot snapshot, WcMetaData *meta,
								   WcManifest **m);
extern WcMergeIter *wc_merge_begin_with(Relation rel, Snapshot snapshot,
										const WcMetaData *meta, WcManifest *m,
										const char *lo, int lolen,
										const char *hi, int hilen, int bloom_pklen,
										BufferAccessStrategy strategy, bool backward);
extern void wc_merge_set_stats(WcMergeIter *it, WcMergeStats *stats);
extern void wc_merge_return_dead(WcMergeIter *it);
extern WcMergeIter *wc_merge_begin_runs(Relation rel, WcRunSummary *runs, int nruns);
extern int	wc_gc_grace_seconds;
extern int64 wc_merge_live_blocks(WcMergeIter *it, int64 *value_pages);
extern WcRowHeader *wc_merge_next(WcMergeIter *it, ItemPointer tid);
extern void wc_merge_end(WcMergeIter *it);
typedef struct WcKeyRef
{
	const char *key;
	uint16		keylen;
	uint16		pklen;
} WcKeyRef;
extern void wc_keys_may_exist(Relation rel, const WcMetaData *meta, WcManifest *m, int64 n,
							  const WcKeyRef *keys, bool *maybe);
extern WcRowHeader *wc_lookup_key(Relation rel, Snapshot snapshot,
								  const char *key, int keylen, int pklen,
								  bool include_dead, ItemPointer tid);

/* ---------- flush (flush.c) ---------- */
extern int64 wc_flush(Relation rel, bool wait);

/* ---------- compaction (compact.c, strategy.c, maintain.c, history.c) ---------- */

/* What one compaction (or one whole-run drop) did: a compaction_history row. */
typedef struct WcCompactStats
{
	const char *kind;			/* major, minor, freeze, tombstones, expired_runs */
	TimestampTz started;
	int			runs_in;
	int			runs_out;
	int64		rows_in;
	int64		rows_out;
	int64		bytes_in;		/* compressed bytes of the input runs */
	int64		bytes_out;
	int64		tombstones_purged;
	int64		expired_purged;
	int64		shadowed_dropped;	/* older or aborted versions */
	int			runs_dropped_whole;
} WcCompactStats;

/* A set of runs a strategy wants merged, by index into a manifest. */
typedef struct WcBucket
{
	const char *kind;			/* minor, freeze, tombstones */
	int			nruns;
	uint64	   *run_ids;
	int			level;			/* level of the output run(s) */
} WcBucket;

extern int64 wc_compact_runs(Relation rel, WcManifest *m, const uint64 *run_ids,
							 int nin, int level, int64 window_us,
							 TransactionId horizon, WcCompactStats *st);
extern int	wc_drop_expired_runs(Relation rel, WcManifest *m, TransactionId horizon,
								 WcCompactStats *st);
extern bool wc_run_droppable_whole(const WcManifest *m, int i, int64 now,
								   int64 purge_before, TransactionId horizon);
extern List *wc_strategy_pick(Relation rel, WcTableInfo *info, WcManifest *m,
							  TransactionId horizon);
extern int64 wc_maintain(Relation rel, bool major, bool in_worker, bool *busy);
extern void wc_history_record(Relation rel, const char *strategy,
							  const WcCompactStats *st, bool by_worker);
extern int64 wc_history_prune(void);
extern int	wc_history_retention_s;
extern void wc_throttle_begin(void);
extern void wc_throttle(int64 bytes);
extern pg_atomic_uint64 *wc_throttle_clock(void);

/* bgworker.c */
extern bool wc_am_worker;
extern void wc_register_launcher(void);
extern void wc_report_activity(const char *fmt,...) pg_attribute_printf(1, 2);

/* ---------- scan / modify / fetch ---------- */
extern WcRowHeader *wc_fetch_version(Relation rel, ItemPointer tid);
extern bool wc_version_is_current(Relation rel, WcRowHeader *row,
								  ItemPointer tid, Snapshot snapshot);
extern void wc_store_row(TupleTableSlot *slot, Relation rel,
						 WcRowHeader *row, ItemPointer tid);
extern void wc_store_row_ref(TupleTableSlot *slot, Relation rel,
							 WcRowHeader *row, ItemPointer tid,
							 WcKeyDecoder *dec);

extern const TableAmRoutine *wc_get_routine(void);

/* ---------- tuple slot (slot.c) ---------- */
extern PGDLLIMPORT const TupleTableSlotOps WcSlotOps;
extern void wc_slot_mark_unused_columns(PlanState *top);
extern void wc_slot_store_version(TupleTableSlot *slot, WcTableInfo *info, WcRowHeader *row,
								  ItemPointer tid, Oid relid, WcKeyDecoder *dec);

/* wal.c: custom resource manager id (custom range 128-255) */
#define WC_RMGR_ID 147
extern void wc_register_rmgr(void);
extern void wc_log_snapshot_conflict(Relation rel, TransactionId latest_removed_xid);
extern void wc_free_buffer(Relation rel, Buffer buf);
extern void wc_page_init_free(Page page);
extern void wc_install_planner_hooks(void);

/* customscan.c */
extern void wc_add_seek_path(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte);
extern void wc_register_custom_scan(void);

/* scan.c */
extern TableScanDesc wc_scan_begin(Relation rel, Snapshot snapshot,
								   int nkeys, struct ScanKeyData *key,
								   ParallelTableScanDesc pscan, uint32 flags);
extern void wc_scan_end(TableScanDesc scan);
extern Size wc_parallelscan_estimate(Relation rel);
extern Size wc_parallelscan_initialize(Relation rel, ParallelTableScanDesc pscan);
extern void wc_parallelscan_reinitialize(Relation rel, ParallelTableScanDesc pscan);
extern void wc_scan_rescan(TableScanDesc scan, struct ScanKeyData *key,
						   bool set_params, bool allow_strat,
						   bool allow_sync, bool allow_pagemode);
extern bool wc_scan_getnextslot(TableScanDesc scan, ScanDirection direction,
								TupleTableSlot *slot);
extern bool wc_fetch_row_version(Relation rel, ItemPointer tid,
								 Snapshot snapshot, TupleTableSlot *slot);
extern bool wc_tid_valid(TableScanDesc scan, ItemPointer tid);
extern void wc_get_latest_tid(TableScanDesc scan, ItemPointer tid);
extern bool wc_satisfies_snapshot(Relation rel, TupleTableSlot *slot,
								  Snapshot snapshot);
extern bool wc_scan_analyze_next_block(TableScanDesc scan, BlockNumber blockno,
									   BufferAccessStrategy bstrategy);
extern bool wc_scan_analyze_next_tuple(TableScanDesc scan,
									   TransactionId OldestXmin,
									   double *liverows, double *deadrows,
									   TupleTableSlot *slot);

/* modify.c */
extern void wc_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid,
							int options, struct BulkInsertStateData *bistate);
extern void wc_multi_insert(Relation rel, TupleTableSlot **slots, int nslots,
							CommandId cid, int options,
							struct BulkInsertStateData *bistate);
extern void wc_finish_bulk_insert(Relation rel, int options);
extern TM_Result wc_tuple_delete(Relation rel, ItemPointer tid, CommandId cid,
								 Snapshot snapshot, Snapshot crosscheck,
								 bool wait, TM_FailureData *tmfd,
								 bool changingPart);
extern TM_Result wc_tuple_update(Relation rel, ItemPointer otid,
								 TupleTableSlot *slot, CommandId cid,
								 Snapshot snapshot, Snapshot crosscheck,
								 bool wait, TM_FailureData *tmfd,
								 LockTupleMode *lockmode,
								 bool *update_indexes);
extern void wc_modify_init(void);
extern bool wc_key_moved_here(Relation rel, const char *key, int len, CommandId cid);

/* conflict.c */
extern TM_Result wc_check_write_conflict(Relation rel, WcRowHeader *old,
										 ItemPointer otid, CommandId cid,
										 bool wait, TM_FailureData *tmfd,
										 bool moved_here, LOCKTAG *tag);
extern void wc_key_unlock(LOCKTAG *tag);
extern TM_Result wc_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
							   TupleTableSlot *slot, CommandId cid,
							   LockTupleMode mode, LockWaitPolicy wait_policy,
							   uint8 flags, TM_FailureData *tmfd);

#endif							/* WIDECOL_H */
