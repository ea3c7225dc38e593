/*
 * storage/reclaim.h — freeing pages and taking them again (see "Page reuse").
 */
#ifndef WC_STORAGE_RECLAIM_H
#define WC_STORAGE_RECLAIM_H

#include "storage/page.h"

/* ---------- page reuse (reclaim.c) ---------- */
extern void wc_free_pages(Relation rel, const BlockNumber *blks, int n, uint64 gen,
						  TransactionId latest_xid);
extern Buffer wc_reuse_page(Relation rel, BufferAccessStrategy strategy, uint64 storage_id);
extern Buffer wc_new_page(Relation rel, BufferAccessStrategy strategy);
extern BlockNumber wc_reuse_extent(Relation rel, BufferAccessStrategy strategy,
								   uint64 storage_id, uint64 run_id, uint32 n);
extern void wc_reclaim_runs(Relation rel, uint64 storage_id);
extern int64 wc_reclaim_aborted_runs(Relation rel);
extern BlockNumber wc_vacuum_free_space(Relation rel, int64 *nfree);

#endif
