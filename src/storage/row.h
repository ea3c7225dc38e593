/*
 * storage/row.h — row versions: format, order, visibility, counter folding.
 */
#ifndef WC_STORAGE_ROW_H
#define WC_STORAGE_ROW_H

#include "storage/page.h"
#include "storage/tableinfo.h"
#include "utils/snapshot.h"
#include "executor/tuptable.h"

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
/* frozen (by compaction): every snapshot sees the version */
#define WcRowIsFrozen(row) \
	((row)->xid == FrozenTransactionId || (row)->xid == BootstrapTransactionId)
/* counter tables: the counter columns hold increments to older versions */
#define WC_ROW_DELTA		0x0002
#define WcRowIsDelta(row) (((row)->flags & WC_ROW_DELTA) != 0)
/* the tuple holds pointers to values in the table's TOAST relation */
#define WC_ROW_EXTERNAL		0x0004

/*
 * Frozen and live (no tombstone, counter delta or expiry): a row every
 * snapshot sees as a row, what a settled key page holds (WC_LEAF_COUNTS).
 */
static inline bool
WcRowIsSettledLive(const WcRowHeader *row)
{
	return WcRowIsFrozen(row) && (row->flags & (WC_ROW_TOMBSTONE | WC_ROW_DELTA)) == 0 &&
		row->expire_at == 0;
}

/*
 * Largest version that fits a level-0 page (with its checksum) and a
 * one-row data block.
 */
#define WC_MAX_ROW_SIZE \
	(MAXALIGN_DOWN(Min(WC_PAYLOAD_CAPACITY - sizeof(uint32) - 8, \
					   BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - sizeof(ItemIdData) - \
					   MAXALIGN(sizeof(WcPageOpaqueData)) - sizeof(uint32))))

/* wc_form_row's write_ts: the table's clock's next (wc_meta_write_ts) */
#define WC_WRITE_TS_NEXT	PG_INT64_MIN

extern WcRowHeader *wc_form_row(Relation rel, TupleTableSlot *slot,
								const char *key, int keylen, int pklen,
								bool tombstone, CommandId cid, int64 write_ts);
/* the same, formed in the `len` bytes alloc(arg, len) gives (palloc if NULL) */
typedef void *(*WcRowAllocator) (void *arg, Size len);
extern WcRowHeader *wc_form_row_in(Relation rel, TupleTableSlot *slot,
								   const char *key, int keylen, int pklen,
								   bool tombstone, CommandId cid, int64 write_ts,
								   WcRowAllocator alloc, void *arg);
/* values out of line (outofline.c) */
extern Size wc_move_values_out_of_line(Relation rel, Datum *values, bool *isnull,
									   Size data_len, Size fixed, bool *moved);
extern void wc_row_free_out_of_line(Relation rel, const WcRowHeader *row);
extern WcRowHeader *wc_row_copy_for_rewrite(Relation from, Relation to, const WcRowHeader *row);
extern void wc_row_deform(Relation rel, const WcRowHeader *row, Datum *values, bool *isnull);
extern WcRowHeader *wc_row_with_values(Relation rel, const WcRowHeader *row, Datum *values,
									   bool *isnull);
extern int	wc_compare_keys(const char *a, int alen, const char *b, int blen);
extern int	wc_compare_versions(const WcRowHeader *a, const WcRowHeader *b);
extern int	wc_compare_rows(const WcRowHeader *a, const WcRowHeader *b);
extern WcRowHeader *wc_row_copy(WcRowHeader *dst, const WcRowHeader *row);
extern WcRowHeader *wc_row_copy_key(const WcRowHeader *row);
extern bool wc_same_version(const WcRowHeader *a, const WcRowHeader *b);
extern void wc_sort_rows(WcRowHeader **rows, int64 n, int64 *perm);
extern void *wc_alloc_huge(MemoryContext cxt, Size size);
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

#endif
