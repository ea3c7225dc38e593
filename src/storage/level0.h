/*
 * storage/level0.h — level 0 (the memtable) and the backend cache of its
 * sorted generations.
 */
#ifndef WC_STORAGE_LEVEL0_H
#define WC_STORAGE_LEVEL0_H

#include "storage/metapage.h"
#include "storage/row.h"

/* ---------- level 0 (level0.c) ---------- */
extern bool wc_l0_append(Relation rel, WcRowHeader *row, ItemPointer tid);
extern bool wc_l0_append_many(Relation rel, WcRowHeader **rows, int64 n);
extern void wc_l0_new_page_init(Page page, uint64 gen, const char *item, Size itemlen);
extern void wc_l0_new_page_meta(Page metapage, BlockNumber newblk, bool first);
extern void wc_l0_new_page_link(Page tailpage, BlockNumber newblk);
typedef void (*wc_l0_callback) (WcRowHeader *row, ItemPointer tid, void *arg);
extern void wc_l0_read_gen(Relation rel, const WcL0Gen *gen,
						   wc_l0_callback cb, void *arg);
extern void wc_l0_read_gen_from(Relation rel, const WcL0Gen *gen, BlockNumber *blk,
								OffsetNumber *off, wc_l0_callback cb, void *arg);
extern WcRowHeader *wc_l0_fetch(Relation rel, ItemPointer tid);
extern const char *wc_l0_page_problem(Page page, uint64 gen);
extern const char *wc_l0_item_problem(Page page, OffsetNumber off, WcRowHeader **row);

/*
 * Level-0 pages written with checksums (flags of their special space): each
 * item is a version followed by the CRC-32C of its len bytes, and `count`
 * is the number of items.
 */
#define WC_L0_CHECKSUMS		0x0010
#define WC_L0_CRC_SIZE		sizeof(uint32)

/* ---------- level-0 cache (l0cache.c) ---------- */
/*
 * A generation's versions in storage order, in two sorted parts: the bulk,
 * and those appended since it was last merged (at most WC_L0_RECENT_MAX),
 * so that a version appended between two reads (a DELETE or UPDATE row by
 * row) costs a merge into the small part, not into all of them.
 */
typedef struct WcL0Part
{
	WcRowHeader **rows;
	ItemPointerData *tids;
	int64		n;
} WcL0Part;

typedef struct WcL0Sorted
{
	WcL0Part	bulk;
	WcL0Part	recent;
} WcL0Sorted;

#define WC_L0_RECENT_MAX 1024

extern int	wc_level0_cache_kb;
extern const WcL0Sorted *wc_l0_cache_get(Relation rel, uint64 storage_id,
										 const WcL0Gen *gen, uint64 oldest_gen);
extern int64 wc_l0_part_lower_bound(const WcL0Part *p, const char *key, int keylen);
extern bool wc_l0_sorted_has_key(const WcL0Sorted *s, const char *key, int keylen,
								 Snapshot snapshot);

#endif
